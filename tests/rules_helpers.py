"""Compact helpers for the rule tests: positions from point maps, plays as text."""
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
