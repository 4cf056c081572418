"""Compiled helpers for many positions at once: game results and per-segment choices.

Move generation for a batch (:func:`engine.movegen.children_batch`) returns the children
of every position concatenated, with ``offsets``; search, self-play, the duel routine and
the bots then score the children and pick one per position with these kernels.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from numba import njit

from engine.values import mover_equity, result_probs


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


@njit(cache=True)
def _flip_results(results, out):
    live = True
    for k in range(results.shape[0]):
        left = 0
        for i in range(26):
            v = results[k, i]
            out[k, 25 - i] = -v
            if v > 0:
                left += v
        if left == 0:
            live = False
    return live


def flip_results(results: np.ndarray) -> tuple[np.ndarray, bool]:
    """The results of plays seen by the opponent (who rolls next), and whether every one of
    them leaves the game going on (the mover still has checkers)."""
    out = np.empty_like(results)
    return out, bool(_flip_results(results, out))


@njit(cache=True)
def _board_live(board):
    mine = False
    theirs = False
    for i in range(26):
        if board[i] > 0:
            mine = True
        elif board[i] < 0:
            theirs = True
    return mine and theirs


def board_live(board: np.ndarray) -> bool:
    """Both sides still have checkers on ``board`` (the game goes on)."""
    return bool(_board_live(board))


class OnePlyChoice(NamedTuple):
    """The 1-ply choice of each position of a batch (:func:`one_ply_choice`)."""

    index: np.ndarray
    """(S,) the chosen child of each segment (global index)."""
    opp_boards: np.ndarray
    """(N, 26) every child seen by the opponent, who rolls next."""
    opp_probs: np.ndarray
    """(N, 5) every child's probabilities for the opponent: the evaluator's, or exact."""
    points: np.ndarray
    """(N,) :func:`result_points` of every child (0 while the game goes on)."""

    def ranked(self, start: int, stop: int) -> np.ndarray:
        """Global indices of the children ``start .. stop - 1`` (one segment), best first for
        the mover by cubeless equity, ties in order: the first is the 1-ply choice."""
        return start + np.argsort(-mover_equity(self.opp_probs[start:stop]), kind="stable")


def one_ply_choice(children: np.ndarray, offsets: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray]) -> OnePlyChoice:
    """The batched 1-ply chooser (self-play and :class:`eval.duel.EvaluatorPlayer`; the
    search's 1-ply ranking uses the same values): every child is seen from the opponent
    and evaluated (a finished game is scored exactly), and in each segment the child with
    the best cubeless equity for the mover wins (the first on a tie)."""
    points = result_points(children)
    opp = np.empty_like(children)
    _flip_results(children, opp)
    live = points == 0
    if live.all():
        probs = np.asarray(evaluate(opp))
    else:
        got = np.asarray(evaluate(opp[live])) if live.any() else np.zeros((0, 5), np.float32)
        probs = np.empty((len(children), 5), np.result_type(got.dtype, np.float32))
        probs[live] = got
        probs[~live] = result_probs(points[~live])
    return OnePlyChoice(segment_argmax(mover_equity(probs), offsets), opp, probs, points)
