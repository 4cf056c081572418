"""Cube decisions against hand-computed values (Janowski money, MET match play)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.cube import (
    MONEY,
    CubeAction,
    CubeOwner,
    CubeState,
    CubeStateError,
    cash_value,
    cube_decision_from_probs,
    CUBE_X,
    cube_efficiency,
    gnubg_cube_efficiency,
    race_x,
    cubeful_equity,
    decide,
    money_take_point,
    take_point,
)
from engine.classes import BEAROFF1, CONTACT, CRASHED, classify
from engine.values import cubeless_equity
from engine.met import default_met
from engine.position import Position

MET = default_met()


def probs(p: float, wg: float = 0.0, lg: float = 0.0) -> np.ndarray:
    """Probabilities with fractions ``wg`` / ``lg`` of wins / losses being gammons."""
    return np.array([p, p * wg, 0.0, (1 - p) * lg, 0.0])


# --------------------------------------------------------------------------- money
@pytest.mark.parametrize("x,expected", [(0.0, 0.25), (1.0, 0.2), (0.68, 0.5 / 2.34)])
def test_money_take_point_without_gammons_follows_janowski(x, expected):
    assert money_take_point(1.0, 1.0, x) == pytest.approx(expected)
    assert take_point(MONEY, x) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("x", [0.0, 0.5, 1.0])
def test_money_take_point_with_gammons_uses_the_takers_average_win_and_loss(x):
    # The doubler wins a gammon 25% of his wins (the taker's L = 1.25) and loses one
    # 10% of his losses (the taker's W = 1.1): TP = (1.25 - 0.5) / (1.1 + 1.25 + x/2).
    expected = (1.25 - 0.5) / (1.1 + 1.25 + 0.5 * x)
    assert take_point(MONEY, x, (0.25, 0.0, 0.10, 0.0)) == pytest.approx(expected, abs=1e-9)


def test_dead_cube_money_equity_is_cubeless_equity():
    p = np.array([0.62, 0.2, 0.03, 0.1, 0.01])
    assert cubeful_equity(p, MONEY, 0.0) == pytest.approx(float(cubeless_equity(p)))


def test_money_cubeful_equity_is_scaled_by_the_cube_value():
    p = np.array([0.62, 0.2, 0.03, 0.1, 0.01])
    one = cubeful_equity(p, CubeState(value=2, owner=CubeOwner.PLAYER), 0.68)
    two = cubeful_equity(p, CubeState(value=4, owner=CubeOwner.PLAYER), 0.68)
    assert two == pytest.approx(2 * one)


def test_owning_the_cube_is_worth_more_than_a_centred_cube_and_less_when_the_opponent_owns_it():
    for p in np.linspace(0.05, 0.95, 19):
        pr = probs(p, 0.2, 0.15)
        own = cubeful_equity(pr, CubeState(value=2, owner=CubeOwner.PLAYER), 0.7) / 2
        centre = cubeful_equity(pr, MONEY, 0.7)
        opp = cubeful_equity(pr, CubeState(value=2, owner=CubeOwner.OPPONENT), 0.7) / 2
        assert own >= centre - 1e-12 >= opp - 2e-12


def test_fully_live_centred_cube_money_knots():
    # x = 1, no gammons: -1 at the take point 0.2, +1 at the cash point 0.8, linear between.
    assert cubeful_equity(probs(0.2), MONEY, 1.0) == pytest.approx(-1.0)
    assert cubeful_equity(probs(0.8), MONEY, 1.0) == pytest.approx(1.0)
    assert cubeful_equity(probs(0.5), MONEY, 1.0) == pytest.approx(0.0)


def test_money_decisions_no_double_double_take_double_pass_too_good():
    x = 0.68
    assert cube_decision_from_probs(probs(0.55), MONEY, x).action is CubeAction.NO_DOUBLE
    assert cube_decision_from_probs(probs(0.75), MONEY, x).action is CubeAction.DOUBLE_TAKE
    dp = cube_decision_from_probs(probs(0.85), MONEY, x)
    assert dp.action is CubeAction.DOUBLE_DROP and dp.double and not dp.take
    tg = cube_decision_from_probs(probs(0.9, wg=0.6), MONEY, x)
    assert tg.action is CubeAction.TOO_GOOD and not tg.double and not tg.take


def test_decision_logic_from_equities():
    # nd < dt < dp: double, take; dt > dp: pass; nd > dp: too good
    assert decide(MONEY, 0.3, 0.5, 1.0).action is CubeAction.DOUBLE_TAKE
    assert decide(MONEY, 0.8, 1.2, 1.0).action is CubeAction.DOUBLE_DROP
    assert decide(MONEY, 1.1, 1.4, 1.0).action is CubeAction.TOO_GOOD
    assert decide(MONEY, 0.3, 0.2, 1.0).action is CubeAction.NO_DOUBLE


def test_beaver_when_the_taker_is_the_favourite():
    beavers = CubeState(beavers=True)
    d = cube_decision_from_probs(probs(0.35), beavers, 0.68)
    assert d.action is CubeAction.NO_DOUBLE_BEAVER and d.beaver and d.double_beaver is not None
    assert d.double_beaver < d.double_take < 0


def test_jacoby_centred_cube_counts_gammons_as_singles_until_doubled():
    jac = CubeState(jacoby=True)
    pr = probs(0.6, wg=0.5, lg=0.5)
    assert cubeful_equity(pr, jac, 0.0) == pytest.approx(2 * 0.6 - 1)
    # after a double the gammons count again
    assert cubeful_equity(pr, jac.doubled(), 0.0) == pytest.approx(2 * float(cubeless_equity(pr)))


def test_cube_at_the_cap_cannot_be_turned_and_a_last_redouble_is_dead_for_the_taker():
    capped = CubeState(value=64, owner=CubeOwner.PLAYER)
    assert not capped.may_double()
    assert cube_decision_from_probs(probs(0.9), capped, 0.7).action is CubeAction.NO_CUBE
    # redoubling 32 -> 64: the taker cannot redouble, so his take point is the dead one
    last = CubeState(value=32, owner=CubeOwner.PLAYER)
    assert take_point(last, 1.0) == pytest.approx(0.25, abs=1e-9)
    # and with the cube at 1 the taker can redouble: the live take point
    assert take_point(MONEY, 1.0) == pytest.approx(0.2, abs=1e-9)


def test_opponent_owned_cube_gives_no_cube_action():
    d = cube_decision_from_probs(probs(0.8), CubeState(value=2, owner=CubeOwner.OPPONENT), 0.68)
    assert d.action is CubeAction.NO_CUBE and not d.double


def test_gnubg_cube_efficiency_contact_and_race():
    assert gnubg_cube_efficiency(Position.start().array())[0] == pytest.approx(0.68)
    race = Position.from_points({1: 5, 2: 5, 3: 5}, {1: 5, 2: 5, 3: 5})  # 30 pips
    assert gnubg_cube_efficiency(race.array())[0] == pytest.approx(0.6)
    long_race = Position.from_points({12: 15}, {12: 15})  # 180 pips -> 0.775, capped at 0.7
    assert gnubg_cube_efficiency(long_race.array())[0] == pytest.approx(0.7)
    mid = Position.from_points({6: 15}, {6: 15})  # 90 pips -> 0.6625
    assert gnubg_cube_efficiency(mid.array())[0] == pytest.approx(0.55 + 0.00125 * 90)


def test_tablas_cube_efficiency_is_the_fitted_value_of_each_position_class():
    crashed = Position.from_points({1: 4, 20: 2}, {6: 5, 8: 3, 13: 5, 18: 2})  # 6 checkers left: crashed
    race = Position.from_points({6: 15}, {6: 15})
    boards = np.stack([Position.start().array(), crashed.array(), race.array()])
    assert classify(boards).tolist() == [CONTACT, CRASHED, BEAROFF1]
    np.testing.assert_allclose(cube_efficiency(boards), [CUBE_X["contact"], CUBE_X["crashed"], race_x(90)])
    assert all(0.0 < v < 1.0 for v in cube_efficiency(boards))


# --------------------------------------------------------------------------- match play
def test_match_take_point_at_two_away_two_away_is_the_crawford_mwc():
    # Passing leaves the taker 2-away vs 1-away (Crawford game); taking plays for the match
    # with a dead cube: TP = MWC(2-away, 1-away Crawford).
    state = CubeState(match_length=5, score=(3, 3))
    for x in (0.0, 0.68, 1.0):
        assert take_point(state, x) == pytest.approx(MET.mwc(2, 1), abs=1e-9)


def test_match_take_point_four_away_four_away_dead_cube():
    state = CubeState(match_length=7, score=(3, 3))
    drop = MET.mwc(4, 3)  # taker's MWC after passing 1 point
    win, lose = MET.mwc(2, 4), MET.mwc(4, 2)  # taker wins / loses 2 points
    expected = (drop - lose) / (win - lose)
    assert take_point(state, 0.0) == pytest.approx(expected, abs=1e-9)
    # a live cube (the taker may redouble) lowers the take point
    assert take_point(state, 1.0) < expected - 0.02


def test_match_take_point_with_gammons_at_the_score():
    # 3-away/3-away in a 5-point match; the doubler wins 20% of his wins as gammons.
    state = CubeState(match_length=5, score=(2, 2))
    g = 0.2
    drop = MET.mwc(3, 2)
    win = MET.mwc(1, 3)  # taker wins 2: 1-away (Crawford) vs 3-away
    lose = (1 - g) * MET.mwc(3, 1) + g * 0.0  # losing a gammon (4) loses the match
    # after taking at 2 the taker's cube is dead at the top (4 >= 3), so x = 0 is exact
    expected = (drop - lose) / (win - lose)
    assert take_point(state, 0.0, (g, 0.0, 0.0, 0.0)) == pytest.approx(expected, abs=1e-9)


def test_crawford_game_has_no_cube_and_a_dead_cube_equity():
    state = CubeState(match_length=5, score=(4, 2), crawford=True)
    pr = probs(0.4, wg=0.25, lg=0.1)
    d = cube_decision_from_probs(pr, state, 0.68)
    assert d.action is CubeAction.NO_CUBE and d.mwc
    # dead cube: winning wins the match; losing costs 1, 2 (gammon) points post-Crawford
    win = 1.0
    lose = 0.9 * MET.mwc(1, 2, post_crawford=True) + 0.1 * MET.mwc(1, 1, post_crawford=True)
    assert cubeful_equity(pr, state, 0.68) == pytest.approx(0.4 * win + 0.6 * lose)


def test_post_crawford_trailer_doubles_and_the_leaders_take_point_is_tiny():
    # Trailer 3-away, leader 1-away, post-Crawford. A pass gives the leader
    # 1 - post[2-away]; a take plays for the match at cube 2 where the trailer's
    # single win leaves double match point (0.5) and his gammon wins the match.
    state = CubeState(match_length=5, score=(2, 4))
    assert state.post_crawford
    drop = 1 - MET.mwc(2, 1, post_crawford=True)
    # leader's MWC after taking, q = leader's win chance: q + (1 - q) * 0.5
    expected = (drop - 0.5) / 0.5
    assert take_point(state, 0.68) == pytest.approx(expected, abs=1e-9)


def test_cube_dead_for_a_side_whose_single_win_already_wins_the_match():
    # Player 2-away owns the cube at 2: redoubling gains him nothing, x does not matter.
    state = CubeState(value=2, owner=CubeOwner.PLAYER, match_length=7, score=(5, 2))
    pr = probs(0.55, wg=0.2, lg=0.2)
    dead = cubeful_equity(pr, state, 0.0)
    assert cubeful_equity(pr, state, 1.0) == pytest.approx(dead)
    assert dead == pytest.approx(0.55 * 1.0 + 0.45 * (0.8 * MET.mwc(2, 3) + 0.2 * MET.mwc(2, 1)))


def test_match_cash_value_is_the_mwc_of_winning_the_cube():
    state = CubeState(value=2, owner=CubeOwner.PLAYER, match_length=9, score=(3, 4))
    assert cash_value(state) == pytest.approx(MET.mwc(4, 5))


def test_long_match_at_level_score_behaves_like_money():
    # 25-point match at 0-0 with a small cube: the take point is close to money's
    assert take_point(CubeState(match_length=25), 0.68) == pytest.approx(take_point(MONEY, 0.68), abs=0.03)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(value=3),
        dict(value=128),
        dict(value=1, owner="player"),
        dict(owner="nobody"),
        dict(match_length=26),
        dict(match_length=5, score=(5, 0)),
        dict(match_length=5, crawford=True, score=(1, 2)),
        dict(match_length=5, crawford=True, score=(4, 0), value=2, owner="player"),
        dict(match_length=5, jacoby=True),
        dict(crawford=True),
        dict(score=(1, 0)),
    ],
)
def test_inconsistent_cube_states_are_rejected(kwargs):
    with pytest.raises(CubeStateError):
        CubeState(**kwargs)


def test_flip_swaps_owner_and_score():
    s = CubeState(value=4, owner=CubeOwner.PLAYER, match_length=9, score=(3, 5))
    f = s.flip()
    assert f.owner is CubeOwner.OPPONENT and f.score == (5, 3) and f.flip() == s
