"""Replay an imported match (``.mat`` or ``.sgf``) through the rules engine.

:func:`replay_match` turns the actions read from a file (:class:`~eval.mat.MatMatch`)
into the sequence of :class:`Decision`\\ s of each game: for every action, the
:class:`~engine.game.GameState` before it. Every action is checked by
:class:`~engine.game.GameState` (a play must be a legal result of its roll; a double,
take, drop or beaver must be allowed; the game's result and the scores written in the
file must be the ones the rules give), so a file that does not describe a real match
raises :class:`ReplayError` naming the line, before anything is analysed or written.

Conventions of the files: a ``.mat`` writes no take after a beaver (the doubler's next
roll takes it); a ``Wins`` line on a game that is not over after a drop or a last
bear-off is a resignation by the other player of ``points / cube`` (single, gammon or
backgammon).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.dice import Roll
from engine.game import GameError, GameOptions, GameState, Phase
from engine.notation import IllegalPlayError, NotationError, play_from_steps
from engine.position import Position
from eval.mat import MatAction, MatGame, MatMatch


class ReplayError(ValueError):
    """An imported action the rules do not allow (the message names its line)."""


@dataclass(frozen=True)
class Decision:
    """One action of a game with the state it was taken in.

    ``kind``: ``move`` (``roll`` and ``after``, the result in the mover's view),
    ``double``, ``take``, ``drop``, ``beaver``, ``resign`` (``level``). ``no_double``
    marks a move whose player could have doubled before rolling and did not.
    """

    game: int
    player: int
    kind: str
    state: GameState
    roll: Roll | None = None
    after: Position | None = None
    steps: tuple[tuple[int, int], ...] = ()
    level: int = 0
    line: int = 0
    could_double: bool = False


@dataclass
class ReplayedGame:
    number: int
    start: GameState
    decisions: list[Decision] = field(default_factory=list)
    end: GameState | None = None

    @property
    def winner(self) -> int:
        return self.end.winner if self.end is not None else -1

    @property
    def points(self) -> int:
        return self.end.points if self.end is not None else 0


@dataclass
class ReplayedMatch:
    names: tuple[str, str]
    match_length: int
    games: list[ReplayedGame] = field(default_factory=list)

    @property
    def score(self) -> tuple[int, int]:
        s = [0, 0]
        for g in self.games:
            if g.end is not None:
                s[g.winner] += g.points
        return (s[0], s[1])


def _err(a: MatAction | None, game: MatGame, text: str) -> ReplayError:
    line = a.line if a is not None and a.line else game.line
    where = f"line {line}: " if line else ""
    return ReplayError(f"{where}game {game.number}: {text}")


def _first_player(game: MatGame) -> int:
    for a in game.actions:
        if a.kind == "move":
            return a.player
        if a.kind != "wins":
            return a.player
    return 0


def replay_game(game: MatGame, start: GameState) -> ReplayedGame:
    """The decisions of one game from ``start`` (a new game, first player set)."""
    out = ReplayedGame(game.number, start)
    gs = start
    actions = list(game.actions)
    for k, a in enumerate(actions):
        if gs.is_over:
            if a.kind == "wins":
                if a.player != gs.winner or (a.value and a.value != gs.points):
                    raise _err(a, game, f"the file says {'left' if a.player == 0 else 'right'} player wins "
                               f"{a.value}, the rules say player {gs.winner} wins {gs.points}")
                continue
            raise _err(a, game, f"{a.kind} after the end of the game")
        try:
            if a.kind == "wins":
                # a resignation: the other player gave up points / cube
                loser = 1 - a.player
                level = max(1, min(3, (a.value or gs.cube_value) // gs.cube_value))
                out.decisions.append(Decision(game.number, loser, "resign", gs, level=level, line=a.line))
                gs = _resign(gs, loser, level)
                if a.value and gs.points != a.value:
                    raise _err(a, game, f"a resignation worth {gs.points}, the file says {a.value}")
                continue
            if gs.phase is Phase.BEAVERED and a.kind == "move" and a.player == gs.turn:
                out.decisions.append(Decision(game.number, gs.turn, "take", gs, line=a.line))
                gs = gs.take()
            if a.player != gs.player_to_act and not (a.kind == "take" and gs.phase is Phase.BEAVERED):
                raise _err(a, game, f"{a.kind} by the wrong player (player {gs.player_to_act} is to act)")
            if a.kind == "move":
                if a.dice is None:
                    raise _err(a, game, "a move without dice")
                roll = Roll.of(*a.dice)
                could = gs.can_double()
                play = play_from_steps(gs.position, roll, a.steps)
                out.decisions.append(Decision(game.number, a.player, "move", gs, roll=roll, after=play.result,
                                              steps=tuple(a.steps), line=a.line, could_double=could))
                gs = gs.play(play, roll)
            elif a.kind == "double":
                if gs.phase is Phase.DOUBLED and gs.can_beaver():
                    out.decisions.append(Decision(game.number, a.player, "beaver", gs, line=a.line))
                    gs = gs.beaver()
                else:
                    out.decisions.append(Decision(game.number, a.player, "double", gs, line=a.line))
                    gs = gs.double()
                    if a.value and a.value != gs.cube_value * 2:
                        raise _err(a, game, f"doubles to {a.value}, the cube is at {gs.cube_value}")
            elif a.kind in ("take", "drop", "beaver"):
                out.decisions.append(Decision(game.number, a.player, a.kind, gs, line=a.line))
                gs = getattr(gs, a.kind)()
            else:
                raise _err(a, game, f"unknown action {a.kind!r}")
        except (GameError, IllegalPlayError, NotationError) as exc:
            raise _err(a, game, str(exc)) from None
    if not gs.is_over:
        last = actions[-1] if actions else None
        raise _err(last, game, "the game ends without a result (truncated file?)")
    out.end = gs
    return out


def _resign(gs: GameState, loser: int, level: int) -> GameState:
    """The game state after ``loser`` resigns ``level`` and the opponent accepts."""
    if gs.phase is not Phase.ROLL:
        raise GameError(f"a resignation while waiting for {gs.phase.value}")
    if gs.turn != loser:
        # the file does not say when; resign from the loser's own turn
        gs = replace(gs, turn=loser, position=gs.position.flip())
    return gs.resign(level).accept_resignation()


def replay_match(match: MatMatch, options: GameOptions | None = None) -> ReplayedMatch:
    """Every game of ``match`` replayed and checked; scores must follow from the results."""
    opts = options or GameOptions(jacoby=match.jacoby and match.match_length == 0)
    if not match.games:
        raise ReplayError("the file holds no game")
    names = match.games[0].names
    out = ReplayedMatch(names, match.match_length)
    previous: GameState | None = None
    for game in match.games:
        first = _first_player(game)
        try:
            if previous is None:
                start = GameState.new_game(opts, first_player=first, match_length=match.match_length,
                                           score=game.score)
            else:
                start = previous.next_game(first_player=first)
        except GameError as exc:
            raise _err(None, game, str(exc)) from None
        if start.score != tuple(game.score):
            raise _err(None, game, f"the score should be {start.score[0]}-{start.score[1]}, "
                       f"the file says {game.score[0]}-{game.score[1]}")
        rg = replay_game(game, start)
        out.games.append(rg)
        previous = rg.end
    return out
