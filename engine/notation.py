"""Plays in standard backgammon notation, and the public list of legal plays.

A :class:`CheckerMove` is one die's move of one checker; a :class:`Play` is the whole
turn: the checker moves and the resulting position. Points are in the mover's
numbering: 1-24, ``bar`` (25) and ``off`` (0).

Formatting follows GNU Backgammon: moves sorted from the back, the moves of one checker
merged into a chain (``24/18/13`` is written ``24/13``) except that an intermediate hit
is kept (``24/18*/13``), identical moves counted (``6/off(2)``, ``8/4(2) 6/2(2)``), and
``*`` written on every hit.

Parsing accepts what players type: ``8/5 6/5``, ``13/10*``, ``bar/23``, ``25/23``,
``6/off``, ``6/0``, ``24/18/13``, ``24/13`` (one checker using both dice), ``6/off(2)``.
``*`` is optional; a text is accepted only when the checker movement it describes
reaches a legal result of that roll (:func:`engine.movegen.legal_results_with_steps`).
Errors are typed: :class:`NotationError` (syntax), :class:`IllegalPlayError` (readable
but not legal, with the reason) and :class:`AmbiguousPlayError` (several results).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import permutations
from typing import Iterable, Sequence

import numpy as np

from engine.dice import Roll
from engine.movegen import _legal as _legal_die_move, legal_results_with_steps
from engine.position import BAR, Position

OFF = 0


class NotationError(ValueError):
    """Text that is not a play in standard notation."""


class IllegalPlayError(ValueError):
    """A well-formed play that is not legal for the position and roll."""


class AmbiguousPlayError(ValueError):
    """A play text that matches several different results; ``candidates`` lists them."""

    def __init__(self, message: str, candidates: Sequence["Play"] = ()) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


def point_name(p: int) -> str:
    """``bar`` for 25, ``off`` for 0, else the number."""
    return "bar" if p == BAR else "off" if p == OFF else str(p)


@dataclass(frozen=True, slots=True)
class CheckerMove:
    """One checker moved by one die: ``from_point`` 1-25 (25 = bar) to ``to_point`` 0-24 (0 = off)."""

    from_point: int
    to_point: int
    hit: bool = False

    def __post_init__(self) -> None:
        if not (1 <= self.from_point <= 25 and 0 <= self.to_point <= 24 and self.to_point < self.from_point):
            raise ValueError(f"not a checker move: {self.from_point}/{self.to_point}")
        if self.hit and self.to_point == OFF:
            raise ValueError("bearing off cannot hit")

    def __str__(self) -> str:
        return f"{point_name(self.from_point)}/{point_name(self.to_point)}{'*' if self.hit else ''}"


@dataclass(frozen=True, slots=True)
class Play:
    """A whole turn: the checker moves in the order made, and the result (mover's view).

    ``result`` is still seen from the player who moved; :attr:`next_position` is the
    same position with the opponent on roll.
    """

    moves: tuple[CheckerMove, ...]
    result: Position
    notation: str = field(default="", compare=False)
    """The text :func:`legal_plays` wrote (it knows the position); derived when empty."""

    @property
    def text(self) -> str:
        """Standard notation, ``""`` when no checker could move."""
        return self.notation or format_moves(self.moves)

    @property
    def next_position(self) -> Position:
        """The result seen from the opponent, who is on roll next."""
        return self.result.flip()

    def steps(self) -> list[list[int]]:
        """The protocol's ``steps``: ``[[from, to], ...]``, one per die, in the order made."""
        return [[m.from_point, m.to_point] for m in self.moves]

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------- formatting
def apply_step(board: list[int], f: int, t: int) -> bool:
    """Move one checker ``f`` -> ``t`` (0 = off) on a mutable board (mover's view); returns
    True when it hits a blot, which goes to the opponent's bar."""
    board[f] -= 1
    if t == OFF:
        return False
    if board[t] == -1:
        board[t] = 1
        board[0] -= 1
        return True
    board[t] += 1
    return False


def die_destination(board: Sequence[int], from_point: int, die: int) -> int | None:
    """Where ``die`` takes the mover's checker on ``from_point`` (0 = off), or None when the
    rules forbid it: the move generator's own rule for one die (:mod:`engine.movegen`).

    >>> die_destination(Position.start().board, 24, 3), die_destination(Position.start().board, 6, 6)
    (21, None)
    """
    b = np.ascontiguousarray(board, dtype=np.int8)
    outside = int(np.maximum(b[7:26], 0).sum())
    dest = int(_legal_die_move(b, int(from_point), int(die), outside))
    return None if dest < 0 else dest


def _replay(board: Sequence[int], steps: Iterable[Sequence[int]]) -> list[tuple[int, int, bool]]:
    """``(from, to, hit)`` of each ``(from, to)`` step, replayed on a copy of ``board``."""
    b = list(board)
    out = []
    for f, t in steps:
        f, t = int(f), int(t)
        if not (1 <= f <= 25 and 0 <= t < f) or b[f] <= 0:
            raise IllegalPlayError(f"no checker can move {point_name(f)}/{point_name(t)}")
        if t != OFF and b[t] < -1:
            raise IllegalPlayError(f"point {t} is blocked")
        out.append((f, t, apply_step(b, f, t)))
    return out


def checker_moves(position: Position, steps: Iterable[Sequence[int]]) -> tuple[CheckerMove, ...]:
    """The :class:`CheckerMove` of each ``(from, to)`` step, with hits found by replaying them."""
    return tuple(CheckerMove(f, t, h) for f, t, h in _replay(position.board, steps))


def _format(moves: list[tuple[int, int, bool]], board: Sequence[int] | None) -> str:
    """:func:`format_moves` on ``(from, to, hit)`` triples (``board``: where they start)."""
    if len(moves) == 2:  # the common case: two moves that are not one checker's chain
        a, b = moves if (moves[0][0], moves[0][1]) >= (moves[1][0], moves[1][1]) else (moves[1], moves[0])
        if b[0] != a[1]:
            ta = f"{point_name(a[0])}/{point_name(a[1])}"
            if a[0] == b[0] and a[1] == b[1]:
                return f"{ta}{'*' if a[2] or b[2] else ''}(2)"
            return f"{ta}{'*' if a[2] else ''} {point_name(b[0])}/{point_name(b[1])}{'*' if b[2] else ''}"
    return _format_chains(moves, board)


def _format_chains(moves: list[tuple[int, int, bool]], board: Sequence[int] | None) -> str:
    """:func:`_format` for any moves: chains merged, repeats counted."""
    # from the back: by from point, then to point, both descending (stable for equal moves)
    rest = sorted(moves, key=lambda m: (m[0], m[1]), reverse=True)
    n = len(rest)
    used = [False] * n
    groups: dict[tuple[int, ...], list] = {}
    for i in range(n):
        if used[i]:
            continue
        used[i] = True
        f, end, hit = rest[i]
        path = [(f, False), (end, hit)]
        while end != OFF:
            # a continuation starts lower, so it sorts later
            for j in range(i + 1, n):
                if not used[j] and rest[j][0] == end:
                    used[j] = True
                    end, hit = rest[j][1], rest[j][2]
                    path.append((end, hit))
                    break
            else:
                break
        if len(path) == 2:
            kept = path
        else:
            kept = [path[0]] + [w for w in path[1:-1] if w[1]] + [path[-1]]
            if board is not None and len(path) == 3 and not path[1][1]:
                start, mid, stop = path[0][0], path[1][0], path[2][0]
                d1 = start - mid
                # the second die: exact, or (bearing off) possibly larger than the distance
                for d2 in ((mid - stop,) if stop != OFF else range(mid, 7)):
                    alt = start - d2
                    if d2 != d1 and 1 <= alt <= 24 and board[alt] == -1:
                        kept = path
                        break
        key = tuple(p for p, _ in kept)
        g = groups.get(key)
        if g is None:
            groups[key] = [1, [h for _, h in kept]]
        else:
            g[0] += 1
            g[1] = [h1 or h2 for h1, h2 in zip(g[1], (h for _, h in kept))]
    parts = []
    for key, (count, hits) in groups.items():
        text = "/".join(point_name(p) + "*" if h else point_name(p) for p, h in zip(key, hits))
        parts.append(text if count == 1 else f"{text}({count})")
    return " ".join(parts)


def format_moves(moves: Sequence[CheckerMove], position: Position | None = None) -> str:
    """Notation of checker moves: sorted from the back, chains merged, repeats counted.

    With the ``position`` the moves start from, a merged chain keeps its intermediate
    point when the other order of its two dice would stop on a blot (``24/19/13`` rather
    than ``24/13`` when ``24/18*/13`` is also possible), so that the text reads back to
    this play only.

    >>> format_moves([CheckerMove(8, 5), CheckerMove(6, 5)])
    '8/5 6/5'
    >>> format_moves([CheckerMove(24, 18, True), CheckerMove(18, 13)])
    '24/18*/13'
    """
    triples = [(m.from_point, m.to_point, m.hit) for m in moves]
    return _format(triples, None if position is None else position.board)


def format_play(position: Position, steps: Iterable[Sequence[int]]) -> str:
    """Standard notation of a play given as ``(from, to)`` steps from ``position``.

    >>> format_play(Position.start(), [(8, 5), (6, 5)])
    '8/5 6/5'
    """
    return _format(_replay(position.board, steps), position.board)


# ---------------------------------------------------------------------------- legal plays
def _make_play(position: Position, board: Sequence[int], steps: np.ndarray, n: int) -> Play:
    st = [(int(steps[j, 0]), int(steps[j, 1])) for j in range(n)]
    moves = checker_moves(position, st)
    return Play(moves, Position(tuple(int(x) for x in board)), format_moves(moves, position))


def legal_plays(position: Position, roll: Roll) -> list[Play]:
    """One :class:`Play` per distinct legal result; a roll that cannot be played gives one
    play with no moves and the unchanged position."""
    boards, steps, nsteps = legal_results_with_steps(position.array(), roll.high, roll.low)
    return [_make_play(position, boards[k], steps[k], int(nsteps[k])) for k in range(len(boards))]


def play_from_steps(position: Position, roll: Roll, steps: Iterable[Sequence[int]]) -> Play:
    """The legal play reached by ``(from, to)`` steps (e.g. the protocol's ``steps``).

    Raises :class:`IllegalPlayError` when the steps do not reach a legal result.
    """
    st = [tuple(int(v) for v in s) for s in steps]
    for s in st:
        if len(s) != 2:
            raise NotationError(f"a step is [from, to], got {list(s)}")
    moves = checker_moves(position, st)
    b = list(position.board)
    for m in moves:
        apply_step(b, m.from_point, m.to_point)
    for p in legal_plays(position, roll):
        if p.result.board == tuple(b):
            return p
    raise IllegalPlayError(f"{format_moves(moves) or 'no move'} is not a legal play for {_roll(roll)}")


# ---------------------------------------------------------------------------- parsing
_TOKEN = re.compile(r"^(bar|\d{1,2})((?:/(?:off|\d{1,2})\*?)+)(?:\((\d)\))?$")
_WAYPOINT = re.compile(r"/(off|\d{1,2})(\*?)")
_EMPTY = {"", "none", "-", "no move", "cannot move", "can't move"}


def parse_chains(text: str) -> list[list[tuple[int, bool]]]:
    """The syntax of a play (or part of one): chains of ``(point, starred)`` waypoints,
    counts expanded, not yet checked against a position. Raises NotationError."""
    if not isinstance(text, str):
        raise NotationError(f"a play is text, got {type(text).__name__}")
    t = text.strip().lower()
    if t in _EMPTY:
        return []
    chains = []
    for tok in re.split(r"[\s,]+", t):
        if not tok:
            continue
        m = _TOKEN.match(tok)
        if not m:
            raise NotationError(f"cannot read {tok!r}: write moves like 8/5, 13/10*, bar/23, 6/off, 8/4(2)")
        start = 25 if m.group(1) == "bar" else int(m.group(1))
        if not 1 <= start <= 25:
            raise NotationError(f"{tok!r}: a move starts on a point 1-24 or the bar")
        path = [(start, False)]
        for wp, star in _WAYPOINT.findall(m.group(2)):
            p = 0 if wp == "off" else int(wp)
            if path[-1][0] == OFF:
                raise NotationError(f"{tok!r}: nothing can follow off")
            if not 0 <= p <= 24:
                raise NotationError(f"{tok!r}: points are 1-24, bar and off")
            if p >= path[-1][0]:
                raise NotationError(f"{tok!r}: checkers move down, from {point_name(path[-1][0])} to a lower point")
            if star and p == OFF:
                raise NotationError(f"{tok!r}: bearing off cannot hit")
            path.append((p, bool(star)))
        count = int(m.group(3)) if m.group(3) else 1
        if not 1 <= count <= 4:
            raise NotationError(f"{tok!r}: a repeat count is 1-4")
        chains.extend([path] * count)
    return chains


def _dice_orders(remaining: tuple[int, ...], a: int, b: int) -> set[tuple[int, ...]]:
    """Ordered dice sequences from ``remaining`` taking one checker from ``a`` to ``b``."""
    out: set[tuple[int, ...]] = set()
    n = len(remaining)
    for k in range(1, n + 1):
        for seq in set(permutations(remaining, k)):
            if b != OFF:
                if sum(seq) == a - b:
                    out.add(seq)
            elif sum(seq[:-1]) < a <= sum(seq):
                out.add(seq)
    return out


def _remove(remaining: tuple[int, ...], seq: tuple[int, ...]) -> tuple[int, ...]:
    r = list(remaining)
    for d in seq:
        r.remove(d)
    return tuple(r)


def _roll(roll: Roll) -> str:
    return f"{roll.high}-{roll.low}"


def parse_play(position: Position, roll: Roll, text: str) -> Play:
    """The legal play that ``text`` describes for ``position`` and ``roll``.

    >>> parse_play(Position.start(), Roll(3, 1), "8/5 6/5").text
    '8/5 6/5'
    """
    chains = parse_chains(text)
    boards, steps, nsteps = legal_results_with_steps(position.array(), roll.high, roll.low)
    index = {tuple(b): k for k, b in enumerate(boards.tolist())}
    max_dice = int(nsteps.max())
    shown = " ".join(text.split())

    def play_at(k: int) -> Play:
        return _make_play(position, boards[k], steps[k], int(nsteps[k]))

    if not chains:
        if max_dice == 0:
            return play_at(0)
        raise IllegalPlayError(f"{_roll(roll)} can be played, e.g. {play_at(0).text}")
    if max_dice == 0:
        raise IllegalPlayError(f"no legal play with {_roll(roll)}: the roll cannot be played")
    board0 = position.board
    for path in chains:
        for p, star in path[1:]:
            if star and board0[p] != -1:
                raise IllegalPlayError(f"{shown}: there is no blot to hit on {p}")

    segments = []
    for path in chains:
        for (a, _), (b, _) in zip(path, path[1:]):
            segments.append((a, b))

    results: dict[tuple[int, ...], int] = {}
    failures: list[tuple[int, str]] = []

    def rec(k: int, board: list[int], remaining: tuple[int, ...], used: int) -> None:
        if k == len(segments):
            key = tuple(board)
            results[key] = max(results.get(key, 0), used)
            return
        a, b = segments[k]
        orders = _dice_orders(remaining, a, b)
        if not orders:
            outside = any(board[i] > 0 for i in range(7, 26))
            why = ("checkers can be borne off only when all 15 are in the home board"
                   if b == OFF and outside else
                   f"{point_name(a)}/{point_name(b)} needs more dice than {_roll(roll)} gives"
                   if not remaining else f"{point_name(a)}/{point_name(b)} does not fit the dice {_roll(roll)}")
            failures.append((k, why))
        for seq in orders:
            nb = list(board)
            pos = a
            ok = True
            for d in seq:
                dest = max(pos - d, OFF)
                if nb[pos] <= 0:
                    failures.append((k, f"there is no checker on {point_name(pos)} to move"))
                    ok = False
                    break
                if dest != OFF and nb[dest] < -1:
                    failures.append((k, f"{point_name(a)}/{point_name(b)}: point {dest} is blocked"))
                    ok = False
                    break
                apply_step(nb, pos, dest)
                pos = dest
            if ok:
                rec(k + 1, nb, _remove(remaining, seq), used + len(seq))

    rec(0, list(board0), roll.dice(), 0)
    found = sorted({index[key] for key in results if key in index})
    if len(found) == 1:
        return play_at(found[0])
    if found:
        matched = [play_at(k) for k in found]
        options = " or ".join(p.text for p in matched)
        raise AmbiguousPlayError(f"{shown!r} could mean {options}; write the intermediate points", matched)
    plays = [play_at(k) for k in range(min(len(boards), 4))]
    raise IllegalPlayError(_diagnose(position, roll, shown, chains, results, failures, plays, max_dice,
                                     boards, steps, nsteps))


def _diagnose(position, roll, shown, chains, results, failures, plays, max_dice, boards, steps, nsteps) -> str:
    """One sentence saying why no reading of the text is a legal play."""
    if not results:
        if failures:
            return f"{shown}: {max(failures, key=lambda f: f[0])[1]}"
        return f"{shown} cannot be played with {_roll(roll)}"
    b = position.board
    if b[BAR] > 0:
        entering = sum(1 for path in chains if path[0][0] == BAR)
        if entering < min(b[BAR], max_dice):
            return f"{shown}: the checker{'s' if b[BAR] > 1 else ''} on the bar must enter first"
    if any(path[-1][0] == OFF for path in chains):
        if all(any(r[i] > 0 for i in range(7, 26)) for r in results):
            return f"{shown}: checkers can be borne off only when all 15 are in the home board"
    used = max(results.values())
    if used < max_dice:
        need = {2: "both dice", 3: "three dice", 4: "all four dice"}.get(max_dice, f"{max_dice} dice")
        return f"{shown}: {need} can be played, so {need} must be played (this uses {used})"
    if max_dice == 1 and not roll.is_double:
        legal_dice = {int(steps[k, 0, 0] - steps[k, 0, 1]) for k in range(len(boards))}
        if roll.high in legal_dice or any(int(steps[k, 0, 1]) == OFF for k in range(len(boards))):
            return f"{shown}: only one die can be played, and then the larger ({roll.high}) must be played"
    if any(path[-1][0] == OFF for path in chains):
        return (f"{shown}: a die bears off from its own point, or from the highest point when "
                f"it is higher than every occupied point; otherwise it must be played inside")
    examples = ", ".join(p.text for p in plays[:4])
    return f"{shown} is not a legal play for {_roll(roll)} (legal plays include {examples})"
