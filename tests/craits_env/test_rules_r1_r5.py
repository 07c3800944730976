"""Scripted rule tests for docs/rules.md R1–R5 (cards, the deal, a turn, card functions, the count).

Every test deals a stacked deck with :func:`stacked_game` (or gives ``Game`` an explicit
deck order), plays moves by name and asserts exact hands (as multisets), turn order,
phase, legal actions and, where the hand ends, the points, in the dialect of
:mod:`tests.scripting`. Expected values are worked out by hand from docs/rules.md: the
stock is the listed cards, then the rest of the deck in index order (Ac, 2c, …, Kc,
Ad, …). Each test is named after the rule id it checks.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter

import numpy as np
import pytest

from craits_env import (
    CALL_BASE,
    DECLARE,
    DRAW,
    Game,
    Rank,
    Rules,
    Suit,
    card_str,
    options,
    parse_card,
    parse_cards,
)
from craits_env.testing.scenario import deal_order, stacked_game

from ..scripting import (
    ALL_CALLS,
    ALL_CARDS,
    RANKS,
    SUITS,
    act,
    assert_hands,
    calls,
    legal,
    rest_of_deck,
    sizes,
    state,
    turn,
)

STANDARD = (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8)


# ---------------------------------------------------------------- scenarios


class ScriptedRng(np.random.Generator):
    """A generator whose permutations start with the given cards (to script R2.1's draw).

    docs/rules.md 14.11: the players draw in seat order from one deck shuffled by the
    game's generator; the engine shuffles with ``rng.permutation(len(deck))``.
    """

    def __init__(self, first: list[str]) -> None:
        super().__init__(np.random.PCG64(0))
        self._first = [parse_card(c) for c in first]

    def permutation(self, x):  # type: ignore[override]
        rest = [i for i in range(x) if i not in self._first]
        return np.array(self._first + rest)


def four_players(p1: list[str], starter: str = "3h", stock: tuple[str, ...] = (), **options):
    """Four seats, dealer 0, so seat 1 acts first; seats 0, 2, 3 hold no hearts."""
    hands = [["Kc", "Qc", "Jc"], p1, ["Kd", "Qd", "Jd"], ["Ks", "Js", "Ts"]]
    return stacked_game(hands, starter=starter, stock=list(stock), **options)


# ---------------------------------------------------------------- R1 cards, seats, notation


def test_r1_1_deck_is_52_cards_of_13_ranks_and_4_suits():
    # R1.1: one standard deck, ranks A..K, suits c d h s, every card once.
    g = Game(2, Rules(hand_sizes=(1,)), seed=0)
    deal = g.snapshot()["deal"]
    assert len(deal) == 52
    assert sorted(deal, key=parse_card) == ALL_CARDS
    assert [r.name for r in Rank][:2] == ["ACE", "TWO"] and len(Rank) == 13
    assert [s.name for s in Suit] == ["CLUBS", "DIAMONDS", "HEARTS", "SPADES"]


def test_r1_2_cards_are_written_rank_then_suit():
    # R1.2: "As", "Td", "2c"; parse and format are inverse; bad notation is an error.
    assert parse_card("As") == 39
    assert parse_card("Td") == 22
    assert parse_card("2c") == 1
    for i, text in enumerate(ALL_CARDS):
        assert parse_card(text) == i
        assert card_str(i) == text
    assert parse_cards(["As", "Td", "2c"]) == [39, 22, 1]


@pytest.mark.parametrize("bad", ["", "A", "s", "Zs", "Ax", "1s", "0c", "sA", "Asd", "11c", None])
def test_r1_2_invalid_card_notation_raises(bad):
    # R1.2: anything that is not rank-then-suit is rejected.
    with pytest.raises(ValueError):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_r1_2_invalid_card_index_cannot_be_formatted(bad):
    # R1.2/R1.3: only indices 0-51 are cards.
    with pytest.raises(ValueError):
        card_str(bad)


def test_r1_3_card_index_is_suit_times_13_plus_rank():
    # R1.3: Ac = 0, Kc = 12, Ad = 13, Ks = 51; index = suit_index * 13 + rank_index.
    assert [parse_card(c) for c in ("Ac", "Kc", "Ad", "Ks")] == [0, 12, 13, 51]
    for si, s in enumerate(SUITS):
        for ri, r in enumerate(RANKS):
            assert parse_card(r + s) == si * 13 + ri
    # The play action for a card is its index.
    g = stacked_game([["Kc", "Qd"], ["Ks", "Jd"]], starter="3s")
    assert g.legal_actions() == (51,)


def test_r1_3_two_decks_duplicate_cards_share_one_action_id():
    # R1.3/R1.5: six players use two decks; both copies of Jc are one action id (10).
    hands = [
        ["Kd", "Qd", "Jd"],
        ["Jc", "Jc", "Kd"],
        ["Kh", "Qh", "4d"],
        ["Ks", "Qs", "Js"],
        ["Ah", "Ad", "As"],
        ["5d", "5h", "5s"],
    ]
    g = stacked_game(hands, starter="3c")
    assert len(g.snapshot()["deal"]) == 104
    assert state(g) == (1, "play", (10,))
    g.apply(10)  # puts down one copy
    assert_hands(g, [hands[0], ["Jc", "Kd"], *hands[2:]])
    assert g.snapshot()["discard"] == ["3c", "Jc"]
    assert state(g) == (2, "play", legal("draw"))


def test_r1_3_duplicates_share_one_id_with_num_decks_2_for_two_players():
    # R1.3/R1.5: num_decks=2 overrides the automatic one deck for two players.
    g = stacked_game([["Jc", "Jc", "Kd"], ["Kh", "Qh", "4d"]], starter="3c", dealer=1, num_decks=2)
    assert len(g.snapshot()["deal"]) == 104
    assert state(g) == (0, "play", legal("Jc"))
    act(g, "Jc")
    assert_hands(g, [["Jc", "Kd"], ["Kh", "Qh", "4d"]])


def test_r1_3_two_decks_duplicate_aces_and_twos_share_ids_in_the_count():
    # R1.3/R5.2: in a two-deck count both copies of Ac are one id, both 2c one id.
    hands = [
        ["Kd", "Qd", "Jd"],
        ["Ac", "Ac", "2c"],
        ["Kh", "Qh", "4d"],
        ["Ks", "Qs", "Js"],
        ["Ah", "Ad", "As"],
        ["5d", "5h", "5s"],
    ]
    g = stacked_game(hands, starter="2h")
    assert state(g) == (1, "count", legal("Ac", "2c"))
    act(g, "Ac")
    assert g.snapshot()["count"] == 3
    assert_hands(g, [hands[0], ["Ac", "2c"], *hands[2:]])


def test_r1_4_seats_to_the_left_are_next_direction_plus_one():
    # R1.4: seat i+1 mod n sits left of seat i; play goes left (+1) from the dealer.
    hands = [["Qc", "Qd", "Qh"], ["Jc", "Jd", "Jh"], ["Ac", "Ad", "Ah"], ["Kc", "Kd", "Kh"]]
    g = stacked_game(hands, starter="3c", dealer=2)
    assert g.snapshot()["direction"] == 1
    seen = []
    for card in ("Kc", "Qc", "Jc", "Ac"):
        seen.append(g.current_player)
        assert g.legal_actions() == legal(card)
        act(g, card)
    assert seen == [3, 0, 1, 2]
    assert state(g) == (3, "play", legal("draw"))


@pytest.mark.parametrize("n", range(2, 11))
def test_r1_5_one_deck_up_to_five_players_two_decks_above(n):
    # R1.5: num_decks=None means 52 cards for 2-5 players, 104 (each card twice) for 6-10.
    g = Game(n, Rules(hand_sizes=(1,)), seed=n)
    deal = Counter(g.snapshot()["deal"])
    copies = 1 if n <= 5 else 2
    assert deal == Counter({c: copies for c in ALL_CARDS})
    assert Rules().decks_for(n) == copies


def test_r1_5_num_decks_option_overrides_the_automatic_choice():
    # R1.5: num_decks=1 for six players gives 52 cards; num_decks=2 for two gives 104.
    one = Game(6, Rules(num_decks=1, hand_sizes=(8,)), seed=1)  # 6*8+1 = 49 <= 52
    assert Counter(one.snapshot()["deal"]) == Counter(ALL_CARDS)
    two = Game(2, Rules(num_decks=2, hand_sizes=(1,)), seed=1)
    assert Counter(two.snapshot()["deal"]) == Counter(ALL_CARDS * 2)


@pytest.mark.parametrize(
    ("n", "options"),
    [
        (2, {"hand_sizes": (26,)}),  # 53 > 52
        (3, {"hand_sizes": (18,)}),  # 55 > 52
        (2, {"hand_sizes": (1, 26)}),  # the largest hand counts, not the first
        (7, {"num_decks": 1}),  # 7*8+1 = 57 > 52
        (6, {"num_decks": 1, "hand_sizes": (9,)}),  # 55 > 52
        (10, {"hand_sizes": (11,)}),  # 111 > 104
        (2, {"remove_kings_queens": True, "hand_sizes": (22,)}),  # 45 > 44
        (6, {"num_decks": 1, "remove_kings_queens": True}),  # 49 > 44
        (10, {"remove_kings_queens": True, "hand_sizes": (9,)}),  # 91 > 88
    ],
)
def test_r1_5_undealable_configuration_is_rejected_at_creation(n, options):
    # R1.5: players * largest hand + 1 starter > cards in the deck -> ValueError.
    with pytest.raises(ValueError):
        Game(n, Rules(**options), seed=0)


@pytest.mark.parametrize(
    ("n", "options", "stock_size"),
    [
        (3, {"hand_sizes": (17,)}, 0),  # 52 = 52: exactly dealable
        (2, {"hand_sizes": (25,)}, 1),
        (6, {"num_decks": 1}, 3),  # the 6*8+1 = 49 <= 52 case is allowed
        (10, {}, 23),  # 10*8+1 = 81 <= 104
        (2, {"remove_kings_queens": True, "hand_sizes": (21,)}, 1),  # 43 <= 44
        (5, {"remove_kings_queens": True}, 3),  # 41 <= 44
    ],
)
def test_r1_5_dealable_boundary_configurations_are_accepted(n, options, stock_size):
    # R1.5: up to players * largest hand + 1 == deck size is fine; the rest is the stock.
    rules = Rules(**options)
    order = rest_of_deck([], rules.decks_for(n), rules.remove_kings_queens)
    # Put a neutral 3 where the starter falls so that nobody draws (R2.5).
    order.remove("3c")
    order.insert(n * rules.hand_sizes[0], "3c")
    g = Game(n, rules, dealer=0, deals=[order])
    assert sizes(g) == [rules.hand_sizes[0]] * n
    assert len(g.snapshot()["stock"]) == stock_size


@pytest.mark.parametrize("n", [0, 1, 11, 2.0, True])
def test_r1_5_two_to_ten_players(n):
    # R1.5: 2-10 players.
    with pytest.raises(ValueError):
        Game(n, seed=0)


def test_r1_6_rank_order_for_the_first_dealer_draw():
    # R1.6: A K Q J T 9 8 7 6 5 4 3 2, highest first; the lowest card drawn deals (R2.1).
    order = "AKQJT98765432"
    for hi, lo in itertools.pairwise(order):
        g = Game(2, Rules(hand_sizes=(1,)), rng=ScriptedRng([hi + "c", lo + "d"]))
        assert g.dealer == 1, (hi, lo)
        g = Game(2, Rules(hand_sizes=(1,)), rng=ScriptedRng([lo + "c", hi + "d"]))
        assert g.dealer == 0, (lo, hi)
    assert Game(4, Rules(hand_sizes=(1,)), rng=ScriptedRng(["Kc", "Qd", "Jh", "Ts"])).dealer == 3
    assert Game(3, Rules(hand_sizes=(1,)), rng=ScriptedRng(["2c", "Ad", "3h"])).dealer == 0
    assert Game(3, Rules(hand_sizes=(1,)), rng=ScriptedRng(["Ac", "Kd", "Ah"])).dealer == 1


# ---------------------------------------------------------------- R2 the game and the deal


def test_r2_1_tied_lowest_players_draw_again_in_seat_order():
    # R2.1: seats 0 and 1 tie on 5s; they draw again in seat order (Kc, 7d): seat 1 deals.
    rng = ScriptedRng(["5c", "5d", "9h", "Kc", "7d"])
    assert Game(3, Rules(hand_sizes=(1,)), rng=rng).dealer == 1
    # Seats 1 and 2 tie; seat 1 redraws 7c, seat 2 Kd: seat 1 deals.
    rng = ScriptedRng(["9c", "5d", "5h", "7c", "Kd"])
    assert Game(3, Rules(hand_sizes=(1,)), rng=rng).dealer == 1
    # Two ties in a row, then 3h (seat 0) against Ah (seat 1): seat 0 deals.
    rng = ScriptedRng(["5c", "5d", "6c", "6d", "3h", "Ah"])
    assert Game(2, Rules(hand_sizes=(1,)), rng=rng).dealer == 0


def test_r2_1_first_dealer_from_the_seed_is_reproducible():
    # R2.1: the first dealer drawn from the seed: same seed, same dealer; every seat occurs.
    dealers = []
    for seed in range(60):
        a, b = Game(4, seed=seed), Game(4, seed=seed)
        assert a.dealer == b.dealer == a.snapshot()["dealer"]
        assert a.snapshot()["deal"] == b.snapshot()["deal"]
        dealers.append(a.dealer)
    assert set(dealers) == {0, 1, 2, 3}


def test_r2_1_explicit_dealer_is_honoured():
    # R2.1: an explicit first dealer overrides the draw; play starts to its left.
    for seed in range(5):
        assert Game(4, seed=seed, dealer=2).dealer == 2
    hands = [["Qc", "Qd", "Qh"], ["Jc", "Jd", "Jh"], ["Ac", "Ad", "Ah"], ["Kc", "Kd", "Kh"]]
    g = stacked_game(hands, starter="3c", dealer=3)
    assert g.snapshot()["dealer"] == 3
    assert state(g) == (0, "play", legal("Qc"))
    with pytest.raises(ValueError):
        Game(4, seed=0, dealer=4)


def test_r2_2_standard_and_short_schedules():
    # R2.2: 15 hands 8..1..8 by default; the short game is the first eight, 8..1.
    assert Rules().hand_sizes == STANDARD
    assert Rules.short_game().hand_sizes == (8, 7, 6, 5, 4, 3, 2, 1)
    assert Rules.short_game(face_cards=True).face_cards is True
    g = Game(3, Rules.short_game(), seed=0)
    assert g.snapshot()["hand_index"] == 0
    assert g.hand_size == 8


@pytest.mark.parametrize(("rules", "hands"), [(Rules.short_game(), 8), (Rules(), 15)])
def test_r2_2_a_game_plays_its_whole_schedule(rules, hands):
    # R2.2: the game is exactly its schedule of hands; each hand deals the scheduled size.
    g = Game(3, rules, seed=7)
    r = random.Random(7)
    sizes = [g.hand_size]
    index = 0
    while not g.is_over:
        g.apply(r.choice(g.legal_actions()))
        if not g.is_over and g.snapshot()["hand_index"] != index:
            index = g.snapshot()["hand_index"]
            sizes.append(g.hand_size)
    s = g.snapshot()
    assert turn(g) == (None, "game_over")
    assert len(s["hand_points"]) == hands
    assert sizes == list(rules.hand_sizes)
    assert s["scores"] == [sum(p[i] for p in s["hand_points"]) for i in range(3)]


def test_r2_2_custom_schedule_deals_the_next_hand_size():
    # R2.2: schedule (1, 3): after the one-card hand, each player is dealt 3.
    g = stacked_game(
        [["Kd"], ["5c"]], starter="3c", stock=["4h"], rules=Rules(hand_sizes=(1, 3)), seed=3
    )
    assert state(g) == (1, "play", legal("5c"))
    act(g, "5c")  # R4 5: seat 0 draws 4h; seat 1 is out (R6.1)
    s = g.snapshot()
    assert s["hand_points"] == [[25, 0]]  # Kd 10 + 4h 15
    assert s["scores"] == [25, 0]
    assert s["hand_index"] == 1 and s["dealer"] == 1  # R2.4: the deal passed left
    deal = s["deal"]
    assert len(deal) == 52
    assert deal[6][0] in "A3JQK", "seed 3 should turn a neutral starter"
    assert_hands(g, [deal[0:6:2], deal[1:6:2]])  # first card to seat 0, left of dealer 1
    assert s["discard"] == [deal[6]]
    assert s["stock"] == deal[7:]
    assert s["current_player"] == 0


def test_r2_3_deal_round_robin_from_left_of_dealer_then_starter_then_stock():
    # R2.3: first dealt card to the seat left of the dealer, round robin; then starter; stock.
    first = ["Kc", "Kd", "Kh", "Qc", "Qd", "Qh", "3s", "As", "5s"]
    order = first + rest_of_deck(first)
    g = Game(3, Rules(hand_sizes=(2,)), dealer=1, deals=[order])
    s = g.snapshot()
    assert s["deal"] == order
    assert_hands(g, [["Kd", "Qd"], ["Kh", "Qh"], ["Kc", "Qc"]])
    assert s["discard"] == ["3s"] and s["top"] == "3s" and s["active_suit"] == "s"
    assert s["stock"] == order[7:]
    assert s["stock"][:3] == ["As", "5s", "Ac"]
    # R3.6: seat 2 (left of the dealer) has no spade: DRAW is asked as a decision.
    assert state(g) == (2, "play", legal("draw"))
    act(g, "draw")
    assert_hands(g, [["Kd", "Qd"], ["Kh", "Qh"], ["As", "Kc", "Qc"]])
    assert state(g) == (0, "play", legal("draw"))


def test_r2_3_stacked_deal_snapshot_with_four_players():
    # R2.3: dealer 2 deals to 3, 0, 1, 2, 3, 0, ...; starter; stock next-first; rest in order.
    hands = [["Ac", "2c"], ["Ad", "2d"], ["Ah", "2h"], ["As", "2s"]]
    g = stacked_game(hands, starter="3c", stock=["Kc", "Kd"], dealer=2)
    dealt = ["As", "Ac", "Ad", "Ah", "2s", "2c", "2d", "2h", "3c", "Kc", "Kd"]
    s = g.snapshot()
    assert s["deal"] == dealt + rest_of_deck(dealt)
    assert s["stock"] == ["Kc", "Kd", *rest_of_deck(dealt)]
    assert s["stock"][2:5] == ["4c", "5c", "6c"]
    assert_hands(g, hands)
    assert state(g) == (3, "play", legal("draw"))


def _ten_ends_hand(dealer_follows_direction: bool, card: str = "Td") -> Game:
    """Three seats, dealer 0, hands (1, 2): seat 1 goes out on ``card`` at once.

    The second hand is scripted too: its first seven cards are Kc Kd Kh Qc Qd Qh 3c.
    """
    rules = Rules(hand_sizes=(1, 2), dealer_follows_direction=dealer_follows_direction)
    first = [["Kh"], [card], ["Qs"]]
    second_top = ["Kc", "Kd", "Kh", "Qc", "Qd", "Qh", "3c"]
    order1 = deal_order(first, "3d", rules=rules)
    order2 = second_top + rest_of_deck(second_top)
    g = Game(3, rules, dealer=0, deals=[order1, order2])
    assert state(g) == (1, "play", legal(card))
    act(g, card)
    return g


def test_r2_4_deal_passes_left_and_plays_left_by_default():
    # R2.4: without dealer_follows_direction the deal passes left even if play ended at -1.
    g = _ten_ends_hand(False)
    s = g.snapshot()
    assert s["hand_points"] == [[10, 0, 10]]  # the T reversed, seat 1 went out
    assert s["hand_index"] == 1 and s["dealer"] == 1 and s["direction"] == 1
    # Dealt left from dealer 1: Kc -> 2, Kd -> 0, Kh -> 1, Qc -> 2, Qd -> 0, Qh -> 1.
    assert_hands(g, [["Kd", "Qd"], ["Kh", "Qh"], ["Kc", "Qc"]])
    assert state(g) == (2, "play", legal("Qc", "Kc"))
    act(g, "Kc")
    assert state(g) == (2, "declare", legal("declare", "silent"))  # one card left (R7.1)
    act(g, "declare")
    assert state(g) == (0, "play", legal("Kd"))


def test_r2_4_dealer_follows_direction_after_a_hand_ending_at_minus_one():
    # R2.4 option: the hand ended with direction -1, so the next dealer is to the right
    # (seat 2) and the hand is dealt and played to the right.
    g = _ten_ends_hand(True)
    s = g.snapshot()
    assert s["hand_points"] == [[10, 0, 10]]
    assert s["hand_index"] == 1 and s["dealer"] == 2 and s["direction"] == -1
    # Dealt right from dealer 2: Kc -> 1, Kd -> 0, Kh -> 2, Qc -> 1, Qd -> 0, Qh -> 2.
    assert_hands(g, [["Kd", "Qd"], ["Kc", "Qc"], ["Kh", "Qh"]])
    assert s["discard"] == ["3c"]
    assert state(g) == (1, "play", legal("Qc", "Kc"))
    act(g, "Kc")
    assert state(g) == (1, "declare", legal("declare", "silent"))  # one card left (R7.1)
    act(g, "declare")
    assert state(g) == (0, "play", legal("Kd"))  # to the right of seat 1
    act(g, "Kd")
    act(g, "declare")
    assert state(g) == (2, "play", legal("Kh"))


def test_r2_4_dealer_follows_direction_after_a_hand_ending_at_plus_one():
    # R2.4 option: a hand that ended with direction +1 passes the deal left as usual.
    g = _ten_ends_hand(True, card="Kd")
    s = g.snapshot()
    assert s["hand_points"] == [[10, 0, 10]]
    assert s["dealer"] == 1 and s["direction"] == 1
    assert_hands(g, [["Kd", "Qd"], ["Kh", "Qh"], ["Kc", "Qc"]])
    assert g.current_player == 2


def test_r2_4_dealer_follows_direction_seeded_deal_goes_right():
    # R2.4 option with a seeded second hand: snapshot()["deal"] is dealt to the right of
    # the new dealer (seat 2): cards 0, 1, 2 go to seats 1, 0, 2, and so on.
    rules = Rules(hand_sizes=(1, 2), dealer_follows_direction=True)
    g = stacked_game([["Kh"], ["Td"], ["Qs"]], starter="3d", rules=rules, seed=3)
    act(g, "Td")
    s = g.snapshot()
    assert s["dealer"] == 2 and s["direction"] == -1
    deal = s["deal"]
    assert deal[6][0] in "A3JQK", "seed 3 should turn a neutral starter"
    assert_hands(g, [[deal[1], deal[4]], [deal[0], deal[3]], [deal[2], deal[5]]])
    assert s["stock"] == deal[7:]
    assert g.current_player == 1


P0, P2 = ["Kc", "Qd", "3s"], ["Kd", "Qs", "4c"]


def test_r2_5_starter_two_opens_the_count_for_the_player_next_to_dealer():
    # R2.5/R5.1: a turned-up 2 starts the count at 2 for seat 1.
    g = stacked_game([P0, ["Ac", "2s", "9h"], P2], starter="2h", stock=["5d", "6d", "7d", "8d"])
    s = g.snapshot()
    assert s["count"] == 2 and s["top"] == "2h"
    assert state(g) == (1, "count", legal("Ac", "2s"))
    act(g, "2s")
    assert g.snapshot()["count"] == 4
    assert state(g) == (2, "count", legal("draw"))
    act(g, "draw")
    assert_hands(g, [P0, ["Ac", "9h"], [*P2, "5d", "6d", "7d", "8d"]])
    assert g.snapshot()["count"] == 0
    assert state(g) == (0, "play", legal("3s"))


def test_r2_5_starter_four_skips_the_player_next_to_dealer():
    # R2.5: a starter 4 skips seat 1; seat 2 plays first.
    g = stacked_game([P0, ["Ac", "4d", "9h"], P2], starter="4h")
    assert state(g) == (2, "play", legal("4c"))
    act(g, "4c")  # skips seat 0
    assert state(g) == (1, "play", legal("Ac", "4d", "9h"))
    assert_hands(g, [P0, ["Ac", "4d", "9h"], ["Kd", "Qs"]])


def test_r2_5_starter_four_with_two_players_dealer_plays_first():
    # R2.5/R4.2: with two players the skipped neighbour's turn goes back to the dealer.
    g = stacked_game([["Kc", "Qd", "3h"], ["Kd", "Qs", "4c"]], starter="4h")
    assert state(g) == (0, "play", legal("3h"))
    assert g.snapshot()["stock"][:1] == ["Ac"]


def test_r2_5_starter_five_every_other_player_draws():
    # R2.5/R4 5: dealer 1; seat 2 then seat 0 draw one each, dealer none; seat 2 plays.
    p1 = ["Jc", "4d", "9h"]
    g = stacked_game([P0, p1, P2], starter="5h", stock=["Ac", "2d"], dealer=1)
    assert_hands(g, [[*P0, "2d"], p1, [*P2, "Ac"]])
    assert len(g.snapshot()["stock"]) == 52 - 9 - 1 - 2
    assert state(g) == (2, "play", legal("draw"))


def test_r2_5_starter_six_dealer_plays_again():
    # R2.5/R4 6: the dealer makes the next play on the 6.
    g = stacked_game([["Kc", "Qh", "6d"], ["Ac", "4d", "9s"], P2], starter="6h")
    assert state(g) == (0, "play", legal("Qh", "6d"))
    assert g.snapshot()["extra_play"] is True
    act(g, "Qh")
    assert state(g) == (1, "play", legal("9s"))


def test_r2_5_starter_six_dealer_without_a_playable_card_draws_and_passes():
    # R2.5/R4 6: the dealer cannot play on the 6: draws one (a decision, R3.6), turn passes.
    g = stacked_game([P0, ["Ac", "4d", "9s"], P2], starter="6h", stock=["Ah"])
    assert state(g) == (0, "play", legal("draw"))
    act(g, "draw")
    assert_hands(g, [[*P0, "Ah"], ["Ac", "4d", "9s"], P2])
    assert state(g) == (1, "play", legal("9s"))


@pytest.mark.parametrize("seven_hits", ["next", "next_but_one"])
def test_r2_5_starter_seven_hits_in_the_dealers_name(seven_hits):
    # R2.5/R4.3: a starter 7 makes seat 1 draw; with three players next_but_one hits the
    # next player too. Seat 1 then plays.
    p1 = ["Ac", "4d", "9s"]
    g = stacked_game([P0, p1, P2], starter="7h", stock=["Ah"], seven_hits=seven_hits)
    assert_hands(g, [P0, [*p1, "Ah"], P2])
    assert state(g) == (1, "play", legal("Ah", "9s"))


@pytest.mark.parametrize(("seven_hits", "hit"), [("next", 1), ("next_but_one", 2)])
def test_r2_5_starter_seven_with_four_players_next_but_one_hits_seat_two(seven_hits, hit):
    # R2.5/R4.3: at four players a next_but_one starter 7 hits seat 2; seat 1 plays first.
    p1 = ["Ac", "4d", "9s"]
    g = four_players(p1, starter="7h", stock=("Ah",), seven_hits=seven_hits)
    expected = [["Kc", "Qc", "Jc"], p1, ["Kd", "Qd", "Jd"], ["Ks", "Js", "Ts"]]
    expected[hit] = [*expected[hit], "Ah"]
    assert_hands(g, expected)
    assert state(g) == (1, "play", legal("Ah", "9s") if hit == 1 else legal("9s"))


def test_r2_5_starter_seven_next_but_one_with_two_players_hits_the_next_player():
    # R2.5/R4.3: with two players next_but_one hits the next player (seat 1), not the dealer.
    g = stacked_game(
        [["Kc", "Qd", "3s"], ["Ac", "4d", "9s"]],
        starter="7h",
        stock=["Ah"],
        seven_hits="next_but_one",
    )
    assert_hands(g, [["Kc", "Qd", "3s"], ["Ac", "4d", "9s", "Ah"]])
    assert state(g) == (1, "play", legal("Ah", "9s"))


def test_r2_5_starter_eight_dealer_calls_any_suit():
    # R2.5/R4 8: the dealer calls a suit as a decision, then seat 1 plays to it.
    g = stacked_game([P0, ["Ks", "8c", "Kh"], P2], starter="8h")
    assert state(g) == (0, "call_suit", ALL_CALLS)
    act(g, "call s")
    s = g.snapshot()
    assert s["active_suit"] == "s" and s["top"] == "8h"
    assert state(g) == (1, "play", legal("8c", "Ks"))


@pytest.mark.parametrize(
    ("starter", "suits", "other"),
    [("9c", "cs", "s"), ("9d", "dh", "h"), ("9h", "dh", "d"), ("9s", "cs", "c")],
)
def test_r2_5_starter_nine_dealer_calls_one_of_two_suits(starter, suits, other):
    # R2.5/R4 9: the dealer keeps the 9's suit or takes the same-colour one (only 2 calls).
    g = stacked_game([P0, ["Ah", "4d", "Jc"], P2], starter=starter)
    assert state(g) == (0, "call_suit", calls(suits))
    act(g, f"call {other}")
    assert g.snapshot()["active_suit"] == other
    assert turn(g) == (1, "play")


def test_r2_5_starter_ten_play_begins_to_the_dealers_right():
    # R2.5/R4 T: a starter T reverses: with three players seat 2 plays first.
    g = stacked_game([["Kh", "Qd", "3s"], ["Ah", "4d", "Jc"], ["Kd", "Qs", "Th"]], starter="Tc")
    assert g.snapshot()["direction"] == -1
    assert state(g) == (2, "play", legal("Th"))
    act(g, "Th")  # reverses back to +1: next is seat 0
    assert g.snapshot()["direction"] == 1
    assert state(g) == (0, "play", legal("Kh"))


def test_r2_5_starter_ten_with_two_players_the_other_player_begins():
    # R2.5/R4 T: with two players the reversal still hands play to the other player.
    g = stacked_game([["Kc", "Qd", "3s"], ["Ac", "4d", "9s"]], starter="Th")
    assert g.snapshot()["direction"] == -1
    assert state(g) == (1, "play", legal("9s"))


def test_r2_5_face_cards_starter_jack_next_draws_two_and_forfeits():
    # R2.5/R9.1: a starter J is a run of one: seat 1 draws 2 and forfeits; seat 2 plays.
    p1 = ["Ac", "4d", "9s"]
    g = stacked_game([P0, p1, P2], starter="Jh", stock=["Ah", "2h"], face_cards=True)
    assert_hands(g, [P0, [*p1, "Ah", "2h"], P2])
    assert g.snapshot()["jack_run"] == 1
    assert state(g) == (2, "play", legal("draw"))


def test_r2_5_face_cards_starter_jack_with_two_players_dealer_plays():
    # R2.5/R9.1: with two players the forfeit hands the turn back to the dealer.
    g = stacked_game(
        [["Kc", "Qd", "3h"], ["Ac", "4d", "9s"]],
        starter="Jh",
        stock=["Ah", "2h"],
        face_cards=True,
    )
    assert_hands(g, [["Kc", "Qd", "3h"], ["Ac", "4d", "9s", "Ah", "2h"]])
    assert state(g) == (0, "play", legal("3h"))


def test_r2_5_face_cards_starter_queen_of_spades_next_draws_five_and_forfeits():
    # R2.5/R9.2: a starter Qs: seat 1 draws five and forfeits; seat 2 plays.
    p1 = ["Ac", "4d", "9h"]
    p2 = ["Kd", "Qh", "4c"]
    stock = ["Ah", "2h", "5h", "6h", "7h"]
    g = stacked_game([[*P0[:2], "3h"], p1, p2], starter="Qs", stock=stock, face_cards=True)
    assert_hands(g, [["Kc", "Qd", "3h"], [*p1, *stock], p2])
    assert state(g) == (2, "play", legal("Qh"))


@pytest.mark.parametrize(
    ("starter", "legal"),
    [("Qc", legal("Ac", "9s")), ("Qd", legal("4d", "9s")), ("Qh", legal("9s"))],
)
def test_r2_5_face_cards_starter_other_queens_do_nothing(starter, legal):
    # R2.5/R9.2: queens other than Qs have no function.
    p0, p1, p2 = ["Kc", "Jd", "3s"], ["Ac", "4d", "9s"], ["Kd", "Js", "4c"]
    g = stacked_game([p0, p1, p2], starter=starter, face_cards=True)
    assert_hands(g, [p0, p1, p2])
    assert len(g.snapshot()["stock"]) == 52 - 10
    assert state(g) == (1, "play", legal)


def test_r2_5_face_cards_starter_king_dealer_plays_a_three_card_sequence():
    # R2.5/R9.3: a starter K: the dealer plays three cards; the first two have no function,
    # the third (a 5) has its normal one; then play passes to seat 1.
    p0 = ["3c", "5c", "3h", "Qd", "Js"]
    p1 = ["Ac", "Ad", "As", "4d", "4s"]
    p2 = ["Kd", "Qs", "Td", "Ts", "7d"]
    g = stacked_game([p0, p1, p2], starter="Kh", stock=["Jd", "Jh"], face_cards=True)
    assert g.snapshot()["king_cards_left"] == 3
    assert state(g) == (0, "play", legal("3h"))
    act(g, "3h")
    assert g.snapshot()["king_cards_left"] == 2
    assert state(g) == (0, "play", legal("3c"))
    act(g, "3c")
    assert g.snapshot()["king_cards_left"] == 1
    assert state(g) == (0, "play", legal("5c"))
    act(g, "5c")
    assert g.snapshot()["king_cards_left"] == 0
    assert_hands(g, [["Qd", "Js"], [*p1, "Jd"], [*p2, "Jh"]])
    assert state(g) == (1, "play", legal("Ac"))


@pytest.mark.parametrize("starter", ["Jh", "Qs", "Kh"])
def test_r2_5_starter_face_cards_do_nothing_without_the_option(starter):
    # R2.5/R4 J Q K: without face_cards a starter J, Q or K has no function.
    p0, p1, p2 = ["Kc", "Jd", "3s"], ["Ac", "4d", "9s"], ["Kd", "Qc", "4c"]
    g = stacked_game([p0, p1, p2], starter=starter)
    assert_hands(g, [p0, p1, p2])
    assert len(g.snapshot()["stock"]) == 52 - 10
    assert turn(g) == (1, "play")
    assert g.snapshot()["king_cards_left"] == 0


def test_r2_5_no_one_card_declaration_for_the_starter():
    # R2.5: the starter makes no one-card declaration, even from a one-card hand.
    g = stacked_game([["Kc"], ["Qd"]], starter="8h")
    assert state(g) == (0, "call_suit", ALL_CALLS)
    act(g, "call d")
    assert state(g) == (1, "play", legal("Qd"))
    g = stacked_game([["Kc"], ["Qd"]], starter="6d")
    assert state(g) == (0, "play", legal("draw"))  # the dealer's extra play, not a declaration


def test_r2_6_remove_kings_queens_leaves_44_cards():
    # R2.6: the option takes every K and Q out (8 per deck).
    g = Game(3, Rules(remove_kings_queens=True, hand_sizes=(1,)), seed=0)
    assert Counter(g.snapshot()["deal"]) == Counter(rest_of_deck([], remove_kq=True))
    assert len(g.snapshot()["deal"]) == 44
    g = Game(2, Rules(remove_kings_queens=True, num_decks=2, hand_sizes=(1,)), seed=0)
    assert len(g.snapshot()["deal"]) == 88
    assert not any(c[0] in "KQ" for c in g.snapshot()["deal"])
    g = Game(3, Rules(hand_sizes=(1,)), seed=0)  # off: the full deck
    assert len(g.snapshot()["deal"]) == 52


def test_r2_6_remove_kings_queens_stock_and_dealability():
    # R2.6/R1.5: the rest of a stacked deck skips K and Q; 2 x 22 + 1 = 45 > 44 is rejected.
    g = stacked_game([["Jc", "Jd"], ["Jh", "Js"]], starter="3c", remove_kings_queens=True)
    s = g.snapshot()
    assert len(s["deal"]) == 44
    dealt = ["Jc", "Jd", "Jh", "Js", "3c"]
    assert s["stock"] == rest_of_deck(dealt, remove_kq=True)
    assert s["stock"][8:11] == ["Tc", "Ad", "2d"]  # no Qc Kc between Tc.. and Ad
    with pytest.raises(ValueError):
        stacked_game([["Kc"], ["Jd"]], starter="3c", remove_kings_queens=True)
    with pytest.raises(ValueError):
        Game(2, Rules(remove_kings_queens=True, hand_sizes=(22,)), seed=0)
    Game(2, Rules(hand_sizes=(22,)), seed=0)  # fine with the full deck


# ---------------------------------------------------------------- R3 a turn


def test_r3_1_playable_cards_follow_suit_or_rank_or_are_eights_and_nines():
    # R3.1: on 5h: 5c (rank), 7h (suit), 8d and 9s (wild); not Kc nor 2d.
    p0 = ["Ac", "Ad", "Ah", "As", "3c", "3d"]
    p1 = ["5c", "7h", "8d", "9s", "Kc", "2d"]
    p2 = ["4c", "4d", "4s", "6c", "6d", "6s"]
    g = stacked_game([p0, p1, p2], starter="5h")
    assert state(g) == (1, "play", legal("5c", "7h", "8d", "9s"))
    before = g.snapshot()
    for illegal in (parse_card("Kc"), parse_card("2d"), DRAW, DECLARE, CALL_BASE):
        with pytest.raises(ValueError):
            g.apply(illegal)
    assert g.snapshot() == before


def test_r3_2_active_suit_is_the_called_suit_after_an_eight():
    # R3.2: 8h with clubs called: clubs and 8s/9s are playable, hearts no longer.
    g = stacked_game([["Kc", "Qc", "Jc"], ["8h", "Kd", "Qs"], ["Kh", "8s", "Ac"]], starter="3h")
    assert state(g) == (1, "play", legal("8h"))
    act(g, "8h")
    assert state(g) == (1, "call_suit", ALL_CALLS)
    act(g, "call c")
    s = g.snapshot()
    assert s["top"] == "8h" and s["active_suit"] == "c"
    assert state(g) == (2, "play", legal("Ac", "8s"))


def test_r3_2_active_suit_is_the_nines_own_suit_when_kept():
    # R3.2: 9h with hearts kept: hearts playable, diamonds not.
    g = stacked_game([["Kc", "Qc", "Jc"], ["9h", "Kd", "Qs"], ["Kh", "Qd", "Ac"]], starter="3h")
    act(g, "9h")
    assert state(g) == (1, "call_suit", calls("dh"))
    act(g, "call h")
    assert g.snapshot()["active_suit"] == "h"
    assert state(g) == (2, "play", legal("Kh"))


def test_r3_3_a_player_with_a_playable_card_must_play():
    # R3.3: without voluntary_draw, DRAW is illegal while a card is playable.
    g = stacked_game([P0, ["Kh", "4d", "Jc"], P2], starter="3h")
    assert state(g) == (1, "play", legal("Kh"))
    with pytest.raises(ValueError):
        act(g, "draw")


def test_r3_3_a_player_who_cannot_play_draws_one_and_the_turn_passes():
    # R3.3: nothing playable: draw one card; the drawn (playable) 5h is not played.
    p1 = ["Kc", "Qd", "Js"]
    g = stacked_game([["Ac", "Ad", "As"], p1, ["2c", "2d", "2s"]], starter="3h", stock=["5h"])
    assert state(g) == (1, "play", legal("draw"))
    act(g, "draw")
    assert_hands(g, [["Ac", "Ad", "As"], [*p1, "5h"], ["2c", "2d", "2s"]])
    s = g.snapshot()
    assert s["discard"] == ["3h"]
    assert s["stock"][0] == "3c"  # the rest of the deck in index order (Ac, 2c are dealt)
    assert state(g) == (2, "play", legal("draw"))


@pytest.mark.parametrize("voluntary", [False, True])
def test_r3_3_voluntary_draw_in_a_normal_turn(voluntary):
    # R3.3 option: with voluntary_draw a player may draw instead of playing; drawing ends
    # the turn.
    p1 = ["Kh", "4d", "Jc"]
    g = stacked_game([P0, p1, P2], starter="3h", stock=["2h"], voluntary_draw=voluntary)
    draw = ("draw",) if voluntary else ()
    assert state(g) == (1, "play", legal("Kh", *draw))
    if voluntary:
        act(g, "draw")
        assert_hands(g, [P0, [*p1, "2h"], P2])
        assert g.snapshot()["discard"] == ["3h"]
        assert state(g) == (2, "play", legal("draw"))


@pytest.mark.parametrize("voluntary", [False, True])
def test_r3_3_voluntary_draw_in_the_count(voluntary):
    # R3.3/R5.3 option: with voluntary_draw a player holding an ace may take the count.
    p1 = ["Ac", "Jd", "Js"]
    g = stacked_game([P0, p1, P2], starter="2h", stock=["5d", "6d"], voluntary_draw=voluntary)
    draw = ("draw",) if voluntary else ()
    assert state(g) == (1, "count", legal("Ac", *draw))
    if voluntary:
        act(g, "draw")
        assert_hands(g, [P0, [*p1, "5d", "6d"], P2])
        assert g.snapshot()["count"] == 0
        assert state(g) == (2, "play", legal("draw"))


@pytest.mark.parametrize("voluntary", [False, True])
def test_r3_3_voluntary_draw_in_a_sixs_extra_play(voluntary):
    # R3.3 option: the 6's extra play also allows DRAW; it ends the turn.
    p1 = ["6h", "Kh", "Qs", "Jc"]
    hands = [["Kc", "Qc", "Tc", "Ac"], p1, ["Kd", "Qd", "Td", "Ad"]]
    g = stacked_game(hands, starter="3h", stock=["2s"], voluntary_draw=voluntary)
    draw = ("draw",) if voluntary else ()
    assert state(g) == (1, "play", legal("6h", "Kh", *draw))
    act(g, "6h")
    assert state(g) == (1, "play", legal("Kh", *draw))
    assert g.snapshot()["extra_play"] is True
    if voluntary:
        act(g, "draw")
        assert_hands(g, [hands[0], ["Kh", "Qs", "Jc", "2s"], hands[2]])
        assert g.snapshot()["extra_play"] is False
        assert state(g) == (2, "play", legal("draw"))


@pytest.mark.parametrize("voluntary", [False, True])
def test_r3_3_voluntary_draw_in_a_kings_sequence(voluntary):
    # R3.3 option/R9.3: DRAW is offered in a king's sequence only with voluntary_draw.
    p0 = ["3c", "5c", "3h", "Qd", "Js"]
    hands = [p0, ["Ac", "Ad", "As", "4d", "4s"], ["Kd", "Qs", "Td", "Ts", "7d"]]
    g = stacked_game(hands, starter="Kh", stock=["2s"], face_cards=True, voluntary_draw=voluntary)
    draw = ("draw",) if voluntary else ()
    assert state(g) == (0, "play", legal("3h", *draw))
    if voluntary:
        act(g, "draw")
        assert g.snapshot()["king_cards_left"] == 0
        assert_hands(g, [[*p0, "2s"], hands[1], hands[2]])
        assert state(g) == (1, "play", legal("draw"))


def test_r3_4_eight_call_then_one_card_declaration_then_turn_passes():
    # R3.4: suit call first, then the declaration, then the turn passes.
    g = stacked_game([["Kc", "Qc"], ["8h", "Kd"], ["Ks", "Qd"]], starter="3h")
    assert state(g) == (1, "play", legal("8h"))
    act(g, "8h")
    assert state(g) == (1, "call_suit", ALL_CALLS)
    act(g, "call d")
    assert g.snapshot()["active_suit"] == "d"
    assert state(g) == (1, "declare", legal("declare", "silent"))
    act(g, "declare")
    assert g.snapshot()["one_card_penalty_pending"] == [False, False, False]
    assert state(g) == (2, "play", legal("Qd"))


def test_r3_4_a_last_card_eight_still_calls_its_suit_then_its_player_goes_out():
    # R3.4/R6.1: the suit call is always made, even for a last card; then the hand ends.
    g = stacked_game([["Kc"], ["8h"], ["5d"]], starter="3h")
    act(g, "8h")
    assert state(g) == (1, "call_suit", ALL_CALLS)
    act(g, "call s")
    s = g.snapshot()
    assert turn(g) == (None, "game_over")
    assert g.legal_actions() == ()
    assert s["went_out"] == [1]
    assert s["hand_points"] == [[10, 0, 30]]
    assert s["scores"] == [10, 0, 30]


def test_r3_4_six_declaration_then_extra_play_in_the_same_turn():
    # R3.4: a 6 leaving one card: declare, then the 6's function (the same player again),
    # then going out on the extra play ends the hand.
    g = stacked_game([["Kc", "Qc"], ["6h", "Kh"], ["Ks", "Qd"]], starter="3h")
    assert state(g) == (1, "play", legal("6h", "Kh"))
    act(g, "6h")
    assert state(g) == (1, "declare", legal("declare", "silent"))
    act(g, "declare")
    assert state(g) == (1, "play", legal("Kh"))
    act(g, "Kh")
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert s["hand_points"] == [[20, 0, 20]]


def test_r3_5_next_player_is_counted_after_a_tens_reversal():
    # R3.5: the T reverses first, then the next player is seat 0 (not seat 2).
    hands = [["Kh", "Kc", "Kd"], ["Th", "Qc", "Qd"], ["Js", "Jc", "Jd"], ["Qh", "As", "Ad"]]
    g = stacked_game(hands, starter="3h")
    assert state(g) == (1, "play", legal("Th"))
    act(g, "Th")
    assert g.snapshot()["direction"] == -1
    assert state(g) == (0, "play", legal("Kh"))
    act(g, "Kh")
    assert state(g) == (3, "play", legal("Qh"))
    act(g, "Qh")
    assert state(g) == (2, "play", legal("draw"))


def test_r3_6_a_draw_that_is_the_only_legal_action_is_still_a_decision():
    # R3.6: the player is asked even when DRAW is the only legal action.
    p1 = ["Kc", "Qd", "Js"]
    g = stacked_game([["Ac", "Ad", "As"], p1, ["2c", "2d", "2s"]], starter="3h", stock=["4h"])
    s = g.snapshot()
    assert turn(g) == (1, "play")
    assert g.legal_actions() == (52,)
    assert s["legal_actions"] == [52]
    assert_hands(g, [["Ac", "Ad", "As"], p1, ["2c", "2d", "2s"]])  # nothing drawn yet
    assert s["hand_decisions"] == 0
    act(g, "draw")
    assert g.snapshot()["hand_decisions"] == 1
    assert_hands(g, [["Ac", "Ad", "As"], [*p1, "4h"], ["2c", "2d", "2s"]])


def test_r3_6_draws_imposed_by_a_seven_are_automatic():
    # R3.6: the 7's draw is not a decision: seat 2 has already drawn when asked to play.
    g = four_players(["7h", "4c", "5c"], stock=["Kh"])
    act(g, "7h")
    assert g.snapshot()["hand_decisions"] == 1
    assert "Kh" in g.snapshot()["hands"][2]
    assert state(g) == (2, "play", legal("Kh"))


# ---------------------------------------------------------------- R4 card functions


def test_r4_ace_has_no_function_outside_the_count():
    # R4 A: no function in play; no count starts.
    g = four_players(["Ah", "4c", "5c"])
    assert state(g) == (1, "play", legal("Ah"))
    act(g, "Ah")
    assert g.snapshot()["count"] == 0
    assert state(g) == (2, "play", legal("draw"))


def test_r4_two_starts_the_count():
    # R4 2/R5.1: a 2 played starts the count at 2 for the next player.
    g = four_players(["2h", "4c", "5c"])
    act(g, "2h")
    assert g.snapshot()["count"] == 2
    assert state(g) == (2, "count", legal("draw"))


def test_r4_three_has_no_function_in_play():
    # R4 3: nothing happens; seat 2 plays on the 3d.
    g = four_players(["3d", "4c", "5c"])
    stock = g.snapshot()["stock"]
    act(g, "3d")
    s = g.snapshot()
    assert s["stock"] == stock and s["direction"] == 1 and s["count"] == 0
    assert state(g) == (2, "play", legal("Jd", "Qd", "Kd"))


def test_r4_four_skips_the_next_player():
    # R4 4: seat 2 is skipped; seat 3 plays.
    g = four_players(["4h", "4c", "5c"])
    assert state(g) == (1, "play", legal("4h"))
    act(g, "4h")
    assert state(g) == (3, "play", legal("draw"))
    assert_hands(g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd"], ["Ks", "Js", "Ts"]])


def test_r4_five_every_other_player_draws_one_in_turn_order():
    # R4 5: seats 2, 3, 0 draw Ah, Ad, As in that order; seat 2 then plays.
    g = four_players(["5h", "4c", "6c"], stock=["Ah", "Ad", "As"])
    act(g, "5h")
    assert_hands(
        g,
        [
            ["Kc", "Qc", "Jc", "As"],
            ["4c", "6c"],
            ["Kd", "Qd", "Jd", "Ah"],
            ["Ks", "Js", "Ts", "Ad"],
        ],
    )
    assert g.snapshot()["stock"][0] == "Ac"
    assert state(g) == (2, "play", legal("Ah"))


def test_r4_six_the_same_player_plays_again():
    # R4 6: the player of the 6 plays another (playable) card in the same turn.
    g = four_players(["6h", "Kh", "4c"])
    act(g, "6h")
    assert g.snapshot()["extra_play"] is True
    assert state(g) == (1, "play", legal("Kh"))
    act(g, "Kh")
    assert state(g) == (1, "declare", legal("declare", "silent"))  # 4c left: still the same turn
    act(g, "declare")
    assert g.snapshot()["extra_play"] is False
    assert state(g) == (2, "play", legal("Kd"))


def test_r4_six_without_a_playable_card_draws_one_and_the_turn_passes():
    # R4 6: the player cannot play on the 6: draws one card, the turn passes.
    g = four_players(["6h", "4c", "5c"], stock=["Ah"])
    act(g, "6h")
    assert state(g) == (1, "play", legal("draw"))
    act(g, "draw")
    assert_hands(g, {1: ["4c", "5c", "Ah"]})
    assert g.snapshot()["top"] == "6h"
    assert state(g) == (2, "play", legal("draw"))


def test_r4_seven_the_next_player_draws_one_then_plays_normally():
    # R4 7: seat 2 draws Kh, then takes its turn and may play the Kh.
    g = four_players(["7h", "4c", "5c"], stock=["Kh"])
    act(g, "7h")
    assert_hands(
        g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd", "Kh"], ["Ks", "Js", "Ts"]]
    )
    assert state(g) == (2, "play", legal("Kh"))
    act(g, "Kh")
    assert state(g) == (3, "play", legal("Ks"))


@pytest.mark.parametrize(
    ("suit", "seat2"),
    [
        ("c", legal("draw")),
        ("d", legal("Jd", "Qd", "Kd")),
        ("h", legal("draw")),
        ("s", legal("draw")),
    ],
)
def test_r4_eight_is_wild_and_its_player_calls_any_suit(suit, seat2):
    # R4 8: playable on 3h; any of the four suits may be called, its own (c) included.
    g = four_players(["8c", "4c", "5c"])
    assert state(g) == (1, "play", legal("8c"))
    act(g, "8c")
    assert state(g) == (1, "call_suit", ALL_CALLS)
    act(g, f"call {suit}")
    assert g.snapshot()["active_suit"] == suit
    assert state(g) == (2, "play", seat2)


@pytest.mark.parametrize(
    ("nine", "suits"), [("9c", "cs"), ("9d", "dh"), ("9h", "dh"), ("9s", "cs")]
)
def test_r4_nine_is_wild_and_keeps_its_suit_or_takes_the_same_colour(nine, suits):
    # R4 9/R1.1: red d h, black c s: a 9 offers exactly its suit and its colour partner.
    for chosen in suits:
        g = four_players([nine, "4c", "5c"])
        assert state(g) == (1, "play", legal(nine))
        act(g, nine)
        assert state(g) == (1, "call_suit", calls(suits))
        for other in set(SUITS) - set(suits):
            with pytest.raises(ValueError):
                act(g, f"call {other}")
        act(g, f"call {chosen}")
        assert g.snapshot()["active_suit"] == chosen
        assert g.current_player == 2


def test_r4_ten_reverses_with_two_players_the_turn_still_passes():
    # R4 T: with two players the reversed turn passes to the other player.
    g = stacked_game([["Kc", "Qc", "Jc"], ["Th", "4c", "5c"]], starter="3h")
    act(g, "Th")
    assert g.snapshot()["direction"] == -1
    assert state(g) == (0, "play", legal("draw"))
    act(g, "draw")  # seat 0 draws Ac, the first card of the rest of the deck
    assert_hands(g, [["Ac", "Kc", "Qc", "Jc"], ["4c", "5c"]])
    assert state(g) == (1, "play", legal("draw"))


@pytest.mark.parametrize(
    ("card", "starter"), [("Jh", "3h"), ("Qh", "3h"), ("Kh", "3h"), ("Qs", "3s")]
)
def test_r4_jack_queen_king_have_no_function_without_face_cards(card, starter):
    # R4 J Q K: without face_cards they do nothing (not even the Qs).
    g = stacked_game(
        [["Kc", "Qc", "Jc"], [card, "4c", "5c"], ["Kd", "Qd", "Jd"], ["Ad", "2d", "3d"]],
        starter=starter,
    )
    stock = g.snapshot()["stock"]
    act(g, card)
    s = g.snapshot()
    assert s["stock"] == stock and s["direction"] == 1 and s["king_cards_left"] == 0
    assert_hands(g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd"], ["Ad", "2d", "3d"]])
    assert state(g) == (2, "play", legal(card[0] + "d"))  # only the same rank is playable


def test_r4_1_sixes_in_a_row_chain_extra_plays():
    # R4.1: 6h, 6d, 6c each give another play; the last card Kc then goes out.
    p0 = ["Kd", "Qd", "Jd", "Td"]
    p2 = ["Ks", "Qs", "Js", "Ts"]
    g = stacked_game([p0, ["6h", "6d", "6c", "Kc"], p2], starter="3h")
    assert state(g) == (1, "play", legal("6h"))
    act(g, "6h")
    assert state(g) == (1, "play", legal("6c", "6d"))
    act(g, "6d")
    assert state(g) == (1, "play", legal("6c"))
    act(g, "6c")
    assert state(g) == (1, "declare", legal("declare", "silent"))
    act(g, "declare")
    assert state(g) == (1, "play", legal("Kc"))
    act(g, "Kc")
    s = g.snapshot()
    assert s["phase"] == "game_over" and s["went_out"] == [1]
    assert s["hand_points"] == [[55, 0, 55]]  # K Q J = 30, T = 25
    assert s["scores"] == [55, 0, 55]


def test_r4_1_a_six_as_last_card_draws_instead_of_going_out():
    # R4.1/R6.1/R3.6: after a last-card 6 the extra play is a DRAW decision; no going out.
    g = stacked_game([["Kc"], ["6h"]], starter="3h", stock=["Qd"])
    act(g, "6h")
    assert_hands(g, {1: []})
    assert state(g) == (1, "play", legal("draw"))
    act(g, "draw")
    s = g.snapshot()
    assert s["went_out"] == [] and s["hand_points"] == []
    assert_hands(g, [["Kc"], ["Qd"]])
    assert state(g) == (0, "play", legal("draw"))


def test_r4_2_with_two_players_a_four_gives_its_player_a_new_turn():
    # R4.2: the 4 skips the opponent; the same player takes a new turn.
    g = stacked_game([["Kc", "Qc", "Jc"], ["4h", "Kh", "5c"]], starter="3h")
    assert state(g) == (1, "play", legal("4h", "Kh"))
    act(g, "4h")
    assert state(g) == (1, "play", legal("Kh"))
    assert g.snapshot()["extra_play"] is False
    assert_hands(g, [["Kc", "Qc", "Jc"], ["Kh", "5c"]])


def test_r4_2_a_last_card_four_with_two_players_goes_out():
    # R4.2/R6.1: the 4 is fully resolved and its player holds nothing: the hand ends.
    g = stacked_game([["Kc"], ["4h"]], starter="3h")
    act(g, "4h")
    s = g.snapshot()
    assert s["phase"] == "game_over" and s["went_out"] == [1]
    assert s["hand_points"] == [[10, 0]]


def test_r4_3_seven_hits_next_by_default():
    # R4.3: default "next": seat 2 draws.
    g = stacked_game(
        [["Kc", "Qc", "Jc"], ["7h", "4c", "5c"], ["Kd", "Qd", "Jd"]], starter="3h", stock=["Ah"]
    )
    assert Rules().seven_hits == "next"
    act(g, "7h")
    assert_hands(g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd", "Ah"]])
    assert state(g) == (2, "play", legal("Ah"))


def test_r4_3_seven_hits_next_but_one():
    # R4.3: "next_but_one" at four players: seat 3 draws; seat 2 plays without drawing.
    g = four_players(["7h", "4c", "5c"], stock=("Ah",), seven_hits="next_but_one")
    act(g, "7h")
    assert_hands(
        g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd"], ["Ks", "Js", "Ts", "Ah"]]
    )
    assert state(g) == (2, "play", legal("draw"))


def test_r4_3_next_but_one_with_three_players_hits_the_next_player():
    # R4.3: with only three players next_but_one hits the next player (seat 2), who then
    # plays the drawn Ah; seat 0 draws nothing.
    g = stacked_game(
        [["Kc", "Qc", "Jc"], ["7h", "4c", "5c"], ["Kd", "Qd", "Jd"]],
        starter="3h",
        stock=["Ah"],
        seven_hits="next_but_one",
    )
    act(g, "7h")
    assert_hands(g, [["Kc", "Qc", "Jc"], ["4c", "5c"], ["Kd", "Qd", "Jd", "Ah"]])
    assert state(g) == (2, "play", legal("Ah"))


def test_r4_3_next_but_one_with_two_players_hits_the_next_player():
    # R4.3: with two players next_but_one hits the opponent, never the 7's own player.
    g = stacked_game(
        [["Kc", "Qc", "Jc"], ["7h", "4c", "5c"]],
        starter="3h",
        stock=["Ah"],
        seven_hits="next_but_one",
    )
    act(g, "7h")
    assert_hands(g, [["Kc", "Qc", "Jc", "Ah"], ["4c", "5c"]])
    assert state(g) == (0, "play", legal("Ah"))


def test_r4_3_next_but_one_last_card_seven_with_two_players_goes_out():
    # R4.3/R6.1: a 7 never hits its own player: the opponent draws Qd, then the hand ends.
    g = stacked_game([["Kc"], ["7h"]], starter="3h", stock=["Qd"], seven_hits="next_but_one")
    act(g, "7h")
    s = g.snapshot()
    assert s["phase"] == "game_over" and s["went_out"] == [1]
    assert_hands(g, [["Kc", "Qd"], []])
    assert s["hand_points"] == [[20, 0]]


def test_r4_3_last_card_seven_default_hits_the_opponent_and_goes_out():
    # R4.3/R6.1: with "next" the opponent draws Qd, then the hand ends.
    g = stacked_game([["Kc"], ["7h"]], starter="3h", stock=["Qd"])
    act(g, "7h")
    s = g.snapshot()
    assert s["phase"] == "game_over" and s["went_out"] == [1]
    assert_hands(g, [["Kc", "Qd"], []])
    assert s["hand_points"] == [[20, 0]]


# ---------------------------------------------------------------- R5 the count


def test_r5_1_a_two_played_or_turned_up_starts_the_count_at_two():
    # R5.1: played (seat 1's 2h) and turned up (starter 2d) both start the count at 2.
    g = stacked_game([P0, ["2h", "4d", "9s"], P2], starter="3h")
    act(g, "2h")
    assert g.snapshot()["count"] == 2
    assert state(g) == (2, "count", legal("draw"))
    g = stacked_game([P0, ["2h", "4d", "9s"], P2], starter="2d")
    assert g.snapshot()["count"] == 2
    assert state(g) == (1, "count", legal("2h"))


def test_r5_2_in_the_count_only_aces_and_twos_are_playable():
    # R5.2: on the count, Ac, As, 2d are playable; 8h, 9c and the heart Kh are not.
    p0 = ["Kc", "Qc", "Jc", "Tc", "4d", "3d"]
    p1 = ["Ac", "2d", "8h", "9c", "Kh", "As"]
    p2 = ["Kd", "Qd", "Jd", "Td", "4s", "3s"]
    g = stacked_game([p0, p1, p2], starter="2h")
    assert state(g) == (1, "count", legal("Ac", "As", "2d"))
    for illegal in ("8h", "9c", "Kh"):
        with pytest.raises(ValueError):
            act(g, illegal)
    act(g, "2d")
    assert g.snapshot()["count"] == 4
    assert state(g) == (2, "count", legal("draw"))


def test_r5_3_no_ace_or_two_draws_the_count_and_play_resumes_after():
    # R5.3: seat 1 draws 2, the count ends; seat 2 plays normally on the 2h (no new count
    # from it); seat 2's own 2c then starts a fresh count.
    p0 = ["Kc", "Qc", "Jc"]
    p1 = ["Kd", "Qs", "4c"]
    p2 = ["Kh", "2c", "9s"]
    g = stacked_game([p0, p1, p2], starter="2h", stock=["5d", "6d"])
    assert state(g) == (1, "count", legal("draw"))
    act(g, "draw")
    s = g.snapshot()
    assert s["count"] == 0 and s["top"] == "2h" and s["active_suit"] == "h"
    assert_hands(g, [p0, [*p1, "5d", "6d"], p2])
    assert s["stock"][0] == "Ac"
    assert state(g) == (2, "play", legal("2c", "Kh", "9s"))
    act(g, "2c")
    assert g.snapshot()["count"] == 2
    assert state(g) == (0, "count", legal("draw"))


def test_r5_3_count_ending_on_an_ace_resumes_on_the_ace():
    # R5.3: after Ac (count 3), seat 2 draws 3; seat 0 plays on the Ac (clubs).
    p0 = ["Kc", "Qd", "Jd"]
    p2 = ["Kh", "Qh", "Jh"]
    g = stacked_game([p0, ["Ac", "Kd", "Qs"], p2], starter="2h", stock=["5d", "6d", "7d"])
    act(g, "Ac")
    assert g.snapshot()["count"] == 3
    assert state(g) == (2, "count", legal("draw"))
    act(g, "draw")
    assert_hands(g, [p0, ["Kd", "Qs"], [*p2, "5d", "6d", "7d"]])
    s = g.snapshot()
    assert s["count"] == 0 and s["top"] == "Ac" and s["active_suit"] == "c"
    assert state(g) == (0, "play", legal("Kc"))


def test_r5_3_the_count_follows_the_direction_and_resumes_after_the_taker():
    # R5.3/R3.5: after a T (direction -1) seat 0's 2h passes the count to seat 2, who takes
    # it; play resumes with seat 1, the next seat to the right.
    p0 = ["2h", "Kc", "Qc"]
    p1 = ["Th", "Kd", "Qd"]
    p2 = ["Ks", "Qs", "Js"]
    g = stacked_game([p0, p1, p2], starter="3h", stock=["5d", "6d"])
    act(g, "Th")
    assert state(g) == (0, "play", legal("2h"))
    act(g, "2h")
    assert g.snapshot()["count"] == 2
    assert state(g) == (2, "count", legal("draw"))
    act(g, "draw")
    assert_hands(g, [["Kc", "Qc"], ["Kd", "Qd"], [*p2, "5d", "6d"]])
    s = g.snapshot()
    assert s["count"] == 0 and s["direction"] == -1
    assert state(g) == (1, "play", legal("draw"))


def test_r5_4_aces_and_twos_in_the_count_only_add_to_it():
    # R5.4: 2 + A + 2 + A = 6; direction and turn order unchanged; seat 1 draws six.
    p0 = ["As", "Jh", "Th"]
    p1 = ["Ac", "Kd", "Qs"]
    p2 = ["2d", "Kc", "Ks"]
    stock = ["3c", "4c", "5c", "6c", "7c", "8c"]
    g = stacked_game([p0, p1, p2], starter="2h", stock=stock)
    expected = [(1, "Ac", 3), (2, "2d", 5), (0, "As", 6)]
    for seat, card, count in expected:
        assert turn(g) == (seat, "count")
        act(g, card)
        s = g.snapshot()
        assert s["count"] == count and s["direction"] == 1 and s["top"] == card
    assert state(g) == (1, "count", legal("draw"))
    act(g, "draw")
    assert_hands(g, [["Jh", "Th"], ["Kd", "Qs", *stock], ["Kc", "Ks"]])
    s = g.snapshot()
    assert s["count"] == 0 and s["top"] == "As" and s["active_suit"] == "s"
    assert state(g) == (2, "play", legal("Ks"))


# ---------------------------------------------------------------- Rules options (validation)


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("num_decks", 3, ["None", "1", "2"]),
        ("num_decks", 0, ["None", "1", "2"]),
        ("num_decks", True, ["None", "1", "2"]),
        ("hand_sizes", (), []),
        ("hand_sizes", (0,), []),
        ("hand_sizes", (8, -1), []),
        ("hand_sizes", "8", []),
        ("hand_sizes", (1.5,), []),
        ("seven_hits", "x", ["next", "next_but_one"]),
        ("seven_hits", None, ["next", "next_but_one"]),
        ("one_card", "loud", ["declare", "auto", "off"]),
        ("idiot_penalty", "x", ["forfeit", "draw_one"]),
        ("three_points", "3", []),
        ("three_points", 1.5, []),
        ("hand_decision_limit", 0, []),
        ("hand_decision_limit", "5", []),
    ],
)
def test_r_options_invalid_value_names_the_field_and_allowed_values(field, value, allowed):
    # R-options: a bad value raises ValueError naming the field and what is allowed.
    with pytest.raises(ValueError) as info:
        Rules(**{field: value})
    message = str(info.value)
    assert field in message
    for a in allowed:
        assert a in message


# The on/off options, from Rules' annotations (a new one is tested at once).
BOOL_FIELDS = [name for name, kind in options.field_types(Rules).items() if kind is bool]


@pytest.mark.parametrize("field", BOOL_FIELDS)
def test_r_options_boolean_fields_reject_non_booleans(field):
    # R-options: the on/off options take True or False only.
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match=field):
            Rules(**{field: bad})
    assert getattr(Rules(**{field: True}), field) is True


def test_r_options_defaults_frozen_and_short_game():
    # R-options: docs/rules.md defaults; the dataclass is frozen; short_game is 8..1.
    r = Rules()
    assert r.num_decks is None and r.hand_sizes == STANDARD
    assert r.seven_hits == "next" and r.one_card == "declare"
    assert r.idiot_penalty == "forfeit" and r.three_points == 3
    assert r.hand_decision_limit == 5000
    assert not any(getattr(r, f) for f in BOOL_FIELDS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seven_hits = "next_but_one"  # type: ignore[misc]
    assert Rules.short_game().hand_sizes == (8, 7, 6, 5, 4, 3, 2, 1)
    assert Rules(seven_hits="next_but_one") == Rules(seven_hits="next_but_one")
    assert hash(Rules()) == hash(Rules())
    with pytest.raises(TypeError):
        Rules(no_such_option=True)  # type: ignore[call-arg]
