"""Seeded random positions for tests and benchmarks: contact, bar and bear-off mixes."""
from __future__ import annotations

import numpy as np

from engine.movegen import legal_results
from engine.position import Position, flip_array


def random_game_positions(rng: np.random.Generator, n: int, max_plies: int = 400) -> np.ndarray:
    """``n`` positions sampled from games of uniformly random legal plays, (n, 26) int8.

    Random play hits a lot, so these are rich in bar, closed-board and bear-off positions.
    """
    out = np.empty((n, 26), np.int8)
    k = 0
    while k < n:
        b = Position.start().array()
        for _ in range(max_plies):
            d = rng.integers(1, 7, size=2)
            res = legal_results(b, int(d[0]), int(d[1]))
            b = flip_array(res[rng.integers(len(res))])
            if (b > 0).sum() == 0 or (b < 0).sum() == 0:
                break
            if rng.random() < 0.15:
                out[k] = b
                k += 1
                if k == n:
                    break
    return out


def random_scatter_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` positions with checkers dropped at random (bar and off included), (n, 26) int8."""
    out = np.zeros((n, 26), np.int8)
    for k in range(n):
        b = out[k]
        home_only_me = rng.random() < 0.3
        home_only_opp = rng.random() < 0.3
        for side in (1, -1):
            total = int(rng.integers(1, 16))
            home = home_only_me if side == 1 else home_only_opp
            for _ in range(total):
                for _try in range(50):
                    if side == 1:
                        p = int(rng.integers(1, 7)) if home else int(rng.integers(1, 26))
                        if p == 25 and rng.random() < 0.7:
                            continue
                        if p <= 24 and b[p] < 0:
                            continue
                        b[p] += 1
                    else:
                        p = int(rng.integers(19, 25)) if home else int(rng.integers(0, 25))
                        if p == 0 and rng.random() < 0.7:
                            continue
                        if p >= 1 and b[p] > 0:
                            continue
                        b[p] -= 1
                    break
    return out
