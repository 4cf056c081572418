"""Network inputs: a board (player on roll) to a float32 vector of :data:`NUM_INPUTS`.

Everything is computed for both sides, each from its own point of view: block ``S``
describes the player on roll ("me"), block ``O`` the opponent, read on the flipped board.

======================  =====  =============================================================
inputs                  count  meaning (per side, on that side's numbering)
======================  =====  =============================================================
points 1..24 ×4         96     Tesauro's units for n checkers on the point: n≥1, n≥2, n≥3,
                               (n−3)/2 when n>3
bar                     1      checkers on the bar / 2
off                     1      checkers borne off / 15
pips                    1      pip count / 167
back                    1      checkers on the bar or in the opponent's home board (19-24) / 15
home points             1      points 1-6 held with ≥ 2 checkers / 6
prime                   1      longest run of consecutive held points / 6
anchors                 1      points 19-24 held with ≥ 2 checkers / 3
blots                   1      single checkers on points 1-24 / 5
shot chance             1      share of the 36 rolls with which the other side can hit at
                               least one of this side's blots (direct and combined shots,
                               intermediate stops must be open; bar entry first)
outfield blocks         1      points 7-12 held / 6 (blocking the other side's escape)
======================  =====  =============================================================

Then two global inputs: race (1 when there is no contact) and pip difference
(opponent − me) / 100. Total: 2 × 107 + 2 = 216.
"""
from __future__ import annotations

import numpy as np
from numba import njit

SIDE_INPUTS = 107
NUM_INPUTS = 2 * SIDE_INPUTS + 2

_ROLLS = np.array([(h, l) for h in range(1, 7) for l in range(1, h + 1)], dtype=np.int64)
_WEIGHTS = np.array([1.0 if h == l else 2.0 for h, l in _ROLLS], dtype=np.float64) / 36.0


def _shot_tables():
    """Per distance: the rolls that cover it directly, as a sum, or as a multiple of a double."""
    direct = np.zeros(7, np.int64)
    sums = -np.ones((25, 3), np.int64)
    dbls = -np.ones((25, 3, 3), np.int64)  # (roll index, die, k)
    for r, (h, l) in enumerate(_ROLLS):
        direct[h] |= 1 << r
        direct[l] |= 1 << r
        if h != l:
            row = sums[h + l]
            row[list(row).index(-1)] = r
        else:
            for k in range(2, 5):
                row = dbls[k * h]
                m = [x[0] for x in row].index(-1)
                row[m] = (r, h, k)
    return direct, sums, dbls


_DIRECT, _SUMS, _DBLS = _shot_tables()


@njit(cache=True)
def _shot_chance(b, weights, direct, sums, dbls, rolls):
    """Share of rolls with which the side with negative counts hits a blot of the positive side.

    The negative side moves upwards (from index 0, its bar, towards 24) in this view; its
    checkers on the bar must enter (onto points 1-6 here) before others move.
    """
    on_bar = -b[0]
    mask = np.int64(0)
    for j in range(1, 25):
        if b[j] != 1:
            continue
        for i in range(0, j):
            if i == 0:
                if on_bar == 0:
                    continue
            elif b[i] >= 0:
                continue
            dist = j - i
            if i == 0 or on_bar == 0:
                # the hitter moves freely (a bar checker when it is the only one may go on)
                if dist <= 6:
                    mask |= direct[dist]
                if i == 0 and on_bar >= 2:
                    maxk = 5 - on_bar
                else:
                    maxk = 4
                    if i == 0 or on_bar == 0:
                        for s in range(3):
                            r = sums[dist, s]
                            if r < 0:
                                break
                            if i == 0 and on_bar >= 2:
                                continue
                            if b[i + rolls[r, 0]] < 2 or b[i + rolls[r, 1]] < 2:
                                mask |= np.int64(1) << r
            else:
                # one or more of its checkers wait on the bar: enter first, then hit
                maxk = 4 - on_bar
                if on_bar == 1 and dist <= 6:
                    for e in range(1, 7):
                        if e != dist and b[e] < 2:
                            # the roll (dist, e) or (e, dist)
                            h = dist if dist > e else e
                            l = e if dist > e else dist
                            r = h * (h - 1) // 2 + l - 1
                            mask |= np.int64(1) << r
            for s in range(3):
                r = dbls[dist, s, 0]
                if r < 0:
                    break
                d = dbls[dist, s, 1]
                k = dbls[dist, s, 2]
                if k > maxk:
                    continue
                if i != 0 and on_bar > 0 and b[d] >= 2:
                    continue
                ok = True
                for m in range(1, k):
                    if b[i + m * d] >= 2:
                        ok = False
                        break
                if ok:
                    mask |= np.int64(1) << r
            if i != 0 and on_bar > 0 and dist <= 6:
                # doubles: enter with d, hit directly with d
                if dist <= 6 and b[dist] < 2 and on_bar <= 3:
                    r = dist * (dist - 1) // 2 + dist - 1
                    mask |= np.int64(1) << r
    total = 0.0
    for r in range(21):
        if (mask >> r) & 1:
            total += weights[r]
    return total


@njit(cache=True)
def _side(b, out, o, weights, direct, sums, dbls, rolls):
    """Fill ``out[o:o+SIDE_INPUTS]`` for the positive side of ``b``."""
    on_board = 0
    pips = 0
    back = 0
    home = 0
    anchors = 0
    blots = 0
    outfield = 0
    run = 0
    prime = 0
    for p in range(1, 25):
        n = b[p] if b[p] > 0 else 0
        k = o + 4 * (p - 1)
        out[k] = 1.0 if n >= 1 else 0.0
        out[k + 1] = 1.0 if n >= 2 else 0.0
        out[k + 2] = 1.0 if n >= 3 else 0.0
        out[k + 3] = (n - 3) / 2.0 if n > 3 else 0.0
        on_board += n
        pips += n * p
        if p >= 19:
            back += n
        if n >= 2:
            run += 1
            if run > prime:
                prime = run
            if p <= 6:
                home += 1
            elif p <= 12:
                outfield += 1
            elif p >= 19:
                anchors += 1
        else:
            run = 0
        if n == 1:
            blots += 1
    bar = b[25]
    on_board += bar
    pips += 25 * bar
    back += bar
    k = o + 96
    out[k] = bar / 2.0
    out[k + 1] = (15 - on_board) / 15.0
    out[k + 2] = pips / 167.0
    out[k + 3] = back / 15.0
    out[k + 4] = home / 6.0
    out[k + 5] = prime / 6.0
    out[k + 6] = anchors / 3.0
    out[k + 7] = blots / 5.0
    out[k + 8] = _shot_chance(b, weights, direct, sums, dbls, rolls)
    out[k + 9] = outfield / 6.0
    return pips


@njit(cache=True)
def _encode_batch(boards, out, weights, direct, sums, dbls, rolls):
    fb = np.empty(26, np.int8)
    for n in range(boards.shape[0]):
        b = boards[n]
        for i in range(26):
            fb[i] = -b[25 - i]
        row = out[n]
        pm = _side(b, row, 0, weights, direct, sums, dbls, rolls)
        po = _side(fb, row, SIDE_INPUTS, weights, direct, sums, dbls, rolls)
        # race: no contact
        my_back = 0
        for p in range(25, 0, -1):
            if b[p] > 0:
                my_back = p
                break
        opp_back = 25
        for p in range(0, 25):
            if b[p] < 0:
                opp_back = p
                break
        race = 1.0 if (my_back < opp_back and b[25] == 0 and b[0] == 0) else 0.0
        row[2 * SIDE_INPUTS] = race
        row[2 * SIDE_INPUTS + 1] = (po - pm) / 100.0


def encode(boards: np.ndarray) -> np.ndarray:
    """Inputs for a batch of boards (N, 26) → (N, NUM_INPUTS) float32."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim == 1:
        boards = boards[None, :]
    out = np.zeros((boards.shape[0], NUM_INPUTS), np.float32)
    _encode_batch(boards, out, _WEIGHTS, _DIRECT, _SUMS, _DBLS, _ROLLS)
    return out
