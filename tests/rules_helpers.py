"""Compact helpers for the rule tests: positions from point maps, plays as text."""
import numpy as np

from engine.dice import Roll
from engine.notation import legal_plays
from engine.position import Position


def P(mine, theirs=None):
    """A position from ``{point: count}`` maps, each side in its own numbering (25 = bar)."""
    return Position.from_points(mine, theirs or {})


def plays(position, roll):
    """The set of legal plays as text."""
    return {p.text for p in legal_plays(position, Roll.parse(roll))}


def results(position, roll):
    """The set of resulting positions (mover's view)."""
    return {p.result for p in legal_plays(position, Roll.parse(roll))}


def board(me: dict, them: dict) -> np.ndarray:
    """A board array with both sides in the mover's numbering: ``me`` (positive, moving from
    24 down to 1, bar 25) and ``them`` (negative, moving up from their bar at 0)."""
    b = np.zeros(26, np.int8)
    for p, n in me.items():
        b[p] += n
    for p, n in them.items():
        b[p] -= n
    assert (np.where(b > 0, b, 0).sum(), -np.where(b < 0, b, 0).sum()) <= (15, 15)
    return b
