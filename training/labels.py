"""Values of many positions one ply deeper than the nets: the labels of refinement.

``ply1_probs(evaluate, boards)`` is the 1-ply evaluation of each position before its roll
(``../shared/PROTOCOL.md``): for each of the 21 rolls the best play by cubeless equity
of the evaluator's values of the results, the probabilities after it, averaged with the
rolls' weights. All positions × 21 rolls go through one move generation and the shared batched
1-ply chooser (:func:`engine.batch.one_ply_choice`), one ``evaluate`` call.
"""
from __future__ import annotations

import numpy as np

from engine.batch import OnePlyChoice, one_ply_choice
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.movegen import children_batch
from engine.values import flip_probs

NUM_ROLLS = len(ROLL_WEIGHTS)


def every_roll(evaluate, boards: np.ndarray) -> tuple[OnePlyChoice, np.ndarray, np.ndarray]:
    """The best play of each of the 21 rolls from each of ``boards`` (N, 26), player on roll.

    Returns the batched choice over the N × 21 segments (game-major: segment ``21 g + r``
    is roll ``r`` of board ``g``), the probabilities after each best play, seen by the
    opponent (N × 21, 5) in the evaluator's dtype, and the segments' offsets into the
    children (N × 21 + 1,).
    """
    n = len(boards)
    rep = np.repeat(np.ascontiguousarray(boards, dtype=np.int8), NUM_ROLLS, axis=0)
    dice = np.tile(ROLL_ARRAY.astype(np.int64), (n, 1))
    children, offsets = children_batch(rep, dice)
    choice = one_ply_choice(children, offsets, evaluate)
    return choice, choice.opp_probs[choice.index], offsets


def ply1_probs(evaluate, boards: np.ndarray) -> np.ndarray:
    """1-ply probabilities (N, 5) of positions ``boards`` (N, 26), player on roll."""
    n = len(boards)
    if n == 0:
        return np.zeros((0, 5), np.float32)
    _, best_opp, _ = every_roll(evaluate, boards)
    mine = flip_probs(best_opp).reshape(n, NUM_ROLLS, 5)
    return np.einsum("nrk,r->nk", mine, ROLL_WEIGHTS).astype(np.float32)
