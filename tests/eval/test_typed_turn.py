"""A play typed in parts (:class:`eval.typed_turn.TypedTurn`): a part is accepted iff the
moves so far begin a legal play of :func:`engine.notation.legal_plays`."""
from __future__ import annotations

import numpy as np
import pytest

from engine.dice import Roll
from engine.notation import IllegalPlayError, legal_plays
from engine.position import Position
from eval.typed_turn import TypedTurn

START = {6: 5, 8: 3, 13: 5, 24: 2}


def random_turns(seed: int, count: int) -> list[tuple[Position, Roll]]:
    """Positions of random games, each with a random roll (the mover's view)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        pos = Position.start()
        for _ in range(int(rng.integers(0, 90))):
            roll = Roll.of(*map(int, rng.integers(1, 7, 2)))
            plays = legal_plays(pos, roll)
            play = plays[int(rng.integers(len(plays)))]
            if play.result.is_game_over():
                break
            pos = play.next_position
        out.append((pos, Roll.of(*map(int, rng.integers(1, 7, 2)))))
    return out


def test_every_legal_play_typed_whole_or_move_by_move_completes_to_that_play():
    for pos, roll in random_turns(seed=4, count=40):
        start = TypedTurn.start(pos, roll)
        for play in start.legal:
            if not play.moves:
                continue
            assert start.add(play.text).complete == play
            turn = start
            for move in play.moves:
                assert play in turn.continuations()
                turn = turn.add(str(move))
            assert turn.complete == play


def test_a_typed_prefix_continues_only_into_legal_plays_that_begin_with_it():
    for pos, roll in random_turns(seed=5, count=40):
        start = TypedTurn.start(pos, roll)
        plays = start.legal
        if not plays[0].moves:
            continue
        for play in plays:
            turn = start.add(str(play.moves[0]))
            assert play in turn.continuations()
            assert set(p.result for p in turn.continuations()) <= set(p.result for p in plays)


def test_the_moves_of_a_play_may_be_typed_in_any_order_the_rules_allow():
    turn = TypedTurn.start(Position.from_points(START, START), Roll(3, 1))
    assert turn.add("6/5").add("8/5").complete == turn.add("8/5 6/5").complete
    # one checker's two dice, by either intermediate point
    assert turn.add("24/23").add("23/20").complete == turn.add("24/21").add("21/20").complete


def test_a_checker_on_the_bar_must_enter_before_another_checker_moves():
    turn = TypedTurn.start(Position.from_points({25: 1, 13: 5, 8: 3, 6: 5, 24: 1}, START), Roll(6, 5))
    with pytest.raises(IllegalPlayError, match="13/7: the checker on the bar must enter first"):
        turn.add("13/7")
    assert turn.add("bar/20").add("13/7").complete is not None


def test_bearing_off_the_last_checker_with_one_die_ends_the_play():
    turn = TypedTurn.start(Position.from_points({2: 1}, {13: 15}), Roll(3, 1))
    assert turn.add("2/off").complete is not None
    assert turn.add("2/1").add("1/off").complete == turn.add("2/off").complete


def test_a_blocked_point_is_named_once_in_the_refusal():
    turn = TypedTurn.start(Position.from_points({25: 1, 13: 5, 8: 3, 6: 5, 24: 1}, {6: 2, 13: 13}), Roll(6, 5))
    with pytest.raises(IllegalPlayError) as refused:
        turn.add("bar/19")
    assert str(refused.value) == "bar/19: point 19 is blocked"


def test_typed_turn_refuses_a_part_after_which_the_other_die_cannot_be_played():
    # 12/11 leaves the 6 unplayable, but other plays use both dice
    pos = Position.from_points({1: 6, 2: 3, 3: 3, 6: 2, 12: 1}, {2: 6, 7: 1, 9: 1, 15: 2, 20: 4, 21: 1})
    turn = TypedTurn.start(pos, Roll(6, 1))
    with pytest.raises(IllegalPlayError, match=r"then the 6 cannot be played, and a play must use as many dice"):
        turn.add("12/11")
    assert turn.add("12/6").remaining == (1,)


def test_typed_turn_refuses_the_smaller_die_when_only_the_larger_one_may_be_played():
    pos = Position.from_points({1: 3, 2: 3, 18: 1}, {1: 4, 2: 6, 3: 3, 17: 2})
    turn = TypedTurn.start(pos, Roll(6, 4))
    with pytest.raises(IllegalPlayError, match=r"only one die can be played, and then the larger \(6\) must be played"):
        turn.add("18/14")
    assert turn.add("18/12").complete is not None


def test_a_turn_replayed_from_saved_parts_is_the_turn_typed():
    turn = TypedTurn.start(Position.from_points(START, START), Roll(4, 4)).add("24/20").add("13/5")
    again = TypedTurn.replay(turn.position, turn.roll, turn.parts)
    assert again.parts == turn.parts and again.remaining == (4,)
    with pytest.raises(IllegalPlayError):
        TypedTurn.replay(turn.position, turn.roll, [[(24, 21, 4)]])
