"""``tabla rollout``: roll a position out, or rank the plays of a roll by rollout.

``tabla rollout --position-id P [--match-id M | --xgid X] [--games 1296] [--ply 1]
[--truncate T] [--cubeful] [--no-variance-reduction] [--until-se X] [--seed S]
[--workers N] [--backend ray [--ray-address A]] [--json]``; with ``--dice 31 [--top 5]`` the top plays of that roll (chosen
at 2 ply) are rolled out with the same dice (common random numbers) and ranked by rollout
equity, each with ± 95% CI and its difference to the best. A progress bar (standard error,
when it is a terminal) shows the trials done, the running equity ± CI and the time left.
With ``--backend ray`` the slices of trials run as Ray tasks (:mod:`training.ray_rollout`);
the figures are the same as on this machine for the same seed.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Iterator

from engine.api import Engine, RolledPlay
from engine.evaluator import PROB_NAMES
from engine.request import Query, resolve_query
from engine.rollout import RolloutResult, RolloutSettings, SliceMap
from scripts.cmd_query import describe_state
from scripts.cmd_train_ray import add_ray_arguments
from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--position-id", help="GNU Backgammon Position ID, player on roll")
    where.add_argument("--xgid", help="XGID (its cube, score, turn and dice apply)")
    parser.add_argument("--match-id", help="GNU Backgammon Match ID (cube, score, dice) with --position-id")
    parser.add_argument("--games", type=int, default=1296, help="trials (the maximum with --until-se; default 1296)")
    parser.add_argument("--ply", type=int, default=1, help="ply of the plays inside the trials (1-3; 1 = the net on each result)")
    parser.add_argument("--truncate", type=int, default=None, help="cut each trial after this many half-moves")
    parser.add_argument("--cubeful", action="store_true", help="also the money cubeful equity, the cube turned by Tabla")
    parser.add_argument("--no-variance-reduction", action="store_true", help="no luck adjustment")
    parser.add_argument("--no-bearoff", action="store_true",
                        help="at a truncation, the network's value even where the bearoff databases have one")
    parser.add_argument("--until-se", type=float, default=None, help="stop once the equity's standard error is at most this")
    parser.add_argument("--seed", type=int, default=1, help="dice seed (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="processes (the result does not depend on it)")
    parser.add_argument("--dice", help="roll out the top plays of this roll, e.g. 31")
    parser.add_argument("--top", type=int, default=None, help="with --dice: how many plays (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object with every figure")
    parser.add_argument("--model", help="model file (.npz or .pt); default: the shipped model")
    parser.add_argument("--heuristic", action="store_true", help="use the heuristic evaluator, not the network")
    add_ray_arguments(parser, actors=False)


class _Bar:
    """A tqdm bar on standard error (off when it is not a terminal)."""

    def __init__(self, total: int, desc: str) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=desc, unit="trial", file=sys.stderr, disable=not sys.stderr.isatty(), leave=False)

    def __call__(self, done: int, total: int, running: RolloutResult | None) -> None:
        self.bar.update(done - self.bar.n)
        if running is not None:
            e = running.cubeful_equity if running.cubeful_equity is not None else running.equity
            self.bar.set_postfix_str(f"equity {e.mean:+.4f} ± {e.ci:.4f}", refresh=False)

    def close(self) -> None:
        self.bar.close()


def run(args: argparse.Namespace) -> int:
    from scripts.tabla import CliError

    for name in ("games", "workers", "top"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CliError(f"--{name} must be positive, got {value}")
    if args.top is not None and args.dice is None:
        raise CliError("--top needs --dice: it ranks the plays of a roll")
    q = resolve_query(position_id=args.position_id, xgid=args.xgid, match_id=args.match_id, dice=args.dice)
    if q.position.is_game_over():
        raise CliError("the game in this position is already over")
    settings = RolloutSettings(trials=args.games, ply=args.ply, truncate=args.truncate, cubeful=args.cubeful,
                               variance_reduction=not args.no_variance_reduction, until_se=args.until_se,
                               seed=args.seed, workers=args.workers, bearoff=not args.no_bearoff)
    limit_blas_threads(1)
    engine = Engine(load_evaluator(evaluator_spec(args.model, args.heuristic)))
    with _slice_map(args) as slice_map:
        return _run(args, q, settings, engine, slice_map)


@contextlib.contextmanager
def _slice_map(args: argparse.Namespace) -> Iterator[SliceMap | None]:
    """None (this machine) or, with ``--backend ray``, Ray tasks for the slices of trials."""
    if args.backend != "ray":
        yield None
        return
    from scripts.cmd_train_ray import require_ray

    ray = require_ray()
    from training.ray_cluster import connect
    from training.ray_rollout import RaySlices

    started = connect(args.ray_address)
    try:
        yield RaySlices()
    finally:
        if started:
            ray.shutdown()


def _run(args: argparse.Namespace, q: Query, settings: RolloutSettings, engine: Engine, slice_map: SliceMap | None) -> int:
    if args.dice is None:
        bar = _Bar(settings.trials, "rollout")
        try:
            res = engine.rollout(q.position, settings, q.state, progress=bar, slice_map=slice_map)
        finally:
            bar.close()
        if args.json:
            sys.stdout.write(json.dumps(res.to_dict()) + "\n")
        else:
            sys.stdout.write(format_result(describe_state(q.state), res))
        return 0
    bar = _Bar(settings.trials * (args.top or 5), f"rollout {q.dice}")
    offset, previous = [0], [0]

    def progress(done: int, total: int, running: RolloutResult | None) -> None:
        if done < previous[0]:  # the next candidate's rollout has begun
            offset[0] += previous[0]
        previous[0] = done
        bar(offset[0] + done, total, running)

    try:
        plays = engine.rollout_plays(q.position, q.dice, settings, q.state, args.top or 5, progress=progress,
                                     slice_map=slice_map)
    finally:
        bar.close()
    if args.json:
        sys.stdout.write(json.dumps({"dice": [q.dice.high, q.dice.low], "plays": [p.to_dict() for p in plays]}) + "\n")
    else:
        sys.stdout.write(format_plays(describe_state(q.state), str(q.dice), plays, settings))
    return 0


def _settings_line(s: RolloutSettings, res: RolloutResult) -> str:
    cut = f"truncated after {s.truncate} half-moves" if s.truncate else "full games"
    vr = "variance reduction on" if s.variance_reduction else "variance reduction off"
    return f"{res.trials} trials, plays at {s.ply} ply, {cut}, {vr}, seed {s.seed}, {res.seconds:.1f} s"


def format_result(state_line: str, res: RolloutResult) -> str:
    s = res.settings
    lines = [state_line, _settings_line(s, res), "Rollout for the player on roll, before the roll:"]
    for k in PROB_NAMES:
        e = res.probabilities[k]
        lines.append(f"  {k:<16s} {e.mean:.4f} ± {e.ci:.4f}")
    lines.append(f"  cubeless equity  {res.equity.mean:+.4f} ± {res.equity.ci:.4f}  (SE {res.equity.se:.4f})")
    if s.variance_reduction:
        lines.append(f"  without variance reduction: {res.raw_equity.mean:+.4f} ± {res.raw_equity.ci:.4f}  (SE {res.raw_equity.se:.4f})")
    if res.cubeful_equity is not None:
        c, rc = res.cubeful_equity, res.raw_cubeful_equity
        lines.append(f"  cubeful equity   {c.mean:+.4f} ± {c.ci:.4f}  (SE {c.se:.4f}; without variance reduction SE {rc.se:.4f})")
    return "\n".join(lines) + "\n"


def format_plays(state_line: str, dice: str, plays: list[RolledPlay], s: RolloutSettings) -> str:
    unit = "cubeful equity" if s.cubeful else "cubeless equity"
    lines = [state_line, f"Dice {dice}: plays rolled out, {_settings_line(s, plays[0].result)}, ranked by {unit}:"]
    for i, p in enumerate(plays, 1):
        e = p.result.cubeful_equity if s.cubeful else p.result.equity
        diff = "" if i == 1 else f"({p.difference:+.4f} ± {1.96 * p.difference_se:.4f})"
        lines.append(f"{i:3d}. {p.play or '(no play)':<28s} {e.mean:+.4f} ± {e.ci:.4f}  {diff}")
    return "\n".join(lines) + "\n"
