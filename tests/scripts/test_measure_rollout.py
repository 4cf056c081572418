"""scripts/measure_rollout.py: where its contact positions come from."""
from __future__ import annotations

import numpy as np

from engine.heuristic import HeuristicEvaluator
from engine.position import Position
from scripts.measure_rollout import selfplay_contact_positions


def test_selfplay_positions_are_live_contact_positions_and_repeat_for_a_seed():
    ev = HeuristicEvaluator()
    a = selfplay_contact_positions(ev, 12, seed=5)
    b = selfplay_contact_positions(ev, 12, seed=5)
    assert len(a) == 12
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    for board in a:
        p = Position.from_array(board)
        assert not p.is_race() and not p.is_game_over()
        assert int(board[board > 0].sum()) <= 15 and int(-board[board < 0].sum()) <= 15


def test_another_seed_gives_other_positions():
    ev = HeuristicEvaluator()
    a = selfplay_contact_positions(ev, 6, seed=1)
    b = selfplay_contact_positions(ev, 6, seed=2)
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))
