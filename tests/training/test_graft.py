"""Grafting one class net from another checkpoint (:mod:`training.graft`, ``python -m scripts.graft``)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from models.checkpoint import CheckpointError, load_checkpoint, load_nets  # noqa: E402
from training.graft import graft_net  # noqa: E402


def _shifted(state, by: float, extra_stage: dict | None = None):
    """``state`` with every weight moved by ``by`` and one more stage record."""
    out = dict(state)
    out["nets"] = {n: {"net_config": dict(d["net_config"]), "weights": {k: v + by for k, v in d["weights"].items()}}
                   for n, d in state["nets"].items()}
    out["stages"] = list(state["stages"]) + ([extra_stage] if extra_stage else [])
    return out


def test_the_grafted_net_is_the_donors_and_the_other_nets_stay():
    base = load_checkpoint("models/tabla.pt")
    recipient = _shifted(base, 0.5)
    out = graft_net(recipient, base, "crashed", "models/tabla.pt")
    for k, v in base["nets"]["crashed"]["weights"].items():
        assert torch.equal(out["nets"]["crashed"]["weights"][k], v)
    for net in ("contact", "race"):
        for k, v in recipient["nets"][net]["weights"].items():
            assert torch.equal(out["nets"][net]["weights"][k], v)
    st = out["stages"][-1]
    assert st["stage"] == "graft" and st["net"] == "crashed" and st["from"] == "models/tabla.pt"
    assert st["donor_stages"] == base["stages"] and out["optimizer"] == []
    # the recipient is not changed in place
    assert not torch.equal(recipient["nets"]["crashed"]["weights"]["fc1.bias"], base["nets"]["crashed"]["weights"]["fc1.bias"])


def test_the_card_shows_which_stages_trained_the_grafted_net():
    from scripts.ship_model import _stage_rows

    base = load_checkpoint("models/tabla.pt")
    stages, n = len(base["stages"]), len(_stage_rows(base["stages"]))  # rows: an average of sibling fits adds some
    mine = {"stage": "average", "games": 1, "of": ["r1.pt", "r2.pt"], "labelled_at": [1, 2], "commit": "recipient"}
    theirs = {"stage": "average", "games": 2, "of": ["d1.pt", "d2.pt"], "labelled_at": [3, 4], "commit": "donor"}
    out = graft_net(_shifted(base, 0.1, mine), _shifted(base, 0.2, theirs), "crashed", "donor.pt")
    rows = _stage_rows(out["stages"])
    assert len(rows) == n + 3
    assert f"its training is the first {stages} stages above and the 1 below" in rows[n + 1]
    assert "`donor.pt`" in rows[n + 1]
    assert rows[n + 2].startswith("| 2 | (the grafted crashed net) weights averaged") and "d1.pt" not in rows[n]


def test_grafting_refuses_a_net_either_side_lacks_and_one_net_checkpoints():
    base = load_checkpoint("models/tabla.pt")
    with pytest.raises(CheckpointError, match="the checkpoint has no cube net"):
        graft_net(base, base, "cube", "d.pt")
    short = dict(base)
    short["nets"] = {k: v for k, v in base["nets"].items() if k != "race"}
    with pytest.raises(CheckpointError, match="d.pt has no race net"):
        graft_net(base, short, "race", "d.pt")
    with pytest.raises(CheckpointError, match="one tabla-v1 net"):
        graft_net(base, {"weights": {}}, "race", "d.pt")


def test_the_graft_command_writes_a_checkpoint_and_its_inference_file(tmp_path, capsys):
    from models.checkpoint import save_checkpoint
    from scripts.graft import main

    base = load_checkpoint("models/tabla.pt")
    save_checkpoint(tmp_path / "moved.pt", _shifted(base, 0.25))
    out = tmp_path / "mixed.pt"
    assert main(["--checkpoint", str(tmp_path / "missing.pt"), "--net", "crashed", "--from", "models/tabla.pt",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: model file not found") and err.count("\n") == 1
    assert main(["--checkpoint", str(tmp_path / "moved.pt"), "--net", "crashed", "--from", "models/tabla.pt",
                 "--out", str(out)]) == 0
    nets, _ = load_nets(tmp_path / "mixed.npz")
    want, _ = load_nets("models/tabla.npz")
    for k, v in want["crashed"][1].items():
        assert np.allclose(nets["crashed"][1][k], v, atol=1e-6)
    for k, v in want["contact"][1].items():
        assert np.allclose(nets["contact"][1][k], v + 0.25, atol=1e-5)
