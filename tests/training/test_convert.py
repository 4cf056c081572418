"""Converting a one-net tabla-v1 checkpoint into a class-net set (training.convert)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from engine.randpos import random_game_positions
from models.encoding import encode, encode_contact
from models.network import NetConfig, NumpyNet, make_torch_net
from training.convert import V2_COLUMNS, convert_v1_state


def _v1_checkpoint(seed: int = 0) -> dict:
    torch.manual_seed(seed)
    cfg = NetConfig(hidden=16)
    net = make_torch_net(cfg)
    return {"net_config": cfg.to_dict(), "weights": net.state_dict(), "games": 1234, "positions": 99, "wall_seconds": 5.0}


def test_every_v1_input_sits_in_its_v2_column():
    boards = random_game_positions(np.random.default_rng(3), 200)
    assert np.array_equal(encode_contact(boards)[:, V2_COLUMNS], encode(boards))


def test_converted_contact_and_crashed_nets_value_positions_as_the_v1_net_did():
    ck = _v1_checkpoint()
    state = convert_v1_state(ck, race_hidden=8, seed=1)
    v1 = NumpyNet(NetConfig(**ck["net_config"]), {k: v.numpy() for k, v in ck["weights"].items()})
    boards = random_game_positions(np.random.default_rng(4), 300)
    for name in ("contact", "crashed"):
        d = state["nets"][name]
        net = NumpyNet(NetConfig(**d["net_config"]), {k: v.numpy() for k, v in d["weights"].items()})
        # the added inputs are 0, so only float32 summation order (which differs by CPU) may differ
        np.testing.assert_allclose(net.evaluate(boards), v1.evaluate(boards), rtol=0, atol=1e-6)
    assert state["nets"]["race"]["net_config"]["hidden"] == 8
    assert state["games"] == 1234 and state["optimizer"] == []
    assert state["stages"][-1]["converted_from"]["encoding"] == "tabla-v1"


def test_a_class_net_checkpoint_is_refused_for_conversion():
    state = convert_v1_state(_v1_checkpoint(), race_hidden=8, seed=1)
    with pytest.raises(ValueError, match="already holds a class-net set"):
        convert_v1_state(state, race_hidden=8, seed=1)


def test_train_from_v1_with_resume_is_refused_in_one_line(tmp_path, capsys):
    from scripts.tabla import main

    rc = main(["train", "--from-v1", "models/tabla.pt", "--resume", "x.pt", "--games", "1", "--out", str(tmp_path)])
    assert rc != 0
    err = capsys.readouterr().err.strip()
    assert "--from-v1 or --resume" in err and "\n" not in err
