"""A play typed in parts: each part must begin a legal play of the roll."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Sequence

from engine.dice import Roll
from engine.notation import (
    AmbiguousPlayError,
    IllegalPlayError,
    NotationError,
    Play,
    apply_step,
    checker_moves,
    format_moves,
    format_play,
    legal_plays,
    point_name,
)
from engine.notation import parse_chains
from engine.position import BAR, Position


# --------------------------------------------------------------------------- plays typed in parts
Step = tuple[int, int, int]
"""One die of a typed play: ``(from, to, die)``; from 25 = bar, to 0 = off."""

_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


def _single_step(board: Sequence[int], p: int, d: int) -> tuple[int, str]:
    """Where die ``d`` takes the checker on ``p`` (``-1`` when it cannot), and why not.

    The rules of :mod:`engine.movegen` for one die: the bar first, blocked points, and
    bearing off (all 15 home; from the die's own point, or from the highest point when
    the die is higher than every occupied point).
    """
    name = point_name(p)
    if board[p] <= 0:
        return -1, f"there is no checker on {name} to move"
    if p != BAR and board[BAR] > 0:
        many = board[BAR] > 1
        return -1, f"the checker{'s' if many else ''} on the bar must enter first"
    dest = p - d
    if dest >= 1:
        if board[dest] < -1:
            return -1, f"point {dest} is blocked"
        return dest, ""
    if any(board[q] > 0 for q in range(7, 26)):
        return -1, "checkers can be borne off only when all 15 are in the home board"
    if dest == 0 or not any(board[q] > 0 for q in range(p + 1, 7)):
        return 0, ""
    return -1, f"a {d} bears off from {p} only when no checker is on a higher point"


def _moved(board: tuple[int, ...], p: int, dest: int) -> tuple[int, ...]:
    b = list(board)
    apply_step(b, p, dest)
    return tuple(b)


def _without(dice: tuple[int, ...], used: Sequence[int]) -> tuple[int, ...]:
    rest = list(dice)
    for d in used:
        rest.remove(d)
    return tuple(rest)


def _reachable(board: tuple[int, ...], dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Every board reachable by playing any number of ``dice`` one at a time, in any order."""
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    out: set[tuple[int, ...]] = set()
    todo = [(board, tuple(sorted(dice)))]
    while todo:
        b, rest = todo.pop()
        if (b, rest) in seen:
            continue
        seen.add((b, rest))
        out.add(b)
        for d in set(rest):
            after = _without(rest, (d,))
            for p in range(25, 0, -1):
                dest, _ = _single_step(b, p, d)
                if dest >= 0:
                    todo.append((_moved(b, p, dest), after))
    return out


def _max_dice(board: tuple[int, ...], dice: tuple[int, ...]) -> int:
    """How many of ``dice`` can still be played from ``board``."""
    best = 0
    for d in set(dice):
        for p in range(25, 0, -1):
            dest, _ = _single_step(board, p, d)
            if dest >= 0:
                best = max(best, 1 + _max_dice(_moved(board, p, dest), _without(dice, (d,))))
                if best == len(dice):
                    return best
    return best


def dice_words(dice: Sequence[int]) -> str:
    """``the 1``, ``the 6 and the 1``, ``three 4s``."""
    if len(dice) == 1:
        return f"the {dice[0]}"
    if len(set(dice)) == 1:
        return f"{_COUNT_WORDS[len(dice)]} {dice[0]}s"
    return " and ".join(f"the {d}" for d in sorted(dice, reverse=True))


def _dice_sequences(dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Every ordered choice of one or more of ``dice``."""
    return {seq for k in range(1, len(dice) + 1) for seq in permutations(dice, k)}


@dataclass(frozen=True, slots=True)
class TypedTurn:
    """The checker moves typed so far in one turn, each typed part a prefix step of a legal play.

    ``parts`` are the lines the player typed, each as its :data:`Step` s; every step is a
    legal single-die move and the steps so far lead to at least one legal play of ``roll``
    (:func:`engine.notation.legal_plays`). :meth:`add` checks a new part, :meth:`undo`
    takes back the last one, :attr:`complete` is the legal play once the parts make one.
    """

    position: Position
    roll: Roll
    legal: tuple[Play, ...] = field(compare=False, repr=False)
    parts: tuple[tuple[Step, ...], ...] = ()

    @classmethod
    def start(cls, position: Position, roll: Roll) -> "TypedTurn":
        return cls(position, roll, tuple(legal_plays(position, roll)))

    @classmethod
    def replay(cls, position: Position, roll: Roll, parts: Sequence[Sequence[Sequence[int]]]) -> "TypedTurn":
        """The turn with ``parts`` (``[[from, to, die], ...]`` each) typed; IllegalPlayError if
        they are not a legal beginning of a play."""
        turn = cls.start(position, roll)
        for part in parts:
            steps = tuple((int(f), int(t), int(d)) for f, t, d in part)
            if not steps:
                raise IllegalPlayError("an empty part")
            turn = turn._checked(steps, format_moves(checker_moves(turn.current, [s[:2] for s in steps])))
        return turn

    # ------------------------------------------------------------- views
    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(s for part in self.parts for s in part)

    @property
    def board(self) -> tuple[int, ...]:
        b = self.position.board
        for f, t, _ in self.steps:
            b = _moved(b, f, t)
        return b

    @property
    def current(self) -> Position:
        """The position with the typed moves made (still the mover's view)."""
        return Position(self.board)

    @property
    def remaining(self) -> tuple[int, ...]:
        """The dice still to play, highest first."""
        return tuple(sorted(_without(self.roll.dice(), [d for _, _, d in self.steps]), reverse=True))

    @property
    def text(self) -> str:
        """The typed moves in standard notation (``""`` when none)."""
        return format_play(self.position, [s[:2] for s in self.steps])

    def part_text(self, i: int = -1) -> str:
        """Notation of one typed part (the last by default)."""
        before = TypedTurn(self.position, self.roll, self.legal, self.parts[:i % len(self.parts)])
        return format_play(before.current, [s[:2] for s in self.parts[i]])

    @property
    def complete(self) -> Play | None:
        """The legal play the typed moves make, or None while more must be played."""
        board = self.board
        return next((p for p in self.legal if p.result.board == board), None)

    def continuations(self) -> list[Play]:
        """The legal plays that begin with the typed moves."""
        reach = _reachable(self.board, self.remaining)
        return [p for p in self.legal if p.result.board in reach]

    def next_steps(self) -> tuple[Step, ...]:
        """Every single-die move that may be made next: legal for its die and leading on to
        a legal play (the moves a board lets the player click), from the bar down, high
        die first; ``()`` once the typed moves make a play."""
        targets = {p.result.board for p in self.legal}
        memo: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}

        def moves(b: tuple[int, ...], rest: tuple[int, ...]):
            for d in sorted(set(rest), reverse=True):
                for p in range(25, 0, -1):
                    dest, _ = _single_step(b, p, d)
                    if dest >= 0:
                        yield (p, dest, d), _moved(b, p, dest), _without(rest, (d,))

        def leads(b: tuple[int, ...], rest: tuple[int, ...]) -> bool:
            if b in targets:
                return True
            if (b, rest) not in memo:
                memo[(b, rest)] = any(leads(nb, r) for _, nb, r in moves(b, rest))
            return memo[(b, rest)]

        if self.complete is not None:
            return ()
        return tuple(step for step, nb, r in moves(self.board, self.remaining) if leads(nb, r))

    # ------------------------------------------------------------- changes
    def undo(self) -> "TypedTurn":
        """The turn without its last typed part."""
        return TypedTurn(self.position, self.roll, self.legal, self.parts[:-1])

    def add(self, text: str) -> "TypedTurn":
        """The turn with the part ``text`` (one or more checker moves) typed after the others.

        Raises :class:`NotationError` for text that is not notation, :class:`IllegalPlayError`
        (with the reason) when no legal play begins with the moves typed so far and these,
        and :class:`AmbiguousPlayError` when the text reads as different positions.
        """
        chains = parse_chains(text)
        if not chains:
            raise NotationError("type one or more checker moves, e.g. 8/5")
        shown = " ".join(text.split())
        board0 = self.board
        rest0 = self.remaining
        if not rest0:
            raise IllegalPlayError("all the dice are played")
        found: dict[tuple[int, ...], tuple[Step, ...]] = {}
        failures: list[tuple[int, str]] = []

        def segment_ways(b, rest, a, z, star) -> list[tuple[tuple[int, ...], tuple[Step, ...]]]:
            ways = []
            fitting = [seq for seq in _dice_sequences(rest)
                       if (sum(seq) == a - z if z else sum(seq[:-1]) < a <= sum(seq))]
            if not fitting:
                failures.append((0, f"{point_name(a)}/{point_name(z)} does not fit {dice_words(rest)}"))
            for seq in fitting:
                pos, bb, steps, ok = a, b, [], True
                for n, d in enumerate(seq):
                    dest, why = _single_step(bb, pos, d)
                    if dest < 0 or (dest == 0 and n < len(seq) - 1):
                        if why:
                            failures.append((len(steps) + 1, why))
                        ok = False
                        break
                    steps.append((pos, dest, d))
                    bb = _moved(bb, pos, dest)
                    pos = dest
                if not ok or pos != z:
                    continue
                if star and b[z] != -1:
                    failures.append((len(steps) + 1, f"there is no blot to hit on {z}"))
                    continue
                ways.append((bb, tuple(steps)))
            return ways

        def rec(segs, k, b, rest, steps) -> None:
            if k == len(segs):
                key = (b, tuple(sorted(_without(self.roll.dice(), [d for *_, d in self.steps + steps]))))
                prev = found.get(key)
                if prev is None or sum(d for *_, d in steps) < sum(d for *_, d in prev):
                    found[key] = steps
                return
            a, z, star = segs[k]
            for bb, st in segment_ways(b, rest, a, z, star):
                rec(segs, k + 1, bb, _without(rest, [d for *_, d in st]), steps + st)

        for order in dict.fromkeys(permutations(range(len(chains)))):
            segs = [(a, z, star) for i in order
                    for (a, _), (z, star) in zip(chains[i], chains[i][1:])]
            rec(segs, 0, board0, rest0, ())
            if found:
                break
        done = self.text
        head = f"after {done} {dice_words(rest0)} must still be played, but " if done else ""
        if not found:
            why = max(failures)[1] if failures else f"{shown} does not fit {dice_words(rest0)}"
            if done:
                raise IllegalPlayError(f"{head}no legal play starts with {done} {shown} ({why})")
            raise IllegalPlayError(f"{shown}: {why}")
        good = {}
        for (board, _), steps in found.items():
            turn = TypedTurn(self.position, self.roll, self.legal, self.parts + (steps,))
            if turn.complete is not None or turn.continuations():
                best = good.get(board)
                if best is None or sum(d for *_, d in steps) < sum(d for *_, d in best.parts[-1]):
                    good[board] = turn
        if not good:
            (board, _), steps = next(iter(found.items()))
            rest = _without(rest0, [d for *_, d in steps])
            used = len(self.steps) + len(steps)
            most = max(len(p.moves) for p in self.legal)
            if used + _max_dice(board, rest) < most:
                why = (f"then {dice_words(rest)} cannot be played, and a play must use as many dice as it can"
                       f" ({most} here)")
            elif most == 1 and not self.roll.is_double:
                why = f"only one die can be played, and then the larger ({self.roll.high}) must be played"
            else:
                why = "it does not lead to a legal play"
            typed = f"{done} {shown}" if done else shown
            raise IllegalPlayError(f"{head}no legal play starts with {typed} ({why})")
        if len(good) > 1:
            options = " or ".join(t.part_text() for t in good.values())
            raise AmbiguousPlayError(f"{shown!r} could mean {options}; write the intermediate points")
        return next(iter(good.values()))

    def _checked(self, steps: tuple[Step, ...], shown: str) -> "TypedTurn":
        """The turn with ``steps`` added, each checked as a legal die move leading to a legal play."""
        rest = list(self.remaining)
        b = self.board
        for f, t, d in steps:
            dest, why = _single_step(b, f, d)
            if d not in rest or dest != t:
                raise IllegalPlayError(f"{shown}: {why or f'{point_name(f)}/{point_name(t)} is not a move of a {d}'}")
            rest.remove(d)
            b = _moved(b, f, t)
        turn = TypedTurn(self.position, self.roll, self.legal, self.parts + (steps,))
        if turn.complete is None and not turn.continuations():
            raise IllegalPlayError(f"no legal play starts with {turn.text}")
        return turn

    @classmethod
    def of_play(cls, position: Position, roll: Roll, play: Play) -> "TypedTurn":
        """The turn with a whole legal ``play`` typed as one part."""
        turn = cls.start(position, roll)
        rest = list(roll.dice())
        steps = []
        b = position.board
        for m in play.moves:
            f, t = m.from_point, m.to_point
            # a bear-off uses the exact die when it can, else the smallest larger one that bears off
            d = next(d for d in sorted(rest) if (f - d == t if t else f - d <= 0 and _single_step(b, f, d)[0] == 0))
            rest.remove(d)
            steps.append((f, t, d))
            b = _moved(b, f, t)
        return TypedTurn(position, roll, turn.legal, (tuple(steps),))


