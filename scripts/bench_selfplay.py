"""``tabla bench selfplay``: self-play training games per second, learning on.

Runs the real trainer (shipped network shape, both workers, TD updates on) for a fixed
time in a scratch directory and reports finished games per second. Pause any other
training while measuring: the figure is for the whole machine.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to train")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--hidden", type=int, default=None, help="hidden units (default: the shipped model's)")
    parser.add_argument("--parallel-games", type=int, default=None,
                        help="games each worker plays at once (default: the trainer's)")


def run(args: argparse.Namespace) -> int:
    from models import DEFAULT_MODEL
    from models.checkpoint import CheckpointError, load_nets
    from training.config import TrainConfig
    from training.trainer import train

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
    with tempfile.TemporaryDirectory() as tmp:
        # a short warm-up so that numba's compiled kernels are loaded before timing
        train(cfg, Path(tmp) / "warm", games=cfg.parallel_games, progress=False)
        st = train(cfg, Path(tmp) / "run", minutes=args.seconds / 60.0, progress=False)
    rate = st.games / st.wall_seconds
    figures = {"games_per_s": rate, "games": st.games, "seconds": st.wall_seconds, "workers": args.workers,
               "hidden": hidden, "positions_per_s": st.positions / st.wall_seconds}
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"self-play training: {rate:.0f} games/s ({st.positions / st.wall_seconds:.0f} positions/s), "
              f"{args.workers} workers, {hidden} hidden units, {st.wall_seconds:.0f} s")
    return 0
