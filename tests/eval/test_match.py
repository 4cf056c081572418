"""The game and match driver: scoring, the cube, Jacoby, beavers, Crawford, match end."""
import numpy as np
import pytest

from engine.dice import Roll
from engine.position import Position
from eval.bots import Bot, CubeResponse, PubevalBot, RaceBot
from engine.game import GameOptions
from eval.match import DiceSource, IllegalBotPlay, play_game, play_match, play_session


class FixedDice(DiceSource):
    """An opening roll (high die to seat 0 when ``first`` is 0) then the given rolls, repeated."""

    def __init__(self, opening=(2, 1), rolls=((6, 6),), ties=0, first=0) -> None:
        self._opening = Roll.of(*opening)
        self._rolls = list(rolls)
        self._ties = ties
        self._first = first
        self._k = 0

    def opening(self):
        return self._opening, self._ties, self._first

    def roll(self):
        r = self._rolls[self._k % len(self._rolls)]
        self._k += 1
        return r


class Scripted(RaceBot):
    """Race play, with a fixed cube behaviour."""

    def __init__(self, double=False, response=CubeResponse.TAKE, accept_beaver=True, name="scripted") -> None:
        self.double = double
        self.response = response
        self.beaver_ok = accept_beaver
        self.name = name
        self.asked = []

    def offer_double(self, board, state):
        self.asked.append(state)
        return self.double(state) if callable(self.double) else self.double

    def respond_double(self, board, state):
        return self.response

    def accept_beaver(self, board, state):
        return self.beaver_ok


class Cheater(RaceBot):
    name = "cheater"

    def choose_batch(self, boards, dice):
        out = super().choose_batch(boards, dice)
        out = out.copy()
        out[:, 24] += 1  # conjure a checker
        out[:, 6] -= 1
        return out


def _ending(opp: dict) -> Position:
    """Seat 0 on roll bears off its last two checkers with the 5-4 opening; ``opp`` in the
    loser's own numbering."""
    return Position.from_points({4: 1, 5: 1}, opp)


@pytest.mark.parametrize(
    ("opp", "result", "points"),
    [
        ({6: 14}, 1, 1),  # one checker off: single
        ({6: 15}, 2, 2),  # none off: gammon
        ({6: 14, 24: 1}, 3, 3),  # none off, one in the winner's home board: backgammon
        ({6: 14, 25: 1}, 3, 3),  # none off, one on the bar: backgammon
    ],
)
def test_a_finished_game_scores_single_gammon_backgammon(opp, result, points):
    g = play_game((Scripted(), Scripted()), FixedDice(opening=(5, 4)), start=_ending(opp))
    assert (g.winner, g.result, g.points) == (0, result, points)


def test_backgammon_counts_two_when_that_option_is_on():
    g = play_game((Scripted(), Scripted()), FixedDice(opening=(5, 4)), GameOptions(backgammon_counts_two=True),
                  start=_ending({6: 14, 24: 1}))
    assert g.points == 2


# seat 0 needs two turns (four checkers, the 2-1 opening cannot finish); seat 1 is not
# home yet, so it can neither finish nor save the gammon in one turn
_TWO_TURNS = Position.from_points({5: 2, 6: 2}, {8: 15})


def test_a_taken_double_doubles_the_value_of_the_game():
    g = play_game((Scripted(double=True), Scripted()), FixedDice(rolls=((6, 6),)), start=_TWO_TURNS)
    kinds = [a.kind for a in g.actions]
    assert kinds == ["move", "move", "double", "take", "move"]
    assert (g.winner, g.cube_value, g.result, g.points) == (0, 2, 2, 4)


def test_a_dropped_double_gives_the_doubler_the_cube_value_before_the_double_and_no_gammon():
    g = play_game((Scripted(double=True), Scripted(response=CubeResponse.DROP)), FixedDice(), start=_TWO_TURNS)
    assert [a.kind for a in g.actions][-2:] == ["double", "drop"]
    assert (g.winner, g.points, g.result) == (0, 1, 0)


def test_a_dropped_redouble_is_worth_two():
    # seat 0 doubles, seat 1 takes and redoubles the cube it owns, seat 0 drops
    bots = (Scripted(double=True, response=CubeResponse.DROP), Scripted(double=lambda st: st.value > 1))
    start = Position.from_points({5: 2, 6: 2}, {5: 3, 6: 3})
    g = play_game(bots, FixedDice(rolls=((2, 1),)), start=start)
    assert [a.kind for a in g.actions] == ["move", "move", "double", "take", "move", "double", "drop"]
    assert (g.winner, g.points) == (1, 2)


def test_jacoby_counts_a_gammon_as_one_without_a_double_and_as_two_after_one():
    plain = play_game((Scripted(), Scripted()), FixedDice(opening=(5, 4)), GameOptions(jacoby=True),
                      start=_ending({6: 15}))
    assert plain.result == 2 and plain.points == 1
    doubled = play_game((Scripted(double=True), Scripted()), FixedDice(rolls=((6, 6),)), GameOptions(jacoby=True),
                        start=_TWO_TURNS)
    assert doubled.result == 2 and doubled.points == 4


def test_an_automatic_double_raises_the_cube_but_does_not_lift_jacoby():
    g = play_game((Scripted(), Scripted()), FixedDice(opening=(5, 4), ties=3), GameOptions(jacoby=True, auto_doubles=1),
                  start=_ending({6: 15}))
    assert g.auto_doubles == 1 and g.cube_value == 2 and g.points == 2


def test_a_beaver_quadruples_the_cube_and_the_beaverer_keeps_it():
    bots = (Scripted(double=True), Scripted(response=CubeResponse.BEAVER))
    g = play_game(bots, FixedDice(rolls=((6, 6),)), GameOptions(beavers=True), start=_TWO_TURNS)
    assert [a.kind for a in g.actions][2:5] == ["double", "beaver", "take"]
    assert (g.cube_value, g.points) == (4, 8)


def test_a_refused_beaver_gives_the_beaverer_twice_the_cube():
    bots = (Scripted(double=True, accept_beaver=False), Scripted(response=CubeResponse.BEAVER))
    g = play_game(bots, FixedDice(), GameOptions(beavers=True), start=_TWO_TURNS)
    assert (g.winner, g.points) == (1, 2)


def test_a_beaver_where_beavers_are_off_is_rejected():
    bots = (Scripted(double=True), Scripted(response=CubeResponse.BEAVER))
    with pytest.raises(IllegalBotPlay):
        play_game(bots, FixedDice(), start=_TWO_TURNS)


def test_nobody_doubles_past_the_cube_cap():
    bots = (Scripted(double=True), Scripted(double=True))
    rng = np.random.default_rng(4)
    session = play_session(bots, 10, DiceSource(rng), GameOptions(max_cube=4))
    assert all(g.cube_value <= 4 for g in session.games)
    assert max(g.doubles for g in session.games) == 2


def test_an_illegal_play_is_rejected_by_the_rules_engine():
    with pytest.raises(IllegalBotPlay):
        play_game((Cheater(), Cheater()), DiceSource(np.random.default_rng(1)))


def test_the_crawford_game_has_no_cube_and_the_match_ends_at_the_target():
    # the bots double only post-Crawford, so the score creeps up to the Crawford game
    bots = (Scripted(double=lambda st: st.post_crawford, name="a"), Scripted(double=lambda st: st.post_crawford, name="b"))
    seen_crawford = 0
    for seed in range(12):
        m = play_match(bots, 3, DiceSource(np.random.default_rng(seed)))
        assert max(m.score) >= 3 and m.winner in (0, 1)
        total = [0, 0]
        for g in m.games:
            assert g.score == tuple(total)
            assert max(total) < 3, "no game is played after the match is won"
            if g.crawford:
                seen_crawford += 1
                assert 2 in g.score and g.doubles == 0 and g.cube_value == 1
            total[g.winner] += g.points
        assert tuple(total) == m.score
        crawfords = [g for g in m.games if g.crawford]
        assert len(crawfords) <= 1
        # post-Crawford games have the cube back
        after = m.games[m.games.index(crawfords[0]) + 1:] if crawfords else []
        assert all(g.doubles >= 1 for g in after), "post-Crawford the trailer doubles at his first turn"
    assert seen_crawford > 0
    assert not any(st.crawford for bot in bots for st in bot.asked), "nobody is asked in the Crawford game"


def test_money_options_do_not_apply_in_match_play():
    bots = (Scripted(double=True), Scripted(response=CubeResponse.TAKE))
    m = play_match(bots, 5, DiceSource(np.random.default_rng(3)), GameOptions(jacoby=True, auto_doubles=1, beavers=True))
    assert all(g.auto_doubles == 0 for g in m.games)


def test_duplicate_dice_sources_replay_the_same_rolls():
    a = DiceSource(np.random.default_rng(9))
    b = DiceSource(np.random.default_rng(9))
    assert a.opening() == b.opening()
    assert [a.roll() for _ in range(50)] == [b.roll() for _ in range(50)]


def test_every_recorded_move_is_a_legal_result_of_its_roll():
    from engine.movegen import legal_results

    s = play_session((PubevalBot(), RaceBot()), 6, DiceSource(np.random.default_rng(5)), GameOptions(cube=True))
    for g in s.games:
        for a in g.actions:
            if a.kind == "move":
                res = legal_results(np.array(a.before, np.int8), *a.dice)
                assert any(tuple(int(x) for x in r) == a.after for r in res)
