"""Position classes: which evaluator values a position.

Every position (side to move, :mod:`engine.position` layout) falls in exactly one class,
tested in this order:

==============  ===========================================================================
class           definition
==============  ===========================================================================
``OVER``        a side has no checker left: the game is over
``BEAROFF2``    no contact, every checker of both sides on its own home points (1-6 for the
                mover, 19-24 here for the opponent), at most 6 checkers a side: the exact
                two-sided bear-off database
``BEAROFF1``    no contact, every checker of both sides on its points 1-8 (in its own
                numbering) and not ``BEAROFF2``: the one-sided databases (rolls to bear
                off, per side; home boards from the six-point file, the rest from the
                eight-point one)
``RACE``        no contact otherwise: no checker on a bar and the mover's rearmost checker
                lower than the opponent's rearmost (in the mover's numbering)
``CRASHED``     contact, and one side's board has crashed: as GNU Backgammon classifies it,
                a side counts its checkers still in play (points and bar, not borne off);
                with N = 6 it has crashed when that count is ≤ N, or ≤ N + (the checkers on
                its 1-point) when more than one is there (also when, with more than one on
                each of its 1- and 2-points, the rest plus one is ≤ N), or otherwise
                ≤ N + (the checkers on its 2-point − 1)
``CONTACT``     every other position
==============  ===========================================================================
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.bearoff_build import WIDE_POINTS

OVER, BEAROFF2, BEAROFF1, RACE, CRASHED, CONTACT = range(6)
CLASS_NAMES = ("over", "bearoff2", "bearoff1", "race", "crashed", "contact")
CRASHED_N = 6


@njit(cache=True)
def _crashed(b, opponent: bool) -> bool:
    """Whether a side of ``b`` has crashed (see the table): the mover, or the opponent
    (read in its own numbering: its point p is index 25 - p, its counts negative)."""
    tot = 0
    for i in range(0, 26):
        if opponent:
            if b[i] < 0:
                tot -= b[i]
        elif b[i] > 0:
            tot += b[i]
    if opponent:
        one = -b[24] if b[24] < 0 else 0
        two = -b[23] if b[23] < 0 else 0
    else:
        one = b[1] if b[1] > 0 else 0
        two = b[2] if b[2] > 0 else 0
    if tot <= CRASHED_N:
        return True
    if one > 1:
        if tot <= CRASHED_N + one:
            return True
        return two > 1 and 1 + tot - (one + two) <= CRASHED_N
    return tot <= CRASHED_N + (two - 1)


@njit(cache=True)
def _classify_one(b) -> int:
    mine = 0
    theirs = 0
    my_rear = 0
    opp_rear = 25
    for p in range(0, 26):
        if b[p] > 0:
            mine += b[p]
            my_rear = p
        elif b[p] < 0:
            theirs -= b[p]
            if p < opp_rear:
                opp_rear = p
    if mine == 0 or theirs == 0:
        return OVER
    if b[25] == 0 and b[0] == 0 and my_rear < opp_rear:
        if my_rear <= 6 and opp_rear >= 19 and mine <= 6 and theirs <= 6:
            return BEAROFF2
        if my_rear <= WIDE_POINTS and opp_rear >= 25 - WIDE_POINTS:
            return BEAROFF1
        return RACE
    return CRASHED if _crashed(b, False) or _crashed(b, True) else CONTACT


@njit(cache=True)
def _classify(boards, out):
    for n in range(boards.shape[0]):
        out[n] = _classify_one(boards[n])


@njit(cache=True)
def _uniform_class(boards):
    first = _classify_one(boards[0])
    for n in range(1, boards.shape[0]):
        if _classify_one(boards[n]) != first:
            return -1
    return first


def uniform_class(boards: np.ndarray) -> int:
    """The class shared by every board of a non-empty int8 (N, 26) C-contiguous batch, or
    -1 when they differ (then :func:`classify` each): the common case of a search, where
    the results of one roll are nearly always of one class, in one compiled call."""
    return int(_uniform_class(boards))


def classify(boards: np.ndarray) -> np.ndarray:
    """The class of each board (N, 26) → (N,) int8, codes as :data:`CLASS_NAMES`."""
    if boards.dtype != np.int8 or not boards.flags.c_contiguous or boards.ndim != 2:
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    out = np.empty(boards.shape[0], np.int8)
    _classify(boards, out)
    return out
