"""Standard notation: formatting like GNU Backgammon, parsing only legal plays, typed errors."""
import numpy as np
import pytest

from engine.dice import Roll
from engine.notation import (
    AmbiguousPlayError,
    CheckerMove,
    IllegalPlayError,
    NotationError,
    Play,
    format_moves,
    format_play,
    legal_plays,
    parse_play,
    play_from_steps,
)
from engine.position import Position

START = Position.start()


def P(mine, theirs):
    return Position.from_points(mine, theirs)


def texts(position, roll):
    return {p.text for p in legal_plays(position, Roll.parse(roll))}


def test_opening_31_has_the_16_plays_gnubg_lists():
    assert texts(START, "31") == {
        "24/23 24/21", "24/20", "24/21 8/7", "24/21 6/5", "24/23 13/10", "13/9", "13/10 8/7",
        "13/10 6/5", "24/23 8/5", "8/7 8/5", "8/5 6/5", "8/4", "24/23 6/3", "8/7 6/3", "6/5 6/3", "6/2",
    }


def test_one_checker_using_both_dice_is_written_as_one_move():
    assert format_play(START, [(24, 18), (18, 13)]) == "24/13"


def test_repeated_moves_are_counted():
    assert format_play(START, [(8, 4), (8, 4), (6, 2), (6, 2)]) == "8/4(2) 6/2(2)"
    assert format_play(START, [(13, 7), (13, 7), (24, 18), (24, 18)]) == "24/18(2) 13/7(2)"


def test_hit_is_always_marked_also_on_an_intermediate_stop():
    p = P({24: 2, 13: 5, 8: 3, 6: 5}, {7: 1, 6: 4, 8: 3, 13: 5, 24: 2})  # his blot on our 18
    assert format_play(p, [(24, 18), (18, 13)]) == "24/18*/13"
    assert format_play(p, [(24, 18)]) == "24/18*"


def test_bar_and_off_are_named():
    assert format_moves([CheckerMove(25, 23)]) == "bar/23"
    assert format_moves([CheckerMove(6, 0), CheckerMove(6, 0)]) == "6/off(2)"


def test_moves_are_sorted_from_the_back():
    assert format_play(START, [(6, 5), (8, 5)]) == "8/5 6/5"


def test_parse_accepts_the_formatted_text_of_every_legal_play():
    for roll in ("31", "66", "52", "44"):
        for play in legal_plays(START, Roll.parse(roll)):
            assert parse_play(START, Roll.parse(roll), play.text) == play


def test_parse_accepts_combined_move_and_explicit_chain():
    r = Roll(6, 5)
    assert parse_play(START, r, "24/13").text == "24/13"
    assert parse_play(START, r, "24/18/13").text == "24/13"
    assert parse_play(START, r, "24/18 18/13").text == "24/13"


def test_parse_accepts_bar_as_25_and_off_as_0():
    p = P({25: 1, 6: 5, 8: 3, 13: 5, 24: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert parse_play(p, Roll(3, 1), "25/22 6/5").text == "bar/22 6/5"
    assert parse_play(p, Roll(3, 1), "BAR/22 6/5").text == "bar/22 6/5"
    home = P({6: 2, 5: 2}, {24: 2})
    assert parse_play(home, Roll(6, 5), "6/0 5/0").text == "6/off 5/off"


def test_star_is_optional_on_input():
    p = P({24: 2, 13: 5, 8: 3, 6: 5}, {15: 1, 6: 5, 8: 3, 13: 4, 24: 2})  # his blot on our 10
    assert parse_play(p, Roll(3, 1), "13/10 6/5").text == "13/10* 6/5"
    assert parse_play(p, Roll(3, 1), "13/10* 6/5").text == "13/10* 6/5"


def test_star_where_nothing_is_hit_is_illegal():
    with pytest.raises(IllegalPlayError, match="no blot"):
        parse_play(START, Roll(3, 1), "8/5* 6/5")


def test_text_with_two_different_results_is_ambiguous_and_lists_them():
    # his blot on our 18, our 19 open: 24/13 can hit on the way or not
    p = P({24: 2, 13: 5, 8: 3, 6: 5}, {7: 1, 5: 4, 8: 3, 13: 5, 24: 2})
    with pytest.raises(AmbiguousPlayError) as err:
        parse_play(p, Roll(6, 5), "24/13")
    assert {c.text for c in err.value.candidates} == {"24/18*/13", "24/19/13"}
    assert "24/18*/13" in str(err.value) and "24/19/13" in str(err.value)
    assert parse_play(p, Roll(6, 5), "24/18*/13").text == "24/18*/13"
    assert parse_play(p, Roll(6, 5), "24/19/13").text == "24/19/13"
    assert {q.text for q in legal_plays(p, Roll(6, 5))} >= {"24/18*/13", "24/19/13"}


@pytest.mark.parametrize("bad", ["hello", "8-5", "8/9", "8/5/6", "off/3", "6/off/2", "8/5(9)", "30/25", "13/10**"])
def test_bad_syntax_is_a_notation_error(bad):
    with pytest.raises(NotationError):
        parse_play(START, Roll(3, 1), bad)


def test_typed_errors_are_value_errors():
    for cls in (NotationError, IllegalPlayError, AmbiguousPlayError):
        assert issubclass(cls, ValueError)


def test_illegal_play_says_why_dice_do_not_fit():
    with pytest.raises(IllegalPlayError, match="does not fit"):
        parse_play(START, Roll(3, 1), "13/7")


def test_illegal_play_says_both_dice_must_be_played():
    with pytest.raises(IllegalPlayError, match="both dice"):
        parse_play(START, Roll(3, 1), "8/5")


def test_illegal_play_says_bar_must_enter_first():
    p = P({25: 1, 6: 5, 8: 3, 13: 5, 24: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    with pytest.raises(IllegalPlayError, match="bar"):
        parse_play(p, Roll(6, 2), "13/7 13/11")


def test_illegal_play_says_bear_off_needs_all_checkers_home():
    with pytest.raises(IllegalPlayError, match="home board"):
        parse_play(P({8: 1, 6: 14}, {12: 2}), Roll(6, 5), "6/off 6/1")


def test_illegal_play_onto_a_blocked_point():
    with pytest.raises(IllegalPlayError, match="blocked"):
        parse_play(START, Roll(6, 5), "13/7 24/19")


def test_moving_a_checker_that_is_not_there_is_illegal():
    with pytest.raises(IllegalPlayError, match="no checker"):
        parse_play(START, Roll(3, 1), "7/4 4/3")


def test_empty_text_is_the_play_of_an_unplayable_roll_only():
    closed = P({25: 1, 6: 5, 8: 3, 13: 6}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 24: 3})
    play = parse_play(closed, Roll(6, 6), "")
    assert play.moves == () and play.result == closed and play.text == ""
    with pytest.raises(IllegalPlayError):
        parse_play(START, Roll(3, 1), "")
    with pytest.raises(IllegalPlayError, match="cannot be played"):
        parse_play(closed, Roll(6, 6), "bar/19")


def test_play_exposes_protocol_steps_and_next_position():
    play = parse_play(START, Roll(3, 1), "8/5 6/5")
    assert play.steps() == [[8, 5], [6, 5]]
    assert play.next_position == Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {5: 2, 6: 4, 8: 2, 13: 5, 24: 2})
    assert str(play) == "8/5 6/5" and isinstance(play, Play)


def test_play_from_steps_accepts_either_order_of_a_combined_move():
    a = play_from_steps(START, Roll(3, 1), [[24, 21], [21, 20]])
    b = play_from_steps(START, Roll(3, 1), [[24, 23], [23, 20]])
    assert a == b and a.text == "24/20"
    with pytest.raises(IllegalPlayError):
        play_from_steps(START, Roll(3, 1), [[24, 21]])


def test_legal_plays_have_one_play_per_distinct_result():
    plays = legal_plays(START, Roll(4, 4))
    assert len({p.result for p in plays}) == len(plays)


def test_two_unchained_moves_are_written_as_the_general_writer_writes_them():
    from engine.movegen import legal_results_with_steps
    from engine.notation import _format, _format_chains, _replay
    from engine.randpos import random_game_positions

    rng = np.random.default_rng(17)
    seen = 0
    for b in random_game_positions(rng, 300):
        for d1 in range(1, 7):
            for d2 in range(1, d1):
                res, steps, ns = legal_results_with_steps(b, d1, d2)
                for k in range(len(res)):
                    moves = _replay(list(b), [tuple(x) for x in steps[k][: ns[k]].tolist()])
                    seen += len(moves) == 2
                    assert _format(moves, list(b)) == _format_chains(moves, list(b))
    assert seen > 10_000
