"""Widen a trained network's hidden layer, or its inputs, without changing what it computes.

``python -m scripts.widen --checkpoint models/tabla.pt --hidden 256 --out run/wide.pt``

``python -m scripts.widen --checkpoint models/tabla.pt --net crashed --encoding tabla-contact-v3
--out run/v3.pt`` moves a net to an encoding that extends its own
(:data:`models.encoding.EXTENDS`): the added inputs get zero weights, so the net computes
what it did until training gives them weight (:func:`extend_inputs`).

The old hidden units keep their weights; each new unit gets freshly initialised input
weights (torch's default for the layer) and *zero* output weights, so the widened net
gives exactly the old probabilities and self-play training (``tabla train --resume``)
goes on from the old strength with more capacity. Games, positions, wall time and the
history carry over; the optimizer state does not (its moments have the old shapes), so
the trainer starts Adam afresh.
"""
from __future__ import annotations

from typing import Any

from models.encoding import EXTENDS, encoder
from models.network import NetConfig, make_torch_net


def _class_net(checkpoint: dict[str, Any], net: str) -> dict[str, Any]:
    """The net ``net`` (``net_config`` and ``weights``) of a class-net checkpoint."""
    if net not in checkpoint["nets"]:
        raise ValueError(f"no net {net!r} in the checkpoint (nets: {', '.join(checkpoint['nets'])})")
    return checkpoint["nets"][net]


def extend_inputs(checkpoint: dict[str, Any], net: str, encoding: str) -> dict[str, Any]:
    """A class-net checkpoint whose net ``net`` reads ``encoding``, an extension of its own
    encoding; the weights of the added inputs are zero. The optimizer state is dropped."""
    import torch

    if "nets" not in checkpoint:
        raise ValueError("the checkpoint holds one tabla-v1 net; extend the inputs of a class-net set")
    d = _class_net(checkpoint, net)
    old = NetConfig(**d["net_config"])
    if EXTENDS.get(encoding) != old.encoding:
        known = ", ".join(f"{k} (extends {v})" for k, v in EXTENDS.items())
        raise ValueError(f"{encoding} does not extend the {net} net's encoding {old.encoding} (known: {known})")
    cfg = NetConfig(inputs=encoder(encoding)[0], hidden=old.hidden, encoding=encoding)
    w = d["weights"]
    weights = {k: v.detach().clone() for k, v in w.items()}
    w1 = w["fc1.weight"]
    weights["fc1.weight"] = torch.cat([w1, torch.zeros((w1.shape[0], cfg.inputs - old.inputs), dtype=w1.dtype)], dim=1)
    out = {k: v for k, v in checkpoint.items() if k not in ("format", "format_version", "git_commit")}
    out["nets"] = {**checkpoint["nets"], net: {"net_config": cfg.to_dict(), "weights": weights}}
    out["optimizer"] = []
    out["stages"] = list(checkpoint.get("stages", [])) + [{
        "games": int(checkpoint.get("games", 0)),
        "widened_from": {"net": net, "encoding": old.encoding, "inputs": old.inputs, "to": encoding}}]
    return out


def widen_state(checkpoint: dict[str, Any], hidden: int, seed: int = 0, net: str = "contact") -> dict[str, Any]:
    """A checkpoint payload with ``hidden`` units computing the same function as ``checkpoint``.

    In a class-net set (format 2) the net named ``net`` is widened, the others are kept.
    """
    if "nets" in checkpoint:
        one = {**{k: v for k, v in checkpoint.items() if k != "nets"}, **_class_net(checkpoint, net)}
        wide = widen_state(one, hidden, seed)
        nets = dict(checkpoint["nets"])
        nets[net] = {"net_config": wide.pop("net_config"), "weights": wide.pop("weights")}
        wide["nets"] = nets
        wide["widened_from"] = {**wide["widened_from"], "net": net}
        return wide
    import torch

    old_cfg = NetConfig(**checkpoint["net_config"])
    if hidden <= old_cfg.hidden:
        raise ValueError(f"--hidden must exceed the current {old_cfg.hidden} units, got {hidden}")
    cfg = NetConfig(**{**old_cfg.to_dict(), "hidden": hidden})
    torch.manual_seed(seed)
    net = make_torch_net(cfg)  # fresh default initialisation for the new units
    w = checkpoint["weights"]
    h = old_cfg.hidden
    with torch.no_grad():
        net.fc1.weight[:h] = w["fc1.weight"]
        net.fc1.bias[:h] = w["fc1.bias"]
        net.fc2.weight[:, :h] = w["fc2.weight"]
        net.fc2.weight[:, h:] = 0.0
        net.fc2.bias[:] = w["fc2.bias"]
    widened = {k: v for k, v in checkpoint.items() if k not in ("format", "format_version", "git_commit")}
    widened["net_config"] = cfg.to_dict()
    widened["weights"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
    widened["optimizer"] = []
    widened["widened_from"] = {"hidden": h, "games": int(checkpoint.get("games", 0))}
    return widened
