"""Expert inputs of the contact encoding, each checked on a position worked out by hand.

Positions are written in the mover's numbering for both sides: ``me`` (positive, moving
from 24 down to 1, bar 25) and ``them`` (negative, moving up from their bar at 0).
"""
import numpy as np
import pytest

from engine.classes import BEAROFF1, BEAROFF2, CONTACT, CRASHED, OVER, RACE, classify
from models.encoding import (NUM_INPUTS_RACE, NUM_INPUTS_V2, RACE_SIDE_INPUTS, SIDE_INPUTS, SIDE_INPUTS_V2,
                             encode, encode_contact, encode_race)
from engine.position import flip_array
from engine.randpos import random_game_positions, random_scatter_positions
from models.features import (DBLS, DIRECT, ESCAPE_TABLE, FREE_SHOTS, NO_TABLE, ROLLS, SUMS, WEIGHTS, contact_features,
                             escape_from, hit_features)
from tests.rules_helpers import board


def hits(b, table=FREE_SHOTS):
    out = np.zeros(3)
    hit_features(b, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, out, table)
    if table is FREE_SHOTS:  # the shot table never changes a value
        np.testing.assert_array_equal(out, hits(b, NO_TABLE))
    return out


def contact(b):
    out = np.zeros(11)
    contact_features(b, ESCAPE_TABLE, out)
    return out


def test_one_blot_five_away_is_hit_by_fifteen_rolls_and_loses_its_pips():
    # 11 rolls with a 5, plus 4-1 and 3-2 (two ways each): 15; a hit on the 8-point costs 17 pips
    b = board({8: 1, 1: 14}, {3: 1, 24: 14})
    p1, p2, loss = hits(b)
    assert p1 == pytest.approx(15 / 36) and p2 == 0.0 and loss == pytest.approx(15 * 17 / 36)


def test_two_blots_count_double_shots_and_the_worse_hit():
    # blots 5 and 7 away: 15 rolls hit the 8-point blot, 6-1 and 4-3 only the 10-point one;
    # 5-2 can hit either
    b = board({8: 1, 10: 1, 1: 13}, {3: 1, 24: 14})
    p1, p2, loss = hits(b)
    assert p1 == pytest.approx(19 / 36)
    assert p2 == pytest.approx(2 / 36)
    assert loss == pytest.approx((15 * 17 + 4 * 15) / 36)


def test_the_shot_table_gives_the_same_shots_as_counting_them_one_by_one():
    # the table (distances up to 12 by the held points in between) against _blot_mask on
    # positions of play and scattered ones, both sides, with checkers on the bar or not
    rng = np.random.default_rng(11)
    boards = np.concatenate([random_game_positions(rng, 1500), random_scatter_positions(rng, 1500)])
    boards = np.concatenate([boards, flip_array(boards)]).astype(np.int8)
    assert (boards[:, 0] < 0).any() and (boards[:, 0] == 0).any()
    for b in boards:
        fast, slow = np.zeros(3), np.zeros(3)
        hit_features(b, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, fast, FREE_SHOTS)
        hit_features(b, WEIGHTS, DIRECT, SUMS, DBLS, ROLLS, slow, NO_TABLE)
        np.testing.assert_array_equal(fast, slow)


def test_a_held_intermediate_point_blocks_the_combined_shot():
    # 4-1 must stop on 4 or 7; both held by me: only the direct 5s hit
    b = board({8: 1, 4: 2, 7: 2, 1: 10}, {3: 1, 24: 14})
    assert hits(b)[0] == pytest.approx((11 + 2) / 36)  # 3-2 still hits (stops on 5 or 6)


def test_rear_checker_behind_a_five_prime_escapes_only_with_six_one():
    b = board({24: 1, 6: 14}, {18: 2, 19: 2, 20: 2, 21: 2, 22: 2, 1: 5})
    f = contact(b)
    assert f[1] == pytest.approx(2 / 36)
    # from 23 any 6 jumps the prime; from 24 and the bar only 6-1 / 6-2: the worst is 2/36
    assert escape_from(b, 23, ESCAPE_TABLE) == pytest.approx(11 / 36)
    assert escape_from(b, 25, ESCAPE_TABLE) == pytest.approx(2 / 36)
    assert f[2] == pytest.approx(1 - 2 / 36)


def test_no_blocking_point_ahead_means_free_escape():
    b = board({24: 2, 6: 13}, {1: 15})
    assert contact(b)[1] == 1.0


def test_mobility_timing_break_contact_and_front_block_of_a_primed_checker():
    b = board({24: 1, 6: 14}, {18: 2, 19: 2, 20: 2, 21: 2, 22: 2, 1: 5})
    f = contact(b)
    assert f[0] == 0.0                      # not on the bar
    assert f[3] == pytest.approx(5 / 36)    # 24/23, 6/5, 6/4, 6/3, 6/2
    assert f[4] == pytest.approx(18 / 100)  # the 24-point checker is 18 pips from home
    assert f[5] == 0.0 and f[6] == 0.0      # no anchor
    assert f[7] == pytest.approx((23 + 14 * 5) / 152)  # pass their checkers on the 1-point
    assert f[8] == pytest.approx(1 / 6)     # of points 2-7 I hold only the 6
    assert f[9] == 0.0 and f[10] == 0.0


def test_bar_entry_is_the_square_of_the_closed_share():
    b = board({25: 1, 6: 14}, {19: 2, 21: 2, 23: 2, 1: 9})
    assert contact(b)[0] == pytest.approx(0.25)
    assert contact(board({6: 15}, {19: 2, 21: 2, 23: 2, 1: 9}))[0] == 0.0


def test_anchors_and_back_game_with_two_anchors():
    b = board({20: 2, 23: 2, 6: 11}, {1: 15})
    f = contact(b)
    assert f[5] == pytest.approx(5 / 6)    # deepest anchor: 23
    assert f[6] == pytest.approx(5 / 12)   # most advanced: 20
    assert f[9] == pytest.approx(0.25) and f[10] == 0.0  # 4 back, two anchors


def test_back_game_with_one_anchor_counts_the_checkers_back():
    f = contact(board({21: 3, 6: 12}, {1: 15}))
    assert f[9] == 0.0 and f[10] == pytest.approx(3 / 8)


def test_contact_encoding_keeps_the_first_inputs_and_is_symmetric():
    b = board({8: 1, 10: 1, 1: 13}, {3: 1, 24: 14})
    x = encode_contact(b)[0]
    assert x.shape == (NUM_INPUTS_V2,)
    v1 = encode(b)[0]
    assert np.array_equal(x[:SIDE_INPUTS], v1[:SIDE_INPUTS])
    assert x[SIDE_INPUTS] == pytest.approx(2 / 36) and x[SIDE_INPUTS + 1] == pytest.approx((15 * 17 + 4 * 15) / 36 / 24)
    flipped = encode_contact(-b[::-1].copy())[0]
    assert np.array_equal(x[:SIDE_INPUTS_V2], flipped[SIDE_INPUTS_V2:2 * SIDE_INPUTS_V2])


def test_race_encoding_counts_checkers_off_and_crossovers():
    b = board({20: 1, 8: 2, 3: 4}, {22: 5, 19: 10})  # me: 8 off
    x = encode_race(b)[0]
    assert x.shape == (NUM_INPUTS_RACE,)
    assert list(x[120:134]) == [1.0] * 8 + [0.0] * 6
    assert x[134] == pytest.approx((3 + 2 * 1) / 10)       # 20-point: 3 boundaries, 8-point: 1 each
    assert x[135] == pytest.approx((20 + 16 + 12) / 100)
    assert x[136] == pytest.approx((12 - 4) / 30)
    # the opponent: 15 on its 3- and 6-points (its own numbering), nothing off
    assert list(x[RACE_SIDE_INPUTS + 120:RACE_SIDE_INPUTS + 134]) == [0.0] * 14


def test_classes_of_finished_bearoff_race_crashed_and_contact_positions():
    boards = np.stack([
        board({}, {19: 3}),                      # I have no checker: over
        board({1: 3, 2: 3}, {19: 6}),            # 6 and 6 at home: two-sided database
        board({1: 7, 2: 3}, {19: 6}),            # 10 at home: one-sided database
        board({13: 1, 2: 3}, {19: 6}),           # no contact, not all home: race
        board({24: 2, 1: 4}, {1: 2, 19: 13}),    # contact, I have 6 left: crashed
        board({24: 2, 13: 5, 8: 3, 6: 5}, {1: 2, 12: 5, 17: 3, 19: 5}),  # the start: contact
    ])
    assert list(classify(boards)) == [OVER, BEAROFF2, BEAROFF1, RACE, CRASHED, CONTACT]


def test_races_with_every_checker_within_eight_points_use_the_one_sided_databases():
    # my last checker on my 8-point, his on his 8-point (my 17): one-sided databases
    assert classify(board({8: 1, 1: 5}, {17: 1, 19: 5}))[0] == BEAROFF1
    assert classify(board({8: 2, 7: 1}, {19: 3}))[0] == BEAROFF1  # 3 checkers, not all home
    # a checker on my 9-point, or his on his 9-point: the race net
    assert classify(board({9: 1, 1: 5}, {19: 6}))[0] == RACE
    assert classify(board({1: 6}, {16: 1, 19: 5}))[0] == RACE


def test_crashed_counts_checkers_piled_on_the_low_points_as_out_of_play():
    # 9 in play but 4 of them dead on my 1-point: 9 <= 6 + 4
    assert classify(board({24: 2, 1: 4, 2: 1, 5: 2}, {1: 2, 19: 13}))[0] == CRASHED
    assert classify(board({24: 2, 1: 1, 3: 3, 5: 3}, {1: 2, 19: 13}))[0] == CONTACT


def _race_v2_row(board):
    from models.encoding import encoder

    n, enc = encoder("tabla-race-v2")
    row = enc(board)[0]
    assert row.shape == (n,) == (286,)
    return row


def test_race_v2_estimates_a_lone_checker_on_the_8_point_by_hand():
    # 14 off and one checker on the 8-point. On the 6-point it would need one roll, or two
    # when the first is 1-1, 2-1, 3-1, 4-1 or 3-2 (9/36): 1.25 rolls; the 2 pips beyond the
    # 6-point and the crossing cost 2: + 4 / 8.17 rolls
    b = np.zeros(26, np.int8)
    b[8] = 1
    b[24], b[23] = -14, -1  # the opponent: 14 on his 1-point, 1 on his 2-point
    row = _race_v2_row(b)
    fin = 1.25 + 4 / 8.17
    assert row[137] == pytest.approx(fin / 20, abs=1e-6)
    assert row[138] == 0.0  # one checker is off: no gammon to save
    assert row[139] == pytest.approx(1 / 15) and row[140] == 0.0 and row[141] == 0.0
    # the opponent, none off: every roll bears a checker off (a 1 or a 2 exactly, a higher
    # die the checker on his 2-point), so his first checker needs exactly one roll
    assert row[142 + 138] == pytest.approx(1 / 10, abs=1e-6)
    assert row[284] == pytest.approx((16 - 8) / 50) and row[285] == pytest.approx((row[142 + 137] * 20 - fin) / 5, abs=1e-5)


def test_race_v2_counts_the_checkers_left_in_the_other_home_board():
    b = np.zeros(26, np.int8)
    b[20], b[23], b[6] = 1, 2, 12
    b[1] = -15
    row = _race_v2_row(b)
    assert row[139] == pytest.approx(3 / 15) and row[140] == pytest.approx(3 / 5)
    assert row[141] == pytest.approx((2 + 2 * 5) / 20)
