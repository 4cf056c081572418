"""Values of the five probabilities (see :mod:`engine.evaluator`): the change of side and
the cubeless equity, written once for numpy and for compiled (numba) kernels.

``FLIP`` is the change of perspective: the other player's ``win`` is ``1 - win`` and his
gammons and backgammons are ours the other way round. :func:`equity5` is the cubeless
money equity ``2 win - 1 + win_gammon - lose_gammon + win_backgammon - lose_backgammon``;
the numpy functions call the same Python function the kernels compile, so both give the
same numbers.
"""
from __future__ import annotations

import numpy as np
from numba import njit

FLIP = (0, 3, 4, 1, 2)
"""``flipped[i] = probs[FLIP[i]]`` for i >= 1; ``flipped[0] = 1 - probs[0]``."""


def _equity(w, wg, wbg, lg, lbg):
    return 2.0 * w - 1.0 + wg - lg + wbg - lbg


equity5 = njit(cache=True, inline="always")(_equity)
"""Cubeless equity of ``(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)``
(compiled, for kernels)."""


@njit(cache=True, inline="always")
def flip5(src, dst):
    """``dst[:5]`` = ``src[:5]`` seen from the other player (compiled, for kernels)."""
    dst[0] = 1.0 - src[0]
    dst[1] = src[FLIP[1]]
    dst[2] = src[FLIP[2]]
    dst[3] = src[FLIP[3]]
    dst[4] = src[FLIP[4]]


def cubeless_equity(probs: np.ndarray) -> np.ndarray:
    """Cubeless money equity from probabilities (last axis 5): points per game."""
    return array_equity(np.asarray(probs, dtype=np.float64))


def array_equity(p):
    """Cubeless money equity of probabilities ``p`` (last axis 5) of any array type that
    slices and does arithmetic, keeping its type (e.g. torch tensors in a training loss)."""
    return _equity(p[..., 0], p[..., 1], p[..., 2], p[..., 3], p[..., 4])


def flip_probs(probs: np.ndarray) -> np.ndarray:
    """The same probabilities seen from the other player (last axis 5; dtype kept)."""
    p = np.asarray(probs)
    out = np.empty_like(p)
    out[..., 0] = 1.0 - p[..., 0]
    for i in range(1, 5):
        out[..., i] = p[..., FLIP[i]]
    return out


@njit(cache=True)
def _mover_values(opp_probs, probs, equity):
    for k in range(opp_probs.shape[0]):
        flip5(opp_probs[k], probs[k])
        equity[k] = equity5(probs[k, 0], probs[k, 1], probs[k, 2], probs[k, 3], probs[k, 4])
    return np.argsort(-equity, kind="mergesort")


def mover_values(opp_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From the opponent's probabilities after each play (he is on roll): the mover's
    probabilities (float64), his cubeless equity, and the plays best first (stable)."""
    opp_probs = np.ascontiguousarray(opp_probs)
    probs = np.empty((len(opp_probs), 5), np.float64)
    equity = np.empty(len(opp_probs), np.float64)
    order = _mover_values(opp_probs, probs, equity)
    return probs, equity, order


@njit(cache=True)
def _mover_equity(opp_probs, equity):
    p = np.empty(5, np.float64)
    for k in range(opp_probs.shape[0]):
        flip5(opp_probs[k], p)
        equity[k] = equity5(p[0], p[1], p[2], p[3], p[4])


def mover_equity(opp_probs: np.ndarray) -> np.ndarray:
    """The mover's cubeless equity (float64) from the opponent's probabilities after each
    play: :func:`mover_values` without the probabilities and the order."""
    opp_probs = np.ascontiguousarray(opp_probs)
    equity = np.empty(len(opp_probs), np.float64)
    _mover_equity(opp_probs, equity)
    return equity


def result_probs(points: np.ndarray) -> np.ndarray:
    """Exact probabilities (float32) for the side on roll after the opponent finished the
    game winning ``points`` (1 single, 2 gammon, 3 backgammon: :func:`engine.batch.result_points`)."""
    p = np.zeros((len(points), 5), np.float32)
    p[:, 3] = points >= 2
    p[:, 4] = points >= 3
    return p
