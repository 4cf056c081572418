"""``tabla analyse FILE``: grade every decision of a match or money session.

Reads a ``.mat`` (Jellyfish / GNU Backgammon ``export match mat``, Tabla's
``tabla arena --export``) or GNU Backgammon ``.sgf``, replays it through the rules
engine (a malformed file is a one-line error naming the line, and nothing is written),
grades checker plays at ``--ply`` and cube decisions at ``--cube-ply`` (see
:mod:`eval.analysis` for the units, marks, error rate, PR, rating and luck), and prints
the per-player table and the worst mistakes with the board and why; ``--json`` prints
everything as one JSON object; ``--plot`` writes the first player's equity over the match.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.api import Engine
from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator
from eval.analysis import Grader, analyse
from eval.mat import read_mat
from eval.replay import replay_match
from eval.report import format_analysis, plot_analysis
from eval.sgf import read_sgf


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .mat or .sgf match or money session")
    parser.add_argument("--ply", type=int, default=2, help="search depth of checker plays (1-3, default 2)")
    parser.add_argument("--cube-ply", type=int, default=1, help="search depth of cube decisions (0-2, default 1)")
    parser.add_argument("--no-luck", action="store_true", help="skip the luck of the rolls")
    parser.add_argument("--worst", type=int, default=5, help="how many worst mistakes to show (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="OUT.png", help="plot the first player's equity over the match")
    parser.add_argument("--model", help="model file; default: the shipped model")
    parser.add_argument("--heuristic", action="store_true", help="use the heuristic evaluator, not the network")


def read_match_file(path: str):
    """The replayed match of a ``.mat`` or ``.sgf`` file (by content: ``(;`` starts an SGF)."""
    p = Path(path)
    try:
        head = p.read_bytes()[:200].lstrip()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    match = read_sgf(p) if head.startswith(b"(") or p.suffix.lower() == ".sgf" else read_mat(p)
    return replay_match(match)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.ply <= 3:
        raise ValueError(f"--ply must be 1 to 3, got {args.ply}")
    if not 0 <= args.cube_ply <= 2:
        raise ValueError(f"--cube-ply must be 0 to 2, got {args.cube_ply}")
    match = read_match_file(args.file)
    limit_blas_threads(1)
    engine = Engine(load_evaluator(evaluator_spec(args.model, args.heuristic)))
    result = analyse(match, Grader(engine, ply=args.ply, cube_ply=args.cube_ply), luck=not args.no_luck)
    if args.plot:
        plot_analysis(result, args.plot)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), default=_jsonable) + "\n")
    else:
        sys.stdout.write(format_analysis(result, args.worst))
    return 0


def _jsonable(v):
    if isinstance(v, tuple):
        return list(v)
    return str(v)
