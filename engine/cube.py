"""The doubling cube: cube states, cubeful equity from cubeless probabilities, decisions.

Everything is seen from the player on roll ("A"); the opponent is "B".

**Money** (equities in points, i.e. already multiplied by the cube value). Rick Janowski's
model as GNU Backgammon implements it: with ``W`` / ``L`` the average value of a win / a
loss (``W = 1 + (win_gammon + win_backgammon) / win``), the cubeless ("dead cube") equity
``p W - (1 - p) L`` and the fully live equity, piecewise linear in ``p`` through the take
point ``TP = (L - 1/2) / (W + L + 1/2)`` (B cashes below it when B may double) and the cash
point ``CP = (L + 1) / (W + L + 1/2)`` (A cashes above it when A may double), are mixed
with the cube efficiency ``x``::

    cubeful = x * live + (1 - x) * dead

so that a taker's take point is ``TP = (L - 1/2) / (W + L + x/2)`` (L, W: the taker's
average loss / win): 25% at ``x = 0`` without gammons, 20% at ``x = 1``.

**Match play** (equities are match-winning chances, MWC). The same model carried over:
the values of ending the game are MWCs from the match equity table (gammons at the
score included), and the take and cash points of the live cube are found level by level
from the highest cube that can still be reached down to the current one: at each level
the taker's take point is where his cubeful MWC after taking (owning the cube one level
up, live if he can still redouble usefully) equals his MWC after passing. A cube is dead
for a side once a single win at its value already wins him the match, or at the cap.
The Crawford game has no cube (dead-cube MWC); post-Crawford the leader's cube is dead.

**Cube efficiency** ``x``. GNU Backgammon's defaults (:func:`gnubg_cube_efficiency`, the
reference of ``tabla bench accuracy``): 0.68 in contact positions; in races
``0.55 + 0.00125 * pips`` of the player on roll, clamped to [0.6, 0.7]. Tabla's own
(:func:`cube_efficiency`) is one value per position class (:mod:`engine.classes`),
fitted to Tabla's cubeful rollouts by ``python -m scripts.fit_cube`` (:mod:`eval.cube_fit`):
see :data:`CUBE_X`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace

import numpy as np

from engine.met import MAX_MATCH_LENGTH, MatchEquityTable, default_met

CONTACT_X = 0.68
RACE_X_BASE = 0.55
RACE_X_PER_PIP = 0.00125
RACE_X_MIN = 0.6
RACE_X_MAX = 0.7
CUBE_X = {"contact": CONTACT_X, "crashed": CONTACT_X}
"""Tabla's cube efficiency of the contact classes (:func:`cube_efficiency`). A fit to Tabla's
own cubeful rollouts (2026-12-03, ``python -m scripts.fit_cube --model /work/runs/race4/latest.npz
--positions 30 --trials 144 --workers 1``) gave contact 0.666 ± 0.023 and crashed 0.569 ± 0.036;
with those values (and the race line below) ``tabla bench accuracy --positions 1000 --seed 1``
graded Tabla's ply-1 money cube worse (double + take 1.64 → 2.15 mEMG, doubles 0.77 → 1.33,
takes 0.87 → 0.82), so GNU Backgammon's values stay until a larger fit says otherwise."""
RACE_X = (RACE_X_BASE, RACE_X_PER_PIP, RACE_X_MIN, RACE_X_MAX)
"""Tabla's race efficiency ``(a, b, lo, hi)``: ``a + b * pips`` clamped to [lo, hi]. The same
fit gave a = 0.240, b = 0.00583 per pip over 30 race positions (one x for all: 0.545 ± 0.025)."""

_EPS = 1e-9


class CubeStateError(ValueError):
    """An inconsistent cube / score / match state."""


class CubeOwner(str, enum.Enum):
    """Who may double next: both (centred), the player on roll, or the opponent."""

    CENTRE = "centre"
    PLAYER = "player"
    OPPONENT = "opponent"

    def flip(self) -> "CubeOwner":
        if self is CubeOwner.PLAYER:
            return CubeOwner.OPPONENT
        if self is CubeOwner.OPPONENT:
            return CubeOwner.PLAYER
        return self


def _power_of_two(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


@dataclass(frozen=True, slots=True)
class CubeState:
    """Cube, score and options seen from the player on roll (money when ``match_length == 0``)."""

    value: int = 1
    owner: CubeOwner = CubeOwner.CENTRE
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False
    max_cube: int = 64

    def __post_init__(self) -> None:
        owner = self.owner
        if not isinstance(owner, CubeOwner):
            try:
                object.__setattr__(self, "owner", CubeOwner(owner))
            except ValueError:
                raise CubeStateError(f"cube owner must be centre, player or opponent, got {owner!r}") from None
        if not _power_of_two(self.max_cube) or self.max_cube > 1 << 15:
            raise CubeStateError(f"max_cube must be a power of two, got {self.max_cube}")
        if not _power_of_two(self.value) or self.value > self.max_cube:
            raise CubeStateError(f"cube value must be 1, 2, 4, ... up to {self.max_cube}, got {self.value}")
        if self.value == 1 and self.owner is not CubeOwner.CENTRE:
            raise CubeStateError("a cube at 1 cannot be owned: nobody has doubled yet")
        if not 0 <= self.match_length <= MAX_MATCH_LENGTH:
            raise CubeStateError(f"match length must be 0 (money) to {MAX_MATCH_LENGTH}, got {self.match_length}")
        if len(self.score) != 2:
            raise CubeStateError("score must hold two numbers")
        object.__setattr__(self, "score", (int(self.score[0]), int(self.score[1])))
        if self.match_length == 0:
            if self.score != (0, 0):
                raise CubeStateError("a money game has no score")
            if self.crawford:
                raise CubeStateError("the Crawford rule applies only in match play")
        else:
            n = self.match_length
            if not all(0 <= s < n for s in self.score):
                raise CubeStateError(f"scores must be 0 to {n - 1} in a {n}-point match, got {self.score}")
            if self.jacoby or self.beavers:
                raise CubeStateError("the Jacoby rule and beavers apply only to money games")
            if self.crawford:
                if n - 1 not in self.score:
                    raise CubeStateError("the Crawford game needs a player at match point (1-away)")
                if self.score == (n - 1, n - 1):
                    raise CubeStateError("the Crawford game cannot be played at double match point")
                if self.value != 1:
                    raise CubeStateError("the cube cannot have been turned in the Crawford game")

    # ----------------------------------------------------------------- views
    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points still needed ``(player on roll, opponent)`` (match play)."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        """A match game after the Crawford game: someone is at 1-away and it is not Crawford."""
        return self.match_length > 0 and not self.crawford and 1 in self.away

    @property
    def is_plain_money(self) -> bool:
        """Money, centred cube at 1, no Jacoby: cubeless equity ranks plays as well as any."""
        return self.is_money and self.owner is CubeOwner.CENTRE and self.value == 1 and not self.jacoby

    def flip(self) -> "CubeState":
        """The same state seen from the opponent."""
        return replace(self, owner=self.owner.flip(), score=(self.score[1], self.score[0]))

    def may_double(self) -> bool:
        """Whether the player on roll may double now (rules, not wisdom)."""
        if self.crawford:
            return False
        if self.owner is CubeOwner.OPPONENT:
            return False
        return self.value * 2 <= self.max_cube

    def may_beaver(self) -> bool:
        """Whether the opponent, doubled now, could beaver."""
        return self.is_money and self.beavers and self.value * 4 <= self.max_cube

    def doubled(self) -> "CubeState":
        """After the player on roll doubles and the opponent takes."""
        return replace(self, value=self.value * 2, owner=CubeOwner.OPPONENT)

    def beavered(self) -> "CubeState":
        """After the player on roll doubles and the opponent beavers (keeping the cube)."""
        return replace(self, value=self.value * 4, owner=CubeOwner.OPPONENT)


MONEY = CubeState()


# --------------------------------------------------------------------------- efficiency
def _mover_pips(b: np.ndarray) -> np.ndarray:
    """Pip counts of the player on roll of boards (N, 26)."""
    return (np.maximum(b, 0).astype(np.int64) * np.arange(26)).sum(axis=1)


def gnubg_cube_efficiency(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's default cube efficiency ``x`` of positions (player on roll), (N,)."""
    b = np.asarray(boards).reshape(-1, 26).astype(np.int32)
    idx = np.arange(26)
    my_back = np.where(b > 0, idx, 0).max(axis=1)
    opp_front = np.where(b < 0, idx, 26).min(axis=1)
    race = my_back < opp_front
    pips = _mover_pips(b)
    race_x = np.clip(RACE_X_BASE + RACE_X_PER_PIP * pips, RACE_X_MIN, RACE_X_MAX)
    return np.where(race, race_x, CONTACT_X)


def race_x(pips: np.ndarray | float) -> np.ndarray:
    """Tabla's race cube efficiency at the player on roll's pip count (:data:`RACE_X`)."""
    a, b, lo, hi = RACE_X
    return np.clip(a + b * np.asarray(pips, dtype=np.float64), lo, hi)


def cube_efficiency(boards: np.ndarray) -> np.ndarray:
    """Tabla's Janowski cube efficiency ``x`` of positions (player on roll), shape (N,):
    :data:`CUBE_X` of each position's class, :func:`race_x` for races and bear-offs."""
    from engine.classes import CRASHED, CONTACT, classify

    b = np.ascontiguousarray(np.asarray(boards).reshape(-1, 26), dtype=np.int8)
    cls = classify(b)
    out = race_x(_mover_pips(b))
    out[cls == CONTACT] = CUBE_X["contact"]
    out[cls == CRASHED] = CUBE_X["crashed"]
    return out


# --------------------------------------------------------------------------- take points
def money_take_point(w: float, l: float, x: float) -> float:
    """Janowski's money take point ``(L - 1/2) / (W + L + x/2)`` (the taker's W and L)."""
    return (l - 0.5) / (w + l + 0.5 * x)


def money_cash_point(w: float, l: float, x: float) -> float:
    """The doubler's cash point ``1 - TP(opponent)`` (the doubler's W and L)."""
    return 1.0 - money_take_point(l, w, x)


def average_win_loss(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(W, L)``: average points of a win and of a loss, from the five probabilities."""
    p = np.asarray(probs, dtype=np.float64)
    win = p[..., 0]
    lose = 1.0 - win
    w = 1.0 + (p[..., 1] + p[..., 2]) / np.maximum(win, _EPS)
    l = 1.0 + (p[..., 3] + p[..., 4]) / np.maximum(lose, _EPS)
    return w, l


# --------------------------------------------------------------------------- helpers
def _interp(p: np.ndarray, xs: list[np.ndarray], ys: list[np.ndarray]) -> np.ndarray:
    """Piecewise-linear function through knots ``(xs[i], ys[i])`` (xs ascending), at p."""
    out = np.array(ys[0], dtype=np.float64) * np.ones_like(p)
    for i in range(len(xs) - 1):
        x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
        span = x1 - x0
        t = np.where(span > _EPS, (p - x0) / np.where(span > _EPS, span, 1.0), 1.0)
        val = y0 + np.clip(t, 0.0, 1.0) * (y1 - y0)
        out = np.where(p >= x0, val, out)
    return out


def _solve(xs: list[np.ndarray], ys: list[np.ndarray], target: np.ndarray) -> np.ndarray:
    """The p where a non-decreasing piecewise-linear function reaches ``target`` (clamped)."""
    out = np.where(target <= ys[0], xs[0], xs[-1]) * np.ones_like(target)
    for i in range(len(xs) - 2, -1, -1):
        x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
        rise = y1 - y0
        t = np.where(rise > _EPS, (target - y0) / np.where(rise > _EPS, rise, 1.0), 0.0)
        inside = (target >= y0) & (target <= y1)
        out = np.where(inside, x0 + np.clip(t, 0.0, 1.0) * (x1 - x0), out)
    return np.clip(out, 0.0, 1.0)


class _Outcomes:
    """Values of ending the game for the player on roll: points (money) or MWC (match)."""

    def __init__(self, probs: np.ndarray, state: CubeState, met: MatchEquityTable | None) -> None:
        p = probs
        win = p[:, 0]
        lose = 1.0 - win
        safe_w = np.maximum(win, _EPS)
        safe_l = np.maximum(lose, _EPS)
        # fractions of wins / losses that are single, gammon (not bg), backgammon
        self.wb = np.where(win > _EPS, p[:, 2] / safe_w, 0.0)
        self.wg = np.where(win > _EPS, (p[:, 1] - p[:, 2]) / safe_w, 0.0)
        self.lb = np.where(lose > _EPS, p[:, 4] / safe_l, 0.0)
        self.lg = np.where(lose > _EPS, (p[:, 3] - p[:, 4]) / safe_l, 0.0)
        self.state = state
        self.met = met
        self.p = win

    def u(self, k: int) -> float:
        """Value of the player on roll netting ``k`` points (k < 0: the opponent gains)."""
        s = self.state
        if s.is_money:
            return float(k)
        a, b = s.away
        done = s.crawford or s.post_crawford
        if k >= 0:
            return self.met.mwc_after_game(a - k, b, done)
        return self.met.mwc_after_game(a, b + k, done)

    def win(self, v: int) -> np.ndarray:
        """Expected value given the player on roll wins with the cube at ``v``."""
        return (1.0 - self.wg - self.wb) * self.u(v) + self.wg * self.u(2 * v) + self.wb * self.u(3 * v)

    def lose(self, v: int) -> np.ndarray:
        return (1.0 - self.lg - self.lb) * self.u(-v) + self.lg * self.u(-2 * v) + self.lb * self.u(-3 * v)

    def alive(self, side: int, v: int) -> bool:
        """Whether ``side`` (0 = player on roll, 1 = opponent) gains by doubling from ``v``."""
        s = self.state
        if s.crawford or 2 * v > s.max_cube:
            return False
        if s.is_money:
            return True
        return v < s.away[side]

    def kinks(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        """Live-cube ``(lo, hi)`` at level v, as the player on roll's winning chance.

        ``lo``: his take point when the opponent doubles from v (the opponent cashes below);
        ``hi``: his cash point when he doubles from v (the opponent passes above).
        """
        if self.state.is_money:
            w = self.win(1)
            l_ = -self.lose(1)
            lo = (l_ - 0.5) / (w + l_ + 0.5)
            hi = (l_ + 1.0) / (w + l_ + 0.5)
            return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        levels = []
        lv = v
        while lv <= self.state.max_cube:
            levels.append(lv)
            lv *= 2
        zeros = np.zeros_like(self.p)
        ones = np.ones_like(self.p)
        lo_at: dict[int, np.ndarray] = {}
        hi_at: dict[int, np.ndarray] = {}
        for lv in reversed(levels):
            up = 2 * lv
            if self.alive(0, lv):
                # the opponent, doubled from lv, owns the cube at 2 lv and may redouble if alive
                xs, ys = [zeros], [self.lose(up)]
                if self.alive(1, up):
                    xs.append(lo_at[up])
                    ys.append(self.u(-up) * ones)
                xs.append(ones)
                ys.append(self.win(up))
                hi_at[lv] = _solve(xs, ys, self.u(lv) * ones)
            if self.alive(1, lv):
                xs, ys = [zeros], [self.lose(up)]
                if self.alive(0, up):
                    xs.append(hi_at[up])
                    ys.append(self.u(up) * ones)
                xs.append(ones)
                ys.append(self.win(up))
                lo_at[lv] = _solve(xs, ys, self.u(-lv) * ones)
        return lo_at.get(v, zeros), hi_at.get(v, ones)


# --------------------------------------------------------------------------- cubeful equity
def cubeful_equity(
    probs: np.ndarray,
    state: CubeState,
    x: np.ndarray | float,
    met: MatchEquityTable | None = None,
) -> np.ndarray:
    """Cubeful value for the player on roll: money points (× cube value) or MWC.

    ``probs``: (N, 5) or (5,) cubeless probabilities; ``x``: cube efficiency (scalar or (N,)).
    """
    probs = np.asarray(probs, dtype=np.float64)
    single = probs.ndim == 1
    p2 = probs.reshape(-1, 5)
    if not state.is_money and met is None:
        met = default_met()
    o = _Outcomes(p2, state, met)
    c = state.value
    p = o.p
    centred_jacoby = state.is_money and state.jacoby and state.owner is CubeOwner.CENTRE
    if centred_jacoby:
        win_c = np.full_like(p, float(c))
        lose_c = np.full_like(p, -float(c))
    else:
        win_c, lose_c = o.win(c), o.lose(c)
    dead = p * win_c + (1.0 - p) * lose_c
    a_may = state.owner in (CubeOwner.CENTRE, CubeOwner.PLAYER) and o.alive(0, c)
    b_may = state.owner in (CubeOwner.CENTRE, CubeOwner.OPPONENT) and o.alive(1, c)
    if not (a_may or b_may):
        out = dead
    else:
        lo, hi = o.kinks(c)
        ones = np.ones_like(p)
        xs, ys = [np.zeros_like(p)], [lose_c]
        if b_may:
            xs.append(np.minimum(lo, hi) if a_may else lo)
            ys.append(o.u(-c) * ones)
        if a_may:
            xs.append(hi)
            ys.append(o.u(c) * ones)
        xs.append(ones)
        ys.append(win_c)
        live = _interp(p, xs, ys)
        xv = np.asarray(x, dtype=np.float64)
        out = xv * live + (1.0 - xv) * dead
    return out[0] if single else out


def cash_value(state: CubeState, met: MatchEquityTable | None = None) -> float:
    """Value for the player on roll when his double is passed: c points or the MWC of +c."""
    if state.is_money:
        return float(state.value)
    a, b = state.away
    met = met or default_met()
    return met.mwc_after_game(a - state.value, b, state.crawford or state.post_crawford)


def take_point(
    state: CubeState,
    x: float,
    gammon_rates: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
    met: MatchEquityTable | None = None,
) -> float:
    """The taker's minimum winning chance when the player on roll doubles now.

    ``gammon_rates``: fractions of the doubler's wins that are gammons / backgammons and of
    his losses that are gammons / backgammons (gammons include backgammons). Found by
    bisection on the doubler's double-take value against the double-pass value.
    """
    gw, bw, gl, bl = gammon_rates
    doubled = state.doubled()
    drop = cash_value(state, met)

    def dt(p: float) -> float:
        probs = np.array([p, p * gw, p * bw, (1 - p) * gl, (1 - p) * bl])
        return float(cubeful_equity(probs, doubled, x, met))

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if dt(mid) < drop:
            lo = mid
        else:
            hi = mid
    return 1.0 - 0.5 * (lo + hi)


# --------------------------------------------------------------------------- decisions
class CubeAction(str, enum.Enum):
    """The proper cube action, named as in the protocol."""

    NO_DOUBLE = "no_double"
    DOUBLE_TAKE = "double_take"
    DOUBLE_DROP = "double_drop"
    TOO_GOOD = "too_good"
    NO_DOUBLE_BEAVER = "no_double_beaver"
    DOUBLE_BEAVER = "double_beaver"
    NO_CUBE = "no_cube"


@dataclass(frozen=True, slots=True)
class CubeDecision:
    """A cube decision; equities for the player on roll, per cube value (money) or MWC."""

    action: CubeAction
    double: bool
    take: bool
    beaver: bool
    no_double: float
    double_take: float
    double_drop: float
    double_beaver: float | None
    mwc: bool

    @property
    def proper_equity(self) -> float:
        """The value of the proper cube action: if the player doubles, the better for the
        taker of take (or beaver) and pass; otherwise no double. Same units as the fields."""
        if self.double:
            return min(self.double_drop, self.double_beaver if self.beaver else self.double_take)
        return self.no_double

    def equities(self) -> dict[str, float]:
        d = {"no_double": self.no_double, "double_take": self.double_take, "double_drop": self.double_drop}
        if self.double_beaver is not None:
            d["double_beaver"] = self.double_beaver
        return {k: round(float(v), 6) for k, v in d.items()}


def decide(
    state: CubeState,
    nd: float,
    dt: float,
    dp: float,
    db: float | None = None,
) -> CubeDecision:
    """The cube action from cubeful values (points or MWC) of no double, double/take,
    double/pass and (beavers) double/beaver. Reported equities are per cube value (money).
    """
    take = dt <= dp
    beaver = db is not None and take and db < dt
    if_doubled = min(dp, db if beaver else dt)
    may = state.may_double()
    double = may and if_doubled > nd
    if not may:
        action = CubeAction.NO_CUBE
    elif double:
        action = CubeAction.DOUBLE_BEAVER if beaver else CubeAction.DOUBLE_TAKE if take else CubeAction.DOUBLE_DROP
    elif not take:
        action = CubeAction.TOO_GOOD
    else:
        action = CubeAction.NO_DOUBLE_BEAVER if beaver else CubeAction.NO_DOUBLE
    scale = 1.0 / state.value if state.is_money else 1.0
    return CubeDecision(
        action=action,
        double=bool(double),
        take=bool(take),
        beaver=bool(beaver),
        no_double=nd * scale,
        double_take=dt * scale,
        double_drop=dp * scale,
        double_beaver=None if db is None else db * scale,
        mwc=not state.is_money,
    )


def cube_decision_from_probs(
    probs: np.ndarray,
    state: CubeState,
    x: float,
    met: MatchEquityTable | None = None,
) -> CubeDecision:
    """The 0-ply decision: Janowski's model applied to one set of probabilities."""
    probs = np.asarray(probs, dtype=np.float64).reshape(5)
    nd = float(cubeful_equity(probs, state, x, met))
    can_double_at_all = state.value * 2 <= state.max_cube and not state.crawford
    if can_double_at_all:
        dt = float(cubeful_equity(probs, state.doubled(), x, met))
    else:
        dt = nd
    dp = cash_value(state, met)
    db = float(cubeful_equity(probs, state.beavered(), x, met)) if state.may_beaver() else None
    return decide(state, nd, dt, dp, db)
