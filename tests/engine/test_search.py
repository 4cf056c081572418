"""Expectimax search: ply definitions, batching, pruning, exact terminal values."""
from __future__ import annotations

import numpy as np
import pytest

from engine.cube import CubeState
from engine.dice import ALL_ROLLS, Roll
from engine.evaluator import terminal_probs
from engine.values import cubeless_equity, flip_probs
from engine.movegen import legal_positions
from engine.position import Position, flip_array
from engine.search import MoveFilter, Search, SearchError

WIDE = MoveFilter(max_candidates=1000, tolerance=1e9)


class RandomLinearEvaluator:
    """A deterministic fake: probabilities from fixed random linear features of the board.

    Antisymmetric: evaluating a board equals flipping the evaluation of its mirror, so a
    mirror-symmetric position is worth exactly 0 cubeless.
    """

    def __init__(self, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.w = rng.normal(0, 0.25, size=26)
        self.g = rng.normal(0, 1.5, size=26)
        self.calls = 0
        self.seen = 0

    def _half(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = b.astype(np.float64) @ self.w
        gz = np.maximum(b, 0).astype(np.float64) @ self.g
        return z, gz

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        boards = np.asarray(boards)
        assert ((boards > 0).any(axis=1) & (boards < 0).any(axis=1)).all(), "evaluator called on a finished game"
        self.calls += 1
        self.seen += len(boards)
        z1, g1 = self._half(boards)
        z2, g2 = self._half(flip_array(boards))
        win = 1.0 / (1.0 + np.exp(-(z1 - z2)))
        gw = 0.6 / (1.0 + np.exp(-g1))
        gl = 0.6 / (1.0 + np.exp(-g2))
        out = np.empty((len(boards), 5))
        out[:, 0] = win
        out[:, 1] = win * gw
        out[:, 2] = win * gw * 0.1
        out[:, 3] = (1 - win) * gl
        out[:, 4] = (1 - win) * gl * 0.1
        return out


def value_after_play_1ply(ev, result: Position) -> np.ndarray:
    """Mover's probabilities after a play, computed one position at a time."""
    if result.is_game_over():
        return terminal_probs(result.array())
    return flip_probs(ev.evaluate(result.flip().array()[None])[0])


def value_after_play_2ply(ev, result: Position) -> np.ndarray:
    """Independent 2-ply: the opponent's 21 rolls, his best 1-ply reply, weighted."""
    if result.is_game_over():
        return terminal_probs(result.array())
    opp = result.flip()
    total = np.zeros(5)
    for roll in ALL_ROLLS:
        replies = legal_positions(opp, roll)
        vals = [value_after_play_1ply(ev, r) for r in replies]
        best = max(vals, key=lambda p: float(cubeless_equity(p)))
        total += roll.weight / 36.0 * flip_probs(best)
    return total


BEAROFF_CONTACT = Position.from_points({1: 2, 2: 3, 3: 2, 5: 2, 20: 1}, {1: 2, 3: 3, 4: 2, 6: 2, 18: 1})
MIDGAME = Position.from_points({6: 4, 8: 3, 13: 4, 24: 2, 4: 2}, {6: 5, 8: 2, 13: 5, 20: 2, 5: 1})


@pytest.mark.parametrize("position,roll", [(BEAROFF_CONTACT, Roll(4, 2)), (MIDGAME, Roll(5, 3))])
def test_two_ply_value_is_weighted_average_of_opponents_best_one_ply_reply(position, roll):
    # Given a fake evaluator and a search that keeps every candidate
    ev = RandomLinearEvaluator()
    search = Search(ev, WIDE, shallow_weight=0.0)
    # When every play is ranked at 2 ply with no 1-ply share
    ranked = search.rank_plays(position.array(), roll.high, roll.low, ply=2)
    # Then each play's probabilities equal the independent expectimax
    assert (ranked.ply == 2).all()
    for k in range(len(ranked)):
        expected = value_after_play_2ply(ev, Position.from_array(ranked.boards[k]))
        np.testing.assert_allclose(ranked.probs[k], expected, atol=1e-9)
        assert ranked.equity[k] == pytest.approx(float(cubeless_equity(expected)), abs=1e-9)


@pytest.mark.parametrize("weight", [0.25, 0.6])
def test_two_ply_play_value_mixes_its_one_ply_value_by_the_shallow_weight(weight):
    # Given a search that keeps every candidate and gives the 1-ply value a share
    ev = RandomLinearEvaluator()
    search = Search(ev, WIDE, shallow_weight=weight)
    ranked = search.rank_plays(MIDGAME.array(), 5, 3, ply=2)
    # Then each play's value is the share's mix of the independent 2-ply and 1-ply values,
    # the ranking follows it, and value_results gives the same figures
    mixed = []
    for k in range(len(ranked)):
        result = Position.from_array(ranked.boards[k])
        expected = (1 - weight) * value_after_play_2ply(ev, result) + weight * value_after_play_1ply(ev, result)
        np.testing.assert_allclose(ranked.probs[k], expected, atol=1e-9)
        mixed.append(float(cubeless_equity(expected)))
    assert ranked.equity[ranked.best] == pytest.approx(max(mixed), abs=1e-9)
    probs, scores = search.value_results(ranked.boards, ply=2)
    np.testing.assert_allclose(probs, ranked.probs, atol=1e-9)
    np.testing.assert_allclose(scores, ranked.score, atol=1e-9)


def test_one_and_three_ply_values_take_no_shallow_share():
    ev = RandomLinearEvaluator()
    mixed, pure = Search(ev, WIDE, shallow_weight=0.5), Search(ev, WIDE, shallow_weight=0.0)
    board = BEAROFF_CONTACT.array()
    for ply in (1, 3):
        np.testing.assert_allclose(mixed.rank_plays(board, 4, 2, ply=ply).probs,
                                   pure.rank_plays(board, 4, 2, ply=ply).probs, atol=1e-12)


def test_shallow_weight_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="shallow_weight"):
        Search(RandomLinearEvaluator(), shallow_weight=1.5)


def test_one_ply_value_is_the_evaluator_on_the_flipped_result():
    ev = RandomLinearEvaluator()
    ranked = Search(ev).rank_plays(MIDGAME.array(), 6, 1, ply=1)
    for k in range(len(ranked)):
        expected = value_after_play_1ply(ev, Position.from_array(ranked.boards[k]))
        np.testing.assert_allclose(ranked.probs[k], expected, atol=1e-12)
    best = ranked.best
    assert ranked.equity[best] == max(ranked.equity)


class ConstantEvaluator:
    """Every position is worth the same: all plays tie."""

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        return np.tile(np.array([0.55, 0.2, 0.01, 0.15, 0.005], np.float32), (len(boards), 1))


def test_one_ply_ranking_is_best_equity_first_and_ties_keep_generation_order():
    ranked = Search(RandomLinearEvaluator()).rank_plays(MIDGAME.array(), 4, 3, ply=1)
    np.testing.assert_array_equal(ranked.order, np.argsort(-ranked.equity, kind="stable"))
    np.testing.assert_allclose(ranked.equity, cubeless_equity(ranked.probs), atol=1e-12)
    tied = Search(ConstantEvaluator()).rank_plays(MIDGAME.array(), 4, 3, ply=1)
    np.testing.assert_array_equal(tied.order, np.arange(len(tied)))


def test_flip_results_reports_a_play_that_bears_off_the_last_checker():
    from engine.batch import board_live, flip_results

    results = np.array([BEAROFF_CONTACT.array(), Position.from_points({}, {1: 2, 6: 3}).array()], np.int8)
    flipped, live = flip_results(results)
    np.testing.assert_array_equal(flipped, flip_array(results))
    assert not live and flip_results(results[:1])[1]
    assert board_live(MIDGAME.array()) and not board_live(results[1])


def test_two_ply_play_uses_two_batched_evaluator_calls():
    ev = RandomLinearEvaluator()
    search = Search(ev)
    search.rank_plays(MIDGAME.array(), 5, 2, ply=2)
    assert ev.calls == 2


def test_pruning_keeps_the_one_ply_best_and_respects_the_filter():
    ev = RandomLinearEvaluator(3)
    flt = MoveFilter(max_candidates=3, tolerance=0.3)
    r1 = Search(ev).rank_plays(MIDGAME.array(), 4, 1, ply=1)
    r2 = Search(ev, flt).rank_plays(MIDGAME.array(), 4, 1, ply=2)
    searched = np.flatnonzero(r2.ply == 2)
    assert r1.best in searched
    assert 1 <= len(searched) <= 3
    assert (r1.equity[searched] >= r1.equity[r1.best] - 0.3 - 1e-12).all()
    # the pruned plays rank after every searched play
    assert set(r2.order[: len(searched)]) == set(searched)


def test_min_candidates_searches_at_least_that_many_plays_deeper():
    ev = RandomLinearEvaluator(3)
    flt = MoveFilter(max_candidates=1, tolerance=0.0)
    r1 = Search(ev).rank_plays(MIDGAME.array(), 4, 1, ply=1)
    r2 = Search(ev, flt).rank_plays(MIDGAME.array(), 4, 1, ply=2, min_candidates=4)
    searched = set(np.flatnonzero(r2.ply == 2))
    assert searched == set(r1.order[:4])


def test_a_filter_of_one_candidate_plays_the_one_ply_choice():
    ev = RandomLinearEvaluator(5)
    for roll in (Roll(6, 5), Roll(3, 3), Roll(2, 1)):
        r1 = Search(ev).rank_plays(MIDGAME.array(), roll.high, roll.low, ply=1)
        r2 = Search(ev, MoveFilter(max_candidates=1)).rank_plays(MIDGAME.array(), roll.high, roll.low, ply=2)
        assert r2.best == r1.best


def test_mirror_symmetric_position_is_worth_zero_at_ply_zero():
    # The start position is its own mirror image; the fake evaluator is antisymmetric.
    ev = RandomLinearEvaluator()
    v = Search(ev).evaluate_position(Position.start().array(), ply=0)
    assert v.scores[0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(v.probs[0], flip_probs(v.probs[0]), atol=1e-12)


@pytest.mark.parametrize("ply", [1, 2])
def test_position_value_is_the_weighted_average_of_the_best_play_per_roll(ply):
    # (a position's value is the pure expectimax: its plays take no 1-ply share)
    ev = RandomLinearEvaluator(11)
    flt = MoveFilter(max_candidates=2, tolerance=0.2)
    search = Search(ev, flt, shallow_weight=0.0)
    pos = BEAROFF_CONTACT
    v = search.evaluate_position(pos.array(), ply=ply)
    expected = 0.0
    for roll in ALL_ROLLS:
        r = search.rank_plays(pos.array(), roll.high, roll.low, ply=ply)
        expected += roll.weight / 36.0 * r.equity[r.best]
    assert v.scores[0] == pytest.approx(expected, abs=1e-9)


def test_no_play_roll_keeps_the_position_and_is_valued_for_the_opponent_on_roll():
    # Given a checker on the bar against a closed board
    pos = Position.from_points({25: 1, 6: 4, 8: 3, 13: 7}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    ev = RandomLinearEvaluator()
    r = Search(ev).rank_plays(pos.array(), 6, 5, ply=1)
    # Then there is one "play": no checker moves, the board is unchanged
    assert len(r) == 1 and r.nsteps[0] == 0
    assert tuple(r.boards[0]) == pos.board
    np.testing.assert_allclose(r.probs[0], flip_probs(ev.evaluate(pos.flip().array()[None])[0]))


def test_forced_play_is_the_only_candidate_at_two_ply():
    # On the bar, the 6 cannot enter; the 4 enters on 21 and then no 6 can be played
    pos = Position.from_points({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 5: 2, 6: 2, 10: 2, 18: 2, 13: 1})
    r = Search(RandomLinearEvaluator()).rank_plays(pos.array(), 6, 4, ply=2)
    assert len(r) == 1 and r.ply[0] == 2
    assert [tuple(s) for s in r.steps[0][: r.nsteps[0]]] == [(25, 21)]


def test_a_play_that_ends_the_game_is_scored_exactly_never_by_the_evaluator():
    # Given two checkers left on the 1 and 2 points and an opponent with none off
    pos = Position.from_points({1: 1, 2: 1}, {19: 2, 13: 13})
    ev = RandomLinearEvaluator()
    for ply in (1, 2):
        r = Search(ev).rank_plays(pos.array(), 6, 5, ply=ply)
        # Then the winning play is a backgammon (opponent checkers in our home board): exactly +3
        best = r.best
        assert r.equity[best] == pytest.approx(3.0)
        np.testing.assert_array_equal(r.probs[best], [1, 1, 1, 0, 0])


def test_at_double_match_point_plays_maximise_winning_chances_only():
    # Gammons count for nothing at 1-away/1-away: the cubeful choice is the win maximiser.
    ev = RandomLinearEvaluator(3)
    dmp = CubeState(match_length=5, score=(4, 4))
    differs = 0
    for roll in ALL_ROLLS:
        cubeful = Search(ev).rank_plays(MIDGAME.array(), roll.high, roll.low, ply=1, state=dmp)
        cubeless = Search(ev).rank_plays(MIDGAME.array(), roll.high, roll.low, ply=1)
        assert cubeful.cubeful
        assert cubeful.probs[cubeful.best, 0] == pytest.approx(cubeful.probs[:, 0].max())
        np.testing.assert_allclose(cubeful.score, cubeful.probs[:, 0], atol=1e-12)
        differs += cubeful.best != cubeless.best
    assert differs >= 1


def test_bad_ply_and_finished_games_are_search_errors():
    s = Search(RandomLinearEvaluator())
    with pytest.raises(SearchError):
        s.rank_plays(MIDGAME.array(), 3, 1, ply=0)
    with pytest.raises(SearchError):
        s.evaluate_position(MIDGAME.array(), ply=3)
    done = Position.from_points({}, {6: 3})
    with pytest.raises(SearchError):
        s.evaluate_position(done.array(), ply=0)


def test_cubeful_position_value_at_ply_one_averages_the_opponents_janowski_equity():
    # Independent: for each roll, the play that leaves the opponent (on roll, cube seen
    # from him) the lowest cubeful Janowski value; ours is minus that, weighted.
    from engine.cube import CubeOwner, cube_efficiency, cubeful_equity

    ev = RandomLinearEvaluator(4)
    pos = MIDGAME
    for state in (CubeState(), CubeState(value=2, owner=CubeOwner.OPPONENT), CubeState(value=2, owner=CubeOwner.PLAYER)):
        got = Search(ev).evaluate_position(pos.array(), ply=1, states=[state]).scores[0]
        expected = 0.0
        for roll in ALL_ROLLS:
            best = -np.inf
            for r in legal_positions(pos, roll):
                opp = r.flip().array()
                p = ev.evaluate(opp[None])[0]
                v = -float(cubeful_equity(p, state.flip(), float(cube_efficiency(opp)[0])))
                best = max(best, v)
            expected += roll.weight / 36.0 * best
        assert got == pytest.approx(expected, abs=1e-9)


def test_match_position_value_is_in_match_winning_chances():
    from engine.cube import cube_efficiency, cubeful_equity

    ev = RandomLinearEvaluator(4)
    state = CubeState(match_length=7, score=(3, 5))
    got = Search(ev).evaluate_position(MIDGAME.array(), ply=0, states=[state]).scores[0]
    p = ev.evaluate(MIDGAME.array()[None])[0]
    assert got == pytest.approx(float(cubeful_equity(p, state, float(cube_efficiency(MIDGAME.array())[0]))))
    assert 0.0 < got < 1.0
