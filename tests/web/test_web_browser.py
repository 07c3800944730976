"""``craits serve`` in a real browser: Debian's headless Chromium (``/usr/bin/chromium``, never
a downloaded one) driven by Playwright's Python driver against a real uvicorn server on
127.0.0.1 — a whole short game played by clicking, a tournament game stepped forward and
backward, one seat's view, the leaderboard, and the Compare page at laptop widths (nothing
wider than the window, round axis ticks, no label on another or on a bar, each chart once).

With ``CRAITS_SCREENSHOTS=DIR`` each page is also saved as ``DIR/NAME.png`` (the README's
pictures: ``CRAITS_SCREENSHOTS=docs/screenshots pytest tests/web/test_web_browser.py``).
Without Chromium the tests fail, saying how to install it (``make browser``).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from craits.web.app import Settings, create_app
from craits.web.server import running

from ..webclient import ROOT, TOURNAMENT

pytestmark = pytest.mark.slow  # a real browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LADDER = ROOT / "experiments" / "results" / "ladder"
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 20_000
MAX_CLICKS = 300
BOTS_PLAYING = "The bots are playing…"  # play.js, while a move is sent


def screenshot(page: Any, name: str, full_page: bool = False) -> None:
    """``$CRAITS_SCREENSHOTS/NAME.png`` when that variable is set: 256 colours, no dithering
    (a third of the bytes of the browser's PNG, the same picture to the eye: the repository
    keeps code, not data)."""
    from PIL import Image

    folder = os.environ.get("CRAITS_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        picture = Image.open(io.BytesIO(page.screenshot(full_page=full_page))).convert("RGB")
        picture = picture.quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        picture.save(Path(folder) / f"{name}.png", format="PNG", optimize=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    games = tmp_path_factory.mktemp("games")
    app = create_app(
        Settings(games_dir=games, record_dirs=[TOURNAMENT], result_dirs=[TOURNAMENT, LADDER])
    )
    with running(app) as url:
        yield url, app


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"the browser tests need Debian's chromium at {CHROMIUM}: run `make browser` "
            "(apt-get install -y chromium)"
        )
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright's Python driver: pip install -e '.[dev]'")
    expect.set_options(timeout=TIMEOUT_MS)  # a loaded machine: the bots may take a while
    profile = tmp_path_factory.mktemp("chromium-profile")  # an empty user data dir
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        context.set_default_timeout(TIMEOUT_MS)
        yield context
        context.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    yield page
    page.close()
    assert not problems, problems


def wait_idle(page: Any) -> None:
    """Until the page is not waiting for the bots (locators, not scripts: the pages'
    content security policy forbids evaluating strings)."""
    from playwright.sync_api import expect

    expect(page.locator("#prompt")).not_to_have_text(BOTS_PLAYING)


def start_game(page: Any, url: str, players: int, spec: str, length: str, seed: int) -> None:
    page.goto(f"{url}/")
    page.wait_for_selector("#spec-list option", state="attached")
    page.select_option("#players", str(players))
    for i in range(players - 1):
        page.fill(f"#opponent-{i}", spec)
    page.select_option("#length", length)
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_url(re.compile(r"/play#game="))
    page.wait_for_selector("#hand .card")
    wait_idle(page)


def api_view(page: Any, url: str) -> dict[str, Any]:
    """The seat view of the page's game, fetched beside the page (its hash has the token)."""
    params = dict(p.split("=", 1) for p in page.evaluate("location.hash").lstrip("#").split("&"))
    r = httpx.get(f"{url}/api/games/{params['game']}", params={"token": params["token"]})
    return dict(r.json())


def test_the_table_shows_your_cards_and_only_legal_moves_are_clickable(
    page: Any, server: tuple[str, Any]
) -> None:
    url, _ = server
    start_game(page, url, 4, "expert", "short", seed=7)
    moves = 0  # a few moves, so that the log tells something, up to one with a card to play
    while moves < 3 or (page.locator("#hand button.legal").count() == 0 and moves < 30):
        page.locator("#hand button.legal, #buttons button").first.click()
        wait_idle(page)
        moves += 1
    v = api_view(page, url)
    assert page.locator("#opponents .seat").count() == 3
    for k in range(1, 4):
        seat = (v["seat"] + k) % 4
        backs = page.locator(f"#opponents .seat[data-seat='{seat}'] .card.back")
        assert backs.count() == min(v["hand_sizes"][seat], 10)
    cards = page.locator("#hand .card")
    assert [cards.nth(i).get_attribute("data-card") for i in range(cards.count())] == v["hand"]
    legal = sorted(a["action"] for a in v["legal"])
    clickable = page.locator("#hand button.legal:not([disabled]), #buttons button")
    ids = sorted(
        int(clickable.nth(i).get_attribute("data-action")) for i in range(clickable.count())
    )
    assert ids == legal
    assert page.locator("#hand button:not(.legal):not([disabled])").count() == 0
    assert page.locator("#log p").count() > 3
    screenshot(page, "play")


def test_a_whole_game_by_clicking_then_save_and_watch_it(
    page: Any, server: tuple[str, Any]
) -> None:
    url, _ = server
    start_game(page, url, 2, "random", "quick", seed=8)
    clicks = 0
    while page.locator("#end").is_hidden():
        assert clicks < MAX_CLICKS
        move = page.locator("#hand button.legal, #buttons button").first
        with page.expect_response(lambda r: r.url.endswith("/actions")) as response:
            move.click()
        assert response.value.status == 200
        sent = response.value.request.post_data_json  # the decision it answers (issue 43, G)
        answered = response.value.json()["decision"]
        assert type(sent["decision"]) is int and sent["decision"] < answered
        wait_idle(page)
        clicks += 1
    assert clicks >= 2
    assert "Final standings" in page.inner_text("#standings")
    v = api_view(page, url)
    assert v["game_over"] and v["seed"] == 8
    totals = page.locator("#points-table tr").last.locator("th")
    assert [int(totals.nth(i).inner_text()) for i in (1, 2)] == v["scores"]
    assert page.locator("#resign").is_hidden()  # nothing left to resign
    page.click("#save")
    link = page.locator("#saved a")
    link.wait_for()
    assert page.locator("#save").is_hidden()  # saved once
    screenshot(page, "play-end", full_page=True)
    link.click()
    page.wait_for_selector("#viewer:not([hidden])")
    steps = page.inner_text("#step")
    total = int(steps.split("/")[-1])
    assert steps.startswith("deal") and total >= clicks
    page.click("#next")
    page.click("#next")
    assert page.inner_text("#step") == f"decision 2 / {total}"
    page.click("#prev")
    assert page.inner_text("#step") == f"decision 1 / {total}"
    page.click("#last")
    assert page.is_visible("#final") and "Final standings" in page.inner_text("#standings")


def test_step_through_a_tournament_game_forward_backward_and_from_one_seat(
    page: Any, server: tuple[str, Any]
) -> None:
    url, _ = server
    files = httpx.get(f"{url}/api/records").json()["files"]
    key = next(f["key"] for f in files if f["name"] == "records.jsonl")
    replay = httpx.get(f"{url}/api/records/replay", params={"file": key, "game": 2}).json()
    frames = replay["frames"]
    page.goto(f"{url}/watch#file={key}")
    page.wait_for_selector("#games button")
    assert page.locator("#games button").count() == 12
    page.locator("#games button").nth(1).click()
    page.wait_for_selector("#viewer:not([hidden])")

    def shown_hands() -> list[list[str]]:
        seats = page.locator("#seats .seat")
        return [
            seats.nth(s)
            .locator(".card:not(.back)")
            .evaluate_all("cards => cards.map(c => c.dataset.card)")
            for s in range(seats.count())
        ]

    assert shown_hands() == frames[0]["hands"]
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert page.inner_text("#step") == f"decision 10 / {len(frames) - 1}"
    assert shown_hands() == frames[10]["hands"]
    decision = frames[10]["decision"]
    spec = httpx.get(f"{url}/api/records/games", params={"file": key}).json()["games"][1]["seats"]
    told = page.inner_text("#decision")  # "player_2 (expert): play 7♣", "…: draw"
    assert told.startswith(
        f"player_{decision['player']} ({spec[decision['player']]}): " + decision["label"].split()[0]
    )
    for _ in range(4):
        page.click("#prev")
    assert page.inner_text("#step") == f"decision 6 / {len(frames) - 1}"
    assert shown_hands() == frames[6]["hands"]
    screenshot(page, "watch", full_page=True)
    page.select_option("#seat-view", "1")
    page.locator("#seats .card.back").first.wait_for()
    assert page.inner_text("#step") == f"decision 6 / {len(frames) - 1}"
    hands = shown_hands()
    assert hands[1] == frames[6]["hands"][1] and hands[0] == hands[2] == hands[3] == []


def test_the_leaderboard(page: Any, server: tuple[str, Any]) -> None:
    url, _ = server
    sets = httpx.get(f"{url}/api/results").json()["results"]
    ladder = next(s for s in sets if s["key"] == "1:results.json")  # the second folder's
    page.goto(f"{url}/compare#key={ladder['key']}")
    page.wait_for_selector("#leaderboard tbody tr")
    stored = json.loads((LADDER / "results.json").read_text())
    rows = page.locator("#leaderboard tbody tr")
    assert [rows.nth(i).get_attribute("data-spec") for i in range(rows.count())] == [
        a["spec"] for a in stored["agents"]
    ]
    first = rows.first.inner_text()
    best = stored["agents"][0]
    lo, hi = best["win_rate_ci"]
    assert f"{best['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]" in first
    assert page.locator("#head-to-head tr").count() == 1 + len(stored["agents"])
    assert page.locator("#charts svg.chart").count() == 2
    assert page.locator("img").count() == 0  # results.png draws the same two charts: a link
    chart = httpx.get(url + page.get_attribute("#chart-file", "href"))
    assert chart.status_code == 200 and chart.headers["content-type"] == "image/png"
    screenshot(page, "compare", full_page=True)
    page.select_option("#set", "0:results.json")  # the other tournament
    from playwright.sync_api import expect

    expect(page.locator("#title")).to_have_text(re.compile("^Web demo"))


LADDER_STANDARD = ROOT / "experiments" / "results" / "ladder_standard"  # 8 agents
LONG_NAMES = ROOT / "experiments" / "results" / "training" / "vs_pimc"  # a 41-character spec
BENCHMARK = ROOT / "experiments" / "results" / "benchmark"  # the report cards: a wide table
WIDTHS = (1280, 1024)  # a laptop, a small one


@pytest.fixture(scope="module")
def compare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    games = tmp_path_factory.mktemp("games")
    app = create_app(
        Settings(
            games_dir=games,
            record_dirs=[TOURNAMENT],
            result_dirs=[LADDER_STANDARD, LONG_NAMES, BENCHMARK],
        )
    )
    with running(app) as url:
        yield url


def is_round_step(step: float) -> bool:
    """Whether ``step`` is 1, 2 or 5 × 10^k."""
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    return any(math.isclose(mantissa, m) for m in (1, 2, 5))


@pytest.mark.slow  # a real browser
@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (0, 747, [0, 200, 400, 600, 800]),  # the 187/373/560/747
        (0, 945.6, [0, 200, 400, 600, 800, 1000]),
        (0, 0.45, [0, 0.1, 0.2, 0.3, 0.4, 0.5]),  # the 0.11/0.23/0.34/0.45
        (0, 0.25, [0, 0.05, 0.1, 0.15, 0.2, 0.25]),
        (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
        (0, 133, [0, 50, 100, 150]),
        (0, 0.0037, [0, 0.001, 0.002, 0.003, 0.004]),
        (-35, 120, [-50, 0, 50, 100, 150]),
        (0, 0, [0, 0.2, 0.4, 0.6, 0.8, 1]),  # nothing to show: one unit
    ],
)
def test_axis_ticks_are_round_numbers(
    page: Any, server: tuple[str, Any], lo: float, hi: float, ticks: list[float]
) -> None:
    url, _ = server
    page.goto(f"{url}/compare")
    got = page.evaluate("([lo, hi]) => axisTicks(lo, hi)", [lo, hi])
    assert got["ticks"] == pytest.approx(ticks, abs=1e-12)
    assert got["ticks"][0] <= min(lo, 0) and got["ticks"][-1] >= hi
    assert is_round_step(got["step"])


@pytest.mark.slow  # a real browser
def test_axis_ticks_over_many_ranges(page: Any, server: tuple[str, Any]) -> None:
    url, _ = server
    page.goto(f"{url}/compare")
    ranges = [(0.0, 0.001 * 1.37**k) for k in range(40)]
    ranges += [(-3.0 * k, 7.0 * k) for k in range(1, 9)]
    got_all = page.evaluate("ranges => ranges.map(([lo, hi]) => axisTicks(lo, hi))", ranges)
    for (lo, hi), got in zip(ranges, got_all, strict=True):
        ticks, step = got["ticks"], got["step"]
        assert is_round_step(step), (lo, hi, step)
        assert 3 <= len(ticks) <= 6, (lo, hi, ticks)  # at most 5 intervals, at least 2
        assert ticks[0] <= lo and ticks[-1] >= hi and 0 in ticks, (lo, hi, ticks)
        assert all(math.isclose(b - a, step) for a, b in pairwise(ticks)), ticks


LAYOUT = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const scroller = (e) => { for (let p = e.parentElement; p; p = p.parentElement)
    if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) return box(p);
    return null; };
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    tables: [...document.querySelectorAll("table")].map((t) => ({
      id: t.id, box: box(t), scroller: scroller(t) })),
    charts: [...document.querySelectorAll("#charts svg.chart")].map((svg) => ({
      label: svg.getAttribute("aria-label"),
      texts: [...svg.querySelectorAll("text")].map((t) => ({
        text: t.textContent, cls: t.getAttribute("class"), box: box(t) })),
      bars: [...svg.querySelectorAll("rect.bar")].map(box) })),
    images: document.querySelectorAll("img").length,
  };
}"""


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5 and (
        min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
    )


def check_layout(layout: dict[str, Any], agents: int) -> None:
    """No horizontal overflow of the page; every table inside the viewport or inside a box
    that scrolls (itself inside the viewport); round ticks; no text on text, no chance label
    on a bar; each chart once."""
    width = layout["innerWidth"]
    assert layout["scrollWidth"] <= width
    for table in layout["tables"]:
        inside = table["box"] if table["box"]["right"] <= width + 0.5 else table["scroller"]
        assert inside is not None and inside["right"] <= width + 0.5, (width, table)
    assert [c["label"] for c in layout["charts"]] == [
        "mean game score (lower is better)",
        "win rate",
    ]
    assert layout["images"] == 0
    for chart in layout["charts"]:
        ticks = [float(t["text"]) for t in chart["texts"] if t["cls"] == "tick"]
        assert ticks[0] == 0 and len(ticks) >= 3
        step = ticks[1] - ticks[0]
        assert is_round_step(step), ticks
        assert all(math.isclose(b - a, step) for a, b in pairwise(ticks)), ticks
        texts = chart["texts"]
        assert sum(t["cls"] == "name" for t in texts) == len(chart["bars"]) == agents
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                assert not overlap(a["box"], b["box"]), (chart["label"], a, b)
        for label in (t for t in texts if t["cls"] == "chance"):
            assert not any(overlap(label["box"], bar) for bar in chart["bars"]), label
    assert [t["text"] for t in layout["charts"][1]["texts"] if t["cls"] == "chance"] == [
        "chance 0.25"
    ]


@pytest.mark.slow  # a real browser
def test_the_compare_page_fits_a_laptop(page: Any, compare_server: str) -> None:
    url = compare_server
    page.goto(f"{url}/compare#key=0:results.json")
    page.wait_for_selector("#leaderboard tbody tr")
    page.wait_for_selector("#cards tbody tr")
    cards = len(list(BENCHMARK.rglob("card.json")))
    assert page.locator("#cards tbody tr").count() == cards
    assert page.locator("#opponents th").count() == 5  # the zoo's columns under one heading
    for key, folder in (("0:results.json", LADDER_STANDARD), ("1:results.json", LONG_NAMES)):
        page.select_option("#set", key)
        agents = len(json.loads((folder / "results.json").read_text())["agents"])
        page.wait_for_function(
            "n => document.querySelectorAll('#leaderboard tbody tr').length === n", arg=agents
        )
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            check_layout(page.evaluate(LAYOUT), agents)
        page.set_viewport_size(VIEWPORT)
