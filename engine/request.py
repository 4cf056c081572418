"""One request path: the fields of a query, parsed and checked once.

The command line (``tabla hint`` / ``eval`` / ``cube`` / ``legal``), the engine protocol
and any other front end read a query the same way: a position (GNU Backgammon Position ID,
optionally with a Match ID, or an XGID), the dice, the game-state fields of
:data:`STATE_FIELDS`, and for the protocol ``ply`` and ``top``. Every bad value raises
:class:`QueryError` (a ``ValueError``) with a one-line reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from engine.cube import MONEY, CubeOwner, CubeState
from engine.dice import Roll
from engine.ids import IdError, match_info_from_id, position_from_id, xgid_from_text
from engine.position import Position
from engine.search import MAX_PLY_EVAL, MAX_PLY_PLAY

DEFAULT_MAX_CUBE = 64
STATE_FIELDS = ("cube_value", "cube_owner", "match_length", "score", "crawford", "jacoby", "beavers", "max_cube")
"""The game-state fields of a query (PROTOCOL.md), all seen from the player on roll."""

PLY_RANGES = {"best": (1, MAX_PLY_PLAY), "eval": (0, MAX_PLY_EVAL), "cube": (0, MAX_PLY_EVAL)}
"""Valid plies per command (see :mod:`engine.search` for what a ply is)."""

DEFAULT_PLY = {"best": 1, "eval": 0, "cube": 0}
"""The default ply per command, fixed by PROTOCOL.md (``best`` 1; ``eval`` and ``cube``
0, before the roll). ``tabla eval`` / ``cube`` (and ``hint`` without dice) use the same
defaults for positions; ``tabla hint`` ranks plays at 2 ply unless told."""

ECHO_LIMIT = 80
"""Characters of a user's input that an error message repeats (then ``…``)."""
MESSAGE_LIMIT = 300
"""Characters of an error message at most (then ``…``)."""


class QueryError(ValueError):
    """A request that cannot be answered: bad position, dice, state or ply."""


def shorten_echoes(message: str, limit: int = ECHO_LIMIT) -> str:
    """``message`` with every run of more than ``limit`` non-blank characters (an echoed
    input: a 5 MB Position ID, a long string) cut to ``limit`` characters and ``…``, and
    the whole cut to :data:`MESSAGE_LIMIT`."""
    out = re.sub(r"\S{%d,}" % (limit + 1), lambda m: m.group()[:limit] + "…", message)
    return out if len(out) <= MESSAGE_LIMIT else out[:MESSAGE_LIMIT] + "…"


_B64 = r"[A-Za-z0-9+/]"
_POSITION_ID = re.compile(rf"{_B64}{{14}}")
_POSITION_AND_MATCH_ID = re.compile(rf"({_B64}{{14}}):({_B64}{{12}})")


def id_fields(text: str) -> dict[str, str]:
    """The query fields of one ID given by its form: ``XGID=...`` (or a bare XGID: ten
    fields separated by ``:``) → ``xgid``; ``PosID:MatchID`` as gnubg writes them →
    ``position_id`` and ``match_id``; a 14-character Position ID → ``position_id``."""
    body = text.strip()
    if body.upper().startswith("XGID=") or body.count(":") == 9:
        return {"xgid": body}
    m = _POSITION_AND_MATCH_ID.fullmatch(body)
    if m:
        return {"position_id": m.group(1), "match_id": m.group(2)}
    if _POSITION_ID.fullmatch(body):
        return {"position_id": body}
    raise QueryError(f"cannot tell which kind of ID {body!r} is: give a Position ID (14 characters), "
                     f"PositionID:MatchID or XGID=...")


# --------------------------------------------------------------------------- queries
@dataclass(frozen=True, slots=True)
class Query:
    """A position with the player on roll, its cube state and (optionally) the dice."""

    position: Position
    state: CubeState = CubeState()
    dice: Roll | None = None


_ROLLS = {(a, b): Roll.of(a, b) for a in range(1, 7) for b in range(1, 7)}


def parse_dice(dice: Any) -> Roll:
    """``[3, 1]``, ``(3, 1)``, ``"31"`` or ``"3-1"`` → :class:`Roll`; QueryError otherwise."""
    if isinstance(dice, (list, tuple)) and len(dice) == 2:
        roll = _ROLLS.get((dice[0], dice[1])) if all(type(d) is int for d in dice) else None
        if roll is not None:
            return roll
    try:
        if isinstance(dice, str):
            return Roll.parse(dice)
        if isinstance(dice, (list, tuple)) and len(dice) == 2 and all(
            isinstance(d, int) and not isinstance(d, bool) for d in dice
        ):
            return Roll.of(dice[0], dice[1])
    except ValueError as exc:
        raise QueryError(str(exc)) from None
    raise QueryError(f"dice must be two numbers 1-6 like [3, 1], got {dice!r}")


def _id_state(info: Any, **more: Any) -> dict[str, Any]:
    """The game-state fields an XGID or a Match ID gives, seen by the player to act."""
    return dict(cube_value=info.cube_value, cube_owner=info.cube_owner_relative(), match_length=info.match_length,
                score=info.score_relative(), crawford=info.crawford, **more)


def resolve_query(
    position_id: str | None = None,
    xgid: str | None = None,
    match_id: str | None = None,
    dice: Any = None,
    **fields: Any,
) -> Query:
    """Build a :class:`Query` the way the protocol reads a request.

    Exactly one of ``position_id`` / ``xgid``. An XGID's own cube, score, turn and dice
    apply (its maximum cube is capped at 64); a Match ID gives cube and score; explicit
    ``fields`` (``cube_value``, ``cube_owner``, ``match_length``, ``score``, ``crawford``,
    ``jacoby``, ``beavers``, ``max_cube``) override both.
    """
    if (position_id is None) == (xgid is None):
        raise QueryError("give exactly one of position_id and xgid")
    unknown = set(fields) - set(STATE_FIELDS)
    if unknown:
        raise QueryError(f"unknown game-state field {sorted(unknown)[0]!r}")
    base: dict[str, Any] = {}
    roll: Roll | None = None
    try:
        if xgid is not None:
            if match_id is not None:
                raise QueryError("give a Match ID with a Position ID, not with an XGID")
            x = xgid_from_text(xgid)
            position = x.position
            base = _id_state(x, jacoby=x.jacoby, beavers=x.beavers, max_cube=min(x.max_cube, DEFAULT_MAX_CUBE))
            if x.dice is not None:
                roll = Roll.of(*x.dice)
        else:
            if not isinstance(position_id, str):
                raise QueryError("position_id must be a string")
            position = position_from_id(position_id)
            if match_id is not None:
                if not isinstance(match_id, str):
                    raise QueryError("match_id must be a string")
                m = match_info_from_id(match_id)
                base = _id_state(m, jacoby=m.jacoby if m.is_money else False)
                if m.dice != (0, 0):
                    roll = Roll.of(*m.dice)
    except IdError as exc:
        raise QueryError(str(exc)) from None
    base.update(fields)
    for key in ("cube_value", "match_length", "max_cube"):
        if key in base and not (isinstance(base[key], int) and not isinstance(base[key], bool)):
            raise QueryError(f"{key} must be an integer, got {base[key]!r}")
    for key in ("crawford", "jacoby", "beavers"):
        if key in base and not isinstance(base[key], bool):
            raise QueryError(f"{key} must be true or false, got {base[key]!r}")
    if "score" in base:
        sc = base["score"]
        if not (isinstance(sc, (list, tuple)) and len(sc) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in sc)):
            raise QueryError(f"score must be [player_on_roll, opponent], got {sc!r}")
        base["score"] = tuple(sc)
    if "cube_owner" in base and not isinstance(base["cube_owner"], (str, CubeOwner)):
        raise QueryError(f"cube_owner must be centre, player or opponent, got {base['cube_owner']!r}")
    names = {"cube_value": "value", "cube_owner": "owner"}
    state = CubeState(**{names.get(k, k): v for k, v in base.items()}) if base else MONEY  # CubeStateError: a ValueError
    if dice is not None:
        roll = parse_dice(dice)
    return Query(position=position, state=state, dice=roll)


def read_query(req: Mapping[str, Any], need_dice: bool) -> Query:
    """The query of a request object (protocol / HTTP field names); the position must be
    a live game, and with ``need_dice`` the dice must be given."""
    fields = {k: req[k] for k in STATE_FIELDS if k in req}
    pid = req.get("position_id")
    if not fields and type(pid) is str and "xgid" not in req and "match_id" not in req:
        # the common request: a Position ID, maybe dice, money game
        try:
            position = position_from_id(pid)
        except IdError as exc:
            raise QueryError(str(exc)) from None
        dice = req.get("dice")
        q = Query(position, MONEY, None if dice is None else parse_dice(dice))
    else:
        q = resolve_query(
            position_id=pid,
            xgid=req.get("xgid"),
            match_id=req.get("match_id"),
            dice=req.get("dice"),
            **fields,
        )
    if need_dice and q.dice is None:
        raise QueryError("the request needs \"dice\", e.g. [3, 1]")
    if q.position.is_game_over():
        raise QueryError("the game in this position is already over")
    return q


def read_ply(req: Mapping[str, Any], command: str) -> int:
    """The request's ``ply`` for ``command`` (``best``, ``eval``, ``cube``), its default
    when absent; an integer in :data:`PLY_RANGES`."""
    lo, hi = PLY_RANGES[command]
    ply = req.get("ply", DEFAULT_PLY[command])
    if not isinstance(ply, int) or isinstance(ply, bool) or not lo <= ply <= hi:
        raise QueryError(f"ply must be an integer {lo}-{hi} for {command}, got {ply!r}")
    return ply


def read_top(req: Mapping[str, Any]) -> int | None:
    """The request's ``top`` (None when absent); a positive integer."""
    top = req.get("top")
    if top is not None and (type(top) is not int or top < 1):
        raise QueryError(f"top must be a positive integer, got {top!r}")
    return top
