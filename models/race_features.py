"""Race inputs from the one-sided bearoff database: estimated rolls to finish and to save
the gammon, and the backgammon danger (the extra inputs of ``tabla-race-v2``).

A side's board is read on its own numbering (points 1..24, home board 1-6). The estimate of
its rolls to bear off every checker is the database mean of its home board with each
checker still outside put on the 6-point, plus ``(pips beyond the 6-point + 2 per outside
checker) / 8.17`` rolls (8.17 pips is the average roll; the 2 pips stand for the waste
of crossing in). The same rule with the database's first-off mean estimates the rolls to
bear off the first checker (0 once one is off). Exact when every checker is home.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine import bearoff_build as bb

PIPS_PER_ROLL = 8.17
OUTSIDE_COST = 2.0
EXTRA_SIDE_INPUTS = 5
"""Per side: rolls to finish / 20, rolls to the first checker off / 10, outside checkers / 15,
checkers in the other side's home board / 5, their pips to leave it / 20."""

_tables: tuple[np.ndarray, np.ndarray] | None = None


def tables() -> tuple[np.ndarray, np.ndarray]:
    """(mean rolls to bear off all, mean rolls to the first checker off) per database index."""
    global _tables
    if _tables is None:
        from engine.bearoff import get_db

        os_db = get_db().one_sided
        mean = (os_db["dist"].astype(np.float64) / bb.SCALE) @ np.arange(bb.N_ROLLS, dtype=np.float64)
        gmean = (os_db["gammon"].astype(np.float64) / bb.SCALE) @ np.arange(bb.N_GAMMON, dtype=np.float64)
        _tables = (mean, gmean)
    return _tables


@njit(cache=True)
def estimate(board, table, binom, c) -> float:
    """Estimated rolls (``table``: a database mean) of a side's ``board``; ``c`` is (6,) scratch."""
    extra = 0.0
    n_out = 0
    for i in range(6):
        c[i] = board[i + 1] if board[i + 1] > 0 else 0
    for p in range(7, 26):
        if board[p] > 0:
            n_out += board[p]
            extra += board[p] * (p - 6 + OUTSIDE_COST)
    c[5] += n_out
    return table[bb.rank_counts(c, binom)] + extra / PIPS_PER_ROLL


@njit(cache=True)
def race_extras(b, row, o, mean, gmean, binom, c) -> float:
    """Write a side's extra inputs at ``row[o:o + 5]``; returns its estimated rolls to finish."""
    on = 0
    out = 0
    far = 0
    far_pips = 0
    for p in range(1, 26):
        if b[p] > 0:
            on += b[p]
            if p > 6:
                out += b[p]
            if p > 18:
                far += b[p]
                far_pips += b[p] * (p - 18)
    fin = estimate(b, mean, binom, c)
    first = 0.0 if on < 15 else estimate(b, gmean, binom, c)
    row[o] = fin / 20.0
    row[o + 1] = first / 10.0
    row[o + 2] = out / 15.0
    row[o + 3] = far / 5.0
    row[o + 4] = far_pips / 20.0
    return fin
