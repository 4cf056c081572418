"""Bots: one interface for checker play and cube action, and the baseline players.

A :class:`Bot` sees everything from the side to move, like the rest of Tabla:

* ``choose_batch(boards, dice)``: for each board (the bot on roll) and roll, the result
  board it plays (still its own view, before flipping). This makes every bot a player of
  :func:`eval.duel.duel`. ``choose_play(board, d1, d2, state)`` is the one-position form
  and may use the cube state (cubeful play).
* ``offer_double(board, state)``: the bot is on roll (``state`` seen from it); double?
* ``respond_double(board, state)``: the *opponent* is on roll and doubles; ``board`` and
  ``state`` (before the double) are seen from the doubler, as the game shows them. The
  answer is a :class:`CubeResponse`: take, drop, or beaver.

The driver (:mod:`eval.match`) asks only when the rules allow the action.

Bots, by spec ``name[:key=val,...]`` (:func:`make_bot`):

==========  ==================================================================
``random``  a uniformly random legal play; never doubles, always takes
``race``    greedy heuristic (hits, safety, points made; pips in a race);
            never doubles, always takes
``pipcube`` plays like ``race``; doubles and takes by the 8-9-12 pip rule
            (:func:`pip_rule`), the seed application's "pip-count difference"
``pubeval`` Tesauro's pubeval; cube by the same 8-9-12 pip rule
``gnubg``   gnubg-nn at its own ply (``gnubg:ply=0`` is GNU Backgammon's 0-ply);
            cube by Janowski (:mod:`engine.cube`) on its probabilities
``tabla``   Tabla's engine: ``tabla:ply=2,model=models/x.pt`` (default: the
            shipped model, ply 1)
==========  ==================================================================
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from engine.cube import CubeOwner, CubeState, cube_decision_from_probs, cube_efficiency, cubeful_equity
from engine.evaluator import Evaluator
from engine.movegen import children_batch
from engine.position import flip_array
from eval import pubeval
from eval.duel import EvaluatorPlayer, GnubgPlayer, RandomPlayer, import_gnubg

log = logging.getLogger(__name__)


class BotSpecError(ValueError):
    """A bot spec (``name:key=val,...``) that names no bot or has a bad option."""


class CubeResponse(str, enum.Enum):
    """The answer to a double."""

    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"


class Bot:
    """Base class: subclasses give ``choose_batch``; the cube defaults to never double,
    always take."""

    name = "bot"

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def choose_play(self, board: np.ndarray, d1: int, d2: int, state: CubeState | None = None) -> np.ndarray:
        """The result board played for ``d1``-``d2`` from ``board`` (bot on roll)."""
        return self.choose_batch(np.asarray(board, np.int8)[None, :], np.array([[d1, d2]]))[0]

    def offer_double(self, board: np.ndarray, state: CubeState) -> bool:
        return False

    def respond_double(self, board: np.ndarray, state: CubeState) -> CubeResponse:
        return CubeResponse.TAKE

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        """The bot doubled (it is on roll; ``state`` from its view before the double) and
        the opponent beavered: play on for 4x the cube (True) or pass, losing 2x."""
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


# ---------------------------------------------------------------------- random
class RandomBot(Bot):
    """A uniformly random legal play (each distinct result equally likely)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.name = "random"
        self._player = RandomPlayer(rng)

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        return self._player.choose_batch(boards, dice)


# ---------------------------------------------------------------------- race heuristic
def race_scores(children: np.ndarray) -> np.ndarray:
    """Heuristic value of each result board (mover's view, after the play), higher better.

    Contact: the opponent's pips (hits send checkers back), minus the expected pips lost
    by each blot (direct shots 11/36 each, indirect 2/36, times the pips a hit costs),
    plus made points (home board and bar points most). Race: bear off the most checkers,
    then the fewest pips, avoiding stacks.
    """
    b = np.asarray(children, dtype=np.int64).reshape(-1, 26)
    idx = np.arange(26)
    own = np.maximum(b, 0)
    opp = np.maximum(-b, 0)
    my_pips = (own * idx).sum(axis=1)
    opp_pips = (opp * (25 - idx)).sum(axis=1)
    my_off = 15 - own.sum(axis=1)
    my_back = np.where(own > 0, idx, 0).max(axis=1)
    opp_front = np.where(opp > 0, idx, 26).min(axis=1)
    race = my_back < opp_front

    # race: checkers off first, then pips, then a smooth distribution
    stacks = np.maximum(own[:, 1:7] - 3, 0).sum(axis=1)
    race_value = 20.0 * my_off - my_pips - 0.5 * stacks

    # contact: shots at each blot from opponent checkers behind it (index q < p)
    opp_here = (opp[:, 0:25] > 0).astype(np.int64)  # q = 0 (bar) .. 24
    csum = np.concatenate([np.zeros((len(b), 1), np.int64), np.cumsum(opp_here, axis=1)], axis=1)

    def occupied_between(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Opponent-held indices q with lo <= q <= hi (clipped to 0..24), per row and p."""
        lo_c = np.clip(lo, 0, 25)
        hi_c = np.clip(hi + 1, 0, 25)
        return np.maximum(np.take_along_axis(csum, hi_c, axis=1) - np.take_along_axis(csum, lo_c, axis=1), 0)

    p = np.tile(np.arange(1, 25), (len(b), 1))
    direct = occupied_between(p - 6, p - 1)
    indirect = occupied_between(p - 12, p - 7)
    risk = np.minimum(1.0, (11.0 * direct + 2.0 * indirect) / 36.0)
    blot = own[:, 1:25] == 1
    cost = (25 - p) + 8.0
    blot_penalty = (blot * risk * cost).sum(axis=1)
    made = own[:, 1:25] >= 2
    home_points = made[:, 0:6].sum(axis=1)
    outer_points = made[:, 6:11].sum(axis=1)
    anchors = made[:, 18:24].sum(axis=1)
    contact_value = opp_pips - blot_penalty + 4.0 * home_points + 2.5 * outer_points + 2.0 * anchors + 20.0 * my_off
    return np.where(race, race_value, contact_value).astype(np.float64)


RACE_SCALE = 64.0
"""Race-score points per unit of ``tan`` in :class:`RaceEvaluator` (any positive value
keeps the order; this one keeps neighbouring scores apart in float64)."""


class RaceEvaluator:
    """:func:`race_scores` as an :class:`engine.evaluator.Evaluator`: the score of the
    player who has just played (the board flipped) becomes his chance of winning,
    ``1/2 + atan(score / RACE_SCALE) / pi``, strictly increasing in the score and below 1,
    so that the 1-ply chooser keeps the score's order and ranks every won game first."""

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        mover = 0.5 + np.arctan(race_scores(flip_array(np.asarray(boards))) / RACE_SCALE) / np.pi
        probs = np.zeros((len(mover), 5), np.float64)
        probs[:, 0] = 1.0 - mover
        return probs


class RaceBot(Bot):
    """Greedy heuristic play: the best :func:`race_scores` by the shared 1-ply chooser
    (:class:`eval.duel.EvaluatorPlayer` on :class:`RaceEvaluator`); a win is always taken."""

    name = "race"
    race_player = EvaluatorPlayer(RaceEvaluator())
    """Stateless, so one for every race bot and its subclasses."""

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        return self.race_player.choose_batch(boards, dice)


# ---------------------------------------------------------------------- 8-9-12 pip rule
DOUBLE_LEAD = 0.08
REDOUBLE_LEAD = 0.09
PASS_LEAD = 0.12


def pip_lead(board: np.ndarray) -> float:
    """The player on roll's pip lead as a fraction of his own count: ``(theirs - mine) / mine``."""
    b = np.asarray(board, dtype=np.int64)
    idx = np.arange(26)
    mine = int((np.maximum(b, 0) * idx).sum())
    theirs = int((np.maximum(-b, 0) * (25 - idx)).sum())
    return (theirs - mine) / max(mine, 1)


@dataclass(frozen=True)
class PipRule:
    """The 8-9-12 rule on the raw pip count (a race rule, used here in every position, as
    the seed application's simple "difference of pip counts" rule): the player on roll
    doubles with a lead of at least 8% of his count (9% to redouble a cube he owns); the
    opponent takes when the lead is at most 12%, else drops. Beavers are never given."""

    double_lead: float = DOUBLE_LEAD
    redouble_lead: float = REDOUBLE_LEAD
    pass_lead: float = PASS_LEAD

    def offer_double(self, board: np.ndarray, state: CubeState) -> bool:
        need = self.redouble_lead if state.owner is CubeOwner.PLAYER else self.double_lead
        return pip_lead(board) >= need

    def respond_double(self, board: np.ndarray, state: CubeState) -> CubeResponse:
        return CubeResponse.TAKE if pip_lead(board) <= self.pass_lead else CubeResponse.DROP

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        return pip_lead(board) >= 0.0


pip_rule = PipRule()


class CubeBy(Bot):
    """A bot whose cube actions are those of ``self.cube`` (a :class:`PipRule`, a
    :class:`JanowskiCube`: anything with the three methods)."""

    cube: "PipRule | JanowskiCube"

    def offer_double(self, board: np.ndarray, state: CubeState) -> bool:
        return self.cube.offer_double(board, state)

    def respond_double(self, board: np.ndarray, state: CubeState) -> CubeResponse:
        return self.cube.respond_double(board, state)

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        return self.cube.accept_beaver(board, state)


class PipCubeBot(RaceBot, CubeBy):
    """``race`` play with the 8-9-12 pip-count cube rule (the seed app's computer)."""

    name = "pipcube"

    def __init__(self, rule: PipRule = pip_rule) -> None:
        self.cube = rule


# ---------------------------------------------------------------------- pubeval
class PubevalBot(PipCubeBot):
    """Tesauro's pubeval for checker play; the 8-9-12 pip rule for the cube."""

    name = "pubeval"

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        children, offsets = children_batch(boards, dice)
        return children[pubeval.choose_batch(boards, dice, children, offsets)]


# ---------------------------------------------------------------------- probability-based cube
def response_to(decision, state: CubeState) -> CubeResponse:
    """The answer a cube decision (from the doubler's side) gives: drop, beaver or take."""
    if not decision.take:
        return CubeResponse.DROP
    return CubeResponse.BEAVER if decision.beaver and state.may_beaver() else CubeResponse.TAKE


class JanowskiCube:
    """Cube decisions by Janowski's model (:func:`engine.cube.cube_decision_from_probs`)
    on the probabilities ``probs_of(board)`` of the player on roll."""

    def __init__(self, probs_of: Callable[[np.ndarray], np.ndarray]) -> None:
        self.probs_of = probs_of

    def decision(self, board: np.ndarray, state: CubeState):
        b = np.asarray(board, np.int8)
        x = float(cube_efficiency(b[None, :])[0])
        return cube_decision_from_probs(self.probs_of(b), state, x)

    def offer_double(self, board: np.ndarray, state: CubeState) -> bool:
        return self.decision(board, state).double

    def respond_double(self, board: np.ndarray, state: CubeState) -> CubeResponse:
        return response_to(self.decision(board, state), state)

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        b = np.asarray(board, np.int8)
        x = float(cube_efficiency(b[None, :])[0])
        return float(cubeful_equity(self.probs_of(b), state.beavered(), x)) >= -2.0 * state.value


# ---------------------------------------------------------------------- gnubg
class GnubgBot(CubeBy):
    """GNU Backgammon's nets through gnubg-nn, at gnubg's own ``ply`` (0 = its 0-ply).

    A benchmark opponent only: Tabla's own decisions never use it.
    """

    def __init__(self, ply: int = 0) -> None:
        self._player = GnubgPlayer(ply)
        self.ply = ply
        self.name = f"gnubg:ply={ply}"
        self.cube = JanowskiCube(self._probs)

    def _probs(self, board: np.ndarray) -> np.ndarray:
        from engine.position import to_gnubg_board

        gnubg = self._player.gnubg
        return np.array(gnubg.probabilities(to_gnubg_board(board), self.ply), dtype=np.float64)

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        return self._player.choose_batch(boards, dice)


# ---------------------------------------------------------------------- tabla
class TablaBot(Bot):
    """Tabla's engine (:mod:`engine.search` over the network's evaluator).

    Checker play at ``ply`` (1 = every result scored by the network), ranked cubefully
    whenever the cube state matters (:func:`engine.search.scorer_for`); cubeless batches
    (duels) at ply 1 take the fast batched path. Cube decisions by Janowski on the
    position's value at ``ply - 1`` (the same look-ahead as the play; gnubg's numbering:
    our ply-n play sees as far as a ply-(n-1) position evaluation).
    """

    def __init__(self, evaluator, ply: int = 1, label: str = "tabla") -> None:
        from engine.search import MAX_PLY_PLAY, Search  # noqa: PLC0415

        if not 1 <= ply <= MAX_PLY_PLAY:
            raise BotSpecError(f"tabla plays at ply 1 to {MAX_PLY_PLAY}, got ply={ply}")
        self.evaluator = evaluator
        self.ply = ply
        self.name = label
        self.search = Search(evaluator)
        self._player = EvaluatorPlayer(evaluator)

    def choose_play(self, board: np.ndarray, d1: int, d2: int, state: CubeState | None = None) -> np.ndarray:
        b = np.asarray(board, np.int8)
        if self.ply == 1 and (state is None or state.is_plain_money):
            return self._player.choose_batch(b[None, :], np.array([[d1, d2]]))[0]
        ranked = self.search.rank_plays(b, int(d1), int(d2), self.ply, state)
        return ranked.boards[ranked.best]

    def choose_batch(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        if self.ply == 1:
            return self._player.choose_batch(boards, dice)
        return np.array([self.choose_play(b, d[0], d[1]) for b, d in zip(boards, dice)], np.int8)

    def _values(self, board: np.ndarray, states: list[CubeState]) -> np.ndarray:
        return self.search.evaluate_position(np.asarray(board, np.int8), self.ply - 1, states).scores

    def _decision(self, board: np.ndarray, state: CubeState):
        from engine.cube import cash_value, decide  # noqa: PLC0415

        states = [state]
        can_redouble = state.value * 2 <= state.max_cube and not state.crawford
        if can_redouble:
            states.append(state.doubled())
        if state.may_beaver():
            states.append(state.beavered())
        v = self._values(board, states)
        nd = float(v[0])
        dt = float(v[1]) if can_redouble else nd
        db = float(v[2]) if state.may_beaver() else None
        return decide(state, nd, dt, cash_value(state), db)

    def offer_double(self, board: np.ndarray, state: CubeState) -> bool:
        return self._decision(board, state).double

    def respond_double(self, board: np.ndarray, state: CubeState) -> CubeResponse:
        return response_to(self._decision(board, state), state)

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        return float(self._values(board, [state.beavered()])[0]) >= -2.0 * state.value


# ---------------------------------------------------------------------- specs
BOT_NAMES = ("random", "race", "pipcube", "pubeval", "gnubg", "tabla")
_KEYS = {
    "random": {"seed"},
    "race": set(),
    "pipcube": set(),
    "pubeval": set(),
    "gnubg": {"ply"},
    "tabla": {"ply", "model"},
}


def parse_bot_spec(text: str) -> tuple[str, dict[str, str]]:
    """``"gnubg:ply=1"`` -> ``("gnubg", {"ply": "1"})``; :class:`BotSpecError` when malformed."""
    text = text.strip()
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    if name not in _KEYS:
        raise BotSpecError(f"unknown bot {name!r} in {text!r}; bots: {', '.join(BOT_NAMES)}")
    options: dict[str, str] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            key, val = key.strip().lower(), val.strip()
            if not eq or not key or not val:
                raise BotSpecError(f"bad option {item!r} in {text!r}: write key=value")
            if key not in _KEYS[name]:
                allowed = ", ".join(sorted(_KEYS[name])) or "none"
                raise BotSpecError(f"bot {name} has no option {key!r} (options: {allowed})")
            if key in options:
                raise BotSpecError(f"option {key!r} given twice in {text!r}")
            options[key] = val
    return name, options


def format_bot_spec(name: str, options: dict[str, str]) -> str:
    """Inverse of :func:`parse_bot_spec`."""
    if not options:
        return name
    return name + ":" + ",".join(f"{k}={v}" for k, v in options.items())


def _int_option(options: dict[str, str], key: str, default: int, lo: int, hi: int, bot: str) -> int:
    if key not in options:
        return default
    try:
        v = int(options[key])
    except ValueError:
        raise BotSpecError(f"{bot}: {key} must be an integer, got {options[key]!r}") from None
    if not lo <= v <= hi:
        raise BotSpecError(f"{bot}: {key} must be {lo} to {hi}, got {v}")
    return v


def make_bot(
    spec: str,
    rng: np.random.Generator | None = None,
    load_evaluator: Callable[[str | None], Evaluator] | None = None,
) -> Bot:
    """Build a bot from its spec. ``rng`` seeds the random bot unless the spec has ``seed=``;
    ``load_evaluator`` turns the tabla bot's ``model`` option (``None``: the shipped model)
    into an evaluator (the command line passes :func:`scripts.evaluators.load_evaluator`)."""
    name, options = parse_bot_spec(spec)
    if name == "random":
        if "seed" in options:
            rng = np.random.default_rng(_int_option(options, "seed", 0, 0, 2**63 - 1, name))
        return RandomBot(rng if rng is not None else np.random.default_rng())
    if name == "race":
        return RaceBot()
    if name == "pipcube":
        return PipCubeBot()
    if name == "pubeval":
        return PubevalBot()
    if name == "gnubg":
        ply = _int_option(options, "ply", 0, 0, 2, name)
        try:
            return GnubgBot(ply)
        except RuntimeError as exc:  # GnubgUnavailable
            raise BotSpecError(str(exc)) from None
    # tabla
    ply = _int_option(options, "ply", 1, 1, 3, name)
    evaluator = _load_tabla_evaluator(options.get("model"), load_evaluator)
    return TablaBot(evaluator, ply, label=format_bot_spec(name, options))


def _load_tabla_evaluator(model: str | None, load_evaluator: Callable[[str | None], Evaluator] | None) -> Evaluator:
    if load_evaluator is None:
        raise BotSpecError("the tabla bot needs an evaluator loader (make_bot's load_evaluator)")
    if model is not None and not Path(model).exists():
        raise BotSpecError(f"tabla: model file {model!r} not found")
    try:
        return load_evaluator(model)
    except (ValueError, OSError, KeyError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BotSpecError(f"tabla: cannot load model {model or 'default'}: {reason}") from None


__all__ = [
    "BOT_NAMES",
    "Bot",
    "BotSpecError",
    "CubeResponse",
    "GnubgBot",
    "JanowskiCube",
    "PipCubeBot",
    "PipRule",
    "PubevalBot",
    "RaceBot",
    "RandomBot",
    "TablaBot",
    "format_bot_spec",
    "import_gnubg",
    "make_bot",
    "parse_bot_spec",
    "pip_lead",
    "pip_rule",
    "race_scores",
]
