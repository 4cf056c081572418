"""GNU Backgammon's external-player protocol: a FIBS board line in, one answer out.

With ``set player N external HOST:PORT`` GNU Backgammon connects to a server and, each
time player N must act, writes one FIBS "boardstyle 3" line (followed by a NUL byte)::

    board:You:Opp:MATCHLEN:SCORE:OPPSCORE:B0:B1:...:B25:TURN:D1:D2:OD1:OD2:CUBE:
          MAYDOUBLE:OPPMAYDOUBLE:DOUBLED:COLOUR:DIRECTION:HOME:BAR:OFF:OPPOFF:
          ONBAR:OPPONBAR:CANMOVE:FORCED:CRAWFORD:REDOUBLES[:POSTCRAWFORD]

``B0``..``B25`` are the checkers in Tabla's board layout (:mod:`engine.position`) from
the side of colour 1 (direction -1), which GNU Backgammon 1.07 makes its player 1
whoever is asked: ``B1``..``B24`` that side's points 1-24, positive for its checkers and
negative for the other side's, ``B0`` the other side's bar (<= 0), ``B25`` its own bar.
``TURN`` is the side on roll (1 = colour 1, -1 = the other), ``MAYDOUBLE`` /
``OPPMAYDOUBLE`` whether colour 1 / the other side may double (both = cube centred).
The names and scores are player 0's then player 1's, except while a double is pending,
when the doubler (the side on roll) comes first. A match length of 0 is money.
``DOUBLED`` non-zero means the side on roll has doubled and the answer is the other
side's ``take`` or ``drop``. With no dice (``D1 = 0``) the side on roll may double: the
answer is ``roll`` or ``double``. With dice the answer is the play in GNU Backgammon's
notation, one ``from/to`` per die (``bar``, ``off``), empty for no legal play.
Resignations are not sent to external players by GNU Backgammon 1.07 (it answers them
itself), and taking a beaver stops its automatic play, so run it with ``set beavers 0``.

:func:`parse_board` reads a line into a :class:`FibsBoard`; :func:`answer` decides with an
:class:`~engine.api.Engine`. A malformed line raises :class:`FibsBoardError`; the server
answers it with GNU Backgammon's error form ``Error: <reason>``.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.api import Engine
from engine.cube import CubeOwner, CubeState, CubeStateError
from engine.dice import Roll
from engine.movegen import legal_results_with_steps
from engine.position import NUM_CHECKERS, Position, PositionError


class FibsBoardError(ValueError):
    """A line that is not a FIBS board GNU Backgammon would send."""


@dataclass(frozen=True)
class FibsBoard:
    """One board line, seen from the side on roll (the doubler while a double is pending)."""

    names: tuple[str, str]
    """(side on roll, other side)."""
    match_length: int
    score: tuple[int, int]
    position: Position
    dice: tuple[int, int] | None
    cube: int
    may_double: tuple[bool, bool]
    doubled: bool
    crawford: bool
    post_crawford: bool

    def cube_state(self) -> CubeState:
        """The cube seen from the side on roll."""
        mine, theirs = self.may_double
        if self.cube == 1 or mine == theirs:
            owner = CubeOwner.CENTRE
        else:
            owner = CubeOwner.PLAYER if mine else CubeOwner.OPPONENT
        money = self.match_length == 0
        return CubeState(value=self.cube, owner=owner, match_length=self.match_length,
                         score=(0, 0) if money else self.score, crawford=self.crawford and not money)


def _ints(fields: list[str], start: int, count: int) -> list[int]:
    try:
        return [int(x) for x in fields[start:start + count]]
    except ValueError:
        bad = next(x for x in fields[start:start + count] if not x.lstrip("-").isdigit())
        raise FibsBoardError(f"field {bad!r} is not a number") from None


def parse_board(line: str) -> FibsBoard:
    """Read one ``board:...`` line (see the module docstring)."""
    text = line.strip().strip("\x00").strip()
    if not text.startswith("board:"):
        raise FibsBoardError("a board line starts with 'board:'")
    fields = text.split(":")
    if len(fields) < 53:
        raise FibsBoardError(f"a board line has at least 53 fields, got {len(fields)}")
    length, s0, s1 = _ints(fields, 3, 3)
    raw = _ints(fields, 6, 26)
    nums = _ints(fields, 32, 21)
    turn, d1, d2, od1, od2, cube, may0, may1, doubled, colour, direction = nums[:11]
    crawford = nums[19]
    post = int(fields[53]) if len(fields) > 53 and fields[53].lstrip("-").isdigit() else 0
    if (colour, direction) != (1, -1):
        raise FibsBoardError(f"only colour 1 / direction -1 boards are supported, got {colour} / {direction}")
    if raw[0] > 0 or raw[25] < 0:
        raise FibsBoardError("the bars hold the opponent's checkers at 0 (<= 0) and the player's at 25 (>= 0)")
    try:
        position = Position(tuple(raw))
    except PositionError as exc:
        raise FibsBoardError(str(exc)) from None
    if sum(v for v in raw if v > 0) > NUM_CHECKERS or -sum(v for v in raw if v < 0) > NUM_CHECKERS:
        raise FibsBoardError("more than 15 checkers a side")
    if turn not in (1, -1):
        raise FibsBoardError(f"the turn field is 1 or -1, got {turn}")
    if not d1:
        d1, d2 = od1, od2
    dice = None
    if d1 or d2:
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise FibsBoardError(f"dice must be 1-6, got {d1} and {d2}")
        dice = (d1, d2)
    if cube < 1 or cube & (cube - 1):
        raise FibsBoardError(f"the cube must be a power of two, got {cube}")
    if length < 0 or (length and not (0 <= s0 < length and 0 <= s1 < length)):
        raise FibsBoardError(f"bad score {s0}-{s1} in a {length}-point match")
    # names/scores: (player 0, player 1) = (other side, colour 1), or the doubler first
    if doubled:
        names, score = (fields[1], fields[2]), (s0, s1)
    elif turn == 1:
        names, score = (fields[2], fields[1]), (s1, s0)
    else:
        names, score = (fields[1], fields[2]), (s0, s1)
    may = (bool(may0), bool(may1)) if turn == 1 else (bool(may1), bool(may0))
    if turn == -1:
        position = position.flip()
    return FibsBoard(names, length, score, position, dice, cube, may, bool(doubled), bool(crawford), bool(post))


def gnubg_move_text(position: Position, steps) -> str:
    """A play as GNU Backgammon reads it: one ``from/to`` per die, ``bar`` and ``off``."""
    parts = []
    for f, t in steps:
        parts.append(f"{'bar' if f == 25 else f}/{'off' if t == 0 else t}")
    return " ".join(parts)


def answer(engine: Engine, board: FibsBoard, ply: int = 2, cube_ply: int = 1) -> str:
    """The external player's answer to a board (see the module docstring)."""
    try:
        state = board.cube_state()
    except CubeStateError as exc:
        raise FibsBoardError(str(exc)) from None
    if board.doubled:
        # the side on roll has doubled us
        dec = engine.cube(board.position, cube_ply, state).decision
        return "take" if dec.take else "drop"
    if board.dice is None:
        if not state.may_double():
            return "roll"
        dec = engine.cube(board.position, cube_ply, state).decision
        return "double" if dec.double else "roll"
    roll = Roll.of(*board.dice)
    boards, steps, nsteps = legal_results_with_steps(board.position.array(), roll.high, roll.low)
    if len(boards) == 1:
        k = 0
    else:
        res = engine.best(board.position, roll, ply=ply, top=1, state=state)
        return gnubg_move_text(board.position, res.plays[0].steps)
    return gnubg_move_text(board.position, [tuple(int(v) for v in steps[k, j]) for j in range(int(nsteps[k]))])
