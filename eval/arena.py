"""The arena: bot A against bot B with duplicate dice, and what came out of it.

Three kinds of run:

* cubeless money (default): the fast batched :func:`eval.duel.duel` (many games at once).
* cubeful money (``cube=True``): full games through :mod:`eval.match` with the cube
  (Jacoby, beavers and automatic doubles optional), in duplicate pairs: both games of a
  pair draw the same dice from a generator seeded with ``(seed, pair)``, A in seat 0 in
  the first and in seat 1 in the second.
* matches (``match_length=N``): N-point matches with the Crawford rule, also in
  duplicate pairs; match wins for A with a 95% CI over pair averages.

Figures are always A's. ``export`` produces a Jellyfish ``.mat`` file (money: one ``0
point match`` session; matches: one file per match, ``stem-0001.mat``, ...) with A on the
left, holding the very games behind the figures (a cubeless run keeps the duel's moves).
"""
from __future__ import annotations

import logging
import math
import multiprocessing as mp
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from engine.evaluator import Evaluator
from engine.movegen import legal_results_with_steps
from eval.bots import Bot, make_bot
from eval.duel import GameTally, duel, pair_ci95
from eval.mat import export_mat
from engine.game import GameOptions
from eval.match import Action, DiceSource, GameRecord, MatchRecord, play_game, play_match

log = logging.getLogger(__name__)


@dataclass
class CubeStats:
    """Cube actions of one side over a run."""

    doubles: int = 0
    takes: int = 0
    drops: int = 0
    beavers: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class ArenaResult(GameTally):
    """Everything a run reports, from A's side."""

    a: str
    b: str
    kind: str
    """``cubeless``, ``cubeful`` or ``match``."""
    seed: int
    games: int
    cube_a: CubeStats = field(default_factory=CubeStats)
    cube_b: CubeStats = field(default_factory=CubeStats)
    match_length: int = 0
    matches: int = 0
    match_wins: int = 0
    match_win_rate: float = 0.0
    match_ci95: float = 0.0
    records: list[MatchRecord] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        """JSON-ready figures."""
        out = {}
        for k, v in self.__dict__.items():
            if k in ("points", "records"):
                continue
            if isinstance(v, CubeStats):
                out[k] = v.to_dict()
            elif isinstance(v, (float, np.floating)):
                out[k] = None if not math.isfinite(v) else round(float(v), 6)
            elif isinstance(v, (int, np.integer)):
                out[k] = int(v)
            else:
                out[k] = v
        return out

    def table(self) -> str:
        """The human-readable result table."""
        head = f"{self.a} (A) vs {self.b} (B): {self.games} games, {self.kind}"
        if self.kind == "match":
            head += f" ({self.matches} matches to {self.match_length})"
        head += f", duplicate dice, seed {self.seed}"
        rows = [head]
        if self.kind == "match":
            rows.append(
                f"  match wins A   {self.match_wins}/{self.matches} = {self.match_win_rate:.3f} ± {self.match_ci95:.3f} (95% CI)"
            )
        rows.append(f"  ppg A          {self.ppg:+.3f} ± {self.ci95:.3f} (95% CI)")
        rows.append(f"  {'':14} {'wins':>7} {'gammons':>8} {'backgammons':>12}")
        rows.append(f"  {'A':14} {self.wins:>7} {self.gammons:>8} {self.backgammons:>12}")
        rows.append(f"  {'B':14} {self.losses:>7} {self.gammons_lost:>8} {self.backgammons_lost:>12}")
        if self.kind != "cubeless":
            rows.append(f"  {'cube':14} {'doubles':>7} {'takes':>8} {'drops':>12} {'beavers':>8}")
            for name, c in (("A", self.cube_a), ("B", self.cube_b)):
                rows.append(f"  {name:14} {c.doubles:>7} {c.takes:>8} {c.drops:>12} {c.beavers:>8}")
        rows.append(f"  {self.games_per_s:.1f} games/s ({self.seconds:.1f} s)")
        return "\n".join(rows)


# ---------------------------------------------------------------------- seat handling
def swap_seats(game: GameRecord) -> GameRecord:
    """The same game with seats 0 and 1 exchanged (boards are per mover: unchanged)."""
    return replace(
        game,
        score=(game.score[1], game.score[0]),
        first=1 - game.first,
        winner=1 - game.winner,
        actions=[replace(a, player=1 - a.player) for a in game.actions],
    )


def _tally(game: GameRecord, a_seat: int, stats: tuple[CubeStats, CubeStats]) -> None:
    """Add a game's cube actions to A's and B's stats."""
    for act in game.actions:
        who = stats[0] if act.player == a_seat else stats[1]
        if act.kind == "double":
            who.doubles += 1
        elif act.kind == "take":
            who.takes += 1
        elif act.kind == "drop":
            who.drops += 1
        elif act.kind == "beaver":
            who.beavers += 1


# ---------------------------------------------------------------------- pair workers
_BOTS: tuple[Bot, Bot] | None = None


def _pair_dice(seed: int, pair: int) -> DiceSource:
    return DiceSource(np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32, pair, 0xA7E]))


def _play_pair(job: tuple[str, int, int, int, GameOptions]) -> tuple[int, list[MatchRecord]]:
    """Both games (or matches) of one duplicate pair; records with A in seat 0."""
    kind, seed, pair, length, options = job
    a, b = _BOTS
    out = []
    for twin in (0, 1):
        bots = (a, b) if twin == 0 else (b, a)
        dice = _pair_dice(seed, pair)
        if kind == "match":
            rec = play_match(bots, length, dice, options)
        else:
            g = play_game(bots, dice, options, 0, (0, 0), False, 2 * pair + twin + 1)
            rec = MatchRecord(names=(bots[0].name, bots[1].name), match_length=0, games=[g],
                              score=(g.points_for(0), g.points_for(1)))
        if twin == 1:
            rec = MatchRecord(names=(a.name, b.name), match_length=rec.match_length,
                              games=[swap_seats(g) for g in rec.games], score=(rec.score[1], rec.score[0]))
        out.append(rec)
    return pair, out


def _run_pairs(kind: str, a: Bot, b: Bot, pairs: int, seed: int, length: int, options: GameOptions,
               workers: int, progress: Callable[[int], None] | None) -> list[MatchRecord]:
    global _BOTS
    _BOTS = (a, b)
    jobs = [(kind, seed, k, length, options) for k in range(pairs)]
    results: list[list[MatchRecord] | None] = [None] * pairs
    try:
        if workers <= 1 or pairs < 2:
            for job in jobs:
                k, recs = _play_pair(job)
                results[k] = recs
                if progress:
                    progress(2)
        else:
            with mp.get_context("fork").Pool(workers) as pool:
                for k, recs in pool.imap_unordered(_play_pair, jobs, chunksize=max(1, min(16, pairs // (8 * workers)))):
                    results[k] = recs
                    if progress:
                        progress(2)
    finally:
        _BOTS = None
    return [r for recs in results for r in recs]


# ---------------------------------------------------------------------- the run
def make_bots(
    spec_a: str, spec_b: str, seed: int, load_evaluator: Callable[[str | None], Evaluator] | None = None
) -> tuple[Bot, Bot]:
    """Both bots of a run; random bots draw from generators derived from ``seed``;
    ``load_evaluator`` as for :func:`eval.bots.make_bot`."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 0xB07])
    a = make_bot(spec_a, np.random.default_rng(rng.integers(2**63)), load_evaluator)
    b = make_bot(spec_b, np.random.default_rng(rng.integers(2**63)), load_evaluator)
    return a, b


def run_arena(
    spec_a: str,
    spec_b: str,
    games: int,
    seed: int = 0,
    cube: bool = False,
    match_length: int = 0,
    workers: int = 1,
    options: GameOptions | None = None,
    keep_records: bool = False,
    progress: Callable[[int], None] | None = None,
    bots: tuple[Bot, Bot] | None = None,
) -> ArenaResult:
    """Play A against B. ``games``: games for money runs, matches for match runs (both
    rounded up to whole duplicate pairs)."""
    if games < 1:
        raise ValueError("the arena needs at least one game")
    if match_length < 0:
        raise ValueError(f"match length must be positive, got {match_length}")
    a, b = bots if bots is not None else make_bots(spec_a, spec_b, seed)
    kind = "match" if match_length else "cubeful" if cube else "cubeless"
    start = time.perf_counter()
    if kind == "cubeless":
        d = duel(a, b, games, seed, workers=workers, progress=progress, record=keep_records)
        records = duel_records(d.history, d.points, (a.name, b.name)) if keep_records else []
        return ArenaResult(a=spec_a, b=spec_b, kind=kind, seed=seed, games=d.n, records=records, **d.tally())
    opts = options or GameOptions()
    pairs = (games + 1) // 2
    records = _run_pairs("match" if kind == "match" else "money", a, b, pairs, seed, match_length, opts, workers, progress)
    seconds = time.perf_counter() - start
    all_games = [g for r in records for g in r.games]
    stats = (CubeStats(), CubeStats())
    for g in all_games:
        _tally(g, 0, stats)
    pts = np.array([g.points_for(0) for g in all_games], dtype=np.int64)
    ppg, ci = pair_ci95(pts) if kind != "match" else (float(pts.mean()), _plain_ci(pts))
    res = ArenaResult(
        a=spec_a, b=spec_b, kind=kind, seed=seed, games=len(all_games), ppg=ppg, ci95=ci,
        wins=sum(1 for g in all_games if g.winner == 0),
        losses=sum(1 for g in all_games if g.winner == 1),
        gammons=sum(1 for g in all_games if g.winner == 0 and g.result >= 2),
        backgammons=sum(1 for g in all_games if g.winner == 0 and g.result >= 3),
        gammons_lost=sum(1 for g in all_games if g.winner == 1 and g.result >= 2),
        backgammons_lost=sum(1 for g in all_games if g.winner == 1 and g.result >= 3),
        seconds=seconds, games_per_s=len(all_games) / seconds if seconds > 0 else math.inf,
        points=pts, cube_a=stats[0], cube_b=stats[1], records=records if keep_records else [],
    )
    if kind == "match":
        won = np.array([1.0 if r.winner == 0 else 0.0 for r in records])
        rate, mci = pair_ci95(won)
        res.match_length = match_length
        res.matches = len(records)
        res.match_wins = int(won.sum())
        res.match_win_rate = rate
        res.match_ci95 = mci
    return res


def duel_records(history: list, points: np.ndarray, names: tuple[str, str]) -> list[MatchRecord]:
    """The games of a recorded duel (:func:`eval.duel.duel` with ``record``) as one-game
    money records with A in seat 0: game ``2k`` opened by A, ``2k + 1`` by B."""
    out = []
    for g, (moves, pts) in enumerate(zip(history, points)):
        first = g % 2
        rec = GameRecord(number=g + 1, score=(0, 0), match_length=0, crawford=False, first=first,
                         winner=0 if pts > 0 else 1, points=abs(int(pts)), result=abs(int(pts)))
        for t, (dice, before, after) in enumerate(moves):
            d1, d2 = int(dice[0]), int(dice[1])
            results, steps, nsteps = legal_results_with_steps(before, d1, d2)
            k = int(np.flatnonzero((results == after[None, :]).all(axis=1))[0])
            st = () if np.array_equal(after, before) else tuple(
                (int(steps[k, j, 0]), int(steps[k, j, 1])) for j in range(int(nsteps[k])))
            rec.actions.append(Action(first if t % 2 == 0 else 1 - first, "move", dice=(d1, d2),
                                      before=tuple(int(x) for x in before), after=tuple(int(x) for x in after), steps=st))
        out.append(MatchRecord(names=names, match_length=0, games=[rec], score=(rec.points_for(0), rec.points_for(1))))
    return out


def _plain_ci(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=np.float64)
    if len(v) < 2:
        return math.inf
    return float(1.96 * v.std(ddof=1) / math.sqrt(len(v)))


def export_records(result: ArenaResult, path: str | Path) -> list[Path]:
    """Write the run's games as ``.mat`` (see the module docstring); returns the files."""
    path = Path(path)
    if not result.records:
        raise ValueError("this run kept no game records to export")
    if result.kind != "match":
        games = [g for r in result.records for g in r.games]
        for i, g in enumerate(games):
            g.number = i + 1
        total = [0, 0]
        for g in games:
            g.score = (total[0], total[1])
            total[g.winner] += g.points
        session = MatchRecord(names=(result.a, result.b), match_length=0, games=games, score=(total[0], total[1]))
        export_mat(session, path)
        return [path]
    files = []
    if len(result.records) == 1:
        export_mat(result.records[0], path)
        return [path]
    for i, rec in enumerate(result.records):
        f = path.with_name(f"{path.stem}-{i + 1:04d}{path.suffix or '.mat'}")
        export_mat(rec, f)
        files.append(f)
    return files


def cumulative_ppg(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(games, running ppg, running 95% CI half-width)`` after each duplicate pair."""
    pts = np.asarray(points, dtype=np.float64)
    pairs = pts[: len(pts) // 2 * 2].reshape(-1, 2).mean(axis=1)
    k = np.arange(1, len(pairs) + 1)
    mean = np.cumsum(pairs) / k
    sq = np.cumsum(pairs**2)
    var = np.where(k > 1, (sq - k * mean**2) / np.maximum(k - 1, 1), np.nan)
    ci = 1.96 * np.sqrt(np.maximum(var, 0.0)) / np.sqrt(k)
    return 2 * k, mean, ci


def plot_run(result: ArenaResult, path: str | Path) -> None:
    """A PNG of A's cumulative ppg with its 95% CI band."""
    import matplotlib  # noqa: PLC0415 (only for --plot)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    x, mean, ci = cumulative_ppg(result.points)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(x, mean, color="tab:blue", label=f"ppg of {result.a}")
    ax.fill_between(x, mean - ci, mean + ci, color="tab:blue", alpha=0.25, label="95% CI")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("games")
    ax.set_ylabel("points per game")
    ax.set_title(f"{result.a} vs {result.b} ({result.kind}): {result.ppg:+.3f} ± {result.ci95:.3f}")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
