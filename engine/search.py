"""Expectimax search over an :class:`~engine.evaluator.Evaluator`.

**Ply** is the number of plays searched before the evaluator is applied
(``../shared/PROTOCOL.md``):

* For a play with known dice: a **1-ply** play is the play, then the evaluator on each
  resulting position; a **2-ply** play is the play, then the opponent's 21 rolls (weighted
  1/36 for doubles, 2/36 otherwise) and his best reply, then the evaluator; a 3-ply play
  adds our 21 rolls and best replies once more. A 2-ply play's value mixes in a quarter
  of its 1-ply value (:class:`Search`, ``shallow_weight``).
* Before the roll: **0-ply** is the evaluator on the position itself; **1-ply** is the 21
  rolls and the best play for each; **2-ply** adds the opponent's 21 rolls too.
* GNU Backgammon counts differently: its n-ply play is our (n+1)-ply play; its n-ply
  position evaluation is our n-ply evaluation.

Finished games are scored exactly (:func:`engine.evaluator.terminal_probs`), never by the
evaluator. Each level of the tree is one batched ``evaluate`` call: a 2-ply play costs one
call for all candidates at 1 ply and one call for every candidate × 21 rolls × replies.
Before a deeper step the candidates of each roll are pruned at 1 ply by a
:class:`MoveFilter` (keep up to ``max_candidates`` within ``tolerance`` of the best).

Plays are ranked by a *scorer*: cubeless money equity, or the cubeful equity of
:mod:`engine.cube` when the cube state or match score matters. Values at inner nodes are
the weighted averages over the rolls of each side's best choice by that scorer. A cube
decision at ply n evaluates the same tree once per cube state (no double, double/take,
beaver); inside the tree the cube is valued by Janowski's model at the leaves (which
prices each side's cube access) rather than by re-deciding it at every inner node as
GNU Backgammon does.

Cost: a 2-ply play is ~1,500 evaluations for a contact position; a 3-ply play (allowed
for ``best``) prunes again at every level but is ~100 times dearer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from engine.bearoff import in_two_sided, two_sided_cubeful
from engine.cube import CubeOwner, CubeState, cube_efficiency, cubeful_equity
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.evaluator import Evaluator, terminal_probs
from engine.values import cubeless_equity, flip_probs
from engine.met import MatchEquityTable
from engine.batch import board_live, flip_results
from engine.values import mover_values
from engine.movegen import children_batch, legal_results_with_steps
from engine.position import flip_array

NUM_ROLLS = len(ROLL_WEIGHTS)
MAX_PLY_PLAY = 3
MAX_PLY_EVAL = 2


def check_ply(ply: int, for_play: bool) -> None:
    """Raise :class:`SearchError` unless ``ply`` is a valid depth for choosing a play
    (1 to :data:`MAX_PLY_PLAY`) or for valuing a position (0 to :data:`MAX_PLY_EVAL`)."""
    lo, hi, what = (1, MAX_PLY_PLAY, "a play") if for_play else (0, MAX_PLY_EVAL, "a position")
    if not lo <= ply <= hi:
        raise SearchError(f"ply for {what} must be {lo} to {hi}, got {ply}")


class SearchError(ValueError):
    """A request the search cannot answer (bad ply, finished game)."""


@dataclass(frozen=True, slots=True)
class MoveFilter:
    """Which candidates survive the 1-ply pass before a deeper step."""

    max_candidates: int = 8
    """Keep at most this many plays per roll (the best first)."""
    tolerance: float = 0.16
    """Keep only plays within this much equity (scorer units) of the best."""


DEFAULT_FILTER = MoveFilter()

SHALLOW_WEIGHT = 0.25
"""Share of a play's 1-ply value in its value at ply 2 (see :class:`Search`)."""


# --------------------------------------------------------------------------- scorers
class Scorer(Protocol):
    """How the player on roll at a node values probabilities; higher is better for him."""

    def score(self, probs: np.ndarray, boards: np.ndarray, exact: bool = False) -> np.ndarray: ...

    def flip(self) -> "Scorer": ...

    def negate(self, values: np.ndarray) -> np.ndarray: ...


class CubelessScorer:
    """Cubeless money equity."""

    def score(self, probs: np.ndarray, boards: np.ndarray, exact: bool = False) -> np.ndarray:
        return cubeless_equity(probs)

    def flip(self) -> "CubelessScorer":
        return self

    def negate(self, values: np.ndarray) -> np.ndarray:
        return -values


_OWNER_COLUMN = {CubeOwner.CENTRE: 0, CubeOwner.PLAYER: 1, CubeOwner.OPPONENT: 2}
"""Column of :func:`engine.bearoff.two_sided_cubeful` for each cube owner."""


class CubefulScorer:
    """Cubeful equity (money points or MWC) of :mod:`engine.cube` for a cube state; in a
    money game, positions in the two-sided bear-off database's range get its exact
    cubeful equity instead of Janowski's estimate."""

    def __init__(self, state: CubeState, met: MatchEquityTable | None = None) -> None:
        self.state = state
        self.met = met

    def score(self, probs: np.ndarray, boards: np.ndarray, exact: bool = False) -> np.ndarray:
        x = 0.0 if exact else cube_efficiency(boards)
        out = np.atleast_1d(cubeful_equity(probs, self.state, x, self.met))
        if not exact and self.state.is_money and self.state.value < self.state.max_cube:
            # short bear-offs: the exact money cubeful equities of the two-sided database
            b = np.asarray(boards).reshape(-1, 26)
            m = in_two_sided(b)
            if m.any():
                out = np.array(out, dtype=np.float64)
                out[m] = two_sided_cubeful(b[m])[:, _OWNER_COLUMN[self.state.owner]] * self.state.value
        return out

    def flip(self) -> "CubefulScorer":
        return CubefulScorer(self.state.flip(), self.met)

    def negate(self, values: np.ndarray) -> np.ndarray:
        return -values if self.state.is_money else 1.0 - values


def scorer_for(state: CubeState | None, met: MatchEquityTable | None = None) -> Scorer:
    """Cubeless for plain money (centred cube at 1, no Jacoby), else cubeful."""
    if state is None or state.is_plain_money:
        return CubelessScorer()
    return CubefulScorer(state, met)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True, eq=False)
class RankedPlays:
    """Every legal play of a roll, valued; arrays indexed by play, ``order`` best first.

    ``boards`` are the results in the mover's view (opponent to roll next); ``probs`` and
    ``equity`` (cubeless) are for the mover after the play; ``score`` is what ranked them
    (equal to ``equity`` for cubeless ranking); ``ply`` the depth each play was searched to
    (plays pruned by the filter keep their 1-ply value and rank after the searched ones).
    """

    boards: np.ndarray
    steps: np.ndarray
    nsteps: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    score: np.ndarray
    ply: np.ndarray
    order: np.ndarray
    cubeful: bool

    @property
    def best(self) -> int:
        return int(self.order[0])

    def __len__(self) -> int:
        return len(self.order)


@dataclass(frozen=True, slots=True, eq=False)
class PositionValue:
    """Values of one position before the roll, one entry per scorer asked for."""

    probs: np.ndarray
    """(K, 5) probabilities for the player on roll, per scorer (choices may differ)."""
    scores: np.ndarray
    """(K,) the scorers' values."""


# --------------------------------------------------------------------------- search
def _segment_starts(seg: np.ndarray, nseg: int) -> np.ndarray:
    counts = np.bincount(seg, minlength=nseg)
    starts = np.zeros(nseg, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


class Search:
    """Expectimax over an evaluator; see the module docstring for what a ply is.

    A play valued at ply 2 (:meth:`rank_plays`, :meth:`best_in_segments`,
    :meth:`value_results`) gets ``(1 - shallow_weight)`` × its 2-ply value plus
    ``shallow_weight`` × its 1-ply value, probabilities and score alike. The two are
    estimates of the same thing by the same network with different errors (the 2-ply one
    sees the opponent's replies, the 1-ply one not the odd-even swing of a single reply);
    their mix chose better plays than either on Tabla's decision sets, judged by gnubg-nn
    at 2 and at 3 ply (``SHALLOW_WEIGHT``, the model card). ``shallow_weight=0`` gives the
    pure expectimax value; ply 1 and ply 3 plays, and positions before the roll, are
    always pure.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        move_filter: MoveFilter = DEFAULT_FILTER,
        backgammon_counts_two: bool = False,
        shallow_weight: float = SHALLOW_WEIGHT,
    ) -> None:
        if not 0.0 <= shallow_weight <= 1.0:
            raise ValueError(f"shallow_weight must be in [0, 1], got {shallow_weight}")
        self.evaluator = evaluator
        self.move_filter = move_filter
        self.backgammon_counts_two = backgammon_counts_two
        self.shallow_weight = shallow_weight
        self.evaluations = 0
        self.calls = 0

    # ----------------------------------------------------------------- primitives
    def _evaluate(self, boards: np.ndarray, float64: bool = True) -> np.ndarray:
        """The evaluator's probabilities of ``boards``, counted; as float64 unless told not
        to (the 1-ply ranking keeps the evaluator's float32)."""
        if len(boards) == 0:
            return np.zeros((0, 5))
        self.calls += 1
        self.evaluations += len(boards)
        probs = self.evaluator.evaluate(np.ascontiguousarray(boards, dtype=np.int8))
        return np.asarray(probs, dtype=np.float64) if float64 else probs

    def _after_play(
        self, boards: np.ndarray, depth: int, scorers: Sequence[Scorer]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Values of results (mover's view, opponent to roll) for the mover.

        ``depth`` is the ply of the opponent's before-roll evaluation. Returns probs
        (K, M, 5) and scores (K, M), K = len(scorers).
        """
        k, m = len(scorers), len(boards)
        done = ~(boards > 0).any(axis=1)
        if not done.any():
            p_opp, s_opp = self._before_roll(flip_array(boards), depth, [s.flip() for s in scorers])
            probs = flip_probs(p_opp)
            scores = np.stack([s.negate(s_opp[j]) for j, s in enumerate(scorers)])
            return probs, scores
        probs = np.empty((k, m, 5))
        scores = np.empty((k, m))
        if done.any():
            idx = np.flatnonzero(done)
            exact = np.array([terminal_probs(boards[i], self.backgammon_counts_two) for i in idx])
            for j, s in enumerate(scorers):
                probs[j, idx] = exact
                scores[j, idx] = s.score(exact, boards[idx], exact=True)
        live = np.flatnonzero(~done)
        if len(live):
            opp = flip_array(boards[live])
            flipped = [s.flip() for s in scorers]
            p_opp, s_opp = self._before_roll(opp, depth, flipped)
            for j, s in enumerate(scorers):
                probs[j, live] = flip_probs(p_opp[j])
                scores[j, live] = s.negate(s_opp[j])
        return probs, scores

    def _mixes(self, ply: int) -> bool:
        """Whether a play searched to ``ply`` takes a share of its 1-ply value."""
        return ply == 2 and self.shallow_weight > 0.0

    def _mix(
        self, ply: int, deep: tuple[np.ndarray, np.ndarray], shallow: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(probs, scores) of plays searched to ``ply`` from their deep and 1-ply values: the
        ``shallow_weight`` mix where :meth:`_mixes`, else the deep values."""
        if not self._mixes(ply):
            return deep
        w = self.shallow_weight
        return (1.0 - w) * deep[0] + w * shallow[0], (1.0 - w) * deep[1] + w * shallow[1]

    def _prune(self, scores: np.ndarray, seg: np.ndarray, nseg: int) -> np.ndarray:
        """Indices kept by the move filter: per segment the best ``max_candidates`` within tolerance."""
        order = np.lexsort((-scores, seg))
        starts = _segment_starts(seg, nseg)
        sseg = seg[order]
        rank = np.arange(len(order)) - starts[sseg]
        best = scores[order[starts]]
        keep = (rank < self.move_filter.max_candidates) & (scores[order] >= best[sseg] - self.move_filter.tolerance)
        return np.sort(order[keep])

    def _before_roll(
        self, boards: np.ndarray, depth: int, scorers: Sequence[Scorer]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Values of positions (player on roll, game not over) for the player on roll."""
        k, n = len(scorers), len(boards)
        if depth == 0:
            p = self._evaluate(boards)
            if k == 1:
                return p[None], scorers[0].score(p, boards)[None]
            probs = np.repeat(p[None], k, axis=0)
            scores = np.stack([s.score(p, boards) for s in scorers]) if n else np.zeros((k, 0))
            return probs, scores
        rep = np.repeat(np.ascontiguousarray(boards), NUM_ROLLS, axis=0)
        dice = np.tile(ROLL_ARRAY, (n, 1))
        children, offsets = children_batch(rep, dice)
        nseg = n * NUM_ROLLS
        seg = np.repeat(np.arange(nseg), np.diff(offsets))
        if depth >= 2:
            _, s1 = self._after_play(children, 0, scorers[:1])
            keep = self._prune(s1[0], seg, nseg)
            children, seg = children[keep], seg[keep]
        cp, cs = self._after_play(children, depth - 1, scorers)
        starts = _segment_starts(seg, nseg)
        probs = np.empty((k, n, 5))
        scores = np.empty((k, n))
        for j in range(k):
            order = np.lexsort((-cs[j], seg))
            chosen = order[starts]
            probs[j] = np.einsum("r,nrc->nc", ROLL_WEIGHTS, cp[j][chosen].reshape(n, NUM_ROLLS, 5))
            scores[j] = cs[j][chosen].reshape(n, NUM_ROLLS) @ ROLL_WEIGHTS
        return probs, scores

    # ----------------------------------------------------------------- public
    def rank_plays(
        self,
        board: np.ndarray,
        d1: int,
        d2: int,
        ply: int = 1,
        state: CubeState | None = None,
        met: MatchEquityTable | None = None,
        min_candidates: int = 1,
    ) -> RankedPlays:
        """Every legal play of ``d1``-``d2`` from ``board`` (player on roll), ranked at ``ply``.

        At the root the move filter keeps at least the ``min_candidates`` best 1-ply plays
        (e.g. all the plays a hint will show), whatever their distance to the best.
        """
        check_ply(ply, for_play=True)
        board = np.ascontiguousarray(board, dtype=np.int8)
        if not board_live(board):
            raise SearchError("the game in this position is already over")
        scorer = scorer_for(state, met)
        results, steps, nsteps = legal_results_with_steps(board, d1, d2)
        if ply == 1 and isinstance(scorer, CubelessScorer):
            # the common case, kept lean: one evaluator call and two compiled helpers
            opp, live = flip_results(results)
            if live:  # no play ends the game (those are scored exactly below)
                probs, equity, order = mover_values(self._evaluate(opp, float64=False))
                return RankedPlays(
                    boards=results,
                    steps=steps,
                    nsteps=nsteps,
                    probs=probs,
                    equity=equity,
                    score=equity,
                    ply=np.ones(len(results), np.int64),
                    order=order,
                    cubeful=False,
                )
        probs1, scores1 = self._after_play(results, 0, [scorer])
        probs, scores = probs1[0].copy(), scores1[0].copy()
        plies = np.ones(len(results), np.int64)
        if ply >= 2:
            keep = self._prune(scores, np.zeros(len(results), np.int64), 1)
            if len(keep) < min_candidates:
                keep = np.sort(np.argsort(-scores, kind="stable")[:min_candidates])
            pd, sd = self._after_play(results[keep], ply - 1, [scorer])
            probs[keep], scores[keep] = self._mix(ply, (pd[0], sd[0]), (probs[keep], scores[keep]))
            plies[keep] = ply
        order = np.lexsort((-scores, -plies))
        return RankedPlays(
            boards=results,
            steps=steps,
            nsteps=nsteps,
            probs=probs,
            equity=cubeless_equity(probs),
            score=scores,
            ply=plies,
            order=order,
            cubeful=not isinstance(scorer, CubelessScorer),
        )

    def best_in_segments(self, children: np.ndarray, offsets: np.ndarray, ply: int) -> tuple[np.ndarray, np.ndarray]:
        """The best play of each of many rolls at ``ply`` (1-3), ranked by cubeless equity.

        ``children``/``offsets`` as :func:`engine.movegen.children_batch` returns them (mover's
        view, opponent to roll; every segment non-empty). Returns the index of the chosen
        child of each segment and its probabilities for the mover, (S,) and (S, 5).
        """
        check_ply(ply, for_play=True)
        nseg = len(offsets) - 1
        seg = np.repeat(np.arange(nseg), np.diff(offsets))
        scorer = [CubelessScorer()]
        p1, s1 = self._after_play(children, 0, scorer)
        probs, scores = p1[0].copy(), s1[0].copy()
        plies = np.ones(len(children), np.int64)
        if ply >= 2:
            keep = self._prune(scores, seg, nseg)
            pd, sd = self._after_play(children[keep], ply - 1, scorer)
            probs[keep], scores[keep] = self._mix(ply, (pd[0], sd[0]), (probs[keep], scores[keep]))
            plies[keep] = ply
        order = np.lexsort((-scores, -plies, seg))
        chosen = order[_segment_starts(seg, nseg)]
        return chosen, probs[chosen]

    def value_results(
        self,
        results: np.ndarray,
        ply: int = 1,
        state: CubeState | None = None,
        met: MatchEquityTable | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(probs, scores)`` for the mover of play results (mover's view, opponent to
        roll) searched to ``ply`` like :meth:`rank_plays`, without the move filter (e.g. to
        value a play the filter pruned at the same depth as the best)."""
        check_ply(ply, for_play=True)
        boards = np.ascontiguousarray(np.asarray(results, dtype=np.int8).reshape(-1, 26))
        scorer = [scorer_for(state, met)]
        probs, scores = self._after_play(boards, ply - 1, scorer)
        if self._mixes(ply):
            p1, s1 = self._after_play(boards, 0, scorer)
            return self._mix(ply, (probs[0], scores[0]), (p1[0], s1[0]))
        return probs[0], scores[0]

    def evaluate_position(
        self,
        board: np.ndarray,
        ply: int = 0,
        states: Sequence[CubeState | None] = (None,),
        met: MatchEquityTable | None = None,
    ) -> PositionValue:
        """Values before the roll at ``ply`` for each state (``None`` = cubeless).

        A cubeless entry's score is cubeless equity; a state's is cubeful (points or MWC).
        """
        check_ply(ply, for_play=False)
        board = np.ascontiguousarray(board, dtype=np.int8).reshape(1, 26)
        if not board_live(board[0]):
            raise SearchError("the game in this position is already over")
        scorers = [CubelessScorer() if s is None else CubefulScorer(s, met) for s in states]
        probs, scores = self._before_roll(board, ply, scorers)
        return PositionValue(probs=np.array(probs[:, 0]), scores=np.array(scores[:, 0]))
