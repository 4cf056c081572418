"""Network inputs: a board (player on roll) to a float32 vector, one encoding per net.

Every encoding describes both sides, each from its own point of view: block ``S`` for the
player on roll ("me"), block ``O`` for the opponent, read on the flipped board. An
encoding is chosen by name (:data:`ENCODINGS`); a network records the name it was
trained with, and a model whose name or input count does not match is refused.

``tabla-v1`` (216 inputs; the first nets) and ``tabla-contact-v2`` (242 inputs; contact
and crashed nets) share the first 107 inputs of a side:

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
shot chance (P1)        1      share of the 36 rolls with which the other side can hit at
                               least one of this side's blots (direct and combined shots,
                               intermediate stops must be open; bar entry first)
outfield blocks         1      points 7-12 held / 6 (blocking the other side's escape)
unused                  1      always 0 (a slot the first nets were built with)
======================  =====  =============================================================

``tabla-contact-v2`` adds 13 expert inputs per side (:mod:`models.features`):

======================  =====  =============================================================
double shots (P2)       1      share of rolls that can hit two or more different blots
pip loss                1      mean over the 36 rolls of the pips lost to the worst hit the
                               roll allows (a blot on point j loses 25 − j) / 24
bar entry               1      (other side's closed home points / 6)², when a checker is on
                               the bar (the share of rolls that fail to enter), else 0
rear escape             1      share of rolls with which the rearmost checker escapes past
                               the points the other side holds in the 12 points in front of
                               it, outside this side's home board (1: none there)
contained               1      1 − the smallest such escape chance from points 16-25
mobility                1      (die, point) pairs with a legal single-checker move / 36
timing                  1      pips needed to bring every checker into the home board / 100
back anchor             1      (p − 18) / 6 for the deepest point p in 19-24 held, else 0
forward anchor          1      (25 − p) / 12 for the most advanced point p in 13-24 held
break contact           1      pips needed to pass the other side's rearmost checker / 152
front block             1      points held on the 6 points in front of the other side's
                               rearmost checker / 6
back game (2+ anchors)  1      (checkers back − 3) / 4 with two or more anchors in 19-24
back game (1 anchor)    1      checkers back / 8 with exactly one anchor in 19-24
======================  =====  =============================================================

Both end with two global inputs: race (1 when there is no contact) and pip difference
(opponent − me) / 100. Totals: 2 × 107 + 2 = 216 and 2 × 120 + 2 = 242.

``tabla-contact-v3`` (244 inputs; the crashed net) is ``tabla-contact-v2`` followed by one
input per side (me, then the opponent, each on its own numbering), from
:func:`models.features.bearoff_exposure`:

======================  =====  =============================================================
bear-off exposure       1      when the side has every checker on its home points and the
                               other side has a checker on one of them: the mean over the
                               side's 21 rolls of the smallest P1 among the roll's results
                               (0 once its last checker is off), else 0. The share of shots
                               a bear-off against an anchor or a lone checker must leave,
                               which the static P1 does not see; already a probability
======================  =====  =============================================================

The first 242 inputs are those of ``tabla-contact-v2``, so a crashed net moves to this
encoding with zero weights on the two new inputs and computes what it did
(``python -m scripts.widen --encoding tabla-contact-v3 --net crashed``).

``tabla-contact-v4`` (246 inputs) is ``tabla-contact-v3`` followed by each side's bear-off
exposure times its checkers left / 15 (me, then the opponent). With the exposure alone the
net's response to it is one direction in the hidden layer, the same for a last checker and a
full home board, and it overshoots at high exposures with many checkers; the products let
that response change with the checkers left. It extends v3 (``EXTENDS``), so a v3 net moves to
it at zero weight on the products.

``tabla-contact-v5`` (250 inputs; for the contact net) is ``tabla-contact-v2`` followed by
four shape inputs per side (me, then the opponent, each on its own numbering), from
:func:`models.features.shape_features`; it extends v2, so a v2 net moves to it at zero weight:

======================  =====  =============================================================
free pips               1      pips of the side's checkers already past the other side's
                               rearmost checker (points below it), Σ n·p / 100: what it can
                               play without giving up a point that still matters
rear spread             1      with A the mean point of the side's checkers (bar = 25), the
                               mean of (p − A)² over the checkers behind A / 400
escape mobility         1      Σ over checkers on 7-25 of their escape chance (as in rear
                               escape) × (p − 6), / 100: how freely the way home is open
wall ahead              1      1 − the smallest escape chance from the points 8..rearmost
                               checker (0 when every checker is below 8): the worst wall
                               the rearmost checker still has to pass
======================  =====  =============================================================

``tabla-race-v1`` (275 inputs; the race net), per side: for each point 1-24 the units
n≥1, n≥2, n≥3, n≥4 and (n−4)/3 when n>4 (120); checkers off as a thermometer, off ≥ k
for k = 1..14 (14); crossovers (Σ over checkers outside the home board of the home-board
boundaries still to cross: 1 for 7-12, 2 for 13-18, 3 for 19-24) / 10; pips / 100; and
the pips wasted beyond the 1-point by a bear-off from the home board (Σ n·p over 1-6 −
the checkers there) / 30. Global: pip difference (opponent − me) / 50. 2 × 137 + 1.

``tabla-race-v2`` (286 inputs; the race net from the race stage): the 137 inputs of a side
in ``tabla-race-v1`` followed by 5 from the one-sided database (:mod:`models.race_features`):
estimated rolls to bear off every checker / 20, to bear off the first / 10 (0 once one is
off), checkers outside the home board / 15, checkers in the other side's home board / 5
and their pips to leave it / 20. Global: pip difference (opponent − me) / 50 and the
difference of the estimated rolls to finish (opponent − me) / 5. 2 × 142 + 2.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numba import njit

from engine import bearoff_build as bb
from models import race_features
from engine.movegen import new_workspace
from models.features import (DBLS, DIRECT, ESCAPE_TABLE, FREE_SHOTS, ROLLS, SUMS, WEIGHTS, exposure_of_rolls,
                             contact_features, exposure_key, hit_features, rearmost, shape_features)

SIDE_INPUTS = 107
NUM_INPUTS = 2 * SIDE_INPUTS + 2
EXPERT_INPUTS = 13
SIDE_INPUTS_V2 = SIDE_INPUTS + EXPERT_INPUTS
NUM_INPUTS_V2 = 2 * SIDE_INPUTS_V2 + 2
NUM_INPUTS_V3 = NUM_INPUTS_V2 + 2
NUM_INPUTS_V4 = NUM_INPUTS_V3 + 2
SHAPE_INPUTS = 4
NUM_INPUTS_V5 = NUM_INPUTS_V2 + 2 * SHAPE_INPUTS
RACE_SIDE_INPUTS = 137
NUM_INPUTS_RACE = 2 * RACE_SIDE_INPUTS + 1
RACE_SIDE_INPUTS_V2 = RACE_SIDE_INPUTS + race_features.EXTRA_SIDE_INPUTS
NUM_INPUTS_RACE_V2 = 2 * RACE_SIDE_INPUTS_V2 + 2


@njit(cache=True)
def _side(b, out, o, hits):
    """Fill ``out[o:o+SIDE_INPUTS]`` for the positive side of ``b``; ``hits[0]`` is P1."""
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
    out[k + 8] = hits[0]
    out[k + 9] = outfield / 6.0
    out[k + 10] = 0.0  # the unused input
    return pips


@njit(cache=True)
def _flip_into(b, fb):
    for i in range(26):
        fb[i] = -b[25 - i]


@njit(cache=True)
def _globals(b, row, k, pm, po):
    """Race flag and pip difference at ``row[k]``, ``row[k + 1]``."""
    my_back, opp_back = rearmost(b)
    row[k] = 1.0 if (my_back < opp_back and b[25] == 0 and b[0] == 0) else 0.0
    row[k + 1] = (po - pm) / 100.0


@njit(cache=True)
def _encode_v1(boards, out, weights, direct, sums, dbls, rolls, shots):
    fb = np.empty(26, np.int8)
    hits = np.empty(3, np.float64)
    for n in range(boards.shape[0]):
        b = boards[n]
        _flip_into(b, fb)
        row = out[n]
        hit_features(b, weights, direct, sums, dbls, rolls, hits, shots)
        pm = _side(b, row, 0, hits)
        hit_features(fb, weights, direct, sums, dbls, rolls, hits, shots)
        po = _side(fb, row, SIDE_INPUTS, hits)
        _globals(b, row, 2 * SIDE_INPUTS, pm, po)


@njit(cache=True)
def _side_v2(b, row, o, weights, direct, sums, dbls, rolls, shots, table, hits, extra):
    hit_features(b, weights, direct, sums, dbls, rolls, hits, shots)
    pips = _side(b, row, o, hits)
    k = o + SIDE_INPUTS
    row[k] = hits[1]
    row[k + 1] = hits[2] / 24.0
    contact_features(b, table, extra)
    for i in range(11):
        row[k + 2 + i] = extra[i]
    return pips


@njit(cache=True, inline="always")
def _row_v2(b, fb, row, weights, direct, sums, dbls, rolls, shots, table, hits, extra):
    """One board's ``tabla-contact-v2`` inputs into ``row``; leaves its flip in ``fb``."""
    _flip_into(b, fb)
    pm = _side_v2(b, row, 0, weights, direct, sums, dbls, rolls, shots, table, hits, extra)
    po = _side_v2(fb, row, SIDE_INPUTS_V2, weights, direct, sums, dbls, rolls, shots, table, hits, extra)
    _globals(b, row, 2 * SIDE_INPUTS_V2, pm, po)


@njit(cache=True)
def _encode_v2(boards, out, weights, direct, sums, dbls, rolls, shots, table):
    fb = np.empty(26, np.int8)
    hits = np.empty(3, np.float64)
    extra = np.empty(11, np.float64)
    for n in range(boards.shape[0]):
        _row_v2(boards[n], fb, out[n], weights, direct, sums, dbls, rolls, shots, table, hits, extra)


@njit(cache=True)
def _race_side(b, row, o):
    pips = 0
    on_board = 0
    cross = 0
    home_pips = 0
    home_n = 0
    for p in range(1, 25):
        n = b[p] if b[p] > 0 else 0
        k = o + 5 * (p - 1)
        row[k] = 1.0 if n >= 1 else 0.0
        row[k + 1] = 1.0 if n >= 2 else 0.0
        row[k + 2] = 1.0 if n >= 3 else 0.0
        row[k + 3] = 1.0 if n >= 4 else 0.0
        row[k + 4] = (n - 4) / 3.0 if n > 4 else 0.0
        pips += n * p
        on_board += n
        if p > 6:
            cross += n * ((p - 1) // 6)
        else:
            home_pips += n * p
            home_n += n
    n25 = b[25] if b[25] > 0 else 0
    pips += 25 * n25
    on_board += n25
    cross += 4 * n25
    off = 15 - on_board
    k = o + 120
    for i in range(14):
        row[k + i] = 1.0 if off >= i + 1 else 0.0
    row[k + 14] = cross / 10.0
    row[k + 15] = pips / 100.0
    row[k + 16] = (home_pips - home_n) / 30.0
    return pips


@njit(cache=True)
def _encode_race(boards, out):
    fb = np.empty(26, np.int8)
    for n in range(boards.shape[0]):
        b = boards[n]
        _flip_into(b, fb)
        row = out[n]
        pm = _race_side(b, row, 0)
        po = _race_side(fb, row, RACE_SIDE_INPUTS)
        row[2 * RACE_SIDE_INPUTS] = (po - pm) / 50.0


@njit(cache=True)
def _encode_race_v2(boards, out, mean, gmean, binom):
    fb = np.empty(26, np.int8)
    c = np.empty(6, np.int64)
    k = RACE_SIDE_INPUTS
    for n in range(boards.shape[0]):
        b = boards[n]
        _flip_into(b, fb)
        row = out[n]
        pm = _race_side(b, row, 0)
        fm = race_features.race_extras(b, row, k, mean, gmean, binom, c)
        po = _race_side(fb, row, RACE_SIDE_INPUTS_V2)
        fo = race_features.race_extras(fb, row, RACE_SIDE_INPUTS_V2 + k, mean, gmean, binom, c)
        row[2 * RACE_SIDE_INPUTS_V2] = (po - pm) / 50.0
        row[2 * RACE_SIDE_INPUTS_V2 + 1] = (fo - fm) / 5.0


def _prepare(boards: np.ndarray, width: int, out: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim == 1:
        boards = boards[None, :]
    if out is None:
        return boards, np.zeros((boards.shape[0], width), np.float32)
    if out.dtype != np.float32 or out.ndim != 2 or out.shape[0] != boards.shape[0] or out.shape[1] < width:
        raise ValueError(f"out must be float32 ({boards.shape[0]}, >= {width}), got {out.dtype} {out.shape}")
    return boards, out


def encode(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-v1`` inputs for a batch of boards (N, 26) → (N, 216) float32.

    Every encoder takes an optional ``out``: a float32 (N, >= inputs) array whose first
    columns it fills, every one of them (and returns), e.g. one with a bias column after
    the inputs; it need not be zeroed."""
    boards, out = _prepare(boards, NUM_INPUTS, out)
    _encode_v1(boards, out, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS)
    return out


def encode_contact(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-contact-v2`` inputs (N, 26) → (N, 242) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_V2, out)
    _encode_v2(boards, out, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS, ESCAPE_TABLE)
    return out


@njit(cache=True)
def _encode_v3(boards, out, weights, direct, sums, dbls, rolls, shots, ws8, ws64):
    """The two bear-off exposures after the ``tabla-contact-v2`` inputs of every row.

    An exposure runs the move generator over 21 rolls, and the plays of one roll (or a
    search's positions) often share it: the side on roll's is the same for every play that
    does not hit it. So each call computes each :func:`models.features.exposure_key` once,
    in a small open-addressing table of its own."""
    fb = np.empty(26, np.int8)
    hits = np.empty(3, np.float64)
    k = NUM_INPUTS_V2
    size = 64
    while size < 4 * boards.shape[0]:
        size *= 2
    keys = np.full(size, -1, np.int64)
    values = np.empty(size, np.float64)
    for n in range(boards.shape[0]):
        _flip_into(boards[n], fb)
        for side in range(2):
            b = boards[n] if side == 0 else fb
            key = exposure_key(b)
            value = 0.0
            if key >= 0:
                slot = ((key * 2654435761) >> 16) & (size - 1)
                while keys[slot] != -1 and keys[slot] != key:
                    slot = (slot + 1) & (size - 1)
                if keys[slot] == key:
                    value = values[slot]
                else:
                    value = exposure_of_rolls(b, ws8, ws64, weights, direct, sums, dbls, rolls, shots, hits)
                    keys[slot] = key
                    values[slot] = value
            out[n, k + side] = value


_WS8, _WS64 = new_workspace(1024)  # a home-board roll has few results (108 at most in 15,000 random bear-offs)


def encode_contact_v3(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-contact-v3`` inputs (N, 26) → (N, 244) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_V3, out)
    _encode_v2(boards, out, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS, ESCAPE_TABLE)
    _encode_v3(boards, out, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS, _WS8, _WS64)
    return out


@njit(cache=True)
def _encode_v4(boards, out):
    """Each side's bear-off exposure times its checkers left / 15, after the v3 inputs."""
    k = NUM_INPUTS_V3
    for n in range(boards.shape[0]):
        b = boards[n]
        mine = 0
        theirs = 0
        for i in range(26):
            if b[i] > 0:
                mine += b[i]
            elif b[i] < 0:
                theirs -= b[i]
        out[n, k] = out[n, k - 2] * mine / 15.0
        out[n, k + 1] = out[n, k - 1] * theirs / 15.0


def encode_contact_v4(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-contact-v4`` inputs (N, 26) → (N, 246) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_V4, out)
    encode_contact_v3(boards, out)
    _encode_v4(boards, out)
    return out


@njit(cache=True)
def _encode_v5(boards, out, weights, direct, sums, dbls, rolls, shots, table):
    """The ``tabla-contact-v2`` inputs, then the four shape inputs of each side (me, then the
    opponent), in one pass over the batch."""
    fb = np.empty(26, np.int8)
    hits = np.empty(3, np.float64)
    extra = np.empty(11, np.float64)
    shape = np.empty(SHAPE_INPUTS, np.float64)
    for n in range(boards.shape[0]):
        b = boards[n]
        row = out[n]
        _row_v2(b, fb, row, weights, direct, sums, dbls, rolls, shots, table, hits, extra)
        for side in range(2):
            shape_features(b if side == 0 else fb, table, shape)
            k = NUM_INPUTS_V2 + side * SHAPE_INPUTS
            for i in range(SHAPE_INPUTS):
                row[k + i] = shape[i]


def encode_contact_v5(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-contact-v5`` inputs (N, 26) → (N, 250) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_V5, out)
    _encode_v5(boards, out, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS, ESCAPE_TABLE)
    return out


def encode_race(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-race-v1`` inputs (N, 26) → (N, 275) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_RACE, out)
    _encode_race(boards, out)
    return out


def encode_race_v2(boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tabla-race-v2`` inputs (N, 26) → (N, 286) float32."""
    boards, out = _prepare(boards, NUM_INPUTS_RACE_V2, out)
    mean, gmean = race_features.tables()
    _encode_race_v2(boards, out, mean, gmean, bb._BINOM)
    return out


ENCODINGS: dict[str, tuple[int, Callable[..., np.ndarray]]] = {
    "tabla-v1": (NUM_INPUTS, encode),
    "tabla-contact-v2": (NUM_INPUTS_V2, encode_contact),
    "tabla-contact-v3": (NUM_INPUTS_V3, encode_contact_v3),
    "tabla-contact-v4": (NUM_INPUTS_V4, encode_contact_v4),
    "tabla-contact-v5": (NUM_INPUTS_V5, encode_contact_v5),
    "tabla-race-v1": (NUM_INPUTS_RACE, encode_race),
    "tabla-race-v2": (NUM_INPUTS_RACE_V2, encode_race_v2),
}
"""Encoding name → (number of inputs, batch encoder)."""

EXTENDS: dict[str, str] = {"tabla-contact-v3": "tabla-contact-v2", "tabla-contact-v4": "tabla-contact-v3",
                           "tabla-contact-v5": "tabla-contact-v2"}
"""Encodings whose first inputs are those of another encoding, in the same order: a net
moves to the longer one with zero weights on the added inputs and computes what it did."""


def encoder(name: str) -> tuple[int, Callable[..., np.ndarray]]:
    """The input count and encoder of an encoding; ``KeyError`` names the known ones."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise KeyError(f"unknown input encoding {name!r} (known: {', '.join(ENCODINGS)})") from None
