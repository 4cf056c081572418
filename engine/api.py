"""The engine's queries for Python programs: legal plays, best play, evaluation, cube.

>>> from engine.api import Engine                              # doctest: +SKIP
>>> eng = Engine(evaluator)  # any Evaluator, e.g. the shipped model: models.load_default_evaluator()  # doctest: +SKIP
>>> q = eng.query(position_id="4HPwATDgc/ABMA")                # doctest: +SKIP
>>> eng.best(q.position, (3, 1), ply=2, top=3).plays[0].play   # doctest: +SKIP
'8/5 6/5'
>>> eng.cube(q.position, ply=1, state=q.state).action          # doctest: +SKIP
'no_double'

Positions are :class:`engine.position.Position` objects seen from the player on roll;
:meth:`Engine.query` (or :func:`engine.request.resolve_query`) builds one, with its cube state and dice,
from a GNU Backgammon Position ID (+ optional Match ID) or an XGID plus explicit fields.
Every answer is immutable (frozen dataclasses, and :class:`PlayInfo`, which writes a play's
notation and Position ID when first read); ``to_dict()`` gives the protocol's JSON fields.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.cube import MONEY, CubeDecision, CubeState, decide, cash_value
from engine.dice import Roll
from engine.evaluator import Evaluator, probs_dict
from engine.values import cubeless_equity
from engine.ids import position_id
from engine.met import MatchEquityTable
from engine.movegen import legal_results_with_steps
from engine.notation import format_play
from engine.position import Position
from engine.request import Query, QueryError, parse_dice, resolve_query
from engine.rollout import PlayRollout, Progress, RolloutError, RolloutResult, RolloutSettings, SliceMap, rollout, rollout_plays
from engine.search import DEFAULT_FILTER, MoveFilter, Search, SearchError

# --------------------------------------------------------------------------- answers
_UNSET: Any = object()


class PlayInfo:
    """One play: notation, steps, the resulting Position ID (opponent on roll) and values.

    ``equity`` (cubeless) and ``probabilities`` are for the player who plays, after the
    play; ``cubeful_equity`` (per cube value, or MWC in a match) when the cube was used to
    rank; ``difference``: to the best play, in the ranking's units.

    Immutable. A play made by :meth:`from_result` writes its notation, Position ID and
    probabilities object when they are first read (a search that only needs the choice
    does not pay for its text); they are the same strings and numbers either way.
    """

    _NAMES = ("play", "steps", "position_id", "equity", "probabilities", "cubeful_equity", "difference", "ply")
    __slots__ = ("_play", "steps", "_position_id", "equity", "_probabilities", "cubeful_equity", "difference", "ply",
                 "_origin", "_board", "_probs")

    def __init__(
        self,
        play: str,
        steps: tuple[tuple[int, int], ...],
        position_id: str,
        equity: float | None = None,
        probabilities: dict[str, float] | None = None,
        cubeful_equity: float | None = None,
        difference: float | None = None,
        ply: int | None = None,
    ) -> None:
        init = object.__setattr__
        init(self, "_play", play)
        init(self, "steps", steps)
        init(self, "_position_id", position_id)
        init(self, "equity", equity)
        init(self, "_probabilities", probabilities)
        init(self, "cubeful_equity", cubeful_equity)
        init(self, "difference", difference)
        init(self, "ply", ply)
        init(self, "_origin", None)
        init(self, "_board", None)
        init(self, "_probs", None)

    @classmethod
    def from_result(cls, origin: Position, board: np.ndarray, steps: np.ndarray, nsteps: int,
                    probs: np.ndarray | None = None, **values: Any) -> "PlayInfo":
        """The play of ``steps[:nsteps]`` from ``origin`` to ``board`` (mover's view), its
        probabilities array ``probs`` (for :attr:`probabilities`) and the other values."""
        p = cls(_UNSET, tuple(map(tuple, steps[: int(nsteps)].tolist())), _UNSET, **values)
        init = object.__setattr__
        init(p, "_origin", origin)
        init(p, "_board", board)
        if probs is not None:
            init(p, "_probabilities", _UNSET)
            init(p, "_probs", probs)
        return p

    @property
    def play(self) -> str:
        """The play in standard notation (e.g. ``8/5 6/5``)."""
        if self._play is _UNSET:
            object.__setattr__(self, "_play", format_play(self._origin, self.steps))
        return self._play

    @property
    def position_id(self) -> str:
        """The Position ID after the play, the opponent on roll."""
        if self._position_id is _UNSET:
            object.__setattr__(self, "_position_id", position_id(self._board, after_play=True))
        return self._position_id

    @property
    def probabilities(self) -> dict[str, float] | None:
        """The five probabilities (the protocol's object) for the player who played."""
        if self._probabilities is _UNSET:
            object.__setattr__(self, "_probabilities", probs_dict(self._probs))
        return self._probabilities

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"PlayInfo is immutable: cannot set {name}")

    def _fields(self) -> tuple:
        return tuple(getattr(self, n) for n in self._NAMES)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, PlayInfo) else NotImplemented

    def __hash__(self) -> int:
        return hash((self.play, self.steps, self.position_id))

    def __reduce__(self) -> tuple:
        return (PlayInfo, self._fields())

    def __repr__(self) -> str:
        return "PlayInfo(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._NAMES, self._fields())) + ")"

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
        return cls(play=format_play(position, p.steps), steps=p.steps, position_id=position_id(p.board, after_play=True),
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

    # ----------------------------------------------------------------- queries
    @staticmethod
    def query(**kwargs: Any) -> Query:
        """Same as :func:`resolve_query`."""
        return resolve_query(**kwargs)

    def legal(self, position: Position, dice: Any) -> list[PlayInfo]:
        """Every distinct legal play (one entry with ``play == ""`` when none is possible)."""
        roll = dice if isinstance(dice, Roll) else parse_dice(dice)
        boards, steps, nsteps = legal_results_with_steps(position.array(), roll.high, roll.low)
        return [PlayInfo.from_result(position, boards[k], steps[k], nsteps[k]) for k in range(len(boards))]

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
                PlayInfo.from_result(
                    position,
                    r.boards[k],
                    r.steps[k],
                    r.nsteps[k],
                    probs=r.probs[k],
                    equity=float(r.equity[k]),
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
        return EvalResult(probabilities=probs_dict(probs), equity=eq, cubeful_equity=dec.proper_equity, ply=ply, mwc=not state.is_money)

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
        slice_map: SliceMap | None = None,
    ) -> RolloutResult:
        """Roll the position out (player on roll, before the roll); see :mod:`engine.rollout`."""
        try:
            return rollout(self.evaluator, position.array(), settings, state or MONEY, progress, slice_map)
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
        slice_map: SliceMap | None = None,
    ) -> list["RolledPlay"]:
        """The ``top`` plays of the roll (chosen at 2 ply) rolled out with common dice, best first."""
        roll = dice if isinstance(dice, Roll) else parse_dice(dice)
        try:
            plays = rollout_plays(self.evaluator, position.array(), (roll.high, roll.low), settings,
                                  state or MONEY, top, progress=progress, slice_map=slice_map)
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


def _check_int(v: Any, name: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise QueryError(f"{name} must be an integer, got {v!r}")
