"""``craits serve``: play, watch and compare agents in the browser."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import math
import os
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_GAMES = Path("craits-games")
# per client (docs/interface.md, Security); craits.web.limits and .connections hold the same
DEFAULT_CLIENT_RATE = 100.0
DEFAULT_CLIENT_GAMES = 30
DEFAULT_CLIENT_CONNECTIONS = 64
DEFAULT_CLIENT_HELD = 20
DEFAULT_CLIENT_NETWORK = (24, 64)  # craits.web.clients.V4_PREFIX, V6_PREFIX
DEFAULT_NEARLY_FULL = 0.8  # craits.web.sessions.NEARLY_FULL
DEFAULT_FULL_SHARE = 0.01  # craits.web.sessions.FULL_SHARE
DEFAULT_CLIENT_THINK = 120.0
DEFAULT_MOVE_SECONDS = 120.0
DEFAULT_KEEP_DAYS = 7.0
STORE_FILE = "live-games.sqlite3"


def add_parser(sub: Any) -> None:
    """The ``craits serve`` parser."""
    serve = sub.add_parser(
        "serve",
        help="play, watch and compare agents in the browser (a local web server)",
        description="Serve the Craits web application and its JSON API. Play: choose "
        "opponents (any agent spec, 2-10 players, rule options, a seed) and play from your "
        "seat — your hand as cards, only the legal moves clickable, the events in plain words, "
        "each hand's scoring, the standings; a finished (or resigned) game can be saved as a "
        "game record in --games. Watch: step through any game record of --records (and the "
        "saved games) forward and backward, every hand visible or one seat's view only. "
        "Compare: each tournament results.json of --results as a leaderboard (win rate and "
        "mean score with 95% intervals, ratings, head to head, charts). Bots act on the "
        "server; the browser receives only its own seat's view. API: POST /api/games, GET "
        "/api/games/ID?token=T, POST /api/games/ID/actions (docs/interface.md, Web API).",
        epilog="Binds to 127.0.0.1 (this machine only) unless --host says otherwise; --host "
        "0.0.0.0 lets anyone who can reach this machine play. Ctrl-C stops the server; saved "
        "games stay in --games, and the games in play in the store (--store): a restarted "
        "server goes on with them, each from its last move, with the same token. Exit "
        "status: 0 stopped; 1 the address or the store cannot be used; 2 bad arguments or "
        "the web extra missing (pip install 'craits[web]').",
    )
    serve.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine "
        "only; 0.0.0.0: every interface)",
    )
    serve.add_argument(
        "--port",
        type=port,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0: a free port, printed)",
    )
    serve.add_argument(
        "--records",
        nargs="+",
        type=Path,
        default=[],
        metavar="DIR",
        help="folders whose game record files (*.jsonl: craits play --record, "
        "craits tournament --record, training evaluations) the Watch page "
        "lists, searched recursively",
    )
    serve.add_argument(
        "--results",
        nargs="+",
        type=Path,
        default=[],
        metavar="DIR",
        help="folders whose tournament results.json the Compare page lists, searched recursively",
    )
    serve.add_argument(
        "--games",
        type=Path,
        default=DEFAULT_GAMES,
        metavar="DIR",
        help=f"where saved games are written, one record file each, and "
        f"listed from after a restart (default ./{DEFAULT_GAMES})",
    )
    serve.add_argument(
        "--store",
        type=Path,
        default=None,
        metavar="FILE",
        help="the SQLite file that holds the games in play, every move "
        f"written before it is shown (default: {STORE_FILE} in --games)",
    )
    serve.add_argument(
        "--max-games",
        type=a.positive_int,
        default=None,
        metavar="N",
        help="games in play at once over all clients (a game that has not "
        "moved for --idle-minutes no longer counts); a new one beyond them is "
        "refused (503), no game is dropped for it; also the games held in "
        "memory, the rest waiting in the store (default 500)",
    )
    serve.add_argument(
        "--idle-minutes",
        type=a.positive_float,
        default=None,
        metavar="M",
        help="a game that has not moved this long stops counting against "
        "--max-games and --client-held (default 20)",
    )
    serve.add_argument(
        "--keep-days",
        type=a.positive_float,
        default=DEFAULT_KEEP_DAYS,
        metavar="D",
        help="a game that has not moved this long leaves the "
        f"store (default {DEFAULT_KEEP_DAYS:g}; saved records stay)",
    )
    serve.add_argument(
        "--bot-workers",
        type=count,
        default=None,
        metavar="N",
        help="processes the bots think in, at a lower priority than the "
        "server (default: one per core; 0: a thread of the server)",
    )
    serve.add_argument(
        "--move-seconds",
        type=a.positive_float,
        default=DEFAULT_MOVE_SECONDS,
        metavar="S",
        help="seconds one bot move may take in its process; "
        "beyond, the game stops with a one-line reason (default "
        f"{DEFAULT_MOVE_SECONDS:g})",
    )
    serve.add_argument(
        "--agents",
        nargs="+",
        default=[],
        metavar="SPEC",
        help="specs that name a file or module (ppo:PATH, MODULE:ATTR, "
        "path/to/file.py:ATTR) which players may choose as opponents; the "
        "spec table's own bots (random, greedy, tactician, expert, pimc[:N]) "
        "are always allowed",
    )
    serve.add_argument(
        "--client-rate",
        type=rate,
        default=DEFAULT_CLIENT_RATE,
        metavar="R",
        help="requests a second one client address may make, sustained "
        f"(bursts of twice as many); beyond: 429 (default {DEFAULT_CLIENT_RATE:g}; "
        "0: no limit)",
    )
    serve.add_argument(
        "--client-games",
        type=count,
        default=DEFAULT_CLIENT_GAMES,
        metavar="N",
        help="new games one client address may start a minute; beyond: 429 "
        f"(default {DEFAULT_CLIENT_GAMES}; 0: no limit)",
    )
    serve.add_argument(
        "--client-held",
        type=count,
        default=DEFAULT_CLIENT_HELD,
        metavar="N",
        help="games in play one client address may hold at once; beyond: 429 "
        f"(default {DEFAULT_CLIENT_HELD}; 0: no limit)",
    )
    serve.add_argument(
        "--client-think",
        type=rate,
        default=DEFAULT_CLIENT_THINK,
        metavar="S",
        help="seconds the bots of one client address's games may think in "
        f"any minute; beyond: 429 (default {DEFAULT_CLIENT_THINK:g}; 0: no "
        "limit)",
    )
    serve.add_argument(
        "--client-connections",
        type=count,
        default=DEFAULT_CLIENT_CONNECTIONS,
        metavar="N",
        help="connections one client address may hold at once; "
        f"beyond: 503 (default {DEFAULT_CLIENT_CONNECTIONS}; 0: no limit)",
    )
    serve.add_argument(
        "--client-network",
        type=networks,
        default=DEFAULT_CLIENT_NETWORK,
        metavar="V4,V6",
        help="the addresses of one IPv4 /V4 or IPv6 /V6 network are one client for every "
        "per-client limit (default {},{}; 32,128: each address alone)".format(
            *DEFAULT_CLIENT_NETWORK
        ),
    )
    serve.add_argument(
        "--nearly-full",
        type=share,
        default=DEFAULT_NEARLY_FULL,
        metavar="F",
        help="once the games in play reach this share of --max-games, a client holding "
        f"--full-share of them may start no more (default {DEFAULT_NEARLY_FULL:g}; 1: only at "
        "the cap)",
    )
    serve.add_argument(
        "--full-share",
        type=share,
        default=DEFAULT_FULL_SHARE,
        metavar="F",
        help="the share of --max-games (at least one game) a client may hold once the server "
        f"is nearly full; beyond: 429 (default {DEFAULT_FULL_SHARE:g})",
    )
    serve.add_argument(
        "--trusted-proxy",
        type=address,
        default=None,
        metavar="ADDR",
        help="the address of a reverse proxy in front of this server: for its "
        "requests, the client is the last address of X-Forwarded-For (without "
        "this flag that header is ignored)",
    )
    serve.add_argument(
        "--log", action="store_true", help="log every request (uvicorn's log; tokens as [redacted])"
    )
    serve.set_defaults(run=run)


def port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: allowed 0 to 65535")
    return v


def rate(text: str) -> float:
    try:
        v = float(text) if text.strip().isascii() else -1.0
    except ValueError:
        v = -1.0
    if not (v >= 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected a number >= 0")
    return v


def count(text: str) -> int:
    v = int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an int >= 0")
    return v


def share(text: str) -> float:
    try:
        v = float(text) if text.strip().isascii() else -1.0
    except ValueError:
        v = -1.0
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected a number in (0, 1]")
    return v


def networks(text: str) -> tuple[int, int]:
    parts = text.split(",")
    found = [int(p) if p.isascii() and p.isdigit() and len(p) <= 3 else -1 for p in parts]
    if len(found) != 2 or not (0 <= found[0] <= 32 and 0 <= found[1] <= 128):
        raise argparse.ArgumentTypeError(
            f"invalid networks {text!r}: expected V4,V6 prefixes, 0 to 32 and 0 to 128 "
            "(such as 24,64)"
        )
    return found[0], found[1]


def address(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid address {text!r}: expected an IP address such as 127.0.0.1"
        ) from None


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Serve until Ctrl-C."""
    from craits_env.extras import require

    require("web", "craits serve")
    from craits.agents.specs import make_agent

    from ..web.app import Settings, create_app
    from ..web.database import StoreError
    from ..web.limits import ClientLimits
    from ..web.server import LOOPBACK_NAMES, is_loopback, listen, serve
    from ..web.sessions import IDLE_SECONDS, MAX_GAMES

    for spec in args.agents:
        if ":" not in spec:
            parser.error(
                f"--agents {spec}: expected a spec naming a file or module "
                "(ppo:PATH, MODULE:ATTR, path/to/file.py:ATTR)"
            )
        try:
            make_agent(spec)  # loads now: a bad spec is refused before the server starts
        except ValueError as e:
            parser.error(f"--agents {spec}: {e}")
    for folder in (*args.records, *args.results):
        if not folder.is_dir():
            parser.error(f"no folder {folder}")
    loopback = is_loopback(args.host)
    settings = Settings(
        games_dir=args.games,
        record_dirs=tuple(args.records),
        result_dirs=tuple(args.results),
        store=args.store,
        max_games=args.max_games or MAX_GAMES,
        idle_seconds=(args.idle_minutes * 60) if args.idle_minutes else IDLE_SECONDS,
        keep_seconds=args.keep_days * 86400,
        client_games=args.client_held,
        client_think=args.client_think,
        bot_workers=(os.cpu_count() or 1) if args.bot_workers is None else args.bot_workers,
        read_workers=1,  # replays built off the server's process (craits.web.readers)
        move_seconds=args.move_seconds,
        agents=tuple(args.agents),
        allowed_hosts=(*LOOPBACK_NAMES, args.host.strip("[]")) if loopback else None,
        client_limits=ClientLimits(
            requests_per_second=args.client_rate,
            burst=max(1, math.ceil(2 * args.client_rate)),
            games_per_minute=args.client_games,
            trusted_proxy=args.trusted_proxy,
            v4_prefix=args.client_network[0],
            v6_prefix=args.client_network[1],
        ),
        nearly_full=args.nearly_full,
        full_share=args.full_share,
    )
    try:
        app = create_app(settings)
    except StoreError as e:
        a.fail(parser.prog, str(e))
        return 1
    try:
        sock = listen(args.host, args.port)
    except OSError as e:
        a.fail(parser.prog, f"cannot listen on {args.host}:{args.port} ({e.strerror or e})")
        return 1
    bound = sock.getsockname()[1]
    shown = f"[{args.host.strip('[]')}]" if ":" in args.host else args.host
    print(
        f"Craits: serving http://{shown}:{bound}/ — play, watch (/watch), compare "
        f"(/compare); saved games go to {args.games}. Ctrl-C stops.",
        flush=True,
    )
    if not loopback:
        print(
            f"craits serve: note: listening on {args.host}: anyone who can reach this "
            "machine can play and read the listed files",
            file=sys.stderr,
        )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn stops, then passes Ctrl-C on
        serve(
            app,
            sock,
            log=args.log,
            connections_per_client=args.client_connections,
            trusted_proxy=args.trusted_proxy,
            networks=args.client_network,
        )
    print("Craits: stopped.", flush=True)
    return 0
