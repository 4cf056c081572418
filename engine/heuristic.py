"""A hand-written evaluator: pip-count race formula plus safety terms, vectorised.

It implements :class:`engine.evaluator.Evaluator` so that everything can be played end
to end before a trained network exists. It is honest and simple, not strong.

All quantities are for the player on roll (who rolls next), on a batch of boards:

* **Race** (no contact): the on-roll lead ``L = opp_pips - my_pips + 4`` (being on roll
  is worth about half a roll) over the spread ``s = 1.7 * sqrt(mean pips)`` gives
  ``P(win) = Phi(L / s)`` (a normal approximation of the race). Gammon chances: the
  rolls the trailer needs to bring every checker home and bear one off, against the
  rolls the leader needs to finish (8.17 pips a roll), through the same normal curve.
* **Contact**: ``P(win) = sigmoid(z)`` with ``z`` a weighted sum of
  - the race lead ``L / s`` (weight 1.2),
  - ``hit``: the chance (out of 36 rolls, blocking ignored) that the player on roll hits
    an opposing blot now (+1.1), and ``exposure``: the same chance for the opponent
    against the roller's blots, which the roller can still tidy with his roll (-0.35),
  - checkers on the bar, each weighted by the number of closed points in the home board
    they must enter (-0.12 per checker and point, both sides),
  - home-board points made (+0.09 each, both sides), the longest prime (+0.12 per point
    beyond 2, both sides) and advanced anchors in the opponent's board (+0.1 each).
  Gammon shares grow with the loser's checkers back (bar and the winner's home and outer
  board), the winner's home-board points, and are zero once the loser has borne off.
* Finished games get their exact result.

Consistency (``win_bg <= win_g <= win``, ``lose_bg <= lose_g <= 1 - win``) holds by
construction.
"""
from __future__ import annotations

import math

import numpy as np

from engine.dice import ALL_ROLLS, ROLL_WEIGHTS

PIPS_PER_ROLL = 8.17
_ON_ROLL_PIPS = 4.0


def _roll_reach() -> np.ndarray:
    """(21, 25) bool: distances 1..24 one checker can travel with each of the 21 rolls."""
    reach = np.zeros((len(ALL_ROLLS), 25), bool)
    for k, r in enumerate(ALL_ROLLS):
        if r.is_double:
            dists = [r.high * i for i in range(1, 5)]
        else:
            dists = [r.high, r.low, r.high + r.low]
        for d in dists:
            if d <= 24:
                reach[k, d] = True
    return reach


_REACH = _roll_reach()
_PHI_SCALE = 1.0 / math.sqrt(2.0)


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error < 1.5e-7), vectorised."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _phi(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF, vectorised (no scipy)."""
    return 0.5 * (1.0 + _erf(np.asarray(x, float) * _PHI_SCALE))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _shot_chance(attacker: np.ndarray, blots: np.ndarray) -> np.ndarray:
    """Chance out of 36 that the attacker (moving from high to low points, bar = 25) hits
    any of ``blots``; both (N, 26) bool/count arrays in the attacker's numbering."""
    n = attacker.shape[0]
    dist = np.zeros((n, 25), bool)
    a = attacker > 0
    b = blots[:, 1:25].astype(bool)
    for d in range(1, 25):
        # a blot on point p is d away from an attacker checker on p + d (the bar is 25)
        dist[:, d] = np.any(b[:, : 25 - d] & a[:, 1 + d : 26], axis=1)
    hit = (dist[:, None, :] & _REACH[None, :, :]).any(axis=2)
    return hit.astype(float) @ ROLL_WEIGHTS


def _longest_run(made: np.ndarray) -> np.ndarray:
    """Longest run of consecutive True along axis 1."""
    run = np.zeros(made.shape[0], int)
    best = np.zeros(made.shape[0], int)
    for i in range(made.shape[1]):
        run = np.where(made[:, i], run + 1, 0)
        best = np.maximum(best, run)
    return best


class HeuristicEvaluator:
    """Pip count and safety based probabilities; see the module docstring."""

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        b = np.asarray(boards, dtype=np.int64).reshape(-1, 26)
        n = b.shape[0]
        me = np.clip(b, 0, None)
        opp_raw = np.clip(-b, 0, None)  # opponent counts at our indices (0 = his bar)
        opp = opp_raw[:, ::-1]  # opponent in his own numbering, 25 = his bar
        idx = np.arange(26)
        my_pips = (me * idx).sum(1)
        opp_pips = (opp * idx).sum(1)
        my_on = me.sum(1)
        opp_on = opp.sum(1)
        out = np.zeros((n, 5))

        over_win = my_on == 0
        over_lose = opp_on == 0
        my_back = np.where(me[:, 1:26].any(1), 25 - np.argmax(me[:, :0:-1] > 0, axis=1), 0)
        opp_back_ours = np.where(opp_raw[:, 0:25].any(1), np.argmax(opp_raw[:, 0:25] > 0, axis=1), 25)
        race = my_back < opp_back_ours

        mean_pips = np.maximum((my_pips + opp_pips) / 2.0, 1.0)
        spread = 1.7 * np.sqrt(mean_pips) + 1.0
        lead = (opp_pips - my_pips + _ON_ROLL_PIPS) / spread

        # --- race
        p_race = _phi(lead)
        my_home_need = (me[:, 7:26] * (idx[7:26] - 6)).sum(1)
        opp_home_need = (opp[:, 7:26] * (idx[7:26] - 6)).sum(1)
        my_finish = my_pips / PIPS_PER_ROLL + 0.5 * my_on / 15.0 * 2.0
        opp_finish = opp_pips / PIPS_PER_ROLL + 0.5 * opp_on / 15.0 * 2.0
        my_gammon_need = my_home_need / PIPS_PER_ROLL + 1.0
        opp_gammon_need = opp_home_need / PIPS_PER_ROLL + 1.0
        gspread = np.sqrt(np.maximum(mean_pips, 1.0)) / 6.0 + 0.7
        my_off = 15 - my_on
        opp_off = 15 - opp_on
        # the roller is gammoned if he cannot get one off before the opponent finishes
        race_lg = np.where(my_off == 0, _phi((my_gammon_need - (opp_finish - 0.5)) / gspread), 0.0)
        race_wg = np.where(opp_off == 0, _phi((opp_gammon_need - my_finish - 0.5) / gspread), 0.0)

        # --- contact
        my_blots = b[:, 1:25] == 1
        opp_blots = b[:, 1:25] == -1
        blots_opp_full = np.zeros((n, 26), bool)
        blots_opp_full[:, 1:25] = opp_blots
        hit = _shot_chance(me, blots_opp_full)
        my_blots_theirs = np.zeros((n, 26), bool)
        my_blots_theirs[:, 1:25] = my_blots[:, ::-1]
        exposure = _shot_chance(opp, my_blots_theirs)
        my_home_made = (b[:, 1:7] >= 2)
        opp_home_made = (b[:, 19:25] <= -2)
        my_made = b[:, 1:25] >= 2
        opp_made = (b[:, 1:25] <= -2)[:, ::-1]
        my_prime = _longest_run(my_made)
        opp_prime = _longest_run(opp_made)
        my_anchor = (b[:, 18:25] >= 2).sum(1)  # my points in his home/bar-point area
        opp_anchor = (b[:, 1:8] <= -2).sum(1)
        z = (
            1.2 * lead
            + 1.1 * hit
            - 0.35 * exposure
            - 0.12 * me[:, 25] * opp_home_made.sum(1)
            + 0.12 * opp[:, 25] * my_home_made.sum(1)
            + 0.09 * (my_home_made.sum(1) - opp_home_made.sum(1))
            + 0.12 * (np.maximum(my_prime - 2, 0) - np.maximum(opp_prime - 2, 0))
            + 0.10 * (my_anchor - opp_anchor)
        )
        p_contact = _sigmoid(z)
        my_back_count = me[:, 25] + me[:, 13:25].sum(1)  # in his home and outer board
        opp_back_count = opp[:, 25] + opp[:, 13:25].sum(1)
        wg_share = np.clip(0.06 + 0.035 * opp_back_count + 0.02 * my_home_made.sum(1)
                           + 0.05 * opp[:, 25], 0.0, 0.6)
        lg_share = np.clip(0.06 + 0.035 * my_back_count + 0.02 * opp_home_made.sum(1)
                           + 0.05 * me[:, 25], 0.0, 0.6)
        wg_share = np.where(opp_off > 0, 0.0, wg_share)
        lg_share = np.where(my_off > 0, 0.0, lg_share)

        win = np.where(race, p_race, p_contact)
        win = np.clip(win, 0.001, 0.999)
        wg = np.where(race, np.minimum(race_wg, win), win * wg_share)
        lg = np.where(race, np.minimum(race_lg, 1.0 - win), (1.0 - win) * lg_share)
        # backgammons: a share of gammons when the loser still has checkers back
        opp_in_my_home = opp[:, 19:26].sum(1) > 0
        me_in_his_home = me[:, 19:26].sum(1) > 0
        wbg = np.where(opp_in_my_home, 0.15 * wg, 0.0)
        lbg = np.where(me_in_his_home, 0.15 * lg, 0.0)
        out[:, 0] = win
        out[:, 1] = wg
        out[:, 2] = wbg
        out[:, 3] = lg
        out[:, 4] = lbg

        # finished games: exact
        if over_win.any() or over_lose.any():
            for i in np.nonzero(over_win | over_lose)[0]:
                out[i] = _terminal(b[i])
        return out


def _terminal(board: np.ndarray) -> np.ndarray:
    from engine.evaluator import terminal_probs

    return terminal_probs(board)
