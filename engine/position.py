"""Checker positions, always seen from the side to move.

A position is 26 small integers (the layout wildbg uses):

==========  ==========================================================
index       meaning
==========  ==========================================================
0           the opponent's bar, as a count <= 0
1 .. 24     points in the mover's numbering; > 0 the mover's checkers,
            < 0 the opponent's
25          the mover's bar, as a count >= 0
==========  ==========================================================

Borne-off checkers are not stored: a side has ``15 - (checkers on the board)`` off.
The mover moves from 24 towards 1 and bears off from 1-6; point ``p`` for the mover is
point ``25 - p`` for the opponent, so :func:`flip` is ``new[i] = -old[25 - i]`` and is the
only place where perspective changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Iterable, Mapping

import numpy as np

NUM_CHECKERS = 15
BAR = 25
OPP_BAR = 0
OFF = 0

_START = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)


class PositionError(ValueError):
    """A checker layout that is not a backgammon position."""


class GameResult(IntEnum):
    """Points a finished game is worth before the cube: single, gammon or backgammon."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


def flip_array(board: np.ndarray) -> np.ndarray:
    """Flip a board array (or a batch of them, last axis 26) to the other side's view."""
    return -board[..., ::-1]


@dataclass(frozen=True, slots=True)
class Position:
    """An immutable, hashable checker layout seen from the player on roll."""

    board: tuple[int, ...]

    def __post_init__(self) -> None:
        b = self.board
        if len(b) != 26:
            raise PositionError(f"a position has 26 entries, got {len(b)}")
        if b[BAR] < 0 or b[OPP_BAR] > 0:
            raise PositionError("bar counts have the wrong sign")
        own = sum(x for x in b if x > 0)
        opp = -sum(x for x in b if x < 0)
        if own > NUM_CHECKERS or opp > NUM_CHECKERS:
            raise PositionError(f"more than 15 checkers on a side ({own} / {opp})")

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls) -> "Position":
        """The starting position: 2 on 24, 5 on 13, 3 on 8, 5 on 6 for each side."""
        return cls(_START)

    @classmethod
    def trusted(cls, board: tuple[int, ...]) -> "Position":
        """Wrap a 26-tuple already known to be valid (decoders that checked it), unchecked."""
        p = object.__new__(cls)
        object.__setattr__(p, "board", board)
        return p

    @classmethod
    def from_array(cls, arr: Iterable[int]) -> "Position":
        """Build from any 26-long integer sequence in the layout of this module."""
        return cls(tuple(int(x) for x in arr))

    @classmethod
    def from_points(
        cls,
        mine: Mapping[int, int],
        theirs: Mapping[int, int] | None = None,
    ) -> "Position":
        """Build from ``{point: count}`` maps, each side in its own numbering (25 = bar).

        >>> Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}) == Position.start()
        True
        """
        b = [0] * 26
        for p, n in mine.items():
            if not 1 <= p <= 25 or n < 0:
                raise PositionError(f"bad point {p}:{n} for the side on roll")
            b[p] += n
        for p, n in (theirs or {}).items():
            if not 1 <= p <= 25 or n < 0:
                raise PositionError(f"bad point {p}:{n} for the opponent")
            q = 25 - p
            if b[q] > 0 and n > 0:
                raise PositionError(f"point {q} is held by both sides")
            b[q] -= n
        return cls(tuple(b))

    # ------------------------------------------------------------------ views
    def array(self) -> np.ndarray:
        """A fresh int8 numpy copy of the 26 entries."""
        return np.array(self.board, dtype=np.int8)

    def flip(self) -> "Position":
        """The same layout seen from the other side."""
        b = self.board
        return Position(tuple(-b[25 - i] for i in range(26)))

    def mine(self) -> dict[int, int]:
        """The mover's checkers as ``{point: count}`` (25 = bar)."""
        return {p: self.board[p] for p in range(1, 26) if self.board[p] > 0}

    def theirs(self) -> dict[int, int]:
        """The opponent's checkers in the opponent's own numbering (25 = bar)."""
        return self.flip().mine()

    @property
    def off(self) -> int:
        """Checkers the mover has borne off."""
        return NUM_CHECKERS - sum(x for x in self.board if x > 0)

    @property
    def opp_off(self) -> int:
        """Checkers the opponent has borne off."""
        return NUM_CHECKERS + sum(x for x in self.board if x < 0)

    def pips(self) -> tuple[int, int]:
        """Pip counts ``(mover, opponent)``; a checker on the bar counts 25."""
        b = self.board
        mine = sum(i * b[i] for i in range(1, 26) if b[i] > 0)
        theirs = sum((25 - i) * -b[i] for i in range(0, 25) if b[i] < 0)
        return mine, theirs

    def is_race(self) -> bool:
        """True when no contact is left: every mover checker is past every opponent checker."""
        b = self.board
        if b[BAR] > 0 or b[OPP_BAR] < 0:
            return False
        my_back = max((i for i in range(1, 25) if b[i] > 0), default=0)
        opp_back = min((i for i in range(1, 25) if b[i] < 0), default=25)
        return my_back < opp_back

    def is_game_over(self) -> bool:
        """True when either side has borne off all 15 checkers."""
        return self.off == NUM_CHECKERS or self.opp_off == NUM_CHECKERS

    def result(self, backgammon_counts_two: bool = False) -> int:
        """Points of a finished game for the side to move: > 0 won, < 0 lost.

        Single 1, gammon 2 (the loser has none off), backgammon 3 (none off and a checker
        on the bar or in the winner's home board), or 2 with ``backgammon_counts_two``.
        """
        if self.off == NUM_CHECKERS:
            sign, loser = 1, self.flip()
        elif self.opp_off == NUM_CHECKERS:
            sign, loser = -1, self
        else:
            raise PositionError("the game is not over")
        # loser: position seen from the loser; the winner's home board is loser's 19-24
        if loser.off > 0:
            return sign * GameResult.SINGLE
        back = any(loser.board[i] > 0 for i in range(19, 26))
        if back and not backgammon_counts_two:
            return sign * GameResult.BACKGAMMON
        return sign * GameResult.GAMMON

    def __repr__(self) -> str:
        return f"Position.from_points({self.mine()!r}, {self.theirs()!r})"


def to_gnubg_board(board: np.ndarray | tuple[int, ...]) -> list[list[int]]:
    """GNU Backgammon's layout ``[opponent, player_on_roll]``, 25 entries each (24 = bar)."""
    me = [0] * 25
    opp = [0] * 25
    for p in range(1, 25):
        x = int(board[p])
        if x > 0:
            me[p - 1] = x
        elif x < 0:
            opp[24 - p] = -x
    me[24] = int(board[25])
    opp[24] = -int(board[0])
    return [opp, me]


def from_gnubg_board(gb) -> np.ndarray:
    """Inverse of :func:`to_gnubg_board`: a 26-entry int8 array."""
    opp, me = gb
    b = np.zeros(26, np.int8)
    for i in range(24):
        if me[i]:
            b[i + 1] += me[i]
        if opp[i]:
            b[24 - i] -= opp[i]
    b[25] = me[24]
    b[0] = -opp[24]
    return b
