"""One evaluator over several nets: each position valued by the net of its class.

:mod:`engine.classes` sorts positions into classes; :data:`NET_FOR_CLASS` says which net
values each class. A batch is split by class and each net makes one forward pass over
its part, so search and bots see one :class:`engine.evaluator.Evaluator` as before.
Finished games get their exact probabilities; bear-off classes use the bear-off
databases when ``bearoff`` is given (:mod:`engine.bearoff`), else the race net.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from engine.batch import result_points
from engine.classes import BEAROFF1, BEAROFF2, CONTACT, CRASHED, OVER, RACE, classify, uniform_class
from models.network import NumpyNet

NET_NAMES = ("contact", "crashed", "race")
NET_FOR_CLASS = {CONTACT: "contact", CRASHED: "crashed", RACE: "race", BEAROFF1: "race", BEAROFF2: "race"}
"""Which net values a class when no database does."""


class Bearoff(Protocol):
    """The bear-off databases as the evaluator uses them."""

    def one_sided_probs(self, boards: np.ndarray) -> np.ndarray: ...

    def two_sided_probs(self, boards: np.ndarray) -> np.ndarray: ...


def over_probs(boards: np.ndarray) -> np.ndarray:
    """Exact probabilities of finished games for the side on roll (who has lost)."""
    # the side that has no checker left won; seen from the mover that is the opponent
    # after a flip, so score the flipped position and invert
    from engine.position import flip_array

    pts = result_points(flip_array(boards).astype(np.int8))
    p = np.zeros((len(boards), 5), np.float32)
    p[:, 3] = pts >= 2
    p[:, 4] = pts >= 3
    won = pts == 0  # the mover itself has no checker left
    p[won] = (1.0, 0.0, 0.0, 0.0, 0.0)
    return p


class ClassNets:
    """An Evaluator that dispatches each position to the net (or database) of its class."""

    def __init__(self, nets: dict[str, NumpyNet], bearoff: Bearoff | None = None) -> None:
        missing = [n for n in NET_NAMES if n not in nets]
        if missing:
            raise ValueError(f"missing nets: {', '.join(missing)}")
        self.nets = nets
        self.bearoff = bearoff

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """(N, 26) boards, player on roll → (N, 5) probabilities."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if len(boards) == 0:
            return np.empty((0, 5), np.float32)
        first = uniform_class(boards)
        if first >= 0:  # the common case in a search: one class
            return np.asarray(self._evaluate_class(first, boards), dtype=np.float32)
        cls = classify(boards)
        out = np.empty((len(boards), 5), np.float32)
        for c in np.unique(cls):
            idx = np.flatnonzero(cls == c)
            out[idx] = self._evaluate_class(int(c), boards[idx])
        return out

    def _evaluate_class(self, c: int, boards: np.ndarray) -> np.ndarray:
        if c == OVER:
            return over_probs(boards)
        if self.bearoff is not None:
            if c == BEAROFF2:
                return self.bearoff.two_sided_probs(boards)
            if c == BEAROFF1:
                return self.bearoff.one_sided_probs(boards)
        return self.nets[NET_FOR_CLASS[c]].evaluate(boards)
