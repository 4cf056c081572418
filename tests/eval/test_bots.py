"""Bots: legal plays only, spec parsing, the pip-count and Janowski cube rules."""
import numpy as np
import pytest

from engine.cube import CubeOwner, CubeState
from engine.movegen import legal_results
from engine.position import Position, flip_array
from eval.bots import (
    BotSpecError,
    CubeResponse,
    JanowskiCube,
    PipCubeBot,
    PubevalBot,
    RaceBot,
    RandomBot,
    TablaBot,
    format_bot_spec,
    make_bot,
    parse_bot_spec,
    pip_lead,
    race_scores,
)
from eval.duel import play_pairs
from eval.pubeval import pubeval_scores


class PubevalEvaluator:
    """A fake network: a monotone map of pubeval for the side that has just moved."""

    def evaluate(self, boards):
        probs = np.zeros((len(boards), 5))
        probs[:, 0] = 1.0 / (1.0 + np.exp(pubeval_scores(flip_array(boards)) / 10.0))
        return probs


def _assert_only_legal_plays(bot, other, seed, pairs=6):
    _, _, history = play_pairs(bot, other, seed, np.arange(pairs), record=True)
    checked = 0
    for game in history:
        for dice, before, after in game:
            results = legal_results(before, int(dice[0]), int(dice[1]))
            assert (results == after[None, :]).all(axis=1).any(), (before.tolist(), dice.tolist(), after.tolist())
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("spec", ["random:seed=3", "race", "pipcube", "pubeval"])
def test_baseline_bots_play_only_legal_plays(spec):
    _assert_only_legal_plays(make_bot(spec), RandomBot(np.random.default_rng(1)), seed=11)


def test_gnubg_bot_plays_only_legal_plays():
    pytest.importorskip("gnubg_nn")
    _assert_only_legal_plays(make_bot("gnubg:ply=0"), make_bot("race"), seed=12, pairs=3)


def test_tabla_bot_plays_only_legal_plays():
    _assert_only_legal_plays(TablaBot(PubevalEvaluator(), ply=1), make_bot("race"), seed=13, pairs=3)


def test_specs_parse_and_format_back():
    assert parse_bot_spec("gnubg:ply=1") == ("gnubg", {"ply": "1"})
    assert parse_bot_spec(" Tabla:ply=2, model=models/x.pt ") == ("tabla", {"ply": "2", "model": "models/x.pt"})
    assert format_bot_spec(*parse_bot_spec("tabla:ply=2,model=m.pt")) == "tabla:ply=2,model=m.pt"
    assert parse_bot_spec("race") == ("race", {})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nobot", "unknown bot"),
        ("race:ply=2", "has no option"),
        ("gnubg:ply", "key=value"),
        ("gnubg:ply=x", "integer"),
        ("gnubg:ply=7", "0 to 2"),
        ("tabla:ply=0", "1 to 3"),
        ("gnubg:ply=1,ply=2", "twice"),
        ("tabla:model=/no/such/model.pt", "not found"),
    ],
)
def test_bad_specs_give_a_clear_error(spec, message):
    from scripts.evaluators import load_evaluator

    with pytest.raises(BotSpecError, match=message):
        make_bot(spec, load_evaluator=load_evaluator)


def test_the_tabla_bot_gets_its_evaluator_from_the_loader_it_is_given():
    seen = []

    def loader(model):
        seen.append(model)
        return PubevalEvaluator()

    bot = make_bot("tabla:ply=1", load_evaluator=loader)
    assert isinstance(bot, TablaBot) and seen == [None]
    with pytest.raises(BotSpecError, match="loader"):
        make_bot("tabla")


def test_random_bot_never_doubles_and_always_takes():
    bot = make_bot("random:seed=1")
    board = Position.from_points({6: 2}, {13: 15}).array()
    assert not bot.offer_double(board, CubeState())
    assert bot.respond_double(board, CubeState()) is CubeResponse.TAKE


def test_pip_rule_doubles_at_8_percent_redoubles_at_9_and_passes_beyond_12():
    # mover 100 pips; opponent 100 + lead
    def race(lead):
        """Mover 100 pips, opponent 100 + lead (one of his checkers ``lead`` pips further back)."""
        return Position.from_points({10: 10}, {10: 9, 10 + lead: 1}).array()

    bot = PipCubeBot()
    centred = CubeState()
    owned = CubeState(value=2, owner=CubeOwner.PLAYER)
    assert pip_lead(race(8)) == pytest.approx(0.08)
    assert bot.offer_double(race(8), centred)
    assert not bot.offer_double(race(7), centred)
    assert not bot.offer_double(race(8), owned)
    assert bot.offer_double(race(9), owned)
    assert bot.respond_double(race(12), centred) is CubeResponse.TAKE
    assert bot.respond_double(race(13), centred) is CubeResponse.DROP


def test_janowski_cube_doubles_and_passes_a_crushing_position_and_holds_an_even_one():
    board = Position.start().array()
    crushing = JanowskiCube(lambda b: np.array([0.9, 0.0, 0.0, 0.0, 0.0]))
    assert crushing.offer_double(board, CubeState())
    assert crushing.respond_double(board, CubeState()) is CubeResponse.DROP
    even = JanowskiCube(lambda b: np.array([0.5, 0.1, 0.0, 0.1, 0.0]))
    assert not even.offer_double(board, CubeState())
    assert even.respond_double(board, CubeState()) is CubeResponse.TAKE


def test_race_bot_hits_a_blot_when_it_can_safely():
    # opponent blot on our 5 (his 20); 3-1: 8/5* 6/5 hits and makes the point, leaving no blot
    board = Position.from_points({8: 3, 6: 3, 13: 9}, {20: 1, 24: 14}).array()
    chosen = RaceBot().choose_play(board, 3, 1)
    assert chosen[0] == -1 and chosen[5] == 2


def test_race_bot_bears_off_as_many_checkers_as_it_can_in_a_race():
    board = Position.from_points({1: 3, 2: 2}, {1: 15}).array()
    chosen = RaceBot().choose_play(board, 2, 1)
    assert (chosen[1:26].clip(min=0)).sum() == 3


def test_race_bot_plays_a_highest_race_score_or_a_win_through_the_one_ply_chooser():
    rng = np.random.default_rng(8)
    boards = []
    for _ in range(60):  # positions of random games
        b = Position.start().array()
        for _ in range(int(rng.integers(0, 80))):
            results = legal_results(b, *map(int, rng.integers(1, 7, 2)))
            nxt = results[int(rng.integers(len(results)))]
            if not (nxt[1:] > 0).any():
                break
            b = flip_array(nxt)
        boards.append(b)
    boards = np.array(boards, np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    chosen = RaceBot().choose_batch(boards, dice)
    for board, (d1, d2), play in zip(boards, dice, chosen):
        results = legal_results(board, int(d1), int(d2))
        won = ~(results > 0).any(axis=1)
        if won.any():
            assert not (play > 0).any()
        else:
            assert race_scores(play[None, :])[0] >= race_scores(results).max() - 1e-9


def test_pubeval_bot_plays_pubevals_choice():
    from eval.pubeval import choose

    board = Position.start().array()
    np.testing.assert_array_equal(PubevalBot().choose_play(board, 3, 1), choose(board, 3, 1))
