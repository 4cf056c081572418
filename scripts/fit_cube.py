"""Fit Janowski's cube efficiency per position class to Tabla's own cubeful rollouts.

``python -m scripts.fit_cube [--model M] [--positions N] [--trials T] [--json]`` prints,
per class, the least-squares ``x`` (:mod:`eval.cube_fit`), its standard error, and the
root mean square error of Janowski's model against the rollouts at the fitted ``x`` and
at the efficiencies in use (:func:`engine.cube.cube_efficiency`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.fit_cube", description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model file (default: the shipped model)")
    ap.add_argument("--positions", type=int, default=40, help="positions per class")
    ap.add_argument("--trials", type=int, default=216, help="trials per cubeful rollout")
    ap.add_argument("--seed", type=int, default=1, help="seed of the positions and the rollouts")
    ap.add_argument("--workers", type=int, default=2, help="rollout processes")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if min(args.positions, args.trials, args.workers) < 1:
        print("fit_cube: error: --positions, --trials and --workers must be positive", file=sys.stderr)
        return 2
    from engine.cube import cube_efficiency
    from engine.position import Position
    from eval.cube_fit import CubeFitConfig, fit_linear_x, fit_x, model_error, rollout_points, sample_positions
    from scripts.bench_common import bench_evaluator

    ev, _, described = bench_evaluator(args.model, True, fallback="heuristic")
    cfg = CubeFitConfig(positions=args.positions, trials=args.trials, seed=args.seed, workers=args.workers)
    t0 = time.perf_counter()
    sample = sample_positions(ev.evaluate, cfg, np.random.default_rng(args.seed))
    out: dict = {"evaluator": described, "config": cfg.to_dict(), "classes": {}}
    for name, boards in sample.items():
        if len(boards) < 2:
            continue
        r = rollout_points(ev, boards, cfg)
        x, se = fit_x(r["dead"], r["live"], r["target"])
        current = cube_efficiency(boards)
        row = {"positions": len(boards), "x": round(x, 4), "x_se": round(se, 4),
               "rms_at_fit": round(model_error(r["dead"], r["live"], r["target"], x), 4),
               "rms_at_current": round(model_error(r["dead"], r["live"], r["target"], current), 4),
               "current_x_mean": round(float(np.mean(current)), 4),
               "rollout_se_mean": round(float(np.mean(r["se"])), 4)}
        if name == "race":
            pips = np.array([Position.from_array(b).pips()[0] for b in boards], float)
            a, b = fit_linear_x(r["dead"], r["live"], r["target"], pips)
            row.update({"linear_a": round(a, 4), "linear_b_per_pip": round(b, 6),
                        "rms_at_linear": round(model_error(r["dead"], r["live"], r["target"], a + b * pips), 4)})
        out["classes"][name] = row
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"cube efficiency fitted to Tabla's cubeful rollouts ({described}; {args.trials} trials, cube 2 taken)")
        for name, row in out["classes"].items():
            print(f"  {name:8s} {row['positions']:3d} positions: x = {row['x']:.3f} ± {row['x_se']:.3f}; rms error "
                  f"{row['rms_at_fit']:.4f} at the fit, {row['rms_at_current']:.4f} at x = {row['current_x_mean']:.3f} (in use)")
        print(f"  ({out['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
