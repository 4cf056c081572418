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


def test_batches_with_positions_of_thousands_of_plays_do_not_inflate_the_buffers():
    from engine import movegen
    from engine.position import Position

    # 15 checkers on 15 different points, opponent on the bar: 1-1 has 2,224 distinct plays
    spread = Position.from_points({p: 1 for p in (3, 4, 5, 7, 8, 10, 11, 13, 15, 16, 17, 19, 21, 23, 24)}, {25: 15})
    b = spread.array()
    single = movegen.legal_results(b, 1, 1)
    assert len(single) > 2000
    before = movegen._batch_cap[0]
    for _ in range(40):  # once a rare position blew the batch buffer up on every call
        children, offsets = movegen.children_batch(np.stack([b, b]), np.array([[1, 1], [1, 1]]))
    assert len(children) == 2 * len(single) and list(offsets) == [0, len(single), 2 * len(single)]
    assert movegen._batch_cap[0] <= max(before, 2 * 2 * len(single))
