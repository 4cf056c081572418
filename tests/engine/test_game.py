"""GameState: cube actions, scoring, Jacoby, beavers, automatic doubles, match and Crawford."""
from dataclasses import replace

import pytest

from engine.dice import Roll
from engine.game import EndReason, GameError, GameOptions, GameState, Phase
from engine.ids import match_id, match_info_from_id
from engine.notation import parse_play
from engine.position import GameResult, Position


def P(mine, theirs=None):
    return Position.from_points(mine, theirs or {})


def at(position, **kw):
    return GameState(position=position, **kw)


GAMMON_IN_ONE = P({1: 1}, {13: 15})  # we bear off the last checker; he has none off
BACKGAMMON_IN_ONE = P({1: 1}, {20: 15})  # his checkers in our home board


def opened(*args, **kw):
    """A new game just after the opening play (which is made before any double)."""
    return replace(GameState.new_game(*args, **kw), opening=False)


def test_nobody_may_double_before_the_opening_play():
    g = GameState.new_game()
    assert not g.can_double()
    with pytest.raises(GameError, match="opening"):
        g.double()
    g = g.play(parse_play(g.position, Roll(3, 1), "8/5 6/5"), Roll(3, 1))
    assert g.can_double()


def win_with_11(state):
    return state.play(parse_play(state.position, Roll(1, 1), "1/off"), Roll(1, 1))


def test_a_take_doubles_the_cube_and_gives_it_to_the_taker():
    g = opened().double().take()
    assert (g.cube_value, g.cube_owner, g.turn, g.phase) == (2, 1, 0, Phase.ROLL)
    assert not g.can_double()


def test_only_the_cube_owner_may_redouble():
    g = opened().double().take()
    g = g.play(parse_play(g.position, Roll(3, 1), "8/5 6/5"))
    assert g.turn == 1 and g.can_double()
    g2 = g.double().take()
    assert g2.cube_value == 4 and g2.cube_owner == 0


def test_a_drop_gives_the_doubler_the_value_before_the_double_with_no_gammon():
    g = at(GAMMON_IN_ONE, cube_value=2, cube_owner=0).double().drop()
    assert (g.winner, g.points, g.end_reason) == (0, 2, EndReason.DROPPED)


def test_points_are_cube_times_result():
    assert win_with_11(at(P({1: 1}, {6: 1}), cube_value=4, cube_owner=1)).points == 4
    g = win_with_11(at(GAMMON_IN_ONE, cube_value=2, cube_owner=1))
    assert g.result == GameResult.GAMMON and g.points == 4
    g = win_with_11(at(BACKGAMMON_IN_ONE, cube_value=2, cube_owner=1))
    assert g.result == GameResult.BACKGAMMON and g.points == 6


def test_backgammon_may_count_two():
    g = win_with_11(at(BACKGAMMON_IN_ONE, options=GameOptions(backgammon_counts_two=True)))
    assert g.points == 2


def test_jacoby_counts_gammons_one_unless_a_player_doubled():
    opts = GameOptions(jacoby=True)
    assert win_with_11(at(GAMMON_IN_ONE, options=opts)).points == 1
    doubled = at(GAMMON_IN_ONE, options=opts, turn=0).double().take()
    # the doubler is still on roll and bears off: gammon x cube 2
    assert win_with_11(doubled).points == 4


def test_jacoby_does_not_apply_in_a_match():
    g = win_with_11(at(GAMMON_IN_ONE, options=GameOptions(jacoby=True), match_length=5))
    assert g.points == 2


def test_automatic_doubles_raise_the_centred_cube_without_counting_as_a_double():
    opts = GameOptions(auto_doubles=2, jacoby=True)
    g = GameState.new_game(opts, opening_ties=3)
    assert g.cube_value == 4 and g.cube_owner is None and g.automatic_doubles == 2 and not g.doubled
    assert win_with_11(GameState(position=GAMMON_IN_ONE, options=opts, cube_value=4)).points == 4


def test_automatic_doubles_are_money_only():
    g = GameState.new_game(GameOptions(auto_doubles=1), opening_ties=1, match_length=5)
    assert g.cube_value == 1


def test_beaver_redoubles_and_keeps_the_cube_and_the_doubler_may_take_or_drop():
    opts = GameOptions(beavers=True)
    g = opened(opts).double().beaver()
    assert g.phase is Phase.BEAVERED
    taken = g.take()
    assert (taken.cube_value, taken.cube_owner) == (4, 1)
    dropped = opened(opts).double().beaver().drop()
    assert (dropped.winner, dropped.points) == (1, 2)


def test_beavers_are_not_allowed_unless_enabled_or_in_a_match():
    with pytest.raises(GameError):
        opened().double().beaver()
    with pytest.raises(GameError):
        GameState.new_game(GameOptions(beavers=True), match_length=5).double().beaver()


def test_the_cube_stops_at_its_maximum():
    g = GameState(cube_value=64, cube_owner=0)
    assert not g.can_double()
    with pytest.raises(GameError, match="maximum"):
        g.double()
    assert not GameState(cube_value=8, cube_owner=0, options=GameOptions(max_cube=8)).can_double()
    assert not GameState(cube_value=32, options=GameOptions(beavers=True)).double().can_beaver()


def test_no_cube_in_the_crawford_game():
    g = GameState.new_game(match_length=5, score=(4, 2), crawford=True)
    assert not g.can_double()
    with pytest.raises(GameError, match="Crawford"):
        g.double()


def test_a_player_who_cannot_move_may_still_double():
    closed = P({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    assert GameState(position=closed).can_double()


def test_playing_passes_the_turn_and_flips_the_position():
    g = GameState.new_game().play(parse_play(Position.start(), Roll(3, 1), "8/5 6/5"), Roll(3, 1))
    assert g.turn == 1
    assert g.position == P({6: 5, 8: 3, 13: 5, 24: 2}, {5: 2, 6: 4, 8: 2, 13: 5, 24: 2})


def test_an_illegal_result_is_refused_when_the_roll_is_given():
    with pytest.raises(GameError, match="not legal"):
        GameState.new_game().play(P({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}), Roll(3, 1))


def test_resignation_accepted_ends_the_game_at_that_level():
    g = GameState(cube_value=2, cube_owner=1).resign(GameResult.GAMMON).accept_resignation()
    assert (g.winner, g.points, g.end_reason) == (1, 4, EndReason.RESIGNED)
    assert GameState().resign(1).reject_resignation().phase is Phase.ROLL


def test_match_score_reaching_one_away_starts_the_crawford_game_then_post_crawford():
    g = win_with_11(at(P({1: 1}, {6: 1}), match_length=5, score=(2, 1), cube_value=2, cube_owner=1))
    assert g.final_score() == (4, 1) and g.match_winner() is None
    crawford = g.next_game(first_player=1)
    assert crawford.crawford and crawford.score == (4, 1) and not crawford.can_double()
    after = win_with_11(GameState(position=P({1: 1}, {6: 1}), turn=1, match_length=5, score=(4, 1), crawford=True))
    post = after.next_game()
    assert not post.crawford and post.post_crawford and post.score == (4, 2)
    assert replace(post, opening=False).can_double()


def test_the_match_ends_when_a_player_reaches_the_length():
    g = win_with_11(at(GAMMON_IN_ONE, match_length=3, score=(1, 2), post_crawford=True))
    assert g.final_score() == (3, 2) and g.match_winner() == 0
    with pytest.raises(GameError, match="match is over"):
        g.next_game()


def test_money_sessions_have_no_crawford_game():
    g = win_with_11(at(P({1: 1}, {6: 1})))
    assert not g.next_game().crawford


def test_match_info_round_trips_through_a_match_id():
    g = opened(match_length=7, score=(3, 5)).double()
    info = g.match_info()
    assert info.double_offered and info.turn == 1 and info.player_on_roll == 0
    assert match_info_from_id(match_id(info)) == info


def test_the_cube_state_is_seen_by_the_player_on_roll():
    from engine.cube import CubeOwner

    g = replace(opened(match_length=7, score=(2, 5)), cube_value=2, cube_owner=0, turn=1)
    s = g.cube_state()
    assert s.owner is CubeOwner.OPPONENT and s.score == (5, 2) and s.value == 2 and s.match_length == 7
    assert not g.can_double() and g.why_no_double() == "the opponent owns the cube"
    money = replace(opened(GameOptions(jacoby=True, beavers=True)), turn=1)
    assert money.cube_state().jacoby and money.cube_state().beavers and money.cube_state().score == (0, 0)


def test_points_of_a_result_follow_the_cube_jacoby_and_backgammon_options():
    g = replace(opened(GameOptions(jacoby=True, backgammon_counts_two=True)), cube_value=2)
    assert g.jacoby_applies and g.points_of(GameResult.BACKGAMMON) == 2
    doubled = replace(g, doubled=True)
    assert not doubled.jacoby_applies and doubled.points_of(GameResult.BACKGAMMON) == 4
    assert doubled.points_of(GameResult.GAMMON) == 4 and doubled.points_of(1) == 2


def test_without_the_cube_nobody_may_double():
    from engine.game import NoDouble

    g = opened(GameOptions(cube=False, auto_doubles=1), opening_ties=1)
    assert g.cube_value == 1 and not g.can_double() and g.no_double_reason() is NoDouble.NO_CUBE
