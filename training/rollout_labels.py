"""Rollout labels: results of self-play decisions valued by Tabla's own rollouts.

Self-play games advance at 1 ply (the nets' best play). At a decision whose position on
roll is valued by one of the nets being refined (with chance ``rollout_share``; with
``rollout_close``, only where the nets' two best results are that close, and a clear
decision with chance ``rollout_clear_share``), some of its results are rolled out and
labelled with the rollout's probabilities: the nets' ``candidates`` best results and
``rollout_others`` more drawn at random from the rest. Each is a variance-reduced rollout
of ``rollout_trials`` trials played at 1 ply (:mod:`engine.rollout_trials`; cut after
``rollout_truncate`` half-moves when given, valued there by the nets or the bearoff
databases), seen by the opponent, who is on roll there.

Why not only the returns of the games played: a result the nets under-rate is never
played, so greedy self-play never labels it, and search labels one ply deeper inherit the
nets' errors one ply on. A rollout plays the result out to the end of the game, so its
value is that of the nets' own play from there, whatever the nets think of the result
itself. The random others reach results the nets rank far down. A decision is *disputed*
when the best rolled-out result is not the nets' best. With ``rollout_follow`` the game then
plays the rolled-out best, so the games go where the rollouts' better play goes (positions
greedy play never reaches, such as an anchor held instead of given up). With ``explore`` a
game plays, at that share of its plies, one of the nets' 2nd to ``candidates``-th best
results instead (uniformly), so the games reach positions the nets' own best play avoids;
the labels are of the results rolled out, not of where the game goes, so none changes.

The results of one decision are labelled together, and :meth:`RolloutLabelGenerator.step_grouped`
numbers them so the trainer can fit their differences (``rank_weight``), which decide plays.

A rollout label costs ``rollout_trials`` games' worth of 1-ply plays with the luck of every
roll: far more than a returns label, so these labels are few and meant for the classes
where the nets disagree with their own rollouts (crashed positions).
"""
from __future__ import annotations

import numpy as np

from engine.batch import OnePlyChoice
from engine.classes import classify
from engine.rollout_trials import TrialLoop, TrialSpec
from engine.values import cubeless_equity, mover_equity
from models.multinet import NET_FOR_CLASS
from training.config import RefineConfig
from training.returns import OnePlyGames, explore_picks


class _Evaluate:
    """An :class:`engine.evaluator.Evaluator` around an ``evaluate`` function."""

    def __init__(self, evaluate) -> None:
        self.evaluate = evaluate


def rollout_probs(evaluate, boards: np.ndarray, trials: int, truncate: int | None, seed: int) -> np.ndarray:
    """Luck-adjusted rollout probabilities (N, 5) of ``boards`` (N, 26; player on roll,
    before his roll): ``trials`` trials each at 1 ply, all played together (trial ``j`` of
    every board rolls the same dice), cut after ``truncate`` half-moves if given, clipped to
    [0, 1]."""
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    spec = TrialSpec(ply=1, truncate=truncate, variance_reduction=True, seed=seed)
    starts = np.repeat(boards, trials, axis=0)
    loop = TrialLoop(_Evaluate(evaluate), boards[0], spec)
    rows = loop.run(np.tile(np.arange(trials), len(boards)), slots=len(starts), starts=starts)
    adjusted = (rows.probs - rows.luck).reshape(len(boards), trials, 5).mean(axis=1)
    return np.clip(adjusted, 0.0, 1.0)


class RolloutLabelGenerator(OnePlyGames):
    """``parallel_games`` greedy self-play games whose decisions are labelled by rollouts."""

    def __init__(self, cfg: RefineConfig, rng: np.random.Generator) -> None:
        super().__init__(cfg, rng)
        self.classes = [c for c, name in NET_FOR_CLASS.items() if name in cfg.nets]
        self.decisions = 0  # decisions rolled out
        self.disputed = 0  # of those, where the best rolled-out result is not the nets' best
        self.explored = 0  # plies that played another result than the nets' best (``cfg.explore``)
        self.deeper = 0  # the returns generator's count of 2-ply plays
        self.clear = 0  # decisions found clear (``rollout_close``), rolled out or not

    def _picks(self, order: np.ndarray) -> np.ndarray:
        """The results to roll out: the nets' best ``candidates`` and ``rollout_others`` more."""
        cfg = self.cfg
        top, rest = order[: cfg.candidates], order[cfg.candidates:]
        if cfg.rollout_others > 0 and len(rest) > 0:
            more = self.rng.choice(rest, size=min(cfg.rollout_others, len(rest)), replace=False)
            top = np.concatenate([top, more])
        return top

    def _in_doubt(self, choice: OnePlyChoice, order: np.ndarray) -> bool:
        """Whether to roll out a decision whose results rank ``order`` by the nets: always
        without ``rollout_close``; else when its two best are within ``rollout_close``, or a
        clear decision with chance ``rollout_clear_share``."""
        cfg = self.cfg
        if cfg.rollout_close is None:
            return True
        eq = mover_equity(choice.opp_probs[order[:2]])
        if eq[0] - eq[1] <= cfg.rollout_close:
            return True
        self.clear += 1
        return bool(self.rng.random() < cfg.rollout_clear_share)

    def step(self, evaluate) -> tuple[np.ndarray, np.ndarray]:
        """Advance every game one ply; return the rolled-out results (opponent on roll)."""
        boards, targets, _ = self.step_grouped(evaluate)
        return boards, targets

    def step_grouped(self, evaluate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`step`, with each result's decision: a number shared by the results of
        one roll (siblings), counted from 0 over the generator's life."""
        cfg, rng, n = self.cfg, self.rng, self.cfg.parallel_games
        choice, offsets = self.roll(evaluate)
        wanted = np.isin(classify(self.boards), self.classes)
        picked: list[tuple[int, int, np.ndarray]] = []  # (game, the nets' best, the results rolled out)
        for g in np.flatnonzero(wanted & (rng.random(n) < cfg.rollout_share)):
            a, b = offsets[g], offsets[g + 1]
            if b - a < 2:
                continue
            order = choice.ranked(a, b)
            if not self._in_doubt(choice, order):
                continue
            rows = np.array([r for r in self._picks(order) if choice.points[r] == 0], np.int64)
            if len(rows):
                picked.append((int(g), int(order[0]), rows))
        out_b, out_t = np.zeros((0, 26), np.int8), np.zeros((0, 5), np.float32)
        groups = np.zeros(0, np.int64)
        chosen = choice.index.copy()
        if picked:
            rows = np.concatenate([r for _, _, r in picked])
            out_b = choice.opp_boards[rows]
            out_t = rollout_probs(evaluate, out_b, cfg.rollout_trials, cfg.rollout_truncate,
                                  int(rng.integers(1, 2**31 - 1))).astype(np.float32)
            groups = np.repeat(self.decisions + np.arange(len(picked)), [len(r) for _, _, r in picked])
            at = 0
            for g, best, r in picked:
                self.decisions += 1
                eq = cubeless_equity(out_t[at:at + len(r)])
                at += len(r)
                if r[0] == best:  # the nets' best is rolled out too (it is unless it ends the game)
                    # the mover's best result is the one worst for the opponent, who is on roll there
                    top = int(r[int(np.argmin(eq))])
                    self.disputed += int(top != best)
                    if cfg.rollout_follow:
                        chosen[g] = top
        if cfg.explore > 0:  # the labels are of results, not of the game's end: playing another changes none
            picks = explore_picks(choice, offsets[:-1], offsets[1:], cfg, rng)
            self.explored += len(picks)
            chosen[list(picks)] = list(picks.values())
        self.advance(choice, chosen)
        return out_b, out_t, groups
