"""The cube efficiency of Janowski's model, fitted per position class to Tabla's own rollouts.

Janowski's cubeful equity is ``x * live + (1 - x) * dead`` (:mod:`engine.cube`), linear in
the cube efficiency ``x``. For positions near the doubling window we measure what ``x``
makes the model agree with Tabla playing the cube itself:

* **Positions**: pre-roll positions of Tabla's self-play at 1 ply whose winning chances
  (by the evaluator) lie in ``window``, sampled per position class (the bear-offs with
  more than 6 checkers a side count as races; the two-sided bear-offs are exact and left
  out).
* **Target**: a cubeful rollout (:func:`engine.rollout.rollout`, Tabla's plays and cube
  decisions, variance reduction) with the cube at 2 on the opponent's side: the player on
  roll has just been doubled and taken, the position where a take point is decided.
* **Model**: ``dead`` and ``live`` from the same rollout's cubeless probabilities (so the
  evaluator's own errors do not enter the fit).

Per class the least-squares ``x`` is ``Σ (target - dead)(live - dead) / Σ (live - dead)²``
with its standard error; for races ``x = a + b * pips`` (the player on roll's pips) is
fitted the same way with two parameters. No outside engine is consulted.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.batch import one_ply_choice
from engine.classes import BEAROFF1, BEAROFF2, CRASHED, CONTACT, OVER, RACE, classify
from engine.cube import CubeOwner, CubeState, cubeful_equity
from engine.dice import opening_rolls
from engine.movegen import children_batch
from engine.position import Position
from engine.rollout import RolloutSettings, rollout

FIT_CLASSES = {CONTACT: "contact", CRASHED: "crashed", RACE: "race", BEAROFF1: "race"}
TAKEN = CubeState(value=2, owner=CubeOwner.OPPONENT)
"""The cube state of every rollout: doubled to 2 and taken, the opponent owns it."""


@dataclass(frozen=True)
class CubeFitConfig:
    """What the fit samples and how it rolls out."""

    positions: int = 60
    """Positions per class."""
    trials: int = 432
    """Trials of each cubeful rollout."""
    window: tuple[float, float] = (0.55, 0.90)
    """Winning chances (by the evaluator) of the sampled positions."""
    keep: float = 0.15
    """Chance of keeping a self-play position in the window (spreads the sample over games)."""
    seed: int = 1
    workers: int = 1
    """Rollout processes."""

    def to_dict(self) -> dict:
        return asdict(self)


def sample_positions(evaluate, cfg: CubeFitConfig, rng: np.random.Generator, games: int = 64) -> dict[str, np.ndarray]:
    """Up to ``cfg.positions`` pre-roll positions per class from self-play at 1 ply."""
    boards = np.tile(Position.start().array(), (games, 1))
    opening = np.ones(games, bool)
    got: dict[str, list[np.ndarray]] = {"contact": [], "crashed": [], "race": []}
    for _ in range(20000):
        if all(len(v) >= cfg.positions for v in got.values()):
            break
        cls = classify(boards)
        probs = np.asarray(evaluate(boards))
        for g in np.flatnonzero(~opening):
            name = FIT_CLASSES.get(int(cls[g]))
            if name and len(got[name]) < cfg.positions and cfg.window[0] <= probs[g, 0] <= cfg.window[1] \
                    and rng.random() < cfg.keep:
                got[name].append(boards[g].copy())
        dice = rng.integers(1, 7, size=(games, 2))
        if opening.any():
            dice[opening] = opening_rolls(rng, int(opening.sum()))
        children, offsets = children_batch(boards, dice)
        choice = one_ply_choice(children, offsets, evaluate)
        done = choice.points[choice.index] > 0
        boards = choice.opp_boards[choice.index].copy()
        opening[:] = False
        if done.any():
            boards[done] = Position.start().array()
            opening[done] = True
    return {k: np.array(v, np.int8).reshape(-1, 26) for k, v in got.items()}


def rollout_points(evaluator, boards: np.ndarray, cfg: CubeFitConfig) -> dict[str, np.ndarray]:
    """Per position: ``dead``, ``live`` (Janowski at x = 0 and 1 from the rollout's cubeless
    probabilities) and ``target`` (the rollout's cubeful equity), all in points at cube 2."""
    settings = RolloutSettings(trials=cfg.trials, ply=1, cubeful=True, seed=cfg.seed, workers=cfg.workers)
    dead, live, target, se = [], [], [], []
    for b in boards:
        res = rollout(evaluator, b, settings, TAKEN)
        p = np.array([res.probabilities[k].mean for k in res.probabilities])
        dead.append(float(cubeful_equity(p, TAKEN, 0.0)))
        live.append(float(cubeful_equity(p, TAKEN, 1.0)))
        target.append(TAKEN.value * res.cubeful_equity.mean)
        se.append(TAKEN.value * res.cubeful_equity.se)
    return {"dead": np.array(dead), "live": np.array(live), "target": np.array(target), "se": np.array(se)}


def fit_x(dead: np.ndarray, live: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """Least-squares cube efficiency and its standard error."""
    u = live - dead
    y = target - dead
    x = float(u @ y / (u @ u))
    resid = y - x * u
    dof = max(1, len(u) - 1)
    return x, float(np.sqrt(resid @ resid / dof / (u @ u)))


def fit_linear_x(dead: np.ndarray, live: np.ndarray, target: np.ndarray, pips: np.ndarray) -> tuple[float, float]:
    """Least-squares ``(a, b)`` of ``x = a + b * pips``."""
    u = live - dead
    a = np.stack([u, u * pips], axis=1)
    coef, *_ = np.linalg.lstsq(a, target - dead, rcond=None)
    return float(coef[0]), float(coef[1])


def model_error(dead: np.ndarray, live: np.ndarray, target: np.ndarray, x: np.ndarray | float) -> float:
    """Root mean square difference between Janowski at ``x`` and the rollouts."""
    return float(np.sqrt(np.mean((x * live + (1 - x) * dead - target) ** 2)))
