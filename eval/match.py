"""Full games with the cube: money sessions and N-point matches, with a record of everything.

Two bots sit in seats 0 and 1. A game (rules from ``../shared/RULES.md``):

* opening: each side rolls one die, ties re-roll; in money play with automatic doubles
  each tie doubles the centred cube (at most ``GameOptions.auto_doubles`` times, never
  past the cap). The higher die plays the two numbers; no cube action before it.
* each turn, before rolling, the player on roll may double when the cube is centred or
  his, below the cap (``max_cube``, default 64), and not in the Crawford game. The
  opponent takes (cube x2, he owns it), drops (the doubler wins the cube value before the
  double, no gammon) or, in money play with beavers, beavers (cube x4, he keeps it;
  the doubler then takes or drops the redouble).
* every action is also applied to the rules engine's :class:`engine.game.GameState`, which
  checks it (a play must be a legal result of the roll; a double, take, drop or beaver
  must be allowed): a bot that does anything else raises :class:`IllegalBotPlay`, and
  the game's winner and points must agree with the rules engine's.
* a finished game scores 1 / 2 / 3 (single, gammon, backgammon; ``backgammon_counts_two``
  makes it 2) times the cube; with the Jacoby rule (money only) gammons and backgammons
  count 1 unless a player doubled in the game (an automatic double does not count).

Matches to N points: first to N wins; the game after a player first reaches N-1 is the
Crawford game (no cube); no Jacoby, beavers or automatic doubles in match play.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from engine import game as rules
from engine.cube import CubeOwner, CubeState
from engine.dice import Roll
from engine.movegen import legal_results_with_steps
from engine.position import Position, flip_array
from eval.bots import Bot, CubeResponse
from eval.duel import terminal_values

log = logging.getLogger(__name__)

MAX_TURNS = 100_000


class IllegalBotPlay(RuntimeError):
    """A bot returned a position that the roll cannot reach, or an answer it may not give."""


@dataclass(frozen=True)
class GameOptions:
    """Rule options of a game; the money-only ones are ignored in match play."""

    cube: bool = True
    """Use the doubling cube at all."""
    max_cube: int = 64
    """No double past this value (RULES.md: the physical cube shows 64)."""
    jacoby: bool = False
    """Money: gammons count 1 unless a player doubled."""
    beavers: bool = False
    """Money: the taker may redouble at once, keeping the cube."""
    auto_doubles: int = 0
    """Money: how many opening ties double the cube (0 = off; the convention is 1)."""
    backgammon_counts_two: bool = False


@dataclass(frozen=True)
class Action:
    """One event of a game, by ``player`` (seat 0 or 1).

    ``kind``: ``"move"`` (``dice``, ``before``/``after`` in the mover's view, ``steps`` as
    (from, to) per die, empty when the roll cannot be played), ``"double"`` (``cube`` =
    the value offered), ``"take"``, ``"drop"``, ``"beaver"`` (``cube`` = the new value).
    """

    player: int
    kind: str
    dice: tuple[int, int] | None = None
    before: tuple[int, ...] | None = None
    after: tuple[int, ...] | None = None
    steps: tuple[tuple[int, int], ...] = ()
    cube: int = 0


@dataclass
class GameRecord:
    """A finished game: who won what, and every action."""

    number: int
    """1-based game number in its session or match."""
    score: tuple[int, int]
    """Score of seats 0 and 1 before the game (match play; running totals in money)."""
    match_length: int
    crawford: bool
    first: int
    """Seat that won the opening roll."""
    actions: list[Action] = field(default_factory=list)
    winner: int = -1
    points: int = 0
    """Points the winner gets (cube and Jacoby applied)."""
    result: int = 0
    """1 / 2 / 3 single, gammon, backgammon before the cube; 0 when a double was dropped."""
    cube_value: int = 1
    """Final cube value (the value before the double when a double was dropped)."""
    auto_doubles: int = 0
    doubles: int = 0
    takes: int = 0
    drops: int = 0
    beavers: int = 0

    def points_for(self, seat: int) -> int:
        """Signed points of the game for ``seat``."""
        return self.points if seat == self.winner else -self.points


@dataclass
class MatchRecord:
    """A match (or a money session when ``match_length == 0``)."""

    names: tuple[str, str]
    match_length: int
    games: list[GameRecord] = field(default_factory=list)
    score: tuple[int, int] = (0, 0)
    """Final score (points won in money play)."""

    @property
    def winner(self) -> int:
        """Seat that won the match, -1 for a money session or an unfinished match."""
        if self.match_length and max(self.score) >= self.match_length:
            return 0 if self.score[0] >= self.match_length else 1
        return -1


class DiceSource:
    """Dice from a seeded generator: the opening (ties counted) and one roll per turn.

    Two games fed by two sources built from the same seed see the same dice in the same
    order, whatever the players do (cube actions draw no dice): duplicate dice.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def opening(self) -> tuple[Roll, int, int]:
        """(roll, ties thrown first, seat 0 or 1 that plays first)."""
        ties = 0
        while True:
            a, b = (int(x) for x in self.rng.integers(1, 7, size=2))
            if a != b:
                return Roll.of(a, b), ties, 0 if a > b else 1
            ties += 1

    def roll(self) -> tuple[int, int]:
        a, b = (int(x) for x in self.rng.integers(1, 7, size=2))
        return a, b


def _cube_view(value: int, owner: int, seat: int, match_length: int, score: tuple[int, int],
               crawford: bool, options: GameOptions) -> CubeState:
    """The cube state as seen by ``seat`` (owner -1 = centred)."""
    if owner < 0:
        who = CubeOwner.CENTRE
    else:
        who = CubeOwner.PLAYER if owner == seat else CubeOwner.OPPONENT
    money = match_length == 0
    return CubeState(
        value=value,
        owner=who,
        match_length=match_length,
        score=(0, 0) if money else (score[seat], score[1 - seat]),
        crawford=crawford,
        jacoby=options.jacoby and money,
        beavers=options.beavers and money,
        max_cube=options.max_cube,
    )


def play_game(
    bots: tuple[Bot, Bot],
    dice: DiceSource,
    options: GameOptions = GameOptions(),
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
    crawford: bool = False,
    number: int = 1,
    start: Position | None = None,
) -> GameRecord:
    """Play one game between seats 0 and 1 and return its record.

    ``start``: the position to start from, seen from the seat that wins the opening roll
    (default: the starting position); for tests and studies of endings.
    """
    money = match_length == 0
    use_cube = options.cube and not crawford
    roll, ties, first = dice.opening()
    cube = 1
    auto = 0
    if money and options.cube and options.auto_doubles > 0:
        while auto < min(ties, options.auto_doubles) and cube * 2 <= options.max_cube:
            cube *= 2
            auto += 1
    owner = -1  # -1 centred, else the seat that owns the cube
    rec = GameRecord(number=number, score=score, match_length=match_length, crawford=crawford,
                     first=first, auto_doubles=auto, cube_value=cube)
    post_crawford = not money and not crawford and (match_length - 1) in score
    gs = rules.GameState.new_game(
        rules.GameOptions(jacoby=options.jacoby, beavers=options.beavers, automatic_doubles=options.auto_doubles > 0,
                          max_automatic_doubles=options.auto_doubles, max_cube=options.max_cube,
                          backgammon_counts_two=options.backgammon_counts_two),
        first_player=first, opening_ties=ties if options.cube else 0, match_length=match_length,
        score=score, crawford=crawford, post_crawford=post_crawford,
    )
    if start is not None:
        gs = replace(gs, position=start)
    if gs.cube_value != cube:
        raise RuntimeError(f"automatic doubles: driver cube {cube}, rules engine {gs.cube_value}")

    def apply(transition: str, *args) -> None:
        nonlocal gs
        try:
            gs = getattr(gs, transition)(*args)
        except rules.GameError as exc:
            raise IllegalBotPlay(f"game {number}: {transition} rejected by the rules engine: {exc}") from exc
    seat = first
    board = (start or Position.start()).array()
    pending: tuple[int, int] | None = (roll.high, roll.low)
    for _ in range(MAX_TURNS):
        if pending is None and use_cube:
            state = _cube_view(cube, owner, seat, match_length, score, crawford, options)
            if state.may_double() != gs.can_double():
                raise RuntimeError(f"game {number}: driver and rules engine disagree on whether {seat} may double")
            if state.may_double() and bots[seat].offer_double(board.copy(), state):
                rec.doubles += 1
                rec.actions.append(Action(seat, "double", cube=cube * 2))
                apply("double")
                answer = CubeResponse(bots[1 - seat].respond_double(board.copy(), state))
                if answer is CubeResponse.DROP:
                    rec.drops += 1
                    rec.actions.append(Action(1 - seat, "drop"))
                    apply("drop")
                    return _check_end(_finish(rec, seat, 0, cube), gs)
                if answer is CubeResponse.TAKE:
                    rec.takes += 1
                    rec.actions.append(Action(1 - seat, "take", cube=cube * 2))
                    apply("take")
                    cube, owner = cube * 2, 1 - seat
                else:
                    rec.beavers += 1
                    rec.actions.append(Action(1 - seat, "beaver", cube=cube * 4))
                    apply("beaver")
                    # the doubler takes or drops the redouble (the beaverer keeps the cube)
                    if not bots[seat].accept_beaver(board.copy(), state):
                        rec.drops += 1
                        rec.actions.append(Action(seat, "drop"))
                        apply("drop")
                        return _check_end(_finish(rec, 1 - seat, 0, cube * 2), gs)
                    rec.takes += 1
                    rec.actions.append(Action(seat, "take", cube=cube * 4))
                    apply("take")
                    cube, owner = cube * 4, 1 - seat
        d1, d2 = pending if pending is not None else dice.roll()
        pending = None
        cstate = _cube_view(cube, owner, seat, match_length, score, crawford, options)
        chosen = np.asarray(bots[seat].choose_play(board.copy(), d1, d2, cstate), dtype=np.int8)
        results, steps, nsteps = legal_results_with_steps(board, d1, d2)
        match = np.flatnonzero((results == chosen[None, :]).all(axis=1))
        if len(match) != 1:
            raise IllegalBotPlay(
                f"{bots[seat].name} played an illegal result for {d1}{d2} from {Position.from_array(board)!r}"
            )
        apply("play", chosen, Roll.of(d1, d2))
        k = int(match[0])
        no_move = np.array_equal(results[k], board)
        st = () if no_move else tuple((int(steps[k, j, 0]), int(steps[k, j, 1])) for j in range(int(nsteps[k])))
        rec.actions.append(Action(seat, "move", dice=(d1, d2), before=tuple(int(x) for x in board),
                                  after=tuple(int(x) for x in chosen), steps=st))
        value = int(terminal_values(chosen[None, :])[0])
        if value:
            if options.backgammon_counts_two:
                value = min(value, 2)
            rec.cube_value = cube
            jacoby_applies = money and options.jacoby and rec.doubles == 0
            return _check_end(_finish(rec, seat, value, cube, count_as=1 if jacoby_applies else value), gs)
        board = flip_array(chosen)
        seat = 1 - seat
    raise RuntimeError(f"game {number} lasted more than {MAX_TURNS} turns")


def _finish(rec: GameRecord, winner: int, result: int, cube: int, count_as: int | None = None) -> GameRecord:
    rec.winner = winner
    rec.result = result
    rec.cube_value = cube
    rec.points = cube * (count_as if count_as is not None else max(result, 1))
    return rec


def _check_end(rec: GameRecord, gs: "rules.GameState") -> GameRecord:
    """The driver's result must be the rules engine's."""
    if not gs.is_over or gs.winner != rec.winner or gs.points != rec.points:
        raise RuntimeError(
            f"game {rec.number}: driver says seat {rec.winner} wins {rec.points}, "
            f"rules engine says {gs.winner} wins {gs.points}"
        )
    return rec


def play_session(
    bots: tuple[Bot, Bot],
    games: int,
    dice: DiceSource,
    options: GameOptions = GameOptions(),
) -> MatchRecord:
    """A money session of ``games`` games; ``score`` holds the points won by each seat."""
    rec = MatchRecord(names=(bots[0].name, bots[1].name), match_length=0)
    totals = [0, 0]
    for i in range(games):
        g = play_game(bots, dice, options, 0, (totals[0], totals[1]), False, i + 1)
        totals[g.winner] += g.points
        rec.games.append(g)
    rec.score = (totals[0], totals[1])
    return rec


def play_match(
    bots: tuple[Bot, Bot],
    length: int,
    dice: DiceSource,
    options: GameOptions = GameOptions(),
) -> MatchRecord:
    """An N-point match with the Crawford rule."""
    if length < 1:
        raise ValueError(f"a match is played to 1 point or more, got {length}")
    match_options = GameOptions(cube=options.cube, max_cube=options.max_cube,
                                backgammon_counts_two=options.backgammon_counts_two)
    rec = MatchRecord(names=(bots[0].name, bots[1].name), match_length=length)
    score = [0, 0]
    crawford_played = False
    number = 0
    while max(score) < length:
        number += 1
        crawford = not crawford_played and (length - 1) in score and score != [length - 1, length - 1]
        if crawford:
            crawford_played = True
        g = play_game(bots, dice, match_options, length, (score[0], score[1]), crawford, number)
        score[g.winner] += g.points
        rec.games.append(g)
    rec.score = (score[0], score[1])
    return rec
