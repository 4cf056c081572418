"""Compiled helpers for many positions at once: game results and per-segment choices.

Move generation for a batch (:func:`engine.movegen.children_batch`) returns the children
of every position concatenated, with ``offsets``; search, self-play, the duel routine and
the bots then score the children and pick one per position with these kernels.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _result_points(children, out):
    for k in range(children.shape[0]):
        b = children[k]
        left = 0
        for i in range(1, 26):
            if b[i] > 0:
                left += b[i]
        if left > 0:
            out[k] = 0
            continue
        opp_on = 0
        back = False
        for i in range(0, 25):
            if b[i] < 0:
                opp_on -= b[i]
                if i <= 6:
                    back = True
        if opp_on < 15:
            out[k] = 1
        elif back:
            out[k] = 3
        else:
            out[k] = 2


def result_points(children: np.ndarray) -> np.ndarray:
    """Points the mover has won with each board after his play (mover's view).

    0 while the game goes on; else 1 (single), 2 (gammon: the loser has none off) or
    3 (backgammon: also a loser's checker on the bar or in the winner's home board, 1-6).
    Only the mover can have just finished, so the values are never negative.
    """
    b = np.ascontiguousarray(children, dtype=np.int8).reshape(-1, 26)
    out = np.empty(len(b), np.int64)
    _result_points(b, out)
    return out


@njit(cache=True)
def _segment_argmax(values, offsets, out):
    for i in range(offsets.shape[0] - 1):
        a = offsets[i]
        best = a
        for k in range(a + 1, offsets[i + 1]):
            if values[k] > values[best]:
                best = k
        out[i] = best


def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each non-empty segment ``values[offsets[i]:offsets[i+1]]``, the global index of
    its first maximum."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out = np.empty(len(offsets) - 1, np.int64)
    _segment_argmax(np.ascontiguousarray(values, dtype=np.float64), offsets, out)
    return out
