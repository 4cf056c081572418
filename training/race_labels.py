"""Near-exact labels of race positions from one-sided simulations and the bearoff database.

Without contact the two sides' checkers never meet, so each side's game is one-sided: its
number of rolls to bear off, to bear off its first checker (gammons) and to bring its last
checker out of the opponent's home board (backgammons) do not depend on the other side's
plays. :func:`race_probs` values a race position from those three distributions per side:

* *Bring-in* (checkers outside the home board): ``trials`` simulated games of the side
  alone, each roll played by the move generator's results with the lowest estimated rolls
  to finish (:func:`models.race_features.estimate`: the exact database mean when every
  checker is home).
* *Bear-off* (every checker home, after ``k`` simulated rolls): the exact distributions of
  the one-sided database (:mod:`engine.bearoff`) shifted by ``k``. So a side already home
  costs no simulation and its distributions are exact.

The side on roll (A) wins when ``n_A <= n_B``; he wins a gammon when B's first checker
needs at least ``n_A`` rolls, a backgammon when B still has a checker in A's home board
after ``n_A - 1`` rolls (bringing it out comes before any bear-off, so that also means no
checker off). The opponent's wins mirror this with one roll fewer for him. With every
checker home this is :meth:`engine.bearoff.BearoffDB.one_sided_probs` exactly.

The labels come from the project's own move generator and database: no outside engine.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine import bearoff_build as bb
from engine.bearoff import get_db
from engine.movegen import _generate_core
from engine.values import cubeless_equity
from models.race_features import estimate, tables

RACE_TO_FINISH, SAVE_GAMMON, SAVE_BACKGAMMON = 0, 1, 2
POLICIES = ("race to finish: the estimated rolls to bear off every checker",
            "save the gammon: the estimated rolls to bear off the first checker",
            "save the backgammon: the pips of the checkers in the other side's home board, then as save the gammon")
"""The bring-in policies of the simulations, by the estimate each play minimises."""
N_DIST = 64
"""Length of the distributions over rolls (a race of 15 checkers from the 24-point needs
fewer than 60 rolls; the last entry holds the tail)."""


@njit(cache=True)
def _trials(start, n_trials, policy, mean, gmean, binom, sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob, stack, outside,
            pcur, moved, sfrom, sto, dv, used_hi, k_out, idx_out, off_out, bg_out):
    """Simulate the bring-in of one side ``n_trials`` times (numba's seeded generator).

    ``policy``: which estimate each roll's play minimises (see :data:`POLICIES`).
    Per trial: rolls ``k`` until every checker is home, the database index of the home board
    then, the roll at which the first checker came off (-1: not yet), the roll after which
    no checker was left on points 19-24 (0: none there at the start).
    """
    c = np.empty(6, np.int64)
    board = np.empty(26, np.int8)
    on_start = 0
    for p in range(26):
        if start[p] > 0:
            on_start += start[p]
    for t in range(n_trials):
        for p in range(26):
            board[p] = start[p]
        k = 0
        bg = -1
        off_at = -1
        while True:
            far = 0
            out = 0
            for p in range(19, 26):
                far += board[p]
            for p in range(7, 26):
                out += board[p]
            if far == 0 and bg < 0:
                bg = k
            if out == 0:
                break
            d1 = np.random.randint(1, 7)
            d2 = np.random.randint(1, 7)
            n = _generate_core(board, d1, d2, sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob,
                               stack, outside, pcur, moved, sfrom, sto, dv, used_hi)
            best = 0
            best_v = 1e9
            for j in range(n):
                if policy == RACE_TO_FINISH:
                    v = estimate(sc_b[j], mean, binom, c)
                else:
                    v = estimate(sc_b[j], gmean, binom, c)
                    if policy == SAVE_BACKGAMMON:
                        for p in range(19, 26):
                            if sc_b[j, p] > 0:
                                v += 1000.0 * sc_b[j, p] * (p - 18)
                if v < best_v:
                    best_v = v
                    best = j
            for p in range(26):
                board[p] = sc_b[best, p]
            k += 1
            if off_at < 0:
                on = 0
                for p in range(26):
                    on += board[p]
                if on < on_start:
                    off_at = k
        for i in range(6):
            c[i] = board[i + 1]
        k_out[t] = k
        idx_out[t] = bb.rank_counts(c, binom)
        off_out[t] = off_at
        bg_out[t] = bg


@njit(cache=True)
def _seed_numba(seed):
    np.random.seed(seed)


class RaceLabeller:
    """Values race positions (:func:`race_probs`) with the shipped one-sided database."""

    def __init__(self, trials: int = 64, seed: int = 1) -> None:
        db = get_db()
        dist, gam = db.one_sided["dist"], db.one_sided["gammon"]
        self.dist = dist.astype(np.float64) / bb.SCALE
        self.gammon = gam.astype(np.float64) / bb.SCALE
        self.mean, self.gmean = tables()
        self.trials = trials
        self.scratch = bb._scratch()[:15]  # the move generator's part
        _seed_numba(seed)
        self._k = np.empty(trials, np.int64)
        self._idx = np.empty(trials, np.int64)
        self._off = np.empty(trials, np.int64)
        self._bg = np.empty(trials, np.int64)

    def policies(self, points: np.ndarray) -> list[int]:
        """The policies worth simulating for a side: saving the gammon only with no checker
        off and one outside, saving the backgammon only with a checker in 19-24."""
        out = [RACE_TO_FINISH]
        if int(points[points > 0].sum()) == bb.MAX_CHECKERS and (points[7:] > 0).any():
            out.append(SAVE_GAMMON)
            if (points[19:] > 0).any():
                out.append(SAVE_BACKGAMMON)
        return out

    def side(self, points: np.ndarray, policy: int = RACE_TO_FINISH) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distributions (N_DIST,) of one side's rolls to bear off all, the first checker,
        and to clear points 19-24 under a bring-in ``policy``; ``points`` (26,) int8 with
        the side's checkers only (points 1..24 of its own numbering, nothing on a bar)."""
        start = np.ascontiguousarray(points, dtype=np.int8)
        on = int(start[start > 0].sum())
        fin = np.zeros(N_DIST)
        first = np.zeros(N_DIST)
        bgd = np.zeros(N_DIST)
        home_only = not (start[7:] > 0).any()
        if home_only:
            ks, idxs, offs, bgs = [0], [bb.rank_counts(start[1:7].astype(np.int64), bb._BINOM)], [-1], [0]
        else:
            _trials(start, self.trials, policy, self.mean, self.gmean, bb._BINOM, *self.scratch, self._k, self._idx, self._off, self._bg)
            ks, idxs, offs, bgs = self._k, self._idx, self._off, self._bg
        w = 1.0 / len(ks)
        for k, i, o, g in zip(ks, idxs, offs, bgs):
            _shift_add(fin, self.dist[i], int(k), w)
            if on < bb.MAX_CHECKERS:
                first[0] += w
            elif o >= 0:
                first[min(int(o), N_DIST - 1)] += w
            else:
                _shift_add(first, self.gammon[i], int(k), w)
            bgd[0 if on < bb.MAX_CHECKERS else min(int(g), N_DIST - 1)] += w
        return fin, first, bgd

    def race_probs(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) probabilities for the side on roll of race positions (N, 26): no contact,
        nothing on a bar."""
        b = np.atleast_2d(np.asarray(boards, dtype=np.int8))
        out = np.zeros((len(b), 5))
        for r, board in enumerate(b):
            if board[0] != 0 or board[25] != 0:
                raise ValueError("race_probs: a checker is on a bar")
            mine = np.where(board > 0, board, 0).astype(np.int8)
            theirs = np.where(board < 0, -board, 0)[::-1].astype(np.int8)  # their point p = index 25 - p
            out[r] = self.best_of(mine, theirs)
        return out

    def best_of(self, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """The five probabilities when each side takes the policy best for it against the
        other's racing to finish, both sides' choices then played out together."""
        pm, po = self.policies(mine), self.policies(theirs)
        dm = {p: self.side(mine, p) for p in pm}
        do = {p: self.side(theirs, p) for p in po}
        a = max(pm, key=lambda p: float(cubeless_equity(combine(dm[p], do[RACE_TO_FINISH]))))
        b = min(po, key=lambda p: float(cubeless_equity(combine(dm[RACE_TO_FINISH], do[p]))))
        return combine(dm[a], do[b])


def _shift_add(acc: np.ndarray, dist: np.ndarray, k: int, w: float) -> None:
    """``acc[n + k] += w * dist[n]``, the tail folded into the last entry."""
    n = len(dist)
    if k + n <= len(acc):
        acc[k:k + n] += w * dist
    else:
        keep = max(0, len(acc) - 1 - k)
        acc[k:k + keep] += w * dist[:keep]
        acc[-1] += w * dist[keep:].sum()


def combine(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> np.ndarray:
    """The five probabilities of the side on roll (A) from both sides' distributions
    (all-off, first-off, clear of the winner's home board), as in the module docstring."""
    fa, ga, ba = a
    fb, gb, bb_ = b
    def at_least(d: np.ndarray) -> np.ndarray:  # P(X >= n), n = 0 .. N_DIST - 1
        return np.cumsum(d[::-1])[::-1]
    sfb, sgb, sbb = at_least(fb), at_least(gb), at_least(bb_)
    sga, sba = at_least(ga), at_least(ba)
    win = float(fa @ sfb)
    wg = float(fa[1:] @ sgb[1:])
    wbg = float(fa[1:] @ sbb[1:])
    lg = float(fb[:-1] @ sga[1:])
    lbg = float(fb[:-1] @ sba[1:])
    return np.array([win, wg, wbg, lg, lbg])
