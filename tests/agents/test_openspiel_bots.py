"""The agent spec openspiel-ismcts (agents/openspiel_bots.py): OpenSpiel's IS-MCTS at a Craits
seat — the spec and its bounds, the root state built from the seat's view, whole games in the
duplicate tournament, reproducibility, and no peeking at the hidden cards."""

from __future__ import annotations

import random
import sys

import numpy as np
import pyspiel  # a dev requirement (the openspiel extra): never skipped for want of it
import pytest

from craits.agents.duplicate_tournament import GamePlayer, TournamentConfig, identify, plan
from craits.agents.openspiel_bots import (
    DEFAULT_SIMULATIONS,
    MAX_SIMULATIONS,
    ISMCTSAgent,
)
from craits.agents.specs import make_agent, resolve_agent
from craits_env import NUM_ACTIONS, Game, Rules
from craits_env.extras import MissingExtra
from craits_env.integrations.openspiel import (
    CraitsGame,
    params_from_rules,
    rules_from_params,
    state_from_view,
)
from craits_env.public import PublicGame, SeatView

from ..craits_env.test_env import hide

SHORT = Rules(hand_sizes=(3, 2, 1))


def choice_positions(game: Game, r: random.Random, limit: int) -> list[tuple[PublicGame, SeatView]]:
    """Positions of a random game where a seat has a choice (the game advances past each)."""
    pub = PublicGame(game)
    found: list[tuple[PublicGame, SeatView]] = []
    while not game.is_over and len(found) < limit:
        legal = game.legal_actions()
        if len(legal) > 1 and r.random() < 0.3:
            snapshot = PublicGame(game.clone())
            snapshot.tracker = pub.tracker.copy_for(snapshot.game)
            found.append((snapshot, snapshot.view(game.current_player)))
        pub.apply(legal[r.randrange(len(legal))])
    return found


# ---------------------------------------------------------------------------- the spec


def test_spec_strings_bounds_and_identity() -> None:
    bot = make_agent("openspiel-ismcts", seed=1)
    assert isinstance(bot, ISMCTSAgent) and bot.simulations == DEFAULT_SIMULATIONS == 100
    assert bot.name == "openspiel-ismcts"
    agent, identity = resolve_agent("openspiel-ismcts:10", 1, num_players=4, rules=SHORT)
    assert isinstance(agent, ISMCTSAgent) and agent.simulations == 10
    assert (agent.name, identity) == ("openspiel-ismcts:10", "openspiel-ismcts:10@1")
    assert make_agent(f"openspiel-ismcts:{MAX_SIMULATIONS}").simulations == MAX_SIMULATIONS
    for bad in ("x", "1", "0", "-3", "٣", str(MAX_SIMULATIONS + 1)):
        with pytest.raises(ValueError, match=r"openspiel-ismcts:N', N simulations per move \(2 "):
            make_agent(f"openspiel-ismcts:{bad}")
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[[3, 5]] = 1
    with pytest.raises(TypeError, match="SeatView"):
        ISMCTSAgent(4).act({"observation": np.zeros(3), "action_mask": mask})
    mask[5] = 0  # a single legal action needs no view
    assert ISMCTSAgent(4).act({"observation": np.zeros(3), "action_mask": mask}) == 3


def test_check_table_refuses_in_one_line() -> None:
    ISMCTSAgent(4).check_table(10, Rules(face_cards=True))
    with pytest.raises(ValueError) as e:
        make_agent("openspiel-ismcts:4", num_players=11)
    assert str(e.value).startswith("agent 'openspiel-ismcts:4' cannot play this table: ")
    assert "\n" not in str(e.value)


def test_a_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel fails
    monkeypatch.delitem(sys.modules, "craits.agents.openspiel_bots")
    with pytest.raises(MissingExtra) as e:
        make_agent("openspiel-ismcts:4")
    assert str(e.value) == (
        "the agent spec openspiel-ismcts needs pyspiel, not installed: "
        "pip install 'craits[openspiel]'"
    )


def test_params_from_rules_inverts_rules_from_params() -> None:
    for n, rules in (
        (4, Rules()),
        (3, SHORT),
        (
            6,
            Rules(
                hand_sizes=(5,),
                num_decks=2,
                seven_hits="next_but_one",
                face_cards=True,
                three_points=7,
            ),
        ),
    ):
        params = params_from_rules(n, rules)
        assert rules_from_params(params) == (n, rules, 512)
    assert params_from_rules(4, SHORT) == {"players": 4, "hand_sizes": "3;2;1"}


# ---------------------------------------------------------------------------- the root state


@pytest.mark.slow
def test_the_root_state_is_the_seat_position_with_the_same_59_actions() -> None:
    """The search's root: the view's legal actions (craits_env's ids), its own hand, every
    public fact; resampling keeps its information-state string; the live game is untouched."""
    r = random.Random(3)
    checked = 0
    for n, rules in ((4, SHORT), (3, Rules(hand_sizes=(5, 4), face_cards=True)), (7, SHORT)):
        for pub, view in choice_positions(Game(n, rules, seed=n), r, 6):
            bot = ISMCTSAgent(4, seed=checked)
            before = pub.game.snapshot()
            root = bot.root_state(view)
            game = root.get_game()
            assert isinstance(game, CraitsGame) and game.num_distinct_actions() == NUM_ACTIONS
            assert root.legal_actions() == list(view.legal_actions)
            assert root.current_player() == view.seat and root.hand(view.seat) == view.hand
            world = root.engine
            assert world is not None
            assert [len(world.hands[s]) for s in range(n)] == view.hand_sizes
            assert (world.discard, world.scores, world.phase) == (
                view.discard,
                view.scores,
                view.phase,
            )
            key = root.information_state_string(view.seat)
            for k in range(3):
                other = root.resample_from_infostate(view.seat, np.random.default_rng(k).random)
                assert other.information_state_string(view.seat) == key
                assert other.legal_actions() == root.legal_actions()
            bot.act(view)
            assert pub.game.snapshot() == before
            checked += 1
    assert checked == 18


def test_state_from_view_refuses_a_deal_the_seat_could_not_face() -> None:
    game = Game(3, SHORT, seed=1)
    pub = PublicGame(game)
    view = pub.view(game.current_player)
    os_game = pyspiel.load_game("python_craits", params_from_rules(3, SHORT))
    others = [s for s in range(3) if s != view.seat]
    unseen = view.unseen_cards()
    sizes = [view.hand_sizes[s] for s in others]
    hands = {others[0]: unseen[: sizes[0]], others[1]: unseen[sizes[0] : sum(sizes)]}
    state_from_view(os_game, view, hands, unseen[sum(sizes) :])  # a deal of the unseen cards
    with pytest.raises(ValueError, match="determinized"):
        state_from_view(os_game, view, hands, unseen[sum(sizes) + 1 :])
    wrong = pyspiel.load_game("python_craits", params_from_rules(4, SHORT))
    with pytest.raises(ValueError, match="is not the game's"):
        state_from_view(wrong, view, hands, unseen[sum(sizes) :])


# ---------------------------------------------------------------------------- whole games


@pytest.mark.slow
def test_whole_duplicate_games_against_random_are_legal_and_reproducible() -> None:
    """openspiel-ismcts:10 against three random bots, short game (3, 2, 1), two seat rotations
    of one duplicate deal: the games finish (the arena refuses an illegal action), and the
    same seed gives the same games move for move."""
    config = identify(
        TournamentConfig(
            specs=("openspiel-ismcts:10", "random", "random", "random"),
            players=4,
            deals=1,
            seed=11,
            rules=SHORT,
        )
    )
    assert config.agents[0] == "openspiel-ismcts:10@1"
    tasks = plan(config)[:2]
    first = [GamePlayer(config, record=True).play(t) for t in tasks]
    again = [GamePlayer(config, record=True).play(t) for t in tasks]
    assert first == again
    for result in first:
        assert result["decisions"] > 0 and len(result["hand_points"]) == 3
        record = result["record"]
        assert record["finished"] and len(record["hands"]) == 3
    assert first[0]["specs"][0] == first[1]["specs"][3] == "openspiel-ismcts:10"


@pytest.mark.slow
def test_same_seed_same_search_and_reset() -> None:
    [(_, view)] = choice_positions(Game(4, SHORT, seed=5), random.Random(1), 1)
    a, b = ISMCTSAgent(12, seed=7), ISMCTSAgent(12, seed=8)
    move = a.act(view)
    policy = a.last_policy
    b.reset(7)
    assert b.act(view) == move and b.last_policy == policy
    assert policy is not None and sum(policy.values()) == pytest.approx(1.0)
    assert set(policy) <= set(view.legal_actions) and move in policy


# ---------------------------------------------------------------------------- no peeking


@pytest.mark.slow
def test_the_search_does_not_depend_on_the_hidden_cards() -> None:
    """Permuting the opponents' hands and the stock never changes the root's dealt start, the
    visit shares nor the move, for a fixed seed."""
    r = random.Random(9)
    rng = np.random.default_rng(9)
    checked = 0
    for n, rules in ((4, SHORT), (2, Rules(hand_sizes=(4, 2)))):
        game = Game(n, rules, seed=20 + n)
        for pub, view in choice_positions(game, r, 5):
            seat = view.seat
            other = PublicGame(hide(pub.game, seat, rng))
            other.tracker = pub.tracker  # the same public record
            seen = other.view(seat)
            assert [seen.hand_sizes, seen.unseen_cards()] == [view.hand_sizes, view.unseen_cards()]
            hidden = [pub.game.hands[s] for s in range(n) if s != seat]
            if all(
                h == other.game.hands[s]
                for s, h in zip([s for s in range(n) if s != seat], hidden, strict=True)
            ):
                continue  # the permutation left every hand as it was
            seed = r.randrange(1 << 30)
            a, b = ISMCTSAgent(10, seed=seed), ISMCTSAgent(10, seed=seed)
            assert a.root_state(view).engine.hands == b.root_state(seen).engine.hands  # type: ignore[union-attr]
            move = a.act(view)
            assert b.act(seen) == move and b.last_policy == a.last_policy
            assert move in view.legal_actions
            checked += 1
    assert checked >= 8
