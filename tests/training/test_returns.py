"""Luck-adjusted self-play returns (:mod:`training.returns`), the ``returns`` labels of
refinement: exact where the evaluator is exact, the 1-ply value after one ply, unbiased."""
from __future__ import annotations

import numpy as np
import pytest

from engine.bearoff import get_db
from engine.classes import BEAROFF2, CONTACT, classify
from engine.position import Position
from training.config import RefineConfig
from training.labels import ply1_probs
from training.refine import keep_nets, make_generator
from training.returns import OPENING_WEIGHTS, ReturnGenerator


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """Mover's checkers by point, opponent's by his own point numbers."""
    return Position.from_points(mine, theirs).array()


def _play_out(gen: ReturnGenerator, evaluate, games: int, max_steps: int = 200) -> tuple[np.ndarray, np.ndarray]:
    bs, ts = [], []
    for _ in range(max_steps):
        b, t = gen.step(evaluate)
        bs.append(b)
        ts.append(t)
        if gen.games >= games:
            break
    return np.concatenate(bs), np.concatenate(ts)


def test_with_an_exact_evaluator_every_label_is_the_exact_value():
    # Both sides in the two-sided database: the evaluator is exact, the best play by it is
    # the best play, so every roll's luck cancels the result's deviation exactly.
    db = get_db()
    start = _board({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2, 6: 1})
    assert classify(start[None])[0] == BEAROFF2
    gen = ReturnGenerator(RefineConfig(parallel_games=8), np.random.default_rng(3), start=start)
    boards, labels = _play_out(gen, db.two_sided_probs, games=16)
    assert len(boards) > 30 and gen.games >= 16
    assert np.allclose(labels, db.two_sided_probs(boards), atol=2e-3)
    assert {0.0, 1.0} != set(np.round(labels[:, 0], 3))  # not just the 0/1 results


def test_a_game_cut_after_one_ply_is_labelled_with_its_one_ply_value():
    from models.checkpoint import load_evaluator

    ev = load_evaluator("models/tabla.npz")
    start = _board({6: 4, 8: 3, 13: 5, 24: 2, 3: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert classify(start[None])[0] == CONTACT
    gen = ReturnGenerator(RefineConfig(parallel_games=4, max_game_plies=1), np.random.default_rng(5), start=start)
    boards, labels = gen.step(ev.evaluate)
    assert len(boards) == 4 and (boards == start).all()
    want = ply1_probs(ev.evaluate, start[None])[0]
    assert np.allclose(labels, want, atol=1e-5)


def test_the_labels_of_a_biased_evaluator_are_unbiased():
    # An evaluator that adds 0.1 to every live position's winning chance plays the same
    # plays as the exact one, but its values are wrong. Its labels still average to the
    # exact values: the results correct the bias that a deeper search would repeat.
    db = get_db()

    def biased(boards):
        out = db.two_sided_probs(boards).astype(np.float64)
        out[:, 0] += 0.1
        return out

    start = _board({1: 2, 3: 1, 5: 2, 6: 1}, {2: 2, 4: 2, 6: 1, 5: 1})
    gen = ReturnGenerator(RefineConfig(parallel_games=64), np.random.default_rng(11), start=start)
    boards, labels = _play_out(gen, biased, games=1500, max_steps=400)
    exact = db.two_sided_probs(boards)[:, 0]
    assert len(boards) > 5000
    assert abs(float(np.mean(labels[:, 0] - exact))) < 0.01
    assert float(np.mean(biased(boards)[:, 0] - exact)) == pytest.approx(0.1)


def test_the_opening_roll_is_never_a_double_and_its_weights_sum_to_one():
    assert OPENING_WEIGHTS.sum() == pytest.approx(1.0)
    assert OPENING_WEIGHTS.min() == 0.0 and np.count_nonzero(OPENING_WEIGHTS) == 15


def test_refinement_drops_the_positions_of_nets_that_do_not_learn():
    contact = Position.start().array()
    race = _board({1: 2, 3: 2, 8: 11}, {2: 2, 4: 1, 9: 12})
    boards = np.stack([contact, race])
    targets = np.zeros((2, 5), np.float32)
    b, _ = keep_nets(boards, targets, ("contact", "crashed"))
    assert (b == contact[None]).all(axis=1).all() and len(b) == 1
    b, _ = keep_nets(boards, targets, ("race",))
    assert len(b) == 1 and (b[0] == race).all()


def test_an_unknown_label_kind_is_refused():
    with pytest.raises(ValueError, match="labels must be one of"):
        make_generator(RefineConfig(labels="gnubg"), np.random.default_rng(0))
