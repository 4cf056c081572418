"""Bots in a chouette (eval.chouette): each member's own opinion, the captain's choice,
unanimous team doubles, answers on one's own, and the log of differing opinions."""
import json

import numpy as np
import pytest

from engine.chouette import BOX, Answer, Chouette, Lineup
from engine.game import GameOptions
from engine.movegen import legal_results
from eval.bots import CubeResponse, PubevalBot, RaceBot, RandomBot, make_bot
from eval.chouette import BotSeat, Role, Seat, play_chouette_game, seat_and_play, unique_labels
from eval.chouette_report import figures, game_line, ledger_matrix, summary, table
from eval.match import DiceSource

LINEUP = Lineup(box=0, team=(1, 2))


class Scripted(Seat):
    """A seat with fixed cube wishes that plays the first (or last) legal result and
    remembers what it was told."""

    def __init__(self, label, *, double=False, answer=Answer.TAKE, beaver_take=True, last=False):
        self.label = label
        self.double = double
        self.answer = answer
        self.beaver_take = beaver_take
        self.last = last
        self.opinions_heard: list[dict] = []
        self.votes_heard: list[dict] = []
        self.roles: list[Role] = []
        self.asked_answer = 0

    def choose_play(self, board, dice, state, role, opinions):
        self.roles.append(role)
        self.opinions_heard.append(dict(opinions))
        results = legal_results(board, dice[0], dice[1])
        return results[-1 if self.last else 0]

    def wants_double(self, board, state, role, votes):
        self.votes_heard.append(dict(votes))
        return self.double

    def answer_double(self, board, state, beaver_allowed):
        self.asked_answer += 1
        return self.answer

    def accept_beaver(self, board, state):
        return self.beaver_take


def one_game(seats, seed=3, options=GameOptions(), lineup=LINEUP):
    return play_chouette_game(Chouette(lineup, options), seats, DiceSource(np.random.default_rng(seed)))


def test_each_member_forms_his_own_opinion_and_the_captains_play_is_played():
    box, captain, member = Scripted("box"), Scripted("captain"), Scripted("member", last=True)
    rec = one_game([box, captain, member])
    plays = [d for d in rec.disagreements if d.kind == "play"]
    assert plays, "first and last legal plays differ on some team turn"
    for d in plays:
        assert d.decided == d.opinions[1] != d.opinions[2]
    assert Role.CAPTAIN in captain.roles and set(member.roles) == {Role.MEMBER}


def test_the_captain_hears_the_members_opinions_before_he_decides():
    captain, member = Scripted("captain", double=True), Scripted("member", last=True)
    one_game([Scripted("box"), captain, member])
    assert captain.opinions_heard and all(set(h) == {2} for h in captain.opinions_heard)
    assert captain.votes_heard and all(h == {2: False} for h in captain.votes_heard)
    assert all(h == {} for h in member.opinions_heard + member.votes_heard)


def test_a_team_double_needs_every_member_and_a_refusal_is_logged():
    box = Scripted("box", answer=Answer.PASS)
    rec = one_game([box, Scripted("captain", double=True), Scripted("member", double=False)])
    assert box.asked_answer == 0 and not any(e.action == "double" for e in rec.game.events)
    votes = [d for d in rec.disagreements if d.kind == "double"]
    assert votes and all(d.decided == "no double" and d.opinions == {2: "no double", 1: "double"} for d in votes)


def test_a_unanimous_team_double_passed_by_the_box_ends_the_game_for_every_member():
    rec = one_game([Scripted("box", answer=Answer.PASS), Scripted("c", double=True), Scripted("m", double=True)])
    assert rec.game.is_over and rec.game.points() == {0: -2, 1: 1, 2: 1}
    assert rec.game.captain_won and rec.game.next_lineup() == Lineup(1, (2, 0))


def test_a_box_double_is_answered_by_each_member_on_his_own():
    seats = [Scripted("box", double=True), Scripted("c", answer=Answer.PASS), Scripted("m", answer=Answer.TAKE)]
    rec = one_game(seats, lineup=LINEUP)
    g = rec.game
    assert seats[1].asked_answer == 1 and seats[2].asked_answer == 1
    assert g.stake(1) == 1 and g.game_of(1).winner == BOX
    answers = [d for d in rec.disagreements if d.kind == "answer"]
    assert answers[0].opinions == {1: "pass", 2: "take"}
    line = game_line(rec, ("box", "c", "m"))
    assert line["members"][0]["actions"] == [{"action": "pass", "cube": 1}]
    assert line["members"][1]["actions"][0] == {"action": "take", "cube": 2}
    assert not line["result"]["captain_won"]


def test_a_beaver_answered_by_bots_is_refused_as_a_take_when_beavers_are_off():
    class Beaverer(PubevalBot):
        def respond_double(self, board, state):
            return CubeResponse.BEAVER

    assert BotSeat(Beaverer()).answer_double(np.zeros(26, np.int8), None, beaver_allowed=False) is Answer.TAKE
    assert BotSeat(Beaverer()).answer_double(np.zeros(26, np.int8), None, beaver_allowed=True) is Answer.BEAVER


def test_any_bot_spec_can_sit_in_any_seat_and_the_ledger_sums_to_zero():
    specs = ["pubeval", "random", "race", "pipcube"]
    seats = [BotSeat(make_bot(s, np.random.default_rng(i))) for i, s in enumerate(specs)]
    run = seat_and_play(seats, 6, np.random.default_rng(5), GameOptions(jacoby=True, beavers=True))
    assert len(run.games) == 6 and sum(run.session.ledger) == 0
    assert (ledger_matrix(run) == -ledger_matrix(run).T).all()
    assert [f.points for f in figures(run)] == list(run.session.ledger)
    for rec in run.games:
        json.dumps(game_line(rec, run.labels))
    assert "ledger" in table(run) and summary(run)["ledger_sum"] == 0


def test_gnubg_sits_in_a_chouette_seat():
    pytest.importorskip("gnubg_nn")
    seats = [BotSeat(make_bot("gnubg:ply=0")), BotSeat(RaceBot()), BotSeat(RandomBot(np.random.default_rng(1)))]
    run = seat_and_play(seats, 2, np.random.default_rng(2))
    assert sum(run.session.ledger) == 0


def test_repeated_specs_are_named_by_seat():
    assert unique_labels(["pubeval", "random", "pubeval"]) == ("pubeval#1", "random", "pubeval#3")


def test_every_team_turn_asks_each_member_still_playing():
    seats = [Scripted("box", double=True), Scripted("c", answer=Answer.TAKE), Scripted("m", answer=Answer.PASS)]
    rec = one_game(seats)
    # m passed the box's first double: from then on only c is asked for the team's plays
    assert rec.game.active == (1,)
    assert len(seats[2].roles) < len(seats[1].roles)
