"""Dice of rollout trials: quasi-random first two rolls, then a seeded stream per trial.

A roll is an index ``0..35`` of the 36 ordered rolls, ``(first die, second die) =
divmod(index, 6) + 1``. The dice of trial ``i`` depend only on ``(seed, i)``, so a trial
gives the same game whichever worker, slice or batch runs it:

* roll 1 is ordered roll ``i mod 36``: every block of 36 trials has each roll once;
* roll 2 is ``σ((τ(i mod 36) + i // 36) mod 36)`` with ``σ``, ``τ`` permutations of the
  36 rolls drawn from the seed: within a block of 1296 trials each ``i mod 36`` meets each
  value of ``i // 36 mod 36`` once, so every pair of first and second rolls occurs exactly
  once (and the first 36 trials already see 36 different second rolls);
* rolls 3, 4, ... come from ``numpy.random.default_rng([seed, i, k])`` in blocks of
  :data:`BLOCK` rolls (block ``k``).
"""
from __future__ import annotations

import numpy as np

from engine.dice import ALL_ROLLS

BLOCK = 256
"""Rolls drawn at a time from a trial's stream."""

ORDERED_DICE = np.array([(a // 6 + 1, a % 6 + 1) for a in range(36)], dtype=np.int64)
"""The two dice of each ordered roll index."""

_INDEX21 = {(r.high, r.low): k for k, r in enumerate(ALL_ROLLS)}
ORDERED_TO_21 = np.array([_INDEX21[(max(a, b), min(a, b))] for a, b in ORDERED_DICE], dtype=np.int64)
"""For each ordered roll, its index among :data:`engine.dice.ALL_ROLLS` (21 rolls)."""


def _permutations(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, 0x5EC0ED])
    return rng.permutation(36), rng.permutation(36)


def quasi_rolls(seed: int, trials: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first and second ordered roll indices of the given trial numbers."""
    sigma, tau = _permutations(seed)
    i = np.asarray(trials, dtype=np.int64)
    first = i % 36
    second = sigma[(tau[first] + i // 36) % 36]
    return first, second


def stream_block(seed: int, trial: int, block: int) -> np.ndarray:
    """Rolls ``2 + block * BLOCK`` onwards of one trial (:data:`BLOCK` ordered roll indices)."""
    rng = np.random.default_rng([seed, trial, block])
    return rng.integers(0, 36, size=BLOCK, dtype=np.int64)


def trial_rolls(seed: int, trial: int, count: int) -> np.ndarray:
    """The first ``count`` ordered roll indices of one trial (half-moves 0, 1, ...)."""
    f, s = quasi_rolls(seed, np.array([trial]))
    out = [int(f[0]), int(s[0])]
    k = 0
    while len(out) < count:
        out.extend(stream_block(seed, trial, k).tolist())
        k += 1
    return np.array(out[:count], dtype=np.int64)
