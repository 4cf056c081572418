"""Luck-adjusted self-play returns: the ``returns`` labels of refinement.

Self-play at 1 ply (the nets' best play; with ``explore``, now and then another of the
best few) where every position of a game is
labelled with its *luck-adjusted return*: the game's result minus the luck of every roll
from that position to the end, all seen by the player on roll there. This is one trial of
a variance-reduced rollout (:mod:`engine.rollout_trials`) for every position on the way,
played to the end of the game.

The luck of a roll is the mover's value after his best play of the roll he rolled minus
the weighted mean of those values over the 21 rolls (the position's 1-ply value; over the
15 non-doubles on the opening roll). For position ``s_t`` with luck ``L_t`` and label
``y_t`` (probabilities of the five outcomes for the player on roll at ``s_t``):

    y_t = flip(y_{t+1}) - L_t,     and at the last move  y_t = result - L_t,

so ``y_t`` equals the 1-ply value of ``s_t`` plus the differences between 1-ply and 0-ply
values of the positions the game went through, plus the last position's error against the
result. Its expectation is the value of ``s_t`` under the nets' own play whatever the nets'
errors, and its variance is much smaller than the bare result's. The labels are therefore
not tied to the nets' bias the way search labels one ply deeper are: a systematic
over-estimate that the nets' own search repeats is corrected by the results.

With exploration, the luck of a roll is measured from the result actually played instead
of the best one: ``y_t`` is then the 1-ply value of ``s_t`` (the mean over the rolls of the
best plays) plus the deviation of the played result's label from the nets' value of it,
so the earlier positions keep the labels of the nets' best play, while the result played
gets a label of its own. An under-rated result that greedy play never chooses is thus
labelled too.

With ``lam`` (λ) below 1 the correction from the rest of the game is discounted: writing
``V1(s_t)`` for the 1-ply value of ``s_t`` and ``V(s'_t)`` for the nets' value of the result
played from it (both for the player on roll at ``s_t``),

    y_t = V1(s_t) + λ (flip(y_{t+1}) - V(s'_t)),

which is the rule above when λ = 1 (``V(s'_t) - V1(s_t)`` is the luck), and the 1-ply value
itself when λ = 0: the λ-return of TD(λ) with the dice averaged out exactly at every step,
trading the return's variance for the nets' bias.

The same move generation that finds the luck also gives the play of the rolled roll, so a
labelled position costs one 1-ply evaluation, as a 2-ply search label of a result does.
"""
from __future__ import annotations

import numpy as np

from engine.batch import OnePlyChoice, one_ply_choice
from engine.classes import CLASS_NAMES, classify
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS, opening_rolls
from engine.movegen import children_batch
from engine.position import Position
from engine.values import flip_probs, mover_equity
from training.config import RefineConfig
from training.labels import NUM_ROLLS, every_roll, ply1_probs

OPENING_WEIGHTS = np.where(ROLL_ARRAY[:, 0] != ROLL_ARRAY[:, 1], ROLL_WEIGHTS, 0.0)
OPENING_WEIGHTS = OPENING_WEIGHTS / OPENING_WEIGHTS.sum()
"""Weights of the 21 rolls on the opening roll (no doubles)."""


class ReturnGenerator:
    """``parallel_games`` self-play games whose finished games yield their labelled positions.

    ``step(evaluate)`` advances every game one ply and returns the positions (player on
    roll) of the games that ended in it, with their luck-adjusted returns. A game longer than
    ``cfg.max_game_plies`` is cut there and labelled from the nets' value of its last
    position, as a truncated rollout is. Every game starts from ``start`` (player on roll),
    by default the opening position, whose first roll is an opening roll; with
    ``cfg.restart_class``, now and then from a pooled position of that class instead
    (:class:`RestartPool`).
    """

    def __init__(self, cfg: RefineConfig, rng: np.random.Generator, start: np.ndarray | None = None) -> None:
        self.cfg = cfg
        self.rng = rng
        n = cfg.parallel_games
        self.opening_start = start is None
        self.start = Position.start().array() if start is None else np.ascontiguousarray(start, dtype=np.int8)
        self.boards = np.tile(self.start, (n, 1))
        self.opening = np.full(n, self.opening_start)
        # per game: (position, its 1-ply value, value of the result played) of each ply
        self.history: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(n)]
        self.decisions = 0
        self.disputed = 0  # search labels count disputed decisions; every decision here is labelled alike
        self.explored = 0  # plies that played another result than the best (``cfg.explore``)
        self.games = 0
        self.pool = RestartPool(cfg)
        self.deeper = 0  # plies where the 2-ply policy played another result than the nets' best

    def _labels(self, g: int, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Game ``g``'s positions and labels; ``last`` is the value after its last move
        (for the player who made it)."""
        hist = self.history[g]
        boards = np.stack([h[0] for h in hist])
        labels = np.empty((len(hist), 5), np.float64)
        lam = self.cfg.lam
        after = last
        for t in range(len(hist) - 1, -1, -1):
            _, ply1, played = hist[t]
            labels[t] = ply1 + lam * (after - played)
            after = flip_probs(labels[t])
        self.history[g] = []
        return boards, labels.astype(np.float32)

    def _play_two_ply(self, evaluate, choice, offsets, segment, chosen, played) -> None:
        """Replace each game's play by the best of its ``candidates`` best results by the nets
        at 2 ply (their 1-ply values, the opponent to roll); ``played`` keeps the nets' value
        of the result played. With ``cfg.policy_classes``, only in games whose position on
        roll is of one of those classes."""
        cand, owner = [], []
        in_class = np.ones(len(segment), bool)
        if self.cfg.policy_classes:
            in_class = np.isin(classify(self.boards), [CLASS_NAMES.index(c) for c in self.cfg.policy_classes])
        for g, seg in enumerate(segment):
            if not in_class[g]:
                continue
            a, b = offsets[seg], offsets[seg + 1]
            if b - a < 2:
                continue
            order = choice.ranked(a, b)[: self.cfg.candidates]
            cand.extend(order.tolist())
            owner.extend([g] * len(order))
        if not cand:
            return
        rows, owner = np.array(cand), np.array(owner)
        live = choice.points[rows] == 0
        deep = np.array(choice.opp_probs[rows])  # opponent's view
        deep[live] = ply1_probs(evaluate, choice.opp_boards[rows[live]])
        eq = mover_equity(deep)  # the mover's equity after each candidate
        for g in np.unique(owner):
            sel = np.flatnonzero(owner == g)
            pick = rows[sel[int(np.argmax(eq[sel]))]]
            if pick != chosen[g]:
                chosen[g] = pick
                played[g] = flip_probs(np.asarray(choice.opp_probs[pick], np.float64))
                self.deeper += 1

    def step(self, evaluate) -> tuple[np.ndarray, np.ndarray]:
        """Advance every game one ply; return the labelled positions of the games that ended."""
        cfg, rng, n = self.cfg, self.rng, self.cfg.parallel_games
        self.pool.feed(self.boards)
        choice, best_opp, offsets = every_roll(evaluate, self.boards)
        best = choice.index  # (n * 21,) best child of each (game, roll)
        mine = flip_probs(np.asarray(best_opp, np.float64)).reshape(n, NUM_ROLLS, 5)
        weights = np.where(self.opening[:, None], OPENING_WEIGHTS[None, :], ROLL_WEIGHTS[None, :])
        mean = np.einsum("nrk,nr->nk", mine, weights)
        rolled = np.minimum((np.cumsum(weights, axis=1) < rng.random(n)[:, None]).sum(axis=1), NUM_ROLLS - 1)
        segment = np.arange(n) * NUM_ROLLS + rolled
        chosen = best[segment]
        played = mine[np.arange(n), rolled]
        if cfg.policy_ply == 2:
            self._play_two_ply(evaluate, choice, offsets, segment, chosen, played)
        if cfg.explore > 0:
            picks = explore_picks(choice, offsets[segment], offsets[segment + 1], cfg, rng)
            self.explored += len(picks)
            for g, pick in picks.items():
                chosen[g] = pick
                played[g] = flip_probs(np.asarray(choice.opp_probs[pick], np.float64))
        out_b, out_t = [], []
        for g in range(n):
            self.history[g].append((self.boards[g].copy(), mean[g], played[g]))
        self.decisions += n
        nxt = choice.opp_boards[chosen].copy()
        over = choice.points[chosen] > 0
        cut = np.array([len(h) >= cfg.max_game_plies for h in self.history]) & ~over
        self.opening[:] = False
        for g in np.flatnonzero(over | cut):
            b, t = self._labels(g, played[g])
            out_b.append(b)
            out_t.append(t)
            self.games += 1
            again = self.pool.next_game(g, rng)
            self.opening[g] = self.opening_start and again is None
            nxt[g] = self.start if again is None else again
        self.boards = nxt
        if not out_b:
            return np.zeros((0, 26), np.int8), np.zeros((0, 5), np.float32)
        return np.concatenate(out_b), np.concatenate(out_t)


class RestartPool:
    """Where a self-play generator's next game begins: the last ``cfg.restart_pool`` positions
    of class ``cfg.restart_class`` (player on roll) reached by games that began at the start,
    drawn with chance ``cfg.restart`` (:meth:`next_game`); without a class, always the start.
    ``from_start`` says which of the ``cfg.parallel_games`` games began at the start."""

    def __init__(self, cfg: RefineConfig) -> None:
        self.chance = cfg.restart if cfg.restart_class else 0.0
        self.cls = CLASS_NAMES.index(cfg.restart_class) if self.chance > 0 else -1
        self.boards = np.zeros((cfg.restart_pool if self.chance > 0 else 0, 26), np.int8)
        self.added = 0
        self.from_start = np.ones(cfg.parallel_games, bool)
        self.restarts = 0

    def feed(self, boards: np.ndarray) -> None:
        """Pool those of the games' current ``boards`` that began at the start and are of the class."""
        if self.chance > 0:
            self.add(boards[self.from_start])

    def next_game(self, g: int, rng: np.random.Generator) -> np.ndarray | None:
        """The position game ``g`` begins again from: a pooled one, with chance ``restart``
        once the pool holds any, or None for the start."""
        again = self.draw(rng) if self.chance > 0 and rng.random() < self.chance else None
        self.from_start[g] = again is None
        self.restarts += again is not None
        return again

    def add(self, boards: np.ndarray) -> None:
        """Keep those of ``boards`` that are of the pool's class."""
        if len(boards) == 0:
            return
        for b in boards[classify(boards) == self.cls]:
            self.boards[self.added % len(self.boards)] = b
            self.added += 1

    def draw(self, rng: np.random.Generator) -> np.ndarray | None:
        """A pooled position chosen uniformly, or None while the pool is empty."""
        held = min(self.added, len(self.boards))
        return self.boards[rng.integers(held)].copy() if held else None


def explore_picks(choice: OnePlyChoice, starts: np.ndarray, ends: np.ndarray, cfg: RefineConfig,
                  rng: np.random.Generator) -> dict[int, int]:
    """The games that explore this ply (``cfg.explore``) and the result each plays instead of
    the best: one of the results ``starts[g]:ends[g]`` ranked 2nd to ``cfg.candidates``-th by
    the nets, uniformly. A game with one result does not explore."""
    picks: dict[int, int] = {}
    for g in np.flatnonzero(rng.random(len(starts)) < cfg.explore):
        a, b = starts[g], ends[g]
        if b - a >= 2:
            picks[int(g)] = int(choice.ranked(a, b)[rng.integers(1, min(cfg.candidates, b - a))])
    return picks


class OnePlyGames:
    """``cfg.parallel_games`` self-play games advanced ply by ply at 1 ply, from the opening
    or, with ``cfg.restart_class``, now and then from a pooled position (:class:`RestartPool`).
    The search and rollout label generators play their games through it: :meth:`roll` rolls
    every game's dice and ranks its results, :meth:`advance` plays the chosen ones."""

    def __init__(self, cfg: RefineConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        self.boards = np.tile(Position.start().array(), (cfg.parallel_games, 1))
        self.opening = np.ones(cfg.parallel_games, bool)
        self.pool = RestartPool(cfg)

    def roll(self, evaluate) -> tuple[OnePlyChoice, np.ndarray]:
        """Roll every game's dice (an opening roll where a game starts at the opening) and
        rank its results at 1 ply; the choice and the games' offsets into its results."""
        n = self.cfg.parallel_games
        self.pool.feed(self.boards)
        dice = self.rng.integers(1, 7, size=(n, 2))
        if self.opening.any():
            dice[self.opening] = opening_rolls(self.rng, int(self.opening.sum()))
        children, offsets = children_batch(self.boards, dice)
        return one_ply_choice(children, offsets, evaluate), offsets

    def advance(self, choice: OnePlyChoice, chosen: np.ndarray) -> None:
        """Play result ``chosen[g]`` in each game; a game it ends begins again."""
        done = choice.points[chosen] > 0
        self.boards = choice.opp_boards[chosen].copy()
        self.opening[:] = False
        for g in np.flatnonzero(done):
            again = self.pool.next_game(g, self.rng)
            self.boards[g] = Position.start().array() if again is None else again
            self.opening[g] = again is None
