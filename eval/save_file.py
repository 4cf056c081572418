"""Saved games of ``tabla play``: a game in progress as JSON, with the parts of a play typed
in mid-turn; a bad file raises :class:`SaveFileError` with a one-line reason."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from engine.dice import Roll
from engine.game import GameError, GameState, Phase
from engine.notation import IllegalPlayError
from engine.position import Position
from eval.board_text import HUMAN
from eval.match import Action, GameRecord
from eval.play_common import Judgement, PlayConfig
from eval.play_tree import Step
from eval.typed_turn import TypedTurn


SAVE_FORMAT = "tabla-play"
SAVE_VERSION = 1


class SaveFileError(ValueError):
    """A saved-game file that cannot be read or does not hold a valid game."""


# --------------------------------------------------------------------------- save files
def _action_to_dict(a: Action) -> dict[str, Any]:
    return {k: v for k, v in asdict(a).items() if v not in (None, (), 0) or k in ("player", "kind")}


def _action_from_dict(d: dict[str, Any]) -> Action:
    def tup(v):
        return None if v is None else tuple(int(x) for x in v)

    return Action(
        player=int(d["player"]),
        kind=str(d["kind"]),
        dice=tup(d.get("dice")),
        before=tup(d.get("before")),
        after=tup(d.get("after")),
        steps=tuple(tuple(int(x) for x in s) for s in d.get("steps", ())),
        cube=int(d.get("cube", 0)),
    )


def _record_to_dict(r: GameRecord) -> dict[str, Any]:
    d = {k: v for k, v in asdict(r).items() if k != "actions"}
    d["actions"] = [_action_to_dict(a) for a in r.actions]
    return d


def _record_from_dict(d: dict[str, Any]) -> GameRecord:
    fields = {k: v for k, v in d.items() if k != "actions"}
    fields["score"] = tuple(int(x) for x in fields["score"])
    rec = GameRecord(**fields)
    rec.actions = [_action_from_dict(a) for a in d.get("actions", [])]
    return rec


def snapshot(
    state: GameState,
    config: PlayConfig,
    *,
    dice: tuple[int, int] | None = None,
    rng: np.random.Generator | None = None,
    games: list[GameRecord] | None = None,
    current: GameRecord | None = None,
    judgements: list[Judgement] | None = None,
    move: int = 0,
    partial: Sequence[Sequence[Step]] = (),
) -> dict[str, Any]:
    """The JSON object of a saved game (``state`` must wait for a roll or a play).

    ``partial`` are the parts of the play the human has typed in mid-turn (each a list of
    ``(from, to, die)`` steps); they are restored on load, so undo works as before.
    """
    if state.phase is not Phase.ROLL:
        raise GameError("a game can be saved only while a player is to roll or play")
    if partial and (dice is None or state.turn != HUMAN):
        raise GameError("a partial play is saved only on the human's turn, after the roll")
    return {
        "format": SAVE_FORMAT,
        "version": SAVE_VERSION,
        "config": {"match_length": config.match_length, "jacoby": config.jacoby, "beavers": config.beavers},
        "state": {
            "position": list(state.position.board),
            "turn": state.turn,
            "cube_value": state.cube_value,
            "cube_owner": state.cube_owner,
            "score": list(state.score),
            "crawford": state.crawford,
            "post_crawford": state.post_crawford,
            "doubled": state.doubled,
        },
        "dice": list(dice) if dice is not None else None,
        "rng": rng.bit_generator.state if rng is not None else None,
        "games": [_record_to_dict(g) for g in games or []],
        "current": _record_to_dict(current) if current is not None else None,
        "judgements": [asdict(j) for j in judgements or []],
        "move": move,
        "partial": [[list(s) for s in part] for part in partial],
    }


@dataclass
class Loaded:
    """What a save file restores."""

    config: PlayConfig
    state: GameState
    dice: tuple[int, int] | None
    rng_state: dict | None
    games: list[GameRecord] = field(default_factory=list)
    current: GameRecord | None = None
    judgements: list[Judgement] = field(default_factory=list)
    move: int = 0
    partial: tuple[tuple[Step, ...], ...] = ()
    """The parts of the human's play typed before saving (validated against the roll)."""


def read_snapshot(data: Any, base: PlayConfig) -> Loaded:
    """Validate a saved-game object; :class:`SaveFileError` with a one-line reason."""
    try:
        if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
            raise SaveFileError("not a tabla saved game")
        if data.get("version") != SAVE_VERSION:
            raise SaveFileError(f"unsupported save version {data.get('version')!r}")
        c = data["config"]
        config = replace(base, match_length=int(c["match_length"]), jacoby=bool(c["jacoby"]), beavers=bool(c["beavers"]))
        if not 0 <= config.match_length <= 25:
            raise SaveFileError(f"match length {config.match_length} is out of range")
        s = data["state"]
        position = Position.from_array(int(x) for x in s["position"])
        if position.is_game_over():
            raise SaveFileError("the saved game is already over")
        owner = s["cube_owner"]
        score = tuple(int(x) for x in s["score"])
        if config.match_length and max(score) >= config.match_length:
            raise SaveFileError("the saved match is already over")
        state = GameState(
            position=position,
            turn=int(s["turn"]),
            cube_value=int(s["cube_value"]),
            cube_owner=None if owner is None else int(owner),
            match_length=config.match_length,
            score=score,
            crawford=bool(s["crawford"]),
            post_crawford=bool(s["post_crawford"]),
            options=config.options(),
            doubled=bool(s.get("doubled", False)),
        )
        if state.cube_value > 1 and state.cube_owner is None:
            raise SaveFileError("a turned cube must have an owner")
        state.cube_state()  # the engine's view must be consistent too
        dice = data.get("dice")
        if dice is not None:
            Roll.of(int(dice[0]), int(dice[1]))  # validates them
            dice = (int(dice[0]), int(dice[1]))
        games = [_record_from_dict(g) for g in data.get("games", [])]
        current = _record_from_dict(data["current"]) if data.get("current") else None
        judgements = [Judgement(**j) for j in data.get("judgements", [])]
        rng_state = data.get("rng")
        if rng_state is not None:
            np.random.default_rng().bit_generator.state = rng_state  # validates it
        partial: tuple[tuple[Step, ...], ...] = ()
        if data.get("partial"):
            if dice is None or state.turn != HUMAN:
                raise SaveFileError("a partial play is saved only on the player's turn, after the roll")
            try:
                typed = TypedTurn.replay(state.position, Roll.of(*dice), data["partial"])
            except IllegalPlayError as exc:
                raise SaveFileError(f"the saved partial play is not legal: {exc}") from None
            partial = typed.parts
        return Loaded(config, state, dice, rng_state, games, current, judgements, int(data.get("move", 0)), partial)
    except SaveFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SaveFileError(f"invalid saved game: {what}") from None


def load_file(path: str | Path, base: PlayConfig) -> Loaded:
    """Read and validate a saved game from ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SaveFileError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SaveFileError(f"{path} is not JSON ({exc.msg}, line {exc.lineno})") from None
    return read_snapshot(data, base)


