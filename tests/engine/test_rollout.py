"""Rollouts: dice strata, exact values with a fake evaluator, luck, workers, errors."""
from __future__ import annotations

import json

import numpy as np
from fake_evaluators import PipEvaluator
import pytest

from engine.dice import ALL_ROLLS, ROLL_WEIGHTS
from engine.values import cubeless_equity
from engine.position import Position
from engine.rollout import RolloutError, RolloutSettings, rollout, rollout_plays
from engine.rollout_dice import ORDERED_DICE, ORDERED_TO_21, quasi_rolls, trial_rolls
from engine.rollout_trials import TrialSpec, run_trials
from engine.search import Search

START = Position.start().array()


def contact_positions(n: int, seed: int = 3) -> list[np.ndarray]:
    from engine.randpos import random_game_positions

    rng = np.random.default_rng(seed)
    out = []
    for b in random_game_positions(rng, 20 * n):
        p = Position.from_array(b)
        if not p.is_race() and not p.is_game_over():
            out.append(np.asarray(b, np.int8))
            if len(out) == n:
                break
    return out


# --------------------------------------------------------------------------- dice
def test_first_roll_is_trial_mod_36_and_pairs_cover_1296_once():
    first, second = quasi_rolls(7, np.arange(1296))
    assert (first == np.arange(1296) % 36).all()
    pairs = set(zip(first.tolist(), second.tolist()))
    assert len(pairs) == 1296
    # the first 36 trials already see 36 different second rolls
    assert len(set(second[:36].tolist())) == 36
    # and the next block of 1296 covers every pair again
    f2, s2 = quasi_rolls(7, np.arange(1296, 2592))
    assert len(set(zip(f2.tolist(), s2.tolist()))) == 1296


def test_dice_of_a_trial_depend_only_on_seed_and_trial_number():
    a = trial_rolls(5, 1000, 600)
    assert (a == trial_rolls(5, 1000, 600)).all()
    assert not (a == trial_rolls(6, 1000, 600)).all()
    assert ((a >= 0) & (a < 36)).all()
    f, s = quasi_rolls(5, np.array([1000]))
    assert a[0] == f[0] and a[1] == s[0]


def test_ordered_rolls_map_to_the_21_rolls_with_their_weights():
    counts = np.bincount(ORDERED_TO_21, minlength=21) / 36.0
    assert np.allclose(counts, ROLL_WEIGHTS)
    for a, (d1, d2) in enumerate(ORDERED_DICE):
        r = ALL_ROLLS[ORDERED_TO_21[a]]
        assert (r.high, r.low) == (max(d1, d2), min(d1, d2))


# --------------------------------------------------------------------------- exact values
def test_one_half_move_over_36_trials_is_exactly_the_1_ply_evaluation():
    # Given 36 trials cut after one half-move: trial i plays ordered roll i mod 36
    ev = PipEvaluator()
    for board in [START] + contact_positions(3):
        one_ply = Search(ev).evaluate_position(board, ply=1).probs[0]
        res = rollout(ev, board, RolloutSettings(trials=36, truncate=1, variance_reduction=False))
        # Then the mean is the weighted mean over the 21 rolls of the best play's value
        assert res.probabilities["win"].mean == pytest.approx(one_ply[0], abs=1e-9)
        assert res.equity.mean == pytest.approx(float(cubeless_equity(one_ply)), abs=1e-9)


def test_plays_inside_trials_are_the_search_choice_at_the_given_ply():
    # 36 trials cut after one half-move at ply 2: each is the 2-ply best play of its roll
    ev = PipEvaluator()
    board = contact_positions(1, seed=4)[0]
    res = rollout(ev, board, RolloutSettings(trials=36, truncate=1, ply=2, variance_reduction=False))
    search = Search(ev)
    expect = []
    for a in range(36):
        d1, d2 = ORDERED_DICE[a]
        r = search.rank_plays(board, int(d1), int(d2), ply=2)
        after = r.boards[r.best]
        p = ev.evaluate(-after[::-1][None])[0]
        expect.append(float(cubeless_equity(np.array([1 - p[0], p[3], p[4], p[1], p[2]]))))
    assert res.equity.mean == pytest.approx(np.mean(expect), abs=1e-9)


def test_luck_adjusted_one_half_move_trials_all_equal_the_mean():
    # With luck adjustment every trial's value is the mean over the rolls: no error left
    ev = PipEvaluator()
    board = contact_positions(1, seed=9)[0]
    one_ply = Search(ev).evaluate_position(board, ply=1).probs[0]
    res = rollout(ev, board, RolloutSettings(trials=50, truncate=1))
    assert res.equity.mean == pytest.approx(float(cubeless_equity(one_ply)), abs=1e-9)
    assert res.equity.se < 1e-9
    assert res.raw_equity.se > 0.01


def test_bear_off_race_with_known_value_agrees_within_ci():
    # The mover's last checker is on his 6 point, the opponent's on his 1 point: the mover
    # wins when his roll bears it off, 27 of 36 rolls (all but 11, 21, 31, 41, 32)
    board = Position.from_points({6: 1}, {1: 1}).array()
    exact = 2 * 27 / 36 - 1
    for vr in (False, True):
        res = rollout(PipEvaluator(), board, RolloutSettings(trials=360, variance_reduction=vr))
        assert abs(res.equity.mean - exact) <= res.equity.ci + 1e-9
        assert res.probabilities["win_gammon"].mean == pytest.approx(0.0, abs=1e-9)


def test_a_cut_in_the_bearoff_range_takes_the_database_value():
    # Given a two-sided bear-off cut after one half-move: each trial's value is the exact
    # database value of the position after its best play, not the evaluator's
    from engine import bearoff

    board = Position.from_points({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2}).array()
    ev = PipEvaluator()
    search = Search(ev)
    expect = []
    for a in range(36):
        d1, d2 = ORDERED_DICE[a]
        r = search.rank_plays(board, int(d1), int(d2), ply=1)
        after = r.boards[r.best]
        live = (after > 0).any()
        expect.append(1.0 - bearoff.two_sided_probs(-after[::-1][None])[0, 0] if live else 1.0)
    res = rollout(ev, board, RolloutSettings(trials=36, truncate=1, variance_reduction=False))
    assert res.probabilities["win"].mean == pytest.approx(np.mean(expect), abs=1e-9)
    off = rollout(ev, board, RolloutSettings(trials=36, truncate=1, variance_reduction=False, bearoff=False))
    assert off.probabilities["win"].mean != pytest.approx(np.mean(expect), abs=1e-3)


def test_rows_do_not_depend_on_slots_or_slices():
    ev = PipEvaluator()
    spec = TrialSpec(truncate=9, cubeful=True, seed=4)
    board = contact_positions(1, seed=11)[0]
    whole = run_trials(ev, board, spec, np.arange(60), slots=60)
    few = run_trials(ev, board, spec, np.arange(60), slots=7)
    split = [run_trials(ev, board, spec, np.arange(a, a + 20), slots=5) for a in (40, 0, 20)]
    from engine.rollout_trials import TrialRows

    joined = TrialRows.concat(split)
    for other in (few, joined):
        for f in ("probs", "luck", "cubeful", "cubeful_luck", "half_moves"):
            assert np.array_equal(getattr(whole, f), getattr(other, f)), f


def test_results_do_not_depend_on_workers():
    ev = PipEvaluator()
    s1 = RolloutSettings(trials=80, truncate=7, seed=2)
    s2 = RolloutSettings(trials=80, truncate=7, seed=2, workers=2)
    a, b = rollout(ev, START, s1), rollout(ev, START, s2)
    assert np.array_equal(a.rows.probs, b.rows.probs) and np.array_equal(a.rows.luck, b.rows.luck)
    assert a.equity == b.equity


def test_luck_adjustment_keeps_the_mean_and_shrinks_the_error():
    ev = PipEvaluator()
    for board in contact_positions(3, seed=5):
        # (how much smaller depends on how well the evaluator tracks the game: the real
        # network's figure is measured by the slow tests and scripts/measure_rollout.py)
        res = rollout(ev, board, RolloutSettings(trials=216, truncate=4))
        gap = abs(res.equity.mean - res.raw_equity.mean)
        assert gap <= 1.96 * np.hypot(res.equity.se, res.raw_equity.se)
        assert res.equity.se < 0.8 * res.raw_equity.se


def test_until_se_stops_at_a_checkpoint_once_the_error_is_small():
    res = rollout(PipEvaluator(), START, RolloutSettings(trials=3240, truncate=3, until_se=0.02))
    assert res.trials % 324 == 0 and res.trials < 3240
    assert res.equity.se <= 0.02


class ConstEvaluator:
    """Every position: the player on roll wins ``win`` of the games, no gammons."""

    def __init__(self, win: float) -> None:
        self.win = win

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        out = np.zeros((len(boards), 5))
        out[:, 0] = self.win
        return out


def test_a_passed_double_fixes_the_cubeful_value_and_the_game_goes_on_cubeless():
    # At 95% without gammons Tabla doubles at once and the opponent passes: +1 in every
    # trial, while the cubeless figures still come from the games played to the end
    res = rollout(ConstEvaluator(0.95), START, RolloutSettings(trials=36, cubeful=True, truncate=6))
    assert res.cubeful_equity.mean == pytest.approx(1.0, abs=1e-12)
    assert res.cubeful_equity.se == pytest.approx(0.0, abs=1e-12)
    plain = rollout(ConstEvaluator(0.95), START, RolloutSettings(trials=36, truncate=6))
    assert res.equity == plain.equity


def test_no_double_at_even_chances_leaves_cubeful_close_to_cubeless():
    res = rollout(ConstEvaluator(0.5), START, RolloutSettings(trials=36, cubeful=True, truncate=6))
    assert res.cubeful_equity.mean == pytest.approx(0.0, abs=1e-9)


def test_candidate_plays_share_dice_and_rank_best_first():
    plays = rollout_plays(PipEvaluator(), START, (3, 1), RolloutSettings(trials=72, truncate=4), top=3)
    eq = [p.result.equity.mean for p in plays]
    assert eq == sorted(eq, reverse=True)
    assert plays[0].difference.mean == 0.0
    assert all(p.difference.mean <= 0 for p in plays)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(trials=0), "trials"),
        (dict(ply=0), "ply"),
        (dict(ply=4), "ply"),
        (dict(truncate=0), "truncate"),
        (dict(until_se=-1.0), "until_se"),
        (dict(workers=0), "workers"),
        (dict(cubeful=1), "cubeful"),
        (dict(trials=1.5), "trials"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs, words):
    with pytest.raises(RolloutError) as exc:
        RolloutSettings(**kwargs)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_finished_game_cannot_be_rolled_out():
    with pytest.raises(RolloutError, match="already over"):
        rollout(PipEvaluator(), Position.from_points({}, {6: 2}).array())


@pytest.mark.parametrize(
    "argv",
    [
        ["--position-id", "4HPwATDgc/ABMA", "--games", "0"],
        ["--position-id", "4HPwATDgc/ABMA", "--top", "3"],
        ["--position-id", "nonsense"],
        ["--position-id", "4HPwATDgc/ABMA", "--ply", "7"],
        ["--position-id", "4HPwATDgc/ABMA", "--workers", "0"],
    ],
)
def test_cli_bad_arguments_give_one_line_errors(argv, capsys):
    from scripts.tabla import main

    code = main(["rollout", "--heuristic", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("tabla rollout: error:") and "\n" not in err


def test_cli_json_has_every_figure(capsys):
    from scripts.tabla import main

    assert main(["rollout", "--heuristic", "--position-id", "4HPwATDgc/ABMA", "--games", "36", "--truncate", "2",
                 "--cubeful", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("equity", "equity_se", "equity_ci", "raw_equity_se", "probabilities", "probabilities_se",
                "cubeful_equity", "cubeful_equity_se", "raw_cubeful_equity_se", "trials", "settings"):
        assert key in d
    assert d["trials"] == 36


def test_protocol_rollout_command_and_its_errors():
    from engine.heuristic import HeuristicEvaluator
    from engine.protocol import EngineSession

    s = EngineSession(HeuristicEvaluator)
    ok, _ = s.handle({"id": 1, "cmd": "rollout", "position_id": "4HPwATDgc/ABMA", "trials": 36, "truncate": 2})
    assert ok["ok"] and ok["id"] == 1 and ok["trials"] == 36 and "equity_se" in ok
    plays, _ = s.handle({"id": 2, "cmd": "rollout", "position_id": "4HPwATDgc/ABMA", "trials": 36, "truncate": 2,
                         "dice": [3, 1], "top": 2})
    assert plays["ok"] and len(plays["plays"]) == 2 and plays["plays"][0]["difference"] == 0.0
    for bad in ({"trials": 0}, {"ply": "x"}, {"truncate": -3}, {"top": 2}, {"cubeful": True, "match_length": 5},
                {"until_se": 0}):
        r, _ = s.handle({"id": 3, "cmd": "rollout", "position_id": "4HPwATDgc/ABMA", **bad})
        assert r == {"id": 3, "ok": False, "error": r["error"]} and "\n" not in r["error"]
