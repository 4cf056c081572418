"""Chouette games between seats (bots, or a person at the terminal): the driver.

The rules are :mod:`engine.chouette`'s (on :class:`engine.game.GameState`); this module
asks the seats and applies their answers. A seat is a :class:`Seat`; :class:`BotSeat`
puts any :mod:`eval.bots` bot (``tabla:ply=1``, ``gnubg:ply=0``, ``pubeval``, ...) in a
seat. Each turn:

* box on roll: the box may double (when the cube allows it); each member still in the
  game then takes, passes or beavers on his own; a team beaver (all who stay beaver) is
  taken or passed by the box. The box rolls and plays.
* team on roll: every member still in gives his opinion on doubling, the captain last
  (he sees the others' votes); the team doubles when all agree. The box takes, passes
  or beavers; after a box beaver each member takes or passes on his own. The captain
  rolls; every member forms his own opinion of the play (the captain last, seeing the
  others'), and the captain's play is played.

Wherever the members' opinions differ (play, double, answer to a box double) a
:class:`Disagreement` is recorded. Dice come from :class:`eval.match.DiceSource` (the
opening roll is the box's die against the captain's).
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from engine.chouette import BOX, TEAM, Answer, Chouette, ChouetteGame, CubeEvent, Lineup, Seating, dice_thrower, seat_players
from engine.cube import CubeState
from engine.game import GameOptions
from engine.movegen import legal_results_with_steps
from engine.notation import format_play
from engine.position import Position
from eval.bots import Bot, CubeResponse
from eval.match import MAX_TURNS, DiceSource, IllegalBotPlay

log = logging.getLogger(__name__)

_ANSWER = {CubeResponse.TAKE: Answer.TAKE, CubeResponse.DROP: Answer.PASS, CubeResponse.BEAVER: Answer.BEAVER}


class Role(str, enum.Enum):
    """A seat's part in the current game."""

    BOX = "box"
    CAPTAIN = "captain"
    MEMBER = "member"


# --------------------------------------------------------------------------- seats
class Seat:
    """Someone at the table. Boards and cube states are seen from the side on roll (for
    answers: from the doubler, before the double), as for :class:`eval.bots.Bot`."""

    label = "seat"

    def choose_play(self, board: np.ndarray, dice: tuple[int, int], state: CubeState, role: Role,
                    opinions: Mapping[int, str]) -> np.ndarray | None:
        """The result board to play (its own view, before flipping). ``opinions``: the
        plays (text) the other members proposed, for the captain; a member may return
        None (no opinion)."""
        raise NotImplementedError

    def wants_double(self, board: np.ndarray, state: CubeState, role: Role, votes: Mapping[int, bool]) -> bool:
        """Double now? (box: his double; team: this member's vote; ``votes`` the others')."""
        raise NotImplementedError

    def answer_double(self, board: np.ndarray, state: CubeState, beaver_allowed: bool) -> Answer:
        raise NotImplementedError

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        """He doubled and was beavered: play on for four times the cube, or pass (losing two)."""
        raise NotImplementedError


class BotSeat(Seat):
    """A bot in a seat: it decides alone; opinions and votes of others are not used."""

    def __init__(self, bot: Bot, label: str | None = None) -> None:
        self.bot = bot
        self.label = label or bot.name

    def choose_play(self, board, dice, state, role, opinions):
        return self.bot.choose_play(board.copy(), dice[0], dice[1], state)

    def wants_double(self, board, state, role, votes):
        return bool(self.bot.offer_double(board.copy(), state))

    def answer_double(self, board, state, beaver_allowed):
        answer = _ANSWER[CubeResponse(self.bot.respond_double(board.copy(), state))]
        return Answer.TAKE if answer is Answer.BEAVER and not beaver_allowed else answer

    def accept_beaver(self, board, state):
        return bool(self.bot.accept_beaver(board.copy(), state))


class Listener:
    """What a driver tells an onlooker (the terminal); every method does nothing here."""

    def game_started(self, record: "ChouetteGameRecord", game: ChouetteGame) -> None: ...

    def cube_actions(self, game: ChouetteGame, events: Sequence[CubeEvent]) -> None: ...

    def played(self, game: ChouetteGame, side: int, dice: tuple[int, int], text: str,
               opinions: Mapping[int, str]) -> None: ...

    def game_over(self, record: "ChouetteGameRecord") -> None: ...


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Disagreement:
    """A team decision on which the members' opinions differed."""

    turn: int
    """Turn of the game (1 = the opening play)."""
    kind: str
    """``play``, ``double`` (the team's vote) or ``answer`` (to a box double)."""
    decided: str
    """What was done: the captain's play, ``double`` / ``no double``, or the answers."""
    opinions: dict[int, str]
    """Each member's opinion, by seat."""
    dice: tuple[int, int] | None = None


@dataclass
class ChouetteGameRecord:
    """A finished chouette game."""

    number: int
    lineup: Lineup
    first: int
    """:data:`BOX` or :data:`TEAM`: who won the opening roll."""
    opening: tuple[int, int]
    game: ChouetteGame | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    turns: int = 0

    @property
    def points(self) -> dict[int, int]:
        return self.game.points()


# --------------------------------------------------------------------------- driver
def _text(board: np.ndarray, results: np.ndarray, steps: np.ndarray, nsteps: np.ndarray, chosen) -> tuple[int, str]:
    """Index of ``chosen`` among the roll's results and its notation; (-1, '') if illegal."""
    match = np.flatnonzero((results == np.asarray(chosen, np.int8)[None, :]).all(axis=1))
    if len(match) != 1:
        return -1, ""
    k = int(match[0])
    st = [(int(steps[k, j, 0]), int(steps[k, j, 1])) for j in range(int(nsteps[k]))]
    return k, (format_play(Position.from_array(board), st) if st else "no move")


class _Game:
    """One game in progress: the state, the seats and the record."""

    def __init__(self, seats: Sequence[Seat], game: ChouetteGame, record: ChouetteGameRecord, listener: Listener):
        self.seats = seats
        self.g = game
        self.rec = record
        self.listener = listener

    def role(self, seat: int) -> Role:
        if seat == self.g.box:
            return Role.BOX
        return Role.CAPTAIN if seat == self.g.captain else Role.MEMBER

    def apply(self, transition: Callable[[], ChouetteGame]) -> None:
        before = len(self.g.events)
        self.g = transition()
        self.listener.cube_actions(self.g, self.g.events[before:])

    def disagree(self, kind: str, decided: str, opinions: dict[int, str], dice=None) -> None:
        if len(set(opinions.values())) > 1:
            self.rec.disagreements.append(Disagreement(self.rec.turns, kind, decided, opinions, dice))

    # ----------------------------------------------------------------- cube
    def cube_turn(self, board: np.ndarray) -> None:
        g = self.g
        cs = g.state.cube_state()
        if g.state.turn == BOX:
            if self.seats[g.box].wants_double(board, cs, Role.BOX, {}):
                self.apply(g.box_double)
                self.team_answers(board, cs)
            return
        votes: dict[int, bool] = {}
        for m in g.active[1:] + g.active[:1]:  # the captain last
            votes[m] = bool(self.seats[m].wants_double(board, cs, self.role(m), dict(votes)))
        decided = all(votes.values())
        self.disagree("double", "double" if decided else "no double",
                      {m: "double" if v else "no double" for m, v in votes.items()})
        if not decided:
            return
        self.apply(lambda: self.g.team_double(votes))
        beaver_ok = self.g.state.can_beaver()
        answer = self.seats[self.g.box].answer_double(board, cs, beaver_ok)
        self.apply(lambda: self.g.box_answers(answer))
        if self.g.team_must_answer:  # the box beavered
            answers = {m: Answer.TAKE if self.seats[m].accept_beaver(board, cs) else Answer.PASS
                       for m in self.g.active}
            self.disagree("answer", _answers_text(answers), {m: a.value for m, a in answers.items()})
            self.apply(lambda: self.g.team_answers(answers))

    def team_answers(self, board: np.ndarray, cs: CubeState) -> None:
        """Each member answers the box's double; a team beaver goes back to the box."""
        beaver_ok = self.g.state.can_beaver()
        answers = {m: self.seats[m].answer_double(board, cs, beaver_ok) for m in self.g.active}
        self.disagree("answer", _answers_text(answers), {m: a.value for m, a in answers.items()})
        self.apply(lambda: self.g.team_answers(answers))
        if self.g.box_must_answer:  # the team beavered
            take = self.seats[self.g.box].accept_beaver(board, cs)
            self.apply(lambda: self.g.box_answers(Answer.TAKE if take else Answer.PASS))

    # ----------------------------------------------------------------- checkers
    def play_turn(self, board: np.ndarray, dice: tuple[int, int]) -> None:
        g = self.g
        cs = g.state.cube_state()
        results, steps, nsteps = legal_results_with_steps(board, dice[0], dice[1])
        side = g.state.turn
        movers = (g.box,) if side == BOX else g.active[1:] + g.active[:1]
        opinions: dict[int, str] = {}
        chosen_k, chosen_text = -1, ""
        for seat in movers:
            role = self.role(seat)
            chosen = self.seats[seat].choose_play(board.copy(), dice, cs, role, dict(opinions))
            if chosen is None and role is Role.MEMBER:
                continue
            k, text = _text(board, results, steps, nsteps, chosen) if chosen is not None else (-1, "")
            if k < 0:
                raise IllegalBotPlay(f"{self.seats[seat].label} played an illegal result for {dice[0]}{dice[1]} "
                                     f"from {Position.from_array(board)!r}")
            opinions[seat] = text
            if role is not Role.MEMBER:
                chosen_k, chosen_text = k, text
        if side == TEAM:
            self.disagree("play", chosen_text, dict(opinions), dice)
        self.g = g.play(Position.from_array(results[chosen_k]))
        self.listener.played(self.g, side, dice, chosen_text, opinions if side == TEAM else {})


def _answers_text(answers: Mapping[int, Answer]) -> str:
    return ", ".join(f"{m} {a.value}" for m, a in answers.items())


def play_chouette_game(session: Chouette, seats: Sequence[Seat], dice: DiceSource, number: int = 1,
                       listener: Listener | None = None) -> ChouetteGameRecord:
    """Play the next game of ``session`` (seats indexed by player) and return its record."""
    listener = listener or Listener()
    roll, ties, first_seat = dice.opening()  # seat 0 of the opening: the box's die
    first = BOX if first_seat == 0 else TEAM
    game = session.new_game(first=first, opening_ties=ties)
    rec = ChouetteGameRecord(number, session.lineup, first, (roll.high, roll.low))
    run = _Game(seats, game, rec, listener)
    listener.game_started(rec, game)
    pending: tuple[int, int] | None = (roll.high, roll.low)
    for _ in range(MAX_TURNS):
        board = run.g.state.position.array()
        if pending is None and run.g.state.can_double():
            run.cube_turn(board)
            if run.g.is_over:
                break
        rolled = pending if pending is not None else dice.roll()
        pending = None
        rec.turns += 1
        run.play_turn(board, (max(rolled), min(rolled)))
        if run.g.is_over:
            break
    else:
        raise RuntimeError(f"chouette game {number} lasted more than {MAX_TURNS} turns")
    rec.game = run.g
    listener.game_over(rec)
    return rec


@dataclass
class ChouetteRun:
    """A chouette session: the seating, every game, and the final session (ledger)."""

    labels: tuple[str, ...]
    seating: Seating
    options: GameOptions
    games: list[ChouetteGameRecord] = field(default_factory=list)
    session: Chouette | None = None


def seat_and_play(
    seats: Sequence[Seat],
    games: int,
    rng: np.random.Generator,
    options: GameOptions | None = None,
    listener: Listener | None = None,
    on_game: Callable[[ChouetteGameRecord], None] | None = None,
) -> ChouetteRun:
    """Seat the players by the initial roll and play ``games`` games (dice from ``rng``)."""
    options = options or GameOptions()
    seating = seat_players(len(seats), dice_thrower(rng))
    session = Chouette.seated(seating, options)
    run = ChouetteRun(tuple(s.label for s in seats), seating, options, session=session)
    dice = DiceSource(rng)
    for i in range(games):
        rec = play_chouette_game(run.session, seats, dice, i + 1, listener)
        run.session = run.session.record(rec.game)
        run.games.append(rec)
        if on_game is not None:
            on_game(rec)
    return run


def unique_labels(specs: Sequence[str]) -> tuple[str, ...]:
    """The players' names: their specs, numbered by seat (``pubeval#2``) where a spec repeats."""
    return tuple(s if specs.count(s) == 1 else f"{s}#{i + 1}" for i, s in enumerate(specs))
