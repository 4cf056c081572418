"""Batched self-play: many games at once, one move generation and one network call per ply.

The network picks every play at 1-ply for the side on roll with
:func:`engine.batch.one_ply_choice`, the chooser of :class:`eval.duel.EvaluatorPlayer`:
each distinct result is flipped to the opponent's view and evaluated; the play with the
best cubeless equity for the mover wins. The value of the chosen result is, at the same time, the network's
prediction for the next state, which the λ-return targets of :func:`lambda_targets` use.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
from numba import njit

from engine.batch import one_ply_choice
from engine.dice import opening_rolls
from engine.movegen import children_batch
from engine.position import Position
from engine.values import flip5


@njit(cache=True)
def lambda_targets(vals, length, lam):
    """λ-return targets of one game.

    ``vals[t]`` (t = 1..length) is the prediction for state t from the view of the side on
    roll there; ``vals[length]`` is the exact result. Returns the targets of states
    0..length-1, each from the view of the side on roll at that state::

        G[length-1] = flip(vals[length])
        G[t]        = flip((1 - λ) · vals[t+1] + λ · G[t+1])
    """
    out = np.empty((length, 5), np.float32)
    g = np.empty(5, np.float64)
    mix = np.empty(5, np.float64)
    for k in range(5):
        g[k] = vals[length, k]
    for t in range(length - 1, -1, -1):
        for k in range(5):
            if t == length - 1:
                mix[k] = g[k]
            else:
                mix[k] = (1.0 - lam) * vals[t + 1, k] + lam * g[k]
        flip5(mix, g)
        for k in range(5):
            out[t, k] = g[k]
    return out


class SelfPlay:
    """``n`` games played at once by one evaluation function.

    ``evaluate(boards) -> (N, 5)`` probabilities for the player on roll.
    """

    def __init__(self, n: int, rng: np.random.Generator, max_plies: int = 600, epsilon: float = 0.0) -> None:
        self.n = n
        self.rng = rng
        self.max_plies = max_plies
        self.epsilon = epsilon
        self.boards = np.tile(Position.start().array(), (n, 1))
        self.ply = np.zeros(n, np.int64)
        self.hist_boards = np.zeros((n, max_plies + 1, 26), np.int8)
        self.hist_vals = np.zeros((n, max_plies + 1, 5), np.float32)

    def step(self, evaluate) -> list[tuple[np.ndarray, np.ndarray]]:
        """Play one ply in every game; return ``(boards, predictions)`` of finished games.

        ``predictions[t]`` is as :func:`lambda_targets` wants it (row 0 unused).
        """
        n = self.n
        dice = self.rng.integers(1, 7, size=(n, 2))
        first = self.ply == 0
        if first.any():
            dice[first] = opening_rolls(self.rng, int(first.sum()))
        children, offsets = children_batch(self.boards, dice)
        choice = one_ply_choice(children, offsets, evaluate)
        idx, opp, probs, result = choice.index, choice.opp_boards, choice.opp_probs, choice.points
        if self.epsilon > 0:
            explore = np.flatnonzero(self.rng.random(n) < self.epsilon)
            sizes = offsets[explore + 1] - offsets[explore]
            idx[explore] = offsets[explore] + (self.rng.random(len(explore)) * sizes).astype(np.int64)
        rows = np.arange(n)
        self.hist_boards[rows, self.ply] = self.boards
        self.ply += 1
        self.hist_vals[rows, self.ply] = probs[idx]
        self.boards = opp[idx]
        done = result[idx] > 0
        finished = []
        too_long = self.ply >= self.max_plies
        for g in np.flatnonzero(done | too_long):
            if done[g]:
                t = int(self.ply[g])
                finished.append((self.hist_boards[g, :t].copy(), self.hist_vals[g, : t + 1].copy()))
            self.boards[g] = Position.start().array()
            self.ply[g] = 0
        return finished


class TargetBuffer:
    """Positions of finished games with their λ-return targets, waiting to teach.

    Each position teaches once: :meth:`batches` draws random batches without replacement
    and keeps the rest for later. The local workers and the Ray learner both learn from it.
    """

    def __init__(self) -> None:
        self.boards: list[np.ndarray] = []
        self.targets: list[np.ndarray] = []
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def add(self, boards: np.ndarray, targets: np.ndarray) -> None:
        self.boards.append(boards)
        self.targets.append(targets)
        self.count += len(boards)

    def add_game(self, boards: np.ndarray, vals: np.ndarray, lam: float) -> None:
        """A finished game as :meth:`SelfPlay.step` returns it; its targets by :func:`lambda_targets`."""
        self.add(boards, lambda_targets(vals, len(boards), lam))

    def take_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Every position held, in order, and an empty buffer."""
        b = np.concatenate(self.boards) if self.boards else np.zeros((0, 26), np.int8)
        t = np.concatenate(self.targets) if self.targets else np.zeros((0, 5), np.float32)
        self.boards, self.targets, self.count = [], [], 0
        return b, t

    def batches(self, size: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Random batches of ``size`` positions while at least ``size`` are held."""
        while self.count >= size:
            b, t = self.take_all()
            perm = rng.permutation(len(b))
            take, rest = perm[:size], perm[size:]
            self.add(b[rest], t[rest])
            yield b[take], t[take]
