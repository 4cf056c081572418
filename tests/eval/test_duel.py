"""The duel routine: duplicate dice, cubeless money scoring, player adapters."""
import numpy as np
import pytest

from engine.movegen import legal_results
from engine.position import Position, flip_array
from engine.movegen import children_batch
from engine.randpos import random_game_positions
from eval.pubeval import pubeval_scores, segment_argmax
from eval.duel import (
    EvaluatorPlayer,
    PubevalPlayer,
    RandomPlayer,
    duel,
    pair_ci95,
    play_pairs,
)
from engine.batch import result_points
from engine.dice import roll_stream


class PubevalEvaluator:
    """A fake evaluator: the side on roll wins more often the worse pubeval rates the
    board for the side that has just moved (a monotone map of pubeval)."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        self.calls += 1
        score = pubeval_scores(flip_array(boards))
        probs = np.zeros((len(boards), 5))
        probs[:, 0] = 1.0 / (1.0 + np.exp(score / 10.0))
        return probs


def test_each_dice_sequence_is_played_twice_with_sides_swapped():
    _, plies, history = play_pairs(RandomPlayer(np.random.default_rng(1)), PubevalPlayer(), 99, np.arange(6), record=True)
    for k in range(6):
        first, second = history[2 * k], history[2 * k + 1]
        common = min(len(first), len(second))
        assert common > 10
        dice_first = [tuple(d) for d, _, _ in first[:common]]
        dice_second = [tuple(d) for d, _, _ in second[:common]]
        assert dice_first == dice_second
        assert dice_first[0][0] != dice_first[0][1], "the opening roll is never a double"
    assert [tuple(d) for d, _, _ in history[0][:10]] != [tuple(d) for d, _, _ in history[2][:10]]


def test_a_deterministic_player_against_itself_scores_exactly_zero_with_duplicate_dice():
    result = duel(PubevalPlayer(), PubevalPlayer(), 200, seed=5)
    assert result.n == 200
    assert result.ppg == 0.0 and result.ci95 == 0.0
    assert result.wins == result.losses == 100


def test_random_against_random_is_about_even():
    result = duel(RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)), 600, seed=3)
    assert abs(result.ppg) < max(3 * result.ci95, 0.05)
    assert result.ci95 < 0.3


def test_pubeval_beats_random_clearly():
    result = duel(PubevalPlayer(), RandomPlayer(np.random.default_rng(4)), 200, seed=8)
    assert result.ppg - result.ci95 > 1.0
    assert result.gammons > result.gammons_lost


def test_evaluator_player_beats_random_and_is_called_once_per_ply():
    ev = PubevalEvaluator()
    result = duel(EvaluatorPlayer(ev), RandomPlayer(np.random.default_rng(4)), 100, seed=2)
    assert result.ppg - result.ci95 > 0.3
    assert ev.calls <= result.plies.max() + 1


def test_evaluator_player_maximises_the_flipped_evaluation():
    # with a monotone map of pubeval as the evaluator, the 1-ply choice is pubeval's own
    # choice (weights picked by the position after the play), unless the play wins
    rng = np.random.default_rng(9)
    boards = random_game_positions(rng, 300)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    chosen = EvaluatorPlayer(PubevalEvaluator()).choose_batch(boards, dice)
    children, offsets = children_batch(boards, dice)
    expected = children[segment_argmax(pubeval_scores(children), offsets)]
    np.testing.assert_array_equal(chosen, expected)


def test_figures_do_not_depend_on_batching_or_workers():
    a = duel(PubevalPlayer(), EvaluatorPlayer(PubevalEvaluator()), 60, seed=12, batch_pairs=7)
    b = duel(PubevalPlayer(), EvaluatorPlayer(PubevalEvaluator()), 60, seed=12, batch_pairs=64, workers=2)
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.plies, b.plies)
    assert a.ppg == b.ppg and a.n == 60


def test_odd_game_counts_round_up_to_whole_pairs():
    assert duel(PubevalPlayer(), PubevalPlayer(), 5, seed=1).n == 6


def test_opening_roll_of_a_stream_is_never_a_double():
    for pair in range(200):
        d = roll_stream(77, pair, 0)[0]
        assert d[0] != d[1]
    assert not np.array_equal(roll_stream(77, 0, 0), roll_stream(77, 0, 1))


@pytest.mark.parametrize(
    ("mine", "theirs", "value"),
    [
        ({}, {6: 14}, 1),  # the opponent has borne one off: single game
        ({}, {6: 15}, 2),  # none off: gammon
        ({}, {6: 14, 20: 1}, 3),  # a checker in the winner's home board (his 20 = our 5): backgammon
        ({}, {6: 14, 25: 1}, 3),  # a checker on the bar: backgammon
        ({}, {6: 14, 18: 1}, 2),  # his 18 is our 7: outside our home board
        ({1: 1}, {6: 15}, 0),  # the game goes on
    ],
)
def test_result_points_score_single_gammon_backgammon(mine, theirs, value):
    board = Position.from_points(mine, theirs).array()
    assert result_points(board[None])[0] == value
    if value:
        assert Position.from_array(board).result() == value


def test_evaluator_player_takes_the_exact_win_over_any_estimate():
    class Optimist:
        def evaluate(self, boards):
            p = np.zeros((len(boards), 5))
            p[:, 3] = 1.0  # every live position looks like a gammon loss for the side on roll
            return p

    # bearing off both checkers wins; the estimate for any other play is +2 for us
    board = Position.from_points({1: 1, 2: 1}, {6: 15}).array()
    chosen = EvaluatorPlayer(Optimist()).choose_batch(board[None], np.array([[2, 1]]))[0]
    assert result_points(chosen[None])[0] == 2
    assert any(np.array_equal(chosen, r) for r in legal_results(board, 2, 1))


def test_pair_ci_uses_pair_averages():
    mean, ci = pair_ci95(np.array([1, -1, 2, -2, 1, -1]))
    assert mean == 0.0 and ci == 0.0
    mean, ci = pair_ci95(np.array([1, 1, -1, -1]))
    assert mean == 0.0 and ci == pytest.approx(1.96 * np.sqrt(2.0) / np.sqrt(2.0))


def test_flipped_boards_are_handed_to_the_next_mover():
    _, _, history = play_pairs(PubevalPlayer(), PubevalPlayer(), 4, np.arange(1), record=True)
    game = history[0]
    for (_, _, after), (_, before_next, _) in zip(game, game[1:]):
        np.testing.assert_array_equal(flip_array(after), before_next)
