"""Legal plays: the distinct positions a roll can reach, with one play for each.

Rules enforced here (``../shared/RULES.md``, "Moving" and "Bearing off"):

* each die is one checker move; a double is played four times;
* a point held by two or more opposing checkers is blocked, also as an intermediate stop;
  landing on a single opposing checker hits it (also on an intermediate stop);
* "a side with checkers on the bar must enter all of them before moving anything else";
  a die of ``n`` enters on the mover's ``25 - n`` point;
* bearing off only with all 15 checkers home; a die bears off from its own point, or from
  the highest occupied point when it is higher than every occupied point;
* "play as many dice as the position allows"; when only one die of a mixed roll can be
  played, "the larger must be played when it can".

The kernel is an iterative depth-first search (numba: recursive cached functions crash
when loaded from the cache, numba issue 6061). Doubles only consider moves from a point no
higher than the previous move's, which reaches every result once; results are
de-duplicated through a small hash table, so duplicate plays collapse.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.dice import Roll
from engine.position import Position

MAX_DICE = 4
_HASH_BITS = 12
_HASH_SIZE = 1 << _HASH_BITS

_rng = np.random.default_rng(0x7AB1A)
_ZOBRIST = _rng.integers(-(2**62), 2**62, size=(26, 32), dtype=np.int64)


@njit(cache=True, inline="always")
def _legal(b, p, d, outside):
    """Return the destination of moving a checker from ``p`` with die ``d``, or -1."""
    if b[p] <= 0:
        return -1
    if p != 25 and b[25] > 0:
        return -1
    dest = p - d
    if dest >= 1:
        if b[dest] >= -1:
            return dest
        return -1
    if outside > 0:
        return -1
    if dest == 0:
        return 0
    for q in range(p + 1, 7):
        if b[q] > 0:
            return -1
    return 0


@njit(cache=True)
def _generate(start, d1, d2, out_boards, out_steps, out_nsteps, ht_stamp, ht_idx, stamp, zob):
    """Fill ``out_*`` with the distinct legal results of rolling ``d1``-``d2`` at ``start``.

    ``out_steps[k, 2*j], out_steps[k, 2*j+1] = from, to`` for the j-th checker move of
    result k (to 0 = off). ``stamp`` is a 1-element int64 array, bumped to clear the hash
    table in O(1). Returns the number of results, or -1 when ``out_boards`` is too small.
    """
    cap = out_boards.shape[0]
    boards = np.empty((MAX_DICE + 1, 26), np.int8)
    outside = np.zeros(MAX_DICE + 1, np.int64)
    pcur = np.zeros(MAX_DICE + 1, np.int64)
    moved = np.zeros(MAX_DICE + 1, np.int64)
    sfrom = np.zeros(MAX_DICE, np.int8)
    sto = np.zeros(MAX_DICE, np.int8)
    dice = np.empty(MAX_DICE, np.int64)
    used_hi = np.zeros(cap, np.int64)
    return _generate_core(start, d1, d2, out_boards, out_steps, out_nsteps, ht_stamp, ht_idx, stamp, zob,
                          boards, outside, pcur, moved, sfrom, sto, dice, used_hi)


_WS_COLS = 35  # int8 per result: 26 board entries, 8 step entries (4 x from/to), 1 step count
_WS64_FIXED = 1 + (MAX_DICE + 1) * 3 + MAX_DICE  # stamp, outside, pcur, moved, dice


@njit(cache=True)
def _generate_ws(start, d1, d2, ws8, ws64):
    """:func:`_generate` on two preallocated 1-D workspaces (few arguments: cheap to call).

    ``ws8`` int8, ``cap * 35 + 5 * 26 + 8`` long: the results' boards (cap x 26), steps
    (cap x 8) and step counts (cap), then the DFS boards and step origins/targets.
    ``ws64`` int64: hash table stamps and indices, the stamp, the DFS state and the
    per-result larger-die flags.
    """
    cap = (ws8.shape[0] - (MAX_DICE + 1) * 26 - 2 * MAX_DICE) // _WS_COLS
    h = (ws64.shape[0] - _WS64_FIXED - cap) // 2
    o = 2 * h
    a = cap * 26
    b = cap * 34
    c = cap * 35
    e = c + (MAX_DICE + 1) * 26
    return _generate_core(
        start, d1, d2,
        ws8[0:a].reshape((cap, 26)), ws8[a:b].reshape((cap, 2 * MAX_DICE)), ws8[b:c],
        ws64[0:h], ws64[h:o], ws64[o:o + 1], _ZOBRIST,
        ws8[c:e].reshape((MAX_DICE + 1, 26)),
        ws64[o + 1:o + 1 + MAX_DICE + 1],
        ws64[o + 1 + (MAX_DICE + 1):o + 1 + 2 * (MAX_DICE + 1)],
        ws64[o + 1 + 2 * (MAX_DICE + 1):o + 1 + 3 * (MAX_DICE + 1)],
        ws8[e:e + MAX_DICE],
        ws8[e + MAX_DICE:e + 2 * MAX_DICE],
        ws64[o + _WS64_FIXED - MAX_DICE:o + _WS64_FIXED],
        ws64[o + _WS64_FIXED:o + _WS64_FIXED + cap],
    )


@njit(cache=True)
def _generate_core(start, d1, d2, out_boards, out_steps, out_nsteps, ht_stamp, ht_idx, stamp, zob,
                   boards, outside, pcur, moved, sfrom, sto, dice, used_hi):
    """The search itself, on caller-provided scratch arrays (see :func:`_generate`)."""
    cap = out_boards.shape[0]
    dbl = d1 == d2
    nd = 4 if dbl else 2
    hi = d1 if d1 > d2 else d2

    count = 0
    best = -1
    stamp[0] += 1
    norders = 1 if dbl else 2
    out0 = 0
    for i in range(7, 26):
        if start[i] > 0:
            out0 += start[i]
    for order in range(norders):
        if dbl:
            for k in range(4):
                dice[k] = d1
        elif order == 0:
            dice[0] = hi
            dice[1] = d1 + d2 - hi
        else:
            dice[0] = d1 + d2 - hi
            dice[1] = hi
        for i in range(26):
            boards[0, i] = start[i]
        outside[0] = out0
        pcur[0] = 25
        moved[0] = False
        depth = 0
        while depth >= 0:
            leaf = False
            if depth == nd:
                leaf = True
            else:
                b = boards[depth]
                d = dice[depth]
                p = pcur[depth]
                if b[25] > 0 and p > 25:
                    p = 25
                dest = -1
                while p >= 1:
                    dest = _legal(b, p, d, outside[depth])
                    if dest >= 0:
                        break
                    if b[25] > 0:
                        p = 0
                        break
                    p -= 1
                if p >= 1 and dest >= 0:
                    pcur[depth] = p - 1
                    moved[depth] = True
                    nb = boards[depth + 1]
                    for i in range(26):
                        nb[i] = b[i]
                    nb[p] -= 1
                    o = outside[depth]
                    if dest >= 1:
                        if nb[dest] == -1:
                            nb[dest] = 1
                            nb[0] -= 1
                        else:
                            nb[dest] += 1
                        if p >= 7 and dest <= 6:
                            o -= 1
                    outside[depth + 1] = o
                    sfrom[depth] = p
                    sto[depth] = dest
                    pcur[depth + 1] = p if dbl else 25
                    moved[depth + 1] = False
                    depth += 1
                    continue
                if not moved[depth]:
                    leaf = True
            if leaf:
                if depth >= best:
                    if depth > best:
                        best = depth
                        count = 0
                        stamp[0] += 1
                    b = boards[depth]
                    h = np.int64(0)
                    for i in range(26):
                        h ^= zob[i, b[i] + 15]
                    slot = h & (ht_stamp.shape[0] - 1)
                    found = -1
                    while ht_stamp[slot] == stamp[0]:
                        k = ht_idx[slot]
                        same = True
                        for i in range(26):
                            if out_boards[k, i] != b[i]:
                                same = False
                                break
                        if same:
                            found = k
                            break
                        slot = (slot + 1) & (ht_stamp.shape[0] - 1)
                    isHi = depth == 1 and dice[0] == hi
                    if found >= 0:
                        if isHi:
                            used_hi[found] = True
                    else:
                        if count >= cap or count * 2 >= ht_stamp.shape[0]:
                            return -1
                        ht_stamp[slot] = stamp[0]
                        ht_idx[slot] = count
                        for i in range(26):
                            out_boards[count, i] = b[i]
                        for j in range(depth):
                            out_steps[count, 2 * j] = sfrom[j]
                            out_steps[count, 2 * j + 1] = sto[j]
                        out_nsteps[count] = depth
                        used_hi[count] = isHi
                        count += 1
            depth -= 1  # a leaf, or every move from here tried: back up
    if best == 1 and not dbl:
        anyhi = False
        for k in range(count):
            if used_hi[k]:
                anyhi = True
        if anyhi:
            n = 0
            for k in range(count):
                if used_hi[k]:
                    if n != k:
                        for i in range(26):
                            out_boards[n, i] = out_boards[k, i]
                        out_steps[n, 0] = out_steps[k, 0]
                        out_steps[n, 1] = out_steps[k, 1]
                        out_nsteps[n] = 1
                    n += 1
            count = n
    return count


@njit(cache=True)
def _generate_batch(boards, dice, out_boards, offsets, ht_stamp, ht_idx, stamp, zob, per_cap):
    """Children of many positions, concatenated; ``offsets`` gets N+1 entries.

    Returns the total count, -1 when ``out_boards`` is too small, or -2 when one
    position has more results than ``per_cap``.
    """
    n = boards.shape[0]
    tmp_b = np.empty((per_cap, 26), np.int8)
    tmp_s = np.empty((per_cap, 2 * MAX_DICE), np.int8)
    tmp_n = np.empty(per_cap, np.int8)
    stack = np.empty((MAX_DICE + 1, 26), np.int8)
    outside = np.zeros(MAX_DICE + 1, np.int64)
    pcur = np.zeros(MAX_DICE + 1, np.int64)
    moved = np.zeros(MAX_DICE + 1, np.int64)
    sfrom = np.zeros(MAX_DICE, np.int8)
    sto = np.zeros(MAX_DICE, np.int8)
    dv = np.empty(MAX_DICE, np.int64)
    used_hi = np.zeros(per_cap, np.int64)
    total = 0
    offsets[0] = 0
    for i in range(n):
        c = _generate_core(boards[i], dice[i, 0], dice[i, 1], tmp_b, tmp_s, tmp_n, ht_stamp, ht_idx, stamp, zob,
                           stack, outside, pcur, moved, sfrom, sto, dv, used_hi)
        if c < 0:
            return -2
        if total + c > out_boards.shape[0]:
            return -1
        for k in range(c):
            for j in range(26):
                out_boards[total + k, j] = tmp_b[k, j]
        total += c
        offsets[i + 1] = total
    return total


generate_into = _generate_ws
"""Numba-callable: ``generate_into(board, d1, d2, ws8, ws64)`` writes the distinct legal
results of a roll into ``ws8`` (result ``k`` is ``ws8[26 * k: 26 * k + 26]``, mover's view)
and returns their count, or -1 when the workspace is too small (:func:`new_workspace`)."""


def new_workspace(cap: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Workspaces ``(ws8, ws64)`` for :data:`generate_into`, room for ``cap`` results."""
    s = _Scratch(cap)
    return s.ws8, s.ws64


class _Scratch:
    """Reusable workspaces so that a call allocates nothing but its answer."""

    def __init__(self, cap: int = 1024) -> None:
        self.cap = cap
        h = _HASH_SIZE * (cap // 1024 + 1) * 2
        self.ws8 = np.zeros(cap * _WS_COLS + (MAX_DICE + 1) * 26 + 2 * MAX_DICE, np.int8)
        self.boards = self.ws8[: cap * 26].reshape(cap, 26)
        self.steps = self.ws8[cap * 26 : cap * 34].reshape(cap, 2 * MAX_DICE)
        self.nsteps = self.ws8[cap * 34 : cap * 35]
        self.ws64 = np.zeros(2 * h + _WS64_FIXED + cap, np.int64)
        self.ht_stamp = self.ws64[:h]
        self.ht_idx = self.ws64[h:2 * h]
        self.stamp = self.ws64[2 * h:2 * h + 1]


_scratch = _Scratch()


def _run(board: np.ndarray, d1: int, d2: int) -> int:
    global _scratch
    while True:
        s = _scratch
        n = _generate_ws(board, d1, d2, s.ws8, s.ws64)
        if n >= 0:
            return n
        _scratch = _Scratch(s.cap * 4)


def legal_results(board: np.ndarray, d1: int, d2: int) -> np.ndarray:
    """Distinct results (opponent not yet on roll: still the mover's view), shape (n, 26).

    An unplayable roll gives one result, the unchanged board.
    """
    if board.dtype != np.int8 or not board.flags.c_contiguous:
        board = np.ascontiguousarray(board, dtype=np.int8)
    s = _scratch
    n = _generate_ws(board, int(d1), int(d2), s.ws8, s.ws64)
    if n < 0:
        n = _run(board, int(d1), int(d2))
        s = _scratch
    return s.boards[:n].copy()


def legal_results_with_steps(board: np.ndarray, d1: int, d2: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Like :func:`legal_results`, plus ``steps (n, 4, 2)`` and ``nsteps (n,)`` for each."""
    n = _run(np.ascontiguousarray(board, dtype=np.int8), int(d1), int(d2))
    s = _scratch
    return s.boards[:n].copy(), s.steps[:n].reshape(n, MAX_DICE, 2).copy(), s.nsteps[:n].copy()


_batch_cap = [1 << 15]
_batch_scratch = [_scratch]


def children_batch(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All distinct results for each ``boards[i]`` rolling ``dice[i]`` (mover's view).

    Returns ``(children (M, 26) int8, offsets (N+1,) int64)``; the children of board i are
    ``children[offsets[i]:offsets[i+1]]``.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    n = boards.shape[0]
    offsets = np.empty(n + 1, np.int64)
    cap = max(_batch_cap[0], n * 64)
    while True:
        s = _batch_scratch[0]
        out = np.empty((cap, 26), np.int8)
        total = _generate_batch(boards, dice, out, offsets, s.ht_stamp, s.ht_idx, s.stamp, _ZOBRIST, s.cap)
        if total >= 0:
            return out[:total], offsets
        if total == -1:  # the batch needs more room: keep the larger size for next time
            cap *= 2
            _batch_cap[0] = max(_batch_cap[0], cap)
        else:  # one position has more plays than the per-position scratch holds
            _batch_scratch[0] = _Scratch(s.cap * 4)


def legal_positions(position: Position, roll: Roll) -> list[Position]:
    """The distinct positions (mover's view, before flipping) a roll can reach."""
    res = legal_results(position.array(), roll.high, roll.low)
    return [Position(tuple(int(x) for x in r)) for r in res]
