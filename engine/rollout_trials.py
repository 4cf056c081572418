"""The batched trial loop of a rollout: many trials advance together, as self-play does.

:func:`run_trials` plays the given trial numbers from one position (player on roll) and
returns one row per trial. A fixed number of *slots* hold the trials in play; each step
is one move generation and one evaluator call for every slot, and a finished trial's slot
takes the next trial number. A trial's game depends only on ``(seed, trial number)``
(:mod:`engine.rollout_dice`) and on the evaluator's values for its own positions, so the
rows are the same whatever slice, batch or worker plays it.

Inside a trial every play is the best at ``ply`` (protocol numbering: 1 = the evaluator on
each result) by cubeless equity; the cube, with ``cubeful``, is turned by the 0-ply
decisions of :func:`engine.cube.decide` on Janowski's cubeful equities, and a passed
double freezes the trial's cubeful value while the game goes on to give its cubeless
result. A trial ends when the game ends, or after ``truncate`` half-moves with the
evaluator's value of the position there (or the bearoff databases' for a position in their
range, :meth:`TrialLoop.cut_values`).

**Luck** (variance reduction). For each roll, the values after the best play of each of
the 21 rolls are found (one ``children_batch`` over the slots × 21 rolls, one evaluator
call); the luck of the roll is the value for the roll rolled minus their weighted mean.
It is accumulated from the rollout player's side (probabilities, and with ``cubeful`` the
cubeful equity for the trial's cube) and subtracted from the trial's result. Its mean is
zero at every step, so the adjusted mean is unbiased; its variance is smaller.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine import bearoff
from engine.bearoff_build import TWO_SIDED_CHECKERS
from engine.batch import flip_results, result_points, segment_argmax
from engine.cube import CubeOwner, CubeState, cube_efficiency, cubeful_equity, decide
from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
from engine.evaluator import Evaluator
from engine.values import cubeless_equity, flip_probs
from engine.movegen import children_batch
from engine.position import flip_array
from engine.rollout_dice import BLOCK, ORDERED_DICE, ORDERED_TO_21, quasi_rolls, stream_block
from engine.search import Search

MAX_HALF_MOVES = 2000
"""A game still going after this many half-moves is cut there like a truncated one."""

EVAL_CHUNK = 32768
"""Boards per evaluator call at most (bounds the memory of the encoded inputs)."""

_EXACT = np.array(
    [[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=np.float64
)  # the mover's probabilities after a play that won 0 (not over), 1, 2 or 3 points

_CENTRE, _ROOT, _OTHER = 0, 1, 2  # cube owner relative to the rollout player


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """What a trial plays: ply, truncation, cube, variance reduction, seed."""

    ply: int = 1
    truncate: int | None = None
    cubeful: bool = False
    variance_reduction: bool = True
    seed: int = 1
    state: CubeState = CubeState()
    """The cube at the start (money); used only with ``cubeful``."""
    bearoff: bool = True
    """At a cut, the bearoff databases' values for positions in their range."""


@dataclass(frozen=True, slots=True, eq=False)
class TrialRows:
    """One row per trial, from the rollout player's side (the player on roll at the start).

    ``probs``: the result (exact 0/1 values, or the evaluator's at a cut); ``luck``: the
    summed luck of the trial's rolls (zeros without variance reduction); ``cubeful`` and
    ``cubeful_luck``: the same for the cubeful money value, in units of the starting cube.
    """

    trials: np.ndarray
    probs: np.ndarray
    luck: np.ndarray
    cubeful: np.ndarray
    cubeful_luck: np.ndarray
    half_moves: np.ndarray

    @staticmethod
    def concat(parts: list["TrialRows"]) -> "TrialRows":
        """Rows of several slices, sorted by trial number."""
        fields = {f: np.concatenate([getattr(p, f) for p in parts]) for f in TrialRows.__slots__}
        order = np.argsort(fields["trials"], kind="stable")
        return TrialRows(**{k: v[order] for k, v in fields.items()})


def _to_root(probs: np.ndarray, root_moves: np.ndarray) -> np.ndarray:
    """Probabilities of the mover, seen by the rollout player (flipped where he is not the mover)."""
    out = np.array(probs, dtype=np.float64)
    other = ~root_moves
    if other.any():
        out[other] = flip_probs(out[other])
    return out


class TrialLoop:
    """Plays trials of one position; see the module docstring."""

    def __init__(self, evaluator: Evaluator, board: np.ndarray, spec: TrialSpec) -> None:
        self.evaluator = evaluator
        self.board = np.ascontiguousarray(board, dtype=np.int8)
        self.spec = spec
        self.search = Search(evaluator)
        self.evaluations = 0

    # ----------------------------------------------------------------- values
    def _evaluate(self, boards: np.ndarray) -> np.ndarray:
        n = len(boards)
        self.evaluations += n
        if n <= EVAL_CHUNK:
            return np.asarray(self.evaluator.evaluate(np.ascontiguousarray(boards, dtype=np.int8)), dtype=np.float64)
        parts = [self.evaluator.evaluate(np.ascontiguousarray(boards[a:a + EVAL_CHUNK])) for a in range(0, n, EVAL_CHUNK)]
        return np.concatenate(parts).astype(np.float64)

    def _best_plays(self, boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The best play of each ``boards[k]`` rolling ``dice[k]``: the board after it (mover's
        view), the mover's probabilities there, and the points it won (0 = game goes on)."""
        children, offsets = children_batch(boards, dice)
        if self.spec.ply == 1:
            opp, all_live = flip_results(children)
            if all_live:  # the common case, kept lean: no play ends the game
                p_opp = self._evaluate(opp)
                idx = segment_argmax(-cubeless_equity(p_opp), offsets)
                return children[idx], flip_probs(p_opp[idx]), np.zeros(len(idx), np.int64)
        points = result_points(children)
        if self.spec.ply == 1:
            live = points == 0
            probs = _EXACT[points]
            if live.any():
                probs[live] = flip_probs(self._evaluate(flip_array(children[live])))
            idx = segment_argmax(cubeless_equity(probs), offsets)
            return children[idx], probs[idx], points[idx]
        before = self.search.evaluations
        idx, probs = self.search.best_in_segments(children, offsets, self.spec.ply)
        self.evaluations += self.search.evaluations - before
        return children[idx], probs, points[idx]

    def cut_values(self, boards: np.ndarray, values: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values of the player on roll where a trial is cut: probabilities and (with
        ``cubeful``) money cubeful equity for his cube (value, owner code seen by him).

        The evaluator's, or with ``bearoff`` for positions in the bearoff databases their
        values: exact two-sided (win chance, cubeful equity) for up to 6 checkers a side,
        else the one-sided distributions' probabilities (cubeful by Janowski's model)."""
        n = len(boards)
        probs = np.empty((n, 5))
        cf = np.zeros(n)
        home = two = np.zeros(n, bool)
        if self.spec.bearoff:
            home, _, count = bearoff.analyse(boards)
            two = home & (count.max(axis=1) <= TWO_SIDED_CHECKERS)
        net = ~home
        if net.any():
            probs[net] = self._evaluate(boards[net])
        one = home & ~two
        if one.any():
            probs[one] = bearoff.one_sided_probs(boards[one])
        if self.spec.cubeful:
            cf[~two] = self._cubeful(probs[~two], boards[~two], values[~two], owners[~two])
        if two.any():
            probs[two] = bearoff.two_sided_probs(boards[two])
            if self.spec.cubeful:
                cf[two] = bearoff.two_sided_cubeful(boards[two])[np.arange(int(two.sum())), owners[two]] * values[two]
        return probs, cf

    def _cubeful(self, probs: np.ndarray, boards: np.ndarray, values: np.ndarray, owners: np.ndarray) -> np.ndarray:
        """Janowski cubeful money equity for the player on roll of each board, per cube."""
        out = np.empty(len(probs))
        x = cube_efficiency(boards)
        key = values * 4 + owners
        for k in np.unique(key):
            sel = key == k
            st = self._state(int(k) // 4, int(k) % 4)
            out[sel] = cubeful_equity(probs[sel], st, x[sel])
        return out

    def _state(self, value: int, owner: int) -> CubeState:
        """The mover's cube state from a value and an owner code seen by the mover
        (0 centre, 1 the mover, 2 the other)."""
        o = (CubeOwner.CENTRE, CubeOwner.PLAYER, CubeOwner.OPPONENT)[owner]
        s = self.spec.state
        return CubeState(value=value, owner=o, jacoby=s.jacoby, max_cube=s.max_cube)

    # ----------------------------------------------------------------- the loop
    def run(self, trials: np.ndarray, slots: int, on_rows: Callable[[TrialRows], None] | None = None,
            every: float = 0.5, starts: np.ndarray | None = None) -> TrialRows:
        """Play ``trials`` (trial numbers), ``slots`` at a time; ``on_rows`` gets the rows
        finished so far at most every ``every`` seconds (for a progress display).

        ``starts`` (one board per trial, player on roll) plays each trial from its own
        position instead of the loop's; each row is then seen by the player on roll at its
        trial's start. Trials of equal numbers from different starts roll the same dice."""
        spec = self.spec
        trials = np.asarray(trials, dtype=np.int64)
        n = len(trials)
        if starts is not None and np.shape(starts) != (n, 26):
            raise ValueError(f"starts must hold one board per trial, ({n}, 26), got {np.shape(starts)}")
        rows_probs = np.zeros((n, 5))
        rows_luck = np.zeros((n, 5))
        rows_cf = np.zeros(n)
        rows_cf_luck = np.zeros(n)
        rows_len = np.zeros(n, np.int64)
        s = max(1, min(slots, n))
        first, second = quasi_rolls(spec.seed, trials)
        slot_row = np.full(s, -1, np.int64)  # row (index into trials) each slot plays
        boards = np.zeros((s, 26), np.int8)
        t = np.zeros(s, np.int64)
        dice = np.zeros((s, 2 + BLOCK), np.int64)
        block = np.zeros(s, np.int64)
        luck = np.zeros((s, 5))
        cf_luck = np.zeros(s)
        cube_v = np.full(s, spec.state.value, np.int64)
        cube_o = np.zeros(s, np.int64)
        cube_live = np.ones(s, bool)
        cf_value = np.zeros(s)
        start_owner = {CubeOwner.CENTRE: _CENTRE, CubeOwner.PLAYER: _ROOT, CubeOwner.OPPONENT: _OTHER}[spec.state.owner]
        limit = min(spec.truncate or MAX_HALF_MOVES, MAX_HALF_MOVES)
        nxt = 0
        done = np.zeros(n, bool)
        last = time.perf_counter()

        def load(k: int) -> None:
            nonlocal nxt
            if nxt >= n:
                slot_row[k] = -1
                return
            i = nxt
            nxt += 1
            slot_row[k] = i
            boards[k] = self.board if starts is None else starts[i]
            t[k] = 0
            dice[k, 0], dice[k, 1] = first[i], second[i]
            dice[k, 2:] = stream_block(spec.seed, int(trials[i]), 0)
            block[k] = 0
            luck[k] = 0.0
            cf_luck[k] = 0.0
            cube_v[k] = spec.state.value
            cube_o[k] = start_owner
            cube_live[k] = True
            cf_value[k] = 0.0

        def finish(k: int, probs_root: np.ndarray, cf_root: float) -> None:
            i = slot_row[k]
            rows_probs[i] = probs_root
            rows_luck[i] = luck[k]
            rows_cf[i] = (cf_root if cube_live[k] else cf_value[k]) / spec.state.value
            rows_cf_luck[i] = cf_luck[k] / spec.state.value
            rows_len[i] = t[k]
            done[i] = True
            load(k)

        for k in range(s):
            load(k)
        while (slot_row >= 0).any():
            if on_rows is not None and time.perf_counter() - last > every:
                last = time.perf_counter()
                on_rows(TrialRows(trials=trials[done], probs=rows_probs[done], luck=rows_luck[done], cubeful=rows_cf[done],
                                  cubeful_luck=rows_cf_luck[done], half_moves=rows_len[done]))
            act = np.flatnonzero(slot_row >= 0)
            root_moves = t[act] % 2 == 0
            # owner code seen by the mover: 0 centre, 1 the mover, 2 the other
            own = cube_o[act]
            mover_owner = np.where(own == _CENTRE, 0, np.where((own == _ROOT) == root_moves, 1, 2))
            sign = np.where(root_moves, 1.0, -1.0)
            if spec.cubeful:
                self._cube_actions(act, boards, cube_v, cube_o, cube_live, cf_value, mover_owner, sign, root_moves)
                own = cube_o[act]
                mover_owner = np.where(own == _CENTRE, 0, np.where((own == _ROOT) == root_moves, 1, 2))
            # this half-move's roll, refreshing a trial's stream past its block
            for k in act[t[act] >= 2 + BLOCK * (block[act] + 1)]:
                block[k] += 1
                dice[k, 2:] = stream_block(spec.seed, int(trials[slot_row[k]]), int(block[k]))
            col = np.where(t[act] < 2, t[act], 2 + (t[act] - 2) % BLOCK)
            rolled = dice[act, col]
            if spec.variance_reduction:
                after, p_after, pts = self._luck_step(act, boards, rolled, root_moves, mover_owner, sign,
                                                      cube_v, cube_live, luck, cf_luck)
            else:
                after, p_after, pts = self._best_plays(boards[act], ORDERED_DICE[rolled])
            t[act] += 1
            ended = pts > 0
            for j in np.flatnonzero(ended):
                k = act[j]
                pr = _to_root(p_after[j:j + 1], root_moves[j:j + 1])[0]
                v = 1 if spec.state.jacoby and cube_o[k] == _CENTRE else int(pts[j])
                finish(k, pr, sign[j] * v * cube_v[k])
            going = np.flatnonzero(~ended)
            if len(going) == 0:
                continue
            ks = act[going]
            boards[ks] = flip_array(after[going])
            cut = going[t[ks] >= limit]
            if len(cut):
                kc = act[cut]
                next_root = ~root_moves[cut]  # the next mover's values, before his roll
                own_n = cube_o[kc]
                owner_n = np.where(own_n == _CENTRE, 0, np.where((own_n == _ROOT) == next_root, 1, 2))
                p_next, cf = self.cut_values(boards[kc], cube_v[kc], owner_n)
                pr = _to_root(p_next, next_root)
                cf = cf * np.where(next_root, 1.0, -1.0)
                for j, k in enumerate(kc):
                    finish(k, pr[j], cf[j])
        return TrialRows(trials=trials, probs=rows_probs, luck=rows_luck, cubeful=rows_cf,
                         cubeful_luck=rows_cf_luck, half_moves=rows_len)

    # ----------------------------------------------------------------- steps
    def _cube_actions(self, act, boards, cube_v, cube_o, cube_live, cf_value, mover_owner, sign, root_moves) -> None:
        """Before the roll: the mover doubles when Tabla's 0-ply decision says so."""
        may = cube_live[act] & (mover_owner != 2) & (cube_v[act] * 2 <= self.spec.state.max_cube)
        idx = np.flatnonzero(may)
        if len(idx) == 0:
            return
        ks = act[idx]
        probs = self._evaluate(boards[ks])
        v, o = cube_v[ks], mover_owner[idx]
        nd = self._cubeful(probs, boards[ks], v, o)
        dt = self._cubeful(probs, boards[ks], 2 * v, np.full(len(ks), 2))
        for j, k in enumerate(ks):
            d = decide(self._state(int(v[j]), int(o[j])), float(nd[j]), float(dt[j]), float(v[j]))
            if not d.double:
                continue
            if d.take:
                cube_v[k] *= 2
                cube_o[k] = _OTHER if root_moves[idx[j]] else _ROOT
            else:
                cube_live[k] = False
                cf_value[k] = sign[idx[j]] * v[j]

    def _luck_step(self, act, boards, rolled, root_moves, mover_owner, sign, cube_v, cube_live, luck, cf_luck):
        """Best plays of all 21 rolls for each distinct board; luck of the roll rolled."""
        spec = self.spec
        cur = boards[act]
        uniq, inv = np.unique(cur, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        u = len(uniq)
        rep = np.repeat(uniq, 21, axis=0)
        after, p_after, pts = self._best_plays(rep, np.tile(ROLL_ARRAY, (u, 1)))
        p_after = p_after.reshape(u, 21, 5)
        mean = (p_after * ROLL_WEIGHTS[None, :, None]).sum(axis=1)  # row by row: no BLAS, same in any batch
        r21 = ORDERED_TO_21[rolled]
        pick = inv * 21 + r21
        got = p_after.reshape(-1, 5)[pick]
        luck[act] += _to_root(got, root_moves) - _to_root(mean[inv], root_moves)
        if spec.cubeful:
            live = np.flatnonzero(cube_live[act])
            if len(live):
                self._cubeful_luck(act[live], inv[live], after.reshape(u, 21, 26), p_after, pts.reshape(u, 21),
                                   r21[live], mover_owner[live], sign[live], cube_v, cf_luck)
        return after[pick], got, pts[pick]

    def _cubeful_luck(self, ks, inv, after, p_after, pts, r21, mover_owner, sign, cube_v, cf_luck) -> None:
        """Luck of the roll in cubeful equity: the mover's cubeful value after the best play
        of each roll (the opponent on roll with the same cube) minus its mean."""
        m = len(ks)
        opp_boards = flip_array(after[inv].reshape(m * 21, 26))
        opp_probs = flip_probs(p_after[inv].reshape(m * 21, 5))
        v = np.repeat(cube_v[ks], 21)
        opp_owner = np.repeat(np.where(mover_owner == 0, 0, 3 - mover_owner), 21)
        f = -self._cubeful(opp_probs, opp_boards, v, opp_owner)
        won = pts[inv].reshape(-1)
        if (won > 0).any():
            j = won > 0
            jac = self.spec.state.jacoby & (np.repeat(mover_owner, 21)[j] == 0)
            f[j] = v[j] * np.where(jac, 1, won[j])
        f = f.reshape(m, 21)
        got = f[np.arange(m), r21]
        cf_luck[ks] += sign * (got - (f * ROLL_WEIGHTS).sum(axis=1))


def run_trials(
    evaluator: Evaluator,
    board: np.ndarray,
    spec: TrialSpec,
    trials: np.ndarray,
    slots: int = 256,
    on_rows: Callable[[TrialRows], None] | None = None,
) -> TrialRows:
    """Rows of the given trial numbers (a worker runs one slice); see :class:`TrialLoop`."""
    return TrialLoop(evaluator, board, spec).run(trials, slots, on_rows)
