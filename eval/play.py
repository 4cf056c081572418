"""``tabla play``: play money games or a match against Tabla in the terminal.

``tabla play [--match 7 | --money] [--ply 2] [--model PATH|heuristic] [--seed S] [--jacoby]
[--beavers] [--home left|right] [--load FILE]``

The human is ``X`` (player 0) and Tabla is ``O`` (player 1); the board is drawn from the
human's side (:mod:`eval.board_text`). Input is read a line at a time from standard input,
so a terminal, a pipe and a pexpect script all work. The prompts:

* ``you> `` before your roll: Enter (or ``roll``) rolls, ``double`` offers the cube,
  ``resign [single|gammon|backgammon]`` offers to resign.
* ``move 5-4> `` after the roll: a play in standard notation (``8/5 6/5``, ``bar/22``,
  ``6/off``, ``13/7*``, ``6/off(2)``), whole or in parts (``8/5``, then ``6/5``). Each
  part must begin a legal play (:class:`TypedTurn`); the board is redrawn with it and the
  dice still to play are shown; ``undo`` takes back the last part, down to the start of
  the turn. An illegal or malformed play or part is refused with the reason; ``legal``
  lists the legal plays (those starting with the typed part). A roll that cannot be
  played is announced and passes.
* ``confirm> `` once the typed parts make a whole play: it is shown on the board; Enter
  confirms it ("the move counts once the dice are picked up"), ``undo`` takes back its
  last part. A forced play (the roll's only legal play) goes straight to ``confirm> ``,
  where Enter plays it.
* ``take, drop or beaver> `` when Tabla doubles.
* ``next game> `` between games and ``export> `` at the very end (``export FILE`` writes
  the games as a Jellyfish ``.mat`` file).

Everywhere: ``hint`` (Tabla's top plays, or its cube decision, with equities), ``eval``,
``pip``, ``board``, ``save FILE`` / ``load FILE`` (a game in progress as JSON, with the
parts of a play typed in mid-turn; a bad file is refused in one line and the game goes on), ``export FILE``, ``help``, ``quit``. End of
input and Ctrl-C end the session politely.

Tabla plays at ``--ply`` (see :mod:`engine.search`), decides the cube at ``ply - 1``
before the roll, accepts a resignation when it is worth at least what Tabla expects from
playing on, and judges every decision of the human at the same depths: at the end a
summary lists the equity lost per decision (per cube value in money play, match-winning
chances in a match).
"""
from __future__ import annotations

import json
import logging
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from itertools import permutations
from typing import Any, Sequence, TextIO

import numpy as np

from engine.api import Engine
from engine.dice import Roll, opening_roll
from engine.evaluator import PROB_NAMES
from engine.game import EndReason, GameError, GameOptions, GameState, NoDouble, Phase
from engine.ids import position_id
from engine.met import default_met
from engine.notation import (
    AmbiguousPlayError,
    IllegalPlayError,
    NotationError,
    Play,
    apply_step,
    checker_moves,
    format_moves,
    format_play,
    legal_plays,
    parse_play,
    play_from_steps,
    point_name,
)
from engine.notation import parse_chains
from engine.position import BAR, GameResult, Position, PositionError
from eval.board_text import ENGINE, HUMAN, BoardView, render_board
from eval.mat import format_mat
from eval.match import Action, GameRecord, MatchRecord

log = logging.getLogger(__name__)

SAVE_FORMAT = "tabla-play"
SAVE_VERSION = 1
ERROR_THRESHOLD = 0.001
"""A decision that loses more than this (equity per cube, or MWC) counts as an error."""

HELP = """Commands:
  roll (or Enter)   roll the dice (before your roll)
  double            offer the cube (before your roll)
  8/5 6/5           a play in standard notation after rolling: bar/22, 6/off, 13/7*, 8/4(2)
  8/5  then  6/5    ...or the play in parts: each part is checked and shown on the board
  undo              take back the last part you typed (again and again, to the start of
                    the turn); at confirm> it takes back the last part of the play
  Enter             at confirm>: the play counts ("once the dice are picked up")
                    A forced play (the roll's only legal play) is shown and played when you
                    press Enter at confirm>.
  legal             list the legal plays of your roll (those starting with what you typed)
  take / drop / beaver   answer a double
  resign [single|gammon|backgammon]   offer to resign (on your turn)
  hint              Tabla's best plays or cube decision, with equities
  eval              Tabla's evaluation of the position, from your side
  pip               pip counts
  board             show the board again
  save FILE / load FILE   save or load the game in progress (JSON); a save in mid-turn
                    keeps the moves you have typed, and load brings them back
  export FILE       write the finished games as a .mat file
  quit              end the session"""

_RESIGN_LEVELS = {"single": 1, "s": 1, "1": 1, "": 1, "gammon": 2, "g": 2, "2": 2, "backgammon": 3, "b": 3, "bg": 3, "3": 3}
_RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class SessionEnd(Exception):
    """The player ended the session (``quit`` or end of input)."""


class _Reloaded(Exception):
    """A saved game replaced the one in progress: restart the turn loop."""


class SaveFileError(ValueError):
    """A saved-game file that cannot be read or does not hold a valid game."""


@dataclass(frozen=True, slots=True)
class PlayConfig:
    """Settings of a session (the CLI options)."""

    match_length: int = 0
    """0 for money games, else the match length."""
    jacoby: bool = False
    beavers: bool = False
    ply: int = 2
    """Depth of Tabla's checker play; cube decisions use ``ply - 1``."""
    home: str = "right"
    names: tuple[str, str] = ("you", "tabla")

    @property
    def cube_ply(self) -> int:
        return max(0, self.ply - 1)

    def options(self) -> GameOptions:
        money = self.match_length == 0
        return GameOptions(jacoby=self.jacoby and money, beavers=self.beavers and money)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One decision of the human, as Tabla judged it."""

    game: int
    move: int
    kind: str
    """``play``, ``cube`` (double or not) or ``response`` (take / drop / beaver)."""
    situation: str
    chosen: str
    best: str
    loss: float
    """Equity (per cube value) or MWC given away; 0 for the best decision."""


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


# --------------------------------------------------------------------------- helpers
def _why_no_double(gs: GameState) -> str:
    """Why the player on roll may not double now (:meth:`GameState.no_double_reason`)."""
    reason = gs.no_double_reason()
    if reason is NoDouble.CRAWFORD:
        return "no doubling in the Crawford game"
    if reason is NoDouble.OPPONENT_OWNS:
        return "tabla owns the cube" if gs.turn == HUMAN else "you own the cube"
    if reason is NoDouble.MAXIMUM:
        return f"the cube is at its maximum ({gs.options.max_cube})"
    return "the cube is not available now"


def _split(line: str) -> tuple[str, str]:
    head, _, rest = line.strip().partition(" ")
    return head.lower(), rest.strip()


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


# --------------------------------------------------------------------------- plays typed in parts
Step = tuple[int, int, int]
"""One die of a typed play: ``(from, to, die)``; from 25 = bar, to 0 = off."""

_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


def _single_step(board: Sequence[int], p: int, d: int) -> tuple[int, str]:
    """Where die ``d`` takes the checker on ``p`` (``-1`` when it cannot), and why not.

    The rules of :mod:`engine.movegen` for one die: the bar first, blocked points, and
    bearing off (all 15 home; from the die's own point, or from the highest point when
    the die is higher than every occupied point).
    """
    name = point_name(p)
    if board[p] <= 0:
        return -1, f"there is no checker on {name} to move"
    if p != BAR and board[BAR] > 0:
        many = board[BAR] > 1
        return -1, f"the checker{'s' if many else ''} on the bar must enter first"
    dest = p - d
    if dest >= 1:
        if board[dest] < -1:
            return -1, f"point {dest} is blocked"
        return dest, ""
    if any(board[q] > 0 for q in range(7, 26)):
        return -1, "checkers can be borne off only when all 15 are in the home board"
    if dest == 0 or not any(board[q] > 0 for q in range(p + 1, 7)):
        return 0, ""
    return -1, f"a {d} bears off from {p} only when no checker is on a higher point"


def _moved(board: tuple[int, ...], p: int, dest: int) -> tuple[int, ...]:
    b = list(board)
    apply_step(b, p, dest)
    return tuple(b)


def _without(dice: tuple[int, ...], used: Sequence[int]) -> tuple[int, ...]:
    rest = list(dice)
    for d in used:
        rest.remove(d)
    return tuple(rest)


def _reachable(board: tuple[int, ...], dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Every board reachable by playing any number of ``dice`` one at a time, in any order."""
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    out: set[tuple[int, ...]] = set()
    todo = [(board, tuple(sorted(dice)))]
    while todo:
        b, rest = todo.pop()
        if (b, rest) in seen:
            continue
        seen.add((b, rest))
        out.add(b)
        for d in set(rest):
            after = _without(rest, (d,))
            for p in range(25, 0, -1):
                dest, _ = _single_step(b, p, d)
                if dest >= 0:
                    todo.append((_moved(b, p, dest), after))
    return out


def _max_dice(board: tuple[int, ...], dice: tuple[int, ...]) -> int:
    """How many of ``dice`` can still be played from ``board``."""
    best = 0
    for d in set(dice):
        for p in range(25, 0, -1):
            dest, _ = _single_step(board, p, d)
            if dest >= 0:
                best = max(best, 1 + _max_dice(_moved(board, p, dest), _without(dice, (d,))))
                if best == len(dice):
                    return best
    return best


def _dice_words(dice: Sequence[int]) -> str:
    """``the 1``, ``the 6 and the 1``, ``three 4s``."""
    if len(dice) == 1:
        return f"the {dice[0]}"
    if len(set(dice)) == 1:
        return f"{_COUNT_WORDS[len(dice)]} {dice[0]}s"
    return " and ".join(f"the {d}" for d in sorted(dice, reverse=True))


def _dice_sequences(dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Every ordered choice of one or more of ``dice``."""
    return {seq for k in range(1, len(dice) + 1) for seq in permutations(dice, k)}


@dataclass(frozen=True, slots=True)
class TypedTurn:
    """The checker moves typed so far in one turn, each typed part a prefix step of a legal play.

    ``parts`` are the lines the player typed, each as its :data:`Step` s; every step is a
    legal single-die move and the steps so far lead to at least one legal play of ``roll``
    (:func:`engine.notation.legal_plays`). :meth:`add` checks a new part, :meth:`undo`
    takes back the last one, :attr:`complete` is the legal play once the parts make one.
    """

    position: Position
    roll: Roll
    legal: tuple[Play, ...] = field(compare=False, repr=False)
    parts: tuple[tuple[Step, ...], ...] = ()

    @classmethod
    def start(cls, position: Position, roll: Roll) -> "TypedTurn":
        return cls(position, roll, tuple(legal_plays(position, roll)))

    @classmethod
    def replay(cls, position: Position, roll: Roll, parts: Sequence[Sequence[Sequence[int]]]) -> "TypedTurn":
        """The turn with ``parts`` (``[[from, to, die], ...]`` each) typed; IllegalPlayError if
        they are not a legal beginning of a play."""
        turn = cls.start(position, roll)
        for part in parts:
            steps = tuple((int(f), int(t), int(d)) for f, t, d in part)
            if not steps:
                raise IllegalPlayError("an empty part")
            turn = turn._checked(steps, format_moves(checker_moves(turn.current, [s[:2] for s in steps])))
        return turn

    # ------------------------------------------------------------- views
    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(s for part in self.parts for s in part)

    @property
    def board(self) -> tuple[int, ...]:
        b = self.position.board
        for f, t, _ in self.steps:
            b = _moved(b, f, t)
        return b

    @property
    def current(self) -> Position:
        """The position with the typed moves made (still the mover's view)."""
        return Position(self.board)

    @property
    def remaining(self) -> tuple[int, ...]:
        """The dice still to play, highest first."""
        return tuple(sorted(_without(self.roll.dice(), [d for _, _, d in self.steps]), reverse=True))

    @property
    def text(self) -> str:
        """The typed moves in standard notation (``""`` when none)."""
        return format_play(self.position, [s[:2] for s in self.steps])

    def part_text(self, i: int = -1) -> str:
        """Notation of one typed part (the last by default)."""
        before = TypedTurn(self.position, self.roll, self.legal, self.parts[:i % len(self.parts)])
        return format_play(before.current, [s[:2] for s in self.parts[i]])

    @property
    def complete(self) -> Play | None:
        """The legal play the typed moves make, or None while more must be played."""
        board = self.board
        return next((p for p in self.legal if p.result.board == board), None)

    def continuations(self) -> list[Play]:
        """The legal plays that begin with the typed moves."""
        reach = _reachable(self.board, self.remaining)
        return [p for p in self.legal if p.result.board in reach]

    # ------------------------------------------------------------- changes
    def undo(self) -> "TypedTurn":
        """The turn without its last typed part."""
        return TypedTurn(self.position, self.roll, self.legal, self.parts[:-1])

    def add(self, text: str) -> "TypedTurn":
        """The turn with the part ``text`` (one or more checker moves) typed after the others.

        Raises :class:`NotationError` for text that is not notation, :class:`IllegalPlayError`
        (with the reason) when no legal play begins with the moves typed so far and these,
        and :class:`AmbiguousPlayError` when the text reads as different positions.
        """
        chains = parse_chains(text)
        if not chains:
            raise NotationError("type one or more checker moves, e.g. 8/5")
        shown = " ".join(text.split())
        board0 = self.board
        rest0 = self.remaining
        if not rest0:
            raise IllegalPlayError("all the dice are played")
        found: dict[tuple[int, ...], tuple[Step, ...]] = {}
        failures: list[tuple[int, str]] = []

        def segment_ways(b, rest, a, z, star) -> list[tuple[tuple[int, ...], tuple[Step, ...]]]:
            ways = []
            fitting = [seq for seq in _dice_sequences(rest)
                       if (sum(seq) == a - z if z else sum(seq[:-1]) < a <= sum(seq))]
            if not fitting:
                failures.append((0, f"{point_name(a)}/{point_name(z)} does not fit {_dice_words(rest)}"))
            for seq in fitting:
                pos, bb, steps, ok = a, b, [], True
                for n, d in enumerate(seq):
                    dest, why = _single_step(bb, pos, d)
                    if dest < 0 or (dest == 0 and n < len(seq) - 1):
                        if why:
                            failures.append((len(steps) + 1, why))
                        ok = False
                        break
                    steps.append((pos, dest, d))
                    bb = _moved(bb, pos, dest)
                    pos = dest
                if not ok or pos != z:
                    continue
                if star and b[z] != -1:
                    failures.append((len(steps) + 1, f"there is no blot to hit on {z}"))
                    continue
                ways.append((bb, tuple(steps)))
            return ways

        def rec(segs, k, b, rest, steps) -> None:
            if k == len(segs):
                key = (b, tuple(sorted(_without(self.roll.dice(), [d for *_, d in self.steps + steps]))))
                prev = found.get(key)
                if prev is None or sum(d for *_, d in steps) < sum(d for *_, d in prev):
                    found[key] = steps
                return
            a, z, star = segs[k]
            for bb, st in segment_ways(b, rest, a, z, star):
                rec(segs, k + 1, bb, _without(rest, [d for *_, d in st]), steps + st)

        for order in dict.fromkeys(permutations(range(len(chains)))):
            segs = [(a, z, star) for i in order
                    for (a, _), (z, star) in zip(chains[i], chains[i][1:])]
            rec(segs, 0, board0, rest0, ())
            if found:
                break
        done = self.text
        head = f"after {done} {_dice_words(rest0)} must still be played, but " if done else ""
        if not found:
            why = max(failures)[1] if failures else f"{shown} does not fit {_dice_words(rest0)}"
            if done:
                raise IllegalPlayError(f"{head}no legal play starts with {done} {shown} ({why})")
            raise IllegalPlayError(f"{shown}: {why}")
        good = {}
        for (board, _), steps in found.items():
            turn = TypedTurn(self.position, self.roll, self.legal, self.parts + (steps,))
            if turn.complete is not None or turn.continuations():
                best = good.get(board)
                if best is None or sum(d for *_, d in steps) < sum(d for *_, d in best.parts[-1]):
                    good[board] = turn
        if not good:
            (board, _), steps = next(iter(found.items()))
            rest = _without(rest0, [d for *_, d in steps])
            used = len(self.steps) + len(steps)
            most = max(len(p.moves) for p in self.legal)
            if used + _max_dice(board, rest) < most:
                why = (f"then {_dice_words(rest)} cannot be played, and a play must use as many dice as it can"
                       f" ({most} here)")
            elif most == 1 and not self.roll.is_double:
                why = f"only one die can be played, and then the larger ({self.roll.high}) must be played"
            else:
                why = "it does not lead to a legal play"
            typed = f"{done} {shown}" if done else shown
            raise IllegalPlayError(f"{head}no legal play starts with {typed} ({why})")
        if len(good) > 1:
            options = " or ".join(t.part_text() for t in good.values())
            raise AmbiguousPlayError(f"{shown!r} could mean {options}; write the intermediate points")
        return next(iter(good.values()))

    def _checked(self, steps: tuple[Step, ...], shown: str) -> "TypedTurn":
        """The turn with ``steps`` added, each checked as a legal die move leading to a legal play."""
        rest = list(self.remaining)
        b = self.board
        for f, t, d in steps:
            dest, why = _single_step(b, f, d)
            if d not in rest or dest != t:
                raise IllegalPlayError(f"{shown}: {why or f'{point_name(f)}/{point_name(t)} is not a move of a {d}'}")
            rest.remove(d)
            b = _moved(b, f, t)
        turn = TypedTurn(self.position, self.roll, self.legal, self.parts + (steps,))
        if turn.complete is None and not turn.continuations():
            raise IllegalPlayError(f"no legal play starts with {turn.text}")
        return turn

    @classmethod
    def of_play(cls, position: Position, roll: Roll, play: Play) -> "TypedTurn":
        """The turn with a whole legal ``play`` typed as one part."""
        turn = cls.start(position, roll)
        rest = list(roll.dice())
        steps = []
        b = position.board
        for m in play.moves:
            f, t = m.from_point, m.to_point
            # a bear-off uses the exact die when it can, else the smallest larger one that bears off
            d = next(d for d in sorted(rest) if (f - d == t if t else f - d <= 0 and _single_step(b, f, d)[0] == 0))
            rest.remove(d)
            steps.append((f, t, d))
            b = _moved(b, f, t)
        return TypedTurn(position, roll, turn.legal, (tuple(steps),))


# --------------------------------------------------------------------------- the session
class PlaySession:
    """One sitting at the board: money games or a match against the engine."""

    def __init__(
        self,
        engine: Engine,
        config: PlayConfig,
        rng: np.random.Generator,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
    ) -> None:
        self.engine = engine
        self.config = config
        self.rng = rng
        self.inp = stdin
        self.out = stdout
        self.state: GameState | None = None
        self.dice: tuple[int, int] | None = None
        self.games: list[GameRecord] = []
        self.record: GameRecord | None = None
        self.judgements: list[Judgement] = []
        self.move = 0
        self._ranking_key = None
        self._ranking = None
        self.typed: TypedTurn | None = None
        """The human's turn in progress: the parts of the play typed so far."""
        self._restored_parts: tuple = ()

    # ----------------------------------------------------------------- I/O
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            raise SessionEnd("end of input")
        return line.strip()

    @property
    def money(self) -> bool:
        return self.config.match_length == 0

    def view(self, position: Position | None = None, dice: tuple[int, int] | None = None) -> BoardView:
        gs = self.state
        pos = position if position is not None else (gs.position if gs.turn == HUMAN else gs.position.flip())
        return BoardView(
            position=pos,
            names=self.config.names,
            cube_value=gs.cube_value,
            cube_owner=gs.cube_owner,
            match_length=gs.match_length,
            score=gs.score,
            crawford=gs.crawford,
            on_roll=None if gs.is_over else gs.turn,
            dice=dice if dice is not None else self.dice,
            home=self.config.home,
            note=f"Position ID {position_id(gs.position)}" if position is None and not gs.is_over else "",
        )

    def show_board(self, position: Position | None = None) -> None:
        self.say(render_board(self.view(position)))

    # ----------------------------------------------------------------- session
    def load(self, loaded: Loaded) -> None:
        """Replace the session's game by a loaded one."""
        self.config = replace(self.config, match_length=loaded.config.match_length,
                              jacoby=loaded.config.jacoby, beavers=loaded.config.beavers)
        self.state = loaded.state
        self.dice = loaded.dice
        if loaded.rng_state is not None:
            self.rng.bit_generator.state = loaded.rng_state
        self.games = loaded.games
        gs = loaded.state
        self.record = loaded.current or GameRecord(number=len(self.games) + 1, score=gs.score,
                                                   match_length=gs.match_length, crawford=gs.crawford, first=gs.turn)
        self.judgements = loaded.judgements
        self.move = loaded.move
        self._ranking_key = None
        self.typed = None
        self._restored_parts = loaded.partial

    def run(self) -> int:
        """Play until the match ends or the player stops; returns the exit status."""
        try:
            self.say(self._intro())
            if self.state is None:
                self._start_game()
            while True:
                try:
                    self._play_game()
                except _Reloaded:
                    continue
                self._end_of_game()
                if not self._another_game():
                    break
                self._start_game()
            self.say(self.summary())
            self._final_prompt()
        except SessionEnd as end:
            self.say(f"\n({end}) Goodbye.")
            if self.judgements:
                self.say(self.summary())
        return 0

    def _intro(self) -> str:
        c = self.config
        if c.match_length:
            kind = f"a {c.match_length}-point match"
        else:
            opts = [o for o, on in (("Jacoby rule", c.jacoby), ("beavers", c.beavers)) if on]
            kind = "money games" + (f" ({', '.join(opts)})" if opts else "")
        return (f"Tabla backgammon: {kind}. You are X and play from your 24-point to your 1-point; "
                f"tabla is O. Type help for the commands.")

    def _start_game(self) -> None:
        roll, _ties, first = opening_roll(self.rng)
        if self.state is None:
            self.state = GameState.new_game(self.config.options(), first_player=first, match_length=self.config.match_length)
        else:
            self.state = self.state.next_game(first_player=first)
        gs = self.state
        self.record = GameRecord(number=len(self.games) + 1, score=gs.score, match_length=gs.match_length,
                                 crawford=gs.crawford, first=first)
        self.move = 0
        mine, theirs = (roll.high, roll.low) if first == HUMAN else (roll.low, roll.high)
        head = f"Game {self.record.number}"
        if gs.match_length:
            head += f" of the {gs.match_length}-point match, score: you {gs.score[HUMAN]}, tabla {gs.score[ENGINE]}"
            if gs.crawford:
                head += " (Crawford game: no doubling)"
        self.say(head)
        who = "you play" if first == HUMAN else "tabla plays"
        self.say(f"Opening roll: you {mine}, tabla {theirs}: {who} first with {roll.high}-{roll.low}.")
        self.dice = (roll.high, roll.low)

    def _play_game(self) -> None:
        while not self.state.is_over:
            if self.state.turn == HUMAN:
                self._human_turn()
            else:
                self._engine_turn()

    def _roll(self) -> tuple[int, int]:
        r = self.rng.integers(1, 7, size=2)
        return int(max(r)), int(min(r))

    def _apply_play(self, player: int, play: Play, dice: tuple[int, int]) -> None:
        gs = self.state
        self.record.actions.append(Action(player, "move", dice=dice, before=gs.position.board,
                                          after=play.result.board, steps=tuple(tuple(s) for s in play.steps())))
        self.state = gs.play(play)
        self.dice = None
        self.typed = None
        self._ranking_key = None
        if player == HUMAN:
            self.move += 1

    # ----------------------------------------------------------------- engine
    def _engine_turn(self) -> None:
        gs = self.state
        if self.dice is None:
            if gs.can_double():
                cr = self.engine.cube(gs.position, self.config.cube_ply, gs.cube_state())
                if cr.decision.double:
                    self._engine_doubles(cr.decision)
                    if self.state.is_over:
                        return
            self.dice = self._roll()
        gs = self.state
        dice = self.dice
        roll = Roll.of(*dice)
        best = self.engine.best(gs.position, roll, self.config.ply, 1, gs.cube_state()).plays[0]
        play = play_from_steps(gs.position, roll, best.steps)
        if play.moves:
            self.say(f"tabla rolls {dice[0]}-{dice[1]} and plays {play.text}.")
        else:
            self.say(f"tabla rolls {dice[0]}-{dice[1]} and cannot move.")
        self._apply_play(ENGINE, play, dice)
        if not self.state.is_over:
            self.show_board()

    def _engine_doubles(self, dec) -> None:
        gs = self.state
        self.state = gs.double()
        new = gs.cube_value * 2
        self.record.actions.append(Action(ENGINE, "double", cube=new))
        self.show_board()
        self.say(f"tabla doubles to {new}.")
        options = ["take", "drop"] + (["beaver"] if self.state.can_beaver() else [])
        values = {"take": dec.double_take, "drop": dec.double_drop}
        if "beaver" in options and dec.double_beaver is not None:
            values["beaver"] = dec.double_beaver
        prompt = ("take, drop or beaver> " if "beaver" in options else "take or drop> ")
        while True:
            cmd, arg = _split(self.ask(prompt))
            if cmd in ("take", "t", "accept"):
                choice = "take"
            elif cmd in ("drop", "pass", "p", "reject"):
                choice = "drop"
            elif cmd in ("beaver", "b") and "beaver" in options:
                choice = "beaver"
            elif cmd == "hint":
                self.say(self._response_hint(values, dec.mwc))
                continue
            elif self._common(cmd, arg, saving=False):
                continue
            else:
                self.say(f"Answer {', '.join(options[:-1])} or {options[-1]} (or hint).")
                continue
            break
        best = min(values, key=values.get)  # the doubler's value: the responder minimises it
        self._judge("response", f"tabla doubled to {new}", choice, best, values[choice] - values[best])
        if choice == "drop":
            self.record.actions.append(Action(HUMAN, "drop"))
            self.state = self.state.drop()
            self.say(f"You drop: tabla wins {self.state.points} point{'s' if self.state.points != 1 else ''}.")
            return
        if choice == "take":
            self.record.actions.append(Action(HUMAN, "take", cube=new))
            self.state = self.state.take()
            self.say(f"You take: the cube is at {new}, on your side.")
            return
        self.record.actions.append(Action(HUMAN, "beaver", cube=new * 2))
        self.state = self.state.beaver()
        self.say(f"You beaver: the cube goes to {new * 2} and stays on your side.")
        # tabla keeps playing for the beavered cube when that beats giving up 2 cubes
        if dec.double_beaver is not None and dec.double_beaver >= -2.0:
            self.record.actions.append(Action(ENGINE, "take", cube=new * 2))
            self.state = self.state.take()
            self.say("tabla takes the beaver.")
        else:
            self.record.actions.append(Action(ENGINE, "drop"))
            self.state = self.state.drop()
            self.say(f"tabla drops the beaver: you win {self.state.points} points.")

    def _response_hint(self, values: dict[str, float], mwc: bool) -> str:
        sign = (lambda v: 1.0 - v) if mwc else (lambda v: -v)
        fmt = _pct if mwc else (lambda v: f"{v:+.3f}")
        best = min(values, key=values.get)
        parts = ", ".join(f"{k} {fmt(sign(v))}" for k, v in values.items())
        unit = "your match-winning chances" if mwc else "your equity per cube"
        return f"tabla's view: you should {best} ({unit}: {parts})"

    # ----------------------------------------------------------------- human
    def _human_turn(self) -> None:
        if self.dice is None:
            self._before_roll()
            if self.state.is_over or self.dice is None:
                return
        self._human_play()

    def _before_roll(self) -> None:
        self.say("Your turn: press Enter to roll" + (", or type double." if self.state.can_double() else "."))
        while True:
            cmd, arg = _split(self.ask("you> "))
            if cmd in ("", "roll", "r"):
                if self.state.can_double():
                    self._judge_cube(doubled=False)
                self.dice = self._roll()
                return
            if cmd in ("double", "d"):
                if not self.state.can_double():
                    self.say(f"You cannot double: {_why_no_double(self.state)}.")
                    continue
                self._human_doubles()
                if self.state.is_over:
                    return
                self.dice = self._roll()
                return
            if cmd == "hint":
                self.say(self._cube_hint())
            elif cmd == "resign":
                self._human_resigns(arg)
                if self.state.is_over:
                    return
            elif not self._common(cmd, arg):
                self.say(f"Unknown command {cmd!r}: press Enter to roll, or type help.")

    def _cube_decision(self):
        gs = self.state
        return self.engine.cube(gs.position, self.config.cube_ply, gs.cube_state()).decision

    @staticmethod
    def _if_doubled(dec) -> float:
        return min(dec.double_drop, dec.double_beaver if dec.beaver else dec.double_take)

    def _cube_hint(self) -> str:
        gs = self.state
        if not gs.can_double():
            return f"No cube decision: {_why_no_double(gs)}. Roll."
        dec = self._cube_decision()
        fmt = _pct if dec.mwc else (lambda v: f"{v:+.3f}")
        rows = [f"no double {fmt(dec.no_double)}", f"double/take {fmt(dec.double_take)}",
                f"double/drop {fmt(dec.double_drop)}"]
        if dec.double_beaver is not None:
            rows.append(f"double/beaver {fmt(dec.double_beaver)}")
        action = {"no_double": "no double", "double_take": "double, take", "double_drop": "double, drop",
                  "too_good": "too good to double", "no_double_beaver": "no double (beaver)",
                  "double_beaver": "double, beaver"}.get(dec.action.value, dec.action.value)
        unit = "match-winning chances" if dec.mwc else "equity per cube"
        return f"Cube decision: {action} ({unit}: {', '.join(rows)})"

    def _judge_cube(self, doubled: bool):
        """Record the double / no double decision; returns tabla's cube decision."""
        dec = self._cube_decision()
        value = {True: self._if_doubled(dec), False: dec.no_double}
        best = max(value, key=value.get)
        name = {True: "double", False: "no double"}
        self._judge("cube", f"cube at {self.state.cube_value}", name[doubled], name[best], value[best] - value[doubled])
        return dec

    def _human_doubles(self) -> None:
        dec = self._judge_cube(doubled=True)  # from the human's side: dec.take is tabla's answer
        gs = self.state
        new = gs.cube_value * 2
        self.state = gs.double()
        self.record.actions.append(Action(HUMAN, "double", cube=new))
        self.say(f"You double to {new}.")
        if dec.beaver and self.state.can_beaver():
            self.record.actions.append(Action(ENGINE, "beaver", cube=new * 2))
            self.state = self.state.beaver()
            self.say(f"tabla beavers: the cube goes to {new * 2} and stays on tabla's side.")
            values = {"take": dec.double_beaver, "drop": -2.0}
            while True:
                cmd, arg = _split(self.ask("take or drop the beaver> "))
                if cmd in ("take", "t", "drop", "pass", "p"):
                    break
                if cmd == "hint":
                    best = max(values, key=values.get)
                    self.say(f"tabla's view: you should {best} (take {values['take']:+.3f}, drop -2.000 per cube)")
                elif not self._common(cmd, arg, saving=False):
                    self.say("Answer take or drop.")
            choice = "take" if cmd in ("take", "t") else "drop"
            best = max(values, key=values.get)
            self._judge("response", f"tabla beavered to {new * 2}", choice, best, values[best] - values[choice])
            if choice == "take":
                self.record.actions.append(Action(HUMAN, "take", cube=new * 2))
                self.state = self.state.take()
                self.say(f"You take the beaver: the cube is at {new * 2}.")
            else:
                self.record.actions.append(Action(HUMAN, "drop"))
                self.state = self.state.drop()
                self.say(f"You drop the beaver: tabla wins {self.state.points} points.")
            return
        if dec.take:
            self.record.actions.append(Action(ENGINE, "take", cube=new))
            self.state = self.state.take()
            self.say(f"tabla takes: the cube is at {new}, on tabla's side.")
        else:
            self.record.actions.append(Action(ENGINE, "drop"))
            self.state = self.state.drop()
            self.say(f"tabla drops: you win {self.state.points} point{'s' if self.state.points != 1 else ''}.")

    def _human_resigns(self, arg: str) -> None:
        level = _RESIGN_LEVELS.get(arg.lower())
        if level is None:
            self.say("Resign single, gammon or backgammon.")
            return
        gs = self.state
        offer = gs.resign(level)
        points = gs.points_of(level)
        ev = self.engine.eval(gs.position, self.config.cube_ply, gs.cube_state())
        if gs.is_money:
            resign_value = -points / gs.cube_value
        else:
            met = self.engine.met or default_met()
            away_h, away_e = gs.match_length - gs.score[HUMAN], gs.match_length - gs.score[ENGINE]
            resign_value = 1.0 - met.mwc_after_game(away_e - points, away_h, gs.crawford or gs.post_crawford)
        # tabla accepts when the resignation gives it at least its expected value
        if resign_value <= ev.cubeful_equity + 1e-9:
            self.state = offer.accept_resignation()
            self.say(f"You offer to resign {_RESULT_NAMES[level]}; tabla accepts.")
        else:
            self.state = offer.reject_resignation()
            self.say(f"You offer to resign {_RESULT_NAMES[level]}; tabla refuses and plays on.")

    def _ranked(self, roll: Roll):
        key = (self.state.position, roll)
        if self._ranking_key != key:
            n = len(legal_plays(self.state.position, roll))
            self._ranking = self.engine.best(self.state.position, roll, self.config.ply, n, self.state.cube_state())
            self._ranking_key = key
        return self._ranking

    def _value_text(self, info, mwc: bool) -> str:
        v = info.cubeful_equity if info.cubeful_equity is not None else info.equity
        return _pct(v) if mwc else f"{v:+.3f}"

    def _play_hint(self, roll: Roll, top: int = 5) -> str:
        res = self._ranked(roll)
        unit = "match-winning chances" if res.mwc else "equity"
        lines = [f"tabla's top plays for {roll.high}-{roll.low} ({unit}, ply {res.ply}):"]
        for i, p in enumerate(res.plays[:top], 1):
            diff = "" if i == 1 else (f" ({100 * p.difference:+.1f}%)" if res.mwc else f" ({p.difference:+.3f})")
            lines.append(f"  {i}. {p.play or '(no move)':<24} {self._value_text(p, res.mwc)}{diff}")
        turn = self.typed
        if turn is not None and turn.steps and turn.roll == roll:
            ids = {position_id(p.next_position) for p in turn.continuations()}
            found = next(((i, p) for i, p in enumerate(res.plays, 1) if p.position_id in ids), None)
            if found is not None:
                rank, best = found
                lines.append(f"  Best play starting with your {turn.text}: {best.play} "
                             f"(number {rank}, {self._value_text(best, res.mwc)})")
        return "\n".join(lines)

    def _human_play(self) -> None:
        gs = self.state
        dice = self.dice
        roll = Roll.of(*dice)
        restored, self._restored_parts = self._restored_parts, ()
        turn = TypedTurn.start(gs.position, roll)
        plays = list(turn.legal)
        if not plays[0].moves:
            self.show_board()
            self.say(f"You roll {dice[0]}-{dice[1]} and cannot move.")
            self._apply_play(HUMAN, plays[0], dice)
            return
        if len(plays) == 1:
            self.typed = TypedTurn.of_play(gs.position, roll, plays[0])
            self._show_typed(f"Forced play: {plays[0].text}")
            self.say(f"You roll {dice[0]}-{dice[1]}: your only legal play is {plays[0].text} (forced). "
                     f"Press Enter to play it.")
            self._confirm(forced=True)
            self._apply_play(HUMAN, plays[0], dice)
            return
        if restored:
            try:
                turn = TypedTurn.replay(gs.position, roll, restored)
            except IllegalPlayError as exc:  # read_snapshot validated them: cannot happen
                log.warning("saved partial play dropped: %s", exc)
        self.typed = turn
        self._show_typed()
        if turn.steps:
            self.say(self._typed_status())
        else:
            self.say(f"You roll {dice[0]}-{dice[1]}. Type your play, e.g. {plays[0].text}, "
                     f"or part of it, e.g. {plays[0].moves[0]}.")
        while True:
            turn = self.typed
            play = turn.complete
            if play is not None:
                self.say(f"You play {play.text}. Press Enter to confirm, or type undo.")
                if self._confirm():
                    self._judge_play(roll, play)
                    self._apply_play(HUMAN, play, dice)
                    return
                self._take_back()
                continue
            line = self.ask(f"move {dice[0]}-{dice[1]}> ")
            cmd, arg = _split(line)
            if cmd == "hint":
                self.say(self._play_hint(roll))
                continue
            if cmd in ("legal", "moves"):
                self.say(self._legal_text())
                continue
            if cmd == "resign":
                self._human_resigns(arg)
                if self.state.is_over:
                    return
                continue
            if cmd in ("undo", "u"):
                if not turn.parts:
                    self.say("Nothing to undo: type your play.")
                else:
                    self._take_back()
                continue
            if cmd in ("double", "roll", "r", "d"):
                self.say("You have rolled already: type your play.")
                continue
            if self._common(cmd, arg):
                continue
            if not line:
                continue
            self._type_part(line)

    def _type_part(self, line: str) -> None:
        """Add a typed part (or, at the start of the turn, a whole play) to the turn."""
        turn = self.typed
        whole_error = None
        if not turn.parts:
            try:
                play = parse_play(turn.position, turn.roll, line)
            except AmbiguousPlayError as exc:
                self.say(f"Ambiguous: {exc}")
                return
            except (NotationError, IllegalPlayError) as exc:
                whole_error = exc  # perhaps the beginning of a play
            else:
                self.typed = TypedTurn.of_play(turn.position, turn.roll, play)
                self._show_typed()
                return
        try:
            self.typed = turn.add(line)
        except AmbiguousPlayError as exc:
            self.say(f"Ambiguous: {exc}")
            return
        except (NotationError, IllegalPlayError) as exc:
            self.say(f"Illegal play: {whole_error or exc}. Type legal to list the legal plays.")
            return
        self._show_typed()
        if self.typed.complete is None:
            self.say(self._typed_status())

    def _take_back(self) -> None:
        """Undo the last typed part and show where the turn stands."""
        turn = self.typed
        part = turn.part_text()
        self.typed = turn.undo()
        self._show_typed()
        if not self.typed.parts:
            whole = turn.complete is not None  # the whole play typed on one line
            self.say("Play taken back." if whole else f"Took back {part}: back to the start of your turn.")
        else:
            self.say(f"Took back {part}. {self._typed_status()}")

    def _typed_status(self) -> str:
        turn = self.typed
        return f"You have played {turn.text}; still to play: {_dice_words(turn.remaining)}."

    def _show_typed(self, note: str = "") -> None:
        """The board with the moves typed so far (the turn's start when none)."""
        turn = self.typed
        if turn is None or not turn.steps:
            self.show_board()
            return
        note = note or f"Typed: {turn.text}" + ("" if turn.complete else f"; to play: {_dice_words(turn.remaining)}")
        self.say(render_board(replace(self.view(turn.current), note=note)))

    def _legal_text(self) -> str:
        turn = self.typed
        if not turn.steps:
            return f"Legal plays ({len(turn.legal)}): " + ", ".join(p.text for p in turn.legal)
        plays = turn.continuations()
        return f"Legal plays starting with {turn.text} ({len(plays)}): " + ", ".join(p.text for p in plays)

    def _confirm(self, forced: bool = False) -> bool:
        """Enter keeps the play (True), ``undo`` takes back its last part (False)."""
        while True:
            line = self.ask("confirm> ")
            cmd, arg = _split(line)
            if cmd in ("", "ok", "y", "yes", "confirm"):
                return True
            if cmd in ("undo", "u", "n", "no"):
                if forced:
                    self.say("The play is forced: press Enter to play it.")
                    continue
                return False
            if cmd == "hint":
                self.say(self._play_hint(self.typed.roll))
            elif cmd in ("legal", "moves"):
                self.say(self._legal_text() if not forced else f"The only legal play is {self.typed.text}.")
            elif not self._common(cmd, arg):
                self.say("Press Enter to confirm the play, or type undo to take it back."
                         if not forced else "Press Enter to play the forced play.")

    def _judge_play(self, roll: Roll, play: Play) -> None:
        res = self._ranked(roll)
        if len(res.plays) < 2:
            return
        pid = position_id(play.next_position)
        chosen = next((p for p in res.plays if p.position_id == pid), None)
        if chosen is None:  # cannot happen: every legal play is ranked
            log.warning("play %s not found among the ranked plays", play.text)
            return
        best = res.plays[0]
        self._judge("play", f"roll {roll.high}-{roll.low}", play.text, best.play, -chosen.difference)

    def _judge(self, kind: str, situation: str, chosen: str, best: str, loss: float) -> None:
        self.judgements.append(Judgement(self.record.number, self.move + 1, kind, situation, chosen, best,
                                         max(0.0, float(loss))))

    # ----------------------------------------------------------------- common commands
    def _common(self, cmd: str, arg: str, saving: bool = True) -> bool:
        """Commands available at every prompt; False when ``cmd`` is not one of them."""
        if cmd in ("help", "?", "h"):
            self.say(HELP)
        elif cmd == "board":
            self._show_typed()
        elif cmd == "pip":
            typed = self.typed is not None and bool(self.typed.steps)
            pos = self.typed.current if typed else self.view().position
            me, them = pos.pips()
            lead = them - me
            rel = f"you lead by {lead}" if lead > 0 else f"you trail by {-lead}" if lead < 0 else "even"
            after = f" after {self.typed.text}" if typed else ""
            self.say(f"Pip count{after}: you {me}, tabla {them} ({rel}).")
        elif cmd == "eval":
            self.say(self._eval_text())
        elif cmd == "save":
            if not saving:
                self.say("Answer the cube first, then save.")
            elif not arg:
                self.say("Usage: save FILE")
            else:
                self._save(arg)
        elif cmd == "load":
            if not saving:
                self.say("Answer the cube first, then load.")
            elif not arg:
                self.say("Usage: load FILE")
            else:
                self._load(arg)
        elif cmd == "export":
            self._export(arg)
        elif cmd in ("quit", "exit", "q"):
            raise SessionEnd("quit")
        else:
            return False
        return True

    def _eval_text(self) -> str:
        gs = self.state
        ev = self.engine.eval(gs.position, self.config.cube_ply, gs.cube_state())
        p = [ev.probabilities[k] for k in PROB_NAMES]
        eq, cub = ev.equity, ev.cubeful_equity
        if gs.turn != HUMAN:
            p = [1.0 - p[0], p[3], p[4], p[1], p[2]]
            eq = -eq
            cub = 1.0 - cub if ev.mwc else -cub
        w, wg, wb, lg, lb = p
        cub_text = f"match-winning chances {_pct(cub)}" if ev.mwc else f"cubeful equity {cub:+.3f}"
        return (f"Your chances (tabla's evaluation, ply {ev.ply}, before the roll): win {_pct(w)} "
                f"(gammon {_pct(wg)}, backgammon {_pct(wb)}), lose {_pct(1 - w)} (gammon {_pct(lg)}, "
                f"backgammon {_pct(lb)}); cubeless equity {eq:+.3f}, {cub_text}.")

    def _save(self, path: str) -> None:
        partial = self.typed.parts if self.typed is not None and self.state.turn == HUMAN and self.dice else ()
        data = snapshot(self.state, self.config, dice=self.dice, rng=self.rng, games=self.games,
                        current=self.record, judgements=self.judgements, move=self.move, partial=partial)
        try:
            Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            self.say(f"Cannot save to {path}: {exc.strerror or exc}.")
            return
        typed = f" (with your moves typed so far, {self.typed.text})" if partial else ""
        self.say(f"Game saved to {path}{typed}.")

    def _load(self, path: str) -> None:
        try:
            loaded = load_file(path, self.config)
        except SaveFileError as exc:
            self.say(f"Cannot load: {exc}. The game goes on.")
            return
        self.load(loaded)
        self.say(f"Game loaded from {path}.")
        raise _Reloaded()

    def _match_record(self) -> MatchRecord:
        score = self.state.final_score() if self.state.is_over else self.state.score
        return MatchRecord(names=self.config.names, match_length=self.config.match_length,
                           games=list(self.games), score=score)

    def _export(self, path: str) -> None:
        if not path:
            self.say("Usage: export FILE.mat")
            return
        if not self.games:
            self.say("No finished game to export yet.")
            return
        try:
            Path(path).write_text(format_mat(self._match_record()), encoding="ascii")
        except OSError as exc:
            self.say(f"Cannot write {path}: {exc.strerror or exc}.")
            return
        self.say(f"{len(self.games)} game{'s' if len(self.games) != 1 else ''} exported to {path}.")

    # ----------------------------------------------------------------- game end
    def _end_of_game(self) -> None:
        gs = self.state
        rec = self.record
        rec.winner = gs.winner
        rec.points = gs.points
        rec.cube_value = gs.cube_value
        rec.result = 0 if gs.end_reason is EndReason.DROPPED else int(gs.result)
        self.games.append(rec)
        win_name = "You win" if gs.winner == HUMAN else "tabla wins"
        pts = f"{gs.points} point{'s' if gs.points != 1 else ''}"
        if gs.end_reason is EndReason.PLAYED:
            self.show_board()
            kind = GameResult(gs.result)
            winner, loser = ("you", "tabla") if gs.winner == HUMAN else ("tabla", "you")
            bore = "bore off all 15 checkers"
            has = "has" if gs.winner == HUMAN else "have"
            why = {
                GameResult.SINGLE: f"a single game ({loser} {has} borne off checkers)",
                GameResult.GAMMON: f"a gammon ({loser} {has} borne off no checker)",
                GameResult.BACKGAMMON: (f"a backgammon ({loser} {has} borne off no checker and still {has} "
                                        f"one on the bar or in {'your' if gs.winner == HUMAN else 'its'} home board)"),
            }[kind]
            if gs.jacoby_applies and kind is not GameResult.SINGLE:
                why += ", counted single by the Jacoby rule (the cube was not turned)"
            cube = f", cube at {gs.cube_value}" if gs.cube_value > 1 else ""
            self.say(f"{win_name} {pts}: {winner} {bore}; {why}{cube}.")
        elif gs.end_reason is EndReason.DROPPED:
            dropper = "tabla" if gs.winner == HUMAN else "you"
            self.say(f"{win_name} {pts}: {dropper} dropped the double.")
        else:
            loser = "tabla" if gs.winner == HUMAN else "you"
            self.say(f"{win_name} {pts}: {loser} resigned {_RESULT_NAMES[gs.resign_level]}.")
        final = gs.final_score()
        if gs.is_money:
            self.say(f"Money so far: you {final[HUMAN] - final[ENGINE]:+d} after {len(self.games)} game"
                     f"{'s' if len(self.games) != 1 else ''}.")
        else:
            self.say(f"Score: you {final[HUMAN]}, tabla {final[ENGINE]} ({gs.match_length}-point match).")
            mw = gs.match_winner()
            if mw is not None:
                self.say(("You win" if mw == HUMAN else "tabla wins") + f" the match {final[mw]}-{final[1 - mw]}.")

    def _another_game(self) -> bool:
        if self.state.match_winner() is not None:
            return False
        while True:
            cmd, arg = _split(self.ask("next game> "))
            if cmd in ("", "y", "yes", "next"):
                return True
            if cmd in ("quit", "q", "exit", "stop", "no"):
                return False
            if cmd == "export":
                self._export(arg)
            elif cmd == "help":
                self.say("Press Enter for the next game, export FILE to write the games as .mat, or quit.")
            else:
                self.say("Press Enter for the next game, or type quit.")

    def _final_prompt(self) -> None:
        if not self.games:
            return
        self.say("Type export FILE.mat to write the games as a .mat file, or press Enter to quit.")
        while True:
            cmd, arg = _split(self.ask("export> "))
            if cmd in ("", "quit", "q", "exit"):
                return
            if cmd == "export":
                self._export(arg)
            else:
                self.say("Type export FILE.mat, or press Enter to quit.")

    def summary(self) -> str:
        """The player's decisions as Tabla judged them."""
        js = self.judgements
        mwc = not self.money
        unit = "MWC" if mwc else "equity per cube"
        fmt = (lambda v: f"{100 * v:.2f}%") if mwc else (lambda v: f"{v:.3f}")
        errors = [j for j in js if j.loss > ERROR_THRESHOLD]
        kinds = {k: sum(1 for j in js if j.kind == k) for k in ("play", "cube", "response")}
        lines = [
            f"Your decisions as tabla judged them (plays at ply {self.config.ply}, cube at ply {self.config.cube_ply}):",
            f"  {len(js)} decision{'s' if len(js) != 1 else ''} ({kinds['play']} plays, {kinds['cube']} cube, {kinds['response']} take/drop), "
            f"{len(errors)} error{'s' if len(errors) != 1 else ''}, {unit} lost: {fmt(sum(j.loss for j in js))} in total, "
            f"{fmt(sum(j.loss for j in js) / len(js)) if js else fmt(0.0)} per decision.",
        ]
        for j in sorted(errors, key=lambda j: -j.loss)[:5]:
            lines.append(f"  game {j.game}, move {j.move}, {j.situation}: you chose {j.chosen or '(no move)'}, "
                         f"tabla prefers {j.best or '(no move)'} (-{fmt(j.loss)})")
        return "\n".join(lines)
