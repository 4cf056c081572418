"""Every worked example of RULES.md (points in White's numbering; Black moves 1 -> 24)."""
from engine.dice import Roll
from engine.notation import parse_play
from tests.rules_helpers import P


def black(points_in_white_numbering):
    """Black's checkers given in White's numbering, converted to Black's own."""
    return {25 - p if p != 25 else 25: n for p, n in points_in_white_numbering.items()}


def test_example_1_opening_31_then_black_65_runs_a_back_checker():
    start = P({5: 0, 6: 5, 8: 3, 13: 5, 24: 2}, black({1: 2, 12: 5, 17: 3, 19: 5}))
    assert start.pips() == (167, 167)
    after = parse_play(start, Roll(3, 1), "8/5 6/5").result
    assert after == P({5: 2, 6: 4, 8: 2, 13: 5, 24: 2}, black({1: 2, 12: 5, 17: 3, 19: 5}))
    assert after.pips() == (163, 167)
    black_to_play = after.flip()
    black_after = parse_play(black_to_play, Roll(6, 5), "24/13").result
    assert black_after.flip() == P({5: 2, 6: 4, 8: 2, 13: 5, 24: 2}, black({1: 1, 12: 6, 17: 3, 19: 5}))
    assert black_after.pips()[0] == 156


def test_example_2_hit_then_black_enters_from_the_bar():
    pos = P({5: 1, 6: 4, 8: 3, 13: 5, 24: 2}, black({1: 2, 10: 1, 12: 5, 17: 3, 19: 4}))
    assert pos.pips() == (166, 176)
    after = parse_play(pos, Roll(3, 1), "13/10* 6/5").result
    assert after == P({5: 2, 6: 3, 8: 3, 10: 1, 13: 4, 24: 2}, black({25: 1, 1: 2, 12: 5, 17: 3, 19: 4}))
    assert after.pips() == (162, 186)
    black_after = parse_play(after.flip(), Roll(6, 2), "bar/23 13/7").result
    assert black_after.flip() == P(
        {5: 2, 6: 3, 8: 3, 10: 1, 13: 4, 24: 2}, black({1: 2, 2: 1, 12: 4, 17: 3, 18: 1, 19: 4}))
    assert black_after.pips()[0] == 178


def test_example_3_bearing_off_with_65():
    pos = P({1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2}, black({19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2}))
    assert pos.off == 6 and pos.pips() == (36, 57)
    after = parse_play(pos, Roll(6, 5), "6/off 5/off").result
    assert after == P({1: 1, 2: 1, 3: 1, 4: 2, 5: 1, 6: 1}, black({19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2}))
    assert after.off == 8 and after.pips()[0] == 25


def test_example_4_six_must_bear_off_four_may_bear_off_or_move_inside():
    pos = P({1: 2, 2: 2, 3: 2, 4: 3, 5: 3, 6: 3}, black({20: 5}))
    from tests.rules_helpers import plays

    got = plays(pos, "64")
    assert got == {"6/off 4/off", "6/off 5/1", "6/2 6/off"}
    # the six always bears a checker off the 6-point
    assert all("6/off" in p for p in got)
