"""``tabla bearoff``: build the exact bearoff databases, or show a position's values.

    tabla bearoff build [--out DIR] [--verify]
    tabla bearoff show --position-id 4wEAAKAAAAAAAA

``build`` writes ``bearoff_os.npz`` (one-sided), ``bearoff_ts.npz`` (two-sided) and
``bearoff_os8.npz`` (one-sided, points 1-8) into ``DIR`` (default: the user cache dir the
engine reads the two-sided and eight-point files from; use
``--out engine/data`` in a checkout to regenerate the shipped one-sided file) and prints
each file's sha256 and content digest. The build is deterministic. ``--verify`` then
checks the one-sided file against the shipped one and the two-sided values against one
step of backward induction; it exits with status 1 if a check fails.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from engine import bearoff as bo
from engine import bearoff_build as bb
from engine.evaluator import PROB_NAMES
from engine.ids import position_from_id


class UsageError(ValueError):
    """Bad command-line input for ``tabla bearoff``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{build,show}")
    build = sub.add_parser("build", help="build the databases")
    build.add_argument("--out", type=Path, default=None, help=f"output directory (default {bo.cache_dir()})")
    build.add_argument("--verify", action="store_true", help="check the result (see the module help)")
    build.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = sub.add_parser("show", help="database values of a position")
    show.add_argument("--position-id", required=True, help="GNU Backgammon Position ID, player on roll")
    show.add_argument("--db", type=Path, default=None, help="database directory (default: shipped + cache)")


def _build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    out = args.out if args.out is not None else bo.cache_dir()
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is not a directory")
    wide_size = bb.one_sided_size(bo.WIDE_POINTS)
    bar = tqdm(total=bb.ONE_SIDED_SIZE + bb.TWO_SIDED_SIDE ** 2 + wide_size, unit="pos", unit_scale=True,
               file=sys.stderr, disable=args.no_progress or not sys.stderr.isatty(), dynamic_ncols=True)
    written = []
    for name, kind in ((bo.ONE_SIDED_FILE, "one-sided"), (bo.TWO_SIDED_FILE, "two-sided"), (bo.WIDE_FILE, bo.WIDE_KIND)):
        t0 = time.perf_counter()
        written.append((name, bo.build_arrays(kind, progress=bar.update), kind, time.perf_counter() - t0))
    bar.close()
    for name, arrays, kind, secs in written:
        path = out / name
        sha = bo.write_db(path, arrays, kind)
        print(f"{path}: {kind}, {path.stat().st_size:,} bytes, built in {secs:.1f} s")
        print(f"  sha256 {sha}")
        print(f"  content digest {bb.content_digest(arrays)}")
    return _verify(*(arrays for _, arrays, _, _ in written)) if args.verify else 0


def _verify(os_arrays: dict[str, np.ndarray], ts_arrays: dict[str, np.ndarray], wide_arrays: dict[str, np.ndarray]) -> int:
    ok = True
    sums = {f"{f} {k}": (int(v.sum(axis=1, dtype=np.int64).min()), int(v.sum(axis=1, dtype=np.int64).max()))
            for f, arrays in (("six-point", os_arrays), ("eight-point", wide_arrays)) for k, v in arrays.items()}
    good = all(lo == hi == bb.SCALE for lo, hi in sums.values())
    ok &= good
    print(f"one-sided rows sum to {bb.SCALE}: {'ok' if good else 'FAILED ' + str(sums)}")
    shipped = bo.SHIPPED_DIR / bo.ONE_SIDED_FILE
    if shipped.exists():
        same = bo.file_meta(shipped)["digest"] == bb.content_digest(os_arrays)
        ok &= same
        print(f"one-sided equals the shipped {shipped}: {'ok' if same else 'FAILED'}")
    res = bb.two_sided_residuals(ts_arrays, *bb.child_table())
    tol = np.array([1e-12, 1e-6, 1e-6, 1e-6])  # float64 win, float32 cubeful equities
    good = bool((res <= tol).all())
    ok &= good
    print(f"two-sided backward-induction residuals {', '.join(f'{r:.1e}' for r in res)}: {'ok' if good else 'FAILED'}")
    return 0 if ok else 1


def _show(args: argparse.Namespace) -> int:
    position = position_from_id(args.position_id)
    board = position.array()[None, :]
    db = bo.get_db() if args.db is None else bo.BearoffDB.from_dir(args.db)
    home, idx, _ = bo.analyse(board)
    wide, widx, count = bo.analyse_wide(board)
    if not wide[0]:
        raise bo.BearoffError(f"not a bearoff position: some checker is beyond its {bo.WIDE_POINTS}-point")
    if not home[0]:
        print(f"a checker is outside its home board: eight-point database (points 1-{bo.WIDE_POINTS})")
    for who, i in (("player on roll", 0), ("opponent", 1)):
        dist, first = db.distributions(idx[0, i]) if home[0] else db.wide_distributions(widx[0, i])
        index = idx[0, i] if home[0] else widx[0, i]
        rolls = ", ".join(f"{n}: {p:.5f}" for n, p in enumerate(dist) if p > 0)
        mean = float(dist @ np.arange(bb.N_ROLLS))
        print(f"{who}: {count[0, i]} checker{'s' if count[0, i] != 1 else ''} on the board, index {index}, expected rolls {mean:.4f}")
        print(f"  P(n rolls to bear off all) {rolls}")
        if count[0, i] == bb.MAX_CHECKERS:
            print("  P(n rolls to bear off one) " + ", ".join(f"{n}: {p:.5f}" for n, p in enumerate(first) if p > 0))
    probs = db.one_sided_probs(board)[0]
    print("one-sided: " + "  ".join(f"{k} {v:.5f}" for k, v in zip(PROB_NAMES, probs)))
    if bo.in_two_sided(board)[0]:
        win = db.two_sided_probs(board)[0, 0]
        cf = db.two_sided_cubeful(board)[0]
        print(f"two-sided: win {win:.6f}  cubeless equity {2 * win - 1:+.6f}")
        print(f"  cubeful equity: centred {cf[0]:+.6f}  owned {cf[1]:+.6f}  opponent owns {cf[2]:+.6f}")
    return 0


def run(args: argparse.Namespace) -> int:
    return _build(args) if args.action == "build" else _show(args)
