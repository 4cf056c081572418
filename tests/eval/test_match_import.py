"""Importing .mat and .sgf: files written by the real GNU Backgammon read back with the same
plays, dice, cube actions and scores; malformed files give one-line errors naming the line."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

from eval.bots import PipCubeBot, PubevalBot
from eval.mat import format_mat, parse_mat as read_mat_text, read_mat, sorted_steps
from eval.match import DiceSource, play_session
from eval.replay import replay_match
from eval.sgf import read_sgf
from scripts.tabla import main
from tests.gnubg_cli import GNUBG

needs_gnubg = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon (gnubg) is not installed")


def _gnubg(script: str) -> str:
    run = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=300)
    return run.stdout + run.stderr


def _actions(match):
    """Who did what; the cube value of a double is in a .mat only (``Doubles => 4``)."""
    return [[(a.player, a.kind, a.dice and tuple(sorted(a.dice)), sorted_steps(a.steps),
              a.value if a.kind != "double" else None) for a in g.actions] for g in match.games]


@pytest.fixture(scope="module")
def gnubg_files(tmp_path_factory):
    """A 3-game cubeful money session and a 3-point match played by gnubg against itself,
    each written as .mat and .sgf by gnubg."""
    if GNUBG is None:
        pytest.skip("GNU Backgammon (gnubg) is not installed")
    d = tmp_path_factory.mktemp("gnubg")
    setup = ("set jacoby off\nset beavers 0\nset seed 17\nset player 0 gnubg\nset player 1 gnubg\n"
             "set player 0 chequerplay evaluation plies 0\nset player 1 chequerplay evaluation plies 0\n"
             "set player 0 cubedecision evaluation plies 0\nset player 1 cubedecision evaluation plies 0\n"
             "set display off\n")
    _gnubg(setup + f"set automatic game off\nnew session\nnew game\nnew game\nexport match mat {d}/s.mat\n"
           f"save match {d}/s.sgf\n")
    out = _gnubg(setup + f"new match 3\nexport match mat {d}/m.mat\nsave match {d}/m.sgf\nshow score\n")
    for name in ("s.mat", "s.sgf", "m.mat", "m.sgf"):
        assert (d / name).exists(), out[-2000:]
    return d


@needs_gnubg
@pytest.mark.parametrize("stem", ["s", "m"])
def test_gnubg_mat_and_sgf_of_the_same_games_import_to_the_same_plays_cubes_and_scores(gnubg_files, stem):
    mat, sgf = read_mat(gnubg_files / f"{stem}.mat"), read_sgf(gnubg_files / f"{stem}.sgf")
    assert mat.match_length == sgf.match_length == (0 if stem == "s" else 3)
    assert len(mat.games) == len(sgf.games) == (3 if stem == "s" else len(mat.games))
    assert [g.score for g in mat.games] == [g.score for g in sgf.games]
    assert _actions(mat) == _actions(sgf)
    a, b = replay_match(mat), replay_match(sgf)
    assert a.score == b.score and [g.points for g in a.games] == [g.points for g in b.games]
    if stem == "m":
        assert max(a.score) >= 3
    assert any(d.kind == "double" for g in a.games for d in g.decisions), "the cube was used"


@needs_gnubg
def test_gnubg_reads_our_export_and_writes_back_a_file_we_import_to_the_same_games(tmp_path):
    match = play_session((PipCubeBot(), PubevalBot()), 4, DiceSource(np.random.default_rng(5)))
    ours = tmp_path / "ours.mat"
    ours.write_text(format_mat(match))
    _gnubg(f"set jacoby off\nimport mat {ours}\nexport match mat {tmp_path}/back.mat\nsave match {tmp_path}/back.sgf\n")
    mine = replay_match(read_mat(ours))
    for back in (read_mat(tmp_path / "back.mat"), read_sgf(tmp_path / "back.sgf")):
        theirs = replay_match(back)
        assert theirs.score == mine.score == match.score
        assert [[(d.kind, d.roll, d.after) for d in g.decisions] for g in theirs.games] == \
               [[(d.kind, d.roll, d.after) for d in g.decisions] for g in mine.games]


# ------------------------------------------------------------------ malformed inputs
def _valid_mat() -> str:
    return format_mat(play_session((PipCubeBot(), PubevalBot()), 2, DiceSource(np.random.default_rng(3))))


def _valid_sgf(tmp_path: Path) -> str:
    mat = tmp_path / "v.mat"
    mat.write_text(_valid_mat())
    _gnubg(f"set jacoby off\nimport mat {mat}\nsave match {tmp_path}/v.sgf\n")
    return (tmp_path / "v.sgf").read_text()


def _first_move_line(text: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines()) if ln.strip().startswith("1)") and ":" in ln)


def _mat_cases(text: str) -> dict[str, bytes]:
    lines = text.splitlines()
    k = _first_move_line(text)
    wrong = list(lines)
    first, second = wrong[k].split(":", 1)
    steps = second.split()
    wrong[k] = first + ": " + " ".join(["24/1"] + steps[1:]) if steps else first + ": 24/1"
    unknown = lines[: k + 1] + ["  2)  Redoubles => 9"] + lines[k + 1:]
    mid_game = next(i for i, ln in enumerate(lines) if "Wins" in ln)
    rng = np.random.default_rng(1)
    return {
        "truncated mid-line": text[: len(text) // 2].encode(),
        "truncated before a result": ("\n".join(lines[:mid_game]) + "\n").encode(),
        "wrong move": ("\n".join(wrong) + "\n").encode(),
        "unknown action": ("\n".join(unknown) + "\n").encode(),
        "binary garbage": bytes(rng.integers(0, 256, 3000, dtype=np.uint8)),
        "binary after the header": (text[:200] + "\x00\x01\x02garbage\n").encode(),
        "empty file": b"",
        "wrong score": text.replace(" : 0", " : 7", 3).encode(),
    }


def _sgf_cases(text: str) -> dict[str, bytes]:
    k = text.index(";W[") if ";W[" in text else text.index(";B[")
    body = text[k + 3:]
    end = body.index("]")
    wrong = text[: k + 3] + body[:2] + "aa" * ((end - 2) // 2) + body[end:]
    rng = np.random.default_rng(2)
    return {
        "truncated": text[: len(text) // 2].encode(),
        "wrong move": wrong.encode(),
        "unknown property": text.replace(";W[", ";ZZ[1]W[", 1).encode(),
        "bad dice": (text[: k + 3] + "7" + body[1:]).encode(),
        "binary garbage": bytes(rng.integers(0, 256, 3000, dtype=np.uint8)),
        "not a backgammon game": text.replace("GM[6]", "GM[1]", 1).encode(),
        "unbalanced": text.replace(")", "", 1).encode(),
    }


def _assert_one_line_error(tmp_path, capsys, name: str, data: bytes, suffix: str) -> None:
    f = tmp_path / f"bad{suffix}"
    f.write_bytes(data)
    plot = tmp_path / "out.png"
    code = main(["analyse", str(f), "--ply", "1", "--no-luck", "--heuristic", "--plot", str(plot)])
    err = capsys.readouterr().err.strip()
    assert code == 2, name
    assert len(err.splitlines()) == 1 and "Traceback" not in err, (name, err)
    assert "line" in err, (name, err)
    assert not plot.exists(), name


def test_every_malformed_mat_file_gives_a_one_line_error_naming_the_line(tmp_path, capsys):
    cases = _mat_cases(_valid_mat())
    for name, data in cases.items():
        _assert_one_line_error(tmp_path, capsys, name, data, ".mat")


@needs_gnubg
def test_every_malformed_sgf_file_gives_a_one_line_error_naming_the_line(tmp_path, capsys):
    cases = _sgf_cases(_valid_sgf(tmp_path))
    for name, data in cases.items():
        _assert_one_line_error(tmp_path, capsys, name, data, ".sgf")


def test_the_valid_file_the_malformed_cases_come_from_is_analysed(tmp_path, capsys):
    f = tmp_path / "ok.mat"
    f.write_text(_valid_mat())
    assert main(["analyse", str(f), "--ply", "1", "--no-luck", "--heuristic"]) == 0
    assert "Error rate mEMG per decision" in capsys.readouterr().out


def test_a_game_that_ends_without_a_bear_off_imports_as_a_resignation_of_its_points():
    # gnubg's .mat writes a resignation as the winner's "Wins N points" before any bear-off
    lines = _valid_mat().splitlines()
    g = lines.index(" Game 1")
    text = "\n".join(lines[: g + 2] + lines[g + 2 : g + 7] + [" " * 33 + "Wins 2 points"]) + "\n"
    replayed = replay_match(read_mat_text(text))
    game = replayed.games[0]
    assert game.points == 2 and replayed.score == (0, 2)
    assert [(d.player, d.kind, d.level) for d in game.decisions if d.kind == "resign"] == [(0, "resign", 2)]
