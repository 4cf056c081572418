"""Rollouts: a position played out many times by the engine, and the averages.

:func:`rollout` rolls a position (player on roll, before his roll) out ``trials`` times
with any :class:`~engine.evaluator.Evaluator`: plays at ``ply`` in the protocol's
numbering (1 = the evaluator on each result, GNU Backgammon's 0-ply), to the end of the
game or cut after ``truncate`` half-moves, cubeless or (``cubeful``) with the cube turned
by Tabla's own decisions. The trial loop (:mod:`engine.rollout_trials`) plays many trials
at once; dice are quasi-random (:mod:`engine.rollout_dice`) and depend only on the seed
and the trial number, so the result is the same with any number of ``workers`` (forked
processes, each playing slices of trial numbers), or with the slices played elsewhere by a
``slice_map`` (e.g. Ray tasks, :mod:`training.ray_rollout`).

Every figure comes with its standard error (the sample standard deviation of the trials
over ``sqrt(n)``; with stratified dice this is slightly conservative) and a 95% interval
(± 1.96 SE). With variance reduction the figures are the luck-adjusted means, and the
standard error of the plain means is reported beside them.

:func:`rollout_plays` rolls out candidate plays of one roll with the same dice streams
(common random numbers), so the differences between them have a small error.
"""
from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from engine import bearoff
from engine.batch import board_live, result_points
from engine.cube import CubeOwner, CubeState
from engine.evaluator import Evaluator, PROB_NAMES
from engine.values import cubeless_equity, flip_probs
from engine.rollout_trials import TrialRows, TrialSpec, run_trials
from engine.position import flip_array
from engine.search import MAX_PLY_PLAY, Search, SearchError

Z95 = 1.96
STOP_CHUNK = 324
"""Trials between two checks of ``until_se`` (9 × 36: whole strata of the first roll)."""
MAX_TRIALS = 10_000_000
SLOTS_VR = 192
SLOTS_PLAIN = 1296


class RolloutError(ValueError):
    """Rollout settings or a position that cannot be rolled out."""


@dataclass(frozen=True, slots=True)
class RolloutSettings:
    """How to roll out; every field is checked on construction."""

    trials: int = 1296
    """Number of trials (the maximum with ``until_se``)."""
    ply: int = 1
    """Ply of the plays inside the trials (1-3; 1 = the evaluator on each result)."""
    truncate: int | None = None
    """Cut each trial after this many half-moves (None: play to the end)."""
    cubeful: bool = False
    """Money cubeful equity too, the cube turned by Tabla's 0-ply decisions."""
    variance_reduction: bool = True
    """Subtract the luck of each roll (see :mod:`engine.rollout_trials`)."""
    until_se: float | None = None
    """Stop once the standard error of the equity (cubeful with ``cubeful``) is at most this
    (checked every 324 trials)."""
    seed: int = 1
    workers: int = 1
    """Processes playing slices of trials (fork); the result does not depend on it."""
    bearoff: bool = True
    """Where a trial is cut, use the bearoff databases for positions in their range."""

    def __post_init__(self) -> None:
        for name in ("trials", "ply", "workers", "seed"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool):
                raise RolloutError(f"{name} must be an integer, got {v!r}")
        for name in ("cubeful", "variance_reduction", "bearoff"):
            if not isinstance(getattr(self, name), bool):
                raise RolloutError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not 1 <= self.trials <= MAX_TRIALS:
            raise RolloutError(f"trials must be 1 to {MAX_TRIALS}, got {self.trials}")
        if not 1 <= self.ply <= MAX_PLY_PLAY:
            raise RolloutError(f"ply for plays in a rollout must be 1 to {MAX_PLY_PLAY}, got {self.ply}")
        if self.truncate is not None and (not isinstance(self.truncate, int) or isinstance(self.truncate, bool) or self.truncate < 1):
            raise RolloutError(f"truncate must be a positive number of half-moves, got {self.truncate!r}")
        if self.until_se is not None and (isinstance(self.until_se, bool) or not isinstance(self.until_se, (int, float)) or not self.until_se > 0):
            raise RolloutError(f"until_se must be a positive number, got {self.until_se!r}")
        if self.workers < 1:
            raise RolloutError(f"workers must be at least 1, got {self.workers}")
        if self.seed < 0:
            raise RolloutError(f"seed must be 0 or more, got {self.seed}")


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its standard error; ``ci`` is the half-width of the 95% interval."""

    mean: float
    se: float

    @property
    def ci(self) -> float:
        return Z95 * self.se

    @staticmethod
    def of(values: np.ndarray) -> "Estimate":
        v = np.asarray(values, dtype=np.float64)
        se = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("inf")
        return Estimate(float(v.mean()), se)

    def to_dict(self) -> dict[str, float]:
        return {"mean": round(self.mean, 6), "se": round(self.se, 6), "ci": round(self.ci, 6)}


@dataclass(frozen=True, slots=True, eq=False)
class RolloutResult:
    """A rollout for the player on roll at the start; see the module docstring.

    ``probabilities`` / ``equity`` / ``cubeful_equity`` are luck-adjusted with variance
    reduction; ``raw_equity`` (and ``raw_cubeful_equity``) are the plain means of the same
    trials, whose standard errors are those "without variance reduction".
    """

    trials: int
    probabilities: dict[str, Estimate]
    equity: Estimate
    raw_equity: Estimate
    cubeful_equity: Estimate | None
    raw_cubeful_equity: Estimate | None
    settings: RolloutSettings
    seconds: float
    rows: TrialRows = field(repr=False)

    def trial_equities(self) -> np.ndarray:
        """Each trial's (adjusted) cubeless equity: paired differences need them."""
        return cubeless_equity(self.rows.probs - self.rows.luck)

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        d: dict[str, Any] = {
            "trials": self.trials,
            "probabilities": {k: round(v.mean, 6) for k, v in self.probabilities.items()},
            "probabilities_se": {k: round(v.se, 6) for k, v in self.probabilities.items()},
            "equity": round(self.equity.mean, 6),
            "equity_se": round(self.equity.se, 6),
            "equity_ci": round(self.equity.ci, 6),
            "raw_equity": round(self.raw_equity.mean, 6),
            "raw_equity_se": round(self.raw_equity.se, 6),
            "settings": {"ply": s.ply, "truncate": s.truncate, "cubeful": s.cubeful,
                         "variance_reduction": s.variance_reduction, "until_se": s.until_se,
                         "seed": s.seed, "max_trials": s.trials, "bearoff": s.bearoff},
            "seconds": round(self.seconds, 3),
        }
        if self.cubeful_equity is not None:
            d["cubeful_equity"] = round(self.cubeful_equity.mean, 6)
            d["cubeful_equity_se"] = round(self.cubeful_equity.se, 6)
            d["cubeful_equity_ci"] = round(self.cubeful_equity.ci, 6)
            d["raw_cubeful_equity"] = round(self.raw_cubeful_equity.mean, 6)
            d["raw_cubeful_equity_se"] = round(self.raw_cubeful_equity.se, 6)
        return d


def summarize(rows: TrialRows, settings: RolloutSettings, seconds: float = 0.0) -> RolloutResult:
    """The figures of a set of trial rows."""
    adj = rows.probs - rows.luck
    cf = rows.cubeful - rows.cubeful_luck
    return RolloutResult(
        trials=len(rows.trials),
        probabilities={k: Estimate.of(adj[:, j]) for j, k in enumerate(PROB_NAMES)},
        equity=Estimate.of(cubeless_equity(adj)),
        raw_equity=Estimate.of(cubeless_equity(rows.probs)),
        cubeful_equity=Estimate.of(cf) if settings.cubeful else None,
        raw_cubeful_equity=Estimate.of(rows.cubeful) if settings.cubeful else None,
        settings=settings,
        seconds=seconds,
        rows=rows,
    )


Progress = Callable[[int, int, "RolloutResult | None"], None]
"""``progress(trials_done, trials_total, running_result_or_None)``."""


# --------------------------------------------------------------------------- workers
@dataclass(frozen=True, slots=True, eq=False)
class TrialJob:
    """What every slice of one rollout plays: the evaluator, the position, the spec, the slots."""

    evaluator: Evaluator
    board: np.ndarray
    spec: TrialSpec
    slots: int

    def run(self, trials: np.ndarray) -> TrialRows:
        """The rows of ``trials`` (a slice of trial numbers)."""
        return run_trials(self.evaluator, self.board, self.spec, trials, self.slots)


SliceMap = Callable[[TrialJob, np.ndarray], Iterable[TrialRows]]
"""``slice_map(job, trials)`` plays ``trials`` elsewhere, split as it likes (each slice by
:meth:`TrialJob.run`), and yields the rows of each slice as it finishes, in any order."""

_WORKER: dict[str, Any] = {}


def _worker_slice(trials: np.ndarray) -> TrialRows:
    w = _WORKER
    return run_trials(w["evaluator"], w["board"], w["spec"], trials, w["slots"])


class _Runner:
    """Plays slices of trial numbers here or in a pool of forked workers."""

    def __init__(self, evaluator: Evaluator, board: np.ndarray, spec: TrialSpec, workers: int, slots: int,
                 slice_map: SliceMap | None = None) -> None:
        self.args = (evaluator, board, spec)
        self.slots = slots
        self.pool = None
        self.slice_map = slice_map
        self.job = TrialJob(evaluator, board, spec, slots)
        if workers > 1 and slice_map is None:
            if spec.truncate is not None and spec.bearoff:
                bearoff.get_db().two_sided  # loaded (or built) once, before the workers fork
            _WORKER.update(evaluator=evaluator, board=board, spec=spec, slots=slots)
            self.pool = multiprocessing.get_context("fork").Pool(workers)
            self.workers = workers

    def play(self, trials: np.ndarray, on_slice: Callable[[TrialRows], None],
             on_partial: Callable[[TrialRows], None]) -> TrialRows:
        """Rows of ``trials``; ``on_slice`` gets each finished slice, ``on_partial`` (here,
        not in workers) the finished rows of the slice in play now and then."""
        if self.slice_map is not None:
            parts = []
            for part in self.slice_map(self.job, trials):
                parts.append(part)
                on_slice(part)
            return TrialRows.concat(parts)
        if self.pool is None:
            part = run_trials(*self.args, trials, self.slots, on_partial)
            on_slice(part)
            return part
        pieces = np.array_split(trials, self.workers * 4)
        parts = []
        for part in self.pool.imap_unordered(_worker_slice, [p for p in pieces if len(p)]):
            parts.append(part)
            on_slice(part)
        return TrialRows.concat(parts)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()
            _WORKER.clear()


# --------------------------------------------------------------------------- rollouts
def _check_state(state: CubeState, settings: RolloutSettings) -> None:
    if settings.cubeful and not state.is_money:
        raise RolloutError("cubeful rollouts are for money games (give no match length or score)")


def rollout(
    evaluator: Evaluator,
    board: np.ndarray,
    settings: RolloutSettings = RolloutSettings(),
    state: CubeState = CubeState(),
    progress: Progress | None = None,
    slice_map: SliceMap | None = None,
) -> RolloutResult:
    """Roll ``board`` (player on roll, before his roll) out; see the module docstring.

    ``slice_map`` plays the trials elsewhere (``settings.workers`` is then unused)."""
    board = np.ascontiguousarray(board, dtype=np.int8)
    if not board_live(board):
        raise RolloutError("the game in this position is already over")
    _check_state(state, settings)
    spec = TrialSpec(ply=settings.ply, truncate=settings.truncate, cubeful=settings.cubeful,
                     variance_reduction=settings.variance_reduction, seed=settings.seed, state=state,
                     bearoff=settings.bearoff)
    slots = SLOTS_VR if settings.variance_reduction else SLOTS_PLAIN
    t0 = time.perf_counter()
    runner = _Runner(evaluator, board, spec, settings.workers, slots, slice_map)
    done: list[TrialRows] = []

    def report(extra: TrialRows | None) -> None:
        if progress is None:
            return
        parts = done + ([extra] if extra is not None and len(extra.trials) else [])
        rows = TrialRows.concat(parts) if parts else None
        running = summarize(rows, settings, time.perf_counter() - t0) if rows is not None and len(rows.trials) > 1 else None
        progress(0 if rows is None else len(rows.trials), total, running)

    def on_slice(part: TrialRows) -> None:
        done.append(part)
        report(None)

    total = settings.trials
    try:
        if settings.until_se is None:
            rows = runner.play(np.arange(total), on_slice, report)
        else:
            parts = []
            for a in range(0, total, STOP_CHUNK):
                parts.append(runner.play(np.arange(a, min(a + STOP_CHUNK, total)), on_slice, report))
                rows = TrialRows.concat(parts)
                so_far = summarize(rows, settings)
                if len(rows.trials) > 1 and (so_far.cubeful_equity or so_far.equity).se <= settings.until_se:
                    break
    finally:
        runner.close()
    return summarize(rows, settings, time.perf_counter() - t0)


@dataclass(frozen=True, slots=True, eq=False)
class PlayRollout:
    """One candidate play rolled out, values for the player who plays (after the play).

    ``difference``: to the best candidate, from the per-trial paired differences (the
    candidates share their dice), with its standard error.
    """

    board: np.ndarray
    steps: tuple[tuple[int, int], ...]
    result: RolloutResult
    difference: Estimate


def _for_mover(res: RolloutResult) -> RolloutResult:
    """A rollout of the position after a play (opponent on roll) seen by the player who played."""
    r = res.rows
    rows = TrialRows(trials=r.trials, probs=flip_probs(r.probs), luck=_flip_luck(r.luck), cubeful=-r.cubeful,
                     cubeful_luck=-r.cubeful_luck, half_moves=r.half_moves)
    return summarize(rows, res.settings, res.seconds)


def _flip_luck(luck: np.ndarray) -> np.ndarray:
    """Luck (a difference of probabilities) seen by the other player."""
    out = np.empty_like(luck)
    out[:, 0] = -luck[:, 0]
    out[:, 1], out[:, 2], out[:, 3], out[:, 4] = luck[:, 3], luck[:, 4], luck[:, 1], luck[:, 2]
    return out


def rollout_plays(
    evaluator: Evaluator,
    board: np.ndarray,
    dice: tuple[int, int],
    settings: RolloutSettings = RolloutSettings(),
    state: CubeState = CubeState(),
    top: int = 5,
    choose_ply: int = 2,
    progress: Progress | None = None,
    slice_map: SliceMap | None = None,
) -> list[PlayRollout]:
    """The ``top`` plays of ``dice`` at ``choose_ply``, each rolled out with the same dice
    streams, best first by rollout equity (cubeful with ``settings.cubeful``)."""
    board = np.ascontiguousarray(board, dtype=np.int8)
    if not board_live(board):
        raise RolloutError("the game in this position is already over")
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
        raise RolloutError(f"top must be a positive integer, got {top!r}")
    _check_state(state, settings)
    try:
        ranked = Search(evaluator).rank_plays(board, dice[0], dice[1], choose_ply, min_candidates=top)
    except SearchError as exc:
        raise RolloutError(str(exc)) from None
    out = []
    for k in ranked.order[:top]:
        child = ranked.boards[k]
        steps = tuple(map(tuple, ranked.steps[k][: int(ranked.nsteps[k])].tolist()))
        if not board_live(child):  # the play ends the game: its value is exact
            res = _finished(child, settings, state)
        else:
            res = _for_mover(rollout(evaluator, flip_array(child), settings, state.flip(), progress, slice_map))
        out.append((child, steps, res))
    value = (lambda r: r.cubeful_equity.mean) if settings.cubeful else (lambda r: r.equity.mean)
    out.sort(key=lambda c: -value(c[2]))
    best = out[0][2]
    plays = []
    for child, steps, res in out:
        n = min(len(res.rows.trials), len(best.rows.trials))
        diff = _values(res, settings)[:n] - _values(best, settings)[:n]
        plays.append(PlayRollout(board=child, steps=steps, result=res, difference=Estimate.of(diff) if n > 1 else Estimate(0.0, 0.0)))
    return plays


def _values(res: RolloutResult, settings: RolloutSettings) -> np.ndarray:
    r = res.rows
    return (r.cubeful - r.cubeful_luck) if settings.cubeful else res.trial_equities()


def _finished(child: np.ndarray, settings: RolloutSettings, state: CubeState) -> RolloutResult:
    """A play that ends the game: every trial has its exact result."""
    pts = int(result_points(child[None])[0])
    p = np.array([1.0, pts >= 2, pts >= 3, 0.0, 0.0])
    n = settings.trials
    if state.jacoby and state.owner is CubeOwner.CENTRE:
        pts = 1
    rows = TrialRows(trials=np.arange(n), probs=np.tile(p, (n, 1)), luck=np.zeros((n, 5)), cubeful=np.full(n, float(pts)),
                     cubeful_luck=np.zeros(n), half_moves=np.zeros(n, np.int64))
    return summarize(rows, settings)
