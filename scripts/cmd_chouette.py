"""``tabla chouette P1 P2 P3 [P4 ...]``: bots play a chouette; figures and the ledger.

Players are bot specs (see :mod:`eval.bots`): random, race, pipcube, pubeval,
gnubg[:ply=N], tabla[:ply=N,model=PATH]; the same spec may sit in several seats. The
rules are :mod:`engine.chouette`'s (``docs/CHOUETTE.md``). Examples::

    tabla chouette tabla:ply=1 pubeval random --games 200 --seed 1 --log x.jsonl
    tabla chouette pubeval pubeval pipcube race --games 50 --jacoby --json

Prints per player: points, ppg, games in the box and as captain, cube actions (double,
take, pass, beaver), team plays where he was overruled, then the ledger (what each
player won from each other player). ``--log FILE`` writes one JSON line per game
(:mod:`eval.chouette_report`); ``--json`` prints one JSON object instead of the table.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys

import numpy as np

from engine.chouette import MAX_PLAYERS, MIN_PLAYERS
from engine.game import GameOptions
from scripts.evaluators import load_evaluator


class ChouetteArgumentError(ValueError):
    """A bad combination of chouette options."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("players", nargs="*", metavar="P", help=f"{MIN_PLAYERS} to {MAX_PLAYERS} bot specs, e.g. tabla:ply=1 pubeval random")
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial roll, the dice and the random bots")
    parser.add_argument("--jacoby", action="store_true", help="Jacoby rule")
    parser.add_argument("--beavers", action="store_true", help="beavers allowed")
    parser.add_argument("--auto-doubles", type=int, default=0, metavar="K", help="up to K automatic doubles per game")
    parser.add_argument("--max-cube", type=int, default=64, help="cube cap (default 64)")
    parser.add_argument("--log", metavar="FILE.jsonl", help="write one JSON line per game")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def check_arguments(args: argparse.Namespace) -> None:
    """One-line errors for bad arguments (before any bot is built)."""
    n = len(args.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ChouetteArgumentError(f"a chouette needs {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n}")
    if args.games < 1:
        raise ChouetteArgumentError(f"--games must be at least 1, got {args.games}")
    if args.seed < 0:
        raise ChouetteArgumentError(f"--seed must be non-negative, got {args.seed}")
    if args.auto_doubles < 0:
        raise ChouetteArgumentError(f"--auto-doubles must be 0 or more, got {args.auto_doubles}")
    if args.max_cube < 2 or args.max_cube & (args.max_cube - 1):
        raise ChouetteArgumentError(f"--max-cube must be a power of two >= 2, got {args.max_cube}")


def make_seats(specs: list[str], seed: int):
    """One :class:`eval.chouette.BotSeat` per spec; random bots draw from generators derived
    from ``seed``; seats with the same model share one loaded evaluator."""
    from eval.bots import make_bot  # noqa: PLC0415
    from eval.chouette import BotSeat, unique_labels  # noqa: PLC0415

    loader = functools.lru_cache(maxsize=None)(load_evaluator)
    labels = unique_labels(specs)
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 0xC0E7])
    return [BotSeat(make_bot(spec, np.random.default_rng(rng.integers(2**63)), loader), label)
            for spec, label in zip(specs, labels)]


def run(args: argparse.Namespace) -> int:
    from eval.chouette import seat_and_play  # noqa: PLC0415
    from eval.chouette_report import game_line, summary, table  # noqa: PLC0415

    check_arguments(args)
    options = GameOptions(jacoby=args.jacoby, beavers=args.beavers, auto_doubles=args.auto_doubles,
                          max_cube=args.max_cube)
    seats = make_seats(args.players, args.seed)
    labels = tuple(s.label for s in seats)
    log_file = open(args.log, "w", encoding="utf-8") if args.log else None
    bar = None
    if not args.no_progress:
        from tqdm import tqdm  # noqa: PLC0415

        bar = tqdm(total=args.games, unit="game", file=sys.stderr, dynamic_ncols=True, leave=False,
                   disable=not sys.stderr.isatty())

    def on_game(rec) -> None:
        if log_file is not None:
            log_file.write(json.dumps(game_line(rec, labels)) + "\n")
            log_file.flush()
        if bar is not None:
            bar.update(1)

    try:
        result = seat_and_play(seats, args.games, np.random.default_rng([args.seed & 0xFFFFFFFF, 0xD1CE]),
                               options, on_game=on_game)
    finally:
        if bar is not None:
            bar.close()
        if log_file is not None:
            log_file.close()
    if args.json:
        out = summary(result)
        if args.log:
            out["log"] = args.log
        print(json.dumps(out))
    else:
        print(table(result))
        if args.log:
            print(f"  log {args.log} ({len(result.games)} games)")
    return 0


def run_terminal(args: argparse.Namespace, load_engine) -> int:
    """``tabla play --chouette N``: the person in one seat, Tabla bots in the others
    (:mod:`eval.chouette_play`); ``load_engine(model)`` is ``tabla play``'s engine loader."""
    from eval.bots import TablaBot  # noqa: PLC0415
    from eval.chouette_play import TerminalChouette  # noqa: PLC0415

    n = args.chouette
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ChouetteArgumentError(f"--chouette takes {MIN_PLAYERS} to {MAX_PLAYERS} players, got {n}")
    if args.match is not None or args.load:
        raise ChouetteArgumentError("a chouette is played for money: --chouette goes with neither --match nor --load")
    engine = load_engine(args.model)
    bots = [TablaBot(engine.evaluator, args.ply, label="tabla") for _ in range(n - 1)]
    options = GameOptions(jacoby=args.jacoby, beavers=args.beavers)
    table = TerminalChouette(bots, np.random.default_rng(args.seed), options, home=args.home,
                             bot_text=f"tabla at ply {args.ply}")
    try:
        return table.run()
    except KeyboardInterrupt:
        table.say("\n(interrupted) Goodbye.")
        return 130
