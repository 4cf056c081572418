"""Plays explained in words, from features computed on the positions themselves.

Nothing here is canned text per position: :func:`play_facts` compares the position
before a play with the position after it (both in the mover's view, the opponent to
roll next) and measures

* ``hits``: opponent checkers sent to the bar, and the points (mover's numbering) where;
* ``made`` / ``broken``: points the mover holds with 2+ checkers after but not before,
  and the reverse;
* ``blots``: the mover's single checkers on the board after the play; ``shots``: how many
  of the opponent's 36 rolls have a legal play that hits one of them (direct and
  indirect, blocks respected, from the move generator); ``direct_shots``: those hitting
  rolls where one die alone is the distance from an opposing checker to a blot;
* ``back_checkers`` before and after (the mover's checkers on his 19-24 points or the
  bar): fewer after is an escape;
* ``prime``: the longest run of consecutive points held, before and after;
* ``pips``: the race after the play (mover, opponent) and the mover's lead.

:func:`describe` turns the facts into one short line, e.g. "makes the 5-point; leaves
no blot" or "splits to the 21-point; leaves 2 blots, hit by 15 of 36 rolls".
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from engine.dice import ALL_ROLLS
from engine.movegen import legal_results
from engine.notation import checker_moves
from engine.position import Position, flip_array


@dataclass(frozen=True)
class PlayFacts:
    """What a play changes; points in the mover's numbering (see the module docstring)."""

    hits: int
    hit_points: tuple[int, ...]
    made: tuple[int, ...]
    broken: tuple[int, ...]
    blots: tuple[int, ...]
    shots: int
    direct_shots: int
    back_checkers_before: int
    back_checkers_after: int
    prime_before: int
    prime_after: int
    pips: tuple[int, int]
    race: bool
    gammon_change: float | None = None
    """Change of (wins gammon - loses gammon) against a reference play, when given."""

    @property
    def escaped(self) -> int:
        return max(0, self.back_checkers_before - self.back_checkers_after)

    @property
    def pip_lead(self) -> int:
        """The mover's lead in the race after the play (positive = ahead)."""
        return self.pips[1] - self.pips[0]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["escaped"] = self.escaped
        d["pip_lead"] = self.pip_lead
        for k, v in list(d.items()):
            if isinstance(v, tuple):
                d[k] = list(v)
        return d


def held_points(board: Sequence[int]) -> set[int]:
    """Points 1-24 where the mover has two or more checkers."""
    return {p for p in range(1, 25) if board[p] >= 2}


def longest_prime(board: Sequence[int]) -> int:
    """The longest run of consecutive points the mover holds."""
    best = run = 0
    for p in range(1, 25):
        run = run + 1 if board[p] >= 2 else 0
        best = max(best, run)
    return best


def back_checkers(board: Sequence[int]) -> int:
    """The mover's checkers in the opponent's home board (points 19-24) or on the bar."""
    return sum(max(0, board[p]) for p in range(19, 26))


def shots(after: Sequence[int]) -> tuple[int, int]:
    """``(rolls that hit, direct rolls)`` of 36 against the mover's checkers in ``after``.

    ``after`` is the mover's view with the opponent to roll: the opponent's results are
    generated from the flipped board, and a roll hits when one of its legal plays puts a
    mover's checker on the bar.
    """
    board = np.asarray(after, dtype=np.int8)
    blots = [p for p in range(1, 25) if board[p] == 1]
    if not blots or not (board < 0).any():
        return 0, 0
    opp = flip_array(board)
    on_bar = -int(opp[0])
    hit = direct = 0
    # direct distances: from each opposing checker (mover's point q, or their bar = 0) to a blot above it
    sources = [q for q in range(1, 25) if board[q] < 0] + ([0] if board[0] < 0 else [])
    distances = {b - q for b in blots for q in sources if 0 < b - q <= 6}
    for roll in ALL_ROLLS:
        results = legal_results(opp, roll.high, roll.low)
        if (-results[:, 0] > on_bar).any():
            hit += roll.weight
            if roll.high in distances or roll.low in distances:
                direct += roll.weight
    return hit, direct


def play_facts(before: Position, after: Position, steps: Sequence[Sequence[int]] = (),
               gammon_change: float | None = None) -> PlayFacts:
    """The facts of the play ``before`` -> ``after`` (``steps`` give where the hits were)."""
    b, a = before.board, after.board
    hits = max(0, b[0] - a[0])
    hit_points = tuple(sorted({m.to_point for m in checker_moves(before, steps) if m.hit}, reverse=True)) if steps else ()
    hb, ha = held_points(b), held_points(a)
    blots = tuple(p for p in range(24, 0, -1) if a[p] == 1)
    n_shots, n_direct = shots(a)
    pips = after.pips()
    return PlayFacts(
        hits=hits,
        hit_points=hit_points,
        made=tuple(sorted(ha - hb, reverse=True)),
        broken=tuple(sorted(hb - ha, reverse=True)),
        blots=blots,
        shots=n_shots,
        direct_shots=n_direct,
        back_checkers_before=back_checkers(b),
        back_checkers_after=back_checkers(a),
        prime_before=longest_prime(b),
        prime_after=longest_prime(a),
        pips=(int(pips[0]), int(pips[1])),
        race=after.is_race(),
        gammon_change=gammon_change,
    )


def _points(ps: Sequence[int]) -> str:
    names = [f"{p}" for p in ps]
    if len(names) == 1:
        return f"the {names[0]}-point"
    return "the " + ", ".join(names[:-1]) + f" and {names[-1]} points"


def _checkers(n: int) -> str:
    return "a checker" if n == 1 else f"{n} checkers"


def describe(f: PlayFacts) -> str:
    """One short line from the facts (see the module docstring for an example)."""
    parts: list[str] = []
    if f.hits:
        where = f" on {_points(f.hit_points)}" if f.hit_points else ""
        parts.append(f"hits {_checkers(f.hits)}{where}")
    if f.made:
        parts.append(f"makes {_points(f.made)}")
    split = tuple(p for p in f.broken if p >= 19 and f.back_checkers_after == f.back_checkers_before)
    if split:
        # an anchor in his home board broken with every checker still back: a split
        moved_to = tuple(p for p in f.blots if p >= 19 and p not in split)
        parts.append("splits the back checkers" + (f" to {_points(moved_to)}" if moved_to else ""))
    broken = tuple(p for p in f.broken if p not in split)
    if broken:
        parts.append(f"breaks {_points(broken)}")
    if f.escaped:
        parts.append(f"escapes {_checkers(f.escaped)} from the back")
    if f.prime_after >= 4 and f.prime_after > f.prime_before:
        parts.append(f"builds a {f.prime_after}-point prime")
    if f.race:
        lead = f.pip_lead
        parts.append("race even" if lead == 0 else f"race: {'leads' if lead > 0 else 'trails'} by {abs(lead)} pips")
    else:
        if not f.blots:
            parts.append("leaves no blot")
        else:
            n = len(f.blots)
            what = f"a blot on the {f.blots[0]}-point" if n == 1 else f"{n} blots"
            if f.shots:
                parts.append(f"leaves {what}, hit by {f.shots} of 36 rolls ({f.direct_shots} direct)")
            else:
                parts.append(f"leaves {what}, no shot")
    if f.gammon_change is not None and abs(f.gammon_change) >= 0.02:
        word = "more" if f.gammon_change > 0 else "less"
        parts.append(f"{abs(f.gammon_change):.0%} {word} net gammons")
    return "; ".join(parts) if parts else "quiet play"


def gammon_balance(probs: Sequence[float]) -> float:
    """Wins gammon minus loses gammon (probabilities for the mover)."""
    return float(probs[1] - probs[3])


def explain_plays(position: Position, roll, plays) -> list[tuple[str, dict[str, Any]]]:
    """``(line, facts)`` of ranked plays (:class:`~engine.api.PlayInfo`, best first); the
    gammon change of each is measured against the first play."""
    from engine.notation import play_from_steps  # noqa: PLC0415

    ref = None
    out = []
    for p in plays:
        result = play_from_steps(position, roll, p.steps).result
        change = None
        if p.probabilities is not None:
            g = p.probabilities["win_gammon"] - p.probabilities["lose_gammon"]
            ref = g if ref is None else ref
            change = g - ref if p is not plays[0] else None
        f = play_facts(position, result, p.steps, change)
        out.append((describe(f), f.to_dict()))
    return out
