"""The race stage: the race net learns the near-exact values of :mod:`training.race_labels`.

See :class:`training.config.RaceConfig`. Positions come from Tabla's own self-play at 1 ply
(the race-class results among the best ``candidates`` of every decision: the positions the
race net values when Tabla chooses a play); each is labelled by one-sided simulation and
the bearoff database; the race net is then fitted to them by Adam, ``holdout`` of them kept
aside to measure the fit before and after. The labelled set is cached in the run folder
(``race_labels.npz``), so a rerun with the same settings trains without labelling again, and
later runs can train on the sets of several (``label_files``). The race net is either the
checkpoint's, fine-tuned, or a new one (``hidden`` > 0, e.g. with the ``tabla-race-v2``
inputs) trained from random weights.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from engine.batch import one_ply_choice
from engine.classes import RACE, classify
from engine.dice import opening_rolls
from engine.movegen import children_batch
from engine.position import Position
from models.checkpoint import CheckpointError, default_bearoff, git_commit, load_checkpoint
from models.encoding import encoder
from models.network import NetConfig, make_torch_net
from training.config import RaceConfig
from training.netset import TorchNets
from training.race_labels import RaceLabeller
from training.trainer import save_offline_stage

log = logging.getLogger(__name__)
LABELS_FILE = "race_labels.npz"


def sample_race_positions(evaluate, cfg: RaceConfig, rng: np.random.Generator, progress=None) -> np.ndarray:
    """``cfg.positions`` distinct race positions (opponent on roll) from self-play at 1 ply."""
    n = cfg.parallel_games
    boards = np.tile(Position.start().array(), (n, 1))
    opening = np.ones(n, bool)
    seen: dict[bytes, None] = {}
    while len(seen) < cfg.positions:
        dice = rng.integers(1, 7, size=(n, 2))
        if opening.any():
            dice[opening] = opening_rolls(rng, int(opening.sum()))
        children, offsets = children_batch(boards, dice)
        choice = one_ply_choice(children, offsets, evaluate)
        cls = classify(choice.opp_boards)
        chosen = np.empty(n, np.int64)
        for g in range(n):
            a, b = offsets[g], offsets[g + 1]
            order = choice.ranked(a, b)
            chosen[g] = order[1] if len(order) > 1 and rng.random() < cfg.epsilon else choice.index[g]
            for r in order[: cfg.candidates]:
                if cls[r] == RACE and choice.points[r] == 0:
                    seen.setdefault(choice.opp_boards[r].tobytes())
        done = choice.points[chosen] > 0
        boards = choice.opp_boards[chosen].copy()
        opening[:] = False
        if done.any():
            boards[done] = Position.start().array()
            opening[done] = True
        if progress is not None:
            progress(len(seen))
    keys = list(seen)[: cfg.positions]
    return np.frombuffer(b"".join(keys), np.int8).reshape(-1, 26).copy()


def _label_chunk(args: tuple[np.ndarray, int, int]) -> np.ndarray:
    boards, trials, seed = args
    return RaceLabeller(trials, seed).race_probs(boards).astype(np.float32)


def label_positions(boards: np.ndarray, cfg: RaceConfig) -> np.ndarray:
    """Race labels (N, 5) of ``boards`` with ``cfg.workers`` processes (deterministic: the
    chunks and their seeds do not depend on the worker count)."""
    import multiprocessing as mp

    chunk = 2000
    jobs = [(boards[i:i + chunk], cfg.trials, cfg.seed * 1_000_003 + i // chunk) for i in range(0, len(boards), chunk)]
    if cfg.workers <= 1:
        parts = [_label_chunk(j) for j in jobs]
    else:
        with mp.get_context("fork").Pool(cfg.workers) as pool:
            parts = []
            for k, p in enumerate(pool.imap(_label_chunk, jobs)):
                parts.append(p)
                log.info("race labels: %d / %d", min((k + 1) * chunk, len(boards)), len(boards))
    return np.concatenate(parts) if parts else np.zeros((0, 5), np.float32)


def _loss(nets: TorchNets, boards: np.ndarray, targets: np.ndarray) -> float:
    """Mean squared error (summed over the 5 outputs) of the race net on a labelled set."""
    import torch

    with torch.no_grad():
        x = torch.from_numpy(nets.encoders["race"](boards))
        return float(((nets.modules["race"](x) - torch.from_numpy(targets)) ** 2).sum(dim=1).mean())


def race_stage(cfg: RaceConfig, resume: Path, out_dir: Path) -> dict[str, Any]:
    """Fit the race net of checkpoint ``resume`` to race labels; checkpoints in ``out_dir``.

    Returns the stage record (also appended to the checkpoint's ``stages``).
    """
    import torch
    from torch.utils.tensorboard import SummaryWriter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ck = load_checkpoint(resume)
    if "nets" not in ck:
        raise CheckpointError(f"{resume} holds one tabla-v1 net; the race stage works on class-net sets")
    t0 = time.time()
    commit = git_commit()  # the code the stage starts from, not a commit made while it runs
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, default_bearoff())
    nets.load_state(ck["nets"])
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    fresh = None
    if cfg.hidden > 0:
        fresh = NetConfig(inputs=encoder(cfg.encoding)[0], hidden=cfg.hidden, encoding=cfg.encoding)
        nets.configs["race"] = fresh
        nets.modules["race"] = make_torch_net(fresh)
        nets.encoders["race"] = encoder(fresh.encoding)[1]
    rng = np.random.default_rng([cfg.seed, 7])
    cache = out_dir / LABELS_FILE
    key = f"{cfg.positions}:{cfg.trials}:{cfg.candidates}:{cfg.epsilon}:{cfg.seed}:{resume.resolve()}"
    boards = targets = None
    if cfg.label_files:
        parts = []
        for f in cfg.label_files:
            try:
                with np.load(f, allow_pickle=False) as z:
                    parts.append((z["boards"], z["targets"]))
            except (OSError, KeyError, ValueError) as exc:
                raise CheckpointError(f"cannot read race labels {f}: {exc}") from None
        boards = np.concatenate([b for b, _ in parts])
        targets = np.concatenate([t for _, t in parts])
        log.info("race stage: %d labelled positions from %d files", len(boards), len(parts))
    elif cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            if str(z["key"][()]) == key:
                boards, targets = z["boards"], z["targets"]
                log.info("race stage: %d labelled positions from %s", len(boards), cache)
    if boards is None:
        boards = sample_race_positions(nets.evaluate, cfg, rng)
        log.info("race stage: %d race positions sampled in %.0f s", len(boards), time.time() - t0)
        targets = label_positions(boards, cfg)
        np.savez_compressed(cache, boards=boards, targets=targets, key=np.array(key))
        log.info("race stage: labelled in %.0f s (cached in %s)", time.time() - t0, cache)
    label_seconds = time.time() - t0
    perm = rng.permutation(len(boards))
    n_hold = max(1, int(len(boards) * cfg.holdout))
    hold, train = perm[:n_hold], perm[n_hold:]
    writer = SummaryWriter(log_dir=str(out_dir / "tb"))
    before = _loss(nets, boards[hold], targets[hold])
    log.info("race stage: held-out loss before %.5f", before)
    opt = torch.optim.Adam(nets.modules["race"].parameters(), lr=cfg.lr)
    module, enc = nets.modules["race"], nets.encoders["race"]
    x_all = torch.from_numpy(enc(boards[train]))
    y_all = torch.from_numpy(np.ascontiguousarray(targets[train]))
    after = before
    for epoch in range(cfg.epochs):
        lr = cfg.lr * (cfg.lr_final / cfg.lr) ** (epoch / max(1, cfg.epochs - 1))
        for g in opt.param_groups:
            g["lr"] = lr
        order = torch.from_numpy(rng.permutation(len(train)))
        for i in range(0, len(train), cfg.batch_size):
            j = order[i:i + cfg.batch_size]
            loss = ((module(x_all[j]) - y_all[j]) ** 2).sum(dim=1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        after = _loss(nets, boards[hold], targets[hold])
        writer.add_scalar("race/heldout_loss", after, epoch + 1)
        log.info("race stage: epoch %d, lr %.2g, held-out loss %.5f", epoch + 1, lr, after)
    stage = {"stage": "race", "games": int(ck.get("games", 0)), "labelled": int(ck.get("labelled", 0)),
             "race_net": nets.configs["race"].to_dict(), "new_race_net": fresh is not None,
             "race_positions": int(len(boards)), "heldout_loss_before": before, "heldout_loss_after": after,
             "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime(t0)), "commit": commit,
             "race_config": cfg.to_dict(), "label_seconds": round(label_seconds, 1)}
    save_offline_stage(ck, nets, stage, out_dir, t0, cfg.eval_games, cfg.seed)
    writer.close()
    return stage
