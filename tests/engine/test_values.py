"""One home for the values of the five probabilities, and one batched 1-ply chooser."""
import numpy as np

from engine.batch import one_ply_choice
from engine.dice import opening_rolls
from engine.heuristic import HeuristicEvaluator
from engine.movegen import children_batch
from engine.randpos import random_game_positions
from engine.search import Search
from engine.values import cubeless_equity, flip_probs, mover_equity, mover_values


def test_the_compiled_and_numpy_values_agree_and_flipping_twice_is_the_identity():
    p = np.random.default_rng(1).random((200, 5))
    probs, equity, order = mover_values(p)
    assert np.array_equal(probs, flip_probs(p)) and np.array_equal(equity, cubeless_equity(flip_probs(p)))
    assert np.array_equal(mover_equity(p), equity) and np.array_equal(flip_probs(flip_probs(p)), p)
    assert np.array_equal(equity[order], np.sort(equity)[::-1])


def test_the_one_ply_chooser_picks_the_plays_the_search_ranks_first():
    # the policy self-play trains (and EvaluatorPlayer plays) is the search's 1-ply choice
    rng = np.random.default_rng(4)
    boards = random_game_positions(rng, 60)
    dice = rng.integers(1, 7, size=(60, 2))
    ev = HeuristicEvaluator()
    children, offsets = children_batch(boards, dice)
    choice = one_ply_choice(children, offsets, ev.evaluate)
    search = Search(ev)
    for i in range(len(boards)):
        r = search.rank_plays(boards[i], int(dice[i, 0]), int(dice[i, 1]), ply=1)
        best = r.boards[r.order[0]]
        assert np.array_equal(children[choice.index[i]], best)


def test_opening_rolls_never_tie():
    d = opening_rolls(np.random.default_rng(2), 500)
    assert d.shape == (500, 2) and (d[:, 0] != d[:, 1]).all() and d.min() >= 1 and d.max() <= 6
