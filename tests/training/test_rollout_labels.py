"""Rollout labels (:mod:`training.rollout_labels`): results of self-play decisions valued by
Tabla's own rollouts, exact where the evaluator is, the 1-ply value when cut after one
half-move, and only for the classes of the nets being refined."""
from __future__ import annotations

import numpy as np
import pytest

from engine.bearoff import get_db
from engine.classes import BEAROFF2, CONTACT, classify
from engine.movegen import legal_results
from engine.position import Position, flip_array
from engine.values import cubeless_equity, mover_equity
from models.checkpoint import load_evaluator
from training.config import RefineConfig
from training.labels import ply1_probs
from training.refine import make_generator
from training.rollout_labels import RolloutLabelGenerator, rollout_probs


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    return Position.from_points(mine, theirs).array()


def test_a_rollout_with_an_exact_evaluator_is_the_exact_value():
    # In the two-sided database the luck of every roll cancels the result's deviation.
    db = get_db()
    board = _board({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2, 6: 1})
    assert classify(board[None])[0] == BEAROFF2
    other = _board({2: 2, 4: 1}, {1: 3, 5: 1})
    boards = np.stack([board, other])
    got = rollout_probs(db.two_sided_probs, boards, trials=8, truncate=None, seed=4)
    assert np.allclose(got, db.two_sided_probs(boards), atol=1e-6)


def test_a_rollout_cut_after_one_half_move_is_the_one_ply_value():
    # After one half-move each trial holds the value after its roll's best play minus that
    # roll's luck: the mean over the 21 rolls, whatever the roll.
    ev = load_evaluator("models/tabla.npz")
    board = _board({6: 4, 8: 3, 13: 5, 24: 2, 3: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert classify(board[None])[0] == CONTACT
    got = rollout_probs(ev.evaluate, board, trials=3, truncate=1, seed=9)
    assert np.allclose(got, ply1_probs(ev.evaluate, board[None]), atol=1e-5)


def test_labels_are_rolled_out_results_of_decisions_of_the_refined_classes():
    ev = load_evaluator("models/tabla.npz")
    cfg = RefineConfig(labels="rollouts", nets=("contact",), parallel_games=2, candidates=2, rollout_others=1,
                       rollout_trials=2, rollout_truncate=2)
    gen = make_generator(cfg, np.random.default_rng(7))
    assert isinstance(gen, RolloutLabelGenerator)
    before = gen.boards.copy()
    boards, labels = gen.step(ev.evaluate)
    # both games are at the opening (contact): each decision labels up to 2 + 1 results
    assert gen.decisions == 2 and 2 * 2 <= len(boards) <= 2 * 3 and 0 <= gen.disputed <= 2
    assert labels.shape == (len(boards), 5) and (labels >= 0).all() and (labels <= 1).all()
    results = {c.tobytes() for b in before for d1 in range(1, 7) for d2 in range(1, d1) for c in legal_results(b, d1, d2)}
    assert all(flip_array(b).tobytes() in results for b in boards)  # labelled with the opponent on roll
    # a net that values no position of the games labels nothing
    race_only = make_generator(RefineConfig(labels="rollouts", nets=("race",), parallel_games=2), np.random.default_rng(7))
    b, t = race_only.step(ev.evaluate)
    assert len(b) == 0 and race_only.decisions == 0


def test_with_a_closeness_bound_only_close_decisions_are_rolled_out():
    """``rollout_close``: a decision whose two best results by the nets are further apart is
    clear and, with ``rollout_clear_share`` 0, never rolled out; every decision rolled out is
    close, and bound 0 with share 1 rolls out every decision as before."""
    ev = load_evaluator("models/tabla.npz")
    cfg = RefineConfig(labels="rollouts", nets=("contact",), parallel_games=8, candidates=2, rollout_others=0,
                       rollout_trials=2, rollout_truncate=1, rollout_close=0.02, rollout_clear_share=0.0)
    gen = make_generator(cfg, np.random.default_rng(5))
    for _ in range(12):
        boards, labels, groups = gen.step_grouped(ev.evaluate)
        for g in np.unique(groups):
            # the pair rolled out is the nets' two best results: their gap by the nets themselves
            eq = np.sort(mover_equity(ev.evaluate(boards[groups == g])))
            assert len(eq) == 2 and eq[1] - eq[0] <= 0.02 + 1e-6
    assert gen.clear > 0 and gen.decisions > 0
    every = make_generator(RefineConfig(labels="rollouts", nets=("contact",), parallel_games=8, candidates=2,
                                        rollout_others=0, rollout_trials=2, rollout_truncate=1, rollout_close=0.0,
                                        rollout_clear_share=1.0), np.random.default_rng(5))
    every.step_grouped(ev.evaluate)
    assert every.decisions == 8


def test_a_closeness_bound_out_of_range_is_refused():
    with pytest.raises(ValueError, match="rollout_close"):
        RefineConfig(labels="rollouts", rollout_close=-0.1)
    with pytest.raises(ValueError, match="rollout_clear_share"):
        RefineConfig(labels="rollouts", rollout_close=0.1, rollout_clear_share=1.5)


def _first_disputed_step(follow: bool):
    """Step 8 games of contact rollout labels until a decision is disputed; the step's labels,
    decisions and the games' boards after it."""
    ev = load_evaluator("models/tabla.npz")
    cfg = RefineConfig(labels="rollouts", nets=("contact",), parallel_games=8, candidates=3, rollout_others=3,
                       rollout_trials=2, rollout_truncate=2, rollout_follow=follow)
    gen = make_generator(cfg, np.random.default_rng(11))
    for _ in range(40):
        before = gen.disputed
        boards, labels, groups = gen.step_grouped(ev.evaluate)
        if gen.disputed > before:
            return boards, labels, groups, gen.boards
    raise AssertionError("no disputed decision in 40 plies")


def _best_per_decision(boards, labels, groups):
    eq = cubeless_equity(labels)  # the opponent, on roll there: the mover's best is his worst
    return [boards[np.flatnonzero(groups == g)[np.argmin(eq[groups == g])]].tobytes() for g in np.unique(groups)]


def test_a_decisions_results_share_its_number_and_numbers_are_not_reused():
    boards, labels, groups, _ = _first_disputed_step(follow=False)
    assert len(groups) == len(boards) and (np.diff(groups) >= 0).all()  # a decision's results lie together
    assert all(1 <= (groups == g).sum() <= 6 for g in np.unique(groups))


def test_following_the_rollouts_plays_the_result_they_value_best():
    boards, labels, groups, after = _first_disputed_step(follow=True)
    played = {b.tobytes() for b in after}
    assert all(best in played for best in _best_per_decision(boards, labels, groups))


def test_without_following_a_disputed_decision_plays_the_nets_best():
    boards, labels, groups, after = _first_disputed_step(follow=False)
    played = {b.tobytes() for b in after}
    assert not all(best in played for best in _best_per_decision(boards, labels, groups))


def test_exploring_plays_one_of_the_nets_next_best_results_and_counts_it():
    # two copies of one generator, one exploring with chance 1 among the 2 best, roll the same
    # dice: every game with a choice plays the nets' second-best result in the explorer
    import copy
    import dataclasses

    ev = load_evaluator("models/tabla.npz")
    cfg = RefineConfig(labels="rollouts", nets=("contact",), parallel_games=16, candidates=2, rollout_share=0.0)
    greedy = make_generator(cfg, np.random.default_rng(5))
    for _ in range(6):  # past the openings, to positions with choices
        greedy.step_grouped(ev.evaluate)
    explorer = copy.deepcopy(greedy)
    explorer.cfg = dataclasses.replace(cfg, explore=1.0)
    greedy.step_grouped(ev.evaluate)
    explorer.step_grouped(ev.evaluate)
    differs = [not np.array_equal(a, b) for a, b in zip(greedy.boards, explorer.boards)]
    assert explorer.explored == sum(differs) > 0 and greedy.explored == 0
    # the opponent, on roll after the play, is better off where the explorer played
    for g in np.flatnonzero(differs):
        opp_x, opp_g = ev.evaluate(explorer.boards[g][None]), ev.evaluate(greedy.boards[g][None])
        assert cubeless_equity(opp_x)[0] >= cubeless_equity(opp_g)[0] - 1e-6
