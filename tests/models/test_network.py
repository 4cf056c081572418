"""Value network: consistent probabilities, numpy and torch agree, checkpoints."""
import numpy as np
import pytest

from engine.evaluator import Evaluator
from engine.randpos import random_game_positions
from models.checkpoint import CheckpointError, export_npz, load_checkpoint, load_evaluator, load_npz, save_checkpoint
from models.encoding import encode
from models.network import NetConfig, NumpyNet, make_torch_net, numpy_weights

torch = pytest.importorskip("torch")


def _net(seed=0, hidden=16):
    torch.manual_seed(seed)
    cfg = NetConfig(hidden=hidden)
    net = make_torch_net(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(8.0)  # spread the outputs so the consistency check bites
    return cfg, net


def test_outputs_are_consistent_probabilities():
    cfg, net = _net()
    boards = random_game_positions(np.random.default_rng(1), 500)
    p = NumpyNet(cfg, numpy_weights(net)).evaluate(boards)
    assert p.shape == (500, 5)
    assert (p >= 0).all() and (p <= 1).all()
    assert (p[:, 2] <= p[:, 1] + 1e-7).all() and (p[:, 1] <= p[:, 0] + 1e-7).all()
    assert (p[:, 4] <= p[:, 3] + 1e-7).all() and (p[:, 3] <= 1 - p[:, 0] + 1e-7).all()


def test_numpy_inference_equals_torch():
    cfg, net = _net(1)
    boards = random_game_positions(np.random.default_rng(2), 200)
    with torch.no_grad():
        t = net(torch.from_numpy(encode(boards))).numpy()
    n = NumpyNet(cfg, numpy_weights(net)).evaluate(boards)
    assert np.allclose(t, n, atol=1e-5)
    assert isinstance(NumpyNet(cfg, numpy_weights(net)), Evaluator)


def test_hidden_sums_from_an_anchor_row_equal_the_dense_product():
    # a row is summed over its non-zero inputs or, when it differs from the last directly
    # summed row in fewer inputs, as that row's sum plus the differences: the dense
    # product's values either way, within float rounding
    from engine.movegen import legal_results

    from models.network import _hidden_anchored
    cfg, net = _net(seed=3)
    numpy_net = NumpyNet(cfg, numpy_weights(net))
    start = random_game_positions(np.random.default_rng(4), 6)
    # the plays of a few rolls (neighbours that differ in a few inputs) and unrelated positions
    boards = np.concatenate([legal_results(b, 6, 4) for b in start[:3]] + [start])
    x = encode(boards)
    assert (x == 0).mean() > 0.5
    h = np.empty((len(x), cfg.hidden), np.float32)
    _hidden_anchored(x, numpy_net._neg_w1, numpy_net._neg_b1, h)
    dense = -(x.astype(np.float64) @ numpy_net.w1.astype(np.float64) + numpy_net.b1)
    np.testing.assert_allclose(h, dense, atol=2e-4)
    with torch.no_grad():
        ref = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(numpy_net.evaluate(boards), ref, atol=2e-6)


def test_a_position_alone_and_first_in_a_batch_is_summed_directly():
    # no anchor before the first row: its value is the same alone or leading any batch
    cfg, net = _net(seed=5)
    numpy_net = NumpyNet(cfg, numpy_weights(net))
    boards = random_game_positions(np.random.default_rng(6), 40)
    alone = np.concatenate([numpy_net.evaluate(boards[i:i + 1]) for i in range(len(boards))])
    leading = np.array([numpy_net.evaluate(np.roll(boards, -i, axis=0))[0] for i in range(len(boards))])
    np.testing.assert_array_equal(alone, leading)


def test_checkpoint_round_trip(tmp_path):
    cfg, net = _net(2)
    state = {"net_config": cfg.to_dict(), "weights": {k: v.clone() for k, v in net.state_dict().items()}, "games": 7}
    save_checkpoint(tmp_path / "a.pt", state)
    back = load_checkpoint(tmp_path / "a.pt")
    assert back["games"] == 7 and back["format_version"] == 1 and "git_commit" in back
    export_npz(tmp_path / "a.npz", cfg, numpy_weights(net), {"games": 7})
    cfg2, w2, meta = load_npz(tmp_path / "a.npz")
    assert cfg2 == cfg and meta["games"] == 7
    boards = random_game_positions(np.random.default_rng(3), 50)
    assert np.allclose(load_evaluator(tmp_path / "a.pt").evaluate(boards), load_evaluator(tmp_path / "a.npz").evaluate(boards))
    assert not list(tmp_path.glob("*.tmp")), "no temporary file is left behind"


@pytest.mark.parametrize("suffix", [".pt", ".npz"])
def test_truncated_checkpoint_gives_a_clear_error(tmp_path, suffix):
    cfg, net = _net(3)
    path = tmp_path / f"m{suffix}"
    if suffix == ".pt":
        save_checkpoint(path, {"net_config": cfg.to_dict(), "weights": net.state_dict()})
    else:
        export_npz(path, cfg, numpy_weights(net), {})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="not a readable"):
        load_evaluator(path)


def test_foreign_and_missing_files_give_clear_errors(tmp_path):
    foreign = tmp_path / "x.npz"
    np.savez(foreign, a=np.zeros(3))
    with pytest.raises(CheckpointError):
        load_evaluator(foreign)
    other = tmp_path / "y.pt"
    torch.save({"hello": 1}, other)
    with pytest.raises(CheckpointError, match="not a Tabla checkpoint"):
        load_evaluator(other)
    with pytest.raises(CheckpointError, match="not found"):
        load_evaluator(tmp_path / "missing.npz")
    text = tmp_path / "t.npz"
    text.write_text("not a model")
    with pytest.raises(CheckpointError):
        load_evaluator(text)
