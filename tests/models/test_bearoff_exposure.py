"""The bear-off exposure input of ``tabla-contact-v3`` (:func:`models.features.bearoff_exposure`),
worked out by hand; moving a net to that encoding; and training only the new inputs' weights.

Positions are written in the mover's numbering for both sides: ``me`` (positive, moving
from 24 down to 1, bar 25) and ``them`` (negative, moving up from their bar at 0).
"""
import numpy as np
import pytest

from engine.movegen import new_workspace
from engine.position import flip_array
from models.encoding import NUM_INPUTS_V2, NUM_INPUTS_V3, NUM_INPUTS_V4, encode_contact, encode_contact_v3, encode_contact_v4
from models.features import DBLS, DIRECT, FREE_SHOTS, ROLLS, SUMS, WEIGHTS, bearoff_exposure
from tests.rules_helpers import board


def exposure(b) -> float:
    ws8, ws64 = new_workspace(256)
    return bearoff_exposure(b, ws8, ws64, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, FREE_SHOTS, np.zeros(3))


def test_a_last_checker_on_the_six_point_past_a_checker_on_the_ace_point_is_exposed_101_of_1296():
    # my last checker (14 off) on my 6-point, their checker on my ace point. Every roll of 6
    # pips or more bears it off (exposure 0). The others leave it a blot:
    #   1-1 (1/36): 6 -> 2, one away from their checker: hit by any 1, 11/36;
    #   2-1 (2/36): 6 -> 3, two away: any 2 or 1-1, 12/36;
    #   3-1 (2/36): 6 -> 2: 11/36;
    #   4-1, 3-2 (2/36 each): 6 -> 1 hitting; their checker enters on my ace point with a 1: 11/36.
    b = board({6: 1}, {1: 1, 24: 14})
    want = (1 * 11 + 2 * 12 + 2 * 11 + 2 * 11 + 2 * 11) / 1296
    assert exposure(b) == pytest.approx(want) == pytest.approx(101 / 1296)


def test_with_a_one_two_checkers_on_the_deuce_point_must_hit_and_leave_a_shot():
    # two checkers on my 2-point (13 off), their checker on my ace point. A roll with a 1 and
    # another die bears one checker off and must play 2/1* with the 1: the blot on my ace point
    # is hit by their entering 1s (11/36; keeping the blot on the 2-point instead, 2s and 1-1
    # hit it: 12/36). 1-1 bears both off (2/1*, 2/1, 1/off, 1/off) and every other roll too.
    b = board({2: 2}, {1: 1, 24: 14})
    assert exposure(b) == pytest.approx(5 * 2 / 36 * 11 / 36)


def test_no_exposure_without_a_bear_off_against_contact():
    assert exposure(board({7: 1, 6: 1}, {1: 1, 24: 14})) == 0.0  # a checker outside my home board
    assert exposure(board({6: 1, 5: 1}, {20: 1, 24: 14})) == 0.0  # nothing of theirs on my home points
    assert exposure(board({25: 1, 6: 1}, {1: 1, 24: 14})) == 0.0  # on the bar


def test_the_v3_encoding_is_v2_followed_by_each_sides_exposure():
    b = board({6: 1}, {1: 1, 24: 14})
    x = encode_contact_v3(b)[0]
    assert x.shape == (NUM_INPUTS_V3,) == (NUM_INPUTS_V2 + 2,)
    assert np.array_equal(x[:NUM_INPUTS_V2], encode_contact(b)[0])
    assert x[NUM_INPUTS_V2] == pytest.approx(101 / 1296) and x[NUM_INPUTS_V2 + 1] == 0.0
    y = encode_contact_v3(flip_array(b))[0]
    assert y[NUM_INPUTS_V2] == 0.0 and y[NUM_INPUTS_V2 + 1] == pytest.approx(101 / 1296)


def test_boards_alike_on_the_home_points_and_the_bar_share_one_exposure_in_a_batch():
    # the encoder computes each exposure key once a call: a batch of bear-offs against
    # contact that repeat their home boards (as the plays of one roll do for the side on
    # roll) gets every board's own exposure, the same as one board at a time
    rng = np.random.default_rng(8)
    homes = []
    for _ in range(40):
        me = {p: int(c) for p, c in zip(range(1, 7), rng.multinomial(int(rng.integers(1, 9)), [1 / 6] * 6)) if c}
        them = {int(rng.integers(1, 6)): int(rng.integers(1, 3)), 24: 3}
        homes.append((me, them))
    boards = []
    for me, them in homes:
        for outside in range(4):  # the same home points, the other side's checkers elsewhere differ
            t = dict(them)
            t[13 + outside] = t.get(13 + outside, 0) + 1
            b = board(me, t)
            boards += [b, flip_array(b)]
    boards = np.array(boards, dtype=np.int8)
    x = encode_contact_v3(boards)
    one_by_one = [(exposure(b), exposure(flip_array(b))) for b in boards]
    np.testing.assert_array_equal(x[:, NUM_INPUTS_V2:NUM_INPUTS_V3], np.array(one_by_one, dtype=np.float32))
    assert (x[:, NUM_INPUTS_V2] > 0).sum() > 50


def test_the_v4_encoding_adds_each_sides_exposure_times_its_checkers_left():
    b = board({6: 1}, {1: 1, 24: 14})  # my last checker: 1 left; theirs: 15 left, not bearing off
    x = encode_contact_v4(b)[0]
    assert x.shape == (NUM_INPUTS_V4,) and np.array_equal(x[:NUM_INPUTS_V3], encode_contact_v3(b)[0])
    assert x[NUM_INPUTS_V3] == pytest.approx(101 / 1296 / 15) and x[NUM_INPUTS_V3 + 1] == 0.0
    two = board({2: 2}, {1: 1, 24: 14})  # two left, exposure 110/1296
    assert encode_contact_v4(two)[0, NUM_INPUTS_V3] == pytest.approx(110 / 1296 * 2 / 15)
    y = encode_contact_v4(flip_array(two))[0]
    assert y[NUM_INPUTS_V3] == 0.0 and y[NUM_INPUTS_V3 + 1] == pytest.approx(110 / 1296 * 2 / 15)


torch = pytest.importorskip("torch")


def _v2_checkpoint() -> dict:
    """A small class-net checkpoint (16 hidden units, random weights) whose contact and crashed
    nets read ``tabla-contact-v2``."""
    from training.config import TrainConfig
    from training.netset import TorchNets, new_configs

    torch.manual_seed(3)
    nets = TorchNets(new_configs(TrainConfig(hidden=16, race_hidden=4)))
    with torch.no_grad():
        for m in nets.modules.values():
            m.fc1.weight.mul_(4.0)  # outputs that move with the inputs
    return {"nets": nets.state(), "games": 0, "stages": []}


def _v3_checkpoint():
    from training.widen import extend_inputs

    return extend_inputs(_v2_checkpoint(), "crashed", "tabla-contact-v3")


def test_a_net_moved_to_v3_computes_what_it_did():
    from engine.classes import CRASHED, classify
    from models.network import NetConfig, NumpyNet

    old = _v2_checkpoint()["nets"]["crashed"]
    new = _v3_checkpoint()["nets"]["crashed"]
    assert new["net_config"]["encoding"] == "tabla-contact-v3" and new["net_config"]["inputs"] == NUM_INPUTS_V3
    boards = np.array([board({6: 1}, {1: 1, 24: 14}), board({2: 2}, {1: 1, 24: 14}), board({6: 3, 5: 2}, {3: 2, 24: 13})])
    assert (classify(boards) == CRASHED).all() and (encode_contact_v3(boards)[:, NUM_INPUTS_V2:] > 0).any()

    def probs(d):
        return NumpyNet(NetConfig(**d["net_config"]), {k: v.numpy() for k, v in d["weights"].items()}).evaluate(boards)

    assert np.allclose(probs(old), probs(new), atol=1e-6)
    assert np.ptp(probs(old)[:, 0]) > 1e-3  # the boards are told apart


def test_only_an_encoding_that_extends_the_nets_own_is_accepted():
    from training.widen import extend_inputs

    with pytest.raises(ValueError, match="does not extend the race net's encoding"):
        extend_inputs(_v2_checkpoint(), "race", "tabla-contact-v3")
    with pytest.raises(ValueError, match="does not extend"):
        extend_inputs(_v3_checkpoint(), "crashed", "tabla-contact-v3")  # already there


def _train_new_inputs_of_crashed(ck: dict) -> tuple[dict, dict]:
    """The crashed net's weights before and after 5 steps that train only its added inputs."""
    from models.network import NetConfig
    from training.netset import TorchNets

    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()})
    nets.load_state(ck["nets"])
    with pytest.raises(ValueError, match="the contact net reads tabla-contact-v2, which adds no inputs"):
        nets.new_input_params("contact")
    opts = {"crashed": torch.optim.Adam(nets.new_input_params("crashed"), lr=0.05)}
    boards = np.array([board({6: 1}, {1: 1, 24: 14}), board({2: 2}, {1: 1, 24: 14})] * 8)
    before = {k: v.detach().clone() for k, v in nets.modules["crashed"].state_dict().items()}
    targets = np.tile(np.array([[0.5, 0.0, 0.0, 0.0, 0.0]], np.float32), (len(boards), 1))
    nets.modules = {"crashed": nets.modules["crashed"]}  # only the net being trained
    for _ in range(5):
        nets.train_step(boards, targets, opts, 0.05)
    return before, nets.modules["crashed"].state_dict()


def test_training_only_the_new_inputs_moves_nothing_else():
    before, after = _train_new_inputs_of_crashed(_v3_checkpoint())
    assert torch.equal(after["fc1.weight"][:, :NUM_INPUTS_V2], before["fc1.weight"][:, :NUM_INPUTS_V2])
    assert not torch.equal(after["fc1.weight"][:, NUM_INPUTS_V2:], before["fc1.weight"][:, NUM_INPUTS_V2:])
    for k in ("fc1.bias", "fc2.weight", "fc2.bias"):
        assert torch.equal(after[k], before[k])


def test_the_widen_command_moves_a_net_and_says_so_on_the_card(tmp_path, capsys):
    from models.checkpoint import load_checkpoint, save_checkpoint
    from scripts.ship_model import _stage_row
    from scripts.widen import main

    base, out = tmp_path / "v2.pt", tmp_path / "v3.pt"
    save_checkpoint(base, _v2_checkpoint())
    assert main(["--checkpoint", str(base), "--out", str(out)]) == 2
    assert "give --hidden or --encoding" in capsys.readouterr().err
    assert main(["--checkpoint", str(base), "--net", "race", "--encoding", "tabla-contact-v3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: tabla-contact-v3 does not extend") and err.count("\n") == 1
    assert main(["--checkpoint", str(base), "--net", "crashed", "--encoding", "tabla-contact-v3", "--out", str(out)]) == 0
    st = load_checkpoint(out)["stages"][-1]
    assert _stage_row(st).endswith("the crashed net moved from tabla-contact-v2 (242 inputs) to tabla-contact-v3 "
                                   "(`python -m scripts.widen --encoding`), the added inputs at zero weight: outputs unchanged |")


def test_a_v3_net_moves_to_v4_and_learns_only_the_products():
    from training.widen import extend_inputs

    ck = extend_inputs(_v3_checkpoint(), "crashed", "tabla-contact-v4")
    assert ck["nets"]["crashed"]["net_config"]["inputs"] == NUM_INPUTS_V4
    before, after = _train_new_inputs_of_crashed(ck)
    assert torch.equal(after["fc1.weight"][:, :NUM_INPUTS_V3], before["fc1.weight"][:, :NUM_INPUTS_V3])
    assert not torch.equal(after["fc1.weight"][:, NUM_INPUTS_V3:], before["fc1.weight"][:, NUM_INPUTS_V3:])
