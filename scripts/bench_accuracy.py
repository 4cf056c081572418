"""``tabla bench accuracy``: equity lost per decision against gnubg-nn 2-ply.

**Positions.** Games of gnubg-nn 0-ply against itself (cubeless, seeded dice and
opening): a realistic mix of openings, middle games, holding games and races. A decision
is kept with probability 0.3 when its roll has at least two distinct legal results (not
forced), until ``--positions`` are collected.

**Plays.** Each player picks a play: Tabla at ply 1 and ply 2, gnubg-nn 0-ply (its net on
every result), and pubeval (``eval.pubeval``, Tesauro's weights, checked against
``gnubg_nn.pub_best_move`` in its tests). The reference is gnubg-nn's 2-ply evaluation of
each result (``probabilities(result, 2)`` with the opponent on roll: gnubg's "2-ply"
play). Results are graded for the union of the players' choices and gnubg-nn 0-ply's top
five; the error of a choice is the best graded cubeless equity minus the choice's.

**Money cube decisions** (centred cube, before the roll, same positions): reference
equities are Janowski cubeful equities (GNU Backgammon's money formulas and cube
efficiencies, :func:`engine.cube.gnubg_cube_efficiency`, whatever Tabla's own are) from gnubg-nn 2-ply probabilities. A player's doubling
error is ``proper - value(its action)`` and its take error ``value(its response) -
best response`` (doubler's view), summed per position. Players: Tabla at ply 0 and 1,
gnubg-nn 0-ply probabilities through the same Janowski formulas, and a pip-count rule
(double with a lead of 8% of one's pip count or more, take with a deficit up to 12%).

Figures: mean equity lost per decision × 1000 (lower is better), over all decisions and
per position class of the position before the roll (:mod:`engine.classes`: contact,
crashed, race with the bear-offs folded in); cube errors split into the doubling error
(the doubler's action) and the take error (the response), each per position.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from engine.classes import BEAROFF1, BEAROFF2, CLASS_NAMES, classify
from engine.cube import MONEY, cubeful_equity, gnubg_cube_efficiency
from engine.evaluator import terminal_probs
from engine.values import cubeless_equity
from engine.movegen import legal_results
from engine.position import Position, flip_array, to_gnubg_board

KEEP_PROBABILITY = 0.3
GRADE_TOP = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positions", type=int, default=200, help="non-forced decisions to grade (default 200)")
    parser.add_argument("--model", default=None, help="model file; default: the shipped model")
    parser.add_argument("--no-fallback", action="store_true", help="fail when the model is missing (default: heuristic)")


# --------------------------------------------------------------------------- gnubg helpers
def gnubg_probs(board: np.ndarray, plies: int) -> np.ndarray:
    """gnubg-nn probabilities of a position (player on roll), exact when the game is over."""
    import gnubg_nn

    if not (board > 0).any() or not (board < 0).any():
        return terminal_probs(board)
    return np.array(gnubg_nn.probabilities(to_gnubg_board(board), plies), dtype=np.float64)


def after_play_equity(result: np.ndarray, plies: int) -> float:
    """Cubeless equity for the mover of a result (mover's view), by gnubg at ``plies``."""
    if not (result > 0).any():
        return float(cubeless_equity(terminal_probs(result)))
    return -float(cubeless_equity(gnubg_probs(flip_array(result), plies)))


def gnubg0_rank(children: np.ndarray) -> np.ndarray:
    """Children indices best first by gnubg-nn 0-ply."""
    eq = np.array([after_play_equity(c, 0) for c in children])
    return np.argsort(-eq, kind="stable")


def selfplay_positions(rng: np.random.Generator, n: int, source: str = "gnubg",
                       model: str | None = None) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """``n`` non-forced (position, dice) decisions, each kept with chance
    :data:`KEEP_PROBABILITY`, from games of ``source``: ``gnubg``, gnubg-nn 0-ply self-play
    (the bench's); ``tabla``, Tabla 1-ply self-play with ``model``; ``arena``, Tabla 1-ply
    (``model``) against gnubg-nn 0-ply, only Tabla's decisions kept, Tabla first in even games."""
    search = None
    if source != "gnubg":
        from engine.search import Search
        from scripts.evaluators import load_evaluator

        search = Search(load_evaluator(model))
    out: list[tuple[np.ndarray, tuple[int, int]]] = []
    games = 0
    while len(out) < n:
        board = Position.start().array()
        tabla_moves = source == "tabla" or (source == "arena" and games % 2 == 0)
        games += 1
        for ply in range(300):
            if ply == 0:
                a, b = rng.choice(np.arange(1, 7), size=2, replace=False)
            else:
                a, b = rng.integers(1, 7, size=2)
            d = (int(max(a, b)), int(min(a, b)))
            children = legal_results(board, *d)
            recorded = source == "gnubg" or tabla_moves
            if recorded and len(children) > 1 and rng.random() < KEEP_PROBABILITY:
                out.append((board.copy(), d))
                if len(out) == n:
                    break
            if search is not None and tabla_moves:
                r = search.rank_plays(board, d[0], d[1], ply=1)
                board = flip_array(r.boards[r.best]).copy()
            else:
                board = flip_array(children[gnubg0_rank(children)[0]]).copy()
            if source == "arena":
                tabla_moves = not tabla_moves
            if not (board > 0).any() or not (board < 0).any():
                break
    return out


# --------------------------------------------------------------------------- cube helpers
def money_cube_values(probs: np.ndarray, board: np.ndarray) -> tuple[float, float, float]:
    """(no double, double/take, double/pass) money equities, centred cube, per cube value,
    with GNU Backgammon's cube efficiencies (the reference does not move with Tabla's)."""
    x = float(gnubg_cube_efficiency(board)[0])
    nd = float(cubeful_equity(probs, MONEY, x))
    dt = float(cubeful_equity(probs, MONEY.doubled(), x))
    return nd, dt, 1.0


def cube_error(ref: tuple[float, float, float], doubles: bool, takes: bool) -> tuple[float, float]:
    """Equity lost (reference values) by a doubling action and by a response: (double, take)."""
    nd, dt, dp = ref
    response = min(dt, dp)
    proper = max(nd, response)
    return proper - (response if doubles else nd), (dt if takes else dp) - response


def report_class(board: np.ndarray) -> str:
    """The class a decision is reported under: bear-offs count as races."""
    c = int(classify(board)[0])
    return "race" if c in (BEAROFF1, BEAROFF2) else CLASS_NAMES[c]


def ci95_mEMG(losses: np.ndarray) -> float:
    """Half-width of the 95% interval of a mean loss, x1000, treating the decisions as
    independent (they are drawn from whole games, so the true interval is somewhat wider)."""
    return round(1000 * 1.96 * float(losses.std(ddof=1)) / float(np.sqrt(len(losses))), 2) if len(losses) > 1 else 0.0


def pip_rule(board: np.ndarray) -> tuple[bool, bool]:
    """Double with a lead >= 8% of own pips; take when the deficit is <= 12% of the taker's."""
    mine, theirs = Position.from_array(board).pips()
    doubles = theirs - mine >= 0.08 * mine
    takes = theirs - mine <= 0.12 * theirs
    return doubles, takes


def run(args: argparse.Namespace) -> int:
    from engine.api import Engine
    from engine.search import Search
    from eval import pubeval
    from scripts.bench_common import bench_evaluator

    from scripts.evaluators import limit_blas_threads

    limit_blas_threads(1)
    ev, _, described = bench_evaluator(args.model, not args.no_fallback, fallback="heuristic")
    search = Search(ev)
    engine = Engine(ev)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    decisions = selfplay_positions(rng, args.positions)
    players = ["tabla_ply1", "tabla_ply2", "gnubg_0ply", "pubeval"]
    play_loss = {p: [] for p in players}
    cube_players = ["tabla_ply0", "tabla_ply1", "gnubg_0ply", "pip_rule"]
    cube_loss = {p: [] for p in cube_players}
    take_loss = {p: [] for p in cube_players}
    classes: list[str] = []
    for board, (d1, d2) in decisions:
        classes.append(report_class(board))
        children = legal_results(board, d1, d2)
        keys = [c.tobytes() for c in children]
        choice = {}
        r1 = search.rank_plays(board, d1, d2, ply=1)
        choice["tabla_ply1"] = keys.index(r1.boards[r1.best].tobytes())
        r2 = search.rank_plays(board, d1, d2, ply=2)
        choice["tabla_ply2"] = keys.index(r2.boards[r2.best].tobytes())
        g_order = gnubg0_rank(children)
        choice["gnubg_0ply"] = int(g_order[0])
        choice["pubeval"] = keys.index(pubeval.choose(board, d1, d2).astype(np.int8).tobytes())
        graded = set(int(i) for i in g_order[:GRADE_TOP]) | set(choice.values())
        ref = {i: after_play_equity(children[i], 2) for i in graded}
        best = max(ref.values())
        for p in players:
            play_loss[p].append(best - ref[choice[p]])

        # money cube decision, centred cube, before the roll
        ref_cube = money_cube_values(gnubg_probs(board, 2), board)
        actions = {}
        for p, ply in (("tabla_ply0", 0), ("tabla_ply1", 1)):
            dec = engine.cube(Position.from_array(board), ply=ply).decision
            actions[p] = (dec.double, dec.take)
        g0 = money_cube_values(gnubg_probs(board, 0), board)
        actions["gnubg_0ply"] = (min(g0[1], g0[2]) > g0[0], g0[1] <= g0[2])
        actions["pip_rule"] = pip_rule(board)
        for p, (doubles, takes) in actions.items():
            de, te = cube_error(ref_cube, doubles, takes)
            cube_loss[p].append(de)
            take_loss[p].append(te)
    elapsed = time.perf_counter() - t0
    cls = np.array(classes)
    names = [c for c in ("contact", "crashed", "race") if (cls == c).any()]
    fig = {
        "evaluator": described,
        "seed": args.seed,
        "positions": len(decisions),
        "reference": "gnubg-nn 2-ply",
        "play_mEMG_lost_per_decision": {p: round(1000 * float(np.mean(v)), 2) for p, v in play_loss.items()},
        "play_blunder_rate_over_0.08": {p: round(float(np.mean(np.array(v) > 0.08)), 4) for p, v in play_loss.items()},
        "decisions_by_class": {c: int((cls == c).sum()) for c in names},
        "play_mEMG_by_class": {
            p: {c: round(1000 * float(np.mean(np.array(v)[cls == c])), 2) for c in names} for p, v in play_loss.items()
        },
        "play_mEMG_by_class_ci95": {
            p: {c: ci95_mEMG(np.array(v)[cls == c]) for c in names} for p, v in play_loss.items()
        },
        "cube_mEMG_lost_per_decision": {
            p: round(1000 * float(np.mean(np.array(v) + np.array(take_loss[p]))), 2) for p, v in cube_loss.items()
        },
        "cube_double_mEMG": {p: round(1000 * float(np.mean(v)), 2) for p, v in cube_loss.items()},
        "cube_take_mEMG": {p: round(1000 * float(np.mean(v)), 2) for p, v in take_loss.items()},
        "seconds": round(elapsed, 1),
    }
    if args.json:
        print(json.dumps(fig))
        return 0
    print(f"tabla bench accuracy: {len(decisions)} non-forced decisions from gnubg-nn 0-ply self-play "
          f"(seed {args.seed}); reference gnubg-nn 2-ply; evaluator: {described}")
    print("  plays: equity lost per decision x1000 (blunders > 0.08), and per class (± 95%, decisions as independent)")
    print(f"    {'':<12s} {'all':>8s}  {'':9s}" + "".join(f"{c:>9s}" for c in names))
    print(f"    {'decisions':<12s} {len(decisions):8d}  {'':9s}" + "".join(f"{fig['decisions_by_class'][c]:9d}" for c in names))
    for p in players:
        by = fig["play_mEMG_by_class"][p]
        print(f"    {p:<12s} {fig['play_mEMG_lost_per_decision'][p]:8.2f}  ({100 * fig['play_blunder_rate_over_0.08'][p]:5.1f}%)"
              + "".join(f"{by[c]:9.2f}" for c in names))
        ci = fig["play_mEMG_by_class_ci95"][p]
        print(f"    {'':<12s} {'':8s}  {'':9s}" + "".join(f"{'±' + format(ci[c], '.2f'):>9s}" for c in names))
    print("  money cube decisions (centred cube): equity lost per position x1000: total = double + take")
    for p in cube_players:
        print(f"    {p:<12s} {fig['cube_mEMG_lost_per_decision'][p]:8.2f} = {fig['cube_double_mEMG'][p]:.2f} + {fig['cube_take_mEMG'][p]:.2f}")
    print(f"  ({elapsed:.0f} s)")
    return 0
