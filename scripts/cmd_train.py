"""``tabla train``: TD(λ) self-play training from the command line."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from scripts.tabla import CliError
from training.config import RefineConfig, TrainConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = TrainConfig()
    parser.add_argument("--games", type=int, default=None, help="stop after this many more games")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    parser.add_argument("--resume", type=Path, default=None, help="checkpoint (.pt) to continue from")
    parser.add_argument("--from-v1", type=Path, default=None, metavar="V1.pt",
                        help="start class-net training from a one-net tabla-v1 checkpoint (training.convert): "
                             "contact and crashed nets take its weights, the race net starts fresh")
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
    parser.add_argument("--stage", choices=("td", "refine"), default="td",
                        help="td: TD(lambda) self-play (default); refine: supervised learning on labels from "
                             "Tabla's own 2-ply search, starting from --resume (see RefineConfig)")
    r = RefineConfig()
    parser.add_argument("--refine-lr", type=float, default=r.lr, help=f"refine: Adam learning rate (default {r.lr})")
    parser.add_argument("--candidates", type=int, default=r.candidates,
                        help=f"refine: results per decision searched deeper (default {r.candidates})")
    parser.add_argument("--keep-agreed", type=float, default=r.keep_agreed,
                        help=f"refine: chance of labelling a decision the deeper search agrees with (default {r.keep_agreed})")
    parser.add_argument("--buffer", type=int, default=r.buffer_positions,
                        help=f"refine: labelled positions kept for training (default {r.buffer_positions})")


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
    if args.stage == "refine":
        return _refine(args)
    cfg = TrainConfig(
        hidden=args.hidden, lam=args.lam, lr=args.lr, lr_final=args.lr_final, lr_decay_games=args.lr_decay_games,
        batch_size=args.batch_size, parallel_games=args.parallel_games, workers=args.workers,
        epsilon=args.epsilon, checkpoint_minutes=args.checkpoint_minutes, eval_minutes=args.eval_minutes,
        eval_games=args.eval_games, seed=args.seed,
    )
    logging.getLogger().setLevel(logging.INFO)
    resume = args.resume
    if args.from_v1 is not None:
        resume = _convert(args.from_v1, args.out, cfg, resume)
    st = train(cfg, args.out, games=args.games, minutes=args.minutes, resume=resume, progress=not args.no_progress)
    print(f"trained to {st.games} games in {st.wall_seconds / 60:.1f} min; checkpoint {args.out / 'latest.pt'}")
    return 0


def _convert(v1: Path, out: Path, cfg, resume: Path | None) -> Path:
    """Write ``out/converted.pt`` from the v1 checkpoint ``v1``; the run resumes from it."""
    from models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
    from training.convert import convert_v1_state

    if resume is not None:
        raise CliError("give --from-v1 or --resume, not both")
    try:
        state = convert_v1_state(load_checkpoint(v1), cfg.race_hidden, cfg.seed)
    except (CheckpointError, KeyError, ValueError) as exc:
        raise CliError(f"cannot convert {v1}: {exc}") from None
    target = out / "converted.pt"
    save_checkpoint(target, state)
    return target


def _refine(args: argparse.Namespace) -> int:
    from training.refine import refine

    if args.resume is None or args.minutes is None:
        raise CliError("--stage refine needs --resume CHECKPOINT.pt and --minutes")
    if args.candidates < 2 or not 0.0 <= args.keep_agreed <= 1.0 or args.buffer < args.batch_size:
        raise CliError("--candidates must be at least 2, --keep-agreed between 0 and 1, --buffer at least --batch-size")
    cfg = RefineConfig(lr=args.refine_lr, batch_size=args.batch_size, candidates=args.candidates, workers=args.workers,
                       keep_agreed=args.keep_agreed, buffer_positions=args.buffer, parallel_games=args.parallel_games,
                       checkpoint_minutes=args.checkpoint_minutes, eval_minutes=args.eval_minutes,
                       eval_games=args.eval_games, seed=args.seed)
    logging.getLogger().setLevel(logging.INFO)
    refine(cfg, args.resume, args.out, args.minutes, progress=not args.no_progress)
    print(f"refined for {args.minutes:g} min; checkpoint {args.out / 'latest.pt'}")
    return 0
