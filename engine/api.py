"""The engine's queries for Python programs: legal plays, best play, evaluation, cube.

>>> from engine.api import Engine                              # doctest: +SKIP
>>> eng = Engine.default()              # the shipped model    # doctest: +SKIP
>>> q = eng.query(position_id="4HPwATDgc/ABMA")                # doctest: +SKIP
>>> eng.best(q.position, (3, 1), ply=2, top=3).plays[0].play   # doctest: +SKIP
'8/5 6/5'
>>> eng.cube(q.position, ply=1, state=q.state).action          # doctest: +SKIP
'no_double'

Positions are :class:`engine.position.Position` objects seen from the player on roll;
:meth:`Engine.query` (or :func:`resolve_query`) builds one, with its cube state and dice,
from a GNU Backgammon Position ID (+ optional Match ID) or an XGID plus explicit fields.
Every answer is a plain frozen dataclass; ``to_dict()`` gives the protocol's JSON fields.
"""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from engine.cube import CubeDecision, CubeOwner, CubeState, decide, cash_value
from engine.dice import Roll
from engine.evaluator import Evaluator, cubeless_equity, probs_dict
from engine.ids import IdError, match_info_from_id, position_from_id, xgid_from_text
from engine.met import MatchEquityTable
from engine.notation import format_play
from engine.position import Position
from engine.rollout import PlayRollout, Progress, RolloutError, RolloutResult, RolloutSettings, rollout, rollout_plays
from engine.search import DEFAULT_FILTER, MoveFilter, Search, SearchError

DEFAULT_MAX_CUBE = 64
_MONEY = CubeState()


class QueryError(ValueError):
    """A request that cannot be answered: bad position, dice, state or ply."""


# --------------------------------------------------------------------------- fast IDs
_BAD = 99  # first entry of a decoded tuple that is not a position


@njit(cache=True)
def _pid_bytes_to_tuple(raw):
    """Decode the 10 bytes of a Position ID into the 26-tuple of a board.

    The first entry is ``_BAD`` when the bits are not a position (then the reference
    decoder says why). Returning a tuple lets numba build the Python object directly.
    """
    runs = np.zeros(50, np.int64)
    b = np.zeros(26, np.int64)
    k = 0
    n = 0
    for i in range(80):
        if (raw[i >> 3] >> (i & 7)) & 1:
            n += 1
        else:
            if k < 50:
                runs[k] = n
            k += 1
            n = 0
    opp_total = 0
    me_total = 0
    for i in range(25):
        opp_total += runs[i]
        me_total += runs[25 + i]
    if k < 50 or opp_total > 15 or me_total > 15:
        b[0] = _BAD
    else:
        b[0] = -runs[24]
        b[25] = runs[49]
        for i in range(24):
            me = runs[25 + i]
            opp = runs[23 - i]
            if me and opp:
                b[0] = _BAD
            b[i + 1] = me - opp
    return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
            b[13], b[14], b[15], b[16], b[17], b[18], b[19], b[20], b[21], b[22], b[23], b[24], b[25])


@njit(cache=True)
def _board_to_pid_bits(board, raw, after_play):
    """The 80 bits of the Position ID of ``board`` into ``raw`` (10 bytes): with the player
    on roll, or with ``after_play`` the result of his play (the opponent on roll next)."""
    for i in range(10):
        raw[i] = 0
    pos = 0
    for side in range(2):
        for i in range(25):
            if (side == 0) != after_play:
                n = -board[24 - i] if board[24 - i] < 0 else 0
            else:
                n = board[i + 1] if board[i + 1] > 0 else 0
            for _ in range(n):
                raw[pos >> 3] |= np.uint8(1 << (pos & 7))
                pos += 1
            pos += 1


def fast_position_from_id(pid: str) -> Position:
    """:func:`engine.ids.position_from_id` with a compiled bit decoder (the protocol's hot
    path); anything unusual goes to the reference decoder for its error message."""
    if not isinstance(pid, str) or len(pid) != 14:
        return position_from_id(pid)
    try:
        raw = binascii.a2b_base64(pid + "==", strict_mode=True)
    except (binascii.Error, ValueError):
        return position_from_id(pid)
    if len(raw) != 10:
        return position_from_id(pid)
    board = _pid_bytes_to_tuple(raw)
    if board[0] == _BAD:
        return position_from_id(pid)
    return Position.trusted(board)


def fast_position_id(board: np.ndarray, after_play: bool = False) -> str:
    """:func:`engine.ids.position_id` of a board array, without a Position: the player on
    roll's, or with ``after_play`` the ID of the board flipped (the opponent on roll)."""
    raw = np.empty(10, np.uint8)
    _board_to_pid_bits(np.asarray(board), raw, after_play)
    return binascii.b2a_base64(raw.tobytes(), newline=False)[:14].decode("ascii")


# --------------------------------------------------------------------------- queries
@dataclass(frozen=True, slots=True)
class Query:
    """A position with the player on roll, its cube state and (optionally) the dice."""

    position: Position
    state: CubeState = CubeState()
    dice: Roll | None = None


_ROLLS = {(a, b): Roll.of(a, b) for a in range(1, 7) for b in range(1, 7)}


def parse_dice(dice: Any) -> Roll:
    """``[3, 1]``, ``(3, 1)``, ``"31"`` or ``"3-1"`` → :class:`Roll`; QueryError otherwise."""
    if isinstance(dice, list) and len(dice) == 2:
        roll = _ROLLS.get((dice[0], dice[1])) if all(type(d) is int for d in dice) else None
        if roll is not None:
            return roll
    try:
        if isinstance(dice, str):
            return Roll.parse(dice)
        if isinstance(dice, (list, tuple)) and len(dice) == 2 and all(
            isinstance(d, int) and not isinstance(d, bool) for d in dice
        ):
            return Roll.of(dice[0], dice[1])
    except ValueError as exc:
        raise QueryError(str(exc)) from None
    raise QueryError(f"dice must be two numbers 1-6 like [3, 1], got {dice!r}")


def resolve_query(
    position_id: str | None = None,
    xgid: str | None = None,
    match_id: str | None = None,
    dice: Any = None,
    **fields: Any,
) -> Query:
    """Build a :class:`Query` the way the protocol reads a request.

    Exactly one of ``position_id`` / ``xgid``. An XGID's own cube, score, turn and dice
    apply (its maximum cube is capped at 64); a Match ID gives cube and score; explicit
    ``fields`` (``cube_value``, ``cube_owner``, ``match_length``, ``score``, ``crawford``,
    ``jacoby``, ``beavers``, ``max_cube``) override both.
    """
    if (position_id is None) == (xgid is None):
        raise QueryError("give exactly one of position_id and xgid")
    unknown = set(fields) - {"cube_value", "cube_owner", "match_length", "score", "crawford", "jacoby", "beavers", "max_cube"}
    if unknown:
        raise QueryError(f"unknown game-state field {sorted(unknown)[0]!r}")
    base: dict[str, Any] = {}
    roll: Roll | None = None
    try:
        if xgid is not None:
            if match_id is not None:
                raise QueryError("give a Match ID with a Position ID, not with an XGID")
            x = xgid_from_text(xgid)
            position = x.position
            base = dict(
                cube_value=x.cube_value,
                cube_owner=x.cube_owner_relative(),
                match_length=x.match_length,
                score=x.score_relative(),
                crawford=x.crawford,
                jacoby=x.jacoby,
                beavers=x.beavers,
                max_cube=min(x.max_cube, DEFAULT_MAX_CUBE),
            )
            if x.dice is not None:
                roll = Roll.of(*x.dice)
        else:
            if not isinstance(position_id, str):
                raise QueryError("position_id must be a string")
            position = fast_position_from_id(position_id)
            if match_id is not None:
                if not isinstance(match_id, str):
                    raise QueryError("match_id must be a string")
                m = match_info_from_id(match_id)
                base = dict(
                    cube_value=m.cube_value,
                    cube_owner=m.cube_owner_relative(),
                    match_length=m.match_length,
                    score=m.score_relative(),
                    crawford=m.crawford,
                    jacoby=m.jacoby if m.is_money else False,
                )
                if m.dice != (0, 0):
                    roll = Roll.of(*m.dice)
    except IdError as exc:
        raise QueryError(str(exc)) from None
    base.update(fields)
    for key in ("cube_value", "match_length", "max_cube"):
        if key in base and not (isinstance(base[key], int) and not isinstance(base[key], bool)):
            raise QueryError(f"{key} must be an integer, got {base[key]!r}")
    for key in ("crawford", "jacoby", "beavers"):
        if key in base and not isinstance(base[key], bool):
            raise QueryError(f"{key} must be true or false, got {base[key]!r}")
    if "score" in base:
        sc = base["score"]
        if not (isinstance(sc, (list, tuple)) and len(sc) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in sc)):
            raise QueryError(f"score must be [player_on_roll, opponent], got {sc!r}")
        base["score"] = tuple(sc)
    if "cube_owner" in base and not isinstance(base["cube_owner"], (str, CubeOwner)):
        raise QueryError(f"cube_owner must be centre, player or opponent, got {base['cube_owner']!r}")
    names = {"cube_value": "value", "cube_owner": "owner"}
    state = CubeState(**{names.get(k, k): v for k, v in base.items()}) if base else _MONEY  # CubeStateError: a ValueError
    if dice is not None:
        roll = parse_dice(dice)
    return Query(position=position, state=state, dice=roll)


# --------------------------------------------------------------------------- answers
@dataclass(frozen=True, slots=True)
class PlayInfo:
    """One play: notation, steps, the resulting Position ID (opponent on roll) and values.

    ``equity`` (cubeless) and ``probabilities`` are for the player who plays, after the
    play; ``cubeful_equity`` (per cube value, or MWC in a match) when the cube was used to
    rank; ``difference``: to the best play, in the ranking's units.
    """

    play: str
    steps: tuple[tuple[int, int], ...]
    position_id: str
    equity: float | None = None
    probabilities: dict[str, float] | None = None
    cubeful_equity: float | None = None
    difference: float | None = None
    ply: int | None = None

    def to_dict(self, with_probabilities: bool = True) -> dict[str, Any]:
        """The protocol's play object (``steps`` as a tuple of pairs: JSON arrays)."""
        d: dict[str, Any] = {"play": self.play, "steps": self.steps, "position_id": self.position_id}
        if self.equity is not None:
            d["equity"] = round(self.equity, 6)
            if with_probabilities:
                d["probabilities"] = self.probabilities
        if self.cubeful_equity is not None:
            d["cubeful_equity"] = round(self.cubeful_equity, 6)
        return d


@dataclass(frozen=True, slots=True)
class BestResult:
    """The ranked plays of a roll, best first (``plays[0]`` is the choice)."""

    plays: tuple[PlayInfo, ...]
    ply: int
    mwc: bool = False

    def to_dict(self, with_candidates: bool = True) -> dict[str, Any]:
        best = self.plays[0].to_dict(with_probabilities=False)
        if with_candidates:
            best["candidates"] = [p.to_dict() for p in self.plays]
        return best


@dataclass(frozen=True, slots=True)
class EvalResult:
    """A position before the roll: probabilities and equities for the player on roll.

    ``cubeful_equity``: the value of the proper cube action (per cube value for money,
    MWC in a match with ``mwc``).
    """

    probabilities: dict[str, float]
    equity: float
    cubeful_equity: float
    ply: int
    mwc: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "probabilities": self.probabilities,
            "equity": round(self.equity, 6),
            "cubeful_equity": round(self.cubeful_equity, 6),
        }
        if self.mwc:
            d["mwc"] = True
        return d


@dataclass(frozen=True, slots=True)
class CubeResult:
    """The cube decision for the player on roll, with the evaluation behind it."""

    decision: CubeDecision
    probabilities: dict[str, float]
    equity: float
    ply: int

    @property
    def action(self) -> str:
        return self.decision.action.value

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "action": self.action,
            "double": self.decision.double,
            "take": self.decision.take,
            "equities": self.decision.equities(),
        }
        if self.decision.mwc:
            d["mwc"] = True
        return d


@dataclass(frozen=True, slots=True, eq=False)
class RolledPlay:
    """A candidate play rolled out: its notation and the rollout for the player who plays."""

    play: str
    steps: tuple[tuple[int, int], ...]
    position_id: str
    result: RolloutResult
    difference: float
    difference_se: float

    @classmethod
    def of(cls, position: Position, p: PlayRollout) -> "RolledPlay":
        return cls(play=format_play(position, p.steps), steps=p.steps, position_id=fast_position_id(p.board, after_play=True),
                   result=p.result, difference=p.difference.mean, difference_se=p.difference.se)

    def to_dict(self) -> dict[str, Any]:
        return {"play": self.play, "steps": self.steps, "position_id": self.position_id, "rollout": self.result.to_dict(),
                "difference": round(self.difference, 6), "difference_se": round(self.difference_se, 6)}


# --------------------------------------------------------------------------- engine
class Engine:
    """Queries over one evaluator (see the module docstring)."""

    def __init__(
        self,
        evaluator: Evaluator,
        move_filter: MoveFilter = DEFAULT_FILTER,
        met: MatchEquityTable | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.search = Search(evaluator, move_filter)
        self.met = met

    @classmethod
    def default(cls, model_path: str | None = None) -> "Engine":
        """An engine on the shipped model (or ``model_path``); see :func:`load_model`."""
        return cls(load_model(model_path))

    # ----------------------------------------------------------------- queries
    @staticmethod
    def query(**kwargs: Any) -> Query:
        """Same as :func:`resolve_query`."""
        return resolve_query(**kwargs)

    def legal(self, position: Position, dice: Any) -> list[PlayInfo]:
        """Every distinct legal play (one entry with ``play == ""`` when none is possible)."""
        roll = dice if isinstance(dice, Roll) else parse_dice(dice)
        from engine.movegen import legal_results_with_steps

        boards, steps, nsteps = legal_results_with_steps(position.array(), roll.high, roll.low)
        return [self._play_info(position, boards[k], steps[k], nsteps[k]) for k in range(len(boards))]

    def best(
        self,
        position: Position,
        dice: Any,
        ply: int = 1,
        top: int = 1,
        state: CubeState | None = None,
    ) -> BestResult:
        """The ``top`` best plays at ``ply`` (1-3), ranked cubefully when ``state`` matters."""
        roll = dice if isinstance(dice, Roll) else parse_dice(dice)
        _check_int(ply, "ply")
        _check_int(top, "top")
        if top < 1:
            raise QueryError(f"top must be at least 1, got {top}")
        try:
            r = self.search.rank_plays(position.array(), roll.high, roll.low, ply, state, self.met, min_candidates=top)
        except SearchError as exc:
            raise QueryError(str(exc)) from None
        scale = self._scale(state)
        best_score = r.score[r.best]
        plays = []
        for k in r.order[:top]:
            plays.append(
                self._play_info(
                    position,
                    r.boards[k],
                    r.steps[k],
                    r.nsteps[k],
                    equity=float(r.equity[k]),
                    probabilities=probs_dict(r.probs[k]),
                    cubeful_equity=float(r.score[k]) * scale if r.cubeful else None,
                    difference=float(r.score[k] - best_score) * (scale if r.cubeful else 1.0),
                    ply=int(r.ply[k]),
                )
            )
        return BestResult(plays=tuple(plays), ply=ply, mwc=bool(state is not None and not state.is_money))

    def eval(self, position: Position, ply: int = 0, state: CubeState | None = None) -> EvalResult:
        """Probabilities, cubeless equity and the cubeful equity of the proper cube action."""
        state = state or CubeState()
        probs, eq, nd, dt, dp, db = self._cube_values(position, ply, state)
        dec = decide(state, nd, dt, dp, db)
        scale = self._scale(state)
        proper = min(dp, db if dec.beaver else dt) if dec.double else nd
        return EvalResult(probabilities=probs_dict(probs), equity=eq, cubeful_equity=proper * scale, ply=ply, mwc=not state.is_money)

    def cube(self, position: Position, ply: int = 0, state: CubeState | None = None) -> CubeResult:
        """The doubling decision for the player on roll at ``ply`` (0-2)."""
        state = state or CubeState()
        probs, eq, nd, dt, dp, db = self._cube_values(position, ply, state)
        return CubeResult(decision=decide(state, nd, dt, dp, db), probabilities=probs_dict(probs), equity=eq, ply=ply)

    def rollout(
        self,
        position: Position,
        settings: RolloutSettings = RolloutSettings(),
        state: CubeState | None = None,
        progress: Progress | None = None,
    ) -> RolloutResult:
        """Roll the position out (player on roll, before the roll); see :mod:`engine.rollout`."""
        try:
            return rollout(self.evaluator, position.array(), settings, state or _MONEY, progress)
        except RolloutError as exc:
            raise QueryError(str(exc)) from None

    def rollout_plays(
        self,
        position: Position,
        dice: Any,
        settings: RolloutSettings = RolloutSettings(),
        state: CubeState | None = None,
        top: int = 5,
        progress: Progress | None = None,
    ) -> list["RolledPlay"]:
        """The ``top`` plays of the roll (chosen at 2 ply) rolled out with common dice, best first."""
        roll = dice if isinstance(dice, Roll) else parse_dice(dice)
        try:
            plays = rollout_plays(self.evaluator, position.array(), (roll.high, roll.low), settings,
                                  state or _MONEY, top, progress=progress)
        except RolloutError as exc:
            raise QueryError(str(exc)) from None
        return [RolledPlay.of(position, p) for p in plays]

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def _scale(state: CubeState | None) -> float:
        return 1.0 / state.value if state is not None and state.is_money else 1.0

    def _cube_values(self, position: Position, ply: int, state: CubeState):
        _check_int(ply, "ply")
        states: list[CubeState | None] = [None, state]
        can_redouble = state.value * 2 <= state.max_cube and not state.crawford
        if can_redouble:
            states.append(state.doubled())
        if state.may_beaver():
            states.append(state.beavered())
        try:
            v = self.search.evaluate_position(position.array(), ply, states, self.met)
        except SearchError as exc:
            raise QueryError(str(exc)) from None
        probs = v.probs[0]
        nd = float(v.scores[1])
        dt = float(v.scores[2]) if can_redouble else nd
        db = float(v.scores[3]) if state.may_beaver() else None
        dp = cash_value(state, self.met)
        return probs, float(cubeless_equity(probs)), nd, dt, dp, db

    @staticmethod
    def _play_info(position: Position, board: np.ndarray, steps: np.ndarray, nsteps: int, **values: Any) -> PlayInfo:
        st = tuple(map(tuple, steps[: int(nsteps)].tolist()))
        return PlayInfo(play=format_play(position, st), steps=st, position_id=fast_position_id(board, after_play=True), **values)


def _check_int(v: Any, name: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise QueryError(f"{name} must be an integer, got {v!r}")


def limit_blas_threads(n: int = 1) -> bool:
    """Ask numpy's OpenBLAS to use ``n`` threads; True when it could.

    Search evaluates batches of tens to a few thousand positions, where BLAS threads
    cost more than they gain (measured 4x slower with 2 threads on a busy 2-core
    machine). Entry points (``tabla engine``, ``hint``, benchmarks) call this; library
    users decide for themselves. Best effort: finds the loaded OpenBLAS through
    ``/proc/self/maps`` (Linux) and does nothing elsewhere.
    """
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            libs = {parts[-1] for line in f if (parts := line.split()) and "openblas" in parts[-1]}
    except OSError:
        return False
    done = False
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(ctypes.c_int(n))
                done = True
                break
    return done


class ModelError(ValueError):
    """The model file is missing or invalid."""


def load_model(path: str | None = None) -> Evaluator:
    """The shipped model (``models.load_default_evaluator``) or the one at ``path``.

    Raises :class:`ModelError` with a one-line reason when it is missing or invalid.
    """
    try:
        import models
    except ImportError as exc:  # pragma: no cover - the package ships with models/
        raise ModelError(f"the models package is not available: {exc}") from None
    try:
        if path is None:
            return models.load_default_evaluator()
        return models.load_evaluator(path)
    except (OSError, ValueError, KeyError) as exc:
        where = path if path is not None else "the shipped model"
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"cannot load {where}: {msg}") from None
