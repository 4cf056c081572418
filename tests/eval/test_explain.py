"""Plays explained in words: the facts measured on hand-made positions."""
from engine.dice import Roll
from engine.notation import parse_play
from engine.position import Position
from eval.explain import back_checkers, describe, longest_prime, play_facts, shots


def _facts(pos: Position, dice: str, text: str):
    play = parse_play(pos, Roll.parse(dice), text)
    return play_facts(pos, play.result, play.steps())


def test_making_the_five_point_from_the_start_leaves_no_blot():
    f = _facts(Position.start(), "31", "8/5 6/5")
    assert f.made == (5,) and f.broken == () and f.blots == () and f.shots == 0
    assert describe(f) == "makes the 5-point; leaves no blot"


def test_a_lone_blot_in_front_of_one_checker_is_hit_by_the_rolls_that_reach_it():
    # Given: my blot on my 10-point; one opposing checker on my 4-point (his 21), nothing else in contact
    pos = Position.from_points({10: 1, 1: 14}, {21: 1, 1: 14})
    # When / Then: 6s hit directly (11 rolls) plus 5-1, 4-2, 3-3, 2-2 (2 + 2 + 1 + 1) indirectly
    assert shots(pos.board) == (17, 11)


def test_only_checkers_behind_a_blot_can_hit_it():
    # his checker on my 1-point (his 24) is one pip behind my blot on 2: every 1 hits, nothing else
    assert shots(Position.from_points({2: 1, 6: 14}, {24: 1, 6: 14}).board) == (11, 11)
    # his checker on my 2-point (his 23) is past my blot on 1: no shot
    assert shots(Position.from_points({1: 1, 6: 14}, {23: 1, 6: 14}).board) == (0, 0)


def test_a_hit_is_counted_with_the_point_where_it_happened():
    pos = Position.from_points({13: 5, 8: 3, 6: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 1, 15: 1})  # his blot on my 10
    f = _facts(pos, "31", "13/10* 6/5")
    assert f.hits == 1 and f.hit_points == (10,)
    assert describe(f).startswith("hits a checker on the 10-point")


def test_running_a_back_checker_out_counts_as_an_escape():
    f = _facts(Position.start(), "65", "24/13")
    assert f.back_checkers_before == 2 and f.back_checkers_after == 1 and f.escaped == 1
    assert "escapes a checker from the back" in describe(f)


def test_prime_length_is_the_longest_run_of_held_points():
    pos = Position.from_points({4: 2, 5: 2, 6: 2, 7: 2, 9: 2, 13: 5}, {24: 2, 13: 13})
    assert longest_prime(pos.board) == 4
    assert back_checkers(pos.board) == 0


def test_a_race_is_described_by_the_pip_lead():
    pos = Position.from_points({1: 5, 2: 5, 3: 5}, {6: 5, 5: 5, 4: 5})
    f = _facts(pos, "21", "3/1 2/1")
    assert f.race and f.pips == (27, 75) and f.pip_lead == 48
    assert describe(f) == "race: leads by 48 pips"


def test_moving_one_back_checker_within_his_home_board_is_a_split_with_its_shots():
    f = _facts(Position.start(), "32", "24/21 13/11")
    assert f.broken == (24,) and f.blots == (24, 21, 11) and f.escaped == 0
    assert describe(f).startswith("splits the back checkers to the 21-point; leaves 3 blots, hit by ")
