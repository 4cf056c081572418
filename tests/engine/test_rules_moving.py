"""RULES.md "Moving": blocked points, intermediate stops, compulsory play, larger die, doubles.

Opponent checkers are given in his own numbering (his point p is our 25 - p); checkers
not placed are borne off.
"""
from engine.dice import Roll
from engine.notation import legal_plays
from tests.rules_helpers import P, plays, results


def test_a_point_with_two_opposing_checkers_is_blocked():
    pos = P({24: 1, 6: 14}, {7: 2})  # our 18 blocked
    assert not any(p.startswith("24/18") for p in plays(pos, "61"))


def test_blocked_intermediate_stops_forbid_the_combined_move():
    pos = P({24: 1, 13: 1, 6: 13}, {7: 2, 6: 2})  # our 18 and 19 blocked
    assert not any(p.startswith("24/13") for p in plays(pos, "65"))
    assert "24/13" in plays(P({24: 1, 13: 1, 6: 13}, {6: 2}), "65")  # via 18


def test_passing_over_a_blocked_point_is_allowed():
    assert "24/18 6/5" in plays(P({24: 1, 6: 14}, {4: 2}), "61")  # our 21 blocked, passed


def test_passing_over_a_blot_does_not_hit_it():
    pos = P({24: 1, 6: 14}, {5: 1})  # his blot on our 20; 6-2 stops on 18 or 22
    assert all(r.board[0] == 0 for r in results(pos, "62"))


def test_an_intermediate_stop_on_a_blot_hits_it():
    pos = P({24: 1, 6: 14}, {7: 1})  # his blot on our 18
    got = plays(pos, "65")
    assert "24/18*/13" in got and "24/19/13" in got


def test_both_dice_must_be_played_when_possible():
    assert all(len(p.moves) == 2 for p in legal_plays(P({13: 2, 6: 13}), Roll(6, 5)))


def test_a_die_that_leaves_the_other_unplayable_is_illegal_when_both_can_be_played():
    pos = P({10: 1}, {21: 2, 20: 2})  # our 4 and 5 blocked: 10/4 is blocked, 10/9/3 plays both
    assert plays(pos, "61") == {"10/3"}


def test_when_only_one_die_can_be_played_the_larger_must_be():
    pos = P({20: 1}, {14: 2})  # our 11 blocked: 20/14 or 20/17 alone, never both
    assert plays(pos, "63") == {"20/14"}


def test_when_only_the_smaller_die_can_be_played_it_is_played():
    pos = P({12: 1, 1: 14}, {22: 2, 16: 2})  # our 3 and 9 blocked: 12/9 blocked, 12/6 then 6/3 blocked
    assert plays(pos, "63") == {"12/6"}
    pos2 = P({12: 1, 1: 14}, {19: 2, 16: 2})  # our 6 and 9 blocked: only the 3 (12/9) ... blocked too
    assert plays(pos2, "63") == {""}


def test_doubles_are_played_four_times():
    assert "13/9(4)" in plays(P({13: 4, 6: 11}), "44")


def test_four_dice_partly_playable():
    pos = P({24: 1, 6: 14}, {7: 1, 13: 2})  # blot on our 18, our 12 blocked
    assert plays(pos, "66") == {"24/18*"}
    assert plays(P({24: 1}, {13: 2}), "33") == {"24/15"}


def test_no_legal_move_gives_the_unchanged_position():
    pos = P({14: 1, 1: 14}, {17: 2, 16: 2})  # our 8 and 9 blocked
    assert results(pos, "65") == {pos}
    assert plays(pos, "65") == {""}
