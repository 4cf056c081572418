"""A text board for the terminal, drawn from the human player's side.

The layout follows GNU Backgammon's text mode: points numbered from the player at the
bottom (``X``, the human), the opponent (``O``) at the top, the bar in the middle and the
borne-off checkers in a tray beside the home boards. With ``home="right"`` (the default)
the player's home board is at the bottom right::

     +13-14-15-16-17-18------19-20-21-22-23-24-+---+
     | X           O    |   | O              X |   |   O: tabla
     | X           O    |   | O              X |   |   pips 167
     ...
     |                  |BAR|                  |   |   money game, cube 1
     ...
     +12-11-10--9--8--7-------6--5--4--3--2--1-+---+   X: you

with ``home="left"`` the board is mirrored (points 1-6 bottom left, the tray on the left).
Each point is a column of up to five checkers counted from the edge; a point holding more
than five shows its count in the fifth row. Checkers on the bar sit in the ``BAR`` column
in the half where they must enter (the player's in the top half, the opponent's in the
bottom half); borne-off checkers sit in the tray on the side of their owner's home.
Beside the board: names, pip counts, checkers off, the cube (beside its owner, or in the
middle when centred), the score or money totals, and the dice just rolled.

:func:`render_board` draws a :class:`BoardView`; :func:`read_board` is its inverse for the
checkers (used by tests and scripts that drive ``tabla play``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.position import BAR, NUM_CHECKERS, Position

HUMAN = 0
ENGINE = 1
ROWS = 5
"""Checkers drawn per point before the fifth row shows a count."""


class BoardTextError(ValueError):
    """Text that is not a board drawn by :func:`render_board`, or a bad view setting."""


@dataclass(frozen=True, slots=True)
class BoardView:
    """Everything the text board shows, seen from the human player.

    ``position`` is in the human's numbering whoever is on roll (human checkers > 0).
    ``cube_owner`` and ``on_roll`` are :data:`HUMAN`, :data:`ENGINE` or ``None``
    (centred cube / nobody). ``score`` is ``(human, engine)``: match score, or, when
    ``match_length`` is 0, each side's money balance so far (won minus lost, e.g. -2 and
    +2: :func:`eval.play_common.money_balance`). ``dice`` are the dice ``on_roll`` has rolled.
    """

    position: Position
    names: tuple[str, str] = ("you", "tabla")
    cube_value: int = 1
    cube_owner: int | None = None
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    on_roll: int | None = None
    dice: tuple[int, int] | None = None
    home: str = "right"
    note: str = ""
    """An extra line under the board (e.g. a Position ID); empty for none."""

    def __post_init__(self) -> None:
        if self.home not in ("left", "right"):
            raise BoardTextError(f"home must be left or right, got {self.home!r}")
        if self.cube_owner not in (None, HUMAN, ENGINE) or self.on_roll not in (None, HUMAN, ENGINE):
            raise BoardTextError("cube_owner and on_roll are 0 (human), 1 (engine) or None")


def _cell(count: int, row: int, mark: str) -> str:
    """The 3-character cell of a stack of ``count`` checkers at ``row`` (0 = the edge)."""
    if count > ROWS and row == ROWS - 1:
        return f"{count:2d} "
    return f" {mark} " if count > row else "   "


def _label(p: int) -> str:
    return f"{p:->2d}-"


def _stack_counts(position: Position) -> tuple[dict[int, tuple[int, str]], dict[str, int]]:
    """``{point: (count, mark)}`` for points 1-24 (human's numbering), and bar/off counts."""
    b = position.board
    points = {p: (abs(b[p]), "X" if b[p] > 0 else "O") for p in range(1, 25) if b[p]}
    extra = {"X_bar": b[BAR], "O_bar": -b[0], "X_off": position.off, "O_off": position.opp_off}
    return points, extra


def _half(points: dict[int, tuple[int, str]], order: list[int], row: int, bar: str, tray: str,
          home: str) -> str:
    """One row of a half board; ``order`` lists the 12 points left to right."""
    cells = []
    for p in order:
        n, mark = points.get(p, (0, ""))
        cells.append(_cell(n, row, mark))
    left, right = "".join(cells[:6]), "".join(cells[6:])
    body = f"|{left}|{bar}|{right}|"
    return f"|{tray}{body}" if home == "left" else f"{body}{tray}|"


def render_board(view: BoardView) -> str:
    """The text board of ``view`` (see the module docstring); lines end without spaces."""
    points, extra = _stack_counts(view.position)
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    if view.home == "left":
        top, bottom = top[::-1], bottom[::-1]
    pips_x, pips_o = view.position.pips()
    name_x, name_o = view.names

    def cube_tag(owner: int) -> str:
        return f"  [cube {view.cube_value}]" if view.cube_owner == owner else ""

    def dice_text(who: int) -> str:
        if view.on_roll != who:
            return ""
        if view.dice is None:
            return "on roll"
        return f"rolled {view.dice[0]}-{view.dice[1]}"

    if view.match_length:
        score_o = f"{view.score[ENGINE]} point{'s' if view.score[ENGINE] != 1 else ''}"
        score_x = f"{view.score[HUMAN]} point{'s' if view.score[HUMAN] != 1 else ''}"
        game = f"{view.match_length}-point match"
        if view.crawford:
            game += ", Crawford game (no cube)"
    else:
        score_o = f"money {view.score[ENGINE]:+d}"
        score_x = f"money {view.score[HUMAN]:+d}"
        game = "money game"
    if view.cube_owner is None and not view.crawford:
        game += f", cube {view.cube_value} centred"

    # side panel: rows 0-4 of the top half (from the edge), then rows 4-0 of the bottom half
    side_top = [f"pips {pips_o}", f"off {extra['O_off']}", score_o, dice_text(ENGINE), ""]
    side_bottom = [f"pips {pips_x}", f"off {extra['X_off']}", score_x, dice_text(HUMAN), ""]

    gap = "   "
    tray_edge = "---"
    head = "+" + "".join(_label(p) for p in top[:6]) + "-----" + "".join(_label(p) for p in top[6:]) + "+"
    foot = "+" + "".join(_label(p) for p in bottom[:6]) + "-----" + "".join(_label(p) for p in bottom[6:]) + "+"
    if view.home == "left":
        head, foot = f"+{tray_edge}{head}", f"+{tray_edge}{foot}"
    else:
        head, foot = f"{head}{tray_edge}+", f"{foot}{tray_edge}+"

    lines = [f" {head}{gap}O: {name_o}{cube_tag(ENGINE)}"]
    for row in range(ROWS):
        bar = _cell(extra["X_bar"], row, "X")
        tray = _cell(extra["O_off"], row, "O")
        lines.append(f" {_half(points, top, row, bar, tray, view.home)}{gap}{side_top[row]}")
    middle = "|   |                  |BAR|                  |" if view.home == "left" else "|                  |BAR|                  |   |"
    lines.append(f" {middle}{gap}{game}")
    for row in range(ROWS - 1, -1, -1):
        bar = _cell(extra["O_bar"], row, "O")
        tray = _cell(extra["X_off"], row, "X")
        lines.append(f" {_half(points, bottom, row, bar, tray, view.home)}{gap}{side_bottom[row]}")
    lines.append(f" {foot}{gap}X: {name_x}{cube_tag(HUMAN)}")
    if view.note:
        lines.append(f" {view.note}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


# ---------------------------------------------------------------------- reading
_BORDER = re.compile(r"^\s*\+(?:---)?\+?((?:[-\d]{3}){6})-----((?:[-\d]{3}){6})\+")


def _stack(cells: list[str]) -> tuple[int, str]:
    """Count and mark of one column of 5 cells listed from the edge."""
    marks = [c.strip() for c in cells]
    if not marks[0]:
        if any(marks):
            raise BoardTextError("a stack with a gap at the edge")
        return 0, ""
    mark = marks[0]
    if mark not in ("X", "O"):
        raise BoardTextError(f"unexpected checker mark {mark!r}")
    last = marks[ROWS - 1]
    if last.isdigit():
        return int(last), mark
    n = 0
    for m in marks:
        if m == mark:
            n += 1
        elif m:
            raise BoardTextError(f"mixed checkers in one stack: {marks}")
        else:
            break
    return n, mark


def read_board(text: str) -> Position:
    """The checkers of a board drawn by :func:`render_board`, in the human's numbering.

    Raises :class:`BoardTextError` when ``text`` holds no such board (the first board in
    the text is read; anything around it is ignored).
    """
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _BORDER.match(ln)), None)
    if start is None or start + 12 > len(lines) or not _BORDER.match(lines[start + 12]):
        raise BoardTextError("no text board found")
    block = [ln.rstrip("\n") for ln in lines[start:start + 13]]
    home = "left" if block[0].lstrip().startswith("+---+") else "right"

    def labels(line: str) -> list[int]:
        m = _BORDER.match(line)
        txt = m.group(1) + m.group(2)
        return [int(txt[k:k + 3].strip("-")) for k in range(0, 36, 3)]

    top, bottom = labels(block[0]), labels(block[12])
    indent = block[0].index("+")
    board_x = indent + (4 if home == "left" else 0)  # column of the board's left "|"

    def cells(line: str) -> tuple[list[str], str, str]:
        line = line.ljust(board_x + 48)
        pts = [line[board_x + 1 + 3 * k: board_x + 4 + 3 * k] for k in range(6)]
        bar = line[board_x + 20: board_x + 23]
        pts += [line[board_x + 24 + 3 * k: board_x + 27 + 3 * k] for k in range(6)]
        tray = line[indent + 1: indent + 4] if home == "left" else line[board_x + 43: board_x + 46]
        return pts, bar, tray

    top_rows = [cells(block[1 + r]) for r in range(ROWS)]
    bottom_rows = [cells(block[11 - r]) for r in range(ROWS)]
    mine: dict[int, int] = {}
    theirs: dict[int, int] = {}

    def put(point: int, n: int, mark: str) -> None:
        if n == 0:
            return
        if mark == "X":
            mine[point] = mine.get(point, 0) + n
        else:  # the opponent's own numbering; the bar is 25 for both
            q = BAR if point == BAR else 25 - point
            theirs[q] = theirs.get(q, 0) + n

    for rows, order in ((top_rows, top), (bottom_rows, bottom)):
        for k, p in enumerate(order):
            n, mark = _stack([r[0][k] for r in rows])
            put(p, n, mark)
    n, mark = _stack([r[1] for r in top_rows])
    if n and mark != "X":
        raise BoardTextError("the top half of the bar holds the player's checkers")
    put(BAR, n, "X")
    n, mark = _stack([r[1] for r in bottom_rows])
    if n and mark != "O":
        raise BoardTextError("the bottom half of the bar holds the opponent's checkers")
    put(BAR, n, "O")
    pos = Position.from_points(mine, theirs)
    off_x, _ = _stack([r[2] for r in bottom_rows])
    off_o, _ = _stack([r[2] for r in top_rows])
    if pos.off != off_x or pos.opp_off != off_o:
        raise BoardTextError(f"the trays show {off_x}/{off_o} off, the points leave {pos.off}/{pos.opp_off}")
    if pos.off > NUM_CHECKERS or pos.opp_off > NUM_CHECKERS:
        raise BoardTextError("too many checkers")
    return pos
