"""Perft-style counts: distinct results per roll for fixed positions equal the stored file.

``tests/data/perft.json`` was generated with gnubg-nn's ``moves()`` as the reference
(run ``python -m tests.test_perft`` to regenerate it); the test checks our generator
against the committed numbers, so it needs no gnubg.
"""
import json
from pathlib import Path

import numpy as np

from engine.dice import ALL_ROLLS
from engine.ids import position_from_id, position_id
from engine.movegen import legal_results
from engine.position import Position, flip_array

DATA = Path(__file__).resolve().parents[1] / "data" / "perft.json"

NAMED = {
    "start": Position.start(),
    "after 31 8/5 6/5, black on roll": Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {5: 2, 6: 4, 8: 2, 13: 5, 24: 2}),
    "one on the bar vs 5-point board": Position.from_points({25: 1, 6: 5, 8: 3, 13: 6}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 13: 3, 24: 2}),
    "two on the bar": Position.from_points({25: 2, 6: 5, 8: 3, 13: 5}, {6: 5, 8: 3, 13: 5, 21: 1, 24: 1}),
    "bear-off with gaps": Position.from_points({6: 3, 4: 2, 2: 4, 1: 1}, {18: 2, 1: 13}),
    "bear-off vs contact": Position.from_points({6: 4, 5: 3, 4: 3, 3: 2}, {23: 1, 24: 2, 12: 5}),
    "prime vs back checkers": Position.from_points({4: 2, 5: 2, 6: 3, 7: 2, 8: 3, 9: 2, 13: 1}, {24: 2, 23: 1, 13: 6, 8: 3, 6: 3}),
    "blitz": Position.from_points({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 8: 2}, {25: 2, 12: 2, 13: 5, 8: 3, 6: 3}),
}


def _counts(p: Position) -> dict[str, int]:
    b = p.array()
    return {str(r): int(len(legal_results(b, r.high, r.low))) for r in ALL_ROLLS}


def _depth2_start() -> int:
    total = 0
    b = Position.start().array()
    for r in ALL_ROLLS:
        for child in legal_results(b, r.high, r.low):
            opp = flip_array(child)
            for r2 in ALL_ROLLS:
                total += len(legal_results(opp, r2.high, r2.low))
    return total


def test_distinct_results_per_roll_equal_the_reference_counts():
    data = json.loads(DATA.read_text())
    assert len(data["positions"]) >= 20
    for entry in data["positions"]:
        p = position_from_id(entry["position_id"])
        assert _counts(p) == entry["counts"], entry["name"]


def test_start_position_two_ply_perft():
    data = json.loads(DATA.read_text())
    assert _depth2_start() == data["start_depth2"]


def _generate() -> dict:
    """The reference file from gnubg-nn (a no-play roll counts one result, as ours does)."""
    import gnubg_nn

    from engine.position import to_gnubg_board
    from engine.randpos import random_game_positions, random_scatter_positions

    def ref_counts(p: Position) -> dict[str, int]:
        gb = to_gnubg_board(p.array())
        return {str(r): max(len(gnubg_nn.moves(gb, r.high, r.low)), 1) for r in ALL_ROLLS}

    entries = [{"name": k, "position_id": position_id(v), "counts": ref_counts(v)} for k, v in NAMED.items()]
    rng = np.random.default_rng(2024)
    extra = np.concatenate([random_game_positions(rng, 16), random_scatter_positions(rng, 8)])
    for i, b in enumerate(extra):
        p = Position.from_array(b)
        entries.append({"name": f"seeded random {i}", "position_id": position_id(p), "counts": ref_counts(p)})
    depth2 = 0
    start = to_gnubg_board(Position.start().array())
    for r in ALL_ROLLS:
        for key in gnubg_nn.moves(start, r.high, r.low):
            child = gnubg_nn.boardfromkey(key)
            opp = [child[1], child[0]]  # the opponent on roll
            for r2 in ALL_ROLLS:
                depth2 += max(len(gnubg_nn.moves(opp, r2.high, r2.low)), 1)
    return {"source": "gnubg-nn moves()", "positions": entries, "start_depth2": depth2}


if __name__ == "__main__":
    DATA.write_text(json.dumps(_generate(), indent=1) + "\n")
    print(f"wrote {DATA}")
