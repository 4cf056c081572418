"""A play typed in parts: each part must begin a legal play of the roll.

The legal plays are those of :func:`engine.notation.legal_plays`, and nothing else decides:
a typed part is accepted iff the moves typed so far are a prefix of a legal play, made in
one of the orders in which that play's own checker moves may be made
(:class:`eval.play_tree.PlayTree`). The rules of the whole turn (play as many dice as
possible; the larger die when only one can be played) thus come from the full list, and
the order of a play's moves is checked by the move generator's rule for one die. The
reasons given for a refused part only explain the refusal.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Iterator, Sequence

from engine.dice import Roll
from engine.notation import AmbiguousPlayError, IllegalPlayError, NotationError, Play, format_play, parse_chains, point_name
from engine.position import BAR, Position
from eval.play_tree import Board, PlayTree, Segment, State, Step, moved, without

_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


def dice_words(dice: Sequence[int]) -> str:
    """``the 1``, ``the 6 and the 1``, ``three 4s``."""
    if len(dice) == 1:
        return f"the {dice[0]}"
    if len(set(dice)) == 1:
        return f"{_COUNT_WORDS[len(dice)]} {dice[0]}s"
    return " and ".join(f"the {d}" for d in sorted(dice, reverse=True))


def _dice_sum(steps: Sequence[Step]) -> int:
    return sum(d for *_, d in steps)


def _fitting(a: int, z: int, dice: Sequence[int]) -> set[tuple[int, ...]]:
    """The ordered choices of ``dice`` that take a checker from ``a`` exactly to ``z`` (or off)."""
    return {seq for k in range(1, len(dice) + 1) for seq in permutations(dice, k)
            if (sum(seq) == a - z if z else sum(seq[:-1]) < a <= sum(seq))}


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
                b, pos = moved(b, (pos, dest)), dest
            else:
                if pos != z:
                    continue
                if star and board[z] != -1:
                    failures.append((n + 2, f"there is no blot to hit on {z}"))
                    continue
                out += self._ruled((b, without(dice, seq)), rest, failures)
        return out
