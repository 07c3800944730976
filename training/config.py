"""Training configurations: a validated dataclass, named TOML files, ``key=value`` overrides.

A named configuration is ``training/configs/NAME.toml`` (package data) (``ppo_4p`` is the
default); its keys are the fields of :class:`TrainConfig`, with the tables
``[opponents]`` (sampling weights) and ``[rules]`` (``craits_env.Rules``
options). Command-line overrides ``key=value`` take a TOML value (``3e-4``,
``true``, ``[128, 128]``, ``"greedy"``; a bare word is a string) and reach into
the tables with a dot: ``opponents.greedy=0.5``, ``rules.face_cards=true``.
Every value is checked; an error is one line naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from craits_env import Game, Rules, options
from craits_env.craits_v0 import RewardMode
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 needs the tomli backport
    import tomli as tomllib

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
DEFAULT_CONFIG = "ppo_4p"
POOL_SELF, POOL_PAST = "self", "past"
Device = Literal["auto", "cpu", "cuda"]
DEVICES: tuple[str, ...] = get_args(Device)
Backend = Literal["python", "vector"]
ObservationKind = Literal["standard", "belief"]
ValueHorizon = Literal["game", "hand"]
VECTOR_BOTS = ("random", "greedy", "tactician", "expert")  # compiled for backend="vector"
VECTOR_OPPONENTS = (POOL_SELF, POOL_PAST, *VECTOR_BOTS, "champion", "ppo:PATH")  # backend="vector"
DEFAULT_OPPONENTS = {"self": 0.25, "past": 0.15, "greedy": 0.2, "tactician": 0.2, "expert": 0.2}


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Every setting of a training run (the TOML keys); defaults are ``ppo_4p``'s.

    Each field's docstring is its one line of the configuration reference. More on some:

    * ``value_horizon = "hand"``: with a per-hand reward (relative, bounded, score) and hands
      dealt independently (R2.3; the deal rotates, R2.4) nothing an action does reaches a
      later hand's reward, so it drops only the later hands' noise (under the rule option
      dealer_follows_direction a hand's last direction picks the next dealer: a small bias).
    * ``hands_coef``: a linear head on the policy's trunk gives, per opponent and card, the
      logit that the opponent holds it, scored by binary cross-entropy against the true hands
      (:mod:`craits_env.opponent_hands`); it shapes the trunk and is never needed to play.
    * ``init_policy``: the checkpoint's table and network shape, or wider hidden layers (as
      many, none narrower: the new units start freshly initialised and unread by the old ones
      and the heads), or a standard-observation policy for a belief run (its new inputs at
      zero weight): the moves are the same to start with.
    * Fixed since 0.3.0 (:data:`REMOVED`): tanh units, the learning rate annealed, the value
      loss clipped, advantages normalised per minibatch, one torch thread for the update.
    """

    name: str = "custom"
    """the configuration's name (its file's stem; part of the run name)"""
    total_steps: int = 45_000_000
    """environment steps to train for: every seat's decisions, forced ones and bots' included"""
    seed: int = 1
    """seeds the network, the games, the opponent draws and the action sampling"""
    num_players: int = 4
    """players at each table (2-10)"""
    rules: Rules = field(default_factory=Rules)
    """the game's rules (a [rules] table of craits_env.Rules options; empty: the standard rules)"""
    reward: RewardMode = "relative"
    """the environment's reward mode (craits_v0): relative, bounded, score or win"""
    num_games: int = 128
    """games stepped together; the network acts for all of them in one batch"""
    backend: Backend = "python"
    """python (any opponent) or vector (the batched engine: self, past, bots, ppo:PATH)"""
    batch_size: int = 8192
    """transitions (non-forced decisions of trained seats) per update"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """passes over each batch"""
    learning_rate: float = 5e-4
    """Adam's step size at the start, annealed linearly to 0 over total_steps"""
    gamma: float = 0.99
    """discount per decision of the seat"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    value_horizon: ValueHorizon = "game"
    """how far returns reach: game (to the game's end) or hand (each hand its own episode)"""
    clip_coef: float = 0.2
    """PPO's ratio clip, and the value loss's clip (as CleanRL's ppo.py clips it)"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value-loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping (global norm)"""
    hidden_sizes: tuple[int, ...] = (256, 256)
    """widths of the MLP's hidden layers (tanh units)"""
    observation: ObservationKind = "standard"
    """what the network sees: standard (craits_v0's) or belief (then craits_env.belief; python)"""
    hands_coef: float = 0.0
    """weight of the hands head's loss (it predicts the opponents' hands; 0: none; python)"""
    init_policy: str = ""
    """a checkpoint or run directory whose policy starts this run (fine-tuning); empty: fresh"""
    opponents: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_OPPONENTS))
    """weights of the other seats' draws: self (learnt from too), past (a snapshot), agent specs"""
    snapshot_every: int = 10
    """updates between frozen snapshots added to the pool"""
    pool_size: int = 5
    """frozen snapshots kept (the oldest is dropped)"""
    checkpoint_every: int = 100
    """updates between checkpoints (0: only the last)"""
    eval_every: int = 100
    """updates between evaluations against eval_opponents (0: only at the end)"""
    eval_deals: int = 50
    """deals of each periodic evaluation (each played under every seat rotation)"""
    final_eval_deals: int = 300
    """deals of the final evaluation, whose tables are printed (0: none)"""
    eval_opponents: tuple[str, ...] = ("greedy", "tactician", "expert")
    """specs the agent is evaluated against: the agent and num_players - 1 copies of one"""
    eval_adjusted: bool = False
    """evaluations add the luck-adjusted mean score and its interval (docs/luck.md; costly)"""
    eval_luck: str = "model"
    """what eval_adjusted corrects by: model, or rollouts:R[:K[:S]] (narrower, seconds a game)"""
    device: Device = "auto"
    """auto (CUDA when available), cpu or cuda: where the update runs"""

    def __post_init__(self) -> None:
        for key in FIELDS:  # the one typed parser (craits_env.options): convert, or one line
            try:
                value = options.coerce(TrainConfig, key, getattr(self, key))
            except ValueError as e:
                raise ValueError(f"config {key}: {e}") from None
            object.__setattr__(self, key, value)
        _validate(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON- and TOML-friendly (tuples as lists)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
            elif isinstance(v, dict):
                d[k] = dict(v)
        d["rules"] = self.rules.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """A config from :meth:`to_dict`'s output or a TOML table; unknown keys are refused.

        A key removed in 0.3.0 (:data:`REMOVED`, from a checkpoint or file of an older
        release) is dropped when it holds the value whose behaviour stayed, and refused in
        one line otherwise."""
        data = {k: v for k, v in data.items() if not _removed(k, v)}
        if data.get("observation") == "belief_calls":
            raise ValueError(
                "config observation='belief_calls': removed in craits 0.3.0 (allowed standard, "
                f"belief; the code last lived at commit {REMOVED_AT}: git checkout {REMOVED_AT})"
            )
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown config key {unknown[0]!r}; allowed: {', '.join(FIELDS)}")
        return cls(**data)  # every value checked and converted in __post_init__

    def replace(self, **changes: Any) -> TrainConfig:
        return TrainConfig.from_dict({**self.to_dict(), **changes})


FIELDS: dict[str, dataclasses.Field[Any]] = {f.name: f for f in dataclasses.fields(TrainConfig)}

# Keys removed in craits 0.3.0, each with the value whose behaviour is kept (None: any value,
# a note only); a checkpoint or file of an older release that set another value is refused.
# The research options among them last lived at commit REMOVED_AT.
REMOVED_AT = "9f11649"
REMOVED: dict[str, Any] = {
    "description": None,  # a TOML comment now
    "anneal_lr": True,  # the learning rate is always annealed
    "clip_vloss": True,  # the value loss is always clipped
    "norm_adv": True,  # advantages are always normalised per minibatch
    "target_kl": 0.0,  # no early stop of the epochs
    "activation": "tanh",
    "train_self_seats": True,  # "self" seats are always learnt from
    "torch_threads": 1,
    "eval_records": False,  # craits tournament --record saves games
    "critic": "shared",  # the oracle and perfect critics
    "oracle_guiding": [],
    "win_chance_coef": 0.0,
}


def _removed(key: str, value: Any) -> bool:
    """Whether ``key`` is a removed key holding its kept value; ``ValueError`` if it holds
    another."""
    if key not in REMOVED:
        return False
    kept = REMOVED[key]
    if kept is not None and value != kept and not (isinstance(kept, list) and value == ()):
        raise ValueError(
            f"config {key}={value!r}: removed in craits 0.3.0 (only {key}={_toml(kept)} is "
            f"kept; the code of the option last lived at commit {REMOVED_AT}: git checkout "
            f"{REMOVED_AT})"
        )
    return True


def _type_error(key: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"config {key}: got {value!r}, allowed {allowed}")


def _validate(c: TrainConfig) -> None:
    """The checks beyond the types: ranges, and that the table can be dealt and seated."""
    positive = (
        "total_steps",
        "num_games",
        "batch_size",
        "num_minibatches",
        "update_epochs",
        "snapshot_every",
        "pool_size",
        "eval_deals",
    )
    for key in positive:
        if getattr(c, key) < 1:
            raise _type_error(key, getattr(c, key), "an int >= 1")
    for key in ("checkpoint_every", "eval_every", "final_eval_deals"):
        if getattr(c, key) < 0:
            raise _type_error(key, getattr(c, key), "an int >= 0")
    for key in ("learning_rate", "clip_coef", "max_grad_norm"):
        if not getattr(c, key) > 0:
            raise _type_error(key, getattr(c, key), "a number > 0")
    for key in ("ent_coef", "vf_coef", "hands_coef"):
        if not getattr(c, key) >= 0:
            raise _type_error(key, getattr(c, key), "a number >= 0")
    for key in ("gamma", "gae_lambda"):
        if not 0 <= getattr(c, key) <= 1:
            raise _type_error(key, getattr(c, key), "a number from 0 to 1")
    if c.value_horizon == "hand" and c.reward == "win":
        raise ValueError(
            "config value_horizon: hand needs a per-hand reward (relative, bounded or score); "
            "reward win pays only at the game's end"
        )
    if not MIN_PLAYERS <= c.num_players <= MAX_PLAYERS:
        raise _type_error("num_players", c.num_players, f"{MIN_PLAYERS} to {MAX_PLAYERS}")
    if c.batch_size < c.num_minibatches:
        raise _type_error("batch_size", c.batch_size, f">= num_minibatches ({c.num_minibatches})")
    if not c.hidden_sizes or min(c.hidden_sizes) < 1:
        raise _type_error("hidden_sizes", list(c.hidden_sizes), "a non-empty list of ints >= 1")
    try:
        Game(c.num_players, c.rules, seed=0)  # R1.5: the table can be dealt
    except ValueError as e:
        raise ValueError(f"config rules: {e}") from None
    _validate_opponents(c)
    if c.backend == "vector":
        _validate_vector(c)


def _validate_vector(c: TrainConfig) -> None:
    from craits_env.vector import unsupported_options

    for spec, weight in c.opponents.items():
        why = vector_refusal(spec, c) if weight > 0 else None
        if why:
            raise ValueError(f"config opponents: {why}")
    bad = unsupported_options(c.rules)
    if bad:
        raise ValueError("config rules: backend vector does not support " + "; ".join(bad))
    if c.observation != "standard":
        raise ValueError(
            f"config observation: backend vector encodes only the standard observation, got "
            f"{c.observation!r} (the belief features read the public history: backend python)"
        )
    if c.hands_coef > 0:
        raise ValueError(
            f"config hands_coef: backend vector trains no hands head, got {c.hands_coef} "
            "(its targets are the Python game's hands: backend python)"
        )


def vector_refusal(spec: str, c: TrainConfig) -> str | None:
    """Why ``backend="vector"`` cannot seat the opponent ``spec`` at ``c``'s table (``None``:
    it can). It seats what runs batched over its rows: the pool's ``self`` and ``past``, the
    compiled bots (:data:`VECTOR_BOTS`) and frozen networks (``champion``, ``ppo:PATH``: the
    belief features come from the compiled public memory); not a search (``pimc``, the
    ``-search`` specs) or a user's module."""
    if spec in (POOL_SELF, POOL_PAST, *VECTOR_BOTS):
        return None
    from craits.agents.checkpoint_agent import SPEC, PPOAgent
    from craits.agents.specs import make_agent

    allowed = ", ".join(VECTOR_OPPONENTS)
    agent = make_agent(spec, num_players=c.num_players, rules=c.rules)
    if (spec == "champion" or spec.startswith(SPEC + ":")) and isinstance(agent, PPOAgent):
        return None
    return (
        f"backend vector seats only {allowed}; got {spec} (not compiled for the batched "
        "engine: use backend=python)"
    )


def _validate_opponents(c: TrainConfig) -> None:
    from craits.agents.specs import make_agent

    weights = c.opponents
    if not weights or any(
        isinstance(w, bool) or not isinstance(w, int | float) or w < 0 for w in weights.values()
    ):
        raise _type_error("opponents", weights, "a table of weights >= 0 (e.g. {self = 1})")
    if not any(w > 0 for w in weights.values()):
        raise _type_error("opponents", weights, "at least one weight > 0")
    specs = [k for k in weights if k not in (POOL_SELF, POOL_PAST)]
    rules = c.rules
    for key, group in (("opponents", specs), ("eval_opponents", c.eval_opponents)):
        for spec in group:
            try:  # checked for the table now, not at the first game that seats it
                make_agent(spec, num_players=c.num_players, rules=rules)
            except ValueError as e:
                raise ValueError(f"config {key}: {e}") from None
    if c.eval_luck != "model":
        from craits.agents.luck_tournament import estimator

        try:  # a bad estimator refused now, not at the first evaluation
            estimator(c.eval_luck, c.num_players, rules)
        except ValueError as e:
            raise ValueError(f"config eval_luck: {e}") from None


# ----------------------------------------------------------------------------- files


def config_names() -> list[str]:
    """The named configurations in ``training/configs``."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def config_path(name: str) -> Path:
    """The file of a named configuration, or ``name`` itself if it is a path to a file."""
    path = Path(name)
    if path.suffix == ".toml" or len(path.parts) > 1:
        if not path.is_file():
            raise ValueError(f"config file {name} not found")
        return path
    path = CONFIG_DIR / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"unknown config {name!r}; known: {', '.join(config_names())}")
    return path


def load_config(name: str = DEFAULT_CONFIG, overrides: list[str] | None = None) -> TrainConfig:
    """A named (or file) configuration with ``key=value`` overrides applied and checked."""
    path = config_path(name)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"config {path}: {e}") from None
    data.setdefault("name", path.stem)
    for item in overrides or []:
        key, value = parse_override(item)
        set_key(data, key, value)
    return TrainConfig.from_dict(data)


def parse_override(text: str) -> tuple[str, Any]:
    """``key=value`` with a TOML value (a bare word is a string)."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise ValueError(f"invalid override {text!r}: expected KEY=VALUE")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def set_key(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` (``table.item`` reaches into a table) in a config dict, checking the name."""
    top, _, sub = key.partition(".")
    if top not in FIELDS or top == "name":
        allowed = [k for k in FIELDS if k != "name"]
        raise ValueError(f"unknown config key {top!r}; allowed: {', '.join(allowed)}")
    if sub:
        kind = options.field_types(TrainConfig)[top]
        if not (dataclasses.is_dataclass(kind) or getattr(kind, "__origin__", None) is dict):
            raise ValueError(f"config key {top!r} is not a table: set it as {top}=VALUE")
        table = dict(data.get(top, {}))
        table[sub] = value
        data[top] = table
    else:
        data[top] = value


def to_toml(config: TrainConfig) -> str:
    """The configuration as TOML (written beside a run for the record)."""
    lines: list[str] = []
    tables: list[str] = []
    standard = Rules().to_dict()
    for key, value in config.to_dict().items():
        if key == "rules":  # only the options that differ from the standard rules (TOML: no None)
            value = {k: v for k, v in value.items() if v != standard[k]}
        if isinstance(value, dict):
            tables += ["", f"[{key}]"] + [f"{_key(k)} = {_toml(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines + tables) + "\n"


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else _toml(k)


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return repr(v)
