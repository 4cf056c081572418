"""Tesauro's pubeval: the published linear benchmark evaluator, vectorised with numpy.

pubeval scores a position *after* the mover's play (before the opponent rolls), from the
mover's side: ``score = w . x``, with one weight vector for contact positions and one for
races. Which vector is used depends on the position *before* the play ("race is set
based on the INITIAL position BEFORE the move"). A play that bears off the last checker
scores ``99999999``. Higher is better; scores only rank plays, they are not equities.

Inputs (122), built from the board in the layout of :mod:`engine.position` (mover > 0):

==============  ================================================================
index           meaning
==============  ================================================================
5*(24-p) + 0    point ``p`` (1..24) holds exactly one opponent checker (a blot)
5*(24-p) + 1    point ``p`` holds exactly one of the mover's checkers
5*(24-p) + 2    point ``p`` holds two or more of the mover's checkers
5*(24-p) + 3    point ``p`` holds exactly three of the mover's checkers
5*(24-p) + 4    ``(n - 3) / 2`` for ``n >= 4`` of the mover's checkers on ``p``
120             opponent checkers on the bar / 2
121             mover's borne-off checkers / 15
==============  ================================================================

The mover's own bar and the opponent's points are not inputs (as in the original).
The weights are the figures Tesauro published with ``pubeval.c`` (public domain).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.batch import segment_argmax
from engine.movegen import legal_results

WIN_SCORE = 99999999.0
"""Score of a play that bears off the mover's last checker."""

# fmt: off
_WEIGHTS_RACE = np.array([
    0.00000, -0.17160, 0.27010, 0.29906, -0.08471, 0.00000, -1.40375, -1.05121,
    0.07217, -0.01351, 0.00000, -1.29506, -2.16183, 0.13246, -1.03508, 0.00000,
    -2.29847, -2.34631, 0.17253, 0.08302, 0.00000, -1.27266, -2.87401, -0.07456,
    -0.34240, 0.00000, -1.34640, -2.46556, -0.13022, -0.01591, 0.00000, 0.27448,
    0.60015, 0.48302, 0.25236, 0.00000, 0.39521, 0.68178, 0.05281, 0.09266,
    0.00000, 0.24855, -0.06844, -0.37646, 0.05685, 0.00000, 0.17405, 0.00430,
    0.74427, 0.00576, 0.00000, 0.12392, 0.31202, -0.91035, -0.16270, 0.00000,
    0.01418, -0.10839, -0.02781, -0.88035, 0.00000, 1.07274, 2.00366, 1.16242,
    0.22520, 0.00000, 0.85631, 1.06349, 1.49549, 0.18966, 0.00000, 0.37183,
    -0.50352, -0.14818, 0.12039, 0.00000, 0.13681, 0.13978, 1.11245, -0.12707,
    0.00000, -0.22082, 0.20178, -0.06285, -0.52728, 0.00000, -0.13597, -0.19412,
    -0.09308, -1.26062, 0.00000, 3.05454, 5.16874, 1.50680, 5.35000, 0.00000,
    2.19605, 3.85390, 0.88296, 2.30052, 0.00000, 0.92321, 1.08744, -0.11696,
    -0.78560, 0.00000, -0.09795, -0.83050, -1.09167, -4.94251, 0.00000, -1.00316,
    -3.66465, -2.56906, -9.67677, 0.00000, -2.77982, -7.26713, -3.40177, -12.32252,
    0.00000, 3.42040,
], dtype=np.float32)

_WEIGHTS_CONTACT = np.array([
    0.25696, -0.66937, -1.66135, -2.02487, -2.53398, -0.16092, -1.11725, -1.06654,
    -0.92830, -1.99558, -1.10388, -0.80802, 0.09856, -0.62086, -1.27999, -0.59220,
    -0.73667, 0.89032, -0.38933, -1.59847, -1.50197, -0.60966, 1.56166, -0.47389,
    -1.80390, -0.83425, -0.97741, -1.41371, 0.24500, 0.10970, -1.36476, -1.05572,
    1.15420, 0.11069, -0.38319, -0.74816, -0.59244, 0.81116, -0.39511, 0.11424,
    -0.73169, -0.56074, 1.09792, 0.15977, 0.13786, -1.18435, -0.43363, 1.06169,
    -0.21329, 0.04798, -0.94373, -0.22982, 1.22737, -0.13099, -0.06295, -0.75882,
    -0.13658, 1.78389, 0.30416, 0.36797, -0.69851, 0.13003, 1.23070, 0.40868,
    -0.21081, -0.64073, 0.31061, 1.59554, 0.65718, 0.25429, -0.80789, 0.08240,
    1.78964, 0.54304, 0.41174, -1.06161, 0.07851, 2.01451, 0.49786, 0.91936,
    -0.90750, 0.05941, 1.83120, 0.58722, 1.28777, -0.83711, -0.33248, 2.64983,
    0.52698, 0.82132, -0.58897, -1.18223, 3.35809, 0.62017, 0.57353, -0.07276,
    -0.36214, 4.37655, 0.45481, 0.21746, 0.10504, -0.61977, 3.54001, 0.04612,
    -0.18108, 0.63211, -0.87046, 2.47673, -0.48016, -1.27157, 0.86505, -1.11342,
    1.24612, -0.82385, -2.77082, 1.23606, -1.59529, 0.10438, -1.30206, -4.11520,
    5.62596, -2.75800,
], dtype=np.float32)
# fmt: on


def pubeval_inputs(boards: np.ndarray) -> np.ndarray:
    """The 122 pubeval inputs of each board (N, 26) -> (N, 122) float32 (table above)."""
    b = np.asarray(boards).reshape(-1, 26).astype(np.int16)
    n = b[:, 24:0:-1]  # column j-1 is point 25-j: points 24, 23, ..., 1
    x = np.zeros((b.shape[0], 24, 5), np.float32)
    x[:, :, 0] = n == -1
    x[:, :, 1] = n == 1
    x[:, :, 2] = n >= 2
    x[:, :, 3] = n == 3
    x[:, :, 4] = np.where(n >= 4, (n - 3) / 2.0, 0.0)
    out = np.empty((b.shape[0], 122), np.float32)
    out[:, :120] = x.reshape(-1, 120)
    out[:, 120] = -b[:, 0] / 2.0
    own = np.where(b[:, 1:26] > 0, b[:, 1:26], 0).sum(axis=1)
    out[:, 121] = (15 - own) / 15.0
    return out


def is_race_batch(boards: np.ndarray) -> np.ndarray:
    """True for each board (N, 26) with no contact left (nobody on the bar, no crossing)."""
    b = np.asarray(boards).reshape(-1, 26)
    idx = np.arange(26)
    mine = b > 0
    theirs = b < 0
    my_back = np.where(mine[:, 1:25], idx[1:25], 0).max(axis=1)
    opp_back = np.where(theirs[:, 1:25], idx[1:25], 25).min(axis=1)
    return (b[:, 25] == 0) & (b[:, 0] == 0) & (my_back < opp_back)


def pubeval_scores(boards: np.ndarray, race: bool | np.ndarray | None = None) -> np.ndarray:
    """pubeval score of each result board (N, 26), mover's view after the play.

    ``race``: which weights to use, one flag or one per board; it should describe the
    position *before* the play. ``None`` classifies the boards themselves (after the play).
    """
    b = np.ascontiguousarray(np.asarray(boards).reshape(-1, 26), dtype=np.int8)
    if race is None:
        race = is_race_batch(b)
    race = np.ascontiguousarray(np.broadcast_to(np.asarray(race, dtype=np.bool_), (b.shape[0],)))
    out = np.empty(b.shape[0], np.float64)
    _scores_kernel(b, race, _WEIGHTS_RACE, _WEIGHTS_CONTACT, out)
    return out


@njit(cache=True)
def _scores_kernel(boards, race, w_race, w_contact, out):
    """``out[i] = w . x(boards[i])`` in float32 like the original; see :func:`pubeval_inputs`."""
    for i in range(boards.shape[0]):
        w = w_race if race[i] else w_contact
        b = boards[i]
        s = np.float32(0.0)
        on_board = 0
        for p in range(1, 25):
            n = b[p]
            k = 5 * (24 - p)
            if n == -1:
                s += w[k]
            elif n == 1:
                s += w[k + 1]
                on_board += 1
            elif n >= 2:
                s += w[k + 2]
                on_board += n
                if n == 3:
                    s += w[k + 3]
                elif n >= 4:
                    s += w[k + 4] * np.float32((n - 3) / 2.0)
        on_board += b[25]
        if on_board == 0:
            out[i] = WIN_SCORE
            continue
        s += w[120] * np.float32(-b[0] / 2.0)
        s += w[121] * np.float32((15 - on_board) / 15.0)
        out[i] = s


def choose_index(children: np.ndarray, race_before: bool | np.ndarray) -> int:
    """Index of the best of ``children`` (the results of one roll) by pubeval."""
    return int(np.argmax(pubeval_scores(children, race_before)))


def choose(board: np.ndarray, d1: int, d2: int) -> np.ndarray:
    """The result board (mover's view, not flipped) pubeval picks for rolling ``d1``-``d2``."""
    board = np.asarray(board, dtype=np.int8)
    children = legal_results(board, d1, d2)
    race = bool(is_race_batch(board)[0])
    return children[choose_index(children, race)]


def choose_batch(boards: np.ndarray, dice: np.ndarray, children: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Pubeval's choice for many positions at once, given their children from
    :func:`engine.movegen.children_batch`; returns the index into ``children`` per board."""
    boards = np.asarray(boards).reshape(-1, 26)
    counts = np.diff(offsets)
    race = np.repeat(is_race_batch(boards), counts)
    scores = pubeval_scores(children, race)
    return segment_argmax(scores, offsets)
