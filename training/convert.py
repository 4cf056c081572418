"""Turn a one-net ``tabla-v1`` checkpoint into a class-net set that plays the same.

``tabla train --from-v1 models/tabla.pt --out run/ ...`` starts class-net training from
the nets of the first sessions instead of from random weights:

* the contact and crashed nets get the v1 net's weights. Their encoding,
  ``tabla-contact-v2``, holds every v1 input in the same order per side, with 13 expert
  inputs after each side's block (:mod:`models.encoding`); the weights of those new
  inputs start at zero, so both nets compute exactly what the v1 net computed;
* the race net, whose encoding shares nothing with v1, starts from fresh weights and
  learns from self-play with the bear-off databases at its end.

Games, positions, wall time and history carry over and the conversion is recorded as a
stage; the optimizer state does not (the shapes change), so Adam starts afresh.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from models.encoding import NUM_INPUTS, SIDE_INPUTS, SIDE_INPUTS_V2, encoder
from models.network import NetConfig, make_torch_net

V2_COLUMNS = np.concatenate([
    np.arange(SIDE_INPUTS),  # the player on roll's v1 block
    SIDE_INPUTS_V2 + np.arange(SIDE_INPUTS),  # the opponent's v1 block
    2 * SIDE_INPUTS_V2 + np.arange(2),  # the two global inputs
])
"""Column of ``tabla-contact-v2`` that holds each ``tabla-v1`` input, in v1 order."""


def v1_to_contact_v2(weights: dict[str, Any]) -> dict[str, Any]:
    """A v1 net's torch weights re-laid for ``tabla-contact-v2`` inputs (new inputs: 0)."""
    import torch

    w1 = weights["fc1.weight"]
    if w1.shape[1] != NUM_INPUTS:
        raise ValueError(f"a tabla-v1 net has {NUM_INPUTS} inputs, this one {w1.shape[1]}")
    wide = torch.zeros((w1.shape[0], encoder("tabla-contact-v2")[0]), dtype=w1.dtype)
    wide[:, torch.from_numpy(V2_COLUMNS)] = w1
    out = {k: v.detach().clone() for k, v in weights.items()}
    out["fc1.weight"] = wide
    return out


def convert_v1_state(checkpoint: dict[str, Any], race_hidden: int, seed: int) -> dict[str, Any]:
    """A format-2 training payload (``nets``) from a format-1 ``checkpoint``."""
    import torch

    if "nets" in checkpoint:
        raise ValueError("the checkpoint already holds a class-net set")
    cfg = NetConfig(**checkpoint["net_config"])
    if cfg.encoding != "tabla-v1":
        raise ValueError(f"only tabla-v1 nets convert, this one is {cfg.encoding}")
    contact_cfg = NetConfig(inputs=encoder("tabla-contact-v2")[0], hidden=cfg.hidden, encoding="tabla-contact-v2")
    contact = v1_to_contact_v2(checkpoint["weights"])
    race_cfg = NetConfig(inputs=encoder("tabla-race-v1")[0], hidden=race_hidden, encoding="tabla-race-v1")
    torch.manual_seed(seed)
    race = {k: v.detach().clone() for k, v in make_torch_net(race_cfg).state_dict().items()}
    nets = {
        "contact": {"net_config": contact_cfg.to_dict(), "weights": contact},
        "crashed": {"net_config": contact_cfg.to_dict(), "weights": {k: v.clone() for k, v in contact.items()}},
        "race": {"net_config": race_cfg.to_dict(), "weights": race},
    }
    keep = ("games", "positions", "wall_seconds", "metrics", "history", "stages")
    state = {k: checkpoint[k] for k in keep if k in checkpoint}
    state["nets"] = nets
    state["optimizer"] = []
    stages = list(state.get("stages", []))
    stages.append({"games": int(checkpoint.get("games", 0)), "converted_from": {
        "encoding": "tabla-v1", "hidden": cfg.hidden, "git_commit": checkpoint.get("git_commit", "unknown"),
        "race": f"fresh, {race_hidden} hidden, seed {seed}"}})
    state["stages"] = stages
    return state
