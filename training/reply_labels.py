"""Labels one play later: the positions after the side on roll's best reply.

A stored label is a result of a decision, seen by the side that rolls next (the mover's
opponent). In crashed positions that side is most often the crashed one, so a net fitted to
such labels learns the positions where the crashed side is on roll, and can drift on the
others, which a 2-ply search values at its leaves (after the opponent's reply). This module
makes labels for those: from each labelled position it rolls one roll at random, plays the
best 1-ply reply by the nets (:func:`engine.batch.one_ply_choice`), and labels the position
after it by Tabla's own 1-ply value (:func:`training.labels.ply1_probs`) with the same nets.
The 1-ply value reads the nets one play further on, in positions of the labelled kind, so
it carries what the first fit learnt to the other side on roll.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from engine.batch import one_ply_choice
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.movegen import children_batch
from training.labels import ply1_probs
from training.refine import valued_by

CHUNK = 512
"""Positions per batch (each takes ~21 rolls × ~20 plays through the nets)."""


def reply_positions(boards: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray],
                    rng: np.random.Generator) -> np.ndarray:
    """For each of ``boards`` (N, 26, side on roll) one roll drawn with the dice's odds and
    the best 1-ply play for it; returns the distinct results still in play, each seen by
    the side that rolls next (M, 26), in the order of ``boards``."""
    if len(boards) == 0:
        return np.zeros((0, 26), np.int8)
    out = []
    for s in range(0, len(boards), CHUNK):
        b = np.ascontiguousarray(boards[s:s + CHUNK], dtype=np.int8)
        dice = ROLL_ARRAY[rng.choice(len(ROLL_WEIGHTS), size=len(b), p=ROLL_WEIGHTS)].astype(np.int64)
        children, offsets = children_batch(b, dice)
        choice = one_ply_choice(children, offsets, evaluate)
        live = choice.points[choice.index] == 0
        out.append(choice.opp_boards[choice.index[live]])
    nxt = np.concatenate(out)
    _, first = np.unique(nxt, axis=0, return_index=True)
    return nxt[np.sort(first)]


def reply_labels(boards: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator,
                 nets: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, targets)``: the :func:`reply_positions` of ``boards`` that the nets
    ``nets`` value, and their 1-ply probabilities (M, 5) for the side on roll, both by
    ``evaluate`` (positions of other classes are left out before they are valued)."""
    pos = reply_positions(boards, evaluate, rng)
    pos = pos[valued_by(pos, nets)]
    targets = np.concatenate([ply1_probs(evaluate, pos[s:s + CHUNK]) for s in range(0, len(pos), CHUNK)]) \
        if len(pos) else np.zeros((0, 5), np.float32)
    return pos, targets.astype(np.float32)
