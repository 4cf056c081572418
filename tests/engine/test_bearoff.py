"""The exact bearoff databases (engine.bearoff): indexing, brute force, hand-worked values,
backward-induction consistency over all two-sided positions, determinism, gnubg oracle."""
from __future__ import annotations

import hashlib
import zlib
from functools import lru_cache
from itertools import product

import numpy as np
import pytest

from engine import bearoff as bo
from engine import bearoff_build as bb
from engine.dice import ALL_ROLLS
from engine.movegen import legal_results
from engine.position import Position, flip_array

SHIPPED = bo.SHIPPED_DIR / bo.ONE_SIDED_FILE


def home(mine: dict[int, int], theirs: dict[int, int] | None = None) -> np.ndarray:
    """A board from ``{point: count}`` maps (each side in its own numbering)."""
    return Position.from_points(mine, theirs or {}).array()


def counts_board(c) -> np.ndarray:
    """The mover's six home-point counts as a board with the opponent all off."""
    b = np.zeros(26, np.int8)
    b[1:7] = c
    return b


@pytest.fixture(scope="module")
def ts_raw():
    return bb.build_two_sided()


@pytest.fixture(scope="module")
def db(ts_raw, tmp_path_factory):
    d = tmp_path_factory.mktemp("bearoff")
    bo.write_db(d / bo.TWO_SIDED_FILE, bo.two_sided_arrays(ts_raw), "two-sided")
    return bo.BearoffDB(SHIPPED, d / bo.TWO_SIDED_FILE)


# ---------------------------------------------------------------------- indexing
def test_index_is_a_bijection_in_gnubg_numbering():
    pos = bb.all_positions()
    assert len({tuple(p) for p in pos}) == bb.ONE_SIDED_SIZE == 54264
    assert pos.sum(axis=1).max() == 15
    ranks = [bo.counts_index(p) for p in pos[::97]]
    assert ranks == list(range(0, bb.ONE_SIDED_SIZE, 97))
    assert tuple(pos[1]) == (1, 0, 0, 0, 0, 0) and tuple(pos[6]) == (0, 0, 0, 0, 0, 1)
    assert tuple(pos[7]) == (2, 0, 0, 0, 0, 0) and tuple(pos[54263]) == (0, 0, 0, 0, 0, 15)
    small = pos.sum(axis=1) <= 6
    assert small[:924].all() and not small[924:].any()


def test_range_predicates_need_every_checker_home():
    boards = np.stack([
        home({6: 2, 1: 3}, {5: 4}),       # two-sided
        home({6: 7}, {1: 1}),             # one-sided only: 7 checkers
        home({7: 1, 6: 1}, {1: 1}),       # a checker outside
        home({6: 1}, {7: 1}),             # an opponent checker outside his home board
        home({6: 1, 25: 1}, {1: 1}),      # on the bar
        Position.start().array(),
    ])
    assert bo.in_one_sided(boards).tolist() == [True, True, False, False, False, False]
    assert bo.in_two_sided(boards).tolist() == [True, False, False, False, False, False]
    assert bo.in_one_sided_wide(boards).tolist() == [True, True, True, True, False, False]
    assert bo.in_one_sided_wide(np.stack([home({9: 1}, {1: 1}), home({1: 1}, {9: 1})])).tolist() == [False, False]


# ---------------------------------------------------------------------- one-sided
def test_one_sided_rows_sum_to_one_exactly():
    os_db = bo.read_db(SHIPPED, "one-sided")
    for name in ("dist", "gammon"):
        assert (os_db[name].sum(axis=1, dtype=np.int64) == bb.SCALE).all(), name


@lru_cache(maxsize=None)
def brute_all_off(c: tuple[int, ...]) -> tuple[float, tuple[float, ...]]:
    """(mean, distribution over 0..31 rolls) by direct recursion over the 36 dice outcomes."""
    if sum(c) == 0:
        return 0.0, (1.0,) + (0.0,) * 31
    mean, dist = 1.0, np.zeros(32)
    for d1, d2 in product(range(1, 7), repeat=2):
        children = [tuple(int(x) for x in r[1:7]) for r in legal_results(counts_board(c), d1, d2)]
        m, dd = min((brute_all_off(ch) for ch in children), key=lambda t: t[0])
        mean += m / 36
        dist[1:] += np.array(dd[:-1]) / 36
    return mean, tuple(dist)


@lru_cache(maxsize=None)
def brute_first_off(c: tuple[int, ...]) -> tuple[float, tuple[float, ...]]:
    """(mean, distribution) of the rolls to bear off a first checker from 15 on the board."""
    mean, dist = 1.0, np.zeros(16)
    for d1, d2 in product(range(1, 7), repeat=2):
        children = [tuple(int(x) for x in r[1:7]) for r in legal_results(counts_board(c), d1, d2)]
        if any(sum(ch) < 15 for ch in children):
            dist[1] += 1 / 36
            continue
        m, dd = min((brute_first_off(ch) for ch in children), key=lambda t: t[0])
        mean += m / 36
        dist[1:] += np.array(dd[:-1]) / 36
    return mean, tuple(dist)


def test_one_sided_matches_brute_force_for_up_to_three_checkers(db):
    pos = bb.all_positions(84)  # every position of 0-3 checkers
    assert pos.sum(axis=1).max() == 3
    dist, _ = db.distributions(np.arange(84))
    for i, c in enumerate(pos):
        mean, want = brute_all_off(tuple(int(x) for x in c))
        assert np.abs(dist[i] - np.array(want)).max() <= 1.0 / bb.SCALE, tuple(c)
        assert db.expected_rolls(i) == pytest.approx(mean, abs=1e-3)


@pytest.mark.parametrize("counts", [(14, 0, 0, 0, 0, 1), (5, 0, 0, 0, 10, 0), (13, 0, 0, 2, 0, 0)])
def test_first_checker_off_matches_brute_force(db, counts):
    _, first = db.distributions(bo.counts_index(counts))
    _, want = brute_first_off(counts)
    assert np.abs(first - np.array(want)).max() <= 1.0 / bb.SCALE


def test_expected_rolls_of_known_positions(db):
    one_on_1, one_on_6, two_on_6 = (bo.counts_index(c) for c in
                                    [(1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 2)])
    assert db.one_sided["dist"][one_on_1, 1] == bb.SCALE  # exactly one roll
    # one checker on the 6-point: 27 of 36 rolls take it off (all but 11, 21, 31, 41, 32)
    assert db.expected_rolls(one_on_6) == pytest.approx(1.25, abs=1e-4)
    # two on the 6-point come off in one roll only with 33, 44, 55 or 66
    assert db.distributions(two_on_6)[0][1] == pytest.approx(4 / 36, abs=1 / bb.SCALE)
    # 15 on the 1-point: four off with a double, two otherwise: 4 rolls only with four
    # doubles, 8 rolls exactly when the first 7 are no doubles, never more
    all_on_1 = db.distributions(bo.counts_index((15, 0, 0, 0, 0, 0)))[0]
    assert all_on_1[:4].sum() == 0 and all_on_1[9:].sum() == 0
    assert all_on_1[4] == pytest.approx(1 / 6**4, abs=1 / bb.SCALE)
    assert all_on_1[8] == pytest.approx((5 / 6) ** 7, abs=1 / bb.SCALE)


def test_gammon_chances_of_hand_worked_races(db):
    boards = np.stack([home({1: 1}, {6: 15}), home({6: 15}, {1: 1})])
    p = db.one_sided_probs(boards)
    # on roll with one checker on the 1-point: wins at once, the opponent has none off
    assert p[0].tolist() == pytest.approx([1, 1, 0, 0, 0])
    # 15 on the 6-point, the opponent wins next roll: gammoned unless this roll takes one
    # off: a 6 (11 rolls), 51, 42 (4), 33, 22 (2): 17 of 36
    assert p[1].tolist() == pytest.approx([0, 0, 0, 19 / 36, 0], abs=1e-4)


def test_game_over_positions_are_wins_or_losses(db):
    boards = np.stack([home({}, {6: 3}), home({6: 3}, {}), home({}, {6: 15}), home({6: 15}, {})])
    p = db.one_sided_probs(boards)
    want = [[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 1, 0]]
    assert np.abs(p - np.array(want)).max() < 1e-12


def test_lookups_outside_the_range_are_errors(db):
    with pytest.raises(bo.BearoffError):
        db.one_sided_probs(Position.start().array()[None, :])
    with pytest.raises(bo.BearoffError):
        db.two_sided_probs(home({6: 7}, {1: 1})[None, :])


# ---------------------------------------------------------------------- two-sided
def test_two_sided_values_of_one_checker_each(db):
    boards = np.stack([home({1: 1}, {6: 1}), home({6: 1}, {1: 1}), home({6: 1}, {6: 1}), home({6: 2}, {1: 1})])
    win = db.two_sided_probs(boards)
    assert win[:, 1:].max() == 0.0
    # from the 6-point 27/36 come off at once; otherwise the checker is home next roll
    assert win[:, 0].tolist() == pytest.approx([1.0, 0.75, 0.75 + 0.25 * 0.25, 4 / 36], abs=1e-12)


def test_two_sided_cubeful_last_roll_is_a_double_take(db):
    # 6-point vs 1-point: one roll to win 27/36; doubling gives 2 * (27/36 - 9/36) = 1.0
    eq = db.two_sided_cubeful(home({6: 1}, {1: 1})[None, :])[0]
    assert eq == pytest.approx([1.0, 1.0, 0.5], abs=1e-6)


def movegen_child_table() -> tuple[np.ndarray, np.ndarray]:
    """The children table of every two-sided index, from engine.movegen.legal_results."""
    pos = bb.all_positions(bb.TWO_SIDED_SIDE)
    index = {tuple(int(x) for x in p): i for i, p in enumerate(pos)}
    ptr, out = [0], []
    for c in pos:
        for roll in ALL_ROLLS:
            if c.sum():
                out += sorted({index[tuple(int(x) for x in r[1:7])]
                               for r in legal_results(counts_board(c), roll.high, roll.low)})
            ptr.append(len(out))
    return np.array(ptr, np.int64), np.array(out, np.int64)


def test_every_two_sided_value_is_the_best_play_average_over_the_21_rolls(ts_raw):
    residuals = bb.two_sided_residuals(ts_raw, *movegen_child_table())
    assert residuals.max() <= 1e-12


def test_sampled_two_sided_boards_satisfy_one_ply_consistency(db):
    rng = np.random.default_rng(11)
    pos = bb.all_positions(bb.TWO_SIDED_SIDE)
    for _ in range(25):
        a, b = rng.integers(1, bb.TWO_SIDED_SIDE, size=2)
        board = home({p + 1: int(n) for p, n in enumerate(pos[a]) if n}, {p + 1: int(n) for p, n in enumerate(pos[b]) if n})
        value = 0.0
        for roll in ALL_ROLLS:
            children = flip_array(legal_results(board, roll.high, roll.low))
            value += roll.weight / 36 * (1.0 - db.two_sided_probs(children)[:, 0]).max()
        assert db.two_sided_probs(board[None, :])[0, 0] == pytest.approx(value, abs=1e-12)


def test_one_sided_approximation_is_close_to_exact_in_the_two_sided_range(db):
    rng = np.random.default_rng(5)
    pos = bb.all_positions(bb.TWO_SIDED_SIDE)
    boards = np.stack([counts_board(pos[a]) - counts_board(pos[b])[::-1] for a, b in rng.integers(1, 924, (200, 2))])
    assert bo.in_two_sided(boards).all()
    diff = db.one_sided_probs(boards)[:, 0] - db.two_sided_probs(boards)[:, 0]
    assert np.abs(diff).max() < 0.03


# ---------------------------------------------------------------------- determinism
def test_one_sided_build_reproduces_the_shipped_file(tmp_path):
    arrays = bo.one_sided_arrays(bb.build_one_sided())
    meta = bo.file_meta(SHIPPED)
    assert bb.content_digest(arrays) == meta["digest"]
    sha = bo.write_db(tmp_path / bo.ONE_SIDED_FILE, arrays, "one-sided")
    if meta["zlib_version"] == zlib.ZLIB_RUNTIME_VERSION:  # the bytes depend on zlib
        assert sha == hashlib.sha256(SHIPPED.read_bytes()).hexdigest()


def test_two_sided_build_is_deterministic(ts_raw, tmp_path):
    again = bo.two_sided_arrays(bb.build_two_sided())
    first = bo.two_sided_arrays(ts_raw)
    assert bb.content_digest(again) == bb.content_digest(first)
    assert bo.write_db(tmp_path / "a.npz", first, "two-sided") == bo.write_db(tmp_path / "b.npz", again, "two-sided")


def test_a_corrupt_or_foreign_file_is_rejected(tmp_path):
    arrays = bo.read_db(SHIPPED, "one-sided")
    meta = {"kind": np.array("one-sided"), "format_version": np.array(bb.FORMAT_VERSION), "digest": np.array("0" * 64)}
    bb.write_npz(tmp_path / "bad.npz", {**arrays, **meta})
    with pytest.raises(bo.BearoffError, match="corrupt"):
        bo.read_db(tmp_path / "bad.npz", "one-sided")
    with pytest.raises(bo.BearoffError, match="not a two-sided"):
        bo.read_db(SHIPPED, "two-sided")


# ---------------------------------------------------------------------- gnubg oracle
def test_one_sided_expected_rolls_agree_with_gnubg(db):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    ids = np.arange(1, bb.ONE_SIDED_SIZE, 7)
    mine = db.expected_rolls(ids)
    theirs = np.array([sum((n + 1) * p for n, p in enumerate(gnubg_nn.bearoff_probabilities(int(i)))) for i in ids])
    assert np.abs(mine - theirs).max() < 5e-4
    fifteen_on_6 = np.array(gnubg_nn.bearoff_probabilities(bb.ONE_SIDED_SIZE - 1))
    assert np.abs(db.distributions(bb.ONE_SIDED_SIZE - 1)[0][1:1 + len(fifteen_on_6)] - fifteen_on_6).max() < 5e-4


def test_two_sided_win_agrees_with_gnubg(db):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    from engine.position import to_gnubg_board

    rng = np.random.default_rng(3)
    pos = bb.all_positions(bb.TWO_SIDED_SIDE)
    boards = np.stack([counts_board(pos[a]) - counts_board(pos[b])[::-1] for a, b in rng.integers(1, 924, (100, 2))])
    theirs = np.array([gnubg_nn.probabilities(to_gnubg_board(b), 0)[0] for b in boards])
    assert np.abs(db.two_sided_probs(boards)[:, 0] - theirs).max() < 1e-4


def test_two_sided_cubeful_equities_agree_with_gnubg(db):
    import re
    import subprocess

    from engine.ids import position_id
    from tests.gnubg_cli import GNUBG

    if GNUBG is None:
        pytest.skip("GNU Backgammon is not installed")
    rng = np.random.default_rng(8)
    pos = bb.all_positions(bb.TWO_SIDED_SIDE)
    boards = np.stack([counts_board(pos[a]) - counts_board(pos[b])[::-1] for a, b in rng.integers(1, 924, (12, 2))])
    script = ["new session", "set player 0 human", "set player 1 human", "new game"]
    for b in boards:
        script += [f"set board {position_id(Position.from_array(b))}", "eval"]
    run = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(script) + "\n", capture_output=True, text=True, timeout=120)
    found = re.findall(r"^\d\. (No double|Double, take|Double, pass)\s+([+-]\d\.\d+)", run.stdout, re.MULTILINE)
    assert len(found) == 3 * len(boards)
    cubeful = db.two_sided_cubeful(boards)
    for i in range(len(boards)):
        eq = {name: float(v) for name, v in found[3 * i:3 * i + 3]}
        assert 2 * cubeful[i, 2] == pytest.approx(eq["Double, take"], abs=1e-3)  # opponent owns at 2
        proper = max(eq["No double"], min(eq["Double, take"], eq["Double, pass"]))
        assert cubeful[i, 0] == pytest.approx(proper, abs=1e-3)


# ---------------------------------------------------------------------- one-sided, points 1-8
def test_wide_index_is_a_bijection_onto_eight_counts():
    size = bb.one_sided_size(bo.WIDE_POINTS)
    assert size == 490314  # C(23, 8)
    pos = bb.all_positions(size, bo.WIDE_POINTS)
    assert pos.sum(axis=1).max() == 15 and pos.min() == 0
    sample = pos[::4999]
    assert len({tuple(p) for p in pos[::7]}) == len(pos[::7])
    assert [int(bb.rank_counts(p.astype(np.int64), bb._BINOM)) for p in sample] == list(range(0, size, 4999))


def test_wide_database_repeats_the_home_board_file_on_home_boards():
    db = bo.get_db()
    pos = bb.all_positions()[::53]
    widx = [int(bb.rank_counts(np.concatenate([p, [0, 0]]).astype(np.int64), bb._BINOM)) for p in pos]
    six = np.arange(bb.ONE_SIDED_SIZE)[::53]
    for name in ("dist", "gammon"):
        assert np.array_equal(db.wide[name][widx], db.one_sided[name][six])


@lru_cache(maxsize=None)
def _brute_wide(counts: tuple[int, ...]) -> tuple[float, tuple[float, ...]]:
    """(expected rolls, all-off distribution) of a side with ``counts`` on points 1..8, by
    brute force: each roll's play with the fewest expected rolls afterwards, down to the
    home-board file once every checker is home."""
    db = bo.get_db()
    if not any(counts[6:]):
        d = db.distributions(bo.counts_index(counts[:6]))[0]
        return float(d @ np.arange(bb.N_ROLLS)), tuple(d)
    board = np.zeros(26, np.int8)
    board[1:9] = counts
    dist = np.zeros(bb.N_ROLLS)
    mean = 1.0
    for d1, d2 in product(range(1, 7), repeat=2):
        m, d = min((_brute_wide(tuple(int(x) for x in np.maximum(ch[1:9], 0))) for ch in legal_results(board, d1, d2)),
                   key=lambda t: t[0])
        mean += m / 36
        dist[1:] += np.array(d[:-1]) / 36
    return mean, tuple(dist)


def _one_roll_from_home(board: np.ndarray) -> np.ndarray:
    return np.array(_brute_wide(tuple(int(x) for x in np.maximum(board[1:9], 0)))[1])


@pytest.mark.parametrize("mine", [{7: 1}, {8: 1, 6: 3, 1: 5}, {7: 1, 4: 1, 3: 1, 2: 3, 1: 4}, {8: 1, 7: 1, 5: 6}])
def test_checkers_on_the_7_and_8_points_match_brute_force(mine):
    db = bo.get_db()
    board = home(mine, {1: 1})
    ok, idx, _ = bo.analyse_wide(board[None])
    assert ok[0]
    got = db.wide_distributions(idx[0, 0])[0]
    assert np.abs(got - _one_roll_from_home(board)).max() <= 2.0 / bb.SCALE


def test_a_race_one_roll_from_home_is_valued_from_both_sides_distributions():
    db = bo.get_db()
    # he is on roll with 13 checkers home; I have a checker on my 7-point (33sAAMA7AwEAAA
    # after 10/7 4/3): he wins when he needs no more rolls than I do
    board = home({1: 5, 2: 4, 3: 4}, {1: 4, 2: 3, 3: 1, 4: 1, 7: 1})
    mine = _one_roll_from_home(home({1: 4, 2: 3, 3: 1, 4: 1, 7: 1}, {1: 1}))
    his = db.distributions(bo.counts_index((5, 4, 4, 0, 0, 0)))[0]
    want = float(his @ np.cumsum(mine[::-1])[::-1])
    got = db.one_sided_probs(board[None])[0]
    assert got[0] == pytest.approx(want, abs=1e-4)
    assert got[0] == pytest.approx(0.3696, abs=1e-3)
    assert got[1:].tolist() == [0.0, 0.0, 0.0, 0.0]  # checkers are off on both sides


def test_a_wide_race_with_fifteen_checkers_keeps_its_gammon_chances():
    db = bo.get_db()
    # I have all 15 on the board, two still on my 8-point; he needs one roll (one checker on
    # his 1-point): I am gammoned unless I bear one off this roll, which only 33 (8/5(2) 6/3
    # 3/off), 44 (8/4(2) 4/off(2)) and 66 (8/2(2) 6/off(2)) do: 3 of 36
    p = db.one_sided_probs(home({8: 2, 6: 13}, {1: 1})[None])[0]
    assert p.tolist() == pytest.approx([0, 0, 0, 33 / 36, 0], abs=1e-4)
    p = db.one_sided_probs(home({1: 1}, {8: 2, 6: 13})[None])[0]
    assert p.tolist() == pytest.approx([1, 1, 0, 0, 0])
