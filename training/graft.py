"""Grafting: one class net of a checkpoint replaced by the same class's net of another.

The class nets (:mod:`models.multinet`) are independent: each values the positions of its
own classes and is trained on them alone. A refinement of some nets leaves the others as
they were, so a model can combine nets of different runs, for example a contact net from
a long contact-only run with the crashed net of the shipped model. :func:`graft_net`
returns the recipient checkpoint with the donor's net in place and a ``graft`` stage that
names the donor and copies the donor's own stage history for that net (the model card
lists it), so the model still says how every one of its nets was trained.
"""
from __future__ import annotations

import time
from typing import Any

from models.checkpoint import CheckpointError, git_commit


def graft_net(state: dict[str, Any], donor: dict[str, Any], net: str, donor_name: str) -> dict[str, Any]:
    """``state`` with its net ``net`` replaced by ``donor``'s (weights and config); the
    optimizer state is dropped and a ``graft`` stage recorded."""
    for s, name in ((state, "the checkpoint"), (donor, donor_name)):
        if "nets" not in s:
            raise CheckpointError(f"{name} holds one tabla-v1 net; grafting works on class-net sets")
    if net not in state["nets"]:
        raise CheckpointError(f"the checkpoint has no {net} net (it has {', '.join(sorted(state['nets']))})")
    if net not in donor["nets"]:
        raise CheckpointError(f"{donor_name} has no {net} net (it has {', '.join(sorted(donor['nets']))})")
    d = donor["nets"][net]
    out = dict(state)
    out["nets"] = {**state["nets"], net: {"net_config": dict(d["net_config"]),
                                         "weights": {k: v.clone() if hasattr(v, "clone") else v.copy()
                                                     for k, v in d["weights"].items()}}}
    out["optimizer"] = []
    stage = {"stage": "graft", "games": state.get("games", 0), "labelled": state.get("labelled", 0), "net": net,
             "from": donor_name, "net_config": dict(d["net_config"]), "donor_games": int(donor.get("games", 0)),
             "donor_labelled": int(donor.get("labelled", 0)), "donor_stages": list(donor.get("stages", [])),
             "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "commit": git_commit()}
    out["stages"] = list(state.get("stages", [])) + [stage]
    return out
