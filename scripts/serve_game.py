"""The board page's stateless requests: draw a position, type a play, drive a game.

``tabla serve`` answers these beside the engine protocol's commands (the worker runs
them, :mod:`scripts.serve_worker`). The page keeps no rules of its own:

* :func:`position_view` (``/position``): the checkers, pips, cube and score of any query
  (Position ID with an optional Match ID, or an XGID; read by :func:`engine.request.read_query`).
* :func:`turn_view` (``/turn``): the single-die moves typed so far in a turn, the board
  after each, the moves that may come next and the play they make once complete
  (:class:`eval.typed_turn.TypedTurn`).
* :func:`game_step` (``/game``): one action on a game (``new``, ``roll``, ``double``,
  ``take``, ``drop``, ``play``, ``next``) by :class:`engine.game.GameState`; the game
  travels as a JSON object (:func:`game_to_wire` / :func:`game_from_wire`) that the
  client sends back with its next action.

Dice are rolled here, server-side, from :func:`engine.dice.roll_stream`: roll ``k`` of
game ``g`` of a session with seed ``s`` is row ``k`` of the stream ``(s, g)``; row 0 is
the opening roll (two different dice: player 0's die first). The same seed replays the
same dice; the page picks the seed (at random unless given), so it keeps no secrets.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from engine.dice import STREAM_CHUNK, Roll, roll_stream
from engine.game import EndReason, GameError, GameOptions, GameState, Phase
from engine.ids import match_id, position_from_id, position_id, IdError
from engine.notation import apply_step, play_from_steps
from engine.position import GameResult, Position
from engine.request import QueryError, parse_dice, read_query
from eval.typed_turn import TypedTurn

ACTIONS = ("new", "roll", "double", "take", "drop", "play", "next")
MAX_SEED = (1 << 63) - 1
_PHASES = {"roll": Phase.ROLL, "doubled": Phase.DOUBLED, "over": Phase.OVER}
_RESULTS = {1: GameResult.SINGLE, 2: GameResult.GAMMON, 3: GameResult.BACKGAMMON}


# --------------------------------------------------------------------------- views
def board_view(position: Position) -> dict[str, Any]:
    """The 26 entries of ``position`` (the bottom player's view), off and pip counts."""
    return {"board": list(position.board), "off": [position.off, position.opp_off], "pips": list(position.pips())}


def position_view(req: Mapping[str, Any]) -> dict[str, Any]:
    """``/position``: the query's position seen by the player on roll, with its game state."""
    q = read_query(req, need_dice=False)
    s = q.state
    return {
        **board_view(q.position),
        "position_id": position_id(q.position),
        "dice": None if q.dice is None else [q.dice.high, q.dice.low],
        "cube_value": s.value, "cube_owner": s.owner.value, "match_length": s.match_length,
        "score": list(s.score), "crawford": s.crawford, "jacoby": s.jacoby, "beavers": s.beavers,
        "max_cube": s.max_cube,
    }


def _steps(value: Any, width: int) -> list[tuple[int, ...]]:
    """A list of at most four steps of ``width`` integers (``[from, to]`` or ``[from, to, die]``)."""
    shape = "[from, to, die]" if width == 3 else "[from, to]"
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > 4:
        raise QueryError(f"steps must be a list of at most four {shape} moves")
    out = []
    for s in value:
        if not (isinstance(s, list) and len(s) == width and all(type(v) is int for v in s)):
            raise QueryError(f"a step is {shape} with integer points, got {s!r}")
        out.append(tuple(s))
    return out


def _boards_after(position: Position, steps: list[tuple[int, ...]]) -> list[list[int]]:
    """The board (mover's view) after each step, by :func:`engine.notation.apply_step`."""
    b = list(position.board)
    frames = []
    for f, t, *_ in steps:
        apply_step(b, f, t)
        frames.append(list(b))
    return frames


def turn_view(req: Mapping[str, Any]) -> dict[str, Any]:
    """``/turn``: the moves typed so far (``steps``: ``[from, to, die]`` each, in the
    mover's numbering), checked as the beginning of a legal play of ``dice``."""
    q = read_query(req, need_dice=True)
    steps = _steps(req.get("steps"), 3)
    turn = TypedTurn.replay(q.position, q.dice, [[s] for s in steps])
    done = turn.complete
    complete = None
    if done is not None:
        complete = {"play": done.text, "steps": [[f, t] for f, t, _ in steps],
                    "position_id": position_id(done.result, after_play=True)}
    return {"boards": _boards_after(q.position, steps), "board": list(turn.board), "text": turn.text,
            "next": [list(s) for s in turn.next_steps()], "complete": complete,
            "remaining": list(turn.remaining)}


# --------------------------------------------------------------------------- game wire format
def _int(d: Mapping[str, Any], key: str, default: int | None = None, lo: int = 0, hi: int = MAX_SEED) -> int:
    v = d.get(key, default)
    if type(v) is not int or not lo <= v <= hi:
        raise GameError(f"game.{key} must be an integer {lo}-{hi}, got {v!r}")
    return v


def _bool(d: Mapping[str, Any], key: str, default: bool = False) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise GameError(f"game.{key} must be true or false, got {v!r}")
    return v


def game_to_wire(gs: GameState, dice: Roll | None, seed: int, game: int, rolls: int) -> dict[str, Any]:
    """The JSON object of a game between actions (see the module docstring)."""
    return {
        "position_id": position_id(gs.position), "turn": gs.turn,
        "dice": None if dice is None else [dice.high, dice.low],
        "cube_value": gs.cube_value, "cube_owner": gs.cube_owner,
        "match_length": gs.match_length, "score": list(gs.score),
        "crawford": gs.crawford, "post_crawford": gs.post_crawford, "jacoby": gs.options.jacoby,
        "phase": gs.phase.value, "doubled": gs.doubled, "opening": gs.opening,
        "winner": gs.winner, "points": gs.points,
        "result": None if gs.result is None else int(gs.result),
        "end_reason": None if gs.end_reason is None else gs.end_reason.value,
        "seed": seed, "game": game, "rolls": rolls,
    }


def game_from_wire(d: Any) -> tuple[GameState, Roll | None, int, int, int]:
    """``(state, dice, seed, game, rolls)`` of a game object; GameError when it is not one."""
    if not isinstance(d, dict):
        raise GameError("game must be the object of a previous /game reply")
    pid = d.get("position_id")
    if not isinstance(pid, str):
        raise GameError("game.position_id must be a Position ID")
    try:
        position = position_from_id(pid)
    except IdError as exc:
        raise GameError(str(exc)) from None
    phase = _PHASES.get(d.get("phase"))
    if phase is None:
        raise GameError(f"game.phase must be one of {', '.join(_PHASES)}, got {d.get('phase')!r}")
    owner = d.get("cube_owner")
    if owner not in (None, 0, 1) or isinstance(owner, bool):
        raise GameError(f"game.cube_owner must be null, 0 or 1, got {owner!r}")
    score = d.get("score", [0, 0])
    if not (isinstance(score, list) and len(score) == 2 and all(type(v) is int and v >= 0 for v in score)):
        raise GameError(f"game.score must be two scores [player 0, player 1], got {score!r}")
    dice = None if d.get("dice") is None else parse_dice(d["dice"])
    if dice is not None and phase is not Phase.ROLL:
        raise GameError("game.dice are given only while the player on roll plays them")
    over: dict[str, Any] = {}
    if phase is Phase.OVER:
        result = _RESULTS.get(d.get("result"))
        if result is None:
            raise GameError("a finished game needs game.result 1, 2 or 3")
        try:
            reason = EndReason(d.get("end_reason"))
        except ValueError:
            raise GameError("a finished game needs game.end_reason played or dropped") from None
        over = dict(winner=_int(d, "winner", hi=1), points=_int(d, "points", lo=1), result=result, end_reason=reason)
    gs = GameState(
        position=position, turn=_int(d, "turn", hi=1), cube_value=_int(d, "cube_value", 1, lo=1),
        cube_owner=owner, match_length=_int(d, "match_length", 0, hi=25), score=tuple(score),
        crawford=_bool(d, "crawford"), post_crawford=_bool(d, "post_crawford"),
        options=GameOptions(jacoby=_bool(d, "jacoby")), phase=phase, doubled=_bool(d, "doubled"),
        opening=_bool(d, "opening"), **over,
    )
    return gs, dice, _int(d, "seed"), _int(d, "game", 0), _int(d, "rolls", 0)


def _roll(seed: int, game: int, k: int) -> tuple[int, int]:
    """Roll ``k`` of game ``game`` (row 0: the opening roll, player 0's die first)."""
    row = roll_stream(seed, game, k // STREAM_CHUNK)[k % STREAM_CHUNK]
    return int(row[0]), int(row[1])


def _opening(gs_next, seed: int, game: int) -> tuple[GameState, Roll]:
    a, b = _roll(seed, game, 0)
    return gs_next(first_player=0 if a > b else 1), Roll.of(a, b)


def game_view(gs: GameState, dice: Roll | None) -> dict[str, Any]:
    """What the page draws: the board from player 0's side, who acts, what he may do, and the
    protocol fields of the player on roll for ``/best`` and ``/cube`` (``query``)."""
    bottom = gs.position if gs.turn == 0 else gs.position.flip()
    s = gs.cube_state()
    query = {"position_id": position_id(gs.position), "cube_value": s.value, "cube_owner": s.owner.value,
             "match_length": s.match_length, "score": list(s.score), "crawford": s.crawford, "jacoby": s.jacoby}
    view = {
        **board_view(bottom), "player_to_act": gs.player_to_act,
        "can_double": dice is None and gs.can_double(), "match_id": match_id(replace(
            gs.match_info(), dice=(0, 0) if dice is None else (dice.high, dice.low))),
        "query": query,
    }
    if gs.is_over:
        view["final_score"] = list(gs.final_score())
        view["match_winner"] = gs.match_winner()
    return view


def game_step(req: Mapping[str, Any]) -> dict[str, Any]:
    """``/game``: apply ``action`` to ``game`` (not needed for ``new``); see the module docstring."""
    action = req.get("action")
    if action not in ACTIONS:
        raise GameError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    extra: dict[str, Any] = {}
    if action == "new":
        seed = _int(req, "seed")
        length = _int(req, "match_length", 0, hi=25)
        opts = GameOptions(jacoby=_bool(req, "jacoby") and length == 0)
        gs, dice = _opening(lambda first_player: GameState.new_game(opts, first_player=first_player, match_length=length),
                            seed, 0)
        game, rolls = 0, 1
    else:
        gs, dice, seed, game, rolls = game_from_wire(req.get("game"))
        if action == "roll":
            if gs.phase is not Phase.ROLL or dice is not None:
                raise GameError("the dice are rolled by the player on roll, once per turn")
            dice = Roll.of(*_roll(seed, game, rolls))
            rolls += 1
        elif action in ("double", "take", "drop"):
            if dice is not None:
                raise GameError("the cube is turned before the roll")
            gs = getattr(gs, action)()
        elif action == "play":
            if dice is None:
                raise GameError("roll the dice first")
            steps = _steps(req.get("steps"), 2)
            frames_from = gs.position
            play = play_from_steps(gs.position, dice, steps)
            gs = gs.play(play, dice)
            extra = {"played": play.text, "played_steps": [list(s) for s in steps],
                     "frames": [_bottom_board(b, gs) for b in _boards_after(frames_from, steps)]}
            dice = None
        else:  # next
            gs, dice = _opening(gs.next_game, seed, game + 1)
            game, rolls = game + 1, 1
    return {"game": game_to_wire(gs, dice, seed, game, rolls), "view": game_view(gs, dice), **extra}


def _bottom_board(board: list[int], after: GameState) -> list[int]:
    """A board of the mover (who just played) from player 0's side."""
    mover = after.turn if after.is_over else 1 - after.turn
    return board if mover == 0 else list(Position.trusted(tuple(board)).flip().board)
