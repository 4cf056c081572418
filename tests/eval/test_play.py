"""``tabla play``: scripted terminal sessions (pexpect) against the heuristic evaluator.

Each session runs the real command (``python -m scripts.tabla play --model heuristic
--ply 1``, :mod:`play_helpers`) on a pseudo-terminal with fixed seeds. Special positions
(a closed board, a play typed in parts) are set up through the command's own save files
and ``--load``. The cube, resignations and match play are in :mod:`test_play_cube`.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pexpect
import pytest

from engine.dice import Roll
from engine.notation import IllegalPlayError
from engine.position import Position
from eval.board_text import read_board
from eval.mat import parse_mat
from eval.play_common import PlayConfig
from eval.save_file import SaveFileError, read_snapshot, snapshot
from eval.typed_turn import TypedTurn
from play_helpers import ARGS, CONFIRM, EXPORT, MOVE, NEXT, PROMPTS, QUIT, ROOT, START, TAKE, YOU, at_move
from play_helpers import finish, human_state, loaded, play_hinted, quit_session, send, spawn, until


# --------------------------------------------------------------------------- whole game
def test_a_whole_money_game_typed_by_a_script_ends_with_a_result_summary_and_mat_export(tmp_path):
    child = spawn("--seed", "7")
    until(child, NEXT)
    transcript = child.before
    assert re.search(r"(You win|tabla wins) \d+ points?: (you|tabla) bore off all 15 checkers", transcript)
    assert "Money so far: you" in transcript
    shown = send(child, "quit", EXPORT)
    assert "Your decisions as tabla judged them" in shown
    assert re.search(r"\d+ decisions \(\d+ plays", shown)
    mat = tmp_path / "session.mat"
    assert "1 game exported" in send(child, f"export {mat}", EXPORT)
    child.sendline("")
    assert finish(child) == 0
    parsed = parse_mat(mat.read_text())
    assert parsed.match_length == 0 and len(parsed.games) == 1
    assert any(a.kind == "wins" for a in parsed.games[0].actions)


def test_same_seed_gives_the_same_dice_and_game():
    def opening(seed: str) -> str:
        child = spawn("--seed", seed)
        child.expect([YOU, MOVE])
        text = re.search(r"Opening roll: .*", child.before).group(0)
        quit_session(child)
        return text

    assert opening("11") == opening("11")


def test_pip_eval_and_home_left_board_at_the_first_turn():
    child = spawn("--seed", "11", "--home", "left")
    child.expect([YOU, MOVE])
    assert "+---+-1--2--3--4--5--6-------7--8--9-10-11-12-+" in child.before
    mine, theirs = read_board(child.before).pips()
    child.sendline("pip")
    child.expect([YOU, MOVE])
    assert f"Pip count: you {mine}, tabla {theirs} (" in child.before
    child.sendline("eval")
    child.expect([YOU, MOVE])
    assert re.search(r"Your chances \(tabla's evaluation, ply 0, before the roll\): win \d+\.\d%", child.before)
    child.sendline("help")
    child.expect([YOU, MOVE])
    assert "save FILE / load FILE" in child.before
    quit_session(child)


# --------------------------------------------------------------------------- checker play
def test_illegal_and_malformed_plays_are_refused_with_the_reason_and_the_game_goes_on():
    child = spawn("--seed", "5")
    until(child, MOVE)
    assert "Illegal play: cannot read 'garbage'" in send(child, "garbage", MOVE)
    assert "Illegal play: 24/1" in send(child, "24/1", MOVE)
    child.sendline("legal")
    child.expect(MOVE)
    listed = re.search(r"Legal plays \((\d+)\): (.*)", child.before)
    assert listed and int(listed.group(1)) == len(listed.group(2).split(", "))
    play_hinted(child)
    child.expect(CONFIRM)
    child.sendline("")
    i = child.expect(PROMPTS)
    assert PROMPTS[i] in (YOU, TAKE, NEXT)
    quit_session(child)


def test_undo_takes_back_the_typed_play_until_it_is_confirmed():
    child = spawn("--seed", "5")
    until(child, MOVE)
    before = read_board(child.before)
    played = play_hinted(child)
    child.expect(CONFIRM)
    pending = read_board(child.before)
    assert pending != before
    assert f"You play {played}" in child.before
    shown = send(child, "undo", MOVE)
    assert "Play taken back." in shown
    assert read_board(shown) == before
    child.sendline(played)
    child.expect(CONFIRM)
    child.sendline("")
    child.expect(PROMPTS)
    # the confirmed play is on the record: the board now shows at least the pending result
    assert "Play taken back." not in child.before
    quit_session(child)


def test_an_unplayable_roll_is_announced_and_the_turn_passes(tmp_path):
    # the human has a checker on the bar against Tabla's closed board and rolled 6-6
    state = human_state({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    child = loaded(tmp_path, state, PROMPTS, dice=(6, 6))
    assert "You roll 6-6 and cannot move." in child.before
    assert "tabla rolls" in child.before
    quit_session(child)


# --------------------------------------------------------------------------- plays typed in parts
@pytest.mark.parametrize("lines, left", [(["8/5 6/5"], ""), (["8/5", "6/5"], "the 1"), (["6/5", "8/5"], "the 3")])
def test_a_play_typed_whole_or_in_parts_reaches_the_same_confirmation(tmp_path, lines, left):
    child = at_move(tmp_path, START, START, (3, 1))
    for line in lines[:-1]:
        shown = send(child, line)
        assert f"You have played {line}; still to play: {left}." in shown
    shown = send(child, lines[-1], CONFIRM)
    assert "You play 8/5 6/5. Press Enter to confirm, or type undo." in shown
    assert read_board(shown) == Position.from_points({6: 4, 5: 2, 8: 2, 13: 5, 24: 2}, START)
    assert "tabla rolls" in send(child, "", PROMPTS)
    quit_session(child)


def test_each_part_is_drawn_on_the_board_with_the_dice_still_to_play(tmp_path):
    child = at_move(tmp_path, START, START, (3, 1))
    shown = send(child, "8/5")
    assert read_board(shown) == Position.from_points({6: 5, 5: 1, 8: 2, 13: 5, 24: 2}, START)
    assert "Typed: 8/5; to play: the 1" in shown
    quit_session(child)


def test_undo_takes_back_the_typed_parts_one_at_a_time_down_to_the_start_of_the_turn(tmp_path):
    child = at_move(tmp_path, START, START, (4, 4))
    send(child, "24/20")
    send(child, "13/9")
    shown = send(child, "undo")
    assert "Took back 13/9. You have played 24/20; still to play: three 4s." in shown
    assert read_board(shown) == Position.from_points({6: 5, 8: 3, 13: 5, 20: 1, 24: 1}, START)
    shown = send(child, "undo")
    assert "Took back 24/20: back to the start of your turn." in shown
    assert read_board(shown) == Position.from_points(START, START)
    assert "Nothing to undo" in send(child, "undo")
    # at confirm> undo takes back the last part only, then the one before it
    send(child, "24/20")
    send(child, "24/20")
    assert "You play 24/20(2) 13/9(2)." in send(child, "13/9(2)", CONFIRM)
    shown = send(child, "undo")
    assert "Took back 13/9(2). You have played 24/20(2); still to play: two 4s." in shown
    assert read_board(shown) == Position.from_points({6: 5, 8: 3, 13: 5, 20: 2}, START)
    assert "Took back 24/20. You have played 24/20; still to play: three 4s." in send(child, "undo")
    quit_session(child)


@pytest.mark.parametrize("mine, dice, first, refused, reason", [
    (START, (3, 1), "8/5", "13/9",
     "after 8/5 the 1 must still be played, but no legal play starts with 8/5 13/9 (13/9 does not fit the 1)"),
    ({25: 2, 13: 5, 8: 3, 6: 5}, (4, 4), "bar/21", "13/9",
     "after bar/21 three 4s must still be played, but no legal play starts with bar/21 13/9 "
     "(the checker on the bar must enter first)"),
])
def test_a_part_that_cannot_begin_a_legal_play_is_refused_with_the_reason(tmp_path, mine, dice, first, refused, reason):
    child = at_move(tmp_path, mine, START, dice)
    before = read_board(send(child, first))
    shown = send(child, refused)
    assert f"Illegal play: {reason}. Type legal to list the legal plays." in shown
    assert "legal plays include" not in shown
    assert read_board(send(child, "board")) == before  # the refused part changed nothing
    quit_session(child)


def test_a_forced_play_is_announced_and_played_when_the_player_confirms(tmp_path):
    # two checkers on the bar, 6-5, only 19 and 20 open: both must enter
    theirs = {24: 2, 13: 5, 8: 3, 3: 5}
    child = loaded(tmp_path, human_state({25: 2, 13: 5, 8: 3, 6: 5}, theirs), CONFIRM, dice=(6, 5))
    assert "You roll 6-5: your only legal play is bar/20 bar/19 (forced). Press Enter to play it." in child.before
    assert read_board(child.before) == Position.from_points({20: 1, 19: 1, 13: 5, 8: 3, 6: 5}, theirs)
    assert "The play is forced: press Enter to play it." in send(child, "undo", CONFIRM)
    assert "tabla rolls" in send(child, "", PROMPTS)
    quit_session(child)


def test_hint_legal_pip_and_save_load_work_with_a_partial_play_typed(tmp_path):
    child = at_move(tmp_path, START, START, (3, 1))
    send(child, "8/5")
    assert re.search(r"Best play starting with your 8/5: 8/\d", send(child, "hint"))
    listed = re.search(r"Legal plays starting with 8/5 \((\d)\): (.*)", send(child, "legal"))
    assert listed and sorted(listed.group(2).strip().split(", ")) == sorted(["24/23 8/5", "8/7 8/5", "8/5 6/5", "8/4"])
    assert "Pip count after 8/5: you 164, tabla 167 (you lead by 3)." in send(child, "pip")
    path = tmp_path / "mid.json"
    assert f"Game saved to {path} (with your moves typed so far, 8/5)." in send(child, f"save {path}")
    assert json.loads(path.read_text())["partial"] == [[[8, 5, 3]]]
    send(child, "undo")
    shown = send(child, f"load {path}")
    assert "You have played 8/5; still to play: the 1." in shown
    assert read_board(shown) == Position.from_points({6: 5, 5: 1, 8: 2, 13: 5, 24: 2}, START)
    assert "Took back 8/5: back to the start of your turn." in send(child, "undo")
    quit_session(child)


def test_a_saved_partial_play_that_is_not_legal_is_refused_on_load():
    state = human_state(START, START)
    data = snapshot(state, PlayConfig(), dice=(3, 1), partial=[[(8, 5, 3)]])
    assert read_snapshot(data, PlayConfig()).partial == (((8, 5, 3),),)
    data["partial"] = [[[8, 5, 1]]]  # a 3-pip move with the 1
    with pytest.raises(SaveFileError, match="the saved partial play is not legal"):
        read_snapshot(data, PlayConfig())
    with pytest.raises(IllegalPlayError):
        TypedTurn.replay(state.position, Roll(3, 1), [[(13, 9, 3)]])


# --------------------------------------------------------------------------- the session's manners
def test_undo_at_the_roll_prompt_says_why_the_last_play_can_no_longer_be_taken_back():
    child = spawn("--seed", "1")  # tabla wins the opening roll
    child.expect(YOU)
    assert "Nothing to undo: you have not played yet in this game." in send(child, "undo", YOU)
    child.sendline("")
    child.expect(MOVE)
    played = play_hinted(child)
    child.expect(CONFIRM)
    child.sendline("")
    until(child, YOU)
    roll = re.findall(r"tabla rolls (\d-\d)", child.before)[-1]
    shown = send(child, "undo", YOU)
    assert (f"Too late to undo {played}: tabla has rolled {roll} since, and a play counts once it is "
            f"confirmed; type undo at the confirm prompt to take a play back before it counts.") in shown
    assert "Unknown command" not in shown
    quit_session(child)


def test_an_illegal_play_names_its_reason_once(tmp_path):
    child = at_move(tmp_path, {25: 1, 24: 1, 13: 5, 8: 3, 6: 5}, START, (6, 5))
    shown = send(child, "bar/19")
    assert "Illegal play: bar/19: point 19 is blocked. Type legal to list the legal plays." in shown
    assert shown.count("bar/19") == 1
    quit_session(child)


def test_quit_in_mid_game_asks_first_and_offers_to_save_the_game(tmp_path):
    child = at_move(tmp_path, START, START, (3, 1))
    send(child, "8/5")
    shown = send(child, "quit", QUIT)
    assert ("The game is not over: type save FILE to save it and quit, quit again to quit without saving, "
            "or press Enter to play on.") in shown
    assert "The game goes on." in send(child, "", MOVE)
    path = tmp_path / "left.json"
    send(child, "quit", QUIT)
    child.sendline(f"save {path}")
    assert finish(child) == 0
    assert f"Game saved to {path} (with your moves typed so far, 8/5)." in child.before
    again = spawn("--load", str(path))
    again.expect(MOVE)
    assert "You have played 8/5; still to play: the 1." in again.before
    quit_session(again)


def test_the_board_shows_the_match_id_beside_the_position_id(tmp_path):
    from engine.ids import match_info_from_id, position_from_id  # noqa: PLC0415

    child = at_move(tmp_path, START, {6: 5, 8: 3, 13: 5, 23: 2}, (3, 1))
    ids = re.search(r"Position ID (\S{14})  Match ID (\S{12})", child.before)
    assert ids, child.before
    assert position_from_id(ids.group(1)) == Position.from_points(START, {6: 5, 8: 3, 13: 5, 23: 2})
    info = match_info_from_id(ids.group(2))
    assert (info.dice, info.player_on_roll, info.match_length, info.cube_value) == ((3, 1), 0, 0, 1)
    quit_session(child)


def test_the_board_and_the_text_show_the_same_money_balance(tmp_path):
    child = loaded(tmp_path, human_state({13: 5, 14: 5, 15: 5}, {1: 3}), YOU)
    assert "Money so far: you -2 after 1 game." in send(child, "resign gammon", NEXT)
    child.sendline("")
    child.expect([YOU, MOVE])
    assert re.findall(r"money ([+-]\d+)", child.before) == ["+2", "-2"]  # tabla (top), you (bottom)
    quit_session(child)


@pytest.mark.parametrize("how", ["--auto-confirm", "set autoconfirm on"])
def test_auto_confirm_plays_a_complete_play_without_asking(tmp_path, how):
    child = at_move(tmp_path, START, START, (3, 1), *([how] if how.startswith("--") else []))
    if not how.startswith("--"):
        assert "Auto-confirm is on: a complete play counts at once." in send(child, how)
    send(child, "8/5")
    child.sendline("6/5")
    assert PROMPTS[child.expect(PROMPTS)] != CONFIRM
    assert "You play 8/5 6/5.\r\n" in child.before and "tabla rolls" in child.before
    quit_session(child)


def test_a_complete_play_that_can_go_on_is_asked_even_with_auto_confirm_and_may_go_on(tmp_path):
    # 6/off with the 6 is already the play 6/3/off, but 3/off may follow
    child = at_move(tmp_path, {6: 1, 3: 5, 2: 2, 1: 7}, {13: 15}, (6, 3), "--auto-confirm")
    assert "You play 6/off. Press Enter to confirm, or type undo; or go on moving, e.g. 3/off." in send(
        child, "6/off", CONFIRM)
    shown = send(child, "3/off", PROMPTS)
    assert "You play 6/off 3/off." in shown and "tabla rolls" in shown
    quit_session(child)


# --------------------------------------------------------------------------- save / load
def test_save_and_load_restore_the_game_in_progress(tmp_path):
    child = spawn("--seed", "9")
    until(child, MOVE)
    dice = child.match.groups()
    board = read_board(child.before)
    path = tmp_path / "game.json"
    assert f"Game saved to {path}." in send(child, f"save {path}", MOVE)
    saved = json.loads(path.read_text())
    assert saved["format"] == "tabla-play" and saved["dice"] == sorted(map(int, dice), reverse=True)
    play_hinted(child)
    child.expect(CONFIRM)
    child.sendline("")
    until(child, MOVE)
    assert f"Game loaded from {path}." in send(child, f"load {path}", MOVE)
    assert child.match.groups() == dice
    assert read_board(child.before) == board
    quit_session(child)


def test_a_bad_save_file_is_refused_in_one_line_and_the_game_goes_on(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "tabla-play", "version": 1, "config": {}}))
    child = spawn("--seed", "9")
    until(child, MOVE)
    for path, why in ((tmp_path / "missing.json", "cannot read"), (garbage, "is not JSON"),
                      (wrong, "invalid saved game")):
        child.sendline(f"load {path}")
        child.expect(MOVE)
        line = next(ln for ln in child.before.splitlines() if ln.startswith("Cannot load"))
        assert why in line and line.endswith("The game goes on.")
    quit_session(child)


def test_a_bad_file_given_to_load_at_start_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    proc = subprocess.run([sys.executable] + ARGS + ["--load", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["tabla play: error: not a tabla saved game"]


# --------------------------------------------------------------------------- ending
def test_end_of_input_and_ctrl_c_end_the_session_without_a_traceback():
    proc = subprocess.run([sys.executable] + ARGS + ["--seed", "1"], cwd=ROOT, input="\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "(end of input) Goodbye." in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    child = spawn("--seed", "1")
    child.expect([YOU, MOVE])
    child.sendintr()
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 130


def test_money_options_are_refused_in_match_play():
    proc = subprocess.run([sys.executable] + ARGS + ["--match", "7", "--jacoby"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "tabla play: error: --jacoby and --beavers apply to money games only"
