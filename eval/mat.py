"""Jellyfish ``.mat`` match files: export Tabla's games, and read such files back.

The layout GNU Backgammon writes and imports (``import mat FILE``)::

     7 point match

     Game 1
     tabla : 0                       pubeval : 0
      1) 43: 13/9 24/21              31: 8/5 6/5
      2)  Doubles => 2                Takes
      3) 62: 25/19* 13/11            64:
                                      Wins 1 point

Seat 0 writes in the left column, seat 1 in the right one; a line holds at most one
action of each, in the order they happened. A play lists one ``from/to`` per die in the
mover's own numbering (25 = bar, 0 = off, ``*`` = a hit); a roll that cannot be played is
the dice alone. Cube actions: ``Doubles => N``, ``Takes``, ``Drops``, ``Beavers => N``
(the beaverer's redouble; the doubler's ``Takes`` or ``Drops`` follows). A money session
is written as a ``0 point match`` (GNU Backgammon applies its own Jacoby setting when it
imports one). Automatic doubles have no notation in the format and are not exported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Iterable

from eval.match import Action, GameRecord, MatchRecord

_LEFT_WIDTH = 28


class MatFormatError(ValueError):
    """Text that is not a readable .mat match file."""


# ---------------------------------------------------------------------- writing
def _safe_name(name: str) -> str:
    """A player name the format can carry: no spaces, colons or commas."""
    s = re.sub(r"[^A-Za-z0-9_.=+-]", "_", name.strip()) or "player"
    return s[:40]


def play_text(action: Action) -> str:
    """``"43: 13/9 24/21"``: the dice and one ``from/to`` per die, ``*`` on hits."""
    d1, d2 = action.dice
    head = f"{max(d1, d2)}{min(d1, d2)}:"
    board = list(action.before)
    parts = []
    for f, t in action.steps:
        hit = t >= 1 and board[t] == -1
        board[f] -= 1
        if t >= 1:
            if hit:
                board[t] = 0
                board[0] -= 1
            board[t] += 1
        parts.append(f"{f}/{t}{'*' if hit else ''}")
    return head + (" " + " ".join(parts) if parts else " ")


def action_text(action: Action) -> str:
    """The column text of one action."""
    if action.kind == "move":
        return play_text(action)
    if action.kind == "double":
        return f" Doubles => {action.cube}"
    if action.kind == "beaver":
        return f" Beavers => {action.cube}"
    if action.kind == "take":
        return " Takes"
    if action.kind == "drop":
        return " Drops"
    raise ValueError(f"unknown action kind {action.kind!r}")


def _line(number: int | None, left: str, right: str) -> str:
    head = f"{number:3d}) " if number is not None else "     "
    if not right:
        return (head + left).rstrip() if left.strip() else head.rstrip()
    return head + left.ljust(max(_LEFT_WIDTH, len(left) + 2)) + right


def game_lines(game: GameRecord, names: tuple[str, str]) -> list[str]:
    """The lines of one game, from ``Game N`` to the ``Wins`` line."""
    s0, s1 = game.score
    n0, n1 = _safe_name(names[0]), _safe_name(names[1])
    out = [f" Game {game.number}", f" {n0} : {s0}".ljust(32) + f"{n1} : {s1}"]
    number = 1
    left: str | None = None
    right: str | None = None

    def flush() -> None:
        nonlocal number, left, right
        out.append(_line(number, left or "", right or ""))
        number += 1
        left = right = None

    previous = None
    for a in game.actions:
        if a.kind == "take" and previous is not None and previous.kind == "beaver":
            # GNU Backgammon reads the doubler's next roll as taking the beaver; an
            # explicit "Takes" would be counted as a second take
            previous = a
            continue
        previous = a
        text = action_text(a)
        if a.player == 0:
            if left is not None or right is not None:
                flush()
            left = text
        else:
            right = text
            flush()
    plural = "s" if game.points != 1 else ""
    wins = f" Wins {game.points} point{plural}"
    if game.winner == 1 and left is not None and right is None:
        right = wins
        flush()
    else:
        if left is not None:
            flush()
        out.append(_line(None, wins if game.winner == 0 else "", wins if game.winner == 1 else ""))
    return out


def format_mat(match: MatchRecord, event_date: date | None = None) -> str:
    """The whole match (or money session) as ``.mat`` text."""
    d = event_date or date.today()
    lines = [f'; [EventDate "{d:%Y.%m.%d}"]', "", f" {match.match_length} point match", ""]
    for g in match.games:
        lines.extend(game_lines(g, match.names))
        lines.append("")
    return "\n".join(lines) + "\n"


def export_mat(match: MatchRecord, path: str | Path, event_date: date | None = None) -> None:
    """Write :func:`format_mat` to ``path``."""
    Path(path).write_text(format_mat(match, event_date), encoding="ascii")


# ---------------------------------------------------------------------- reading
@dataclass
class MatAction:
    """One action read back: ``kind`` move / double / beaver / take / drop / wins."""

    player: int
    kind: str
    dice: tuple[int, int] | None = None
    steps: tuple[tuple[int, int], ...] = ()
    value: int = 0
    line: int = 0
    """1-based line of the file the action was read from (0 when unknown)."""


@dataclass
class MatGame:
    number: int
    names: tuple[str, str]
    score: tuple[int, int]
    actions: list[MatAction] = field(default_factory=list)
    line: int = 0
    """1-based line of the ``Game N`` header."""


@dataclass
class MatMatch:
    match_length: int
    games: list[MatGame] = field(default_factory=list)
    jacoby: bool = False
    """Money sessions: the Jacoby rule applies (``.sgf`` says so; ``.mat`` cannot)."""


_MOVE = re.compile(r"^([1-6])([1-6]):(.*)$")
_STEP = re.compile(r"^(\d{1,2})/(\d{1,2})\*?$")


def _parse_entry(text: str, player: int) -> MatAction | None:
    t = text.strip()
    if not t:
        return None
    m = _MOVE.match(t)
    if m:
        steps = []
        for tok in m.group(3).split():
            sm = _STEP.match(tok.replace("bar", "25").replace("off", "0"))
            if not sm:
                raise MatFormatError(f"bad checker move {tok!r} in {t!r}")
            steps.append((int(sm.group(1)), int(sm.group(2))))
        return MatAction(player, "move", (int(m.group(1)), int(m.group(2))), tuple(steps))
    low = t.lower()
    num = re.search(r"(\d+)", t)
    value = int(num.group(1)) if num else 0
    for word, kind in (("double", "double"), ("beaver", "beaver"), ("take", "take"), ("drop", "drop"), ("win", "wins")):
        if low.startswith(word):
            return MatAction(player, kind, value=value)
    raise MatFormatError(f"unrecognised action {t!r}")


def _split_columns(line: str) -> tuple[str, str]:
    """Left and right column texts of a numbered (or bare) line, the way gnubg splits it."""
    body = line
    m = re.match(r"^\s*\d+\)", body)
    start = m.end() if m else 0
    first = body.find(":", start)
    second = body.find(":", first + 1) if first >= 0 else -1
    if first >= 0 and second >= 0:
        cut = second - 2
        return body[start:cut], body[cut:]
    gap = body.find("  ", max(15, start + 1)) if len(body) > 15 else -1
    if gap >= 0:
        return body[start:gap], body[gap:]
    return body[start:], ""


def parse_mat(text: str) -> MatMatch:
    """Read ``.mat`` text (as written by :func:`format_mat` or GNU Backgammon).

    Raises :class:`MatFormatError` naming the first line that cannot be read.
    """
    lines = [ln.rstrip("\r\n") for ln in text.splitlines()]
    for n, ln in enumerate(lines, 1):
        if "\x00" in ln or "\ufffd" in ln or any(ord(c) < 32 and c not in "\t\x0c" for c in ln):
            raise MatFormatError(f"line {n}: binary data, not a .mat match file")
    length = None
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*(\d+)\s+[Pp]oint\s+[Mm]atch", lines[i])
        i += 1
        if m:
            length = int(m.group(1))
            break
        if lines[i - 1].strip() and not lines[i - 1].lstrip().startswith(";"):
            raise MatFormatError(f"line {i}: expected the 'N point match' header, got {lines[i - 1].strip()[:40]!r}")
    if length is None:
        raise MatFormatError(f"line {max(1, len(lines))}: no 'N point match' header")
    match = MatMatch(length)
    game: MatGame | None = None
    expect_names = False
    for n, ln in enumerate(lines[i:], i + 1):
        if not ln.strip() or ln.lstrip().startswith(";"):
            continue
        try:
            gm = re.match(r"^\s*Game\s+(\d+)\s*$", ln)
            if gm:
                game = MatGame(int(gm.group(1)), ("", ""), (0, 0), line=n)
                match.games.append(game)
                expect_names = True
                continue
            if game is None:
                raise MatFormatError(f"text before the first game: {ln.strip()[:40]!r}")
            if expect_names:
                nm = re.match(r"^\s*(\S.*?)\s*:\s*(\d+)\s+(\S.*?)\s*:\s*(\d+)\s*$", ln)
                if not nm:
                    raise MatFormatError(f"bad player line {ln.strip()[:40]!r}")
                game.names = (nm.group(1), nm.group(3))
                game.score = (int(nm.group(2)), int(nm.group(4)))
                expect_names = False
                continue
            if not re.match(r"^\s*\d+\)", ln) and not re.match(r"^\s+Wins", ln) and not re.match(r"^\s{20,}Wins", ln):
                raise MatFormatError(f"not a numbered move line: {ln.strip()[:40]!r}")
            left, right = _split_columns(ln)
            for player, part in ((0, left), (1, right)):
                a = _parse_entry(part, player)
                if a is not None:
                    a.line = n
                    game.actions.append(a)
        except MatFormatError as exc:
            raise MatFormatError(f"line {n}: {exc}") from None
    if expect_names:
        raise MatFormatError(f"line {len(lines)}: the file ends before the players of game {game.number}")
    return match


def read_mat(path: str | Path) -> MatMatch:
    """:func:`parse_mat` of a file; :class:`MatFormatError` on unreadable content."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MatFormatError(f"cannot read {path}: {exc}") from None
    return parse_mat(text)


def sorted_steps(steps: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Steps in a canonical order, to compare plays written in different orders."""
    return tuple(sorted(steps, key=lambda s: (-s[0], -s[1])))
