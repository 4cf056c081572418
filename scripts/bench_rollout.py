"""``tabla bench rollout``: a cubeless rollout of full games beside GNU Backgammon's own.

In one run, for variance reduction on and off: Tabla's rollout of the position
(``--games`` trials, plays at ply 1, no truncation, in-process after a warm-up) and
``/usr/games/gnubg -t`` rolling out the same position with the same settings (``set
rollout trials N``, ``chequerplay plies 0`` = our ply 1, ``varredn on/off``,
``quasirandom on``, ``truncation enable off``, ``cubeful off``, ``set threads 1``). GNU
Backgammon's time is its process wall time minus that of the same process without the
``rollout`` command (start-up: loading weights and databases); both are printed. The
ratio is GNU Backgammon's rollout time ÷ Tabla's.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time

GNUBG = "/usr/games/gnubg"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--position-id", default="4HPwATDgc/ABMA", help="position to roll out (player on roll)")
    parser.add_argument("--games", type=int, default=1296, help="trials per rollout (default 1296)")
    parser.add_argument("--model", default=None, help="model file; default: the shipped model")
    parser.add_argument("--no-gnubg", action="store_true", help="time Tabla only")


def gnubg_script(position_id: str, games: int, varredn: bool, seed: int, rollout: bool = True) -> str:
    """GNU Backgammon commands rolling out ``position_id`` (player on roll, no dice)."""
    lines = [
        "set threads 1",
        f"set rollout trials {games}",
        "set rollout chequerplay plies 0",
        f"set rollout varredn {'on' if varredn else 'off'}",
        "set rollout quasirandom on",
        "set rollout truncation enable off",
        "set rollout cubeful off",
        f"set rollout seed {seed}",
        "set display off",
        "new game",
        f"set board {position_id}",
        "set turn gnubg",  # forget the dice of the new game: the position before the roll
    ]
    if rollout:
        lines.append("rollout")
    return "\n".join(lines) + "\n"


def time_gnubg(script: str) -> float:
    """Wall time of one ``gnubg -t`` process reading ``script`` on standard input."""
    t0 = time.perf_counter()
    proc = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"gnubg failed with status {proc.returncode}: {proc.stderr.strip()[:200]}")
    return elapsed


def run(args: argparse.Namespace) -> int:
    from engine.ids import position_from_id
    from scripts.evaluators import limit_blas_threads
    from engine.rollout import RolloutSettings, rollout
    from scripts.bench_common import bench_evaluator
    from scripts.tabla import CliError

    use_gnubg = not args.no_gnubg
    if use_gnubg and shutil.which(GNUBG) is None:
        raise CliError(f"{GNUBG} is not installed (use --no-gnubg to time Tabla only)")
    limit_blas_threads(1)
    ev, _, desc = bench_evaluator(args.model, allow_fallback=True)
    board = position_from_id(args.position_id).array()
    rollout(ev, board, RolloutSettings(trials=36, seed=args.seed))  # warm-up: compiled kernels loaded
    startup = time_gnubg(gnubg_script(args.position_id, args.games, True, args.seed, rollout=False)) if use_gnubg else None
    figures: dict = {"position_id": args.position_id, "games": args.games, "evaluator": desc, "gnubg_startup_s": startup}
    for vr in (True, False):
        key = "vr_on" if vr else "vr_off"
        res = rollout(ev, board, RolloutSettings(trials=args.games, variance_reduction=vr, seed=args.seed))
        row = {"tabla_s": res.seconds, "tabla_equity": res.equity.mean, "tabla_se": res.equity.se}
        if use_gnubg:
            wall = time_gnubg(gnubg_script(args.position_id, args.games, vr, args.seed))
            net = max(wall - startup, 1e-9)
            row.update(gnubg_wall_s=wall, gnubg_s=net, ratio=net / res.seconds, ratio_wall=wall / res.seconds)
        figures[key] = row
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"rollout of {args.position_id}: {args.games} cubeless trials of full games, plays at ply 1 "
          f"(gnubg 0-ply), quasi-random dice; {desc}")
    if startup is not None:
        print(f"gnubg start-up (same commands without rollout): {startup:.2f} s")
    for key, label in (("vr_on", "variance reduction on "), ("vr_off", "variance reduction off")):
        r = figures[key]
        line = f"{label}: Tabla {r['tabla_s']:7.2f} s (equity {r['tabla_equity']:+.4f}, SE {r['tabla_se']:.4f})"
        if use_gnubg:
            line += (f"  gnubg {r['gnubg_s']:7.2f} s (process {r['gnubg_wall_s']:.2f} s)"
                     f"  ratio gnubg/Tabla {r['ratio']:.2f} (process {r['ratio_wall']:.2f})")
        print(line)
    return 0
