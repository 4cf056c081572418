"""``tabla hint``, ``tabla eval`` and ``tabla cube``: one-shot queries from the shell.

* ``tabla hint (ID | --position-id P [--match-id M] | --xgid=X) [--dice 31] [--ply N] [--top 5]``:
  the ranked plays of a roll (equity, difference to the best, the five probabilities)
  like GNU Backgammon's hint (``--why``: one line per play on what it does, see
  :mod:`eval.explain`; the JSON candidates then carry ``why`` and ``facts``); without
  dice (and none in the ID), the cube decision.
* ``tabla eval ...``: probabilities, cubeless and cubeful equity of the position.
* ``tabla cube ...``: the three cubeful equities and the proper cube action.

The position is one ID, told by its form (:func:`engine.request.id_fields`): ``XGID=...``,
gnubg's ``PositionID:MatchID``, or a Position ID; or given by option. An XGID starting
with ``-`` needs the prefix or ``--xgid=-b----E-C...`` (with ``=``), else argparse reads
it as an option.

``--json`` prints the engine protocol's reply (``best``, ``eval`` or ``cube``). Plays are
ranked at 2 ply by default; positions (``eval``, ``cube``, ``hint`` without dice) at the
protocol's default ply (:data:`engine.request.DEFAULT_PLY`: 0), so ``tabla cube`` and
``tabla engine`` give the same answer. See :mod:`engine.search` for what a ply is. The
shipped model is used unless ``--model`` or ``--heuristic`` is given.
"""
from __future__ import annotations

import argparse
import json
import sys

from engine.api import BestResult, CubeResult, Engine, EvalResult
from engine.cube import CubeAction, CubeState
from engine.evaluator import PROB_NAMES
from engine.request import DEFAULT_PLY, STATE_FIELDS, Query, QueryError, id_fields, resolve_query
from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator

DEFAULT_PLAY_PLY = 2

_ACTION_TEXT = {
    CubeAction.NO_DOUBLE: "No double, take",
    CubeAction.DOUBLE_TAKE: "Double, take",
    CubeAction.DOUBLE_DROP: "Double, pass",
    CubeAction.TOO_GOOD: "Too good to double, pass",
    CubeAction.NO_DOUBLE_BEAVER: "No double, beaver",
    CubeAction.DOUBLE_BEAVER: "Double, beaver",
    CubeAction.NO_CUBE: "No cube action available",
}


def add_arguments_for(name: str, parser: argparse.ArgumentParser) -> None:
    """Options of ``tabla hint`` / ``eval`` / ``cube``."""
    parser.usage = "%(prog)s (ID | --position-id P [--match-id M] | --xgid=X) [options]"
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("id", nargs="?", metavar="ID",
                       help="the position, told by its form: XGID=..., PositionID:MatchID (as gnubg writes them) "
                            "or a Position ID")
    where.add_argument("--position-id", help="GNU Backgammon Position ID, player on roll")
    where.add_argument("--xgid", help="XGID (its cube, score, turn and dice apply); one that starts with '-' "
                                      "needs --xgid=-b----E-C... or the XGID= prefix")
    parser.add_argument("--match-id", help="GNU Backgammon Match ID (cube, score, dice) with --position-id")
    if name == "hint":
        parser.add_argument("--dice", help="the roll to play, e.g. 31 or 3-1; without it: the cube decision")
        parser.add_argument("--top", type=int, default=5, help="how many plays to show (default 5)")
        parser.add_argument("--why", action="store_true",
                            help="explain each play in words (hits, points, blots and shots, race, gammons)")
    parser.add_argument(
        "--ply",
        type=int,
        default=None,
        help=f"search depth (plays: 1-3, default {DEFAULT_PLAY_PLY}; positions: 0-2, default {DEFAULT_PLY['cube']}, "
             "as in the engine protocol)",
    )
    state = parser.add_argument_group("game state (override the IDs)")
    state.add_argument("--cube-value", type=int, help="cube value (1, 2, 4, ...)")
    state.add_argument("--cube-owner", choices=("centre", "player", "opponent"), help="who owns the cube")
    state.add_argument("--match-length", type=int, help="match length, 0 = money")
    state.add_argument("--score", type=int, nargs=2, metavar=("ON_ROLL", "OPPONENT"), help="match score")
    state.add_argument("--crawford", action="store_true", default=None, help="this is the Crawford game")
    state.add_argument("--jacoby", action="store_true", default=None, help="money: Jacoby rule")
    state.add_argument("--beavers", action="store_true", default=None, help="money: beavers allowed")
    parser.add_argument("--json", action="store_true", help="print the engine protocol's JSON reply")
    parser.add_argument("--model", help="model file (.npz or .pt); default: the shipped model")
    parser.add_argument("--heuristic", action="store_true", help="use the heuristic evaluator, not the network")


def _query(args: argparse.Namespace) -> Query:
    fields = {}
    for key in STATE_FIELDS:
        v = getattr(args, key, None)
        if v is not None:
            fields[key] = tuple(v) if key == "score" else v
    where = {"position_id": args.position_id, "xgid": args.xgid, "match_id": args.match_id}
    if args.id is not None:
        given = id_fields(args.id)
        if args.match_id is not None and set(given) != {"position_id"}:
            raise QueryError("--match-id goes with a Position ID, not with an XGID or PositionID:MatchID")
        where.update(given)
    return resolve_query(
        **where,
        dice=getattr(args, "dice", None),
        **fields,
    )


def run(args: argparse.Namespace) -> int:
    q = _query(args)
    cmd = args.command
    limit_blas_threads(1)
    engine = Engine(load_evaluator(evaluator_spec(args.model, args.heuristic)))
    if cmd == "hint" and q.dice is not None:
        ply = DEFAULT_PLAY_PLY if args.ply is None else args.ply
        res = engine.best(q.position, q.dice, ply=ply, top=args.top, state=q.state)
        body = res.to_dict()
        whys = None
        if getattr(args, "why", False):
            from eval.explain import explain_plays  # noqa: PLC0415 (only with --why)

            whys = explain_plays(q.position, q.dice, res.plays)
            for cand, (line, facts) in zip(body["candidates"], whys):
                cand["why"] = line
                cand["facts"] = facts
        _emit(args, body, lambda: format_best(q, res, whys))
    elif cmd == "eval":
        ply = DEFAULT_PLY["eval"] if args.ply is None else args.ply
        ev = engine.eval(q.position, ply=ply, state=q.state)
        _emit(args, ev.to_dict(), lambda: format_eval(q, ev))
    else:
        ply = DEFAULT_PLY["cube"] if args.ply is None else args.ply
        cr = engine.cube(q.position, ply=ply, state=q.state)
        _emit(args, cr.to_dict(), lambda: format_cube(q, cr))
    return 0


def _emit(args: argparse.Namespace, body: dict, text) -> None:
    if args.json:
        reply = {"id": None, "ok": True}
        reply.update(body)
        sys.stdout.write(json.dumps(reply) + "\n")
    else:
        sys.stdout.write(text())


# --------------------------------------------------------------------------- text output
def describe_state(state: CubeState) -> str:
    """One line: money or match score, cube value and owner."""
    if state.is_money:
        opts = [o for o, on in (("Jacoby", state.jacoby), ("beavers", state.beavers)) if on]
        head = "money game" + (f" ({', '.join(opts)})" if opts else "")
    else:
        a, b = state.away
        head = f"{state.match_length}-point match, score {state.score[0]}-{state.score[1]} ({a}-away/{b}-away)"
        if state.crawford:
            head += ", Crawford game"
        elif state.post_crawford:
            head += ", post-Crawford"
    owner = {"centre": "centred", "player": "owned by the player on roll", "opponent": "owned by the opponent"}
    return f"{head}; cube {state.value} {owner[state.owner.value]}"


def _probs_line(probs: dict[str, float]) -> str:
    w, wg, wb, lg, lb = (probs[k] for k in PROB_NAMES)
    return f"win {w:.3f} (gammon {wg:.3f}, bg {wb:.3f})  lose {1 - w:.3f} (gammon {lg:.3f}, bg {lb:.3f})"


def format_best(q: Query, res: BestResult, whys: list | None = None) -> str:
    unit = "MWC" if res.mwc else "cubeful equity" if res.plays[0].cubeful_equity is not None else "cubeless equity"
    lines = [
        describe_state(q.state),
        f"Dice {q.dice.high}-{q.dice.low}: plays ranked at {res.ply} ply by {unit} (for the player who plays)",
    ]
    for i, p in enumerate(res.plays, 1):
        value = p.cubeful_equity if p.cubeful_equity is not None else p.equity
        diff = "" if i == 1 else f"({p.difference:+.3f})"
        extra = f"  cubeless {p.equity:+.3f}" if p.cubeful_equity is not None else ""
        lines.append(f"{i:3d}. {p.ply}-ply  {p.play or '(no play)':<28s} {value:+.3f} {diff:>9s}{extra}")
        lines.append(f"       {_probs_line(p.probabilities)}")
        if whys is not None:
            lines.append(f"       why: {whys[i - 1][0]}")
    return "\n".join(lines) + "\n"


def format_eval(q: Query, ev: EvalResult) -> str:
    cub = f"{ev.cubeful_equity:.3f} MWC" if ev.mwc else f"{ev.cubeful_equity:+.3f}"
    return (
        f"{describe_state(q.state)}\n"
        f"Evaluation at {ev.ply} ply, player on roll, before the roll:\n"
        f"  {_probs_line(ev.probabilities)}\n"
        f"  cubeless equity {ev.equity:+.3f}\n"
        f"  cubeful equity  {cub}\n"
    )


def format_cube(q: Query, cr: CubeResult) -> str:
    d = cr.decision
    fmt = (lambda v: f"{v:.3f}") if d.mwc else (lambda v: f"{v:+.3f}")
    rows = [("No double", d.no_double), ("Double, take", d.double_take), ("Double, pass", d.double_drop)]
    if d.double_beaver is not None:
        rows.append(("Double, beaver", d.double_beaver))
    best = d.proper_equity
    lines = [
        describe_state(q.state),
        f"Cube analysis at {cr.ply} ply ({'match-winning chances' if d.mwc else 'cubeful equity per cube value'}):",
        f"  {_probs_line(cr.probabilities)}",
        f"  cubeless equity {cr.equity:+.3f}",
    ]
    for i, (label, v) in enumerate(rows, 1):
        diff = v - best
        lines.append(f"  {i}. {label:<15s} {fmt(v)}  ({diff:+.3f})" if abs(diff) > 1e-12 else f"  {i}. {label:<15s} {fmt(v)}")
    lines.append(f"Proper cube action: {_ACTION_TEXT[d.action]}")
    return "\n".join(lines) + "\n"
