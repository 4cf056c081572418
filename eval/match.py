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
* the rules engine's :class:`engine.game.GameState` is the game: it says who may double
  and the cube state each bot sees, checks every action (a play must be a legal result of
  the roll; a double, take, drop or beaver must be allowed: a bot that does anything else
  raises :class:`IllegalBotPlay`) and scores the finished game; this module only drives it.
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

from engine.dice import Roll, opening_roll
from engine.game import EndReason, GameError, GameOptions, GameState
from engine.movegen import legal_results_with_steps
from engine.position import Position
from eval.bots import Bot, CubeResponse

log = logging.getLogger(__name__)

MAX_TURNS = 100_000


class IllegalBotPlay(RuntimeError):
    """A bot returned a position that the roll cannot reach, or an answer it may not give."""


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
        """(roll, ties thrown first, seat 0 or 1 that plays first): :func:`engine.dice.opening_roll`."""
        return opening_roll(self.rng)

    def roll(self) -> tuple[int, int]:
        a, b = (int(x) for x in self.rng.integers(1, 7, size=2))
        return a, b


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

    The rules are :class:`engine.game.GameState`'s: this function only asks the bots and
    applies their answers. ``start``: the position to start from, seen from the seat that
    wins the opening roll (default: the starting position); for tests and studies of endings.
    """
    roll, ties, first = dice.opening()
    post_crawford = match_length > 0 and not crawford and (match_length - 1) in score
    gs = GameState.new_game(options, first_player=first, opening_ties=ties, match_length=match_length,
                            score=score, crawford=crawford, post_crawford=post_crawford)
    if start is not None:
        gs = replace(gs, position=start)
    rec = GameRecord(number=number, score=score, match_length=match_length, crawford=crawford,
                     first=first, auto_doubles=gs.automatic_doubles, cube_value=gs.cube_value)

    def apply(transition: str, *args) -> None:
        nonlocal gs
        try:
            gs = getattr(gs, transition)(*args)
        except GameError as exc:
            raise IllegalBotPlay(f"game {number}: {transition} rejected by the rules engine: {exc}") from exc

    pending: tuple[int, int] | None = (roll.high, roll.low)
    for _ in range(MAX_TURNS):
        seat = gs.turn
        board = gs.position.array()
        if pending is None and gs.can_double():
            state = gs.cube_state()
            if bots[seat].offer_double(board.copy(), state):
                cube = gs.cube_value
                rec.doubles += 1
                rec.actions.append(Action(seat, "double", cube=cube * 2))
                apply("double")
                answer = CubeResponse(bots[1 - seat].respond_double(board.copy(), state))
                if answer is CubeResponse.DROP:
                    rec.drops += 1
                    rec.actions.append(Action(1 - seat, "drop"))
                    apply("drop")
                    return _finish(rec, gs)
                if answer is CubeResponse.TAKE:
                    rec.takes += 1
                    rec.actions.append(Action(1 - seat, "take", cube=cube * 2))
                    apply("take")
                else:
                    rec.beavers += 1
                    rec.actions.append(Action(1 - seat, "beaver", cube=cube * 4))
                    apply("beaver")
                    # the doubler takes or drops the redouble (the beaverer keeps the cube)
                    if not bots[seat].accept_beaver(board.copy(), state):
                        rec.drops += 1
                        rec.actions.append(Action(seat, "drop"))
                        apply("drop")
                        return _finish(rec, gs)
                    rec.takes += 1
                    rec.actions.append(Action(seat, "take", cube=cube * 4))
                    apply("take")
        d1, d2 = pending if pending is not None else dice.roll()
        pending = None
        chosen = np.asarray(bots[seat].choose_play(board.copy(), d1, d2, gs.cube_state()), dtype=np.int8)
        results, steps, nsteps = legal_results_with_steps(board, d1, d2)
        match = np.flatnonzero((results == chosen[None, :]).all(axis=1))
        if len(match) != 1:
            raise IllegalBotPlay(
                f"{bots[seat].name} played an illegal result for {d1}{d2} from {Position.from_array(board)!r}"
            )
        k = int(match[0])
        no_move = np.array_equal(results[k], board)
        st = () if no_move else tuple((int(steps[k, j, 0]), int(steps[k, j, 1])) for j in range(int(nsteps[k])))
        rec.actions.append(Action(seat, "move", dice=(d1, d2), before=tuple(int(x) for x in board),
                                  after=tuple(int(x) for x in chosen), steps=st))
        apply("play", chosen)  # one of the roll's legal results: checked above
        if gs.is_over:
            return _finish(rec, gs)
    raise RuntimeError(f"game {number} lasted more than {MAX_TURNS} turns")


def _finish(rec: GameRecord, gs: GameState) -> GameRecord:
    """The record of a finished game, from the rules engine's end of it."""
    rec.winner = gs.winner
    rec.points = gs.points
    dropped = gs.end_reason is EndReason.DROPPED
    rec.result = 0 if dropped else int(gs.result)
    rec.cube_value = gs.points if dropped else gs.cube_value
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
    match_options = replace(options, jacoby=False, beavers=False, auto_doubles=0)
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
