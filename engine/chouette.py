"""Chouette: three or more players, one of them (the box) against a team of the others.

Rules (``../shared/RULES.md``, "Chouette"; seeds ``000_*.txt`` / ``002_*.txt``):

* **Seating**: everyone rolls one die; the highest is in the box, the second highest is
  the captain, the others follow the captain in the order of their dice. Players who tie
  roll again among themselves (as often as needed) to settle their places
  (:func:`seat_players`).
* **Play**: the captain rolls and moves the team's checkers; the team members give their
  opinions, the captain decides (the drivers ask every member, this module only knows
  what was decided).
* **Rotation** (:meth:`Lineup.after`): when the team loses, the captain goes to the end
  of the team line and the next member becomes captain, the box stays; when the team
  wins, the captain goes into the box, the old box takes the last place in the team
  line, the next member becomes captain. "The team wins" means the captain of the game
  won *his own* game ("a player retains the box if he defeats the captain"): a captain
  who passes a box double has lost, whatever the members who took go on to do.
* **Cube**: a team double must be unanimous among the members still in the game
  (:meth:`ChouetteGame.team_double`). A double from the box is taken or passed by each
  member on his own (:meth:`ChouetteGame.team_answers`): those who pass pay the current
  stake (the cube before the double) and leave the game; the others play on for the
  doubled stake. If the captain passes, the first member in team order still playing
  moves the checkers for the rest of the game (the acting captain).
* **Settlement**: at the end the box pays or collects each remaining member's stake
  times the result (single, gammon, backgammon), as in a heads-up game.

Model: the board game of the members still playing is one :class:`engine.game.GameState`
with the box as player :data:`BOX` and the team as player :data:`TEAM`. They always share
one cube (the only way to leave the common stake is to pass), so one state holds the
board, the cube and the points of every member still in. A member who passes keeps his
own finished state: the same game, dropped at that moment. Every member's points are
his state's points, so the cube, gammons, backgammons, the Jacoby rule, beavers,
automatic doubles and the maximum cube are the heads-up rules of
:class:`~engine.game.GameState` (money play), applied to each member's game:

* Jacoby: a member's gammon counts only if a double was taken in his game (a team double
  the box took, or a box double he took); automatic doubles do not count.
* Beavers: a beaver is a redouble, so a team beaver of a box double must be unanimous
  among the members who take (when it is not, they all simply take); the box's beaver of
  a team double is answered like a box double: each member takes (cube x4) or passes
  (paying twice the cube) on his own.
* Automatic doubles: the opening roll is thrown by the box and the captain; each tie
  doubles every member's stake (up to ``auto_doubles`` and the cap).
* Maximum cube: nobody, box or team, may double past ``max_cube``.

Resignations are not part of a chouette here. There is no I/O and no randomness but the
throw function passed to :func:`seat_players`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from engine.game import GameError, GameOptions, GameState, Phase

BOX = 0
"""The box is player 0 of every :class:`GameState` of a chouette game."""
TEAM = 1
"""The team is player 1."""

MIN_PLAYERS = 3
MAX_PLAYERS = 10


class ChouetteError(ValueError):
    """An action the chouette rules do not allow now."""


class Answer(str, enum.Enum):
    """A player's answer to a double (or to a beaver)."""

    TAKE = "take"
    PASS = "pass"
    BEAVER = "beaver"


# --------------------------------------------------------------------------- lineup
@dataclass(frozen=True, slots=True)
class Lineup:
    """Who is in the box and the team line, captain first (players are seat numbers)."""

    box: int
    team: tuple[int, ...]

    def __post_init__(self) -> None:
        seats = (self.box, *self.team)
        if len(self.team) < MIN_PLAYERS - 1:
            raise ChouetteError(f"a chouette needs at least {MIN_PLAYERS} players, got {len(seats)}")
        if len(set(seats)) != len(seats):
            raise ChouetteError(f"a player sits in two places: box {self.box}, team {self.team}")

    @property
    def captain(self) -> int:
        return self.team[0]

    @property
    def players(self) -> tuple[int, ...]:
        """Every player: the box, then the team line."""
        return (self.box, *self.team)

    def after_team_loss(self) -> "Lineup":
        """The box stays; the captain goes to the end of the line."""
        return Lineup(self.box, self.team[1:] + self.team[:1])

    def after_team_win(self) -> "Lineup":
        """The captain takes the box; the old box goes to the end of the line."""
        return Lineup(self.team[0], self.team[1:] + (self.box,))

    def after(self, captain_won: bool) -> "Lineup":
        """The lineup of the next game."""
        return self.after_team_win() if captain_won else self.after_team_loss()


@dataclass(frozen=True, slots=True)
class Seating:
    """The initial roll: every round of dice thrown and the order it settled."""

    rounds: tuple[tuple[tuple[int, int], ...], ...]
    """Each round: ``(player, die)`` for each player who threw in it."""
    order: tuple[int, ...]
    """Highest first: the box, the captain, then the team line."""

    @property
    def lineup(self) -> Lineup:
        return Lineup(self.order[0], self.order[1:])


Throw = Callable[[int], Sequence[int]]
"""``throw(n)``: ``n`` dice, each 1-6."""


def dice_thrower(rng: np.random.Generator) -> Throw:
    """A :data:`Throw` from a seeded generator."""
    return lambda n: [int(x) for x in rng.integers(1, 7, size=n)]


def seat_players(players: int, throw: Throw) -> Seating:
    """Everyone rolls one die; the highest is the box, the next the captain, the rest follow
    in order of their dice. Tied players roll again among themselves until each place is
    settled (ties among the highest decide the box; every tie is settled the same way)."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ChouetteError(f"a chouette has {MIN_PLAYERS} to {MAX_PLAYERS} players, got {players}")
    rounds: list[tuple[tuple[int, int], ...]] = []

    def order(group: list[int]) -> list[int]:
        if len(group) == 1:
            return group
        dice = list(throw(len(group)))
        if len(dice) != len(group) or not all(1 <= d <= 6 for d in dice):
            raise ChouetteError(f"a throw of {len(group)} dice gave {dice}")
        rounds.append(tuple(zip(group, dice)))
        out: list[int] = []
        for face in range(6, 0, -1):
            tied = [p for p, d in zip(group, dice) if d == face]
            if tied:
                out.extend(order(tied))
        return out

    seated = order(list(range(players)))
    return Seating(tuple(rounds), tuple(seated))


# --------------------------------------------------------------------------- one game
@dataclass(frozen=True, slots=True)
class CubeEvent:
    """A cube action by ``player``: ``double`` (``cube``: the value offered), ``take`` or
    ``beaver`` (``cube``: the new stake), ``pass`` (``cube``: the stake paid)."""

    player: int
    action: str
    cube: int


@dataclass(frozen=True, slots=True)
class ChouetteGame:
    """One game of a chouette, between actions (immutable: every action returns a new one)."""

    lineup: Lineup
    state: GameState
    """The board game of the members still playing (box = player 0, team = player 1)."""
    active: tuple[int, ...]
    """Members still playing, in team order; the first moves the checkers."""
    passed: tuple[tuple[int, GameState], ...] = ()
    """Members who passed, each with his finished game."""
    events: tuple[CubeEvent, ...] = field(default=())

    @classmethod
    def start(cls, lineup: Lineup, options: GameOptions | None = None, *, first: int = BOX,
              opening_ties: int = 0) -> "ChouetteGame":
        """A new game: ``first`` (:data:`BOX` or :data:`TEAM`) won the opening roll between
        the box and the captain, after ``opening_ties`` ties (automatic doubles)."""
        if first not in (BOX, TEAM):
            raise ChouetteError(f"first is BOX (0) or TEAM (1), got {first}")
        state = GameState.new_game(options, first_player=first, opening_ties=opening_ties)
        return cls(lineup, state, lineup.team)

    # ----------------------------------------------------------------- queries
    @property
    def box(self) -> int:
        return self.lineup.box

    @property
    def captain(self) -> int:
        """The member moving the team's checkers now (the captain, unless he passed)."""
        if not self.active:
            raise ChouetteError("every member has passed")
        return self.active[0]

    @property
    def is_over(self) -> bool:
        return self.state.is_over

    @property
    def side_to_act(self) -> int:
        """:data:`BOX` or :data:`TEAM`: who must act now."""
        return self.state.player_to_act

    @property
    def team_must_answer(self) -> bool:
        """The box doubled (or beavered a team double): each member answers on his own."""
        s = self.state
        return (s.phase is Phase.DOUBLED and s.turn == BOX) or (s.phase is Phase.BEAVERED and s.turn == TEAM)

    @property
    def box_must_answer(self) -> bool:
        """The team doubled (or beavered a box double): the box answers."""
        s = self.state
        return (s.phase is Phase.DOUBLED and s.turn == TEAM) or (s.phase is Phase.BEAVERED and s.turn == BOX)

    def game_of(self, member: int) -> GameState:
        """``member``'s game: his finished one if he passed, else the common one."""
        for m, gs in self.passed:
            if m == member:
                return gs
        if member in self.active:
            return self.state
        raise ChouetteError(f"player {member} is not on the team")

    def stake(self, member: int) -> int:
        """The cube value ``member`` plays for (for one who passed: what he paid)."""
        gs = self.game_of(member)
        return gs.points if gs.is_over and member not in self.active else gs.cube_value

    # ----------------------------------------------------------------- cube
    def box_double(self) -> "ChouetteGame":
        """The box, on roll, doubles every member still playing."""
        self._require(self.state.turn == BOX, "the box doubles on his own turn")
        return self._with(self.state.double, CubeEvent(self.box, "double", self.state.cube_value * 2))

    def team_double(self, votes: Mapping[int, bool]) -> "ChouetteGame":
        """The team, on roll, doubles the box: ``votes`` holds every active member's wish,
        and each must be True (a team double is unanimous)."""
        self._require(self.state.turn == TEAM, "the team doubles on its own turn")
        self._check_voters(votes)
        against = [m for m in self.active if not votes[m]]
        self._require(not against, f"a team double needs every member: {', '.join(map(str, against))} declined")
        new = self.state.cube_value * 2
        game = self._with(self.state.double)
        return replace(game, events=game.events + tuple(CubeEvent(m, "double", new) for m in self.active))

    def box_answers(self, answer: Answer) -> "ChouetteGame":
        """The box takes, passes or beavers a team double, or takes or passes a team beaver."""
        self._require(self.box_must_answer, "there is no team double or beaver for the box to answer")
        s = self.state
        answer = Answer(answer)
        if answer is Answer.TAKE:
            new = s.cube_value * (2 if s.phase is Phase.DOUBLED else 4)
            return self._with(s.take, CubeEvent(self.box, "take", new))
        if answer is Answer.BEAVER:
            return self._with(s.beaver, CubeEvent(self.box, "beaver", s.cube_value * 4))
        paid = s.cube_value * (1 if s.phase is Phase.DOUBLED else 2)
        return self._with(s.drop, CubeEvent(self.box, "pass", paid))

    def team_answers(self, answers: Mapping[int, Answer]) -> "ChouetteGame":
        """Each active member answers the box's double (take, pass or beaver) or the box's
        beaver of a team double (take or pass) on his own. Those who pass pay the current
        stake and leave; a beaver counts only if every member who stays beavers (else they
        all take)."""
        self._require(self.team_must_answer, "there is no box double or beaver for the team to answer")
        self._check_voters(answers)
        s = self.state
        answers = {m: Answer(a) for m, a in answers.items()}
        beavered = s.phase is Phase.BEAVERED
        if any(a is Answer.BEAVER for a in answers.values()):
            self._require(not beavered, "a beaver cannot be beavered")
            self._require(s.can_beaver(), "a beaver is not allowed here (beavers off, or past the maximum cube)")
        dropped = s.drop()
        stay = tuple(m for m in self.active if answers[m] is not Answer.PASS)
        passed = self.passed + tuple((m, dropped) for m in self.active if answers[m] is Answer.PASS)
        events = self.events + tuple(CubeEvent(m, "pass", dropped.points) for m in self.active
                                     if answers[m] is Answer.PASS)
        if not stay:
            return replace(self, state=dropped, active=(), passed=passed, events=events)
        if not beavered and all(answers[m] is Answer.BEAVER for m in stay):
            state, action, new = s.beaver(), "beaver", s.cube_value * 4
        else:
            state, action, new = s.take(), "take", s.cube_value * (4 if beavered else 2)
        events += tuple(CubeEvent(m, action, new) for m in stay)
        return replace(self, state=state, active=stay, passed=passed, events=events)

    # ----------------------------------------------------------------- checker play
    def play(self, play, roll=None) -> "ChouetteGame":
        """The side on roll plays (:meth:`GameState.play`: a Play, result Position or board)."""
        try:
            return replace(self, state=self.state.play(play, roll))
        except GameError as exc:
            raise ChouetteError(str(exc)) from None

    # ----------------------------------------------------------------- result
    def settlements(self) -> tuple[tuple[int, int], ...]:
        """``(member, points the member wins from the box)`` for every member, team order."""
        self._require(self.is_over, "the game is not over")
        out = []
        for m in self.lineup.team:
            gs = self.game_of(m)
            out.append((m, gs.points if gs.winner == TEAM else -gs.points))
        return tuple(out)

    def points(self) -> dict[int, int]:
        """Every player's points for this finished game; they sum to zero."""
        pay = self.settlements()
        out = {self.box: -sum(p for _, p in pay)}
        out.update(pay)
        return out

    @property
    def captain_won(self) -> bool:
        """The game's captain won his own game: the team won, for the rotation."""
        self._require(self.is_over, "the game is not over")
        return self.game_of(self.lineup.captain).winner == TEAM

    def next_lineup(self) -> Lineup:
        return self.lineup.after(self.captain_won)

    # ----------------------------------------------------------------- internals
    def _require(self, ok: object, message: str) -> None:
        if not ok:
            raise ChouetteError(message)

    def _check_voters(self, votes: Mapping[int, object]) -> None:
        if set(votes) != set(self.active):
            raise ChouetteError(f"every member still playing answers: expected {sorted(self.active)}, got {sorted(votes)}")

    def _with(self, transition: Callable[[], GameState], event: CubeEvent | None = None) -> "ChouetteGame":
        try:
            state = transition()
        except GameError as exc:
            raise ChouetteError(str(exc)) from None
        events = self.events + ((event,) if event is not None else ())
        return replace(self, state=state, events=events)


# --------------------------------------------------------------------------- session
@dataclass(frozen=True, slots=True)
class Chouette:
    """A chouette session: the lineup of the next game and every player's running total."""

    lineup: Lineup
    options: GameOptions = field(default_factory=GameOptions)
    ledger: tuple[int, ...] = ()
    """Each player's points so far (seat order); they sum to zero."""
    games: int = 0

    def __post_init__(self) -> None:
        n = len(self.lineup.players)
        if sorted(self.lineup.players) != list(range(n)):
            raise ChouetteError(f"players are the seats 0 to {n - 1}, got {self.lineup.players}")
        if not self.ledger:
            object.__setattr__(self, "ledger", (0,) * n)
        if len(self.ledger) != n or sum(self.ledger) != 0:
            raise ChouetteError(f"a ledger has one total per player and sums to zero, got {self.ledger}")

    @classmethod
    def seated(cls, seating: Seating, options: GameOptions | None = None) -> "Chouette":
        return cls(seating.lineup, options or GameOptions())

    @property
    def players(self) -> int:
        return len(self.ledger)

    def new_game(self, *, first: int = BOX, opening_ties: int = 0) -> ChouetteGame:
        return ChouetteGame.start(self.lineup, self.options, first=first, opening_ties=opening_ties)

    def record(self, game: ChouetteGame) -> "Chouette":
        """The session after ``game``: the ledger updated and the lineup rotated."""
        if game.lineup != self.lineup:
            raise ChouetteError("that game was not played by this lineup")
        pts = game.points()
        ledger = tuple(t + pts.get(p, 0) for p, t in enumerate(self.ledger))
        return replace(self, lineup=game.next_lineup(), ledger=ledger, games=self.games + 1)


__all__ = [
    "BOX",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "TEAM",
    "Answer",
    "Chouette",
    "ChouetteError",
    "ChouetteGame",
    "CubeEvent",
    "Lineup",
    "Seating",
    "Throw",
    "dice_thrower",
    "seat_players",
]
