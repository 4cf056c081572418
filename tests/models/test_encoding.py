"""Network inputs: shapes, flip symmetry, known values."""
import numpy as np

from engine.position import Position, flip_array
from engine.randpos import random_game_positions
from models.encoding import NUM_INPUTS, SIDE_INPUTS, encode


def test_encoding_has_the_documented_width():
    x = encode(Position.start().array())
    assert x.shape == (1, NUM_INPUTS) and x.dtype == np.float32


def test_start_position_encodes_both_sides_alike():
    x = encode(Position.start().array())[0]
    assert np.array_equal(x[:SIDE_INPUTS], x[SIDE_INPUTS : 2 * SIDE_INPUTS])
    # 2 on 24: units n>=1, n>=2 set, n>=3 not
    assert list(x[4 * 23 : 4 * 24]) == [1.0, 1.0, 0.0, 0.0]
    # 5 on 6: n>=3 and (5-3)/2
    assert list(x[4 * 5 : 4 * 6]) == [1.0, 1.0, 1.0, 1.0]
    assert x[96 + 2] == 1.0  # pips 167/167
    assert x[-2] == 0.0 and x[-1] == 0.0  # contact, equal pips


def test_flipping_the_board_swaps_the_side_blocks():
    boards = random_game_positions(np.random.default_rng(3), 300)
    a = encode(boards)
    b = encode(flip_array(boards))
    assert np.allclose(a[:, :SIDE_INPUTS], b[:, SIDE_INPUTS : 2 * SIDE_INPUTS])
    assert np.allclose(a[:, SIDE_INPUTS : 2 * SIDE_INPUTS], b[:, :SIDE_INPUTS])
    assert np.allclose(a[:, -2], b[:, -2])
    assert np.allclose(a[:, -1], -b[:, -1])


def test_shot_chance_counts_rolls_that_hit_a_blot():
    # my blot on 20 (opponent's 5-point area seen from me), an opponent checker 6 pips below it
    # on my 14 (moves upwards): it hits with any 6 and with combinations summing to 6.
    pos = Position.from_points({20: 1, 6: 14}, {11: 1, 1: 14})
    x = encode(pos.array())[0]
    # rolls containing a 6: 11/36; sums to 6 without a 6: 5-1, 4-2 (2 each), 3-3, 2-2 (1 each): 6/36
    # doubles 1-1? 4 pips only. 2-2 reaches 6 (three steps), 3-3 two steps.
    assert abs(x[96 + 8] - 17 / 36) < 1e-6


def test_borne_off_and_bar_inputs():
    pos = Position.from_points({25: 2, 1: 3}, {6: 5})
    x = encode(pos.array())[0]
    assert x[96] == 1.0  # two on the bar / 2
    assert abs(x[97] - 10 / 15) < 1e-6
    assert abs(x[SIDE_INPUTS + 97] - 10 / 15) < 1e-6


def test_every_encoder_writes_every_input_so_its_buffer_need_not_be_zeroed():
    # the nets encode small batches into np.empty buffers: a column an encoder skipped
    # would keep garbage, here NaN
    from engine.randpos import random_scatter_positions
    from models.encoding import ENCODINGS, encoder

    rng = np.random.default_rng(2)
    boards = np.concatenate([random_game_positions(rng, 1500), random_scatter_positions(rng, 1500)])
    for name in ENCODINGS:
        n, enc = encoder(name)
        out = np.full((len(boards), n + 1), np.nan, np.float32)
        enc(boards, out=out)
        assert not np.isnan(out[:, :n]).any(), name
        np.testing.assert_array_equal(out[:, :n], enc(boards), err_msg=name)
        assert np.isnan(out[:, n]).all(), name  # nothing written past its inputs
