"""``tabla bench search``: play decisions per second at ply 1 and 2 beside gnubg-nn.

On a fixed seeded set of contact positions (from random-play games, each with a random
roll) it times, in one run:

* Tabla ply 1 through ``tabla engine`` (a subprocess; one ``best`` request at a time,
  each reply read before the next request: what a client sees);
* the same, with the client and the engine on one CPU (the engine started with
  ``--spin-us 0``): every wake-up stays on that CPU, the protocol's own cost;
* the same requests pipelined (written ahead by a thread while replies are read);
* the same JSON lines answered in-process (:meth:`engine.protocol.EngineSession.reply_line`:
  JSON text in, JSON text out) and the same queries through the Python API (the Position ID
  decoded by :func:`engine.ids.position_from_id`, the decoder the protocol uses, then
  :meth:`engine.api.Engine.best`): the JSON layer's share (parsing, checking and
  dispatching the request, building and serializing the reply) is
  ``(session - API) / session``; the pipe's (the JSON layer plus the operating system's
  pipe and process wake-ups) is ``(pipe - API) / pipe``;
* Tabla ply 2 in-process;
* gnubg-nn ``best_move(..., n=0)`` and ``n=1`` (its 0-ply and 1-ply: our ply 1 and 2).

Ratios: ply-1 pipe / gnubg 0-ply, ply-1 in-process / gnubg 0-ply, ply-2 / gnubg 1-ply.
The pipe ratio is also given round by round: on a virtual machine a process wake-up
across cores costs from tens to hundreds of microseconds, and that cost, paid once per
request by a client that blocks on the reply, varies from minute to minute.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

from engine.position import Position, to_gnubg_board
from engine.randpos import random_game_positions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positions", type=int, default=300, help="positions for the ply-1 and gnubg 0-ply timings")
    parser.add_argument("--ply2-positions", type=int, default=100, help="positions for ply 2 and gnubg 1-ply")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of fresh positions (totals are summed)")
    parser.add_argument("--warmup", type=int, default=100,
                        help="positions of their own played first by every contender, untimed (loads, compiles, caches)")
    parser.add_argument("--model", default=None, help="model file; default: the shipped model")
    parser.add_argument(
        "--no-fallback",
        action="store_true",
        help="fail when the model is missing instead of timing a random-weight net of the same shape",
    )


def contact_set(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` seeded contact positions (player on roll) with a roll each."""
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < n:
        for b in random_game_positions(rng, 4 * n):
            if not Position.from_array(b).is_race() and not Position.from_array(b).is_game_over():
                boards.append(b)
                if len(boards) == n:
                    break
    dice = rng.integers(1, 7, size=(n, 2))
    return np.array(boards, np.int8), dice


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


class PipeEngine:
    """A ``tabla engine`` subprocess driven through its pipes."""

    def __init__(self, model: str | None, cpu: int | None = None) -> None:
        """With ``cpu``, the engine runs on that CPU only and without polling (``--spin-us
        0``): a client on the same CPU then hands it the processor directly."""
        cmd = [sys.executable, "-m", "scripts.tabla", "engine"]
        if model:
            cmd += ["--model", model]
        if cpu is not None:
            cmd += ["--spin-us", "0"]
        pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root, text=True, bufsize=1,
                                     preexec_fn=pin)

    def sequential(self, reqs: list[str]) -> tuple[float, int]:
        """Seconds for one request after another, each reply read before the next request."""
        failures = 0
        t = time.perf_counter()
        for r in reqs:
            self.proc.stdin.write(r + "\n")
            self.proc.stdin.flush()
            failures += not json.loads(self.proc.stdout.readline()).get("ok")
        return time.perf_counter() - t, failures

    def pipelined(self, reqs: list[str]) -> tuple[float, int]:
        """Seconds for all requests written by a thread while the replies are read."""
        def feed() -> None:
            for r in reqs:
                self.proc.stdin.write(r + "\n")
            self.proc.stdin.flush()

        t = time.perf_counter()
        th = threading.Thread(target=feed)
        th.start()
        failures = sum(not json.loads(self.proc.stdout.readline()).get("ok") for _ in reqs)
        th.join()
        return time.perf_counter() - t, failures

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def requests(boards: np.ndarray, dice: np.ndarray) -> list[str]:
    from engine.ids import position_id

    return [
        json.dumps({"id": i, "cmd": "best", "position_id": position_id(Position.from_array(b)), "dice": [int(d[0]), int(d[1])], "ply": 1})
        for i, (b, d) in enumerate(zip(boards, dice))
    ]


def run(args: argparse.Namespace) -> int:
    import gnubg_nn

    from scripts.bench_common import bench_evaluator
    from engine.api import Engine
    from engine.protocol import EngineSession

    from engine.ids import position_from_id
    from scripts.evaluators import limit_blas_threads

    limit_blas_threads(1)
    ev, model_path, described = bench_evaluator(args.model, not args.no_fallback)
    engine = Engine(ev)
    n1, n2, rounds = args.positions, args.ply2_positions, args.rounds
    # disjoint sets per round and per depth: gnubg-nn caches evaluations, so it must never
    # see a position twice
    warm_n = max(1, args.warmup)
    boards, dice = contact_set(args.seed, rounds * (n1 + n2) + warm_n)
    all_reqs = requests(boards, dice)
    pids = [json.loads(r)["position_id"] for r in all_reqs]
    sets = []
    for r in range(rounds):
        a = r * (n1 + n2)
        sets.append((slice(a, a + n1), slice(a + n1, a + n1 + n2)))
    session = EngineSession(lambda: ev)
    pipe = PipeEngine(model_path)
    # the same engine with the client on one CPU: no wake-up crosses CPUs
    same_cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    pipe_one = PipeEngine(model_path, same_cpu) if same_cpu is not None else None
    # warm up on positions of their own (never timed): numba's compiled functions, every
    # class net, the bearoff and race tables, the engine processes, gnubg-nn's weights
    warm = all_reqs[-warm_n:]
    deep = max(1, warm_n // 10)  # the first tenth at ply 2 / gnubg 1-ply
    for k in range(len(pids) - warm_n, len(pids)):
        roll = (int(dice[k, 0]), int(dice[k, 1]))
        at_2 = k - (len(pids) - warm_n) < deep
        engine.best(position_from_id(pids[k]), roll, ply=2 if at_2 else 1)
        session.reply_line(all_reqs[k])
        gnubg_nn.best_move(to_gnubg_board(boards[k]), roll[0], roll[1], n=1 if at_2 else 0)
    pipe.sequential(warm)
    if pipe_one is not None:
        pipe_one.sequential(warm)

    clock = time.perf_counter
    # Each position is timed by the in-process contenders back to back, so that load
    # changes on a shared machine hit all of them alike; totals are summed over the rounds.
    tot = dict.fromkeys(("ply1", "session", "pipe", "pipe_one_cpu", "pipelined", "g0", "ply2", "g1"), 0.0)
    failures = 0
    round_ratios: list[float] = []  # ply-1 pipe / gnubg 0-ply, round by round (the spread)
    inproc_ratios: list[float] = []  # ply-1 in-process / gnubg 0-ply, round by round
    for s1, s2 in sets:
        g0_before, ply1_before = tot["g0"], tot["ply1"]
        reqs = all_reqs[s1]
        gb1 = [to_gnubg_board(b) for b in boards[s1]]
        for i, (pid, d, r, g) in enumerate(zip(pids[s1], dice[s1], reqs, gb1)):
            roll = (int(d[0]), int(d[1]))
            # alternate who goes first: the second call finds warm caches
            if i % 2 == 0:
                t0 = clock()
                engine.best(position_from_id(pid), roll, ply=1)
                t1 = clock()
                session.reply_line(r)
                t2 = clock()
                tot["ply1"] += t1 - t0
                tot["session"] += t2 - t1
            else:
                t0 = clock()
                session.reply_line(r)
                t1 = clock()
                engine.best(position_from_id(pid), roll, ply=1)
                t2 = clock()
                tot["session"] += t1 - t0
                tot["ply1"] += t2 - t1
            t3 = clock()
            gnubg_nn.best_move(g, roll[0], roll[1], n=0)
            tot["g0"] += clock() - t3
        inproc_ratios.append((tot["g0"] - g0_before) / (tot["ply1"] - ply1_before))
        # the pipe as a client sees it: one request after another, engine kept busy
        t, f = pipe.sequential(reqs)
        tot["pipe"] += t
        failures += f
        round_ratios.append((tot["g0"] - g0_before) / t)
        if pipe_one is not None:
            mask = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {same_cpu})
            try:
                t, f = pipe_one.sequential(reqs)
            finally:
                os.sched_setaffinity(0, mask)
            tot["pipe_one_cpu"] += t
            failures += f
        t, f = pipe.pipelined(reqs)
        tot["pipelined"] += t
        failures += f
        gb2 = [to_gnubg_board(b) for b in boards[s2]]
        for pid, d, g in zip(pids[s2], dice[s2], gb2):
            roll = (int(d[0]), int(d[1]))
            t0 = clock()
            engine.best(position_from_id(pid), roll, ply=2)
            t1 = clock()
            gnubg_nn.best_move(g, roll[0], roll[1], n=1)
            t2 = clock()
            tot["ply2"] += t1 - t0
            tot["g1"] += t2 - t1
    pipe.close()
    if pipe_one is not None:
        pipe_one.close()
    n1, n2 = n1 * rounds, n2 * rounds
    t_ply1, t_session, t_pipe, t_pipelined = tot["ply1"], tot["session"], tot["pipe"], tot["pipelined"]
    t_ply2, t_g0, t_g1 = tot["ply2"], tot["g0"], tot["g1"]

    fig = {
        "evaluator": described,
        "seed": args.seed,
        "positions_ply1": n1,
        "positions_ply2": n2,
        "rounds": args.rounds,
        "tabla_ply1_pipe_per_s": _rate(n1, t_pipe),
        "tabla_ply1_pipe_pipelined_per_s": _rate(n1, t_pipelined),
        "tabla_ply1_pipe_one_cpu_per_s": _rate(n1, tot["pipe_one_cpu"]) if pipe_one is not None else None,
        "tabla_ply1_session_inprocess_per_s": _rate(n1, t_session),
        "tabla_ply1_inprocess_per_s": _rate(n1, t_ply1),
        "tabla_ply2_per_s": _rate(n2, t_ply2),
        "gnubg_0ply_per_s": _rate(n1, t_g0),
        "gnubg_1ply_per_s": _rate(n2, t_g1),
        "pipe_failures": failures,
    }
    fig["json_layer_share_of_ply1"] = (t_session - t_ply1) / t_session
    fig["pipe_overhead_share_of_ply1"] = (t_pipe - t_ply1) / t_pipe
    fig["ratio_ply1_pipelined_vs_gnubg0"] = fig["tabla_ply1_pipe_pipelined_per_s"] / fig["gnubg_0ply_per_s"]
    fig["ratio_ply1_pipe_vs_gnubg0"] = fig["tabla_ply1_pipe_per_s"] / fig["gnubg_0ply_per_s"]
    fig["ratio_ply1_pipe_vs_gnubg0_by_round"] = [round(r, 4) for r in round_ratios]
    if pipe_one is not None:
        fig["ratio_ply1_pipe_one_cpu_vs_gnubg0"] = fig["tabla_ply1_pipe_one_cpu_per_s"] / fig["gnubg_0ply_per_s"]
    fig["ratio_ply1_inprocess_vs_gnubg0"] = fig["tabla_ply1_inprocess_per_s"] / fig["gnubg_0ply_per_s"]
    fig["ratio_ply1_inprocess_vs_gnubg0_by_round"] = [round(r, 4) for r in inproc_ratios]
    fig["ratio_ply2_vs_gnubg1"] = fig["tabla_ply2_per_s"] / fig["gnubg_1ply_per_s"]
    if args.json:
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in fig.items()}))
        return 0
    print(f"tabla bench search: {n1} (ply 1) + {n2} (ply 2) fresh contact positions, {rounds} rounds"
          f" (seed {args.seed}) after {warm_n} warm-up positions, evaluator: {described}")
    print(f"  Tabla ply 1, tabla engine pipe : {fig['tabla_ply1_pipe_per_s']:9.1f} decisions/s   (one request at a time;"
          f" pipe + JSON {100 * fig['pipe_overhead_share_of_ply1']:.1f}% of the time)")
    if pipe_one is not None:
        print(f"  Tabla ply 1, pipe, one CPU     : {fig['tabla_ply1_pipe_one_cpu_per_s']:9.1f} decisions/s"
              f"   (client and engine on CPU {same_cpu}, --spin-us 0)")
    print(f"  Tabla ply 1, pipe, pipelined   : {fig['tabla_ply1_pipe_pipelined_per_s']:9.1f} decisions/s   (requests written ahead)")
    print(f"  Tabla ply 1, JSON in-process   : {fig['tabla_ply1_session_inprocess_per_s']:9.1f} decisions/s"
          f"   (JSON layer {100 * fig['json_layer_share_of_ply1']:.1f}% of a 1-ply best)")
    print(f"  Tabla ply 1, in-process API    : {fig['tabla_ply1_inprocess_per_s']:9.1f} decisions/s")
    print(f"  Tabla ply 2, in-process        : {fig['tabla_ply2_per_s']:9.1f} decisions/s")
    print(f"  gnubg-nn best_move n=0         : {fig['gnubg_0ply_per_s']:9.1f} decisions/s")
    print(f"  gnubg-nn best_move n=1         : {fig['gnubg_1ply_per_s']:9.1f} decisions/s")
    by_round = ", ".join(f"{r:.3f}" for r in round_ratios)
    print(f"  ratio ply-1 pipe / gnubg 0-ply       : {fig['ratio_ply1_pipe_vs_gnubg0']:.3f}  (required >= 0.3; by round: {by_round})")
    if pipe_one is not None:
        print(f"  ratio ply-1 pipe, one CPU / gnubg 0-ply : {fig['ratio_ply1_pipe_one_cpu_vs_gnubg0']:.3f}")
    print(f"  ratio ply-1 pipelined / gnubg 0-ply  : {fig['ratio_ply1_pipelined_vs_gnubg0']:.3f}")
    by_round_in = ", ".join(f"{r:.3f}" for r in inproc_ratios)
    print(f"  ratio ply-1 in-process / gnubg 0-ply : {fig['ratio_ply1_inprocess_vs_gnubg0']:.3f}  (by round: {by_round_in})")
    print(f"  ratio ply-2 / gnubg 1-ply            : {fig['ratio_ply2_vs_gnubg1']:.3f}  (required >= 1.0)")
    if failures:
        print(f"  WARNING: {failures} pipe requests failed")
    return 0
