"""Building the bearoff databases of :mod:`engine.bearoff`: indexing, backward induction, files.

Index of a one-sided position
    A side's checkers on its six home points, ``c[0..5]`` = counts on points 1..6, at most
    15 in all. With the parts taken from the 6-point down, ``q = (c6, c5, ..., c1)``, the
    partial sums ``s_j = q_1 + ... + q_j + (j - 1)`` (j = 1..6) are strictly increasing and
    the index is ``sum_j C(s_j, j)`` (the combinatorial number system). This is a bijection
    from the positions with at most ``n`` checkers onto ``0 .. C(n + 6, 6) - 1``: 924
    positions for n = 6, 54,264 for n = 15. It is GNU Backgammon's bearoff numbering
    (index 1 = one checker on the 1-point, 6 = one on the 6-point, 7 = two on the 1-point).

Moves are those of :mod:`engine.movegen` (its numba kernel is called from the kernels
here), so the databases follow the project's rules with no second move generator. Without
contact the plays of one side do not depend on the other side, so each side's children
are generated once per position and roll.
"""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
from numba import njit

from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.movegen import _HASH_SIZE, _ZOBRIST, MAX_DICE, _generate_core

N_POINTS = 6
WIDE_POINTS = 8  # the wide one-sided database: 0-15 checkers on points 1-8 (490,314 positions)
MAX_CHECKERS = 15
ONE_SIDED_SIZE = 54264  # C(21, 6)
TWO_SIDED_CHECKERS = 6
TWO_SIDED_SIDE = 924  # C(12, 6)
N_ROLLS = 32  # all-off distribution: P(n rolls), n = 0 .. 31 (the last entry holds the tail)
N_GAMMON = 16  # first-off distribution: P(n rolls), n = 0 .. 15 (the last entry holds the tail)
SCALE = 65535  # 16-bit fixed point: a stored value v means v / SCALE
FORMAT_VERSION = 1

_BINOM = np.zeros((32, 12), np.int64)
for _n in range(32):
    for _k in range(12):
        _BINOM[_n, _k] = 1 if _k == 0 else (0 if _n < _k else _BINOM[_n - 1, _k - 1] + _BINOM[_n - 1, _k])

_CAP = 2048  # per-roll result capacity for the move generator's scratch


@njit(cache=True)
def rank_counts(c, binom) -> int:
    """Index of the counts ``c`` (points 1..P, P = ``len(c)``, six for the home board) in
    the numbering of this module."""
    npts = c.shape[0]
    s = -1
    r = 0
    for j in range(1, npts + 1):
        s += c[npts - j] + 1
        r += binom[s, j]
    return r


@njit(cache=True)
def unrank_counts(r, binom, out) -> None:
    """Write the ``len(out)`` counts of index ``r`` into ``out`` (inverse of :func:`rank_counts`)."""
    npts = out.shape[0]
    s_next = 64
    svals = np.empty(npts + 1, np.int64)
    for j in range(npts, 0, -1):
        s = j - 1
        while s + 1 < s_next and binom[s + 1, j] <= r:
            s += 1
        svals[j] = s
        r -= binom[s, j]
        s_next = s
    prev = -1
    for j in range(1, npts + 1):
        out[npts - j] = svals[j] - prev - 1
        prev = svals[j]


def one_sided_size(points: int = N_POINTS) -> int:
    """Positions of 0-15 checkers on ``points`` points: C(15 + points, points)."""
    return int(_BINOM[MAX_CHECKERS + points, points])


def all_positions(size: int = ONE_SIDED_SIZE, points: int = N_POINTS) -> np.ndarray:
    """The counts (points 1..P) of indices ``0 .. size - 1``, shape (size, P) int8."""
    return _all_positions(size, points, _BINOM)


@njit(cache=True)
def _all_positions(size, npts, binom):
    out = np.empty((size, npts), np.int8)
    tmp = np.empty(npts, np.int64)
    for r in range(size):
        unrank_counts(r, binom, tmp)
        for i in range(npts):
            out[r, i] = tmp[i]
    return out


def pip_order(pos: np.ndarray) -> np.ndarray:
    """Indices sorted by pip count (stable): every child comes before its parent."""
    pips = pos.astype(np.int64) @ np.arange(1, pos.shape[1] + 1)
    return np.argsort(pips, kind="stable")


@njit(cache=True)
def _children(board, npts, d1, d2, binom, sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob,
              stack, outside, pcur, moved, sfrom, sto, dv, used_hi, out_idx, out_count):
    """Indices of the distinct results of one side's ``board`` (checkers on points 1..P,
    P = ``npts``) rolling d1-d2; ``out_count[k]`` gets the checkers left on the board of
    result ``k``.
    """
    n = _generate_core(board, d1, d2, sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob,
                       stack, outside, pcur, moved, sfrom, sto, dv, used_hi)
    c = np.empty(npts, np.int64)
    for k in range(n):
        tot = 0
        for i in range(npts):
            c[i] = sc_b[k, i + 1]
            tot += c[i]
        out_idx[k] = rank_counts(c, binom)
        out_count[k] = tot
    return n


def _scratch() -> tuple:
    h = _HASH_SIZE * 4
    return (
        np.empty((_CAP, 26), np.int8), np.empty((_CAP, 2 * MAX_DICE), np.int8), np.empty(_CAP, np.int8),
        np.zeros(h, np.int64), np.zeros(h, np.int64), np.zeros(1, np.int64), _ZOBRIST,
        np.empty((MAX_DICE + 1, 26), np.int8), np.zeros(MAX_DICE + 1, np.int64),
        np.zeros(MAX_DICE + 1, np.int64), np.zeros(MAX_DICE + 1, np.int64),
        np.zeros(MAX_DICE, np.int8), np.zeros(MAX_DICE, np.int8), np.empty(MAX_DICE, np.int64),
        np.zeros(_CAP, np.int64), np.empty(_CAP, np.int64), np.empty(_CAP, np.int64),
    )


@njit(cache=True)
def _one_sided_chunk(order, lo, hi, pos, rolls, weights, binom, dist, mean, gdist, gmean,
                     sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob, stack, outside, pcur, moved,
                     sfrom, sto, dv, used_hi, cidx, ccount):
    """Fill rows ``order[lo:hi]`` of the all-off and first-off distributions (float64)."""
    npts = pos.shape[1]
    nr = dist.shape[1]
    ng = gdist.shape[1]
    board = np.zeros(26, np.int8)
    for k in range(lo, hi):
        idx = order[k]
        total = 0
        for i in range(npts):
            board[i + 1] = pos[idx, i]
            total += pos[idx, i]
        if total == 0:
            dist[idx, 0] = 1.0
            mean[idx] = 0.0
            gdist[idx, 0] = 1.0
            gmean[idx] = 0.0
            continue
        m = 1.0
        gm = 1.0
        for r in range(rolls.shape[0]):
            w = weights[r]
            n = _children(board, npts, rolls[r, 0], rolls[r, 1], binom, sc_b, sc_s, sc_n, ht_stamp, ht_idx,
                          stamp, zob, stack, outside, pcur, moved, sfrom, sto, dv, used_hi, cidx, ccount)
            best = cidx[0]
            for j in range(1, n):
                if mean[cidx[j]] < mean[best]:
                    best = cidx[j]
            m += w * mean[best]
            for t in range(nr - 1):
                dist[idx, t + 1] += w * dist[best, t]
            dist[idx, nr - 1] += w * dist[best, nr - 1]
            if total == MAX_CHECKERS:
                off = False
                for j in range(n):
                    if ccount[j] < MAX_CHECKERS:
                        off = True
                gbest = cidx[0]
                for j in range(1, n):
                    if gmean[cidx[j]] < gmean[gbest]:
                        gbest = cidx[j]
                if off:
                    gdist[idx, 1] += w
                else:
                    gm += w * gmean[gbest]
                    for t in range(ng - 1):
                        gdist[idx, t + 1] += w * gdist[gbest, t]
                    gdist[idx, ng - 1] += w * gdist[gbest, ng - 1]
        mean[idx] = m
        if total == MAX_CHECKERS:
            gmean[idx] = gm
        else:
            gdist[idx, 0] = 1.0
            gmean[idx] = 0.0


def build_one_sided(progress: Callable[[int], None] | None = None, chunk: int = 2048,
                    points: int = N_POINTS) -> dict[str, np.ndarray]:
    """The one-sided database of 0-15 checkers on points 1..``points`` as float64 arrays:
    ``dist`` (size, 32), ``gammon`` (size, 16), ``mean`` and ``gammon_mean`` (expected
    rolls), for the play minimising each mean; size = :func:`one_sided_size`. Six points
    is the home board (54,264 positions); more points hold races one or two rolls from home."""
    size = one_sided_size(points)
    pos = all_positions(size, points)
    order = pip_order(pos)
    dist = np.zeros((size, N_ROLLS))
    gdist = np.zeros((size, N_GAMMON))
    mean = np.zeros(size)
    gmean = np.zeros(size)
    sc = _scratch()
    rolls = ROLL_ARRAY.astype(np.int64)
    for lo in range(0, size, chunk):
        hi = min(lo + chunk, size)
        _one_sided_chunk(order, lo, hi, pos, rolls, ROLL_WEIGHTS, _BINOM, dist, mean, gdist, gmean, *sc)
        if progress is not None:
            progress(hi - lo)
    return {"dist": dist, "gammon": gdist, "mean": mean, "gammon_mean": gmean}


@njit(cache=True)
def _child_table(side, rolls, binom, ptr, out, sc_b, sc_s, sc_n, ht_stamp, ht_idx, stamp, zob,
                 stack, outside, pcur, moved, sfrom, sto, dv, used_hi, cidx, ccount):
    """CSR table of children: those of (index m, roll r) are ``out[ptr[21m + r]:ptr[21m + r + 1]]``."""
    tmp = np.empty(N_POINTS, np.int64)
    board = np.zeros(26, np.int8)
    nrolls = rolls.shape[0]
    total = 0
    ptr[0] = 0
    for m in range(side):
        unrank_counts(m, binom, tmp)
        for i in range(N_POINTS):
            board[i + 1] = tmp[i]
        for r in range(nrolls):
            n = 0
            if m > 0:
                n = _children(board, N_POINTS, rolls[r, 0], rolls[r, 1], binom, sc_b, sc_s, sc_n, ht_stamp, ht_idx,
                              stamp, zob, stack, outside, pcur, moved, sfrom, sto, dv, used_hi, cidx, ccount)
            if total + n > out.shape[0]:
                return -1
            for j in range(n):
                out[total + j] = cidx[j]
            total += n
            ptr[m * nrolls + r + 1] = total
    return total


def child_table(side: int = TWO_SIDED_SIDE) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr (side*21+1,), children)`` int64: the distinct results of each index and roll."""
    ptr = np.zeros(side * len(ROLL_ARRAY) + 1, np.int64)
    out = np.zeros(side * len(ROLL_ARRAY) * 64, np.int64)
    n = _child_table(side, ROLL_ARRAY.astype(np.int64), _BINOM, ptr, out, *_scratch())
    if n < 0:
        raise RuntimeError("child table overflow")
    return ptr, out[:n].copy()


@njit(cache=True)
def _two_sided_chunk(order, lo, hi, side, ptr, children, weights, win, ec, eo, ex):
    """Backward induction for pairs ``order[lo:hi]`` (flat index ``mover * side + opponent``).

    ``win``: cubeless probability that the side on roll wins. ``ec``, ``eo``, ``ex``: money
    cubeful equity per cube value with the cube centred, owned by the side on roll, owned by
    the opponent (see :mod:`engine.bearoff` for the method).
    """
    nr = weights.shape[0]
    for k in range(lo, hi):
        flat = order[k]
        m = flat // side
        o = flat % side
        if m == 0:
            win[flat] = 1.0
            ec[flat] = 1.0
            eo[flat] = 1.0
            ex[flat] = 1.0
            continue
        if o == 0:
            win[flat] = 0.0
            ec[flat] = -1.0
            eo[flat] = -1.0
            ex[flat] = -1.0
            continue
        v = 0.0
        ndc = 0.0
        ndo = 0.0
        ndx = 0.0
        for r in range(nr):
            bw = -1.0
            bc = -2.0
            bo = -2.0
            bx = -2.0
            for j in range(ptr[m * nr + r], ptr[m * nr + r + 1]):
                ch = o * side + children[j]
                x = 1.0 - win[ch]
                if x > bw:
                    bw = x
                x = -ec[ch]
                if x > bc:
                    bc = x
                x = -ex[ch]
                if x > bo:
                    bo = x
                x = -eo[ch]
                if x > bx:
                    bx = x
            w = weights[r]
            v += w * bw
            ndc += w * bc
            ndo += w * bo
            ndx += w * bx
        win[flat] = v
        ex[flat] = ndx
        dt = min(2.0 * ndx, 1.0)
        ec[flat] = max(ndc, dt)
        eo[flat] = max(ndo, dt)


def build_two_sided(progress: Callable[[int], None] | None = None, chunk: int = 32768) -> dict[str, np.ndarray]:
    """The two-sided database as float64 (924, 924) arrays, indexed [mover, opponent]:
    ``win``, ``cubeful_centred``, ``cubeful_owned``, ``cubeful_opponent_owns``."""
    side = TWO_SIDED_SIDE
    ptr, children = child_table(side)
    pos6 = all_positions(side)
    pips = pos6.astype(np.int64) @ np.arange(1, N_POINTS + 1)
    order = np.argsort((pips[:, None] + pips[None, :]).ravel(), kind="stable")
    n = side * side
    win, ec, eo, ex = (np.zeros(n) for _ in range(4))
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        _two_sided_chunk(order, lo, hi, side, ptr, children, ROLL_WEIGHTS, win, ec, eo, ex)
        if progress is not None:
            progress(hi - lo)
    shape = (side, side)
    return {"win": win.reshape(shape), "cubeful_centred": ec.reshape(shape),
            "cubeful_owned": eo.reshape(shape), "cubeful_opponent_owns": ex.reshape(shape)}


# ---------------------------------------------------------------------- fixed point and files
def quantize_rows(p: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """Round each row of probabilities to uint16 counts summing to exactly ``scale``
    (largest remainders get the missing units; ties go to the lower column)."""
    x = p * scale
    f = np.floor(x)
    deficit = (scale - f.sum(axis=1)).astype(np.int64)
    if deficit.min() < 0 or deficit.max() > p.shape[1]:
        raise ValueError("rows are not probability distributions")
    rank = np.argsort(-(x - f), axis=1, kind="stable")
    add = np.arange(p.shape[1])[None, :] < deficit[:, None]
    np.put_along_axis(f, rank, np.take_along_axis(f, rank, axis=1) + add, axis=1)
    return f.astype(np.uint16)


def quantize_unit(p: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """Probabilities in [0, 1] to the nearest uint16 count."""
    return np.rint(np.clip(p, 0.0, 1.0) * scale).astype(np.uint16)


def quantize_equity(e: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """Equities in [-1, 1] to uint16: ``v = round((e + 1) / 2 * scale)``."""
    return quantize_unit((e + 1.0) / 2.0, scale)


def _c_order(x: np.ndarray) -> np.ndarray:
    a = np.asarray(x)
    return a if a.flags.c_contiguous else a.copy(order="C")


def content_digest(arrays: dict[str, np.ndarray]) -> str:
    """sha256 of the arrays' names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = _c_order(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> str:
    """Write ``arrays`` like ``np.savez_compressed`` but byte-for-byte reproducibly (fixed
    member order and timestamps); returns the file's sha256."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            member = io.BytesIO()
            np.lib.format.write_array(member, _c_order(arrays[name]), allow_pickle=False)
            zf.writestr(info, member.getvalue(), compresslevel=9)
    data = buf.getvalue()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one per process: concurrent builds
    tmp.write_bytes(data)
    tmp.replace(path)
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------- verification
@njit(cache=True)
def _two_sided_residuals(side, ptr, children, weights, win, ec, eo, ex, out):
    """Largest |stored - one step of backward induction| of each array, over all pairs."""
    nr = weights.shape[0]
    for m in range(1, side):
        for o in range(1, side):
            v = 0.0
            ndc = 0.0
            ndo = 0.0
            ndx = 0.0
            for r in range(nr):
                bw = -1.0
                bc = -2.0
                bo = -2.0
                bx = -2.0
                for j in range(ptr[m * nr + r], ptr[m * nr + r + 1]):
                    c = children[j]
                    bw = max(bw, 1.0 - win[o, c])
                    bc = max(bc, -ec[o, c])
                    bo = max(bo, -ex[o, c])
                    bx = max(bx, -eo[o, c])
                w = weights[r]
                v += w * bw
                ndc += w * bc
                ndo += w * bo
                ndx += w * bx
            dt = min(2.0 * ndx, 1.0)
            out[0] = max(out[0], abs(win[m, o] - v))
            out[1] = max(out[1], abs(ec[m, o] - max(ndc, dt)))
            out[2] = max(out[2], abs(eo[m, o] - max(ndo, dt)))
            out[3] = max(out[3], abs(ex[m, o] - ndx))


def two_sided_residuals(ts: dict[str, np.ndarray], ptr: np.ndarray, children: np.ndarray) -> np.ndarray:
    """(4,) largest residuals of ``win`` and the three cubeful arrays against one step of
    backward induction on the children table ``(ptr, children)`` (see :func:`child_table`)."""
    out = np.zeros(4)
    arrs = [np.ascontiguousarray(ts[k], dtype=np.float64)
            for k in ("win", "cubeful_centred", "cubeful_owned", "cubeful_opponent_owns")]
    _two_sided_residuals(TWO_SIDED_SIDE, np.asarray(ptr, np.int64), np.asarray(children, np.int64),
                         ROLL_WEIGHTS, *arrs, out)
    return out
