"""pubeval (Tesauro's published linear evaluator) equals GNU Backgammon's copy (gnubg-nn)."""
import numpy as np
import pytest

from engine.movegen import children_batch, legal_results
from engine.position import Position, flip_array, to_gnubg_board
from engine.randpos import random_game_positions, random_scatter_positions
from eval.pubeval import WIN_SCORE, choose, choose_batch, is_race_batch, pubeval_inputs, pubeval_scores

gnubg_nn = pytest.importorskip("gnubg_nn")


def _positions(seed: int, n_game: int, n_scatter: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([random_game_positions(rng, n_game), random_scatter_positions(rng, n_scatter)])


def _apply_gnubg_play(board: np.ndarray, moves) -> np.ndarray:
    """Apply gnubg-nn's flat 0-based (from, to) list (24 = bar, negative to = off)."""
    b = np.array(board, dtype=np.int16)
    for i in range(0, len(moves), 2):
        f, t = moves[i], moves[i + 1]
        if f < 0:
            break
        b[f + 1] -= 1
        if t >= 0:
            if b[t + 1] == -1:
                b[t + 1] = 0
                b[0] -= 1
            b[t + 1] += 1
    return b.astype(np.int8)


def test_scores_equal_gnubg_pub_eval_score_on_random_positions():
    # gnubg-nn scores the board as the side that has just moved, i.e. our flipped view,
    # and picks the weights by classifying that board itself
    boards = _positions(5, 1500, 500)
    ours = pubeval_scores(flip_array(boards))
    theirs = np.array([gnubg_nn.pub_eval_score(to_gnubg_board(b)) for b in boards])
    np.testing.assert_allclose(ours, theirs, atol=1e-4)


def test_chosen_play_equals_gnubg_pub_best_move_on_4000_seeded_cases():
    boards = _positions(20261203, 3000, 1000)
    rng = np.random.default_rng(7)
    differences = []
    for b in boards:
        d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
        theirs = _apply_gnubg_play(b, gnubg_nn.pub_best_move(to_gnubg_board(b), d1, d2))
        ours = choose(b, d1, d2)
        if np.array_equal(ours, theirs):
            continue
        # two plays that both bear off the last checker tie at WIN_SCORE: either may be picked
        if not (pubeval_scores(ours[None], False)[0] == pubeval_scores(theirs[None], False)[0] == WIN_SCORE):
            differences.append((b.tolist(), d1, d2))
    assert differences == []


def test_batched_choice_equals_one_at_a_time_choice():
    boards = _positions(11, 300, 100)
    rng = np.random.default_rng(3)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    children, offsets = children_batch(boards, dice)
    picked = children[choose_batch(boards, dice, children, offsets)]
    single = np.array([choose(b, int(d[0]), int(d[1])) for b, d in zip(boards, dice)])
    np.testing.assert_array_equal(picked, single)


def test_race_weights_are_chosen_by_the_position_before_the_play():
    # contact before the play: the mover's last checker on 13 can pass the opponent's on 12
    before = Position.from_points({13: 1, 1: 14}, {13: 1, 1: 14}).array()
    assert not is_race_batch(before)[0]
    children = legal_results(before, 6, 5)
    assert is_race_batch(children).any()
    chosen = choose(before, 6, 5)
    contact = pubeval_scores(children, False)
    np.testing.assert_array_equal(chosen, children[int(np.argmax(contact))])


def test_bearing_off_the_last_checker_scores_the_win_constant():
    one_left = Position.from_points({1: 1}, {6: 15}).array()
    assert pubeval_scores(one_left[None], True)[0] < 1000.0
    won = Position.from_points({}, {6: 15}).array()
    assert pubeval_scores(won[None], True)[0] == WIN_SCORE


def test_inputs_encode_points_from_24_down_with_bar_and_off():
    pos = Position.from_points({24: 1, 1: 6, 13: 3}, {25: 2, 2: 1}).array()
    x = pubeval_inputs(pos)[0]
    assert x[1] == 1.0  # point 24: one own checker
    assert x[5 * 11 + 2] == 1.0 and x[5 * 11 + 3] == 1.0  # point 13: three
    assert x[5 * 23 + 2] == 1.0 and x[5 * 23 + 4] == 1.5  # point 1: six
    assert x[5 * 1 + 0] == 1.0  # opponent blot on his 2 = our 23
    assert x[120] == 1.0 and x[121] == pytest.approx(5 / 15)
