"""Property tests (hypothesis): invariants of positions, plays, notation and IDs."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dice import Roll
from engine.ids import IdError, MatchInfo, match_id, match_info_from_id, position_from_id, position_id, xgid, xgid_from_text, Xgid
from engine.notation import AmbiguousPlayError, IllegalPlayError, NotationError, legal_plays, parse_play
from engine.position import Position
from engine.randpos import random_game_positions, random_scatter_positions

_POOL = np.concatenate([
    random_game_positions(np.random.default_rng(11), 400),
    random_scatter_positions(np.random.default_rng(12), 400),
])
positions = st.integers(0, len(_POOL) - 1).map(lambda i: Position.from_array(_POOL[i]))
rolls = st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda d: Roll.of(*d))
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def checkers(p: Position) -> tuple[int, int]:
    return p.off + sum(x for x in p.board if x > 0), p.opp_off - sum(x for x in p.board if x < 0)


@FAST
@given(positions, rolls)
def test_every_result_keeps_15_checkers_a_side(p, roll):
    for play in legal_plays(p, roll):
        assert checkers(play.result) == (15, 15)
        assert checkers(play.next_position) == (15, 15)


@FAST
@given(positions)
def test_flip_twice_is_the_identity(p):
    assert p.flip().flip() == p
    assert p.flip().pips() == p.pips()[::-1]


@FAST
@given(positions, rolls)
def test_pips_drop_by_exactly_the_dice_used_unless_bearing_off(p, roll):
    for play in legal_plays(p, roll):
        moved = sum(m.from_point - m.to_point for m in play.moves)
        opp_gain = sum(m.to_point for m in play.moves if m.hit)  # his checker goes back t pips
        before, opp_before = p.pips()
        after, opp_after = play.result.pips()
        assert before - after == moved
        assert opp_after - opp_before == opp_gain
        if not any(m.to_point == 0 for m in play.moves):
            left = list(roll.dice())
            for m in play.moves:
                left.remove(m.from_point - m.to_point)  # each step is exactly one die
            assert moved == sum(roll.dice()) - sum(left)


@FAST
@given(positions, rolls)
def test_parse_of_format_is_the_play(p, roll):
    for play in legal_plays(p, roll):
        assert parse_play(p, roll, play.text) == play


@FAST
@given(positions)
def test_position_id_round_trips(p):
    assert position_from_id(position_id(p)) == p


@FAST
@given(
    st.integers(0, 6).map(lambda k: 1 << k),
    st.sampled_from([None, 0, 1]),
    st.integers(0, 1),
    st.integers(0, 1),
    st.sampled_from([(0, 0)] + [(a, b) for a in range(1, 7) for b in range(1, a + 1)]),
    st.integers(0, 25),
    st.data(),
)
def test_match_id_round_trips(cube, owner, on_roll, turn, dice, length, data):
    s0 = data.draw(st.integers(0, max(length, 0)))
    s1 = data.draw(st.integers(0, max(length, 0)))
    info = MatchInfo(cube_value=cube, cube_owner=owner, player_on_roll=on_roll, turn=turn, dice=dice,
                     match_length=length, score=(s0, s1) if length else (0, 0),
                     crawford=bool(length) and data.draw(st.booleans()), jacoby=not length and data.draw(st.booleans()))
    assert match_info_from_id(match_id(info)) == info


@FAST
@given(positions, st.sampled_from([1, -1]), st.sampled_from([None, (3, 1), (6, 6)]))
def test_xgid_round_trips(p, turn, dice):
    x = Xgid(p, turn=turn, dice=dice)
    assert xgid_from_text(xgid(x)) == x


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40))
def test_parsers_never_crash_on_arbitrary_text(text):
    start = Position.start()
    for fn in (
        lambda: parse_play(start, Roll(3, 1), text),
        lambda: position_from_id(text),
        lambda: match_info_from_id(text),
        lambda: xgid_from_text(text),
        lambda: Roll.parse(text),
    ):
        try:
            fn()
        except (NotationError, IllegalPlayError, AmbiguousPlayError, IdError, ValueError):
            pass


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789/*() barofBAROF", max_size=30))
def test_notation_like_text_gives_only_typed_errors(text):
    try:
        parse_play(Position.start(), Roll(6, 6), text)
    except (NotationError, IllegalPlayError, AmbiguousPlayError):
        pass
