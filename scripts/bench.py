"""``tabla bench KIND``: dispatch to one benchmark module per kind.

Each ``scripts.bench_<kind>`` module defines ``add_arguments(parser)`` and ``run(args)``;
every benchmark measures gnubg-nn in the same run where a reference exists, prints the
ratio, and with ``--json`` prints one JSON object with the figures.
"""
from __future__ import annotations

import argparse
import importlib

KINDS = {
    "movegen": "move generation: distinct results per second vs gnubg-nn moves()",
    "selfplay": "self-play training games per second",
    "search": "decisions per second at ply 1 and 2 vs gnubg-nn best_move",
    "accuracy": "equity lost per decision vs gnubg-nn 2-ply",
    "rollout": "wall time of a 1296-trial cubeless rollout vs gnubg -t's own rollout",
    "serve": "1-ply best per second over HTTP (tabla serve), one and several clients, vs tabla engine",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind, help_text in KINDS.items():
        p = sub.add_parser(kind, help=help_text, description=help_text)
        p.add_argument("--json", action="store_true", help="print one JSON object with the figures")
        p.add_argument("--seed", type=int, default=1, help="seed of the position set")
        try:
            module = importlib.import_module(f"scripts.bench_{kind}")
        except ImportError as exc:  # reported only when this kind is run
            p.set_defaults(import_error=f"benchmark {kind!r} is unavailable: {exc}")
            continue
        module.add_arguments(p)


POSITIVE = ("games", "positions", "ply2_positions", "rounds", "repeat", "seconds", "workers", "hidden", "parallel_games",
            "clients", "timeout", "load_seconds")
"""Sizes a benchmark takes; each must be positive when given."""


def run(args: argparse.Namespace) -> int:
    from scripts.tabla import CliError

    if getattr(args, "import_error", None):
        raise CliError(args.import_error)
    for name in POSITIVE:
        value = getattr(args, name, None)
        if value is not None and not value > 0:
            raise CliError(f"--{name.replace('_', '-')} must be positive, got {value}")
    module = importlib.import_module(f"scripts.bench_{args.kind}")
    return int(module.run(args) or 0)
