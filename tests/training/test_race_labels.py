"""Race labels (:mod:`training.race_labels`): one-sided distributions combined into the
five probabilities of a race, checked against the database and dice arithmetic."""
from __future__ import annotations

import numpy as np
import pytest

from engine.bearoff import get_db, in_one_sided
from engine.classes import RACE, classify
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.position import Position
from engine.randpos import random_game_positions
from training.race_labels import RaceLabeller


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """Mover's checkers by point, opponent's by his own point numbers."""
    return Position.from_points(mine, theirs).array()


def _single_checker_dist(pips: int, length: int = 12) -> np.ndarray:
    """Exact P(n rolls) for a lone checker ``pips`` away from off: each roll moves it by its
    total (4x for doubles); with one checker every pip of the roll can be used."""
    dist = np.zeros(length)
    alive = {pips: 1.0}
    for n in range(1, length):
        nxt: dict[int, float] = {}
        for p, w in alive.items():
            for (hi, lo), rw in zip(ROLL_ARRAY, ROLL_WEIGHTS):
                move = 4 * hi if hi == lo else hi + lo
                if move >= p:
                    dist[n] += w * rw
                else:
                    nxt[p - move] = nxt.get(p - move, 0.0) + w * rw
        alive = nxt
    return dist


def test_with_every_checker_home_the_labels_are_the_one_sided_database_exactly():
    boards = random_game_positions(np.random.default_rng(3), 4000)
    home = boards[in_one_sided(boards)][:100]
    assert len(home) > 20
    np.testing.assert_array_equal(RaceLabeller(8, 1).race_probs(home), get_db().one_sided_probs(home))


def test_a_lone_checker_outside_races_as_dice_arithmetic_says():
    # mover: 14 off, one checker on his 9-point; opponent: 14 off, one on his 4-point
    board = _board({9: 1}, {4: 1})
    mine, theirs = _single_checker_dist(9), _single_checker_dist(4)
    exact_win = sum(mine[n] * theirs[n:].sum() for n in range(len(mine)))  # he rolls first: ties are his
    got = RaceLabeller(20000, 5).race_probs(board[None])[0]
    assert got[0] == pytest.approx(exact_win, abs=0.01)  # 20000 trials: sd below 0.0035
    assert got[1:].tolist() == [0.0, 0.0, 0.0, 0.0]  # 14 checkers off each: no gammons


def test_a_side_with_a_checker_in_the_winners_home_board_is_backgammoned():
    # mover bears off his last checker this roll; the opponent has all 15 on the board, one
    # still in the mover's home board (his 20-point): a certain backgammon
    board = _board({1: 1}, {20: 1, 6: 14})
    assert RaceLabeller(16, 1).race_probs(board[None])[0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    # all of the opponent's checkers home: a certain gammon, no backgammon
    board = _board({1: 1}, {6: 15})
    assert RaceLabeller(16, 1).race_probs(board[None])[0].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_a_side_in_backgammon_danger_brings_its_last_checker_out_first():
    # the mover bears off his 4 checkers on the 1-point in one roll with doubles (1/6), else
    # in two; the opponent's straggler on his 23-point must move 5 pips in his one roll in
    # between, which fails with 1-1, 2-1 and 3-1 (5/36): backgammon 1/6 + 5/6 * 5/36
    board = _board({1: 4}, {23: 1, 2: 3, 3: 3, 4: 3, 5: 3, 6: 2})
    p = RaceLabeller(20000, 2).race_probs(board[None])[0]
    assert p[0] == pytest.approx(1.0) and p[2] == pytest.approx(1 / 6 + 5 / 6 * 5 / 36, abs=0.01)
    assert p[1] >= p[2]


def test_race_probabilities_are_nested_and_seeded():
    boards = random_game_positions(np.random.default_rng(4), 6000)
    race = boards[classify(boards) == RACE][:80]
    assert len(race) > 20
    p = RaceLabeller(32, 9).race_probs(race)
    assert (p >= -1e-12).all() and (p <= 1 + 1e-12).all()
    assert (p[:, 2] <= p[:, 1] + 1e-12).all() and (p[:, 1] <= p[:, 0] + 1e-12).all()
    assert (p[:, 4] <= p[:, 3] + 1e-12).all() and (p[:, 3] <= 1 - p[:, 0] + 1e-12).all()
    np.testing.assert_array_equal(p, RaceLabeller(32, 9).race_probs(race))


def test_a_checker_on_a_bar_is_refused():
    board = _board({25: 1, 6: 14}, {6: 15})
    with pytest.raises(ValueError, match="bar"):
        RaceLabeller(4, 1).race_probs(board[None])
