"""Grade every decision of a replayed match or money session (``tabla analyse``).

Units. An error is the equity the player lost against Tabla's best choice, cubeful:
in money play per cube value (EMG, "equivalent to money game", as GNU Backgammon
normalises it) and in points (times the cube); in match play the loss in match-winning
chances (MWC, through the match equity table) converted to EMG by ``2 / (W - L)``, where
W and L are the MWC after winning or losing the cube value in points (GNU Backgammon's
conversion). mEMG = EMG / 1000.

Decisions graded:

* checker plays with two or more distinct legal results (a forced play is not graded),
  ranked at ``ply`` (plays pruned by the move filter are valued at the same ply);
* cube: every time a player could double before his roll (double or no double), every
  take / drop / beaver; the doubler's answer to a beaver and resignations are counted
  as not graded.

Marks (GNU Backgammon 1.07's default thresholds, EMG): doubtful >= 0.03, bad >= 0.06,
very bad >= 0.12. Error rate = total error / (unforced checker plays + close or actual
cube decisions), in mEMG; a cube decision is *close* when the player doubled or was
doubled, or when the double/no-double equities differ by less than 0.16 (GNU
Backgammon's notion). Rating words follow GNU Backgammon's scale on that rate (mEMG):
< 2 Supernatural, < 5 World class, < 8 Expert, < 12 Advanced, < 18 Intermediate,
< 26 Casual player, < 35 Beginner, else Awful!.

PR (XG-style) = 500 x total error (EMG) / non-obvious decisions. A decision is
*non-obvious* when it is an unforced checker play whose two best plays are within 0.12
EMG of each other at the analysis ply, or a close or actual cube decision.

Luck of a roll (``luck_ply``, default 1 = the best play of each roll valued by the
network): the cubeful value of the best play of the roll rolled minus the mean of that
value over the 21 rolls (over the 15 non-doubles for the opening roll), in EMG; a roll
of +0.3 is lucky, +0.6 very lucky. The luck-adjusted result of a player is his points
won minus his luck plus his opponent's (in points, times the cube).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from engine.api import Engine
from engine.cube import CubeState, cash_value
from engine.dice import ALL_ROLLS
from engine.game import GameState
from engine.ids import position_id
from engine.movegen import legal_results
from engine.notation import format_play
from engine.position import Position
from eval.explain import describe, gammon_balance, play_facts
from eval.replay import Decision, ReplayedMatch

log = logging.getLogger(__name__)

DOUBTFUL, BAD, VERY_BAD = 0.03, 0.06, 0.12
CLOSE_CUBE = 0.16
OBVIOUS_GAP = 0.12
LUCKY, VERY_LUCKY = 0.3, 0.6
RATINGS = ((0.002, "Supernatural"), (0.005, "World class"), (0.008, "Expert"), (0.012, "Advanced"),
           (0.018, "Intermediate"), (0.026, "Casual player"), (0.035, "Beginner"))


def mark(error: float) -> str:
    """GNU Backgammon's mark of an error in EMG: ``""``, doubtful, bad or very bad."""
    if error >= VERY_BAD:
        return "very bad"
    if error >= BAD:
        return "bad"
    if error >= DOUBTFUL:
        return "doubtful"
    return ""


def rating(rate: float) -> str:
    """GNU Backgammon's rating word for an error rate in EMG per decision."""
    for limit, word in RATINGS:
        if rate < limit:
            return word
    return "Awful!"


@dataclass
class Graded:
    """One graded (or counted) decision; values are for the player who decided, in the
    units of the module docstring (``error`` in EMG, ``points`` its value in points)."""

    game: int
    move: int
    player: int
    kind: str
    """``play``, ``cube`` (double / no double), ``take`` (take / drop / beaver)."""
    chosen: str
    best: str
    error: float = 0.0
    points: float = 0.0
    graded: bool = True
    forced: bool = False
    close: bool = False
    obvious: bool = False
    chosen_value: float | None = None
    best_value: float | None = None
    why: str = ""
    why_best: str = ""
    position_id: str = ""
    dice: tuple[int, int] | None = None
    luck: float | None = None
    """EMG luck of the roll (moves only)."""
    luck_points: float | None = None
    equity_p0: float | None = None
    """The first player's value after the decision (points in money, MWC in a match)."""
    line: int = 0
    state: GameState | None = field(default=None, repr=False)

    @property
    def mark(self) -> str:
        return mark(self.error) if self.graded else ""

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "state"}
        d["mark"] = self.mark
        return d


@dataclass
class PlayerStats:
    name: str
    moves: int = 0
    unforced: int = 0
    checker_error: float = 0.0
    checker_points: float = 0.0
    cube_decisions: int = 0
    close_cube: int = 0
    cube_error: float = 0.0
    cube_points: float = 0.0
    marks: dict[str, int] = field(default_factory=lambda: {"doubtful": 0, "bad": 0, "very bad": 0})
    cube_marks: dict[str, int] = field(default_factory=lambda: {"doubtful": 0, "bad": 0, "very bad": 0})
    non_obvious: int = 0
    luck: float = 0.0
    luck_points: float = 0.0
    luck_per_game: dict[int, float] = field(default_factory=dict)
    result: float = 0.0
    luck_adjusted: float = 0.0
    not_graded: int = 0

    @property
    def error(self) -> float:
        return self.checker_error + self.cube_error

    @property
    def decisions(self) -> int:
        return self.unforced + self.close_cube

    @property
    def error_rate(self) -> float:
        """EMG per unforced decision."""
        return self.error / self.decisions if self.decisions else 0.0

    @property
    def checker_rate(self) -> float:
        return self.checker_error / self.unforced if self.unforced else 0.0

    @property
    def pr(self) -> float:
        return 500.0 * self.error / self.non_obvious if self.non_obvious else 0.0

    @property
    def rating(self) -> str:
        return rating(self.error_rate) if self.decisions else "N/A"

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.update(error=self.error, decisions=self.decisions, error_rate_memg=1000 * self.error_rate,
                 checker_rate_memg=1000 * self.checker_rate, pr=self.pr, rating=self.rating)
        return d


@dataclass
class Analysis:
    names: tuple[str, str]
    match_length: int
    ply: int
    cube_ply: int
    decisions: list[Graded]
    players: tuple[PlayerStats, PlayerStats]
    score: tuple[int, int]

    def worst(self, n: int = 5) -> list[Graded]:
        return sorted((g for g in self.decisions if g.graded and g.error > 0), key=lambda g: -g.error)[:n]

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "match_length": self.match_length, "ply": self.ply,
                "cube_ply": self.cube_ply, "score": list(self.score),
                "thresholds": {"doubtful": DOUBTFUL, "bad": BAD, "very_bad": VERY_BAD, "close_cube": CLOSE_CUBE,
                               "obvious_gap": OBVIOUS_GAP},
                "players": [p.to_dict() for p in self.players],
                "decisions": [g.to_dict() for g in self.decisions]}


class Grader:
    """Grades decisions with an :class:`~engine.api.Engine` (see the module docstring)."""

    def __init__(self, engine: Engine, ply: int = 2, cube_ply: int = 1, luck_ply: int = 1) -> None:
        self.engine = engine
        self.search = engine.search
        self.met = engine.met
        self.ply = ply
        self.cube_ply = cube_ply
        self.luck_ply = luck_ply

    # ----------------------------------------------------------------- units
    def to_emg(self, state: CubeState, diff: float) -> float:
        """A difference of scorer values (points or MWC) as EMG."""
        if state.is_money:
            return diff / state.value
        w = cash_value(state, self.met)
        lose = 1.0 - cash_value(state.flip(), self.met)
        return 2.0 * diff / (w - lose) if w > lose else 0.0

    def to_points(self, state: CubeState, emg: float) -> float:
        return emg * state.value

    def _p0(self, gs: GameState, value: float, player: int) -> float:
        """A scorer value of ``player`` as the first player's (points of the game so far
        in money; MWC in a match)."""
        if gs.is_money:
            return float(value if player == 0 else -value)
        return float(value if player == 0 else 1.0 - value)

    # ----------------------------------------------------------------- decisions
    def grade_play(self, d: Decision, number: int) -> Graded:
        gs, roll = d.state, d.roll
        state = gs.cube_state()
        board = gs.position.array()
        r = self.search.rank_plays(board, roll.high, roll.low, self.ply, state, self.met)
        chosen_k = int(np.flatnonzero((r.boards == np.asarray(d.after.board, dtype=np.int8)).all(axis=1))[0])
        g = Graded(d.game, number, d.player, "play", format_play(gs.position, d.steps) or "(no play)", "",
                   dice=(roll.high, roll.low), line=d.line, state=gs,
                   position_id=_pid(gs))
        best_k = r.best
        scores = r.score.copy()
        if r.ply[chosen_k] < self.ply:
            _, s = self.search.value_results(r.boards[chosen_k:chosen_k + 1], self.ply, state, self.met)
            scores[chosen_k] = s[0]
        g.best = format_play(gs.position, _steps(r, best_k)) or "(no play)"
        g.best_value, g.chosen_value = float(scores[best_k]), float(scores[chosen_k])
        g.equity_p0 = self._p0(gs, g.chosen_value, d.player)
        if len(r) < 2:
            g.forced, g.graded = True, False
        else:
            diff = max(0.0, float(scores[best_k] - scores[chosen_k]))
            g.error = self.to_emg(state, diff)
            g.points = diff if state.is_money else self.to_points(state, g.error)
            second = float(r.score[r.order[1]])
            g.obvious = self.to_emg(state, float(r.score[best_k]) - second) >= OBVIOUS_GAP
        before = gs.position
        best_pos = Position.trusted(tuple(int(x) for x in r.boards[best_k]))
        gb = gammon_balance(r.probs[best_k])
        g.why = describe(play_facts(before, d.after, d.steps, gammon_balance(r.probs[chosen_k]) - gb))
        g.why_best = describe(play_facts(before, best_pos, _steps(r, best_k)))
        return g

    def luck(self, d: Decision, opening: bool) -> float:
        """EMG luck of the roll of a move decision (see the module docstring)."""
        gs, roll = d.state, d.roll
        state = gs.cube_state()
        board = gs.position.array()
        values = {}
        rolls = [r for r in ALL_ROLLS if not (opening and r.is_double)]
        for rr in rolls:
            res = legal_results(board, rr.high, rr.low)
            _, s = self.search.value_results(res, self.luck_ply, state, self.met)
            values[rr] = float(s.max())
        weights = np.array([r.weight for r in rolls], dtype=np.float64)
        mean = float(np.dot(weights, [values[r] for r in rolls]) / weights.sum())
        return self.to_emg(state, values[roll] - mean)

    def grade_cube(self, d: Decision, number: int, doubled: bool) -> Graded:
        """The player on roll's double / no double."""
        gs = d.state
        state = gs.cube_state()
        dec = self.engine.cube(gs.position, self.cube_ply, state).decision
        if_doubled = min(dec.double_drop, dec.double_beaver if dec.beaver else dec.double_take)
        scale = state.value if state.is_money else 1.0
        values = {True: if_doubled * scale, False: dec.no_double * scale}
        best = max(values, key=values.get)
        diff = values[best] - values[doubled]
        g = Graded(d.game, number, d.player, "cube", "double" if doubled else "no double",
                   "double" if best else "no double", line=d.line, state=gs, position_id=_pid(gs))
        g.error = self.to_emg(state, max(0.0, diff))
        g.points = g.error * state.value
        g.chosen_value, g.best_value = values[doubled], values[best]
        g.close = doubled or best or self.to_emg(state, values[False] - values[True]) < CLOSE_CUBE
        g.equity_p0 = self._p0(gs, values[doubled], d.player)
        return g

    def grade_response(self, d: Decision, number: int) -> Graded:
        """The doubled player's take / drop / beaver (values for the doubler, negated)."""
        gs = d.state
        state = gs.cube_state()  # the doubler on roll
        dec = self.engine.cube(gs.position, self.cube_ply, state).decision
        scale = state.value if state.is_money else 1.0
        doubler = {"take": dec.double_take * scale, "drop": dec.double_drop * scale}
        if dec.double_beaver is not None:
            doubler["beaver"] = dec.double_beaver * scale
        best = min(doubler, key=doubler.get)
        diff = doubler[d.kind] - doubler[best] if d.kind in doubler else 0.0
        g = Graded(d.game, number, d.player, "take", d.kind, best, line=d.line, state=gs, position_id=_pid(gs),
                   close=True)
        g.error = self.to_emg(state, max(0.0, diff))
        g.points = g.error * state.value
        if gs.is_money:
            g.chosen_value, g.best_value = -doubler.get(d.kind, 0.0), -doubler[best]
        else:
            g.chosen_value, g.best_value = 1.0 - doubler.get(d.kind, 0.0), 1.0 - doubler[best]
        g.equity_p0 = self._p0(gs, g.chosen_value, d.player)
        return g


def _steps(r, k: int) -> list[tuple[int, int]]:
    return [(int(r.steps[k, j, 0]), int(r.steps[k, j, 1])) for j in range(int(r.nsteps[k]))]


def _pid(gs: GameState) -> str:
    return position_id(gs.position)


def analyse(match: ReplayedMatch, grader: Grader, luck: bool = True,
            progress: Callable[[int, int], None] | None = None) -> Analysis:
    """Grade every decision of ``match`` (see the module docstring)."""
    names = match.names
    stats = (PlayerStats(names[0]), PlayerStats(names[1]))
    out: list[Graded] = []
    total = sum(len(g.decisions) for g in match.games)
    done = 0
    for game in match.games:
        number = 0
        first_move = True
        for i, d in enumerate(game.decisions):
            done += 1
            if progress is not None:
                progress(done, total)
            ps = stats[d.player]
            if d.kind == "move":
                number += 1
                if d.could_double:
                    doubled_before = i > 0 and game.decisions[i - 1].kind == "double"
                    if not doubled_before:
                        g = grader.grade_cube(d, number, False)
                        _count_cube(ps, g)
                        out.append(g)
                g = grader.grade_play(d, number)
                ps.moves += 1
                if g.graded:
                    ps.unforced += 1
                    ps.checker_error += g.error
                    ps.checker_points += g.points
                    if g.mark:
                        ps.marks[g.mark] += 1
                    if not g.obvious:
                        ps.non_obvious += 1
                if luck:
                    state = d.state.cube_state()
                    g.luck = grader.luck(d, first_move)
                    g.luck_points = g.luck * state.value
                    ps.luck += g.luck
                    ps.luck_points += g.luck_points
                    ps.luck_per_game[game.number] = ps.luck_per_game.get(game.number, 0.0) + g.luck_points
                first_move = False
                out.append(g)
            elif d.kind == "double":
                number += 1
                g = grader.grade_cube(d, number, True)
                _count_cube(ps, g)
                out.append(g)
            elif d.kind in ("take", "drop", "beaver") and d.state.phase.value == "doubled":
                g = grader.grade_response(d, number)
                _count_cube(ps, g)
                out.append(g)
            else:
                ps.not_graded += 1
                out.append(Graded(d.game, number, d.player, d.kind, d.kind, "", graded=False, line=d.line))
        if game.end is not None:
            w = game.end.winner
            stats[w].result += game.end.points
            stats[1 - w].result -= game.end.points
    for p, q in ((0, 1), (1, 0)):
        stats[p].luck_adjusted = stats[p].result - stats[p].luck_points + stats[q].luck_points
    return Analysis(names, match.match_length, grader.ply, grader.cube_ply, out, stats, match.score)


def _count_cube(ps: PlayerStats, g: Graded) -> None:
    ps.cube_decisions += 1
    if g.close:
        ps.close_cube += 1
        ps.non_obvious += 1
    ps.cube_error += g.error
    ps.cube_points += g.points
    if g.mark:
        ps.cube_marks[g.mark] += 1
