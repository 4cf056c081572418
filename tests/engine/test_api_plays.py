"""The plays an Engine answers with: their text is written on first use, and is the
same as the notation, Position ID and probabilities written at once."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from engine.api import Engine, PlayInfo
from engine.evaluator import probs_dict
from engine.heuristic import HeuristicEvaluator
from engine.ids import position_id
from engine.movegen import legal_results_with_steps
from engine.notation import format_play
from engine.position import Position
from engine.randpos import random_game_positions


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(HeuristicEvaluator())


def test_a_ranked_play_reads_as_the_notation_id_and_probabilities_of_its_result(engine):
    rng = np.random.default_rng(5)
    checked = 0
    for b in random_game_positions(rng, 60):
        pos = Position.from_array(b)
        if pos.is_game_over():
            continue
        dice = tuple(int(d) for d in sorted(rng.integers(1, 7, size=2), reverse=True))
        res = engine.best(pos, dice, ply=1, top=3)
        boards, steps, nsteps = legal_results_with_steps(b, *dice)
        by_steps = {tuple(map(tuple, steps[k][: nsteps[k]].tolist())): k for k in range(len(boards))}
        for p in res.plays:
            if not p.steps:
                continue
            k = by_steps[p.steps]
            assert p.play == format_play(pos, p.steps)
            assert p.position_id == position_id(boards[k], after_play=True)
            assert set(p.probabilities) == {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
            checked += 1
    assert checked > 50


def test_a_play_written_at_once_equals_the_same_play_written_on_first_use(engine):
    pos = Position.start()
    lazy = engine.best(pos, (3, 1), ply=1).plays[0]
    eager = PlayInfo(play=lazy.play, steps=lazy.steps, position_id=lazy.position_id, equity=lazy.equity,
                     probabilities=dict(lazy.probabilities), cubeful_equity=None, difference=0.0, ply=1)
    assert lazy == eager and hash(lazy) == hash(eager) and repr(lazy) == repr(eager)
    assert lazy.to_dict() == eager.to_dict()
    assert lazy.probabilities == probs_dict(np.array([lazy.probabilities[k] for k in lazy.probabilities]))


def test_a_play_cannot_be_changed_and_survives_pickling(engine):
    p = engine.best(Position.start(), (6, 5), ply=1).plays[0]
    with pytest.raises(AttributeError):
        p.equity = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        p.play = "24/13"  # type: ignore[misc]
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.play == p.play == format_play(Position.start(), p.steps)
