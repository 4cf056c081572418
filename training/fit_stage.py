"""The fit stage: class nets fitted offline to labels stored by earlier refine runs.

See :class:`training.config.FitConfig`. A refine run with a label store
(``--refine-store``) keeps every label it makes; a label of Tabla's rollouts costs about a
thousand 1-ply plays, and a run trains on its labels only while it makes them. This stage
reads the stored labels of one or more runs (:func:`training.label_store.replay_labels`),
keeps a share of their decisions aside, and trains the nets on the rest for whole passes,
measuring after each pass, on the decisions kept aside, how often and by how much the
nets' first choice among a decision's labelled results falls short of the labels' best
(the *regret*, in thousandths of a point of the labels' cubeless equity). The epoch of
least regret is kept, so a fit that only overfits leaves the nets as they were.

With ``replies`` the fitted nets then label the position after one best reply to each
training label (:mod:`training.reply_labels`: the other side on roll, which a 2-ply search
values at its leaves), and the nets are fitted again from the start on both kinds; of the
two passes the one of least held-out regret is kept (the stage records which).

Labels are Tabla's own (its search or rollouts when they were made), never another engine's.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from engine.classes import classify
from engine.values import mover_equity
from models.checkpoint import CheckpointError, default_bearoff, git_commit, load_checkpoint
from models.network import NetConfig
from training.config import FitConfig
from training.label_store import label_files, replay_labels, write_labels
from training.netset import TorchNets
from training.refine import valued_by
from training.reply_labels import reply_labels
from training.trainer import save_offline_stage

log = logging.getLogger(__name__)


def split_decisions(groups: np.ndarray, holdout: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(train, held_out)``: the rows of a share ``holdout`` of the decisions
    (equal ``groups``) drawn at random are held out, every decision whole on one side."""
    uniq, inv = np.unique(groups, return_inverse=True)
    held = rng.random(len(uniq)) < holdout
    rows = held[inv]
    return np.flatnonzero(~rows), np.flatnonzero(rows)


def decision_batches(groups: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The positions ``0 .. len(groups) - 1`` in batches of whole decisions, decisions in
    random order: a decision joins the batch its first label falls in by count, so a batch
    holds about ``batch_size`` labels (more when a decision crosses the boundary)."""
    if len(groups) == 0:
        return []
    _, inv, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    order = rng.permutation(len(sizes))  # the decisions' places in this pass
    place = np.empty(len(sizes), np.int64)
    place[order] = np.arange(len(sizes))
    start = np.concatenate(([0], np.cumsum(sizes[order])[:-1]))  # labels before each place
    batch_of_decision = (start // batch_size)[place]
    rows = np.lexsort((inv, place[inv]))  # by place, a decision's labels together
    batch = batch_of_decision[inv[rows]]
    cuts = np.flatnonzero(np.diff(batch)) + 1
    return np.split(rows, cuts)


def choice_regret(pred: np.ndarray, targets: np.ndarray, groups: np.ndarray) -> tuple[float, float, int]:
    """How the nets' choice among each decision's labelled results fares by the labels.

    ``pred`` and ``targets`` are probabilities (N, 5) of the results, each seen by the
    opponent of the mover (on roll after the play); decisions are equal ``groups``. Over the
    decisions with two or more results: the mean of the labels' best equity for the mover
    less the labels' equity of the result ``pred`` ranks first (in thousandths of a point),
    the share of decisions where that result is the labels' best, and their number.
    """
    eq_t = mover_equity(targets)
    eq_p = mover_equity(pred)
    _, inv, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    k = len(sizes)
    best_t = np.full(k, -np.inf)
    np.maximum.at(best_t, inv, eq_t)
    best_p = np.full(k, -np.inf)
    np.maximum.at(best_p, inv, eq_p)
    # the label of the first row (in order) that ranks first by pred
    first = np.full(k, len(groups), np.int64)
    top = np.flatnonzero(eq_p == best_p[inv])
    np.minimum.at(first, inv[top], top)
    multi = sizes >= 2
    if not multi.any():
        return 0.0, 1.0, 0
    regret = best_t[multi] - eq_t[first[multi]]
    return float(1000 * regret.mean()), float((regret <= 0).mean()), int(multi.sum())


def heldout_figures(nets: TorchNets, boards: np.ndarray, targets: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """The fit on held-out labels: ``mse`` (squared error summed over the five outputs,
    rows the nets value), ``regret`` and ``agree`` (:func:`choice_regret`)."""
    pred = nets.evaluate(boards)
    learnt = ~nets.exact(classify(boards)) if len(boards) else np.zeros(0, bool)
    mse = float(((pred[learnt] - targets[learnt]) ** 2).sum(axis=1).mean()) if learnt.any() else 0.0
    regret, agree, decisions = choice_regret(pred, targets, groups)
    return {"mse": mse, "regret": regret, "agree": agree, "decisions": decisions}


def fit_pass(nets: TorchNets, cfg: FitConfig, boards: np.ndarray, targets: np.ndarray, groups: np.ndarray,
             train: np.ndarray, hold: np.ndarray, rng: np.random.Generator, writer: Any,
             tag: str) -> tuple[list[dict[str, Any]], int, dict]:
    """``cfg.epochs`` passes over the rows ``train``, measured on the rows ``hold`` after
    each; returns the epochs' figures, the epoch of least held-out regret (0: the start)
    and the nets' state at that epoch. The nets end in the last epoch's state."""
    import torch

    opts = {n: torch.optim.Adam(nets.modules[n].parameters(), lr=cfg.lr) for n in cfg.nets}
    first = heldout_figures(nets, boards[hold], targets[hold], groups[hold])
    epochs = [{"epoch": 0, "lr": 0.0, "loss": None, **first}]
    log.info("%s: before, held-out %s", tag, first)
    best_epoch, best_state = 0, nets.state()
    average = WeightAverage(nets, cfg.nets, cfg.ema) if cfg.ema > 0 else None
    for epoch in range(1, cfg.epochs + 1):
        lr = cfg.lr * (cfg.lr_final / cfg.lr) ** ((epoch - 1) / max(1, cfg.epochs - 1))
        losses = []
        for rows in decision_batches(groups[train], cfg.batch_size, rng):
            r = train[rows]
            for loss, n in nets.train_step(boards[r], targets[r], opts, lr, groups[r], cfg.rank_weight).values():
                losses.append(loss * n)
            if average is not None:
                average.update()
        trained = None
        if average is not None:  # measure (and maybe keep) the average; train on from the trained weights
            trained = nets.state()
            average.load_into_nets()
        fig = heldout_figures(nets, boards[hold], targets[hold], groups[hold])
        epochs.append({"epoch": epoch, "lr": lr, "loss": float(np.sum(losses) / max(1, len(train))), **fig})
        for key in ("mse", "regret", "agree"):
            writer.add_scalar(f"{tag}/heldout_{key}", fig[key], epoch)
        writer.add_scalar(f"{tag}/train_loss", epochs[-1]["loss"], epoch)
        log.info("%s: epoch %d, lr %.2g, train loss %.5f, held-out %s", tag, epoch, lr, epochs[-1]["loss"], fig)
        if fig["regret"] < epochs[best_epoch]["regret"]:
            best_epoch, best_state = epoch, nets.state()
        if trained is not None:
            nets.load_state(trained)
    return epochs, best_epoch, best_state


class WeightAverage:
    """Exponential moving average of the parameters of some of the nets, over gradient
    steps: each :meth:`update` moves the average ``1 - decay`` of the way to the weights."""

    def __init__(self, nets: TorchNets, names: tuple[str, ...], decay: float) -> None:
        self.nets, self.names, self.decay = nets, names, decay
        self.params = {n: [p.detach().clone() for p in nets.modules[n].parameters()] for n in names}

    def update(self) -> None:
        import torch

        with torch.no_grad():
            for n in self.names:
                for avg, p in zip(self.params[n], self.nets.modules[n].parameters()):
                    avg.mul_(self.decay).add_(p.detach(), alpha=1.0 - self.decay)

    def load_into_nets(self) -> None:
        """Copy the averages into the nets' parameters."""
        import torch

        with torch.no_grad():
            for n in self.names:
                for avg, p in zip(self.params[n], self.nets.modules[n].parameters()):
                    p.copy_(avg)


def fit_stage(cfg: FitConfig, resume: Path, out_dir: Path) -> dict[str, Any]:
    """Fit the nets ``cfg.nets`` of checkpoint ``resume`` to stored labels; the kept
    checkpoint (the epoch of least held-out regret) is ``out_dir / latest.pt``.

    Returns the stage record (also appended to the checkpoint's ``stages``).
    """
    import torch
    from torch.utils.tensorboard import SummaryWriter

    out_dir = Path(out_dir)
    ck = load_checkpoint(resume)
    if "nets" not in ck:
        raise CheckpointError(f"{resume} holds one tabla-v1 net; the fit stage works on class-net sets")
    files = label_files(cfg.labels)
    boards, targets, groups = replay_labels(cfg.labels)  # before anything is written: a bad file stops here
    keep = valued_by(boards, cfg.nets)
    boards, targets, groups = boards[keep], targets[keep], groups[keep]
    if len(boards) == 0:
        raise CheckpointError(f"no labels of the {' or '.join(cfg.nets)} nets' classes in {', '.join(cfg.labels)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    commit = git_commit()  # the code the stage starts from, not a commit made while it runs
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, default_bearoff())
    nets.load_state(ck["nets"])
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng([cfg.seed, 11])
    train, hold = split_decisions(groups, cfg.holdout, rng)
    decisions = len(np.unique(groups))
    log.info("fit: %d labels of %d decisions from %d files; %d labels held out", len(boards), decisions, len(files),
             len(hold))
    writer = SummaryWriter(log_dir=str(out_dir / "tb"))
    start_state = nets.state()
    epochs, best_epoch, best_state = fit_pass(nets, cfg, boards, targets, groups, train, hold, rng, writer, "fit")
    extra: dict[str, Any] = {}
    if cfg.replies:
        nets.load_state(best_state)
        pos, tgt = reply_labels(boards[train], nets.evaluate, rng, cfg.nets)
        saved = write_labels(out_dir / "replies", pos, tgt, np.arange(len(pos)), "replies", 0) if len(pos) else None
        log.info("fit: %d reply labels by the first pass's nets (epoch %d); fitting again from the start",
                 len(pos), best_epoch)
        extra = {"first_pass": {"best_epoch": best_epoch, "regret": epochs[best_epoch]["regret"]},
                 "reply_labels": int(len(pos)), "reply_file": saved.name if saved else None}
        train = np.concatenate([train, len(boards) + np.arange(len(pos))])
        groups = np.concatenate([groups, groups.max() + 1 + np.arange(len(pos))])
        boards, targets = np.concatenate([boards, pos]), np.concatenate([targets, tgt])
        nets.load_state(start_state)
        first_epochs, first_best, first_state = epochs, best_epoch, best_state
        epochs, best_epoch, best_state = fit_pass(nets, cfg, boards, targets, groups, train, hold, rng, writer,
                                                  "fit_replies")
        if first_epochs[first_best]["regret"] < epochs[best_epoch]["regret"]:  # the replies did not help: keep the first
            log.info("fit: the first pass's nets (held-out regret %.3f) beat the second's (%.3f); keeping them",
                     first_epochs[first_best]["regret"], epochs[best_epoch]["regret"])
            extra["kept_pass"] = "first"
            extra["second_pass"] = {"best_epoch": best_epoch, "regret": epochs[best_epoch]["regret"]}
            epochs, best_epoch, best_state = first_epochs, first_best, first_state
        else:
            extra["kept_pass"] = "second"
    writer.close()
    nets.load_state(best_state)
    stage = {"stage": "fit", "games": int(ck.get("games", 0)), "labelled": int(ck.get("labelled", 0)),
             "fit_config": cfg.to_dict(), "label_files": [f.name for f in files], "labels": int(len(boards)),
             "decisions": decisions, "train_labels": int(len(train)), "heldout_labels": int(len(hold)),
             "epochs": epochs, "best_epoch": best_epoch, **extra,
             "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime(t0)), "commit": commit}
    save_offline_stage(ck, nets, stage, out_dir, t0, cfg.eval_games, cfg.seed,
                       labelled=int(ck.get("labelled", 0)) + (kept_train_labels(stage) if best_epoch else 0))
    return stage


def kept_train_labels(stage: dict[str, Any]) -> int:
    """How many labels the kept nets of a fit stage trained on: without the reply labels when
    the first pass was kept."""
    replies = int(stage.get("reply_labels", 0)) if stage.get("kept_pass") == "first" else 0
    return int(stage["train_labels"]) - replies
