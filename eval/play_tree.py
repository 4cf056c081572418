"""The legal plays of a roll and every legal prefix of them, as a tree of states.

A state is a turn in progress: the board and the dice still to play. From the root (the
position and the whole roll) a step (one die moving one checker) leads to the next
state; a state is in the tree only when it begins a legal play of
:func:`engine.notation.legal_plays`. The steps come from the legal plays themselves,
taken in every order the rules allow; an order is checked by the move generator's rule
for one die (:func:`engine.notation.die_destination`).
"""
from __future__ import annotations

from typing import Iterator, Sequence

from engine.dice import Roll
from engine.notation import Play, apply_step, die_destination, legal_plays
from engine.position import Position

Step = tuple[int, int, int]
"""One die of a typed play: ``(from, to, die)``; from 25 = bar, to 0 = off."""
Board = tuple[int, ...]
State = tuple[Board, tuple[int, ...]]
"""A turn in progress: the board and the dice still to play, highest first."""
Segment = tuple[int, int, bool]
"""One typed stretch of a checker's way: ``(from, to, starred)``."""


def moved(board: Board, *steps: Sequence[int]) -> Board:
    """``board`` after the ``(from, to, ...)`` steps."""
    b = list(board)
    for f, t, *_ in steps:
        apply_step(b, f, t)
    return tuple(b)


def without(items: tuple, used: Sequence) -> tuple:
    """``items`` less one of each of ``used``."""
    rest = list(items)
    for x in used:
        rest.remove(x)
    return tuple(rest)


class PlayTree:
    """The legal plays of a roll and every legal prefix of them, as states linked by steps.

    Each play's checker moves (and, for a mixed roll, the other way of one checker's two
    moves, e.g. 24/23/20 for 24/21/20) are taken in every order the rules allow.
    """

    def __init__(self, position: Position, roll: Roll) -> None:
        self.roll = roll
        self.plays: tuple[Play, ...] = tuple(legal_plays(position, roll))
        self.root: State = (position.board, tuple(sorted(roll.dice(), reverse=True)))
        self.edges: dict[State, dict[Step, State]] = {}
        self.reach: dict[State, set[int]] = {}
        """The plays (indices into :attr:`plays`) that each state is a prefix of."""
        self.results: dict[Board, int] = {p.result.board: i for i, p in enumerate(self.plays)}
        """Each legal result: a typed turn that reaches one is complete."""
        self._dest: dict[tuple[Board, int, int], int | None] = {}
        self._grown: dict[tuple[State, tuple], bool] = {}
        for i, play in enumerate(self.plays):
            for pool in self._ways(play):
                if moved(self.root[0], *pool) == play.result.board:
                    self._grow(i, self.root, tuple(sorted(pool)))

    def _ways(self, play: Play) -> list[tuple[tuple[int, int], ...]]:
        """The play's moves; for a mixed roll whose one checker moves twice, also by the
        other intermediate point, and when that bears off the last checker, by one die."""
        pool = tuple((m.from_point, m.to_point) for m in play.moves)
        if self.roll.is_double or len(pool) != 2:
            return [pool]
        first, second = pool if pool[1][0] == pool[0][1] else pool[::-1]
        if second[0] != first[1]:
            return [pool]
        a, c = first[0], second[1]
        mid = a - (self.roll.high + self.roll.low - (first[0] - first[1]))
        ways = [pool] + ([((a, mid), (mid, c))] if mid >= 1 else [])
        if c == 0 and not any(x > 0 for x in play.result.board):  # the game ends at once
            ways.append(((a, 0),))
        return ways

    def destination(self, board: Board, f: int, d: int) -> int | None:
        key = (board, f, d)
        if key not in self._dest:
            self._dest[key] = die_destination(board, f, d)
        return self._dest[key]

    def _grow(self, i: int, state: State, pool: tuple) -> bool:
        """Add to the tree every order in which play ``i``'s moves ``pool`` (sorted) can be
        made from ``state``, one die each; False when there is none."""
        key = (state, pool)
        if key not in self._grown:
            board, rest = state
            ok = not pool
            for f, t in dict.fromkeys(pool):
                for d in set(rest):
                    if (f - d == t if t else f - d <= 0) and self.destination(board, f, d) == t:
                        nxt = (moved(board, (f, t)), without(rest, (d,)))
                        if self._grow(i, nxt, without(pool, ((f, t),))):
                            self.edges.setdefault(state, {})[(f, t, d)] = nxt
                            ok = True
            if ok:
                self.reach.setdefault(state, set()).add(i)
            self._grown[key] = ok
        return self._grown[key]

    def after(self, state: State, steps: Sequence[Step]) -> State | None:
        """The state ``steps`` lead to from ``state``, None when they begin no legal play."""
        for step in steps:
            state = self.edges.get(state, {}).get(step)
            if state is None:
                return None
        return state

    def segment(self, state: State, a: int, z: int) -> Iterator[tuple[State, tuple[Step, ...]]]:
        """The ways (end state, steps) one checker goes from ``a`` to ``z`` by legal prefixes."""
        for (f, t, d), nxt in self.edges.get(state, {}).items():
            if f != a:
                continue
            if t == z:
                yield nxt, ((f, t, d),)
            elif t > z and t != 0:
                for end, more in self.segment(nxt, t, z):
                    yield end, ((f, t, d),) + more

    def matches(self, state: State, segs: Sequence[Segment], before: Board | None = None
                ) -> Iterator[tuple[State, tuple[Step, ...]]]:
        """The ways the typed ``segs`` continue ``state`` as a prefix of a legal play. A
        starred point must hold a blot when the checker comes (or, given ``before``, the
        board the part starts from, on that board: ``13/1*(2)``)."""
        if not segs:
            yield state, ()
            return
        (a, z, star), rest = segs[0], segs[1:]
        if star and (state[0] if before is None else before)[z] != -1:
            return
        for mid, steps in self.segment(state, a, z):
            for end, more in self.matches(mid, rest, before):
                yield end, steps + more
