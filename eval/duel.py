"""Fast cubeless money duels between two players, with duplicate dice.

A *player* is anything with ``choose_batch(boards (N, 26), dice (N, 2)) -> (N, 26)``: for
each board (the mover's view, before the roll) and roll, the result board it picks (still
the mover's view, before :func:`engine.position.flip_array`). Many games are played at
once: at each ply every active game in which player A is on roll goes to A in one call,
the others to B, so an evaluator sees one batch per ply.

Scoring: cubeless money, gammons (2) and backgammons (3) counted, no Jacoby rule.

Duplicate dice: games come in pairs. Pair ``k`` draws one dice stream from a generator
seeded with ``(seed, k)``: the opening roll (never a double) and then one roll per ply.
Game ``2k`` gives the opening roll to A, game ``2k + 1`` to B, and ply ``t`` of both games
uses roll ``t`` of the stream, so each side sees exactly the rolls the other side saw in the
twin game. Points per game (ppg) are reported for A with a 95% confidence interval over
the pair averages, which removes most of the dice luck.
"""
from __future__ import annotations

import logging
import math
import multiprocessing as mp
import time
from dataclasses import dataclass, field, fields
from typing import Callable, Protocol

import numpy as np

from engine.batch import one_ply_choice, result_points
from engine.evaluator import Evaluator
from engine.dice import STREAM_CHUNK, roll_stream
from engine.movegen import children_batch
from engine.position import Position, flip_array
from eval import pubeval

log = logging.getLogger(__name__)

MAX_PLIES = 100_000
"""Safety cap on the length of one game. Sensible players finish in well under 1,000
plies; two hit-happy weak players have been seen to need over 8,000."""



class Player(Protocol):
    """Picks one result board per (board, roll)."""

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray: ...


# ---------------------------------------------------------------------- helpers
class _DiceTable:
    """Lazily extended per-pair dice streams."""

    def __init__(self, seed: int, pairs: np.ndarray) -> None:
        self.seed = seed
        self.pairs = pairs
        self.table = np.stack([roll_stream(seed, int(p), 0) for p in pairs])

    def roll(self, t: int) -> np.ndarray:
        while t >= self.table.shape[1]:
            c = self.table.shape[1] // STREAM_CHUNK
            more = np.stack([roll_stream(self.seed, int(p), c) for p in self.pairs])
            self.table = np.concatenate([self.table, more], axis=1)
        return self.table[:, t]


# ---------------------------------------------------------------------- players
class EvaluatorPlayer:
    """1-ply: :func:`engine.batch.one_ply_choice` (the self-play policy): every legal result
    is evaluated from the opponent's side, the highest cubeless equity for the mover wins,
    and a result that ends the game is scored exactly (1, 2 or 3)."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        children, offsets = children_batch(boards, dice)
        return children[one_ply_choice(children, offsets, self.evaluator.evaluate).index]


class PubevalPlayer:
    """Tesauro's pubeval (see :mod:`eval.pubeval`)."""

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        children, offsets = children_batch(boards, dice)
        return children[pubeval.choose_batch(boards, dice, children, offsets)]


class RandomPlayer:
    """A uniformly random legal result (distinct results are equally likely)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        children, offsets = children_batch(boards, dice)
        counts = np.diff(offsets)
        pick = offsets[:-1] + np.floor(self.rng.random(len(counts)) * counts).astype(np.int64)
        return children[pick]


class GnubgUnavailable(RuntimeError):
    """gnubg-nn (the optional GNU Backgammon bindings) is not installed."""


def import_gnubg():
    """The ``gnubg_nn`` module, or :class:`GnubgUnavailable` with an install hint."""
    try:
        import gnubg_nn  # noqa: PLC0415 (optional dependency)
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise GnubgUnavailable(
            "the gnubg bot needs gnubg-nn: pip install 'gnubg-nn>=1.1.0a11' (or pip install -e '.[gnubg]')"
        ) from exc
    return gnubg_nn


class GnubgPlayer:
    """GNU Backgammon's evaluator (gnubg-nn ``best_move``) at its own ``ply`` (0 = its 0-ply).

    A benchmark opponent only: Tabla's own decisions never use it.
    """

    def __init__(self, ply: int = 0) -> None:
        self.gnubg = import_gnubg()
        self.ply = int(ply)

    def choose_one(self, board: np.ndarray, d1: int, d2: int) -> np.ndarray:
        from engine.position import from_gnubg_board, to_gnubg_board

        _, key = self.gnubg.best_move(to_gnubg_board(board), int(d1), int(d2), n=self.ply, b=1)
        # the returned key is the position after the play, seen by the opponent
        return flip_array(from_gnubg_board(self.gnubg.board_from_position_key(key)))

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        out = np.empty((len(boards), 26), np.int8)
        for i, (b, d) in enumerate(zip(boards, dice)):
            out[i] = self.choose_one(b, d[0], d[1])
        return out


# ---------------------------------------------------------------------- results
@dataclass
class GameTally:
    """Points-per-game figures of a series of games, from player A's side."""

    ppg: float
    """Mean points per game for A."""
    ci95: float
    """Half-width of the 95% confidence interval of ``ppg`` (over pair averages)."""
    wins: int
    losses: int
    gammons: int
    """A's wins by gammon or backgammon."""
    backgammons: int
    """A's wins by backgammon."""
    gammons_lost: int
    backgammons_lost: int
    seconds: float
    games_per_s: float
    points: np.ndarray = field(repr=False)
    """Points for A of every game, in order (game 2k and 2k+1 are pair k)."""

    def tally(self) -> dict:
        """The :class:`GameTally` fields alone (to build another result from this one)."""
        return {f.name: getattr(self, f.name) for f in fields(GameTally)}


@dataclass
class DuelResult(GameTally):
    """Outcome of a duel, from player A's side."""

    n: int
    """Games played (an even number: whole pairs)."""
    plies: np.ndarray = field(repr=False)
    """Plies of every game."""
    history: list | None = field(default=None, repr=False)
    """With ``record``: each game's moves, in the order of ``points``, as
    ``(dice (2,), board before (26,), board after (26,))`` in the mover's view."""

    def summary(self) -> str:
        """One line: ppg with its CI, counts and speed."""
        return (
            f"ppg {self.ppg:+.3f} ± {self.ci95:.3f} over {self.n} games "
            f"(W {self.wins} / L {self.losses}, gammons {self.gammons}/{self.gammons_lost}, "
            f"backgammons {self.backgammons}/{self.backgammons_lost}) {self.games_per_s:.0f} games/s"
        )

    def to_dict(self) -> dict:
        """JSON-ready figures (no per-game arrays)."""
        return {
            k: (float(v) if isinstance(v, (float, np.floating)) else int(v))
            for k, v in self.__dict__.items()
            if k not in ("points", "plies", "history")
        }


def pair_ci95(points: np.ndarray) -> tuple[float, float]:
    """Mean and 95% CI half-width of per-game points, treating (2k, 2k+1) as one sample."""
    pts = np.asarray(points, dtype=np.float64)
    pairs = pts[: len(pts) // 2 * 2].reshape(-1, 2).mean(axis=1)
    if len(pairs) == 0:
        return 0.0, math.inf
    mean = float(pts.mean())
    if len(pairs) < 2:
        return mean, math.inf
    return mean, float(1.96 * pairs.std(ddof=1) / math.sqrt(len(pairs)))


def summarize(points: np.ndarray, plies: np.ndarray, seconds: float, history: list | None = None) -> DuelResult:
    """Build a :class:`DuelResult` from per-game points for A (and, optionally, the moves)."""
    pts = np.asarray(points, dtype=np.int64)
    ppg, ci = pair_ci95(pts)
    return DuelResult(
        n=len(pts),
        ppg=ppg,
        ci95=ci,
        wins=int((pts > 0).sum()),
        losses=int((pts < 0).sum()),
        gammons=int((pts >= 2).sum()),
        backgammons=int((pts >= 3).sum()),
        gammons_lost=int((pts <= -2).sum()),
        backgammons_lost=int((pts <= -3).sum()),
        seconds=seconds,
        games_per_s=len(pts) / seconds if seconds > 0 else math.inf,
        points=pts,
        plies=np.asarray(plies, dtype=np.int64),
        history=history,
    )


# ---------------------------------------------------------------------- the game loop
def play_pairs(
    player_a: Player,
    player_b: Player,
    seed: int,
    pairs: np.ndarray,
    on_games_done: Callable[[int], None] | None = None,
    record: bool = False,
) -> tuple[np.ndarray, np.ndarray, list | None]:
    """Play game pairs ``pairs`` (indices of dice streams) all at once.

    Returns per-game points for A and plies, in the order ``pair0 (A first), pair0 (B
    first), pair1 ...``; with ``record``, also each game's list of
    ``(dice (2,), board before (26,), board after (26,))`` in the mover's view.
    """
    pairs = np.asarray(pairs, dtype=np.int64)
    n = 2 * len(pairs)
    dice_table = _DiceTable(seed, pairs)
    boards = np.tile(Position.start().array(), (n, 1))
    a_first = (np.arange(n) % 2) == 0  # game 2k: A takes the opening roll
    points = np.zeros(n, np.int64)
    plies = np.zeros(n, np.int64)
    active = np.ones(n, bool)
    history: list | None = [[] for _ in range(n)] if record else None
    pair_of_game = np.arange(n) // 2
    t = 0
    while active.any():
        if t >= MAX_PLIES:
            stuck = Position.from_array(boards[np.flatnonzero(active)[0]])
            raise RuntimeError(f"a game lasted more than {MAX_PLIES} plies: {stuck!r}")
        dice = dice_table.roll(t)[pair_of_game]
        a_moves = a_first == (t % 2 == 0)
        for who, player in ((True, player_a), (False, player_b)):
            idx = np.flatnonzero(active & (a_moves == who))
            if len(idx) == 0:
                continue
            chosen = np.asarray(player.choose_batch(boards[idx], dice[idx]), dtype=np.int8)
            if record:
                for j, g in enumerate(idx):
                    history[g].append((dice[g].copy(), boards[g].copy(), chosen[j].copy()))
            value = result_points(chosen)
            done = value > 0
            g_done = idx[done]
            points[g_done] = np.where(who, 1, -1) * value[done]
            plies[idx] = t + 1
            active[g_done] = False
            boards[idx] = flip_array(chosen)
            if on_games_done is not None and len(g_done):
                on_games_done(len(g_done))
        t += 1
    return points, plies, history


_WORKER_PLAYERS: tuple | None = None


def _worker(job: tuple[int, np.ndarray, bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list | None]:
    seed, pairs, record = job
    a, b = _WORKER_PLAYERS
    pts, pl, hist = play_pairs(a, b, seed, pairs, record=record)
    return pairs, pts, pl, hist


def duel(
    player_a: Player,
    player_b: Player,
    games: int,
    seed: int,
    workers: int = 1,
    batch_pairs: int = 512,
    progress: Callable[[int], None] | None = None,
    record: bool = False,
) -> DuelResult:
    """Play ``games`` (rounded up to an even number) cubeless money games, duplicate dice.

    ``workers > 1`` forks worker processes, each playing chunks of ``batch_pairs`` pairs;
    the figures do not depend on ``workers`` or ``batch_pairs``. ``progress(k)`` is called
    with the number of games just finished. ``record``: the result also holds every
    game's moves (:attr:`DuelResult.history`); the games are the same either way.
    """
    if games < 1:
        raise ValueError("a duel needs at least one game")
    n_pairs = (games + 1) // 2
    start = time.perf_counter()
    chunks = [np.arange(i, min(i + batch_pairs, n_pairs)) for i in range(0, n_pairs, batch_pairs)]
    points = np.zeros(2 * n_pairs, np.int64)
    plies = np.zeros(2 * n_pairs, np.int64)
    history: list | None = [None] * (2 * n_pairs) if record else None
    if workers <= 1 or len(chunks) == 1 and n_pairs < 64:
        for pairs in chunks:
            pts, pl, hist = play_pairs(player_a, player_b, seed, pairs, on_games_done=progress, record=record)
            points[2 * pairs[0] : 2 * pairs[-1] + 2] = pts
            plies[2 * pairs[0] : 2 * pairs[-1] + 2] = pl
            if record:
                history[2 * pairs[0] : 2 * pairs[-1] + 2] = hist
    else:
        # split so that every worker has work even for one chunk's worth of pairs
        size = max(16, min(batch_pairs, math.ceil(n_pairs / workers)))
        chunks = [np.arange(i, min(i + size, n_pairs)) for i in range(0, n_pairs, size)]
        global _WORKER_PLAYERS
        _WORKER_PLAYERS = (player_a, player_b)
        try:
            ctx = mp.get_context("fork")
            with ctx.Pool(workers) as pool:
                for pairs, pts, pl, hist in pool.imap_unordered(_worker, [(seed, c, record) for c in chunks]):
                    points[2 * pairs[0] : 2 * pairs[-1] + 2] = pts
                    plies[2 * pairs[0] : 2 * pairs[-1] + 2] = pl
                    if record:
                        history[2 * pairs[0] : 2 * pairs[-1] + 2] = hist
                    if progress is not None:
                        progress(len(pts))
        finally:
            _WORKER_PLAYERS = None
    result = summarize(points, plies, time.perf_counter() - start, history)
    log.info("duel: %s", result.summary())
    return result
