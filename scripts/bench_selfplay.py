"""``tabla bench selfplay``: self-play training games per second, learning on.

Runs the real trainer (shipped network shape, both workers, TD updates on) for a fixed
time in a scratch directory and reports finished games per second. With ``--backend ray``
the same settings run first on the local backend, then on Ray (started here, or the
cluster of ``--ray-address``) with ``--workers`` actors, and the ratio of the two rates is
reported. Pause any other training while measuring: the figure is for the whole machine.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
from pathlib import Path

from scripts.cmd_train_ray import add_ray_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to train (each backend)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                        help="worker processes (with --backend ray: also the number of actors)")
    parser.add_argument("--hidden", type=int, default=None, help="hidden units (default: the shipped model's)")
    parser.add_argument("--parallel-games", type=int, default=None,
                        help="games each worker plays at once (default: the trainer's)")
    add_ray_arguments(parser, actors=False)


def run(args: argparse.Namespace) -> int:
    from models import DEFAULT_MODEL
    from models.checkpoint import CheckpointError, load_nets
    from training.config import TrainConfig
    from training.trainer import train

    if args.backend == "ray":
        from scripts.cmd_train_ray import require_ray

        require_ray()
    hidden = args.hidden
    if hidden is None:
        try:
            nets = load_nets(DEFAULT_MODEL)[0]
            hidden = (nets.get("contact") or nets["all"])[0].hidden
        except CheckpointError:
            hidden = TrainConfig().hidden
    extra = {} if args.parallel_games is None else {"parallel_games": args.parallel_games}
    cfg = TrainConfig(hidden=hidden, workers=args.workers, seed=args.seed, eval_minutes=0, checkpoint_minutes=1e9, **extra)
    logging.getLogger().setLevel(logging.WARNING)
    _load_kernels(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        # a short warm-up so that numba's compiled kernels are loaded before timing
        train(cfg, Path(tmp) / "warm", games=cfg.parallel_games, progress=False)
        st = train(cfg, Path(tmp) / "run", minutes=args.seconds / 60.0, progress=False)
        ray_figures = _ray(cfg, args, Path(tmp)) if args.backend == "ray" else {}
    rate = st.games / st.wall_seconds
    figures = {"games_per_s": rate, "games": st.games, "seconds": st.wall_seconds, "workers": args.workers,
               "hidden": hidden, "positions_per_s": st.positions / st.wall_seconds, "backend": args.backend}
    if ray_figures:
        figures.update(ray_figures, ray_vs_local=ray_figures["ray_games_per_s"] / rate if rate else float("nan"))
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"self-play training: {rate:.0f} games/s ({st.positions / st.wall_seconds:.0f} positions/s), "
          f"{args.workers} workers, {hidden} hidden units, {st.wall_seconds:.0f} s")
    if ray_figures:
        r = ray_figures
        print(f"on Ray: {r['ray_games_per_s']:.0f} games/s with {args.workers} actors, {r['ray_seconds']:.0f} s: "
              f"{figures['ray_vs_local']:.2f} x local; learner {r['ray_updates_per_s']:.1f} updates/s "
              f"({r['ray_learner_busy']:.0%} busy), mean staleness {r['ray_staleness_updates']:.1f} updates, "
              f"weights {r['ray_weight_bytes'] / 1024:.0f} KiB")
    return 0


def _load_kernels(cfg) -> None:
    """One self-play ply here, so that the forked workers start with numba's kernels loaded
    (as Ray's actors do before their clock starts)."""
    import numpy as np

    from training.netset import TorchNets, new_configs
    from training.selfplay import SelfPlay

    SelfPlay(1, np.random.default_rng(0)).step(TorchNets(new_configs(cfg)).evaluate)


def _ray(cfg, args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """Figures of the same run on Ray (one Ray session for the warm-up and the timed run)."""
    import ray

    from training.config import RayConfig
    from training.ray_backend import train_ray
    from training.ray_cluster import connect

    rcfg = RayConfig(address=args.ray_address, actors=args.workers)
    started = connect(args.ray_address)
    try:
        train_ray(cfg, rcfg, tmp / "ray-warm", games=cfg.parallel_games, progress=False)
        st = train_ray(cfg, rcfg, tmp / "ray-run", minutes=args.seconds / 60.0, progress=False)
    finally:
        if started:
            ray.shutdown()
    return {"ray_games_per_s": st.games / st.wall_seconds, "ray_games": st.games, "ray_seconds": st.wall_seconds,
            "ray_updates_per_s": st.updates / st.wall_seconds, "ray_learner_busy": st.learn_seconds / st.wall_seconds,
            "ray_staleness_updates": st.staleness_mean, "ray_weight_bytes": st.weight_bytes,
            "ray_nodes": len(st.games_by_node)}
