"""The rules layer of a game: cube, score, match, Crawford, money options.

:class:`GameState` is immutable; every transition returns a new state. Players are the
fixed "player 0" and "player 1"; ``turn`` says who is on roll and ``position`` is always
seen from him. There is no randomness here: a driver rolls the dice and calls
:meth:`GameState.play` with the chosen :class:`~engine.notation.Play` (or result board).

A turn: while ``phase`` is ``ROLL`` the player on roll may :meth:`~GameState.double`
(when :meth:`~GameState.can_double`), then plays. After a double the opponent
:meth:`~GameState.take`\\ s, :meth:`~GameState.drop`\\ s or (money, beavers on)
:meth:`~GameState.beaver`\\ s; after a beaver the doubler takes or drops. A game ends when
a side bears off its last checker, on a drop, or on an accepted resignation.

Rules enforced (``../shared/RULES.md``, "Doubling cube", "Match play", "End of game"):
points = cube x result (1 single, 2 gammon, 3 backgammon, or 2 when backgammons count
two); a drop gives the doubler the cube value before the double, with no gammon; the
cube never passes ``max_cube`` (default 64); the Jacoby rule (money only) counts gammons
and backgammons as 1 unless a player doubled in that game (automatic doubles do not
count); automatic doubles (money only) double the centred cube once per opening tie, up
to ``max_automatic_doubles``; no cube in the Crawford game, which is the game after a
player first reaches exactly ``match_length - 1``; beavers, Jacoby and automatic doubles
never apply in match play.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from engine.cube import CubeOwner, CubeState
from engine.dice import Roll
from engine.ids import GameStateCode, MatchInfo, owner_seen_by, score_seen_by
from engine.movegen import legal_results
from engine.position import NUM_CHECKERS, GameResult, Position


class GameError(ValueError):
    """A transition that the rules do not allow in this state."""


@dataclass(frozen=True, slots=True)
class GameOptions:
    """Variant settings (the one set of rule options, for the game, the match driver and
    the terminal game); the money-only ones are ignored in match play."""

    cube: bool = True
    """Play with the doubling cube at all."""
    jacoby: bool = False
    """Gammons and backgammons count 1 unless a player doubled (money only)."""
    beavers: bool = False
    """A doubled player may take and immediately redouble, keeping the cube (money only)."""
    auto_doubles: int = 0
    """Money: at most this many opening ties double the centred cube (0 = off)."""
    backgammon_counts_two: bool = False
    """A backgammon is worth 2, like a gammon."""
    max_cube: int = 64
    """Nobody may double past this cube value (a power of two)."""

    def __post_init__(self) -> None:
        m = self.max_cube
        if m < 1 or m & (m - 1):
            raise GameError(f"max_cube must be a power of two, got {m}")
        if self.auto_doubles < 0:
            raise GameError("auto_doubles must not be negative")


class NoDouble(Enum):
    """Why the player on roll may not double."""

    NO_CUBE = "no_cube"
    WAITING = "waiting"
    CRAWFORD = "crawford"
    OPENING = "opening"
    OPPONENT_OWNS = "opponent_owns"
    MAXIMUM = "maximum"


_NO_DOUBLE_TEXT = {
    NoDouble.NO_CUBE: "this game is played without the cube",
    NoDouble.CRAWFORD: "no doubling in the Crawford game",
    NoDouble.OPENING: "no doubling before the opening play: it is made with the opening roll",
    NoDouble.OPPONENT_OWNS: "the opponent owns the cube",
}


class Phase(Enum):
    """What the game waits for."""

    ROLL = "roll"
    """The player on roll may double, then plays his roll."""
    DOUBLED = "doubled"
    """The opponent of the player on roll must take, drop or beaver."""
    BEAVERED = "beavered"
    """The doubler (player on roll) must take or drop the beaver."""
    RESIGN_OFFERED = "resign_offered"
    """The player on roll offered to resign; the opponent accepts or rejects."""
    OVER = "over"


class EndReason(Enum):
    PLAYED = "played"
    DROPPED = "dropped"
    RESIGNED = "resigned"


@dataclass(frozen=True, slots=True)
class GameState:
    """One game of a money session or a match, at a moment between actions."""

    position: Position = field(default_factory=Position.start)
    turn: int = 0
    cube_value: int = 1
    cube_owner: int | None = None
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    post_crawford: bool = False
    options: GameOptions = field(default_factory=GameOptions)
    phase: Phase = Phase.ROLL
    doubled: bool = False
    """A player doubled in this game (automatic doubles do not count)."""
    automatic_doubles: int = 0
    opening: bool = False
    """The opening play (made with the opening roll) is still to come: nobody may double."""
    resign_level: int = 0
    winner: int | None = None
    points: int = 0
    result: GameResult | None = None
    end_reason: EndReason | None = None

    def __post_init__(self) -> None:
        if self.turn not in (0, 1):
            raise GameError(f"turn is 0 or 1, got {self.turn}")
        v = self.cube_value
        if v < 1 or v & (v - 1) or v > self.options.max_cube:
            raise GameError(f"cube value must be a power of two up to {self.options.max_cube}, got {v}")
        if self.cube_owner not in (None, 0, 1):
            raise GameError(f"cube owner is None (centre), 0 or 1, got {self.cube_owner!r}")
        if self.match_length < 0 or min(self.score) < 0:
            raise GameError("match length and scores must not be negative")
        if self.crawford and (self.match_length == 0 or self.post_crawford):
            raise GameError("a Crawford game needs a match that is not yet post-Crawford")

    # ------------------------------------------------------------------ construction
    @classmethod
    def new_game(
        cls,
        options: GameOptions | None = None,
        *,
        first_player: int = 0,
        opening_ties: int = 0,
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        crawford: bool = False,
        post_crawford: bool = False,
    ) -> "GameState":
        """A game at the starting position, ``first_player`` on roll for the opening.

        ``opening_ties`` is how many times the opening roll tied (from
        :func:`engine.dice.opening_roll`); with automatic doubles (money) each doubles
        the centred cube, up to the configured limit and the cap.
        """
        opts = options or GameOptions()
        autos = 0
        cube = 1
        if match_length == 0 and opts.cube and opts.auto_doubles:
            autos = min(opening_ties, opts.auto_doubles)
            while autos and cube * 2 ** autos > opts.max_cube:
                autos -= 1
            cube = 2 ** autos
        return cls(
            position=Position.start(),
            turn=first_player,
            cube_value=cube,
            match_length=match_length,
            score=tuple(score),
            crawford=crawford,
            post_crawford=post_crawford,
            options=opts,
            automatic_doubles=autos,
            opening=True,
        )

    # ------------------------------------------------------------------ queries
    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def player_to_act(self) -> int:
        """Who must act now: the opponent while a double or resignation is pending."""
        if self.phase in (Phase.DOUBLED, Phase.RESIGN_OFFERED):
            return 1 - self.turn
        return self.turn

    def cube_owner_relative(self) -> str:
        """The cube seen from the player on roll: ``centre``, ``player`` or ``opponent``."""
        return owner_seen_by(self.cube_owner, self.turn)

    def score_relative(self) -> tuple[int, int]:
        """``(player on roll, opponent)`` scores."""
        return score_seen_by(self.score, self.turn)

    def cube_state(self) -> CubeState:
        """The cube, score and money options seen by the player on roll (``turn``)."""
        money = self.is_money
        return CubeState(
            value=self.cube_value,
            owner=CubeOwner(self.cube_owner_relative()),
            match_length=self.match_length,
            score=(0, 0) if money else self.score_relative(),
            crawford=self.crawford,
            jacoby=money and self.options.jacoby,
            beavers=money and self.options.beavers,
            max_cube=self.options.max_cube,
        )

    def can_double(self) -> bool:
        """The player on roll may double now: before his roll, cube centred or his, below
        the cap, not in the Crawford game."""
        return (
            self.options.cube
            and self.phase is Phase.ROLL
            and not self.opening
            and not self.crawford
            and self.cube_owner in (None, self.turn)
            and self.cube_value * 2 <= self.options.max_cube
        )

    def can_beaver(self) -> bool:
        """The doubled player may beaver: money, beavers on, the redouble fits the cap."""
        return (
            self.phase is Phase.DOUBLED
            and self.is_money
            and self.options.beavers
            and self.cube_value * 4 <= self.options.max_cube
        )

    # ------------------------------------------------------------------ cube
    def double(self) -> "GameState":
        """The player on roll offers the cube."""
        if not self.can_double():
            raise GameError(self.why_no_double())
        return replace(self, phase=Phase.DOUBLED)

    def no_double_reason(self) -> NoDouble | None:
        """Why the player on roll may not double now (None when he may)."""
        if not self.options.cube:
            return NoDouble.NO_CUBE
        if self.phase is not Phase.ROLL:
            return NoDouble.WAITING
        if self.crawford:
            return NoDouble.CRAWFORD
        if self.opening:
            return NoDouble.OPENING
        if self.cube_owner not in (None, self.turn):
            return NoDouble.OPPONENT_OWNS
        if self.cube_value * 2 > self.options.max_cube:
            return NoDouble.MAXIMUM
        return None

    def why_no_double(self) -> str:
        """:meth:`no_double_reason` in one sentence (``""`` when the player may double)."""
        reason = self.no_double_reason()
        if reason is None:
            return ""
        if reason is NoDouble.WAITING:
            return f"cannot double now (waiting for {self.phase.value})"
        if reason is NoDouble.MAXIMUM:
            return f"the cube is at its maximum ({self.options.max_cube})"
        return _NO_DOUBLE_TEXT[reason]

    def take(self) -> "GameState":
        """Accept the pending double (or, after a beaver, the doubler accepts the beaver)."""
        if self.phase is Phase.DOUBLED:
            return replace(self, phase=Phase.ROLL, cube_value=self.cube_value * 2,
                           cube_owner=1 - self.turn, doubled=True)
        if self.phase is Phase.BEAVERED:
            return replace(self, phase=Phase.ROLL, cube_value=self.cube_value * 4,
                           cube_owner=1 - self.turn, doubled=True)
        raise GameError("there is no double to take")

    def drop(self) -> "GameState":
        """Refuse the pending double (the doubler wins the cube value before the double)
        or, after a beaver, the doubler refuses it (the beaverer wins the doubled value)."""
        if self.phase is Phase.DOUBLED:
            return self._end(self.turn, self.cube_value, None, EndReason.DROPPED)
        if self.phase is Phase.BEAVERED:
            return self._end(1 - self.turn, self.cube_value * 2, None, EndReason.DROPPED)
        raise GameError("there is no double to drop")

    def beaver(self) -> "GameState":
        """The doubled player takes and immediately redoubles, keeping the cube."""
        if not self.can_beaver():
            if self.phase is not Phase.DOUBLED:
                raise GameError("there is no double to beaver")
            if not self.is_money or not self.options.beavers:
                raise GameError("beavers are not allowed in this game")
            raise GameError(f"a beaver would pass the maximum cube ({self.options.max_cube})")
        return replace(self, phase=Phase.BEAVERED)

    # ------------------------------------------------------------------ resignation
    def resign(self, level: int | GameResult) -> "GameState":
        """The player on roll offers to resign a single game (1), gammon (2) or backgammon (3)."""
        if self.phase is not Phase.ROLL:
            raise GameError("a resignation is offered by the player on roll, before his roll")
        lvl = int(level)
        if lvl not in (1, 2, 3):
            raise GameError(f"resign 1 (single), 2 (gammon) or 3 (backgammon), got {level}")
        return replace(self, phase=Phase.RESIGN_OFFERED, resign_level=lvl)

    def accept_resignation(self) -> "GameState":
        if self.phase is not Phase.RESIGN_OFFERED:
            raise GameError("no resignation is offered")
        result = GameResult(self.resign_level)
        return self._end(1 - self.turn, self._value(result), result, EndReason.RESIGNED)

    def reject_resignation(self) -> "GameState":
        if self.phase is not Phase.RESIGN_OFFERED:
            raise GameError("no resignation is offered")
        return replace(self, phase=Phase.ROLL, resign_level=0)

    # ------------------------------------------------------------------ checker play
    def play(self, play, roll: Roll | None = None) -> "GameState":
        """Play a roll: ``play`` is a :class:`~engine.notation.Play`, a result
        :class:`Position` or a 26-entry board (mover's view, before flipping).

        With ``roll`` given, the result must be one of the roll's legal results.
        """
        if self.phase is not Phase.ROLL:
            raise GameError(f"cannot move now (waiting for {self.phase.value})")
        if isinstance(play, Position):
            result = play
        elif isinstance(getattr(play, "result", None), Position):
            result = play.result
        else:
            result = Position.from_array(np.asarray(play).reshape(-1))
        if roll is not None:
            legal = {tuple(int(x) for x in r) for r in legal_results(self.position.array(), roll.high, roll.low)}
            if result.board not in legal:
                raise GameError(f"that play is not legal for {roll.high}-{roll.low}")
        if result.off == NUM_CHECKERS:
            kind = GameResult(result.result(self.options.backgammon_counts_two))
            return replace(self, position=result, opening=False)._end(self.turn, self._value(kind), kind, EndReason.PLAYED)
        return replace(self, position=result.flip(), turn=1 - self.turn, opening=False)

    # ------------------------------------------------------------------ scoring
    def points_of(self, result: GameResult | int) -> int:
        """Points a game won with ``result`` (single, gammon, backgammon) would score now:
        the cube times the result, backgammons counting two where that option is on, and
        the Jacoby rule (money, nobody doubled) counting gammons as singles."""
        return self._value(GameResult(int(result)))

    @property
    def jacoby_applies(self) -> bool:
        """Gammons and backgammons count single now: money, Jacoby rule, nobody doubled."""
        return self.is_money and self.options.jacoby and not self.doubled

    def _value(self, result: GameResult) -> int:
        """Points of a result at the current cube, with the Jacoby rule where it applies."""
        mult = int(result)
        if self.options.backgammon_counts_two and mult == 3:
            mult = 2
        if self.jacoby_applies:
            mult = 1
        return self.cube_value * mult

    def _end(self, winner: int, points: int, result: GameResult | None, reason: EndReason) -> "GameState":
        return replace(self, phase=Phase.OVER, winner=winner, points=points,
                       result=result if result is not None else GameResult.SINGLE, end_reason=reason)

    def final_score(self) -> tuple[int, int]:
        """The score after this finished game."""
        if not self.is_over:
            raise GameError("the game is not over")
        s = list(self.score)
        s[self.winner] += self.points
        return (s[0], s[1])

    def match_winner(self) -> int | None:
        """The player who has won the match with this finished game, if any."""
        if not self.is_over or self.is_money:
            return None
        s = self.final_score()
        for p in (0, 1):
            if s[p] >= self.match_length:
                return p
        return None

    def next_game(self, *, first_player: int = 0, opening_ties: int = 0) -> "GameState":
        """The next game of the session or match, with the score and Crawford state updated."""
        if not self.is_over:
            raise GameError("the game is not over")
        if self.match_winner() is not None:
            raise GameError("the match is over")
        score = self.final_score()
        crawford = False
        post = self.post_crawford
        if not self.is_money:
            if self.crawford:
                post = True
            elif not post:
                crawford = self.match_length - 1 in score
        return GameState.new_game(
            self.options,
            first_player=first_player,
            opening_ties=opening_ties,
            match_length=self.match_length,
            score=score,
            crawford=crawford,
            post_crawford=post,
        )

    # ------------------------------------------------------------------ interchange
    def match_info(self) -> MatchInfo:
        """The GNU Backgammon Match ID fields (gnubg's players 0/1 are ours)."""
        state = {
            EndReason.PLAYED: GameStateCode.OVER,
            EndReason.DROPPED: GameStateCode.DROPPED,
            EndReason.RESIGNED: GameStateCode.RESIGNED,
        }.get(self.end_reason, GameStateCode.PLAYING)
        return MatchInfo(
            cube_value=self.cube_value,
            cube_owner=self.cube_owner,
            player_on_roll=self.turn,
            crawford=self.crawford,
            game_state=state,
            turn=self.player_to_act,
            double_offered=self.phase is Phase.DOUBLED,
            resign=self.resign_level if self.phase is Phase.RESIGN_OFFERED else 0,
            match_length=self.match_length,
            score=self.score,
            jacoby=self.is_money and self.options.jacoby,
        )
