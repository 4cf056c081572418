"""A play typed in parts: each part must begin a legal play of the roll.

The legal plays are those of :func:`engine.notation.legal_plays`, and nothing else decides:
a typed part is accepted iff the moves typed so far are a prefix of a legal play, made in
one of the orders in which that play's own checker moves may be made (:class:`PlayTree`).
The rules of the whole turn (play as many dice as possible; the larger die when only one
can be played) thus come from the full list, and the order of a play's moves is checked
by the move generator's rule for one die (:func:`engine.notation.die_destination`). The
reasons given for a refused part only explain the refusal.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Iterator, Sequence

from engine.dice import Roll
from engine.notation import (
    AmbiguousPlayError,
    IllegalPlayError,
    NotationError,
    Play,
    apply_step,
    die_destination,
    format_play,
    legal_plays,
    parse_chains,
    point_name,
)
from engine.position import BAR, Position


Step = tuple[int, int, int]
"""One die of a typed play: ``(from, to, die)``; from 25 = bar, to 0 = off."""
Board = tuple[int, ...]
State = tuple[Board, tuple[int, ...]]
"""A turn in progress: the board and the dice still to play, highest first."""
Segment = tuple[int, int, bool]
"""One typed stretch of a checker's way: ``(from, to, starred)``."""

_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


def dice_words(dice: Sequence[int]) -> str:
    """``the 1``, ``the 6 and the 1``, ``three 4s``."""
    if len(dice) == 1:
        return f"the {dice[0]}"
    if len(set(dice)) == 1:
        return f"{_COUNT_WORDS[len(dice)]} {dice[0]}s"
    return " and ".join(f"the {d}" for d in sorted(dice, reverse=True))


def _moved(board: Board, *steps: Sequence[int]) -> Board:
    """``board`` after the ``(from, to, ...)`` steps."""
    b = list(board)
    for f, t, *_ in steps:
        apply_step(b, f, t)
    return tuple(b)


def _without(items: tuple, used: Sequence) -> tuple:
    rest = list(items)
    for x in used:
        rest.remove(x)
    return tuple(rest)


def _dice_sum(steps: Sequence[Step]) -> int:
    return sum(d for *_, d in steps)


def _fitting(a: int, z: int, dice: Sequence[int]) -> set[tuple[int, ...]]:
    """The ordered choices of ``dice`` that take a checker from ``a`` exactly to ``z`` (or off)."""
    return {seq for k in range(1, len(dice) + 1) for seq in permutations(dice, k)
            if (sum(seq) == a - z if z else sum(seq[:-1]) < a <= sum(seq))}


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
                if _moved(self.root[0], *pool) == play.result.board:
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
                        nxt = (_moved(board, (f, t)), _without(rest, (d,)))
                        if self._grow(i, nxt, _without(pool, ((f, t),))):
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


def _refused_die(board: Board, p: int, d: int) -> str:
    """Why die ``d`` cannot move the checker on ``p`` (only called when it cannot)."""
    if board[p] <= 0:
        return f"there is no checker on {point_name(p)} to move"
    if p != BAR and board[BAR] > 0:
        return f"the checker{'s' if board[BAR] > 1 else ''} on the bar must enter first"
    if p - d >= 1:
        return f"point {p - d} is blocked"
    if any(board[q] > 0 for q in range(7, 26)):
        return "checkers can be borne off only when all 15 are in the home board"
    return f"a {d} bears off from {p} only when no checker is on a higher point"


def _segment_orders(chains: list) -> Iterator[list[Segment]]:
    """The typed checker ways as segments, the chains taken in every order."""
    for order in dict.fromkeys(permutations(range(len(chains)))):
        yield [(a, z, star) for i in order for (a, _), (z, star) in zip(chains[i], chains[i][1:])]


@dataclass(frozen=True, slots=True)
class TypedTurn:
    """The checker moves typed so far in one turn, each typed part a prefix step of a legal play.

    ``parts`` are the lines the player typed, each as its :data:`Step` s; the steps so far
    are a prefix of at least one legal play of ``roll`` (:class:`PlayTree`). :meth:`add`
    checks a new part, :meth:`undo` takes back the last one, :attr:`complete` is the legal
    play once the parts make one.
    """

    position: Position
    roll: Roll
    tree: PlayTree = field(compare=False, repr=False)
    parts: tuple[tuple[Step, ...], ...] = ()

    @classmethod
    def start(cls, position: Position, roll: Roll) -> "TypedTurn":
        return cls(position, roll, PlayTree(position, roll))

    @classmethod
    def replay(cls, position: Position, roll: Roll, parts: Sequence[Sequence[Sequence[int]]]) -> "TypedTurn":
        """The turn with ``parts`` (``[[from, to, die], ...]`` each) typed; IllegalPlayError if
        they are not a legal beginning of a play."""
        turn = cls.start(position, roll)
        for part in parts:
            steps = tuple((int(f), int(t), int(d)) for f, t, d in part)
            if not steps:
                raise IllegalPlayError("an empty part")
            if turn.tree.after(turn.state, steps) is None:
                typed = " ".join(f"{point_name(f)}/{point_name(t)}" for f, t, _ in turn.steps + steps)
                raise IllegalPlayError(f"no legal play starts with {typed} (with those dice)")
            turn = replace(turn, parts=turn.parts + (steps,))
        return turn

    @classmethod
    def of_play(cls, position: Position, roll: Roll, play: Play) -> "TypedTurn":
        """The turn with a whole legal ``play`` typed as one part: its moves in their order,
        each with the smallest die that makes it."""
        turn = cls.start(position, roll)
        tree = turn.tree
        i = tree.results[play.result.board]
        state, steps = tree.root, []
        for m in play.moves:
            edges = tree.edges[state]
            step = min((s for s in edges if s[:2] == (m.from_point, m.to_point) and i in tree.reach[edges[s]]),
                       key=lambda s: s[2])
            steps.append(step)
            state = edges[step]
        return replace(turn, parts=(tuple(steps),))

    # ------------------------------------------------------------- views
    @property
    def legal(self) -> tuple[Play, ...]:
        """Every legal play of the roll (:func:`engine.notation.legal_plays`)."""
        return self.tree.plays

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(s for part in self.parts for s in part)

    @property
    def state(self) -> State:
        state = self.tree.after(self.tree.root, self.steps)
        assert state is not None, "a typed turn holds legal prefixes only"
        return state

    @property
    def board(self) -> Board:
        return self.state[0]

    @property
    def current(self) -> Position:
        """The position with the typed moves made (still the mover's view)."""
        return Position(self.board)

    @property
    def remaining(self) -> tuple[int, ...]:
        """The dice still to play, highest first."""
        return self.state[1]

    @property
    def text(self) -> str:
        """The typed moves in standard notation (``""`` when none)."""
        return format_play(self.position, [s[:2] for s in self.steps])

    def part_text(self, i: int = -1) -> str:
        """Notation of one typed part (the last by default)."""
        before = replace(self, parts=self.parts[:i % len(self.parts)])
        return format_play(before.current, [s[:2] for s in self.parts[i]])

    @property
    def complete(self) -> Play | None:
        """The legal play the typed moves make, or None while more must be played."""
        i = self.tree.results.get(self.board)
        return None if i is None else self.legal[i]

    @property
    def can_continue(self) -> bool:
        """Another move may follow the typed ones (even when they make a play already:
        6/off with 6-3 makes the play 6/3/off, and 3/off may still follow)."""
        return bool(self.tree.edges.get(self.state))

    def continuations(self) -> list[Play]:
        """The legal plays that begin with the typed moves."""
        return [self.legal[i] for i in sorted(self.tree.reach.get(self.state, ()))]

    def next_steps(self) -> tuple[Step, ...]:
        """Every single-die move that may be made next: legal for its die and leading on to
        a legal play (the moves a board lets the player click), high die first, then from
        the bar down; ``()`` once the typed moves make a play."""
        if self.complete is not None:
            return ()
        return tuple(sorted(self.tree.edges.get(self.state, {}), key=lambda s: (-s[2], -s[0])))

    # ------------------------------------------------------------- changes
    def undo(self) -> "TypedTurn":
        """The turn without its last typed part."""
        return replace(self, parts=self.parts[:-1])

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
        if not self.remaining:
            raise IllegalPlayError("all the dice are played")
        found: dict[State, tuple[Step, ...]] = {}
        for before in (None, self.board):
            for segs in _segment_orders(chains):
                for end, steps in self.tree.matches(self.state, segs, before):
                    prev = found.get(end)
                    if prev is None or _dice_sum(steps) < _dice_sum(prev):
                        found[end] = steps
                if found:
                    break
            if found:
                break
        good: dict[Board, tuple[Step, ...]] = {}
        for (board, _), steps in found.items():  # one reading per board: the smaller dice
            best = good.get(board)
            if best is None or _dice_sum(steps) < _dice_sum(best):
                good[board] = steps
        if len(good) > 1:
            options = " or ".join(sorted(replace(self, parts=self.parts + (s,)).part_text() for s in good.values()))
            raise AmbiguousPlayError(f"{shown!r} could mean {options}; write the intermediate points")
        if not good:
            raise IllegalPlayError(self._refusal(chains, shown))
        return replace(self, parts=self.parts + (next(iter(good.values())),))

    # ------------------------------------------------------------- why a part is refused
    def _refusal(self, chains: list, shown: str) -> str:
        """The sentence saying why no legal play begins with the typed moves and ``shown``."""
        done = self.text
        rest0 = self.remaining
        head = f"after {done} {dice_words(rest0)} must still be played, but " if done else ""
        typed = f"{done} {shown}" if done else shown
        failures: list[tuple[int, str]] = []
        ends: list[State] = []
        for segs in _segment_orders(chains):
            ends += self._ruled(self.state, segs, failures)
        if ends:  # every die move allowed, but no legal play goes on from there
            (_, rest), used = ends[0], len(rest0) - len(ends[0][1]) + len(self.steps)
            most = max(len(p.moves) for p in self.legal)
            if used < most:
                why = (f"then {dice_words(rest)} cannot {'all ' if len(rest) > 1 else ''}be played, "
                       f"and a play must use as many dice as it can ({most} here)")
            elif most == 1 and not self.roll.is_double:
                why = f"only one die can be played, and then the larger ({self.roll.high}) must be played"
            else:
                why = "it does not lead to a legal play"
            return f"{head}no legal play starts with {typed} ({why})"
        why = max(failures)[1] if failures else f"{shown} does not fit {dice_words(rest0)}"
        if done:
            return f"{head}no legal play starts with {typed} ({why})"
        return why if why.startswith(shown + " ") else f"{shown}: {why}"

    def _ruled(self, state: State, segs: Sequence[Segment], failures: list[tuple[int, str]]) -> list[State]:
        """Where ``segs`` lead by die moves the rules allow one at a time (legal plays or
        not), recording in ``failures`` (depth, reason) each one that is not allowed."""
        if not segs:
            return [state]
        (a, z, star), rest = segs[0], segs[1:]
        board, dice = state
        out: list[State] = []
        fitting = _fitting(a, z, dice)
        if not fitting:
            failures.append((0, f"{point_name(a)}/{point_name(z)} does not fit {dice_words(dice)}"))
        for seq in fitting:
            pos, b, n = a, board, 0
            for n, d in enumerate(seq):
                dest = self.tree.destination(b, pos, d)
                if dest is None:
                    failures.append((n + 1, _refused_die(b, pos, d)))
                    break
                if dest == 0 and n < len(seq) - 1:
                    break
                b, pos = _moved(b, (pos, dest)), dest
            else:
                if pos != z:
                    continue
                if star and board[z] != -1:
                    failures.append((n + 2, f"there is no blot to hit on {z}"))
                    continue
                out += self._ruled((b, _without(dice, seq)), rest, failures)
        return out
