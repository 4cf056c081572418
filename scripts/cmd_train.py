"""``tabla train``: TD(λ) self-play training from the command line."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from scripts.tabla import CliError
from training.config import TrainConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = TrainConfig()
    parser.add_argument("--games", type=int, default=None, help="stop after this many more games")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    parser.add_argument("--resume", type=Path, default=None, help="checkpoint (.pt) to continue from")
    parser.add_argument("--out", type=Path, default=Path("checkpoints"), help="output directory")
    parser.add_argument("--seed", type=int, default=d.seed)
    parser.add_argument("--workers", type=int, default=d.workers)
    parser.add_argument("--hidden", type=int, default=d.hidden)
    parser.add_argument("--lam", type=float, default=d.lam, help="TD lambda")
    parser.add_argument("--lr", type=float, default=d.lr)
    parser.add_argument("--lr-final", type=float, default=d.lr_final)
    parser.add_argument("--lr-decay-games", type=int, default=d.lr_decay_games)
    parser.add_argument("--batch-size", type=int, default=d.batch_size)
    parser.add_argument("--parallel-games", type=int, default=d.parallel_games)
    parser.add_argument("--epsilon", type=float, default=d.epsilon)
    parser.add_argument("--checkpoint-minutes", type=float, default=d.checkpoint_minutes)
    parser.add_argument("--eval-minutes", type=float, default=d.eval_minutes)
    parser.add_argument("--eval-games", type=int, default=d.eval_games)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from training.trainer import train

    if args.games is None and args.minutes is None:
        raise CliError("give --games or --minutes (or both)")
    if (args.games is not None and args.games <= 0) or (args.minutes is not None and args.minutes <= 0):
        raise CliError("--games and --minutes must be positive")
    if args.workers < 1 or args.parallel_games < 1 or args.batch_size < 1 or args.hidden < 1:
        raise CliError("--workers, --parallel-games, --batch-size and --hidden must be at least 1")
    if not 0.0 <= args.lam <= 1.0:
        raise CliError("--lam must be between 0 and 1")
    cfg = TrainConfig(
        hidden=args.hidden, lam=args.lam, lr=args.lr, lr_final=args.lr_final, lr_decay_games=args.lr_decay_games,
        batch_size=args.batch_size, parallel_games=args.parallel_games, workers=args.workers,
        epsilon=args.epsilon, checkpoint_minutes=args.checkpoint_minutes, eval_minutes=args.eval_minutes,
        eval_games=args.eval_games, seed=args.seed,
    )
    logging.getLogger().setLevel(logging.INFO)
    st = train(cfg, args.out, games=args.games, minutes=args.minutes, resume=args.resume, progress=not args.no_progress)
    print(f"trained to {st.games} games in {st.wall_seconds / 60:.1f} min; checkpoint {args.out / 'latest.pt'}")
    return 0
