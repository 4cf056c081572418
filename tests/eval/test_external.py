"""tabla external: GNU Backgammon's external player (FIBS board lines in, answers out)."""
import argparse
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.position import Position
from eval.external import FibsBoardError, parse_board
from eval.mat import read_mat
from eval.replay import replay_match
from scripts import cmd_external
from scripts.tabla import main
from tests.gnubg_cli import GNUBG

needs_gnubg = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon (gnubg) is not installed")
ROOT = Path(__file__).resolve().parents[2]


def board_line(colour_side: Position, turn: int, dice=(0, 0), cube=1, may=(1, 1), doubled=0, names=("p0", "p1"),
               length=0, score=(0, 0)) -> str:
    """A board line laid out as the protocol describes (colour 1's side in Tabla's layout)."""
    fields = ["board", names[0], names[1], str(length), str(score[0]), str(score[1])]
    fields += [str(v) for v in colour_side.board]
    fields += [str(turn), str(dice[0]), str(dice[1]), str(dice[0]), str(dice[1]), str(cube), str(may[0]),
               str(may[1]), str(doubled), "1", "-1", "0", "25", "0", "0", "0", "0", "0", "0", "0", "0", "1"]
    return ":".join(fields)


POS = Position.from_points({6: 5, 8: 3, 13: 5, 24: 1, 25: 1}, {6: 4, 8: 3, 13: 5, 20: 3})


def test_a_board_with_colour_1_on_roll_is_read_from_its_side():
    b = parse_board(board_line(POS, 1, dice=(3, 1), cube=2, may=(1, 0)))
    assert b.position == POS and b.dice == (3, 1)
    assert b.cube_state().owner.value == "player"


def test_a_board_with_the_other_side_on_roll_is_flipped_to_its_side():
    b = parse_board(board_line(POS, -1, dice=(6, 5), cube=2, may=(1, 0), names=("me", "gnubg"), length=5, score=(1, 3)))
    assert b.position == POS.flip()
    assert b.cube_state().owner.value == "opponent"
    assert b.names == ("me", "gnubg") and b.score == (1, 3)


@pytest.mark.parametrize("line, words", [
    ("hello", "board:"),
    ("board:a:b:0:0:0", "53 fields"),
    (board_line(POS, 1).replace(":1:-1:0:25:", ":1:1:0:25:"), "direction"),
    (board_line(POS, 1, dice=(7, 1)), "dice"),
    (board_line(POS, 1, cube=3), "power of two"),
    (board_line(POS, 1).replace(":5:", ":x:", 1), "not a number"),
])
def test_a_malformed_board_line_is_rejected_with_its_reason(line, words):
    with pytest.raises(FibsBoardError, match=words):
        parse_board(line)


def _serve(tmp_path: Path, connections: int):
    path = str(tmp_path / "tabla.sock")
    args = argparse.Namespace(host="127.0.0.1", port=0, socket=path, ply=1, cube_ply=0, connections=connections,
                              model=None, heuristic=True, log=None)
    t = threading.Thread(target=cmd_external.run, args=(args,), daemon=True)
    t.start()
    for _ in range(100):
        if Path(path).exists():
            break
        time.sleep(0.05)
    return path, t


def _ask(path: str, lines: list[str]) -> list[str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        f = s.makefile("rwb")
        out = []
        for ln in lines:
            f.write(ln.encode() + b"\n\x00")
            f.flush()
            out.append(f.readline().decode().strip())
        return out


def test_a_malformed_line_gets_gnubg_error_form_and_the_server_stays_up(tmp_path):
    path, t = _serve(tmp_path, connections=2)
    first = _ask(path, ["board:garbage", board_line(POS, 1, dice=(3, 1))])
    assert first[0].startswith("Error: ")
    assert "/" in first[1]  # a play, e.g. bar/22 24/23
    second = _ask(path, [board_line(POS, 1, doubled=1, cube=1), board_line(POS, 1)])
    assert second[0] in ("take", "drop") and second[1] in ("roll", "double")
    t.join(10)
    assert not t.is_alive()


def _gnubg_session(tmp_path: Path, games: int, ply: int, gnubg_ply: int = 0) -> tuple[str, Path]:
    sock = tmp_path / "ext.sock"
    server = subprocess.Popen([sys.executable, "-m", "scripts.tabla", "external", "--socket", str(sock),
                               "--ply", str(ply), "--connections", "1", "--log", str(tmp_path / "ext.log")],
                              cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in server.stderr.readline()
        out = tmp_path / "session.mat"
        script = (f"set jacoby off\nset beavers 0\nset seed 11\nset player 0 name tabla\n"
                  f"set player 0 external {sock}\nset player 1 name gnubg\nset player 1 gnubg\n"
                  f"set player 1 chequerplay evaluation plies {gnubg_ply}\n"
                  f"set player 1 cubedecision evaluation plies {gnubg_ply}\n"
                  "set automatic game off\nset display off\nnew session\n" + "new game\n" * (games - 1) +
                  f"export match mat {out}\n")
        run = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=3600)
    finally:
        server.terminate()
        server.wait(10)
    return run.stdout + run.stderr, out


def _check_session(text: str, mat: Path, games: int, capsys) -> None:
    assert text.count(" wins a ") == games, text[-2000:]
    assert "Error" not in text and "Warning" not in text and "illegal" not in text.lower()
    match = replay_match(read_mat(mat))  # every play legal, every cube action allowed
    assert len(match.games) == games
    assert any(d.kind == "double" for g in match.games for d in g.decisions), "the cube was used"
    assert main(["analyse", str(mat), "--ply", "1", "--no-luck"]) == 0
    assert "Rating" in capsys.readouterr().out


@needs_gnubg
def test_gnubg_plays_two_cubeful_money_games_against_tabla_external(tmp_path, capsys):
    text, mat = _gnubg_session(tmp_path, 2, ply=1)
    _check_session(text, mat, 2, capsys)


@needs_gnubg
@pytest.mark.slow
def test_gnubg_plays_ten_cubeful_money_games_against_tabla_external_at_two_ply(tmp_path, capsys):
    text, mat = _gnubg_session(tmp_path, 10, ply=2)
    _check_session(text, mat, 10, capsys)
