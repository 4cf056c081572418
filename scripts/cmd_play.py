"""``tabla play``: play against Tabla in the terminal (the session is :mod:`eval.play`).

``tabla play [--match 7 | --money] [--ply 2] [--model PATH|heuristic] [--seed S] [--jacoby]
[--beavers] [--home left|right] [--load FILE] [--auto-confirm] [--chouette N]``
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from engine.api import Engine
from eval.play import PlaySession
from eval.play_common import PlayConfig
from eval.save_file import SaveFileError, load_file
from scripts.evaluators import HEURISTIC, ModelError, load_evaluator
from scripts.tabla import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tabla play``."""
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--match", type=int, metavar="N", help="play an N-point match (1-25)")
    kind.add_argument("--money", action="store_true", help="play money games (the default)")
    parser.add_argument("--ply", type=int, default=2, choices=(1, 2, 3), help="tabla's search depth for plays (default 2)")
    parser.add_argument("--model", help="model file, or 'heuristic' for the hand-written evaluator (default: the shipped model)")
    parser.add_argument("--seed", type=int, help="seed of the dice (default: random)")
    parser.add_argument("--jacoby", action="store_true", help="money: Jacoby rule")
    parser.add_argument("--beavers", action="store_true", help="money: beavers allowed")
    parser.add_argument("--home", choices=("left", "right"), default="right", help="where your home board is drawn (default right)")
    parser.add_argument("--load", metavar="FILE", help="continue a game saved with 'save FILE'")
    parser.add_argument("--auto-confirm", action="store_true",
                        help="a complete play counts at once, without the confirm> prompt "
                             "(default off: Enter confirms each play; 'set autoconfirm on|off' in the game)")
    parser.add_argument("--chouette", type=int, metavar="N", help="a chouette of N players (3-10): you and N-1 tabla bots")


def load_engine(model: str | None) -> Engine:
    """The engine on ``model`` ('heuristic', a path, or the shipped model with a fallback)."""
    try:
        return Engine(load_evaluator(model))
    except ModelError as exc:
        if model is not None:
            raise
        print(f"tabla play: {exc}; playing with the heuristic evaluator instead", file=sys.stderr)
        return Engine(load_evaluator(HEURISTIC))


def run(args: argparse.Namespace) -> int:
    if args.chouette is not None:
        from scripts.cmd_chouette import run_terminal  # noqa: PLC0415

        return run_terminal(args, load_engine)
    if args.match is not None and not 1 <= args.match <= 25:
        raise CliError(f"--match takes a length of 1 to 25 points, got {args.match}")
    if args.match is not None and (args.jacoby or args.beavers):
        raise CliError("--jacoby and --beavers apply to money games only")
    config = PlayConfig(match_length=args.match or 0, jacoby=args.jacoby, beavers=args.beavers,
                        ply=args.ply, home=args.home, auto_confirm=args.auto_confirm)
    loaded = None
    if args.load:
        try:
            loaded = load_file(args.load, config)
        except SaveFileError as exc:
            raise CliError(str(exc)) from None
    engine = load_engine(args.model)
    rng = np.random.default_rng(args.seed)
    session = PlaySession(engine, config, rng)
    if loaded is not None:
        session.load(loaded)
    try:
        return session.run()
    except KeyboardInterrupt:
        session.say("\n(interrupted) Goodbye.")
        return 130
