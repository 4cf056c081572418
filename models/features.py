"""Expert features of a contact position, compiled with numba.

Every kernel reads a board ``b`` (26 int8, :mod:`engine.position` layout) and describes
the side with **positive** counts ("S"), which moves from 24 towards 1 and has its bar at
index 25. The other side (negative counts) moves upwards from its bar at index 0. To
describe the other side, call the same kernel on the flipped board.

The features, their definitions and their scaling are listed in the encoding table of
:mod:`models.encoding`; each has a hand-worked unit test in ``tests/models``.

Rolls are indexed as :data:`engine.dice.ALL_ROLLS` (``r = h(h-1)/2 + l - 1`` for high
die ``h`` and low die ``l``); a set of rolls is a 21-bit mask.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.movegen import generate_into

ROLLS = ROLL_ARRAY.astype(np.int64)
WEIGHTS = ROLL_WEIGHTS.astype(np.float64)


@njit(cache=True)
def roll_index(h: int, l: int) -> int:
    """Index in :data:`engine.dice.ALL_ROLLS` of the roll with dice ``h >= l``."""
    return h * (h - 1) // 2 + l - 1


def _shot_tables():
    """Per distance: the rolls that cover it directly, as a sum, or as a multiple of a double."""
    direct = np.zeros(7, np.int64)
    sums = -np.ones((25, 3), np.int64)
    dbls = -np.ones((25, 3, 3), np.int64)  # (roll index, die, k)
    for r, (h, l) in enumerate(ROLLS.tolist()):
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


DIRECT, SUMS, DBLS = _shot_tables()


@njit(cache=True, inline="always")
def _double_shots(b, i, dist, maxk, entering, dbls):
    """The doubles that carry the negative side's checker on point ``i`` the ``dist`` pips to
    S's blot in at most ``maxk`` steps, every point in between open; ``entering``: the
    hitter's side has a checker on the bar, which must first enter on the double's point."""
    mask = np.int64(0)
    for s in range(3):
        r = dbls[dist, s, 0]
        if r < 0:
            break
        d = dbls[dist, s, 1]
        k = dbls[dist, s, 2]
        if k > maxk:
            continue
        if entering and b[d] >= 2:
            continue
        ok = True
        for m in range(1, k):
            if b[i + m * d] >= 2:
                ok = False
                break
        if ok:
            mask |= np.int64(1) << r
    return mask


@njit(cache=True)
def _blot_mask(b, j, on_bar, direct, sums, dbls, rolls, hitters, nh):
    """The rolls with which the negative side can hit S's blot on point ``j``.

    Direct shots (one die), combined shots (both dice; the intermediate point must not be
    held by S) and doubles (up to four steps, each intermediate point open). A hitter
    with checkers on the bar must enter them first: with one on the bar it may enter and
    then hit with the other die (or, with a double, with the remaining steps).
    """
    mask = np.int64(0)
    for h_ in range(nh):
        i = hitters[h_]
        if i >= j:
            break
        dist = j - i
        if i == 0 or on_bar == 0:
            # the hitter moves freely (a bar checker, when it is the only one, may go on)
            if dist <= 6:
                mask |= direct[dist]
            if i == 0 and on_bar >= 2:
                maxk = 5 - on_bar
            else:
                maxk = 4
                for s in range(3):
                    r = sums[dist, s]
                    if r < 0:
                        break
                    if b[i + rolls[r, 0]] < 2 or b[i + rolls[r, 1]] < 2:
                        mask |= np.int64(1) << r
        else:
            # one or more of its checkers wait on the bar: enter first, then hit
            maxk = 4 - on_bar
            if on_bar == 1 and dist <= 6:
                for e in range(1, 7):
                    if e != dist and b[e] < 2:
                        h = dist if dist > e else e
                        lo = e if dist > e else dist
                        mask |= np.int64(1) << (h * (h - 1) // 2 + lo - 1)
        mask |= _double_shots(b, i, dist, maxk, i != 0 and on_bar > 0, dbls)
        if i != 0 and on_bar > 0 and dist <= 6:
            # doubles: enter with d, then hit directly with d
            if b[dist] < 2 and on_bar <= 3:
                mask |= np.int64(1) << (dist * (dist - 1) // 2 + dist - 1)
    return mask


def _chunk_counts():
    """Ways out of 36 of each 7-roll chunk of a roll mask: ``[chunk, bits]``."""
    t = np.zeros((3, 128), np.int64)
    for c in range(3):
        for m in range(128):
            t[c, m] = sum(1 if ROLLS[7 * c + k, 0] == ROLLS[7 * c + k, 1] else 2 for k in range(7) if m >> k & 1)
    return t


CHUNK36 = _chunk_counts()


@njit(cache=True)
def _count36(mask):
    """Ways out of 36 to roll one of the rolls in ``mask``."""
    return CHUNK36[0, mask & 127] + CHUNK36[1, (mask >> 7) & 127] + CHUNK36[2, (mask >> 14) & 127]


def _free_shot_table() -> np.ndarray:
    """``[dist, pattern]``: the rolls with which a checker free to move (none of its side on
    the bar) hits a blot ``dist`` (1-12) pips ahead, when bit ``k`` of ``pattern`` says that
    the point ``k + 1`` pips ahead of it is held by S. Built by :func:`_blot_mask` itself on
    boards with one hitter and one blot, so the two always agree."""
    table = np.zeros((13, 1 << 11), np.int64)
    b = np.zeros(26, np.int8)
    hitters = np.zeros(25, np.int64)
    hitters[0] = 1
    for dist in range(1, 13):
        for pattern in range(1 << (dist - 1)):
            b[:] = 0
            b[1] = -1
            for k in range(dist - 1):
                if pattern >> k & 1:
                    b[2 + k] = 2
            b[1 + dist] = 1
            table[dist, pattern] = _blot_mask(b, 1 + dist, 0, DIRECT, SUMS, DBLS, ROLLS, hitters, 1)
    return table


FREE_SHOTS = _free_shot_table()
NO_TABLE = np.zeros((0, 0), np.int64)


@njit(cache=True)
def hit_features(b, weights, direct, sums, dbls, rolls, out, table):
    """Shots at S's blots: ``out[0..2]`` = (P1, P2, pip loss).

    * P1: share of the 36 rolls that hit at least one blot of S;
    * P2: share of the rolls that can hit two or more different blots (each of them, not
      necessarily both with one roll);
    * pip loss: the mean over the 36 rolls of the pips S loses to the most damaging hit
      the roll allows (a blot on point ``j`` hit loses ``25 - j`` pips), in pips.

    ``table``: :data:`FREE_SHOTS`, used while the other side has no checker on the bar
    (distances up to 12 looked up by the pattern of S's points in between, longer ones by
    doubles only: the same masks, several times faster), or :data:`NO_TABLE` to compute
    every shot by :func:`_blot_mask` (the tests compare the two). It is an argument, not a
    global, because numba reads a global array more slowly.
    """
    on_bar = -b[0]
    any_hit = np.int64(0)
    two_hit = np.int64(0)
    loss = 0.0
    # the points the other side can hit from, ascending (0: its bar, when a checker is there)
    hitters = np.empty(25, np.int64)
    nh = 0
    if on_bar > 0:
        hitters[0] = 0
        nh = 1
    held = np.int64(0)  # bit p: S holds point p
    for i in range(1, 25):
        v = b[i]
        if v < 0:
            hitters[nh] = i
            nh += 1
        elif v >= 2:
            held |= np.int64(1) << i
    fast = on_bar == 0 and table.shape[0] > 0
    # blots from the 1-point up: a later (higher) blot never costs more pips when hit
    for j in range(1, 25):
        if b[j] != 1:
            continue
        if not fast:
            m = _blot_mask(b, j, on_bar, direct, sums, dbls, rolls, hitters, nh)
        else:
            m = np.int64(0)
            for h_ in range(nh):
                i = hitters[h_]
                if i >= j:
                    break
                dist = j - i
                if dist <= 12:
                    m |= table[dist, (held >> (i + 1)) & ((np.int64(1) << (dist - 1)) - 1)]
                else:
                    m |= _double_shots(b, i, dist, 4, False, dbls)
        two_hit |= any_hit & m
        fresh = m & ~any_hit
        any_hit |= m
        if fresh:
            loss += (25 - j) * _count36(fresh)
    p1 = 0.0
    for r in range(21):
        if (any_hit >> r) & 1:
            p1 += weights[r]
    out[0] = p1
    out[1] = _count36(two_hit) / 36.0
    out[2] = loss / 36.0


@njit(cache=True)
def _escape_table(rolls, weights):
    """Escape chance for each 12-bit pattern of blocked points ahead of a checker.

    Bit ``k`` set: the point ``k + 1`` pips ahead is held by the other side. A roll
    escapes when one checker can move, landing only on open points, to a point beyond
    the farthest blocked point of the pattern. No blocked point: 1.
    """
    table = np.zeros(4096, np.float64)
    for mask in range(4096):
        far = 0
        for k in range(12):
            if mask & (1 << k):
                far = k + 1
        if far == 0:
            table[mask] = 1.0
            continue
        total = 0.0
        for r in range(21):
            h = rolls[r, 0]
            lo = rolls[r, 1]
            ok = False
            if h == lo:
                pos = 0
                for _ in range(4):
                    pos += h
                    if pos <= 12 and mask & (1 << (pos - 1)):
                        break
                    if pos > far:
                        ok = True
                        break
            else:
                for first in range(2):
                    a = h if first == 0 else lo
                    c = lo if first == 0 else h
                    if mask & (1 << (a - 1)):
                        continue
                    if a > far:
                        ok = True
                        break
                    pos = a + c
                    if pos > far and (pos > 12 or not mask & (1 << (pos - 1))):
                        ok = True
                        break
            if ok:
                total += weights[r]
        table[mask] = total
    return table


ESCAPE_TABLE = _escape_table(ROLLS, WEIGHTS)


@njit(cache=True)
def escape_from(b, p, table):
    """Share of rolls with which S's checker on point ``p`` (25 = the bar) escapes past the
    points the other side holds in the 12 points in front of it, counting only points
    outside S's home board (the other side's anchors there block nothing to escape)."""
    mask = 0
    for k in range(12):
        q = p - 1 - k
        if q < 7:
            break
        if b[q] <= -2:
            mask |= 1 << k
    return table[mask]


@njit(cache=True)
def rearmost(b):
    """``(S's rearmost point or 0, the other side's rearmost point in S's numbering or 25)``;
    25 is S's bar, 0 the other side's."""
    rear = 0
    for p in range(25, 0, -1):
        if b[p] > 0:
            rear = p
            break
    opp_rear = 25
    for i in range(0, 25):
        if b[i] < 0:
            opp_rear = i
            break
    return rear, opp_rear


@njit(cache=True)
def contact_features(b, table, out):
    """The positional features of S other than the shots (the encoding table's order)."""
    n = b  # S's checkers are the positive counts; every use below tests n[p] > 0 first
    rear, opp_rear = rearmost(b)
    # bar entry: points of the other side's home board (19-24 here) it holds
    closed = 0
    for p in range(19, 25):
        if b[p] <= -2:
            closed += 1
    out[0] = (closed / 6.0) ** 2 if n[25] > 0 else 0.0
    # escape of the rearmost checker, and how well S's checkers back there are contained
    # mask(p): bit k set when point p - 1 - k (>= 7) is held by the other side
    worst = 1.0
    rear_escape = 1.0
    mask = 0
    for p in range(8, 26):
        mask = ((mask << 1) | (1 if b[p - 1] <= -2 else 0)) & 4095
        if p >= 16 and table[mask] < worst:
            worst = table[mask]
        if p == rear:
            rear_escape = table[mask]
    out[1] = rear_escape
    out[2] = 1.0 - worst
    # mobility: (point, die) pairs S can play, the bar only while a checker is on it
    mob = 0
    if n[25] > 0:
        for d in range(1, 7):
            if b[25 - d] >= -1:
                mob += 1
    else:
        for p in range(2, 25):
            if n[p] > 0:
                for d in range(1, min(6, p - 1) + 1):
                    if b[p - d] >= -1:
                        mob += 1
    out[3] = mob / 36.0
    # timing: pips needed to bring every checker into the home board
    outside = 0
    for p in range(7, 26):
        if n[p] > 0:
            outside += n[p] * (p - 6)
    out[4] = outside / 100.0
    # anchors: the deepest and the most advanced point held in the other side's half
    back_anchor = 0
    for p in range(24, 18, -1):
        if n[p] >= 2:
            back_anchor = p
            break
    out[5] = (back_anchor - 18) / 6.0 if back_anchor else 0.0
    fwd = 0
    for p in range(13, 25):
        if n[p] >= 2:
            fwd = p
            break
    out[6] = (25 - fwd) / 12.0 if fwd else 0.0
    # pips S must move to pass the other side's rearmost checker (break contact)
    brk = 0
    for p in range(opp_rear + 1, 26):
        if n[p] > 0:
            brk += n[p] * (p - opp_rear)
    out[7] = brk / 152.0
    # S's points on the six points in front of the other side's rearmost checker
    blk = 0
    if opp_rear < 25:
        for p in range(opp_rear + 1, min(opp_rear + 6, 24) + 1):
            if n[p] >= 2:
                blk += 1
    out[8] = blk / 6.0
    # back game: two or more anchors in the other side's home board, or one
    anchors = 0
    back = n[25]
    for p in range(19, 25):
        if n[p] > 0:
            back += n[p]
        if n[p] >= 2:
            anchors += 1
    out[9] = (back - 3) / 4.0 if anchors >= 2 and back > 3 else 0.0
    out[10] = back / 8.0 if anchors == 1 else 0.0


@njit(cache=True)
def shape_features(b, table, out):
    """The four ``tabla-contact-v5`` features of S (the encoding table's order): free pips,
    spread of the rear checkers, escapes weighted by the way home, and the wall ahead."""
    rear, opp_rear = rearmost(b)
    free = 0
    total = 0
    count = 0
    for p in range(1, 26):
        if b[p] > 0:
            total += b[p] * p
            count += b[p]
            if p < opp_rear:
                free += b[p] * p
    out[0] = free / 100.0
    # the mean square distance behind the mean point of the checkers that are behind it
    spread = 0.0
    if count > 0:
        mean = total / count
        behind = 0
        for p in range(1, 26):
            if b[p] > 0 and p > mean:
                spread += b[p] * (p - mean) ** 2
                behind += b[p]
        if behind > 0:
            spread /= behind
    out[1] = spread / 400.0
    # each checker outside the home board: its escape chance times its distance from home;
    # and the lowest escape chance on the rearmost checker's way home (points 8..rear)
    mobility = float(b[7]) if b[7] > 0 else 0.0
    worst = 1.0
    mask = 0
    for p in range(8, 26):
        mask = ((mask << 1) | (1 if b[p - 1] <= -2 else 0)) & 4095
        e = table[mask]
        if b[p] > 0:
            mobility += b[p] * e * (p - 6)
        if p <= rear and e < worst:
            worst = e
    out[2] = mobility / 100.0
    out[3] = 1.0 - worst


@njit(cache=True)
def exposure_key(b):
    """What :func:`bearoff_exposure` of ``b`` depends on, as one number: −1 when it is 0 at
    once (S has a checker on the bar or off its home points 1-6, or the other side none on
    them); otherwise ``b[0..6]`` (the other side's bar and S's home points) packed 5 bits a
    point. Boards with the same key have the same exposure: S's plays stay on points 1-6,
    and only the other side's checkers on its bar and points 1-5 can hit a blot there."""
    if b[25] > 0:
        return np.int64(-1)
    contact = False
    for i in range(1, 25):
        if b[i] > 0 and i > 6:
            return np.int64(-1)
        if b[i] < 0 and i <= 6:
            contact = True
    if not contact:
        return np.int64(-1)
    key = np.int64(0)
    for i in range(7):
        key = key * 32 + (b[i] + 15)
    return key


@njit(cache=True)
def exposure_of_rolls(b, ws8, ws64, weights, direct, sums, dbls, rolls, shots, hits):
    """The mean over S's 21 rolls of the smallest P1 of the roll's results (see
    :func:`bearoff_exposure`), for a board whose :func:`exposure_key` is not −1."""
    total = 0.0
    for r in range(21):
        n = generate_into(b, rolls[r, 0], rolls[r, 1], ws8, ws64)
        best = 1.0
        for k in range(max(n, 0)):
            res = ws8[26 * k:26 * k + 26]
            left = False
            for i in range(1, 26):
                if res[i] > 0:
                    left = True
                    break
            if not left:
                best = 0.0
                break
            hit_features(res, weights, direct, sums, dbls, rolls, hits, shots)
            if hits[0] < best:
                best = hits[0]
                if best == 0.0:  # a safe play: nothing can be smaller
                    break
        total += weights[r] * best
    return total


@njit(cache=True)
def bearoff_exposure(b, ws8, ws64, weights, direct, sums, dbls, rolls, shots, hits):
    """S's shot exposure bearing off against contact: when S has every checker on its home
    points 1-6 (none on the bar) and the other side has a checker on one of them, the mean
    over S's 21 rolls of the smallest P1 (:func:`hit_features`) among the results of the
    roll (a result that bears off S's last checker counts 0); otherwise 0.

    That is the share of the other side's rolls that hit a blot after S's safest play of
    its next roll: the tactic of a bear-off against an anchor or a lone checker, which the
    static P1 of the position itself cannot see. ``ws8``, ``ws64``: a workspace of
    :func:`engine.movegen.new_workspace`; ``hits``: 3 float64 of scratch."""
    if exposure_key(b) < 0:
        return 0.0
    return exposure_of_rolls(b, ws8, ws64, weights, direct, sums, dbls, rolls, shots, hits)
