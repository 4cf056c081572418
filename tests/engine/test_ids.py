"""GNU Backgammon Position / Match IDs and XGIDs: known values, round trips, bad input."""
import numpy as np
import pytest

from engine.ids import (
    GameStateCode,
    IdError,
    MatchInfo,
    Xgid,
    match_id,
    match_info_from_id,
    position_from_id,
    position_id,
    xgid,
    xgid_from_text,
)
from engine.position import Position, to_gnubg_board
from engine.randpos import random_game_positions, random_scatter_positions
from tests.gnubg_cli import GNUBG, gnubg_ids

START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
AFTER_31 = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {5: 2, 6: 4, 8: 2, 13: 5, 24: 2})


def test_start_position_id_is_documented_value():
    assert position_id(Position.start()) == "4HPwATDgc/ABMA"
    assert position_from_id("4HPwATDgc/ABMA") == Position.start()


def test_position_id_after_opening_31_with_black_on_roll():
    assert position_id(AFTER_31) == "sGfwATDgc/ABMA"
    assert position_from_id("sGfwATDgc/ABMA") == AFTER_31


def test_position_id_round_trips_with_bar_and_borne_off_checkers():
    p = Position.from_points({25: 2, 3: 4, 1: 1}, {25: 1, 23: 3, 6: 2})
    assert p.off == 8 and p.opp_off == 9
    assert position_from_id(position_id(p)) == p


def test_position_ids_equal_gnubg_nn_on_random_positions():
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(7)
    boards = np.concatenate([random_game_positions(rng, 300), random_scatter_positions(rng, 300)])
    for b in boards:
        p = Position.from_array(b)
        pid = gnubg_nn.position_id(to_gnubg_board(b))
        assert position_id(p) == pid
        assert position_from_id(pid) == p


def test_position_id_of_a_board_array_after_a_play_is_the_flipped_positions_id():
    rng = np.random.default_rng(3)
    for b in np.concatenate([random_game_positions(rng, 200), random_scatter_positions(rng, 200)]):
        p = Position.from_array(b)
        assert position_id(b) == position_id(p)
        assert position_id(b, after_play=True) == position_id(p.flip())
        assert position_from_id(position_id(b, after_play=True)) == p.flip()


def test_position_id_with_surrounding_white_space_decodes():
    assert position_from_id("  4HPwATDgc/ABMA\n") == Position.start()


@pytest.mark.parametrize("bad", ["////////////AA", "AAAAAAAAAAAAA!", "abc", "4HPwATDgc/ABM=", " 4HPwATDgc/ABM"])
def test_position_ids_that_do_not_decode_raise_id_error(bad):
    with pytest.raises(IdError):
        position_from_id(bad)


@pytest.mark.parametrize(
    "bad",
    ["", "4HPwATDgc/ABM", "4HPwATDgc/ABMAA", "4HPwATDgc/AB!A", "//////////////", "AAAAAAAAAAAAAA" + " x"],
)
def test_malformed_position_ids_raise_id_error(bad):
    with pytest.raises(IdError):
        position_from_id(bad)


def test_position_id_with_sixteen_checkers_is_invalid():
    bits = "1" * 16 + "0" * 50
    raw = int(bits[::-1], 2).to_bytes(10, "little")
    import base64

    with pytest.raises(IdError, match="15"):
        position_from_id(base64.b64encode(raw).decode()[:14])


def test_position_id_with_a_point_held_by_both_sides_is_invalid():
    # opponent: 2 on his 24 (our 1); player on roll: 2 on our 1
    bits = "0" * 23 + "110" + "0" + "110" + "0" * 24
    raw = int(bits[::-1], 2).to_bytes(10, "little")
    import base64

    with pytest.raises(IdError, match="both sides"):
        position_from_id(base64.b64encode(raw).decode()[:14])


# ---------------------------------------------------------------------------- Match ID
def test_match_id_fields_of_a_gnubg_5_point_match():
    # gnubg 1.07: 5-point match, cube 4 owned by player 1, player 1 rolled 5-2, score 1-3
    m = match_info_from_id("UomqABAAGAAE")
    assert m == MatchInfo(cube_value=4, cube_owner=1, player_on_roll=1, turn=1, dice=(5, 2),
                          match_length=5, score=(1, 3), game_state=GameStateCode.PLAYING)
    assert match_id(m) == "UomqABAAGAAE"


def test_match_id_jacoby_bit_of_money_session():
    m = match_info_from_id("UQkAAAAAAAAA")  # gnubg: money, Jacoby on
    assert m.is_money and m.jacoby
    assert not match_info_from_id("cAkAAAAAAAAE").jacoby


def test_match_id_round_trips_every_field():
    infos = [
        MatchInfo(),
        MatchInfo(cube_value=64, cube_owner=0, player_on_roll=1, turn=0, double_offered=True, jacoby=True),
        MatchInfo(crawford=True, match_length=7, score=(6, 3), dice=(6, 6)),
        MatchInfo(match_length=25, score=(24, 24), resign=3, game_state=GameStateCode.RESIGNED),
        MatchInfo(game_state=GameStateCode.DROPPED, cube_value=2, cube_owner=1),
    ]
    for info in infos:
        mid = match_id(info)
        assert len(mid) == 12
        assert match_info_from_id(mid) == info


def test_match_id_relative_views_follow_the_player_to_act():
    m = MatchInfo(cube_value=2, cube_owner=1, player_on_roll=1, turn=1, match_length=5, score=(1, 3))
    assert m.cube_owner_relative() == "player"
    assert m.score_relative() == (3, 1)


@pytest.mark.parametrize("bad", ["", "cAkAAAAAAAA", "cAkAAAAAAAAE!", "cAk*AAAAAAAE"])
def test_malformed_match_ids_raise_id_error(bad):
    with pytest.raises(IdError):
        match_info_from_id(bad)


def test_match_id_with_dice_seven_is_invalid():
    bits = 7 << 15 | 7 << 18 | 3 << 4
    import base64

    with pytest.raises(IdError, match="dice"):
        match_info_from_id(base64.b64encode(bits.to_bytes(9, "little")).decode())


def test_match_id_with_score_past_match_length_is_invalid():
    with pytest.raises(IdError):
        MatchInfo(match_length=3, score=(4, 0))


def test_crawford_in_money_is_invalid():
    with pytest.raises(IdError):
        MatchInfo(crawford=True)


# ---------------------------------------------------------------------------- XGID
def test_xgid_of_the_start_position():
    x = xgid_from_text(START_XGID)
    assert x.position == Position.start() and x.turn == 1 and x.dice is None
    assert x.cube_value == 1 and x.cube_owner == 0 and x.max_cube == 1024
    assert xgid(x) == START_XGID


def test_xgid_with_top_player_on_roll_is_seen_from_him():
    x = xgid_from_text("XGID=-b---BD-B---eE---c-e----B-:2:-1:-1:52:1:3:0:5:10")
    assert x.position == Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {5: 2, 6: 4, 8: 2, 13: 5, 24: 2})
    assert x.cube_value == 4 and x.cube_owner_relative() == "player"
    assert x.score_relative() == (3, 1) and x.dice == (5, 2) and x.match_length == 5


def test_xgid_round_trips_fields():
    p = Position.from_points({25: 1, 6: 3, 5: 2}, {25: 2, 21: 2, 1: 1})
    cases = [
        Xgid(p, turn=1, cube_value=2, cube_owner=-1, dice=(6, 1), score=(2, 4), crawford=True, match_length=5),
        Xgid(p, turn=-1, cube_value=8, cube_owner=1, action="D", jacoby=True, beavers=True, max_cube=64),
        Xgid(p, turn=-1, score=(0, 0), max_cube=256),
    ]
    for x in cases:
        assert xgid_from_text(xgid(x)) == x


@pytest.mark.parametrize(
    "bad",
    [
        "XGID=",
        "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0",
        "XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----B-:0:0:1:71:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----Z-:0:0:1:00:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:0:0:5:10",
        "XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10",
    ],
)
def test_malformed_xgids_raise_id_error(bad):
    with pytest.raises(IdError):
        xgid_from_text(bad)


# ---------------------------------------------------------------------------- real gnubg
needs_gnubg = pytest.mark.skipif(GNUBG is None, reason="Debian's gnubg is not installed")


@needs_gnubg
@pytest.mark.parametrize(
    "text",
    [
        "XGID=-b---BD-B---eE---c-e----B-:2:-1:-1:52:1:3:0:5:10",
        "XGID=-b---BD-B---eE---c-e----B-:0:0:1:31:2:0:1:3:10",
        "XGID=aa-BBBCC---B-------c-bbbcA:0:0:1:00:0:0:1:0:10",
        "XGID=aB--BBCC-------------bbb--:3:-1:1:64:0:0:0:0:10",
    ],
)
def test_real_gnubg_reads_xgids_as_we_do(text):
    x = xgid_from_text(text)
    got = gnubg_ids(f"set xgid {text}")
    assert got is not None
    pid, mid = got
    assert position_id(x.position) == pid
    m = match_info_from_id(mid)
    assert m.cube_value == x.cube_value
    assert m.cube_owner_relative() == x.cube_owner_relative()
    assert m.score_relative() == x.score_relative()
    assert m.match_length == x.match_length and m.crawford == x.crawford
    assert m.dice == (tuple(sorted(x.dice, reverse=True)) if x.dice else (0, 0))
    if x.match_length == 0:
        assert m.jacoby == x.jacoby


@needs_gnubg
def test_real_gnubg_echoes_our_position_and_match_ids():
    p = Position.from_points({25: 1, 6: 4, 5: 3, 4: 2}, {24: 2, 6: 5, 8: 3})
    info = MatchInfo(cube_value=2, cube_owner=0, player_on_roll=1, turn=1, dice=(4, 1),
                     match_length=7, score=(2, 5))
    ours = (position_id(p), match_id(info))
    assert gnubg_ids(f"set gnubgid {ours[0]}:{ours[1]}") == ours
