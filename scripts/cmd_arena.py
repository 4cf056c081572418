"""``tabla arena A B``: two bots play each other with duplicate dice; a result table.

Bots are specs ``name[:key=val,...]``: random, race, pipcube, pubeval, gnubg[:ply=N],
tabla[:ply=N,model=PATH] (see :mod:`eval.bots`). Examples::

    tabla arena pubeval random --games 2000 --seed 1
    tabla arena tabla:ply=2 gnubg:ply=0 --games 500 --workers 2
    tabla arena tabla pipcube --games 1000 --cube --export run.mat --plot run.png
    tabla arena tabla gnubg --match 7 --games 100 --json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.game import GameOptions
from scripts.evaluators import load_evaluator


class ArenaArgumentError(ValueError):
    """A bad combination of arena options."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="bot A (the figures are A's), e.g. tabla:ply=2")
    parser.add_argument("b", metavar="B", help="bot B, e.g. pubeval or gnubg:ply=0")
    parser.add_argument("--games", type=int, default=1000, help="games (matches with --match); rounded up to pairs")
    parser.add_argument("--cube", action="store_true", help="money games with the doubling cube")
    parser.add_argument("--match", type=int, default=0, metavar="N", help="play N-point matches (Crawford rule)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dice and of the random bot")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--jacoby", action="store_true", help="money: Jacoby rule")
    parser.add_argument("--beavers", action="store_true", help="money: beavers allowed")
    parser.add_argument("--auto-doubles", type=int, default=0, metavar="K", help="money: up to K automatic doubles")
    parser.add_argument("--max-cube", type=int, default=64, help="cube cap (default 64)")
    parser.add_argument("--export", metavar="FILE.mat", help="write the games as a Jellyfish .mat file")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="plot the cumulative ppg with its 95%% CI (a folder: FOLDER/arena.png)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (there is none anyway when standard error is not a terminal)")


def _check(args: argparse.Namespace) -> None:
    if args.games < 1:
        raise ArenaArgumentError(f"--games must be at least 1, got {args.games}")
    if args.match < 0 or args.match > 64:
        raise ArenaArgumentError(f"--match must be 1 to 64 points, got {args.match}")
    if args.workers < 1 or args.workers > 64:
        raise ArenaArgumentError(f"--workers must be 1 to 64, got {args.workers}")
    if args.seed < 0:
        raise ArenaArgumentError(f"--seed must be non-negative, got {args.seed}")
    if args.max_cube < 2 or args.max_cube & (args.max_cube - 1):
        raise ArenaArgumentError(f"--max-cube must be a power of two >= 2, got {args.max_cube}")
    if args.auto_doubles < 0:
        raise ArenaArgumentError("--auto-doubles must be 0 or more")
    money_only = [n for n, v in (("--jacoby", args.jacoby), ("--beavers", args.beavers),
                                 ("--auto-doubles", args.auto_doubles)) if v]
    if money_only and (args.match or not args.cube):
        raise ArenaArgumentError(f"{', '.join(money_only)} only apply to money games (--cube without --match)")
    if args.export and not args.export.lower().endswith(".mat"):
        raise ArenaArgumentError(f"--export writes a .mat file, got {args.export!r}")
    if args.export:
        _check_folder("--export", Path(args.export))


def plot_path(plot: str) -> Path:
    """Where ``--plot`` writes: the file itself (``.png``), or ``arena.png`` in an existing
    folder; ArenaArgumentError for anything else, before the games are played."""
    path = Path(plot)
    if path.is_dir():
        path = path / "arena.png"
    elif path.suffix.lower() != ".png":
        raise ArenaArgumentError(f"--plot writes a .png file or into an existing folder, got {plot!r}")
    _check_folder("--plot", path)
    return path


def _check_folder(option: str, path: Path) -> None:
    folder = path.parent
    if not folder.is_dir():
        raise ArenaArgumentError(f"{option} {path}: the folder {folder} does not exist")


def run(args: argparse.Namespace) -> int:
    from eval import arena  # noqa: PLC0415 (keep `tabla --help` light)

    _check(args)
    plot = plot_path(args.plot) if args.plot else None
    bots = arena.make_bots(args.a, args.b, args.seed, load_evaluator)
    options = GameOptions(
        cube=bool(args.cube or args.match),
        max_cube=args.max_cube,
        jacoby=args.jacoby,
        beavers=args.beavers,
        auto_doubles=args.auto_doubles,
    )
    bar = None
    progress = None
    if not args.no_progress:
        from tqdm import tqdm  # noqa: PLC0415

        bar = tqdm(total=(args.games + 1) // 2 * 2, unit="match" if args.match else "game", file=sys.stderr,
                   dynamic_ncols=True, leave=False, disable=not sys.stderr.isatty())
        progress = bar.update
    try:
        result = arena.run_arena(
            args.a, args.b, args.games, seed=args.seed, cube=args.cube, match_length=args.match,
            workers=args.workers, options=options, keep_records=bool(args.export), progress=progress, bots=bots,
        )
    finally:
        if bar is not None:
            bar.close()
    files = arena.export_records(result, args.export) if args.export else []
    if plot is not None:
        arena.plot_run(result, plot)
    if args.json:
        out = result.to_dict()
        if files:
            out["exported"] = [str(f) for f in files]
        if plot is not None:
            out["plot"] = str(plot)
        print(json.dumps(out))
    else:
        print(result.table())
        for f in files[:3]:
            print(f"  exported {f}")
        if len(files) > 3:
            print(f"  ... and {len(files) - 3} more .mat files")
        if plot is not None:
            print(f"  plot {plot}")
    return 0
