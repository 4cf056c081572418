"""HeuristicEvaluator: consistent probabilities, sensible orderings, exact finished games."""
import numpy as np

from engine.evaluator import Evaluator
from engine.values import cubeless_equity
from engine.heuristic import HeuristicEvaluator
from engine.position import Position
from engine.randpos import random_game_positions, random_scatter_positions

H = HeuristicEvaluator()


def ev(p):
    return H.evaluate(p.array()[None, :])[0]


def test_implements_the_evaluator_protocol():
    assert isinstance(H, Evaluator)


def test_probabilities_are_consistent_on_a_batch():
    rng = np.random.default_rng(3)
    b = np.concatenate([random_game_positions(rng, 500), random_scatter_positions(rng, 500)])
    p = H.evaluate(b)
    assert p.shape == (1000, 5) and np.all(p >= 0) and np.all(p <= 1)
    assert np.all(p[:, 2] <= p[:, 1] + 1e-12) and np.all(p[:, 1] <= p[:, 0] + 1e-12)
    assert np.all(p[:, 4] <= p[:, 3] + 1e-12) and np.all(p[:, 3] <= 1 - p[:, 0] + 1e-12)


def test_batch_equals_one_by_one():
    b = random_game_positions(np.random.default_rng(4), 20)
    assert np.allclose(H.evaluate(b), np.stack([H.evaluate(x[None, :])[0] for x in b]))


def test_race_leader_is_favoured_and_a_bigger_lead_is_better():
    even = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
    ahead = Position.from_points({3: 5, 2: 5, 1: 5}, {6: 5, 5: 5, 4: 5})
    behind = Position.from_points({6: 5, 5: 5, 4: 5}, {3: 5, 2: 5, 1: 5})
    assert ev(ahead)[0] > ev(even)[0] > ev(behind)[0]
    assert ev(even)[0] > 0.5  # being on roll is worth something


def test_an_exposed_opposing_blot_is_good_for_the_player_on_roll():
    safe = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    blot = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 7: 1, 24: 2})  # 6 from our 24
    assert cubeless_equity(ev(blot)) > cubeless_equity(ev(safe))


def test_finished_games_are_exact():
    lost_gammon = Position.from_points({13: 15}, {})
    assert np.allclose(ev(lost_gammon), [0, 0, 0, 1, 0])
    won_single = Position.from_points({}, {1: 3})  # the player on roll has all 15 off
    assert np.allclose(ev(won_single), [1, 0, 0, 0, 0])
