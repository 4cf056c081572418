"""Interchange IDs: GNU Backgammon Position ID and Match ID, and eXtreme Gammon's XGID.

Position ID (14 characters)
    80 bits, little-endian in 10 bytes, base64 without padding. For the player NOT on
    roll first, then the player on roll, each in his own numbering: for points 1..24
    and then the bar, one ``1`` bit per checker followed by a ``0``. The starting
    position is ``4HPwATDgc/ABMA``.

Match ID (12 characters)
    66 bits (+ gnubg's Jacoby bit), little-endian in 9 bytes, base64:

    ======  =====  ==========================================================
    bits    width  field
    ======  =====  ==========================================================
    0-3     4      log2 of the cube value
    4-5     2      cube owner: 0 = player 0, 1 = player 1, 3 = centred
    6       1      player on roll (who rolls or rolled the dice)
    7       1      Crawford game
    8-10    3      game state: 0 none, 1 playing, 2 over, 3 resigned, 4 dropped
    11      1      turn: the player who must act now (differs while doubled)
    12      1      a double is being offered
    13-14   2      resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon
    15-17   3      first die (0 = not rolled)
    18-20   3      second die
    21-35   15     match length (0 = money)
    36-50   15     score of player 0
    51-65   15     score of player 1
    66      1      Jacoby rule NOT in use (gnubg >= 1.0 writes it; 0 in older IDs)
    ======  =====  ==========================================================

XGID
    ``XGID=<26 board chars>:<cube log2>:<cube pos>:<turn>:<dice>:<score bottom>:
    <score top>:<crawford/jacoby>:<match length>:<max cube log2>``. The board is
    written from the bottom player's side: character 0 is the top player's bar,
    1..24 the points in the bottom player's numbering, 25 the bottom player's bar;
    ``A``-``O`` are 1-15 bottom-player checkers, ``a``-``o`` top-player checkers,
    ``-`` empty. Cube position and turn are 1 (bottom), -1 (top), 0 (centre);
    dice ``00`` = not rolled, ``D`` = doubled, ``B`` beavered, ``R`` raccooned. The
    Crawford/Jacoby field is the Crawford flag in a match and, for money, 1 = Jacoby
    + 2 = beavers. This matches what ``set xgid`` in GNU Backgammon 1.07 reads.
"""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numba import njit

from engine.position import NUM_CHECKERS, Position

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64SET = frozenset(_B64)


class IdError(ValueError):
    """A Position ID, Match ID or XGID that cannot be decoded."""


# ---------------------------------------------------------------------------- Position ID
_BAD = 99  # first entry of a decoded tuple that is not a position


@njit(cache=True)
def _pid_bytes_to_tuple(raw):
    """Decode the 10 bytes of a Position ID into the 26-tuple of a board.

    The first entry is ``_BAD`` when the bits are not a position (then
    :func:`_invalid_id` says why). Returning a tuple lets numba build the Python object
    directly.
    """
    runs = np.zeros(50, np.int64)
    b = np.zeros(26, np.int64)
    k = 0
    n = 0
    for i in range(80):
        if (raw[i >> 3] >> (i & 7)) & 1:
            n += 1
        else:
            if k < 50:
                runs[k] = n
            k += 1
            n = 0
    opp_total = 0
    me_total = 0
    for i in range(25):
        opp_total += runs[i]
        me_total += runs[25 + i]
    if k < 50 or opp_total > 15 or me_total > 15:
        b[0] = _BAD
    else:
        b[0] = -runs[24]
        b[25] = runs[49]
        for i in range(24):
            me = runs[25 + i]
            opp = runs[23 - i]
            if me and opp:
                b[0] = _BAD
            b[i + 1] = me - opp
    return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
            b[13], b[14], b[15], b[16], b[17], b[18], b[19], b[20], b[21], b[22], b[23], b[24], b[25])


@njit(cache=True)
def _board_to_pid_bits(board, raw, after_play):
    """The 80 bits of the Position ID of ``board`` into ``raw`` (10 bytes): with the player
    on roll, or with ``after_play`` the result of his play (the opponent on roll next)."""
    for i in range(10):
        raw[i] = 0
    pos = 0
    for side in range(2):
        for i in range(25):
            if (side == 0) != after_play:
                n = -board[24 - i] if board[24 - i] < 0 else 0
            else:
                n = board[i + 1] if board[i + 1] > 0 else 0
            for _ in range(n):
                raw[pos >> 3] |= np.uint8(1 << (pos & 7))
                pos += 1
            pos += 1


def position_key(position: Position | np.ndarray, after_play: bool = False) -> bytes:
    """The 10-byte GNU Backgammon position key of a position or board array (player on
    roll), or with ``after_play`` of the board flipped (the opponent on roll)."""
    board = position.array() if isinstance(position, Position) else np.asarray(position)
    raw = np.empty(10, np.uint8)
    _board_to_pid_bits(board, raw, after_play)
    return raw.tobytes()


def position_id(position: Position | np.ndarray, after_play: bool = False) -> str:
    """The 14-character GNU Backgammon Position ID of a position or board array, the
    player on roll being the mover; with ``after_play`` the ID of the board flipped (the
    opponent on roll: the result of a play).

    >>> position_id(Position.start())
    '4HPwATDgc/ABMA'
    """
    return binascii.b2a_base64(position_key(position, after_play), newline=False)[:14].decode("ascii")


def _b64decode(text: str, length: int, what: str) -> bytes:
    if not isinstance(text, str):
        raise IdError(f"a {what} is a string, got {type(text).__name__}")
    if len(text) != length:
        raise IdError(f"a {what} has {length} characters, got {len(text)}: {text!r}")
    bad = [c for c in text if c not in _B64SET]
    if bad:
        raise IdError(f"a {what} uses base64 characters only, got {bad[0]!r} in {text!r}")
    pad = "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text + pad, validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - charset checked above
        raise IdError(f"invalid {what} {text!r}: {exc}") from None


def position_from_id(pid: str) -> Position:
    """Decode a Position ID into the position seen from the player on roll.

    Raises :class:`IdError` unless it decodes to at most 15 checkers a side with no
    point held by both sides (surrounding white space is ignored).

    >>> position_from_id('4HPwATDgc/ABMA') == Position.start()
    True
    """
    if type(pid) is str and len(pid) == 14:
        try:
            raw = binascii.a2b_base64(pid + "==", strict_mode=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == 10:
            board = _pid_bytes_to_tuple(raw)
            if board[0] != _BAD:
                return Position.trusted(board)
    elif isinstance(pid, str) and pid.strip() != pid:
        return position_from_id(pid.strip())
    raise _invalid_id(pid)


def _invalid_id(pid: object) -> IdError:
    """Why ``pid`` is not a Position ID (called only for IDs that do not decode)."""
    try:
        raw = _b64decode(pid.strip() if isinstance(pid, str) else pid, 14, "Position ID")  # type: ignore[arg-type]
    except IdError as exc:
        return exc
    bits = int.from_bytes(raw[:10], "little")
    sides: list[list[int]] = [[0] * 25, [0] * 25]
    pos = 0
    for s in range(2):
        for i in range(25):
            n = 0
            while pos < 80 and (bits >> pos) & 1:
                n += 1
                pos += 1
            if pos >= 80:
                return IdError(f"Position ID {pid!r} runs out of bits: too many checkers")
            pos += 1
            sides[s][i] = n
        if sum(sides[s]) > NUM_CHECKERS:
            who = "player on roll" if s == 1 else "opponent"
            return IdError(f"Position ID {pid!r} has {sum(sides[s])} checkers for the {who} (at most 15)")
    opp, me = sides
    for i in range(24):
        if me[i] and opp[23 - i]:
            return IdError(f"Position ID {pid!r} puts both sides on point {i + 1}")
    return IdError(f"invalid Position ID {pid!r}")  # pragma: no cover - the decoder agrees


# ---------------------------------------------------------------------------- Match ID
class GameStateCode(IntEnum):
    """Bits 8-10 of a Match ID."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """Everything a GNU Backgammon Match ID holds, for players 0 and 1 as gnubg numbers them.

    ``cube_owner`` is ``None`` for a centred cube, else 0 or 1; ``dice`` is ``(0, 0)``
    before the roll; ``match_length`` 0 is a money session.
    """

    cube_value: int = 1
    cube_owner: int | None = None
    player_on_roll: int = 0
    crawford: bool = False
    game_state: GameStateCode = GameStateCode.PLAYING
    turn: int = 0
    double_offered: bool = False
    resign: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        v = self.cube_value
        if v < 1 or v & (v - 1) or v > 1 << 15:
            raise IdError(f"cube value must be a power of two up to 32768, got {v}")
        if self.cube_owner not in (None, 0, 1):
            raise IdError(f"cube owner must be None, 0 or 1, got {self.cube_owner!r}")
        if self.player_on_roll not in (0, 1) or self.turn not in (0, 1):
            raise IdError("player on roll and turn must be 0 or 1")
        if not 0 <= self.resign <= 3:
            raise IdError(f"resignation must be 0-3, got {self.resign}")
        d1, d2 = self.dice
        if not (0 <= d1 <= 6 and 0 <= d2 <= 6) or (d1 == 0) != (d2 == 0):
            raise IdError(f"dice must be two numbers 1-6, or (0, 0) before the roll, got {self.dice}")
        if not 0 <= self.match_length < 1 << 15:
            raise IdError(f"match length out of range: {self.match_length}")
        s0, s1 = self.score
        if min(s0, s1) < 0 or max(s0, s1) >= 1 << 15:
            raise IdError(f"score out of range: {self.score}")
        if self.match_length:
            if s0 > self.match_length or s1 > self.match_length:
                raise IdError(f"score {s0}-{s1} is past the match length {self.match_length}")
        elif self.crawford:
            raise IdError("a money session has no Crawford game")

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    def cube_owner_relative(self) -> str:
        """Cube owner seen from the player who must act (``turn``): centre, player, opponent."""
        return owner_seen_by(self.cube_owner, self.turn)

    def score_relative(self) -> tuple[int, int]:
        """``(player who must act, opponent)`` scores."""
        return score_seen_by(self.score, self.turn)


def owner_seen_by(owner: int | None, player: int) -> str:
    """Cube owner (``None`` centred, else 0/1) seen by ``player``: centre, player, opponent."""
    if owner is None:
        return "centre"
    return "player" if owner == player else "opponent"


def score_seen_by(score: tuple[int, int], player: int) -> tuple[int, int]:
    """``(player, opponent)`` from absolute scores."""
    return (score[player], score[1 - player])


def match_id(info: MatchInfo) -> str:
    """Encode a :class:`MatchInfo` as a 12-character Match ID (dice stored high first)."""
    fields = [
        (0, 4, info.cube_value.bit_length() - 1),
        (4, 2, 3 if info.cube_owner is None else info.cube_owner),
        (6, 1, info.player_on_roll),
        (7, 1, int(info.crawford)),
        (8, 3, int(info.game_state)),
        (11, 1, info.turn),
        (12, 1, int(info.double_offered)),
        (13, 2, info.resign),
        (15, 3, max(info.dice)),
        (18, 3, min(info.dice)),
        (21, 15, info.match_length),
        (36, 15, info.score[0]),
        (51, 15, info.score[1]),
        (66, 1, 0 if info.jacoby else 1),
    ]
    bits = 0
    for start, width, value in fields:
        bits |= (value & ((1 << width) - 1)) << start
    return base64.b64encode(bits.to_bytes(9, "little")).decode("ascii")


def match_info_from_id(mid: str) -> MatchInfo:
    """Decode a 12-character Match ID; raises :class:`IdError` when it is invalid."""
    text = mid.strip() if isinstance(mid, str) else mid
    bits = int.from_bytes(_b64decode(text, 12, "Match ID"), "little")

    def get(start: int, width: int) -> int:
        return (bits >> start) & ((1 << width) - 1)

    owner = get(4, 2)
    if owner == 2:
        raise IdError(f"Match ID {mid!r} has an invalid cube owner")
    state = get(8, 3)
    if state > 4:
        raise IdError(f"Match ID {mid!r} has an invalid game state {state}")
    d1, d2 = get(15, 3), get(18, 3)
    if d1 > 6 or d2 > 6 or (d1 == 0) != (d2 == 0):
        raise IdError(f"Match ID {mid!r} has invalid dice {d1}-{d2}")
    try:
        return MatchInfo(
            cube_value=1 << get(0, 4),
            cube_owner=None if owner == 3 else owner,
            player_on_roll=get(6, 1),
            crawford=bool(get(7, 1)),
            game_state=GameStateCode(state),
            turn=get(11, 1),
            double_offered=bool(get(12, 1)),
            resign=get(13, 2),
            dice=(max(d1, d2), min(d1, d2)),
            match_length=get(21, 15),
            score=(get(36, 15), get(51, 15)),
            jacoby=not get(66, 1),
        )
    except IdError as exc:
        raise IdError(f"Match ID {mid!r}: {exc}") from None


# ---------------------------------------------------------------------------- XGID
@dataclass(frozen=True, slots=True)
class Xgid:
    """The fields of an XGID. ``position`` is seen from the player on roll (``turn``).

    ``turn``, ``cube_owner``: 1 = bottom player (upper-case checkers), -1 = top player,
    0 = centred cube. ``score`` is ``(bottom, top)``. ``dice`` is ``None`` before the roll;
    ``action`` is ``""``, ``"D"`` (doubled), ``"B"`` (beavered) or ``"R"`` (raccooned).
    """

    position: Position
    turn: int = 1
    cube_value: int = 1
    cube_owner: int = 0
    dice: tuple[int, int] | None = None
    action: str = ""
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False
    match_length: int = 0
    max_cube: int = 1024

    def __post_init__(self) -> None:
        if self.turn not in (1, -1):
            raise IdError(f"XGID turn must be 1 or -1, got {self.turn}")
        if self.cube_owner not in (1, 0, -1):
            raise IdError(f"XGID cube position must be 1, 0 or -1, got {self.cube_owner}")
        for v, what in ((self.cube_value, "cube value"), (self.max_cube, "maximum cube")):
            if v < 1 or v & (v - 1):
                raise IdError(f"XGID {what} must be a power of two, got {v}")
        if self.cube_value > self.max_cube:
            raise IdError(f"XGID cube {self.cube_value} is above the maximum {self.max_cube}")
        if self.action not in ("", "D", "B", "R"):
            raise IdError(f"XGID action must be D, B or R, got {self.action!r}")
        if self.dice is not None:
            if self.action:
                raise IdError("an XGID has either dice or a cube action, not both")
            d1, d2 = self.dice
            if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
                raise IdError(f"XGID dice must be 1-6, got {self.dice}")
        if self.match_length < 0 or min(self.score) < 0:
            raise IdError("XGID match length and scores must not be negative")
        if self.match_length:
            if max(self.score) >= self.match_length:
                raise IdError(f"XGID score {self.score} is not below the match length {self.match_length}")
            if self.jacoby or self.beavers:
                raise IdError("Jacoby and beavers apply to money sessions only")
        elif self.crawford:
            raise IdError("a money session has no Crawford game")

    def bottom_view(self) -> Position:
        """The position seen from the bottom (upper-case) player."""
        return self.position if self.turn == 1 else self.position.flip()

    def cube_owner_relative(self) -> str:
        """Cube owner seen from the player on roll: ``centre``, ``player`` or ``opponent``."""
        if self.cube_owner == 0:
            return "centre"
        return "player" if self.cube_owner == self.turn else "opponent"

    def score_relative(self) -> tuple[int, int]:
        """``(player on roll, opponent)`` scores."""
        return self.score if self.turn == 1 else (self.score[1], self.score[0])


def _log2(v: int) -> int:
    return v.bit_length() - 1


def xgid(info: Xgid) -> str:
    """Encode an :class:`Xgid` as ``XGID=...`` text.

    >>> xgid(Xgid(Position.start(), max_cube=1024))
    'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
    """
    b = info.bottom_view().board
    chars = []
    for i in range(26):
        x = b[i]
        if x == 0:
            chars.append("-")
        elif x > 0:
            chars.append(chr(ord("A") + x - 1))
        else:
            chars.append(chr(ord("a") - x - 1))
    if info.dice is not None:
        dice = f"{info.dice[0]}{info.dice[1]}"
    else:
        dice = info.action or "00"
    flag = int(info.crawford) if info.match_length else int(info.jacoby) + 2 * int(info.beavers)
    fields = [
        "".join(chars),
        str(_log2(info.cube_value)),
        str(info.cube_owner),
        str(info.turn),
        dice,
        str(info.score[0]),
        str(info.score[1]),
        str(flag),
        str(info.match_length),
        str(_log2(info.max_cube)),
    ]
    return "XGID=" + ":".join(fields)


def _int_field(text: str, name: str, lo: int, hi: int) -> int:
    t = text.strip()
    if not t or not (t.isdigit() or (t[0] == "-" and t[1:].isdigit())):
        raise IdError(f"XGID {name} must be an integer, got {text!r}")
    v = int(t)
    if not lo <= v <= hi:
        raise IdError(f"XGID {name} must be {lo}..{hi}, got {v}")
    return v


def xgid_from_text(text: str) -> Xgid:
    """Decode ``XGID=...`` (the prefix is optional); raises :class:`IdError` when invalid."""
    if not isinstance(text, str):
        raise IdError(f"an XGID is a string, got {type(text).__name__}")
    body = text.strip()
    if body.upper().startswith("XGID="):
        body = body[5:]
    parts = body.split(":")
    if len(parts) != 10:
        raise IdError(f"an XGID has 10 fields separated by ':', got {len(parts)}: {text!r}")
    board_text = parts[0]
    if len(board_text) != 26:
        raise IdError(f"an XGID board has 26 characters, got {len(board_text)}")
    b = [0] * 26
    for i, c in enumerate(board_text):
        if c == "-":
            continue
        if "A" <= c <= "O":
            b[i] = ord(c) - ord("A") + 1
        elif "a" <= c <= "o":
            b[i] = -(ord(c) - ord("a") + 1)
        else:
            raise IdError(f"bad XGID board character {c!r} (use -, A-O or a-o)")
    if b[0] > 0 or b[25] < 0:
        raise IdError("XGID bars hold the wrong side's checkers")
    own = sum(x for x in b if x > 0)
    opp = -sum(x for x in b if x < 0)
    if own > NUM_CHECKERS or opp > NUM_CHECKERS:
        raise IdError(f"XGID has more than 15 checkers on a side ({own} / {opp})")
    bottom = Position(tuple(b))
    cube_log = _int_field(parts[1], "cube", 0, 15)
    owner = _int_field(parts[2], "cube position", -1, 1)
    turn = _int_field(parts[3], "turn", -1, 1)
    if turn == 0:
        raise IdError("XGID turn must be 1 or -1, got 0")
    dice_text = parts[4].strip().upper()
    dice: tuple[int, int] | None = None
    action = ""
    if dice_text in ("D", "B", "R"):
        action = dice_text
    elif dice_text != "00":
        if len(dice_text) != 2 or not all(c in "123456" for c in dice_text):
            raise IdError(f"XGID dice must be 00, D, B, R or two digits 1-6, got {parts[4]!r}")
        dice = (int(dice_text[0]), int(dice_text[1]))
    s_bottom = _int_field(parts[5], "bottom score", 0, 32767)
    s_top = _int_field(parts[6], "top score", 0, 32767)
    flag = _int_field(parts[7], "Crawford/Jacoby field", 0, 3)
    length = _int_field(parts[8], "match length", 0, 32767)
    max_log = _int_field(parts[9], "maximum cube", 0, 15)
    if length and flag > 1:
        raise IdError(f"XGID Crawford field of a match must be 0 or 1, got {flag}")
    try:
        return Xgid(
            position=bottom if turn == 1 else bottom.flip(),
            turn=turn,
            cube_value=1 << cube_log,
            cube_owner=owner,
            dice=dice,
            action=action,
            score=(s_bottom, s_top),
            crawford=bool(flag) if length else False,
            jacoby=bool(flag & 1) if not length else False,
            beavers=bool(flag & 2) if not length else False,
            match_length=length,
            max_cube=1 << max_log,
        )
    except IdError as exc:
        raise IdError(f"invalid XGID {text!r}: {exc}") from None
