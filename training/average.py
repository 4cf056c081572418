"""Weight averaging of checkpoints from one run (Polyak / stochastic weight averaging).

A refinement on noisy labels (:mod:`training.returns`) leaves the weights wandering around
their optimum from one checkpoint to the next; the mean of several checkpoints of the same
run sits closer to it than any one of them. :func:`average_states` takes checkpoints of one
class-net set (same nets, shapes and encodings) and returns a checkpoint of the last one's
history with every net's weights averaged and an ``average`` stage recorded.
"""
from __future__ import annotations

import time
from typing import Any

from models.checkpoint import CheckpointError, git_commit


def average_states(states: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """The checkpoint ``states[-1]`` with the mean weights of all ``states``; ``names`` label
    them in the stage record."""
    if len(states) < 2:
        raise CheckpointError("averaging needs at least two checkpoints")
    for s, name in zip(states, names):
        if "nets" not in s:
            raise CheckpointError(f"{name} holds one tabla-v1 net; averaging works on class-net sets")
    last = states[-1]
    nets = {}
    for net, d in last["nets"].items():
        for s, name in zip(states, names):
            other = s["nets"].get(net)
            if other is None or other["net_config"] != d["net_config"]:
                raise CheckpointError(f"{name}: net {net} differs from the last checkpoint's ({d['net_config']})")
        weights = {k: sum(s["nets"][net]["weights"][k] for s in states) / len(states) for k in d["weights"]}
        nets[net] = {"net_config": d["net_config"], "weights": weights}
    out = dict(last)
    out["nets"] = nets
    out["optimizer"] = []
    stage = {"stage": "average", "games": last.get("games", 0), "labelled": last.get("labelled", 0), "of": list(names),
             "labelled_at": [int(s.get("labelled", 0)) for s in states],
             "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "commit": git_commit()}
    out["stages"] = list(last.get("stages", [])) + [stage]
    return out
