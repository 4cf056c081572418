"""Checkpoint weight averaging (:mod:`training.average`, ``python -m scripts.average``)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from models.checkpoint import CheckpointError, load_checkpoint, load_nets  # noqa: E402
from training.average import average_states  # noqa: E402


def _shifted(state, by: float, labelled: int):
    out = dict(state)
    out["labelled"] = labelled
    out["nets"] = {n: {"net_config": d["net_config"], "weights": {k: v + by for k, v in d["weights"].items()}}
                   for n, d in state["nets"].items()}
    return out


def test_the_average_of_checkpoints_has_the_mean_weights_and_records_itself():
    base = load_checkpoint("models/tabla.pt")
    a, b, c = _shifted(base, 0.0, 10), _shifted(base, 0.3, 20), _shifted(base, 0.6, 30)
    avg = average_states([a, b, c], ["a.pt", "b.pt", "c.pt"])
    for net, d in base["nets"].items():
        for k, v in d["weights"].items():
            assert torch.allclose(avg["nets"][net]["weights"][k], v + 0.3, atol=1e-6)
    st = avg["stages"][-1]
    assert st["stage"] == "average" and st["of"] == ["a.pt", "b.pt", "c.pt"] and st["labelled_at"] == [10, 20, 30]
    assert avg["labelled"] == 30 and len(avg["stages"]) == len(base["stages"]) + 1
    from scripts.ship_model import _stage_row

    assert "averaged" in _stage_row(st) and "10, 20, 30" in _stage_row(st)


def test_checkpoints_of_different_nets_are_not_averaged():
    base = load_checkpoint("models/tabla.pt")
    other = dict(base)
    other["nets"] = dict(base["nets"])
    other["nets"]["race"] = {"net_config": {**base["nets"]["race"]["net_config"], "hidden": 7}, "weights": {}}
    with pytest.raises(CheckpointError, match="net race differs"):
        average_states([base, other], ["a.pt", "b.pt"])
    with pytest.raises(CheckpointError, match="at least two"):
        average_states([base], ["a.pt"])


def test_the_average_command_writes_a_checkpoint_and_its_inference_file(tmp_path, capsys):
    from scripts.average import main

    assert main([str(tmp_path / "missing.pt"), "models/tabla.pt", "--out", str(tmp_path / "avg.pt")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["models/tabla.pt", "models/tabla.pt", "--out", str(tmp_path / "avg.pt")]) == 0
    nets, _ = load_nets(tmp_path / "avg.npz")
    want, _ = load_nets("models/tabla.npz")
    for n in want:
        for k, v in want[n][1].items():
            assert np.allclose(nets[n][1][k], v, atol=1e-6)


def test_sibling_fits_averaged_keep_the_stages_the_last_one_lacks_and_the_card_lists_them():
    from scripts.ship_model import _stage_rows

    base = load_checkpoint("models/tabla.pt")
    shared = list(base["stages"])
    fit = {**next(s for s in reversed(shared) if s.get("stage") == "fit"), "games": 7,
           "started_utc": "2099-01-01 10:50"}
    sibling = {**_shifted(base, 0.0, 10), "stages": shared + [fit]}
    later = {**fit, "started_utc": "2099-01-01 16:06"}
    last = {**_shifted(base, 0.2, 20), "stages": shared + [later]}
    avg = average_states([sibling, last], ["G1.pt", "I1.pt"])
    st = avg["stages"][-1]
    assert st["branches"] == [{"name": "G1.pt", "stages": [fit]}]
    rows = _stage_rows(avg["stages"])
    assert "`G1.pt`, from the same start" in rows[-2] and rows[-1].startswith("| 7 | (averaged in from `G1.pt`) fit")
    grown = {**last, "stages": shared + [{**later, "labelled": 99}]}  # an earlier checkpoint of the same run
    assert "branches" not in average_states([last, grown], ["a.pt", "b.pt"])["stages"][-1]
