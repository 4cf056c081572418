"""The set of results of every roll equals GNU Backgammon's move generator (gnubg-nn)."""
import numpy as np
import pytest

from engine.movegen import legal_results
from engine.position import from_gnubg_board, to_gnubg_board
from engine.randpos import random_game_positions, random_scatter_positions

gnubg_nn = pytest.importorskip("gnubg_nn")


def test_results_equal_gnubg_moves_on_20000_random_position_roll_pairs():
    rng = np.random.default_rng(20261202)
    boards = np.concatenate([random_game_positions(rng, 6000), random_scatter_positions(rng, 4000)])
    assert (boards[:, 25] > 0).sum() > 500, "bar positions are covered"
    assert sum(1 for b in boards if (b[7:26] > 0).sum() == 0) > 500, "bear-off positions are covered"
    differences = []
    for b in boards:
        for _ in range(2):
            d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
            ours = {tuple(int(v) for v in r) for r in legal_results(b, d1, d2)}
            keys = gnubg_nn.moves(to_gnubg_board(b), d1, d2)
            theirs = {tuple(int(v) for v in from_gnubg_board(gnubg_nn.boardfromkey(k))) for k in keys}
            if not keys:  # no legal play: the position stays as it is
                theirs = {tuple(int(v) for v in b)}
            if ours != theirs:
                differences.append((b.tolist(), d1, d2))
    assert differences == []
