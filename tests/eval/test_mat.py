"""Jellyfish .mat export: GNU Backgammon imports our files with the same plays and scores."""
import re
import shutil
import subprocess
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from eval.bots import CubeResponse, PipCubeBot, PubevalBot, RaceBot
from eval.mat import MatFormatError, format_mat, parse_mat, play_text, sorted_steps
from engine.game import GameOptions
from eval.match import Action, DiceSource, play_match, play_session

GNUBG = "/usr/games/gnubg"
needs_gnubg = pytest.mark.skipif(not Path(GNUBG).exists(), reason=f"GNU Backgammon is not installed at {GNUBG}")


class Beaverer(PubevalBot):
    """pubeval play; doubles when 8% ahead in pips, always beavers."""

    name = "beaverer"

    def respond_double(self, board, state):
        return CubeResponse.BEAVER if state.may_beaver() else CubeResponse.TAKE


def _gnubg_round_trip(tmp_path: Path, mat: Path, setup: str = "") -> tuple[str, Path]:
    out = tmp_path / "back.mat"
    script = f"{setup}import mat {mat}\nshow score\nexport match mat {out}\n"
    proc = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=120)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout, out


def _actions(game):
    return [(a.player, a.kind, a.dice and tuple(sorted(a.dice)), sorted_steps(a.steps), a.value) for a in game.actions]


def _assert_same_games(ours: str, theirs: str) -> None:
    a, b = parse_mat(ours), parse_mat(theirs)
    assert a.match_length == b.match_length
    assert len(a.games) == len(b.games)
    for ga, gb in zip(a.games, b.games):
        assert ga.score == gb.score
        assert _actions(ga) == _actions(gb)


@needs_gnubg
def test_gnubg_imports_an_exported_match_with_the_same_plays_cubes_and_scores(tmp_path):
    bots = (PipCubeBot(), PubevalBot())
    match = play_match(bots, 5, DiceSource(np.random.default_rng(21)))
    assert any(g.doubles for g in match.games), "the cube was used"
    path = tmp_path / "m.mat"
    path.write_text(format_mat(match))
    stdout, back = _gnubg_round_trip(tmp_path, path)
    assert "Invalid move" not in stdout and "Unrecognised" not in stdout
    _assert_same_games(path.read_text(), back.read_text())
    m = re.search(r"The score \(after (\d+) games?\) is: \S+ (\d+), \S+ (\d+)", stdout)
    assert m, stdout[-1500:]
    assert int(m.group(1)) == len(match.games)
    assert (int(m.group(2)), int(m.group(3))) == match.score


@needs_gnubg
def test_gnubg_imports_a_money_session_with_beavers(tmp_path):
    bots = (Beaverer(), Beaverer())
    session = play_session(bots, 8, DiceSource(np.random.default_rng(5)), GameOptions(beavers=True))
    assert sum(g.beavers for g in session.games) > 0
    path = tmp_path / "s.mat"
    path.write_text(format_mat(session))
    stdout, back = _gnubg_round_trip(tmp_path, path, "set jacoby off\nset beavers 3\n")
    assert "Invalid move" not in stdout
    _assert_same_games(path.read_text(), back.read_text())
    m = re.search(r"The score \(after (\d+) games?\) is: \S+ (\d+), \S+ (\d+)", stdout)
    assert m and (int(m.group(2)), int(m.group(3))) == session.score


def test_export_writes_header_names_and_one_column_per_seat():
    session = play_session((RaceBot(), PubevalBot()), 2, DiceSource(np.random.default_rng(1)), GameOptions(cube=False))
    text = format_mat(session, date(2026, 1, 2))
    lines = text.splitlines()
    assert lines[0] == '; [EventDate "2026.01.02"]'
    assert lines[2] == " 0 point match"
    assert lines[4] == " Game 1"
    assert re.match(r"^ race : 0\s+pubeval : 0$", lines[5])
    parsed = parse_mat(text)
    assert len(parsed.games) == 2
    for game, rec in zip(parsed.games, session.games):
        moves = [a for a in game.actions if a.kind == "move"]
        assert len(moves) == sum(1 for a in rec.actions if a.kind == "move")
        assert moves[0].player == rec.first
        wins = [a for a in game.actions if a.kind == "wins"]
        assert wins and wins[0].player == rec.winner and wins[0].value == rec.points


def test_play_text_marks_hits_and_uses_25_for_the_bar_and_0_for_off():
    # bar/22* hits a blot on our 22; 2/off
    before = [0] * 26
    before[25], before[2], before[22] = 1, 14, -1
    before[10] = -14
    a = Action(0, "move", dice=(3, 2), before=tuple(before), steps=((25, 22), (2, 0)))
    assert play_text(a) == "32: 25/22* 2/0"
    assert play_text(Action(1, "move", dice=(6, 4), before=tuple(before), steps=())) == "64: "


def test_reading_text_without_a_header_is_an_error():
    with pytest.raises(MatFormatError):
        parse_mat("Game 1\n a : 0  b : 0\n")
