"""Rollout figures of issue 12 on seeded contact positions (shipped model).

``python -m scripts.measure_rollout [--positions 50] [--games 144] [--truncate 11] [--source selfplay|random]``

The contact positions come from Tabla's own self-play at 1 ply (the positions a rollout
is asked about in practice), or with ``--source random`` from random-play games, whose
odd positions the net has rarely seen. For each position: a full-game rollout with variance reduction (the same trials give the
standard error with and without the luck adjustment) and a rollout truncated after
``--truncate`` half-moves (other dice: every rollout has its own seed). Printed: the ratio of the standard
errors (with ÷ without), per position and over all; how many positions have it at most
1/3; whether the adjusted and plain means agree within their 95% intervals; and whether
the truncated and full rollouts agree within theirs, and the mean and spread of their
differences over the positions (a spread wider than the errors explain is the evaluator
misjudging positions at the cut, not a fault of the rollout: the truncated rollout
estimates the evaluator's value ``truncate`` half-moves on, the full one the games' results).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PositionFigures:
    position_id: str
    full: float
    full_se: float
    raw: float
    raw_se: float
    truncated: float
    truncated_se: float

    @property
    def se_ratio(self) -> float:
        return self.full_se / self.raw_se if self.raw_se > 0 else float("nan")

    @property
    def vr_agrees(self) -> bool:
        return abs(self.full - self.raw) <= 1.96 * np.hypot(self.full_se, self.raw_se)

    @property
    def truncated_agrees(self) -> bool:
        return abs(self.full - self.truncated) <= 1.96 * np.hypot(self.full_se, self.truncated_se)


def selfplay_contact_positions(evaluator, n: int, seed: int, keep: float = 0.08) -> list[np.ndarray]:
    """``n`` seeded contact positions from the evaluator's own 1-ply self-play (player on
    roll): the kind of position a rollout is asked about. Each position of a game is kept
    with probability ``keep`` while the game is still a contact game."""
    from engine.batch import one_ply_choice
    from engine.dice import opening_rolls
    from engine.movegen import children_batch
    from engine.position import Position

    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        board = Position.start().array()
        dice = opening_rolls(rng, 1)
        for _ in range(400):
            pos = Position.from_array(board)
            if pos.is_game_over() or pos.is_race():
                break
            if rng.random() < keep:
                out.append(board.copy())
                if len(out) == n:
                    break
            children, offsets = children_batch(board[None, :], dice)
            choice = one_ply_choice(children, offsets, evaluator.evaluate)
            board = choice.opp_boards[choice.index[0]].copy()
            dice = rng.integers(1, 7, size=(1, 2))
    return out


def contact_positions(n: int, seed: int) -> list[np.ndarray]:
    """``n`` seeded contact positions from random-play games (player on roll)."""
    from engine.position import Position
    from engine.randpos import random_game_positions

    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        for b in random_game_positions(rng, 4 * n):
            p = Position.from_array(b)
            if not p.is_race() and not p.is_game_over():
                out.append(np.asarray(b, np.int8))
                if len(out) == n:
                    break
    return out


def measure(evaluator, positions: list[np.ndarray], games: int, truncate: int, seed: int, log=None) -> list[PositionFigures]:
    from engine.ids import position_id
    from engine.rollout import RolloutSettings, rollout

    out = []
    for k, b in enumerate(positions):
        # dice seeds of their own for each position and rollout: figures averaged over the
        # positions then have independent errors
        full = rollout(evaluator, b, RolloutSettings(trials=games, seed=seed + 2 * k))
        cut = rollout(evaluator, b, RolloutSettings(trials=games, truncate=truncate, seed=seed + 2 * k + 1))
        f = PositionFigures(position_id(b), full.equity.mean, full.equity.se, full.raw_equity.mean,
                            full.raw_equity.se, cut.equity.mean, cut.equity.se)
        out.append(f)
        if log is not None:
            log(f"{k + 1:3d} {f.position_id}  full {f.full:+.4f} ± {1.96 * f.full_se:.4f}  plain {f.raw:+.4f} ± "
                f"{1.96 * f.raw_se:.4f}  SE ratio {f.se_ratio:.3f}  T={truncate} {f.truncated:+.4f} ± "
                f"{1.96 * f.truncated_se:.4f}{'' if f.truncated_agrees else '  (truncated outside CI)'}")
    return out


def summary(figs: list[PositionFigures]) -> dict:
    ratios = np.array([f.se_ratio for f in figs])
    diff = np.array([f.full - f.truncated for f in figs])
    return {
        "positions": len(figs),
        "se_ratio_of_means": float(np.mean([f.full_se for f in figs]) / np.mean([f.raw_se for f in figs])),
        "se_ratio_median": float(np.median(ratios)),
        "se_ratio_max": float(ratios.max()),
        "positions_se_ratio_at_most_one_third": int((ratios <= 1 / 3).sum()),
        "vr_and_plain_means_agree": int(sum(f.vr_agrees for f in figs)),
        "truncated_and_full_agree": int(sum(f.truncated_agrees for f in figs)),
        "full_minus_truncated_mean": float(diff.mean()),
        "full_minus_truncated_mean_se": float(diff.std(ddof=1) / np.sqrt(len(diff))),
        "full_minus_truncated_sd": float(diff.std(ddof=1)),
        "expected_sd_from_the_errors": float(np.sqrt(np.mean([f.full_se ** 2 + f.truncated_se ** 2 for f in figs]))),
    }


def main(argv: list[str] | None = None) -> int:
    from scripts.evaluators import limit_blas_threads, load_evaluator

    ap = argparse.ArgumentParser(prog="python -m scripts.measure_rollout", description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=50)
    ap.add_argument("--games", type=int, default=144)
    ap.add_argument("--truncate", type=int, default=11)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--source", choices=("selfplay", "random"), default="selfplay",
                    help="where the contact positions come from: Tabla's own 1-ply self-play (default) or random play")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    limit_blas_threads(1)
    ev = load_evaluator(None)
    if args.source == "selfplay":
        positions = selfplay_contact_positions(ev, args.positions, args.seed)
    else:
        positions = contact_positions(args.positions, args.seed)
    figs = measure(ev, positions, args.games, args.truncate, args.seed,
                   log=None if args.json else print)
    s = summary(figs)
    print(json.dumps(s) if args.json else "\n".join(f"{k}: {v}" for k, v in s.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
