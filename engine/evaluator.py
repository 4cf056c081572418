"""The evaluator interface that search, bots and the trainer depend on.

An evaluator maps a batch of positions, each seen from the player on roll (before the
roll), to the five probabilities of ``../shared/PROTOCOL.md`` for that player:

=====  ===================  ==========================================
col    name                 meaning
=====  ===================  ==========================================
0      ``win``              wins the game (any result)
1      ``win_gammon``       wins a gammon or a backgammon
2      ``win_backgammon``   wins a backgammon
3      ``lose_gammon``      loses a gammon or a backgammon
4      ``lose_backgammon``  loses a backgammon
=====  ===================  ==========================================

Consistent outputs satisfy ``win_backgammon <= win_gammon <= win`` and
``lose_backgammon <= lose_gammon <= 1 - win``.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from engine.position import Position

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


@runtime_checkable
class Evaluator(Protocol):
    """Anything that turns positions into probabilities for the player on roll."""

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """``boards``: (N, 26) int8 in the layout of :mod:`engine.position`; returns (N, 5) float."""
        ...


def evaluate_position(evaluator: Evaluator, position: Position) -> np.ndarray:
    """The five probabilities of one position, player on roll."""
    return evaluator.evaluate(position.array()[None, :])[0]


def terminal_probs(board: np.ndarray, backgammon_counts_two: bool = False) -> np.ndarray:
    """Exact probabilities of a finished game for the side to move (a board array)."""
    r = Position.from_array(board).result(backgammon_counts_two)
    p = np.zeros(5)
    if r > 0:
        p[0] = 1.0
        p[1] = 1.0 if r >= 2 else 0.0
        p[2] = 1.0 if r >= 3 else 0.0
    else:
        p[3] = 1.0 if r <= -2 else 0.0
        p[4] = 1.0 if r <= -3 else 0.0
    return p


def probs_dict(probs: np.ndarray) -> dict[str, float]:
    """Probabilities as the protocol's ``{"win": ..., ...}`` object."""
    return dict(zip(PROB_NAMES, [round(v, 6) for v in np.asarray(probs, dtype=np.float64).tolist()]))
