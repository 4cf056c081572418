"""The shape inputs of ``tabla-contact-v5`` (:func:`models.features.shape_features`), each
worked out by hand, and the encoding that adds them to ``tabla-contact-v2``.

Positions are written in the mover's numbering for both sides: ``me`` (positive, moving
from 24 down to 1, bar 25) and ``them`` (negative, moving up from their bar at 0).
"""
import numpy as np
import pytest

from engine.position import flip_array
from engine.randpos import random_game_positions, random_scatter_positions
from models.encoding import NUM_INPUTS_V2, NUM_INPUTS_V5, SHAPE_INPUTS, encode_contact, encode_contact_v5
from models.features import ESCAPE_TABLE, escape_from, shape_features
from tests.rules_helpers import board


def shape(b) -> np.ndarray:
    out = np.zeros(SHAPE_INPUTS)
    shape_features(b, ESCAPE_TABLE, out)
    return out


def test_free_pips_count_only_the_checkers_already_past_the_rearmost_opponent():
    # their rearmost checkers are on my 10-point: my 13 checkers on the 6 are past them
    # (13 × 6 = 78 pips), my two on the 24 are not
    b = board({24: 2, 6: 13}, {10: 15})
    assert shape(b)[0] == pytest.approx(78 / 100)
    assert shape(board({24: 2, 6: 13}, {1: 15}))[0] == 0.0  # nothing past their 1-point checkers


def test_rear_spread_is_the_mean_square_distance_of_the_checkers_behind_the_mean():
    # mean point (2 × 24 + 13 × 6) / 15 = 8.4; only the two on the 24 are behind it, 15.6 away
    b = board({24: 2, 6: 13}, {10: 15})
    assert shape(b)[1] == pytest.approx(15.6**2 / 400)
    # a checker on the bar counts from 25: mean (25 + 14 × 6) / 15, the bar checker 17.73 behind
    mean = (25 + 84) / 15
    assert shape(board({25: 1, 6: 14}, {10: 15}))[1] == pytest.approx((25 - mean) ** 2 / 400)
    # every checker on one point: none behind the mean
    assert shape(board({6: 15}, {10: 15}))[1] == 0.0


def test_escape_mobility_weights_each_checker_outside_home_by_its_way_home():
    # nothing they hold lies within 12 points in front of the 24 (their point is 14 away):
    # both checkers escape with every roll, each 18 pips from home
    b = board({24: 2, 6: 13}, {10: 15})
    assert shape(b)[2] == pytest.approx(2 * 1.0 * 18 / 100)
    # behind their four points 9-12, a checker on the 15 escapes only with 6-1, 6-2 and 5-2
    # (it must start with the 1 or the 2 and land beyond the 9); 9 pips from home
    b = board({15: 1, 6: 14}, {9: 2, 10: 2, 11: 2, 12: 2, 1: 7})
    assert escape_from(b, 15, ESCAPE_TABLE) == pytest.approx(6 / 36)
    assert shape(b)[2] == pytest.approx(6 / 36 * 9 / 100)
    # a checker on the 7-point is one pip from home and always free
    assert shape(board({7: 1, 6: 14}, {9: 2, 10: 2, 11: 2, 12: 2, 1: 7}))[2] == pytest.approx(1 / 100)


def test_wall_ahead_is_the_worst_escape_between_the_rearmost_checker_and_home():
    # from the 15: 6/36 (above); from the 14: any 6 lands on the open 8, and 5-1 by the 13: 13/36;
    # from the 13 any 5 or 6: 20/36; lower points escape more. The worst is the 15's.
    b = board({15: 1, 6: 14}, {9: 2, 10: 2, 11: 2, 12: 2, 1: 7})
    assert escape_from(b, 14, ESCAPE_TABLE) == pytest.approx(13 / 36)
    assert escape_from(b, 13, ESCAPE_TABLE) == pytest.approx(20 / 36)
    assert shape(b)[3] == pytest.approx(1 - 6 / 36)
    # every checker home: no wall to pass
    assert shape(board({6: 15}, {9: 2, 10: 2, 11: 2, 12: 2, 1: 7}))[3] == 0.0
    # the wall behind the rearmost checker does not count: a checker on the 8 has only open points ahead
    assert shape(board({8: 1, 6: 14}, {9: 2, 10: 2, 11: 2, 12: 2, 1: 7}))[3] == 0.0


def test_the_v5_encoding_is_v2_followed_by_each_sides_shape_inputs():
    rng = np.random.default_rng(5)
    boards = np.concatenate([random_game_positions(rng, 300), random_scatter_positions(rng, 300)])
    x = encode_contact_v5(boards)
    assert x.shape == (len(boards), NUM_INPUTS_V5) and NUM_INPUTS_V5 == NUM_INPUTS_V2 + 2 * SHAPE_INPUTS
    np.testing.assert_array_equal(x[:, :NUM_INPUTS_V2], encode_contact(boards))
    flipped = flip_array(boards)
    for i in (0, 7, 311, 599):
        mine, theirs = shape(boards[i]), shape(flipped[i])
        np.testing.assert_allclose(x[i, NUM_INPUTS_V2:NUM_INPUTS_V2 + SHAPE_INPUTS], mine, rtol=1e-6)
        np.testing.assert_allclose(x[i, NUM_INPUTS_V2 + SHAPE_INPUTS:], theirs, rtol=1e-6)
    # the flipped board swaps the two blocks
    y = encode_contact_v5(flipped)
    np.testing.assert_allclose(x[:, NUM_INPUTS_V2:NUM_INPUTS_V2 + SHAPE_INPUTS], y[:, NUM_INPUTS_V2 + SHAPE_INPUTS:])


def test_a_contact_net_moved_to_v5_computes_what_it_did_and_learns_only_the_shape_inputs():
    import torch

    from models.network import NetConfig, NumpyNet
    from tests.models.test_bearoff_exposure import _v2_checkpoint
    from training.netset import TorchNets
    from training.widen import extend_inputs

    base = _v2_checkpoint()
    moved = extend_inputs(base, "contact", "tabla-contact-v5")
    assert moved["nets"]["contact"]["net_config"]["inputs"] == NUM_INPUTS_V5
    boards = random_game_positions(np.random.default_rng(8), 40)
    assert (encode_contact_v5(boards)[:, NUM_INPUTS_V2:] > 0).any()

    def probs(d):
        return NumpyNet(NetConfig(**d["net_config"]), {k: v.numpy() for k, v in d["weights"].items()}).evaluate(boards)

    old, new = probs(base["nets"]["contact"]), probs(moved["nets"]["contact"])
    assert np.allclose(old, new, atol=1e-6) and np.ptp(old[:, 0]) > 1e-3

    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in moved["nets"].items()})
    nets.load_state(moved["nets"])
    opts = {"contact": torch.optim.Adam(nets.new_input_params("contact"), lr=0.05)}
    before = {k: v.detach().clone() for k, v in nets.modules["contact"].state_dict().items()}
    nets.modules = {"contact": nets.modules["contact"]}
    targets = np.tile(np.array([[0.5, 0.1, 0.0, 0.1, 0.0]], np.float32), (len(boards), 1))
    for _ in range(5):
        nets.train_step(boards, targets, opts, 0.05)
    after = nets.modules["contact"].state_dict()
    assert torch.equal(after["fc1.weight"][:, :NUM_INPUTS_V2], before["fc1.weight"][:, :NUM_INPUTS_V2])
    assert not torch.equal(after["fc1.weight"][:, NUM_INPUTS_V2:], before["fc1.weight"][:, NUM_INPUTS_V2:])
