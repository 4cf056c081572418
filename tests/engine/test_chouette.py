"""Chouette rules (engine.chouette): seating, rotation, the team's and the box's cube,
split stakes with gammons, and the zero-sum ledger."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.chouette import (
    BOX,
    TEAM,
    Answer,
    Chouette,
    ChouetteError,
    ChouetteGame,
    Lineup,
    seat_players,
)
from engine.dice import Roll, opening_roll, roll_dice
from engine.game import GameOptions, GameState
from engine.movegen import legal_results
from engine.notation import parse_play
from engine.position import Position

LINEUP = Lineup(box=0, team=(1, 2))
LINEUP4 = Lineup(box=0, team=(1, 2, 3))


def scripted(*rounds):
    """A throw function that gives the listed rounds of dice, one round per call."""
    it = iter(rounds)
    return lambda n: list(next(it))


def game_at(mine, theirs, turn, lineup=LINEUP, options=GameOptions(), **kw):
    """A chouette game at a position seen from the side on roll (``mine``: its checkers)."""
    gs = GameState(position=Position.from_points(mine, theirs), turn=turn, options=options, **kw)
    return replace(ChouetteGame.start(lineup, options), state=gs)


def play(game, roll, text):
    r = Roll.parse(roll)
    return game.play(parse_play(game.state.position, r, text), r)


# --------------------------------------------------------------------------- seating
def test_initial_roll_highest_die_is_the_box_second_the_captain_then_the_others_in_order():
    s = seat_players(4, scripted([2, 6, 3, 5]))
    assert s.order == (1, 3, 2, 0)
    assert s.lineup == Lineup(box=1, team=(3, 2, 0))
    assert s.lineup.captain == 3


def test_initial_roll_ties_among_the_highest_roll_again_for_the_box():
    s = seat_players(3, scripted([6, 2, 6], [1, 4]))
    assert s.rounds == (((0, 6), (1, 2), (2, 6)), ((0, 1), (2, 4)))
    assert s.lineup == Lineup(box=2, team=(0, 1))


def test_initial_roll_a_tie_for_captain_is_rolled_again_among_the_tied_players():
    s = seat_players(4, scripted([6, 3, 3, 1], [2, 2], [5, 4]))
    assert s.lineup == Lineup(box=0, team=(1, 2, 3))
    assert len(s.rounds) == 3


def test_a_chouette_needs_three_players():
    with pytest.raises(ChouetteError, match="3 to"):
        seat_players(2, scripted([1, 2]))
    with pytest.raises(ChouetteError, match="at least 3"):
        Lineup(box=0, team=(1,))


# --------------------------------------------------------------------------- rotation
def test_rotation_after_a_team_loss_the_captain_goes_to_the_end_and_the_box_stays():
    assert LINEUP4.after_team_loss() == Lineup(box=0, team=(2, 3, 1))


def test_rotation_after_a_team_win_the_captain_takes_the_box_and_the_old_box_goes_to_the_end():
    assert LINEUP4.after_team_win() == Lineup(box=1, team=(2, 3, 0))


def test_a_won_game_rotates_the_session_by_the_captains_result():
    team_wins = play(game_at({1: 1}, {13: 15}, TEAM), "11", "1/off")
    assert team_wins.captain_won and team_wins.next_lineup() == LINEUP.after_team_win()
    box_wins = play(game_at({1: 1}, {13: 15}, BOX), "11", "1/off")
    assert not box_wins.captain_won and box_wins.next_lineup() == LINEUP.after_team_loss()


def test_a_captain_who_passes_loses_the_box_race_even_if_the_members_who_took_win():
    g = game_at({13: 15}, {1: 1}, BOX).box_double()
    g = g.team_answers({1: Answer.PASS, 2: Answer.TAKE})
    assert g.captain == 2  # the next member moves the checkers
    g = play(g, "21", "13/11 13/12")
    g = play(g, "11", "1/off")
    assert g.points()[2] > 0 and not g.captain_won
    assert g.next_lineup() == Lineup(box=0, team=(2, 1))


# --------------------------------------------------------------------------- team cube
def test_a_team_double_needs_every_member_still_playing():
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, TEAM, lineup=LINEUP4)
    with pytest.raises(ChouetteError, match="3 declined"):
        g.team_double({1: True, 2: True, 3: False})
    with pytest.raises(ChouetteError, match="every member"):
        g.team_double({1: True, 2: True})
    doubled = g.team_double({1: True, 2: True, 3: True})
    assert doubled.box_must_answer and [e.action for e in doubled.events] == ["double"] * 3


def test_a_team_double_is_voted_only_by_the_members_who_took_the_box_cube():
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, BOX, lineup=LINEUP4)
    g = g.box_double().team_answers({1: Answer.TAKE, 2: Answer.PASS, 3: Answer.TAKE})
    g = play(g, "31", "8/5 6/5")
    redoubled = g.team_double({1: True, 3: True}).box_answers(Answer.TAKE)
    assert redoubled.stake(1) == redoubled.stake(3) == 4 and redoubled.stake(2) == 1


def test_the_box_passing_a_team_double_pays_each_member_the_stake_before_the_double():
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, TEAM, lineup=LINEUP4, cube_value=2, cube_owner=TEAM)
    g = g.team_double({1: True, 2: True, 3: True}).box_answers(Answer.PASS)
    assert g.is_over and g.points() == {0: -6, 1: 2, 2: 2, 3: 2}


# --------------------------------------------------------------------------- box cube
def test_a_box_double_is_answered_by_each_member_and_passers_pay_the_current_stake():
    g = game_at({1: 1}, {13: 15}, BOX, lineup=LINEUP4, cube_value=2, cube_owner=BOX)
    g = g.box_double()
    assert g.team_must_answer
    g = g.team_answers({1: Answer.TAKE, 2: Answer.PASS, 3: Answer.TAKE})
    assert g.active == (1, 3) and g.stake(2) == 2 and g.stake(1) == 4
    g = play(g, "11", "1/off")  # the box wins a gammon: 2 x 4 from each taker
    assert g.points() == {0: 2 + 8 + 8, 1: -8, 2: -2, 3: -8}


def test_when_every_member_passes_the_box_collects_the_stake_from_each():
    g = game_at({1: 1}, {13: 15}, BOX).box_double().team_answers({1: Answer.PASS, 2: Answer.PASS})
    assert g.is_over and g.active == () and g.points() == {0: 2, 1: -1, 2: -1}
    assert not g.captain_won


def test_members_who_take_play_on_with_the_checkers_for_the_doubled_stake():
    g = game_at({13: 15}, {1: 1}, BOX).box_double().team_answers({1: Answer.TAKE, 2: Answer.TAKE})
    assert g.state.cube_value == 2 and g.state.cube_owner == TEAM and not g.state.can_double()
    with pytest.raises(ChouetteError, match="own turn"):
        g.team_double({1: True, 2: True})


# --------------------------------------------------------------------------- gammons, options
def test_a_team_gammon_with_a_split_cube_pays_twice_each_takers_stake():
    g = game_at({13: 15}, {1: 1}, BOX).box_double().team_answers({1: Answer.PASS, 2: Answer.TAKE})
    g = play(g, "21", "13/11 13/12")
    g = play(g, "11", "1/off")
    assert g.points() == {0: 1 - 4, 1: -1, 2: 4}


def test_a_backgammon_counts_three_times_each_members_stake():
    g = play(game_at({1: 1}, {20: 15}, TEAM, cube_value=2, cube_owner=TEAM), "11", "1/off")
    assert g.points() == {0: -12, 1: 6, 2: 6}


def test_jacoby_gammons_count_single_for_members_whose_game_saw_no_double():
    jacoby = GameOptions(jacoby=True)
    g = play(game_at({1: 1}, {13: 15}, TEAM, options=jacoby), "11", "1/off")
    assert g.points() == {0: -2, 1: 1, 2: 1}
    g = game_at({1: 1}, {13: 15}, BOX, options=jacoby).box_double()
    g = play(g.team_answers({1: Answer.PASS, 2: Answer.TAKE}), "11", "1/off")
    assert g.points() == {0: 1 + 4, 1: -1, 2: -4}


def test_an_automatic_double_doubles_every_members_stake():
    g = ChouetteGame.start(LINEUP, GameOptions(auto_doubles=1), first=TEAM, opening_ties=2)
    assert g.state.cube_value == 2 and g.state.cube_owner is None
    assert g.stake(1) == g.stake(2) == 2


def test_a_team_beaver_of_a_box_double_needs_every_member_who_takes():
    beavers = GameOptions(beavers=True)
    start = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, BOX, options=beavers).box_double()
    split = start.team_answers({1: Answer.BEAVER, 2: Answer.TAKE})
    assert split.state.cube_value == 2 and not split.box_must_answer
    both = start.team_answers({1: Answer.BEAVER, 2: Answer.BEAVER})
    assert both.box_must_answer
    assert both.box_answers(Answer.PASS).points() == {0: -4, 1: 2, 2: 2}
    assert both.box_answers(Answer.TAKE).state.cube_value == 4


def test_the_box_beavering_a_team_double_is_answered_by_each_member():
    beavers = GameOptions(beavers=True)
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, TEAM, options=beavers)
    g = g.team_double({1: True, 2: True}).box_answers(Answer.BEAVER)
    assert g.team_must_answer
    g = g.team_answers({1: Answer.PASS, 2: Answer.TAKE})
    assert g.stake(1) == 2 and g.stake(2) == 4 and g.state.cube_owner == BOX


def test_beavers_are_refused_when_the_option_is_off():
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, BOX).box_double()
    with pytest.raises(ChouetteError, match="beaver"):
        g.team_answers({1: Answer.BEAVER, 2: Answer.TAKE})


def test_nobody_doubles_past_the_maximum_cube():
    capped = GameOptions(max_cube=2)
    g = game_at({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}, TEAM, options=capped, cube_value=2, cube_owner=TEAM)
    with pytest.raises(ChouetteError, match="maximum"):
        g.team_double({1: True, 2: True})


# --------------------------------------------------------------------------- ledger
def random_game(session: Chouette, rng: np.random.Generator) -> ChouetteGame:
    """A game of random legal plays and random (legal) cube actions."""
    roll, ties, first = opening_roll(rng)
    g = session.new_game(first=first, opening_ties=ties)
    pending = roll
    while not g.is_over:
        s = g.state
        if pending is None and s.can_double() and rng.random() < 0.15:
            g = g.box_double() if s.turn == BOX else g.team_double({m: True for m in g.active})
            while not g.is_over and (g.box_must_answer or g.team_must_answer):
                beaver_ok = g.state.can_beaver()
                choices = [Answer.TAKE, Answer.PASS] + [Answer.BEAVER] * beaver_ok
                if g.box_must_answer:
                    g = g.box_answers(choices[rng.integers(len(choices))])
                else:
                    g = g.team_answers({m: choices[rng.integers(len(choices))] for m in g.active})
            if g.is_over:
                break
        r = pending or roll_dice(rng)
        pending = None
        results = legal_results(g.state.position.array(), r.high, r.low)
        g = g.play(Position.from_array(results[rng.integers(len(results))]))
    return g


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(3, 6),
    jacoby=st.booleans(),
    beavers=st.booleans(),
    autos=st.integers(0, 2),
    max_cube=st.sampled_from([2, 8, 64]),
)
def test_the_ledger_sums_to_zero_after_every_game(seed, players, jacoby, beavers, autos, max_cube):
    rng = np.random.default_rng(seed)
    options = GameOptions(jacoby=jacoby, beavers=beavers, auto_doubles=autos, max_cube=max_cube)
    session = Chouette(Lineup(0, tuple(range(1, players))), options)
    for _ in range(3):
        game = random_game(session, rng)
        assert sum(game.points().values()) == 0
        box_net = -sum(p for _, p in game.settlements())
        assert game.points()[game.box] == box_net
        nxt = session.record(game)
        assert sum(nxt.ledger) == 0 and nxt.games == session.games + 1
        assert nxt.lineup == session.lineup.after(game.captain_won)
        session = nxt
