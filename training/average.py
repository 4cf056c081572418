"""Weight averaging of checkpoints from one run (Polyak / stochastic weight averaging).

A refinement on noisy labels (:mod:`training.returns`) leaves the weights wandering around
their optimum from one checkpoint to the next; the mean of several checkpoints of the same
run sits closer to it than any one of them. :func:`average_states` takes checkpoints of one
class-net set (same nets, shapes and encodings) and returns a checkpoint of the last one's
history with every net's weights averaged and an ``average`` stage recorded. Checkpoints of
sibling runs (fits from the same start) may be averaged too: the stage then keeps, for each
of them, the stages its history has and the last one's lacks (``branches``), so that the
model card lists them.
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
    branches = _branches(states, names)
    if branches:
        stage["branches"] = branches
    out["stages"] = list(last.get("stages", [])) + [stage]
    return out


def _same_stage(a: dict, b: dict) -> bool:
    """Whether two stage records are the same stage (a run's record grows between its
    checkpoints, so a started stage is known by its kind and start time)."""
    return a == b or (bool(a.get("started_utc")) and a.get("started_utc") == b.get("started_utc")
                      and a.get("stage") == b.get("stage") and a.get("commit") == b.get("commit"))


def _branches(states: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """For each checkpoint but the last, the stages of its history after the last one's
    diverges (none for an earlier checkpoint of the same run)."""
    last = list(states[-1].get("stages", []))
    out = []
    for s, name in zip(states[:-1], names[:-1]):
        own = list(s.get("stages", []))
        shared = 0
        while shared < min(len(own), len(last)) and _same_stage(own[shared], last[shared]):
            shared += 1
        if own[shared:]:
            out.append({"name": name, "stages": own[shared:]})
    return out
