"""``tabla play``: the cube (doubles, takes, drops, beavers, the Jacoby rule), match play
(the Crawford game) and resignations, in scripted sessions (:mod:`play_helpers`)."""
from __future__ import annotations

import re

import pytest

from engine.game import GameOptions
from eval.play_common import PlayConfig
from play_helpers import CONFIRM, MOVE, NEXT, PROMPTS, TAKE, YOU, engine_state, human_state, loaded, play_hinted
from play_helpers import quit_session, send, spawn, until


# --------------------------------------------------------------------------- cube
def test_player_doubles_and_tabla_takes_then_owns_the_cube():
    child = spawn("--seed", "3")
    until(child, YOU)
    child.sendline("double")
    i = child.expect(PROMPTS)
    assert "tabla takes: the cube is at 2, on tabla's side." in child.before
    if PROMPTS[i] == MOVE:
        play_hinted(child)
        child.expect(CONFIRM)
        child.sendline("")
    until(child, YOU)
    assert "O: tabla  [cube 2]" in child.before
    assert "You cannot double: tabla owns the cube." in send(child, "double", YOU)
    quit_session(child)


def test_player_doubles_in_a_won_race_and_tabla_drops(tmp_path):
    state = human_state({1: 2, 2: 2, 3: 2}, {6: 3, 5: 3, 4: 3, 8: 2, 10: 2})
    child = loaded(tmp_path, state, YOU)
    assert "Cube decision: double" in send(child, "hint", YOU)
    shown = send(child, "double", NEXT)
    assert "tabla drops: you win 1 point." in shown
    assert "You win 1 point: tabla dropped the double." in shown
    assert re.search(r"1 decision \(0 plays, 1 cube, 0 take/drop\), 0 errors", quit_session(child))


@pytest.mark.parametrize("answer", ["take", "drop"])
def test_tabla_offers_a_double_which_the_player_takes_or_drops(tmp_path, answer):
    state = engine_state({1: 3, 2: 3, 3: 2, 4: 2}, {6: 3, 5: 3, 4: 3, 8: 2, 10: 1})
    child = loaded(tmp_path, state, TAKE, seed="2")
    assert "tabla doubles to 2." in child.before
    assert "tabla's view: you should drop" in send(child, "hint", TAKE)
    if answer == "drop":
        assert "tabla wins 1 point: you dropped the double." in send(child, answer, NEXT)
        assert "0 errors" in quit_session(child)
    else:
        assert "You take: the cube is at 2, on your side." in send(child, answer, PROMPTS)
        # taking a dead-lost race is the player's error, judged against dropping
        assert re.search(r"1 error.*\n.*tabla doubled to 2: you chose take, tabla prefers drop", quit_session(child))


def test_with_beavers_tabla_beavers_a_bad_double_and_the_player_takes_the_beaver(tmp_path):
    # a bear-off race the human trails by 9 pips: doubling is wrong, tabla beavers
    state = human_state({6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2},
                        options=GameOptions(beavers=True))
    config = PlayConfig(beavers=True)
    child = loaded(tmp_path, state, YOU, seed="2", config=config)
    child.sendline("double")
    child.expect("take or drop the beaver> ")
    assert "tabla beavers: the cube goes to 4 and stays on tabla's side." in child.before
    shown = send(child, "take", MOVE)
    assert "You take the beaver: the cube is at 4." in shown
    assert "O: tabla  [cube 4]" in shown
    assert re.search(r"cube at 1: you chose double, tabla prefers no double", quit_session(child))


def test_with_beavers_the_player_may_beaver_tablas_double(tmp_path):
    state = engine_state({1: 3, 2: 3, 3: 2, 4: 2}, {6: 3, 5: 3, 4: 3, 8: 2, 10: 1},
                         options=GameOptions(beavers=True))
    child = loaded(tmp_path, state, TAKE, seed="2", config=PlayConfig(beavers=True))
    assert child.after == "take, drop or beaver> "
    shown = send(child, "beaver", PROMPTS)
    assert "You beaver: the cube goes to 4 and stays on your side." in shown
    assert "tabla takes the beaver." in shown
    quit_session(child)


@pytest.mark.parametrize("why, extra, config", [
    ("beavers are off (start tabla play with --beavers to allow them)", {}, PlayConfig()),
    ("beavers are for money games only", {"match_length": 7}, PlayConfig(match_length=7)),
])
def test_beaver_is_refused_with_the_reason_when_beavers_are_not_allowed(tmp_path, why, extra, config):
    state = engine_state({1: 3, 2: 3, 3: 2, 4: 2}, {6: 3, 5: 3, 4: 3, 8: 2, 10: 1}, **extra)
    child = loaded(tmp_path, state, TAKE, seed="2", config=config)
    assert child.after == "take or drop> "
    assert f"You cannot beaver: {why}. Answer take or drop." in send(child, "beaver", TAKE)
    assert "You take" in send(child, "take", PROMPTS)
    quit_session(child)


def test_jacoby_rule_counts_an_unturned_cube_gammon_as_single(tmp_path):
    state = human_state({1: 1}, {13: 5, 14: 5, 15: 5}, options=GameOptions(jacoby=True))
    # 1/off is the only play: a forced play
    child = loaded(tmp_path, state, CONFIRM, seed="2", config=PlayConfig(jacoby=True), dice=(6, 5))
    assert "your only legal play is 1/off (forced)" in child.before
    child.sendline("")
    child.expect(NEXT)
    assert ("You win 1 point: you bore off all 15 checkers; a gammon (tabla has borne off no checker), "
            "counted single by the Jacoby rule (the cube was not turned).") in child.before
    quit_session(child)


# --------------------------------------------------------------------------- match play
def test_crawford_game_has_no_cube_and_the_cube_returns_after_it(tmp_path):
    config = PlayConfig(match_length=2)
    state = human_state({1: 2, 2: 2, 3: 2}, {6: 3, 5: 3, 4: 3, 8: 2, 10: 2}, match_length=2)
    child = loaded(tmp_path, state, YOU, seed="4", config=config)
    assert "2-point match" in child.before
    assert "Score: you 1, tabla 0 (2-point match)." in send(child, "double", NEXT)
    child.sendline("")
    until(child, YOU)
    assert "Game 2 of the 2-point match, score: you 1, tabla 0 (Crawford game: no doubling)" in child.before
    assert "Crawford game (no cube)" in child.before
    assert "You cannot double: no doubling in the Crawford game." in send(child, "double", YOU)
    shown = send(child, "resign", NEXT)
    assert "tabla wins 1 point: you resigned a single game." in shown
    assert "Score: you 1, tabla 1 (2-point match)." in shown
    child.sendline("")
    until(child, YOU)
    assert "2-point match" in child.before and "Crawford" not in child.before
    assert "You double to 2." in send(child, "double", PROMPTS)
    quit_session(child)


def test_resignation_is_accepted_or_refused_by_tablas_equity(tmp_path):
    # the human has all 15 checkers far from home, Tabla has 3 left: a gammon is certain
    state = human_state({13: 5, 14: 5, 15: 5}, {1: 3})
    child = loaded(tmp_path, state, YOU)
    assert "tabla refuses and plays on" in send(child, "resign single", YOU)
    shown = send(child, "resign gammon", NEXT)
    assert "tabla accepts" in shown
    assert "tabla wins 2 points: you resigned a gammon." in shown
    quit_session(child)


