"""The text board of ``tabla play`` (eval/board_text.py).

The worked examples of ``../shared/RULES.md`` are drawn from White's side (White is the
human, ``X``; Black is Tabla, ``O``) and compared with golden files in
``tests/data/boards``. Set ``TABLA_REGEN_BOARDS=1`` to rewrite the golden files after a
deliberate change of the layout (and read the diff).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.position import Position
from eval.board_text import ENGINE, HUMAN, BoardTextError, BoardView, read_board, render_board

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "boards"


def W(white: dict, black: dict) -> Position:
    """A position with White (the human) on roll; both sides in White's numbering, as the
    worked examples list them ("bar" for a checker on the bar)."""
    theirs = {}
    for p, n in black.items():
        q = 25 if p == "bar" else 25 - p
        theirs[q] = n
    mine = {(25 if p == "bar" else p): n for p, n in white.items()}
    return Position.from_points(mine, theirs)


START = Position.start()
EX1_AFTER_WHITE = W({5: 2, 6: 4, 8: 2, 13: 5, 24: 2}, {1: 2, 12: 5, 17: 3, 19: 5})
EX1_AFTER_BLACK = W({5: 2, 6: 4, 8: 2, 13: 5, 24: 2}, {1: 1, 12: 6, 17: 3, 19: 5})
EX2_BEFORE = W({5: 1, 6: 4, 8: 3, 13: 5, 24: 2}, {1: 2, 10: 1, 12: 5, 17: 3, 19: 4})
EX2_AFTER_WHITE = W({5: 2, 6: 3, 8: 3, 10: 1, 13: 4, 24: 2}, {"bar": 1, 1: 2, 12: 5, 17: 3, 19: 4})
EX2_AFTER_BLACK = W({5: 2, 6: 3, 8: 3, 10: 1, 13: 4, 24: 2}, {1: 2, 2: 1, 12: 4, 17: 3, 18: 1, 19: 4})
EX3_BEFORE = W({1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2}, {19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2})
EX3_AFTER = W({1: 1, 2: 1, 3: 1, 4: 2, 5: 1, 6: 1}, {19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2})
EX4 = W({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3}, {19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2})

CASES: dict[str, BoardView] = {
    "ex1_start": BoardView(START, on_roll=HUMAN, dice=(3, 1)),
    "ex1_after_white_31": BoardView(EX1_AFTER_WHITE, on_roll=ENGINE, dice=(6, 5)),
    "ex1_after_black_65": BoardView(EX1_AFTER_BLACK, on_roll=HUMAN),
    "ex2_before": BoardView(EX2_BEFORE, on_roll=HUMAN, dice=(3, 1)),
    "ex2_after_white_hit": BoardView(EX2_AFTER_WHITE, on_roll=ENGINE, dice=(6, 2)),
    "ex2_after_white_hit_left_match": BoardView(
        EX2_AFTER_WHITE, on_roll=ENGINE, dice=(6, 2), home="left", match_length=7, score=(3, 1),
        cube_value=2, cube_owner=ENGINE),
    "ex2_after_black": BoardView(EX2_AFTER_BLACK, on_roll=HUMAN),
    "ex3_before": BoardView(EX3_BEFORE, on_roll=HUMAN, dice=(6, 5), cube_value=4, cube_owner=HUMAN),
    "ex3_after_crawford_left": BoardView(
        EX3_AFTER, on_roll=ENGINE, home="left", match_length=5, score=(4, 2), crawford=True),
    "ex4_bear_off_64": BoardView(EX4, on_roll=HUMAN, dice=(6, 4), note="Position ID " + "x" * 14),
}


def _lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.parametrize("name", sorted(CASES))
def test_worked_example_board_matches_its_golden_file(name):
    text = render_board(CASES[name])
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("TABLA_REGEN_BOARDS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_board_reads_back_to_the_same_checkers(name):
    view = CASES[name]
    assert read_board(render_board(view)) == view.position


@pytest.mark.parametrize(
    "view, mine, theirs",
    [
        (CASES["ex1_start"], 167, 167),
        (CASES["ex1_after_white_31"], 163, 167),
        (CASES["ex1_after_black_65"], 163, 156),
        (CASES["ex2_before"], 166, 176),
        (CASES["ex2_after_white_hit"], 162, 186),
        (CASES["ex2_after_black"], 162, 178),
        (CASES["ex3_before"], 36, 57),
        (CASES["ex3_after_crawford_left"], 25, 57),
    ],
)
def test_pip_counts_shown_are_the_worked_examples_figures(view, mine, theirs):
    lines = _lines(render_board(view))
    # the opponent's figures beside the top half, the player's beside the bottom half
    assert f"pips {theirs}" in lines[1]
    assert f"pips {mine}" in lines[11]


def test_points_are_numbered_from_the_players_side_home_bottom_right_by_default():
    lines = _lines(render_board(CASES["ex1_start"]))
    assert lines[0].lstrip().startswith("+13-14-15-16-17-18------19-20-21-22-23-24-+")
    assert lines[12].lstrip().startswith("+12-11-10--9--8--7-------6--5--4--3--2--1-+")


def test_home_left_mirrors_the_board_with_point_1_bottom_left():
    right = _lines(render_board(CASES["ex2_after_white_hit"]))
    left = _lines(render_board(CASES["ex2_after_white_hit_left_match"]))
    assert left[12].lstrip().startswith("+---+-1--2--3--4--5--6-------7--8--9-10-11-12-+")
    assert left[0].lstrip().startswith("+---+24-23-22-21-20-19------18-17-16-15-14-13-+")
    for r, l in zip(right[1:12], left[1:12]):
        # same 12 point cells per half, in the opposite order; bar column unchanged
        r_cells = [r[2 + 3 * k: 5 + 3 * k] for k in range(6)] + [r[25 + 3 * k: 28 + 3 * k] for k in range(6)]
        l_cells = [l[6 + 3 * k: 9 + 3 * k] for k in range(6)] + [l[29 + 3 * k: 32 + 3 * k] for k in range(6)]
        assert l_cells == r_cells[::-1]
        assert r[21:24] == l[25:28]


def test_more_than_five_checkers_on_a_point_show_their_count_in_the_fifth_row():
    lines = _lines(render_board(CASES["ex1_after_black_65"]))
    # Black has 6 checkers on White's 12-point: bottom half, first column (home right)
    col = [lines[11 - r][2:5] for r in range(5)]
    assert col == [" O ", " O ", " O ", " O ", " 6 "]


def test_a_hit_checker_is_drawn_on_the_bar_in_the_half_where_it_enters():
    lines = _lines(render_board(CASES["ex2_after_white_hit"]))
    assert lines[11][21:24] == " O "  # Black's checker, bottom half (it enters in White's home)
    assert all(lines[r][21:24] == "   " for r in range(1, 6))


def test_borne_off_checkers_are_in_the_tray_beside_the_home_board():
    lines = _lines(render_board(CASES["ex3_before"]))
    tray = [lines[11 - r][44:47] for r in range(5)]
    assert tray == [" X ", " X ", " X ", " X ", " 6 "]
    left = _lines(render_board(CASES["ex3_after_crawford_left"]))
    assert [left[11 - r][2:5] for r in range(5)] == [" X ", " X ", " X ", " X ", " 8 "]


def test_cube_is_shown_beside_its_owner_or_centred_in_the_middle():
    owned = _lines(render_board(CASES["ex3_before"]))
    assert owned[12].endswith("X: you  [cube 4]")
    assert "[cube" not in owned[0] and "centred" not in owned[6]
    centred = _lines(render_board(CASES["ex1_start"]))
    assert centred[6].endswith("money game, cube 1 centred")


def test_match_score_crawford_and_dice_are_shown():
    lines = _lines(render_board(CASES["ex2_after_white_hit_left_match"]))
    assert lines[6].endswith("7-point match")
    assert lines[3].endswith("1 point") and lines[9].endswith("3 points")
    assert lines[4].endswith("rolled 6-2")
    crawford = _lines(render_board(CASES["ex3_after_crawford_left"]))
    assert crawford[6].endswith("5-point match, Crawford game (no cube)")


def test_bad_home_setting_is_refused():
    with pytest.raises(BoardTextError):
        BoardView(START, home="middle")


def test_reading_text_without_a_board_is_an_error():
    with pytest.raises(BoardTextError):
        read_board("no board here\n")
