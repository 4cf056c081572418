"""``tabla bench movegen``: distinct legal results per second, Tabla vs gnubg-nn.

The position set is fixed by ``--seed``: contact positions (``not is_race()``) sampled
from games in which both sides play the best 1-ply move of
:class:`engine.heuristic.HeuristicEvaluator`, each with a random roll. The same
(position, roll) pairs are timed through

* ``engine.movegen.legal_results`` one call per position (the public single-position API),
* ``engine.movegen.children_batch`` over the whole set in one call,
* ``gnubg_nn.moves`` one call per position (boards converted to gnubg's layout first),

each repeated ``--repeat`` times, best time kept. The figure is distinct results per
second; ``ratio`` is Tabla's single-position rate over gnubg's.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from engine.values import cubeless_equity
from engine.heuristic import HeuristicEvaluator
from engine.movegen import children_batch, legal_results
from engine.position import Position, flip_array, to_gnubg_board


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positions", type=int, default=3000, help="number of contact positions")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes; the best is reported")


def contact_positions(rng: np.random.Generator, n: int, keep: float = 0.35) -> tuple[np.ndarray, np.ndarray]:
    """``n`` contact positions from heuristic 1-ply self-play, with a random roll each."""
    evaluator = HeuristicEvaluator()
    boards = np.empty((n, 26), np.int8)
    dice = np.empty((n, 2), np.int64)
    k = 0
    while k < n:
        b = Position.start().array()
        for _ply in range(400):
            d = rng.integers(1, 7, size=2)
            if not Position.from_array(b).is_race() and rng.random() < keep:
                boards[k] = b
                dice[k] = d
                k += 1
                if k == n:
                    break
            res = legal_results(b, int(d[0]), int(d[1]))
            eq = -cubeless_equity(evaluator.evaluate(flip_array(res)))
            best = res[int(np.argmax(eq))]
            if (best > 0).sum() == 0:
                break
            b = flip_array(best)
    return boards, dice


def _best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(boards: np.ndarray, dice: np.ndarray, repeat: int = 5) -> dict:
    """Rates on one set; gnubg figures are ``None`` when gnubg-nn is not installed."""
    pairs = [(np.ascontiguousarray(b), int(d[0]), int(d[1])) for b, d in zip(boards, dice)]
    legal_results(*pairs[0])  # compile / load the kernel before timing
    children_batch(boards[:2], dice[:2])
    total = sum(len(legal_results(b, d1, d2)) for b, d1, d2 in pairs)

    def ours() -> None:
        for b, d1, d2 in pairs:
            legal_results(b, d1, d2)

    t_ours = _best_time(ours, repeat)
    t_batch = _best_time(lambda: children_batch(boards, dice), repeat)
    out = {
        "positions": len(pairs),
        "results": total,
        "tabla_per_s": total / t_ours,
        "tabla_batch_per_s": total / t_batch,
        "gnubg_per_s": None,
        "ratio": None,
        "batch_ratio": None,
    }
    try:
        import gnubg_nn
    except ImportError:
        return out
    gpairs = [(to_gnubg_board(b), d1, d2) for b, d1, d2 in pairs]
    g_total = sum(max(len(gnubg_nn.moves(gb, d1, d2)), 1) for gb, d1, d2 in gpairs)

    def theirs() -> None:
        for gb, d1, d2 in gpairs:
            gnubg_nn.moves(gb, d1, d2)

    t_gnubg = _best_time(theirs, repeat)
    out["gnubg_results"] = g_total
    out["gnubg_per_s"] = total / t_gnubg
    out["ratio"] = out["tabla_per_s"] / out["gnubg_per_s"]
    out["batch_ratio"] = out["tabla_batch_per_s"] / out["gnubg_per_s"]
    return out


def run(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    boards, dice = contact_positions(rng, args.positions)
    res = measure(boards, dice, args.repeat)
    res["seed"] = args.seed
    if args.json:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()}))
        return 0
    print(f"{res['positions']} contact positions (seed {args.seed}), {res['results']} distinct results")
    print(f"tabla legal_results : {res['tabla_per_s']:>12,.0f} results/s")
    print(f"tabla children_batch: {res['tabla_batch_per_s']:>12,.0f} results/s")
    if res["gnubg_per_s"] is None:
        print("gnubg-nn not installed: no reference figure")
    else:
        print(f"gnubg-nn moves()    : {res['gnubg_per_s']:>12,.0f} results/s")
        print(f"ratio tabla/gnubg   : {res['ratio']:.2f} (batch {res['batch_ratio']:.2f})")
    return 0
