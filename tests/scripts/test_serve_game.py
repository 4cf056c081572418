"""The board page's requests (``/position``, ``/turn``, ``/game``): the rules come from the
engine (read_query, TypedTurn, GameState), the dice from the seeded roll stream."""
from __future__ import annotations

import pytest

from engine.dice import Roll
from engine.game import GameError
from engine.ids import MatchInfo, match_id, position_from_id
from engine.notation import IllegalPlayError, legal_plays
from engine.position import Position
from engine.request import QueryError
from eval.typed_turn import TypedTurn
from scripts.serve_game import game_from_wire, game_step, position_view, turn_view

START = "4HPwATDgc/ABMA"


def play_out(turn: TypedTurn, choose=lambda nexts: nexts[0]) -> TypedTurn:
    """Type a whole play by always taking one of the next steps."""
    while turn.complete is None:
        f, t, d = choose(turn.next_steps())
        turn = TypedTurn.replay(turn.position, turn.roll, [list(p) for p in turn.parts] + [[(f, t, d)]])
    return turn


# --------------------------------------------------------------------------- next steps
def test_next_steps_of_the_opening_3_1_are_every_legal_first_checker_move():
    nexts = TypedTurn.start(Position.start(), Roll(3, 1)).next_steps()
    assert set(nexts) == {(24, 21, 3), (13, 10, 3), (8, 5, 3), (6, 3, 3), (24, 23, 1), (8, 7, 1), (6, 5, 1)}


def test_next_steps_leave_out_a_legal_die_move_after_which_the_other_die_cannot_be_played():
    # 6-1: 24/18 is blocked, so both dice are played only by 24/23/17; 2/1 is a legal move
    # of the 1, but after it the 6 cannot be played
    pos = Position.from_points({24: 1, 2: 1, 1: 13}, {7: 2, 6: 13})
    turn = TypedTurn.start(pos, Roll(6, 1))
    assert turn.next_steps() == ((24, 23, 1),)
    with pytest.raises(IllegalPlayError):
        TypedTurn.replay(pos, Roll(6, 1), [[(2, 1, 1)]])


def test_every_path_of_next_steps_ends_in_a_legal_play_and_reaches_them_all():
    pos, roll = Position.start(), Roll(2, 2)
    results = set()

    def walk(turn: TypedTurn) -> None:
        if turn.complete is not None:
            results.add(turn.complete.result.board)
            return
        for step in turn.next_steps():
            walk(TypedTurn.replay(pos, roll, [list(p) for p in turn.parts] + [[step]]))

    walk(TypedTurn.start(pos, roll))
    assert results == {p.result.board for p in legal_plays(pos, roll)}


def test_a_roll_that_cannot_be_played_is_complete_at_once():
    pos = Position.from_points({25: 1, 6: 14}, {q: 2 for q in range(1, 7)})
    turn = TypedTurn.start(pos, Roll(6, 6))
    assert turn.next_steps() == () and turn.complete is not None and turn.complete.moves == ()


# --------------------------------------------------------------------------- /position and /turn
def test_position_view_draws_the_start_from_a_position_id_with_match_fields():
    mid = match_id(MatchInfo(cube_value=2, cube_owner=1, match_length=9, score=(2, 4)))
    v = position_view({"position_id": START, "match_id": mid})
    assert v["board"] == list(Position.start().board) and v["pips"] == [167, 167] and v["off"] == [0, 0]
    assert v["match_length"] == 9 and v["score"] == [2, 4] and v["cube_value"] == 2 and v["cube_owner"] == "opponent"


def test_turn_view_gives_the_board_after_each_step_and_the_play_once_complete():
    v = turn_view({"position_id": START, "dice": [3, 1], "steps": [[8, 5, 3]]})
    assert v["boards"][0][8] == 2 and v["boards"][0][5] == 1 and v["complete"] is None
    assert [6, 5, 1] in v["next"] and v["remaining"] == [1]
    done = turn_view({"position_id": START, "dice": [3, 1], "steps": [[8, 5, 3], [6, 5, 1]]})
    assert done["complete"] == {"play": "8/5 6/5", "steps": [[8, 5], [6, 5]], "position_id": "sGfwATDgc/ABMA"}
    assert done["next"] == []


@pytest.mark.parametrize("steps", [[[8, 4, 3]], [[8, 5, 3], [8, 5, 3]], [[24, 18, 6]], "8/5", [[8, 5]]])
def test_turn_view_refuses_steps_that_do_not_begin_a_legal_play(steps):
    with pytest.raises((IllegalPlayError, QueryError)):
        turn_view({"position_id": START, "dice": [3, 1], "steps": steps})


# --------------------------------------------------------------------------- /game
def new(seed: int = 7, **kw) -> dict:
    return game_step({"action": "new", "seed": seed, **kw})


def test_a_new_game_opens_with_two_different_dice_and_the_higher_die_plays_first():
    for seed in range(6):
        g = new(seed)["game"]
        hi, lo = g["dice"]
        assert hi > lo and g["phase"] == "roll" and g["opening"] and g["turn"] in (0, 1)
        assert g["position_id"] == START and g == new(seed)["game"]  # the same seed, the same dice


def test_a_game_step_plays_a_legal_play_and_passes_the_roll():
    r = new()
    g = r["game"]
    roll = Roll.of(*g["dice"])
    best = legal_plays(position_from_id(g["position_id"]), roll)[0]
    steps = [[m.from_point, m.to_point] for m in best.moves]
    after = game_step({"action": "play", "game": g, "steps": steps})
    assert after["game"]["turn"] == 1 - g["turn"] and after["game"]["dice"] is None
    assert after["played"] == best.text and len(after["frames"]) == len(steps)
    assert after["view"]["board"] == after["frames"][-1]  # the last frame is the board drawn
    with pytest.raises(IllegalPlayError):
        game_step({"action": "play", "game": g, "steps": [[24, 10]]})


def test_the_cube_goes_to_the_taker_and_a_drop_ends_the_game_for_the_cube_value():
    g = new()["game"]
    with pytest.raises(GameError, match="opening"):
        game_step({"action": "double", "game": {**g, "dice": None}})
    g = {**g, "dice": None, "opening": False}
    assert new()["view"]["can_double"] is False
    doubled = game_step({"action": "double", "game": g})["game"]
    assert doubled["phase"] == "doubled"
    taken = game_step({"action": "take", "game": doubled})
    assert taken["game"]["cube_value"] == 2 and taken["game"]["cube_owner"] == 1 - g["turn"]
    assert taken["view"]["query"]["cube_owner"] == "opponent" and taken["view"]["can_double"] is False
    dropped = game_step({"action": "drop", "game": doubled})
    assert dropped["game"]["phase"] == "over" and dropped["game"]["winner"] == g["turn"]
    assert dropped["game"]["points"] == 1 and dropped["view"]["final_score"][g["turn"]] == 1
    nxt = game_step({"action": "next", "game": dropped["game"]})["game"]
    assert nxt["game"] == 1 and nxt["score"] == dropped["view"]["final_score"] and nxt["cube_value"] == 1


def test_rolls_come_from_the_seeded_stream_one_per_turn():
    g = {**new(11)["game"], "dice": None, "opening": False}
    a = game_step({"action": "roll", "game": g})["game"]
    assert a["rolls"] == 2 and a == game_step({"action": "roll", "game": g})["game"]
    with pytest.raises(GameError, match="once per turn"):
        game_step({"action": "roll", "game": a})


@pytest.mark.parametrize("change", [
    {"position_id": "zzz"}, {"phase": "doubling"}, {"turn": 2}, {"cube_value": 3}, {"score": [1]},
    {"seed": -1}, {"cube_owner": True}, {"phase": "over"}, {"match_length": 99},
])
def test_a_game_object_that_is_not_one_is_refused_in_one_line(change):
    g = {**new()["game"], **change}
    with pytest.raises(ValueError) as exc:
        game_from_wire(g)
    assert "\n" not in str(exc.value)


def test_a_match_game_tells_the_player_on_roll_his_score_and_the_match_id():
    r = new(3, match_length=5)
    q = r["view"]["query"]
    assert q["match_length"] == 5 and q["score"] == [0, 0] and len(r["view"]["match_id"]) == 12
    with pytest.raises(GameError):
        game_step({"action": "fly", "game": r["game"]})
