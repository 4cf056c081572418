"""RULES.md "Bearing off": all home first, exact die, higher die, full value, hits, re-entry."""
from tests.rules_helpers import P, plays


def test_no_bearing_off_while_a_checker_is_outside():
    assert not any("off" in p for p in plays(P({8: 1, 6: 14}), "21"))


def test_bearing_off_with_the_later_die_once_the_last_checker_comes_home():
    assert "8/off" in plays(P({8: 1, 6: 14}), "62")  # 8/2/off or 8/6 6/off: one result


def test_a_higher_die_bears_off_from_the_highest_point_and_the_other_moves_inside():
    assert plays(P({5: 2, 3: 1}), "64") == {"5/1 5/off"}


def test_bearing_off_with_gaps():
    assert plays(P({6: 1, 2: 1}), "53") == {"6/off", "6/1 2/off"}


def test_a_die_is_played_at_full_value_inside_when_a_higher_point_is_occupied():
    # the 4 cannot bear off from the 3-point while the 6-point is occupied
    assert plays(P({6: 1, 3: 1}), "41") == {"6/2 3/2", "6/1"}
    # with 4-4 the first 4 moves 6/2, then the 3 and the 2 bear off
    assert plays(P({6: 1, 3: 1}), "44") == {"6/off 3/off"}


def test_hitting_during_bear_off():
    assert any("6/5*" in p for p in plays(P({6: 2, 4: 2, 2: 2}, {20: 1}), "11"))


def test_a_hit_checker_must_come_home_before_bearing_off_resumes():
    assert not any("off" in p for p in plays(P({25: 1, 6: 2, 5: 2}), "65"))
