"""The set of class nets being trained: building, evaluating and one gradient step.

The nets and the classes they value are those of :mod:`models.multinet`; this module
holds their torch modules (shared by the worker processes) and does for training what
:class:`models.multinet.ClassNets` does for play: split a batch by class, encode each
part with its net's encoding, one forward pass per net.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from engine.classes import BEAROFF1, BEAROFF2, OVER, classify
from engine.values import array_equity
from models.encoding import EXTENDS, encoder
from models.multinet import NET_FOR_CLASS, NET_NAMES, Bearoff, over_probs
from models.network import NetConfig, make_torch_net, numpy_weights
from training.config import TrainConfig

NET_ENCODINGS = {"contact": "tabla-contact-v2", "crashed": "tabla-contact-v2", "race": "tabla-race-v1"}
"""The input encoding of each net."""


def new_configs(cfg: TrainConfig) -> dict[str, NetConfig]:
    """Configs of a fresh net set for ``cfg``."""
    out = {}
    for name in NET_NAMES:
        enc = NET_ENCODINGS[name]
        hidden = cfg.race_hidden if name == "race" else cfg.hidden
        out[name] = NetConfig(inputs=encoder(enc)[0], hidden=hidden, encoding=enc)
    return out


class TorchNets:
    """Torch modules of the class nets, with batched evaluation and training steps."""

    def __init__(self, configs: dict[str, NetConfig], bearoff: Bearoff | None = None) -> None:
        self.configs = configs
        self.modules = {n: make_torch_net(c) for n, c in configs.items()}
        self.encoders = {n: encoder(c.encoding)[1] for n, c in configs.items()}
        self.bearoff = bearoff

    def new_input_params(self, name: str) -> list:
        """The parameters to train when net ``name`` learns only the weights of the inputs its
        encoding adds to the one it extends (:data:`models.encoding.EXTENDS`): its first
        layer's weights, with the gradient of every other column masked to zero (so Adam
        never moves them). ``ValueError`` when its encoding extends none."""
        import torch

        enc = self.configs[name].encoding
        base = EXTENDS.get(enc)
        if base is None:
            raise ValueError(f"the {name} net reads {enc}, which adds no inputs to another encoding; move it to one that "
                             f"does first (python -m scripts.widen --encoding ENC --net {name}; known: {', '.join(EXTENDS)})")
        w = self.modules[name].fc1.weight
        mask = torch.zeros_like(w)
        mask[:, encoder(base)[0]:] = 1.0
        w.register_hook(lambda g: g * mask)
        return [w]

    def share_memory(self) -> None:
        for m in self.modules.values():
            m.share_memory()

    def load_state(self, nets: dict[str, dict[str, Any]]) -> None:
        """Load weights saved by :meth:`state` (``{name: {"weights": state_dict}}``)."""
        for n, m in self.modules.items():
            m.load_state_dict(nets[n]["weights"])

    def state(self) -> dict[str, dict[str, Any]]:
        """``{name: {"net_config": ..., "weights": cloned state_dict}}``."""
        return {
            n: {"net_config": self.configs[n].to_dict(), "weights": {k: v.detach().clone() for k, v in m.state_dict().items()}}
            for n, m in self.modules.items()
        }

    def numpy_nets(self) -> dict[str, tuple[NetConfig, dict[str, np.ndarray]]]:
        return {n: (self.configs[n], numpy_weights(m)) for n, m in self.modules.items()}

    def exact(self, cls: np.ndarray) -> np.ndarray:
        """Which classes have exact values (finished games, bear-offs with a database)."""
        ex = cls == OVER
        if self.bearoff is not None:
            ex |= (cls == BEAROFF1) | (cls == BEAROFF2)
        return ex

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities (N, 5) float32, without gradients."""
        import torch

        cls = classify(boards)
        out = np.empty((len(boards), 5), np.float32)
        with torch.no_grad():
            for c in np.unique(cls):
                idx = np.flatnonzero(cls == c)
                b = boards[idx]
                if c == OVER:
                    out[idx] = over_probs(b)
                elif c == BEAROFF2 and self.bearoff is not None:
                    out[idx] = self.bearoff.two_sided_probs(b)
                elif c == BEAROFF1 and self.bearoff is not None:
                    out[idx] = self.bearoff.one_sided_probs(b)
                else:
                    name = NET_FOR_CLASS[int(c)]
                    out[idx] = self.modules[name](torch.from_numpy(self.encoders[name](b))).numpy()
        return out

    def train_step(self, boards: np.ndarray, targets: np.ndarray, opts: dict, lr: float,
                   groups: np.ndarray | None = None, rank_weight: float = 0.0) -> dict[str, tuple[float, int]]:
        """One Adam step per net on its rows of the batch; ``{name: (loss, rows)}``.

        Rows whose value is exact (finished games, bear-off databases) teach nothing. The loss
        is the squared error of the five probabilities; with ``groups`` (the decision of each
        row) and ``rank_weight`` > 0 it adds :func:`rank_loss`, the error of the differences
        between the results of one decision.
        """
        import torch

        cls = classify(boards)
        keep = ~self.exact(cls)
        out = {}
        for name, module in self.modules.items():
            mask = keep & np.isin(cls, [c for c, n in NET_FOR_CLASS.items() if n == name])
            rows = np.flatnonzero(mask)
            if len(rows) == 0:
                continue
            x = torch.from_numpy(self.encoders[name](boards[rows]))
            y = torch.from_numpy(np.ascontiguousarray(targets[rows]))
            opt = opts[name]
            for group in opt.param_groups:
                group["lr"] = lr
            pred = module(x)
            loss = ((pred - y) ** 2).sum(dim=1).mean()
            if groups is not None and rank_weight > 0:
                loss = loss + rank_weight * rank_loss(pred, y, groups[rows])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            out[name] = (loss.item(), len(rows))
        return out


def rank_loss(pred, target, groups: np.ndarray):
    """Mean over rows of the squared within-decision error: each row's cubeless-equity error
    (``pred`` − ``target``, torch (N, 5) probabilities) less the mean error of the rows of its
    decision (equal ``groups``). An error shared by all results of a decision changes no
    play and costs nothing here; a row alone in its decision costs nothing."""
    import torch

    err = array_equity(pred) - array_equity(target)
    _, inv = np.unique(groups, return_inverse=True)
    idx = torch.from_numpy(inv.astype(np.int64))
    k = int(inv.max()) + 1
    total = torch.zeros(k, dtype=err.dtype).index_add(0, idx, err)
    count = torch.zeros(k, dtype=err.dtype).index_add(0, idx, torch.ones_like(err))
    return ((err - (total / count)[idx]) ** 2).mean()
