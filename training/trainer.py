"""TD(λ) self-play training with worker processes sharing one set of class nets (Hogwild).

Each worker plays ``parallel_games`` games at once with the shared weights
(:class:`training.selfplay.SelfPlay`; every position valued by the net of its class,
:mod:`training.netset`), turns every finished game into λ-return targets (forward view
of TD(λ)) and takes Adam steps on the shared weights, each position teaching the net of
its class. The main process
shows progress, writes tensorboard scalars, checks strength against pubeval now and
then, and writes checkpoints atomically every few minutes.
"""
from __future__ import annotations

import logging
import math
import os
import queue
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.checkpoint import CheckpointError, default_bearoff, export_nets_npz, git_commit, load_checkpoint, save_checkpoint
from models.multinet import ClassNets
from models.network import NetConfig, NumpyNet
from training.config import TrainConfig
from training.netset import TorchNets, new_configs
from training.selfplay import SelfPlay, TargetBuffer

log = logging.getLogger(__name__)


def _worker(wid: int, nets: TorchNets, cfg: TrainConfig, counters, stop, ckpt_req, ckpt_q, opt_state) -> None:
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng([cfg.seed, wid])
    torch.manual_seed(cfg.seed * 1000 + wid)
    opts = {n: torch.optim.Adam(m.parameters(), lr=cfg.lr) for n, m in nets.modules.items()}
    for n, st in (opt_state or {}).items():
        try:
            opts[n].load_state_dict(st)
        except (ValueError, KeyError):
            log.warning("worker %d: optimizer state of net %s did not fit; starting fresh", wid, n)
    sp = SelfPlay(cfg.parallel_games, rng, cfg.max_game_plies, cfg.epsilon)

    buf = TargetBuffer()
    seen_req = ckpt_req.value
    parent = os.getppid()
    while not stop.is_set():
        if os.getppid() != parent:  # the main process was killed: do not run on orphaned
            return
        for boards, vals in sp.step(nets.evaluate):
            buf.add_game(boards, vals, cfg.lam)
            with counters["games"].get_lock():
                counters["games"].value += 1
            with counters["positions"].get_lock():
                counters["positions"].value += len(boards)
        for b, t in buf.batches(cfg.batch_size, rng):
            losses = nets.train_step(b, t, opts, cfg.lr_at(counters["games"].value))
            with counters["loss"].get_lock():
                for name, (loss, rows) in losses.items():
                    counters["loss"].value += loss * rows
                    counters["rows"].value += rows
                counters["steps"].value += 1
        if ckpt_req.value != seen_req:
            seen_req = ckpt_req.value
            ckpt_q.put((wid, seen_req, {n: o.state_dict() for n, o in opts.items()}))


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@dataclass
class TrainState:
    """What a run carries across checkpoints."""

    games: int = 0
    positions: int = 0
    wall_seconds: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)
    """One record per ``train`` call that trained this net: where it started and how."""


def strength_check(nets: dict[str, tuple[NetConfig, dict]], games: int, seed: int) -> dict[str, float]:
    """ppg of the current nets (1-ply) against pubeval and the race bot, duplicate dice.

    Returns the figures under their tensorboard names; {} when the duel module is missing.
    """
    try:
        from eval.duel import EvaluatorPlayer, PubevalPlayer, duel
    except ImportError:
        return {}
    me = EvaluatorPlayer(ClassNets({n: NumpyNet(c, w) for n, (c, w) in nets.items()}, bearoff=default_bearoff()))
    res = duel(me, PubevalPlayer(), games=games, seed=seed)
    out = {"eval/ppg_vs_pubeval": float(res.ppg), "eval/ppg_vs_pubeval_ci95": float(res.ci95)}
    try:
        from eval.bots import RaceBot
    except ImportError:
        return out
    res = duel(me, RaceBot(), games=max(2, games // 2), seed=seed + 1)
    out.update({"eval/ppg_vs_race_bot": float(res.ppg), "eval/ppg_vs_race_bot_ci95": float(res.ci95)})
    return out


def save_offline_stage(ck: dict[str, Any], nets: TorchNets, stage: dict[str, Any], out_dir: Path, t0: float,
                       eval_games: int, seed: int, labelled: int | None = None) -> None:
    """Write ``out_dir/latest.pt`` and ``latest.npz`` after a stage that trained ``nets`` from
    checkpoint ``ck`` in one go (the race and fit stages): ``ck`` with the nets, ``stage``
    appended to its stages, the wall time since ``t0`` added, a strength check of
    ``eval_games`` (none when 0), and ``labelled`` when given (else ``ck``'s)."""
    metrics = dict(ck.get("metrics", {}))
    if eval_games > 0:
        metrics.update(strength_check(nets.numpy_nets(), eval_games, seed=seed))
    wall = float(ck.get("wall_seconds", 0.0)) + time.time() - t0
    payload = {k: v for k, v in ck.items() if k not in ("format", "format_version", "git_commit", "optimizer")}
    payload.update({"nets": nets.state(), "wall_seconds": wall, "metrics": metrics,
                    "stages": list(ck.get("stages", [])) + [stage], "optimizer": []})
    if labelled is not None:
        payload["labelled"] = labelled
    save_checkpoint(out_dir / "latest.pt", payload)
    export_nets_npz(out_dir / "latest.npz", nets.numpy_nets(),
                    {"games": payload.get("games", 0), "labelled": payload.get("labelled", 0), "wall_seconds": wall,
                     "metrics": metrics})


def open_run(cfg: TrainConfig, resume: Path | None, stage: dict[str, Any] | None = None) -> tuple[TorchNets, TrainState, list[Any]]:
    """The nets, the run state and the saved optimizer states of a new or resumed run.

    A record of this run (where it starts, the nets, ``cfg``, the commit, plus ``stage``)
    is appended to ``state.stages``.
    """
    state = TrainState()
    opt_states: list[Any] = []
    bearoff = default_bearoff()
    nets = TorchNets(new_configs(cfg), bearoff)
    if resume is not None:
        ck = load_checkpoint(resume)
        if "nets" not in ck:
            raise CheckpointError(f"{resume} holds one tabla-v1 net from an older Tabla; the trainer trains class-net sets: start a new run")
        nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, bearoff)
        nets.load_state(ck["nets"])
        state.games = int(ck.get("games", 0))
        state.positions = int(ck.get("positions", 0))
        state.wall_seconds = float(ck.get("wall_seconds", 0.0))
        state.metrics = dict(ck.get("metrics", {}))
        state.history = list(ck.get("history", []))
        state.stages = list(ck.get("stages", []))
        if "widened_from" in ck and not any(st.get("widened_from") for st in state.stages):
            state.stages.append({"games": state.games, "widened_from": ck["widened_from"]})
        opt_states = list(ck.get("optimizer", []))
        log.info("resumed from %s at %d games", resume, state.games)
    state.stages.append({
        "games": state.games,
        "nets": {n: c.to_dict() for n, c in nets.configs.items()},
        "bearoff": bearoff is not None,
        "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": git_commit(),
        "train_config": cfg.to_dict(),
        **(stage or {}),
    })
    return nets, state, opt_states


def save_run(out_dir: Path, tag: str, nets: TorchNets, cfg: TrainConfig, state: TrainState, optimizer: list[Any]) -> None:
    """Write ``<tag>.pt`` (the training checkpoint) and ``<tag>.npz`` (its inference export)."""
    net_state = nets.state()
    payload = {
        "nets": net_state,
        "train_config": cfg.to_dict(),
        "optimizer": optimizer,
        "games": state.games,
        "positions": state.positions,
        "wall_seconds": state.wall_seconds,
        "metrics": state.metrics,
        "history": state.history,
        "stages": state.stages,
    }
    save_checkpoint(out_dir / f"{tag}.pt", payload)
    export_nets_npz(
        out_dir / f"{tag}.npz",
        {n: (nets.configs[n], {k: v.numpy() for k, v in d["weights"].items()}) for n, d in net_state.items()},
        {"games": state.games, "wall_seconds": state.wall_seconds, "metrics": state.metrics},
    )
    log.info("checkpoint %s at %d games", tag, state.games)


def record_progress(writer, cfg: TrainConfig, state: TrainState, gps: float, loss: float, bar) -> None:
    """Games/s, TD error and learning rate: to tensorboard, the metrics and the progress bar."""
    writer.add_scalar("train/games_per_s", gps, state.games)
    if not math.isnan(loss):
        writer.add_scalar("train/td_error", loss, state.games)
    writer.add_scalar("train/lr", cfg.lr_at(state.games), state.games)
    state.metrics["train/games_per_s"] = gps
    state.metrics["train/td_error"] = loss
    bar.set_postfix(progress_figures(state))


def progress_figures(state: TrainState) -> dict[str, str]:
    """What the progress bar shows beside the game count: games/s, TD error and the latest
    ppg against pubeval, each the last measured (``-`` before the first measurement; a
    resumed run starts with its checkpoint's figures)."""
    def fig(key: str, fmt: str) -> str:
        v = state.metrics.get(key)
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)

    return {"gps": fig("train/games_per_s", ".0f"), "td": fig("train/td_error", ".4f"),
            "ppg": fig("eval/ppg_vs_pubeval", "+.3f")}


def progress_bar(progress: bool, start_games: int, target_games: int | None):
    """The training progress bar on standard error, counting games from ``start_games`` (a
    resumed run's count); off without ``progress`` or when standard error is not a terminal."""
    from tqdm import tqdm

    return tqdm(total=target_games, initial=start_games, unit="game", file=sys.stderr,
                disable=not progress or not sys.stderr.isatty(), dynamic_ncols=True)


def record_strength(nets: TorchNets, cfg: TrainConfig, state: TrainState, writer) -> None:
    """A strength check of the current nets, written to tensorboard, the metrics and the history."""
    note_strength(strength_check(nets.numpy_nets(), cfg.eval_games, seed=state.games), state, writer)


def note_strength(m: dict[str, float], state: TrainState, writer, games: int | None = None,
                  wall_seconds: float | None = None) -> None:
    """Record the figures ``m`` of a strength check of the nets of ``games`` games (default: now)."""
    games = state.games if games is None else games
    wall_seconds = state.wall_seconds if wall_seconds is None else wall_seconds
    for k, v in m.items():
        writer.add_scalar(k, v, games)
    state.metrics.update(m)
    if m:
        state.history.append({"games": games, "wall_seconds": wall_seconds, **m})
        log.info("strength at %d games: %s", games, m)


def train(
    cfg: TrainConfig,
    out_dir: Path,
    games: int | None = None,
    minutes: float | None = None,
    resume: Path | None = None,
    progress: bool = True,
) -> TrainState:
    """Run self-play training until ``games`` more games or ``minutes`` have passed."""
    import torch.multiprocessing as mp
    from torch.utils.tensorboard import SummaryWriter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nets, state, opt_states = open_run(cfg, resume)
    nets.share_memory()

    ctx = mp.get_context("fork")
    counters = {
        "games": ctx.Value("q", state.games),
        "positions": ctx.Value("q", state.positions),
        "loss": ctx.Value("d", 0.0),
        "rows": ctx.Value("q", 0),
        "steps": ctx.Value("q", 0),
    }
    stop = ctx.Event()
    ckpt_req = ctx.Value("q", 0)
    ckpt_q = ctx.Queue()
    procs = []
    for w in range(cfg.workers):
        st = opt_states[w] if w < len(opt_states) else None
        p = ctx.Process(target=_worker, args=(w, nets, cfg, counters, stop, ckpt_req, ckpt_q, st), daemon=True)
        p.start()
        procs.append(p)

    writer = SummaryWriter(log_dir=str(out_dir / "tb"))
    start_games = state.games
    target_games = None if games is None else start_games + games
    t0 = time.time()
    wall0 = state.wall_seconds
    last_ckpt = last_eval = t0
    last_log_t, last_log_games = t0, start_games
    last_line = t0
    bar = progress_bar(progress, start_games, target_games)
    bar.set_postfix(progress_figures(state))

    def checkpoint(tag: str = "latest") -> None:
        ckpt_req.value += 1
        req = ckpt_req.value
        got: dict[int, Any] = {}
        deadline = time.time() + 60
        while len(got) < sum(p.is_alive() for p in procs) and time.time() < deadline:
            try:
                wid, r, sd = ckpt_q.get(timeout=1.0)
                if r == req:
                    got[wid] = sd
            except queue.Empty:
                pass
        save_run(out_dir, tag, nets, cfg, state, [got.get(w) for w in range(cfg.workers)])

    # SIGTERM (kill, a scheduler, the end of a session) stops as Ctrl-C does: one final
    # checkpoint. A job started in the background with nohup ignores SIGINT, so this is
    # the way to end it cleanly. Installed after the workers start: they keep the default.
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        while True:
            time.sleep(1.0)
            now = time.time()
            state.games = counters["games"].value
            state.positions = counters["positions"].value
            state.wall_seconds = wall0 + (now - t0)
            bar.update(state.games - bar.n)
            if now - last_log_t >= 10:
                gps = (state.games - last_log_games) / (now - last_log_t)
                with counters["loss"].get_lock():
                    rows = counters["rows"].value
                    loss = counters["loss"].value / rows if rows else float("nan")
                    counters["loss"].value = 0.0
                    counters["rows"].value = 0
                    counters["steps"].value = 0
                record_progress(writer, cfg, state, gps, loss, bar)
                last_log_t, last_log_games = now, state.games
                if progress and bar.disable and now - last_line >= 60:  # no terminal: a log line a minute
                    log.info("%d games, %s", state.games, " ".join(f"{k}={v}" for k, v in progress_figures(state).items()))
                    last_line = now
            if cfg.eval_minutes > 0 and now - last_eval >= cfg.eval_minutes * 60:
                record_strength(nets, cfg, state, writer)
                last_eval = time.time()
            if now - last_ckpt >= cfg.checkpoint_minutes * 60:
                checkpoint()
                last_ckpt = time.time()
            if target_games is not None and state.games >= target_games:
                break
            if minutes is not None and now - t0 >= minutes * 60:
                break
            dead = [p.exitcode for p in procs if not p.is_alive()]
            if dead:
                raise RuntimeError(f"a training worker died (exit code {dead[0]}); see the log above")
    except KeyboardInterrupt:
        log.warning("interrupted: writing a final checkpoint")
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        state.games = counters["games"].value
        state.positions = counters["positions"].value
        state.wall_seconds = wall0 + (time.time() - t0)
        try:
            checkpoint()
        finally:
            stop.set()
            for p in procs:
                p.join(timeout=10)
                if p.is_alive():
                    p.terminate()
            bar.close()
            writer.close()
    return state
