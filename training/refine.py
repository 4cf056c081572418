"""Refinement past the TD plateau: supervised learning on Tabla's own deeper search.

See :class:`training.config.RefineConfig` for the rounds of generation and training.
Every label comes from Tabla's own nets: searched one ply deeper
(:func:`training.labels.ply1_probs`), played out in self-play (:mod:`training.returns`)
or rolled out (:mod:`training.rollout_labels`); no outside engine is consulted. The run starts
from a trained checkpoint, writes checkpoints of the same format (``latest.pt`` /
``latest.npz``) with the stage recorded, logs to tensorboard and checks strength
against pubeval as the TD trainer does.
"""
from __future__ import annotations

import logging
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np

from engine.values import mover_equity
from models.checkpoint import CheckpointError, default_bearoff, export_nets_npz, git_commit, load_checkpoint, save_checkpoint
from models.network import NetConfig
from training.config import GROUPED_LABELS, RefineConfig
from training.label_store import replay_labels, write_labels
from training.labels import ply1_probs
from training.netset import TorchNets
from engine.classes import classify
from models.multinet import NET_FOR_CLASS
from training.returns import OnePlyGames, ReturnGenerator
from training.rollout_labels import RolloutLabelGenerator
from training.trainer import TrainState, _raise_interrupt, strength_check

log = logging.getLogger(__name__)


class LabelBuffer:
    """The most recent labelled positions (a ring buffer), each with its decision: a number
    shared by the labelled results of one roll, unique otherwise."""

    def __init__(self, size: int) -> None:
        self.boards = np.zeros((size, 26), np.int8)
        self.targets = np.zeros((size, 5), np.float32)
        self.groups = np.zeros(size, np.int64)
        self.size = size
        self.count = 0  # labelled so far (also the write position modulo size)

    def add(self, boards: np.ndarray, targets: np.ndarray, groups: np.ndarray | None = None) -> None:
        """Append labels; ``groups`` are their decisions (None: each its own)."""
        if groups is None:
            groups = -1 - (self.count + np.arange(len(boards)))  # negative: never a decision's number
        for b, t, g in zip(boards, targets, groups):
            i = self.count % self.size
            self.boards[i] = b
            self.targets[i] = t
            self.groups[i] = g
            self.count += 1

    def sample(self, rng: np.random.Generator, n: int, span: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` labels drawn at random, with their decisions; with ``span`` > 0 each drawn
        label brings the labels of its decision within ``span`` places of it (a decision's
        labels are stored together), each label once."""
        filled = min(self.count, self.size)
        idx = rng.integers(0, filled, size=n)
        if span > 0:
            near = (idx[:, None] + np.arange(-span, span + 1)[None, :]) % filled
            idx = np.unique(near[self.groups[near] == self.groups[idx][:, None]])
        return self.boards[idx], self.targets[idx], self.groups[idx]


class Generator(OnePlyGames):
    """Self-play games at 1 ply that label disputed decisions with the deeper search."""

    def __init__(self, cfg: RefineConfig, rng: np.random.Generator) -> None:
        super().__init__(cfg, rng)
        self.decisions = 0
        self.disputed = 0
        self.explored = 0  # plies that played the second-best result
        self.deeper = 0  # the returns generator's count of 2-ply plays; this one plays at 1 ply

    def step(self, evaluate) -> tuple[np.ndarray, np.ndarray]:
        """Advance every game one ply; return the labelled positions (opponent on roll)."""
        boards, targets, _ = self.step_grouped(evaluate)
        return boards, targets

    def step_grouped(self, evaluate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`step`, with each label's decision: a number shared by the labelled
        results of one roll, counted from 0 over the generator's life."""
        cfg, rng, n = self.cfg, self.rng, self.cfg.parallel_games
        choice, offsets = self.roll(evaluate)
        opp = choice.opp_probs
        cand_rows, cand_game = [], []
        chosen = np.empty(n, np.int64)
        for g in range(n):
            a, b = offsets[g], offsets[g + 1]
            order = choice.ranked(a, b)  # order[0] == choice.index[g]
            pick = order[1] if len(order) > 1 and rng.random() < cfg.epsilon else choice.index[g]
            self.explored += int(pick != choice.index[g])
            chosen[g] = pick
            if len(order) > 1:
                top = order[: cfg.candidates]
                cand_rows.extend(top.tolist())
                cand_game.extend([g] * len(top))
        labels_b, labels_t, labels_g = [], [], []
        if cand_rows:
            rows = np.array(cand_rows)
            games = np.array(cand_game)
            live = choice.points[rows] == 0
            deep = np.empty((len(rows), 5), np.float32)
            deep[~live] = opp[rows[~live]]
            deep[live] = ply1_probs(evaluate, choice.opp_boards[rows[live]])
            deep_eq = mover_equity(deep)
            for g in np.unique(games):
                sel = np.flatnonzero(games == g)
                self.decisions += 1
                disputed = int(np.argmax(deep_eq[sel])) != 0
                if disputed:
                    self.disputed += 1
                    keep = sel[live[sel]]
                elif rng.random() < cfg.keep_agreed and live[sel[0]]:
                    keep = sel[:1]
                else:
                    continue
                labels_b.append(choice.opp_boards[rows[keep]])
                labels_t.append(deep[keep])
                labels_g.append(np.full(len(keep), self.decisions - 1, np.int64))
        self.advance(choice, chosen)
        if not labels_b:
            return np.zeros((0, 26), np.int8), np.zeros((0, 5), np.float32), np.zeros(0, np.int64)
        return np.concatenate(labels_b), np.concatenate(labels_t), np.concatenate(labels_g)


LABEL_KINDS = ("search", "returns", "rollouts")


def make_generator(cfg: RefineConfig, rng: np.random.Generator) -> "Generator | ReturnGenerator | RolloutLabelGenerator":
    """The label generator of ``cfg.labels``."""
    if cfg.labels == "search":
        return Generator(cfg, rng)
    if cfg.labels == "returns":
        return ReturnGenerator(cfg, rng)
    if cfg.labels == "rollouts":
        return RolloutLabelGenerator(cfg, rng)
    raise ValueError(f"labels must be one of {', '.join(LABEL_KINDS)}, got {cfg.labels!r}")


def scheduled_lr(cfg: RefineConfig, elapsed: float, total: float) -> float:
    """The learning rate after ``elapsed`` of ``total`` (seconds, labels, or any share of
    the run): ``cfg.lr`` falling linearly to ``cfg.lr_end`` (constant when ``lr_end`` is None)."""
    if cfg.lr_end is None or total <= 0:
        return cfg.lr
    f = min(1.0, max(0.0, elapsed / total))
    return cfg.lr + f * (cfg.lr_end - cfg.lr)


def valued_by(boards: np.ndarray, nets: tuple[str, ...]) -> np.ndarray:
    """Which of ``boards`` have a class valued by one of ``nets`` (a boolean mask)."""
    if len(boards) == 0:
        return np.zeros(0, bool)
    classes = [c for c, name in NET_FOR_CLASS.items() if name in nets]
    return np.isin(classify(boards), classes)


def _generate(wid: int, nets: TorchNets, cfg: RefineConfig, seed: int, out_q, stop) -> None:
    """Worker: label positions with the shared nets until ``stop``; send them in chunks."""
    import os

    import torch

    torch.set_num_threads(1)
    parent = os.getppid()
    gen = make_generator(cfg, np.random.default_rng([cfg.seed, seed, wid]))
    grouped = cfg.labels in GROUPED_LABELS
    while not stop.is_set() and os.getppid() == parent:
        bs, ts, gs = [], [], []
        d0, s0, e0, r0, p0 = gen.decisions, gen.disputed, gen.explored, gen.pool.restarts, gen.deeper
        for _ in range(cfg.steps_per_round):
            if grouped:
                b, t, g = gen.step_grouped(nets.evaluate)
                gs.append(g + (wid << 40))  # the workers' decisions never share a number
            else:
                b, t = gen.step(nets.evaluate)
            bs.append(b)
            ts.append(t)
        b, t = np.concatenate(bs), np.concatenate(ts)
        keep = valued_by(b, cfg.nets)
        g = np.concatenate(gs)[keep] if grouped else None
        out_q.put((b[keep], t[keep], g, gen.decisions - d0, gen.disputed - s0, gen.explored - e0,
                   gen.pool.restarts - r0, gen.deeper - p0))


def refine(cfg: RefineConfig, resume: Path, out_dir: Path, minutes: float | None, progress: bool = True,
           max_labels: int | None = None) -> TrainState:
    """Refine the nets of checkpoint ``resume`` for ``minutes``, or until the run has
    ``max_labels`` labels of its own, whichever comes first (at least one of them given);
    checkpoints in ``out_dir``. The learning-rate schedule follows whichever limit is
    further along."""
    import queue

    if minutes is None and max_labels is None:
        raise ValueError("refine needs minutes or max_labels")

    import torch
    import torch.multiprocessing as mp
    from torch.utils.tensorboard import SummaryWriter

    out_dir = Path(out_dir)
    ck = load_checkpoint(resume)
    rb, rt, rg = replay_labels(cfg.replay)  # before anything is written: a bad file stops the run here
    out_dir.mkdir(parents=True, exist_ok=True)
    if "nets" not in ck:
        raise CheckpointError(f"{resume} holds one tabla-v1 net; refinement works on class-net sets")
    bearoff = default_bearoff()
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, bearoff)
    nets.load_state(ck["nets"])
    nets.share_memory()
    state = TrainState(
        games=int(ck.get("games", 0)), positions=int(ck.get("positions", 0)), wall_seconds=float(ck.get("wall_seconds", 0.0)),
        metrics=dict(ck.get("metrics", {})), history=list(ck.get("history", [])), stages=list(ck.get("stages", [])),
    )
    labelled0 = int(ck.get("labelled", 0))
    stage = {"stage": "refine", "games": state.games, "labelled": labelled0, "bearoff": bearoff is not None,
             "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "commit": git_commit(), "refine_config": cfg.to_dict(),
             "labelled_here": 0, "decisions": 0, "disputed": 0, "explored": 0, "restarts": 0, "deeper": 0,
             "limits": {"minutes": minutes, "labels": max_labels}}
    state.stages.append(stage)
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng([cfg.seed, labelled0])
    try:
        opts = {n: torch.optim.Adam(nets.new_input_params(n) if cfg.new_inputs_only and n in cfg.nets else m.parameters(),
                                    lr=cfg.lr) for n, m in nets.modules.items()}
    except ValueError as exc:
        raise CheckpointError(f"{resume}: {exc}") from None
    buf = LabelBuffer(cfg.buffer_positions)
    if len(rb):
        valued = np.flatnonzero(valued_by(rb, cfg.nets))
        keep = valued[-cfg.buffer_positions:]  # the most recent the buffer holds
        buf.add(rb[keep], rt[keep], rg[keep])
        log.info("replaying %d labels of %s (%d of classes not refined left out)", len(keep),
                 ", ".join(cfg.replay), len(rb) - len(valued))
    replayed = buf.count  # the run's own labels are those after these

    def own() -> int:
        """The run's own labels so far."""
        return buf.count - replayed

    stage["replayed"] = replayed
    stored = [replayed]  # the buffer count up to which labels are in the store
    ctx = mp.get_context("fork")
    out_q = ctx.Queue(maxsize=64)
    stop = ctx.Event()
    procs = [ctx.Process(target=_generate, args=(w, nets, cfg, labelled0, out_q, stop), daemon=True) for w in range(cfg.workers)]
    for p in procs:
        p.start()
    writer = SummaryWriter(log_dir=str(out_dir / "tb"))
    t0 = time.time()
    wall0 = state.wall_seconds

    def done_share() -> float:
        """How far the run is towards its nearer limit (1 = done)."""
        shares = [(time.time() - t0) / (minutes * 60)] if minutes is not None else []
        if max_labels is not None:
            shares.append(own() / max_labels)
        return max(shares)

    last_ckpt = last_eval = last_log = t0
    losses: dict[str, list[float]] = {}
    owed = 0.0  # gradient steps earned by new labels and not yet taken
    grouped = cfg.labels in GROUPED_LABELS  # labels by decision; only these count disputed ones
    # the rank term needs a decision's labels together: they lie within its size of each other
    size = cfg.candidates + (cfg.rollout_others if cfg.labels == "rollouts" else 0)
    span = size - 1 if grouped and cfg.rank_weight > 0 else 0

    def store() -> None:
        """Append the labels since the last store to ``cfg.label_store`` (those the ring
        buffer still holds: it stores at each checkpoint and whenever half the buffer is new)."""
        first = max(stored[0], buf.count - buf.size)
        if cfg.label_store is None or buf.count <= first:
            return
        idx = np.arange(first, buf.count) % buf.size
        path = write_labels(Path(cfg.label_store), buf.boards[idx], buf.targets[idx], buf.groups[idx], cfg.labels,
                            labelled0 + first - replayed)
        log.info("stored %d labels in %s", len(idx), path)
        stored[0] = buf.count

    def checkpoint() -> None:
        state.wall_seconds = wall0 + (time.time() - t0)
        stage["labelled_here"] = own()
        store()
        net_state = nets.state()
        payload: dict[str, Any] = {
            "nets": net_state, "games": state.games, "positions": state.positions, "labelled": labelled0 + own(),
            "wall_seconds": state.wall_seconds, "metrics": state.metrics, "history": state.history, "stages": state.stages,
            "train_config": ck.get("train_config", {}), "refine_config": cfg.to_dict(), "optimizer": [],
        }
        save_checkpoint(out_dir / "latest.pt", payload)
        export_nets_npz(out_dir / "latest.npz",
                        {n: (nets.configs[n], {k: v.numpy() for k, v in d["weights"].items()}) for n, d in net_state.items()},
                        {"games": state.games, "labelled": labelled0 + own(), "wall_seconds": state.wall_seconds,
                         "metrics": state.metrics})
        log.info("checkpoint at %d labelled positions (%d decisions, %d disputed, %d explored, %d restarts, %d played "
                 "otherwise at 2 ply)", own(), stage["decisions"], stage["disputed"], stage["explored"],
                 stage["restarts"], stage["deeper"])

    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        while done_share() < 1.0:
            try:
                b, t, g, dec, dis, exp, rst, dpr = out_q.get(timeout=1.0)
                buf.add(b, t, g)
                stage["decisions"] += dec
                stage["disputed"] += dis
                stage["explored"] += exp
                stage["restarts"] += rst
                stage["deeper"] += dpr
                owed += cfg.reuse * len(b) / cfg.batch_size  # replayed labels earn no steps
                if cfg.label_store is not None and buf.count - stored[0] >= buf.size // 2:  # before the ring overwrites them
                    store()
            except queue.Empty:
                if not all(p.is_alive() for p in procs):
                    raise RuntimeError("a label worker died; see the log above") from None
            while owed >= 1 and buf.count >= cfg.batch_size:
                owed -= 1
                # with whole decisions (span > 0), about batch_size labels from batch_size / (span + 1) draws
                bb, tt, gg = buf.sample(rng, max(1, cfg.batch_size // (span + 1)), span)
                lr = scheduled_lr(cfg, done_share(), 1.0)
                for name, (loss, rows) in nets.train_step(bb, tt, opts, lr, gg, cfg.rank_weight).items():
                    losses.setdefault(name, []).append(loss)
            now = time.time()
            if now - last_log >= 30:
                step = labelled0 + own()
                for name, v in losses.items():
                    writer.add_scalar(f"refine/loss_{name}", float(np.mean(v)), step)
                share = stage["disputed"] / max(1, stage["decisions"])
                explored = stage["explored"] / max(1, stage["decisions"])
                if grouped:
                    writer.add_scalar("refine/disputed_share", share, step)
                writer.add_scalar("refine/explored_share", explored, step)
                writer.add_scalar("refine/labelled_per_s", own() / (now - t0), step)
                writer.add_scalar("refine/lr", scheduled_lr(cfg, done_share(), 1.0), step)
                kind = f"{100 * share:.1f}% disputed, " if grouped else ""
                log.info("refine: %d labelled, %d decisions (%s%.1f%% explored), loss %s", own(), stage["decisions"],
                         kind, 100 * explored, {k: round(float(np.mean(v)), 5) for k, v in losses.items()})
                losses = {}
                last_log = now
            if cfg.eval_minutes > 0 and now - last_eval >= cfg.eval_minutes * 60:
                m = strength_check(nets.numpy_nets(), cfg.eval_games, seed=labelled0 + own())
                for k, v in m.items():
                    writer.add_scalar(k, v, labelled0 + own())
                state.metrics.update(m)
                state.history.append({"games": state.games, "labelled": labelled0 + own(), "wall_seconds": wall0 + now - t0, **m})
                log.info("strength at %d labelled: %s", labelled0 + own(), m)
                last_eval = time.time()
            if now - last_ckpt >= cfg.checkpoint_minutes * 60:
                checkpoint()
                last_ckpt = time.time()
    except KeyboardInterrupt:
        log.warning("interrupted: writing a final checkpoint")
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        stop.set()
        for p in procs:
            p.join(timeout=20)
            if p.is_alive():
                p.terminate()
        checkpoint()
        writer.close()
    return state
