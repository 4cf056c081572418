"""RULES.md "Bar": enter first, single dice only, dancing, 5-point and closed boards."""
from engine.dice import ALL_ROLLS
from tests.rules_helpers import P, plays

FIVE_POINT_BOARD = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}  # his 1-5 = our 24-20
CLOSED_BOARD = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}


def test_a_checker_on_the_bar_enters_before_anything_else_moves():
    assert all(p.startswith("bar/") for p in plays(P({25: 1, 13: 14}), "65"))


def test_a_die_of_n_enters_on_the_25_minus_n_point():
    assert plays(P({25: 1}), "21") == {"bar/22"}
    got = plays(P({25: 1, 8: 1}), "21")
    assert "bar/24 8/6" in got and "bar/23 8/7" in got


def test_entering_never_uses_the_sum_of_the_dice():
    pos = P({25: 1, 8: 14}, {5: 2, 6: 2})  # our 20 and 19 blocked
    assert plays(pos, "65") == {""}


def test_with_two_on_the_bar_only_entering_moves_are_played():
    pos = P({25: 2, 8: 13}, {6: 2})  # our 19 blocked: the 6 cannot enter
    assert plays(pos, "65") == {"bar/20"}


def test_entering_against_a_five_point_board_needs_a_six():
    pos = P({25: 1, 6: 14}, FIVE_POINT_BOARD)
    assert plays(pos, "54") == {""}
    assert plays(pos, "61") == {"bar/18", "bar/19 6/5"}


def test_a_closed_board_makes_every_roll_dance():
    pos = P({25: 1, 6: 14}, CLOSED_BOARD)
    for roll in ALL_ROLLS:
        assert plays(pos, str(roll)) == {""}


def test_entering_on_a_blot_hits_it():
    assert any("bar/22*" in p for p in plays(P({25: 1, 6: 14}, {3: 1}), "31"))
