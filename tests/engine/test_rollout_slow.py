"""Rollout figures with the shipped network (``-m slow``; scripts/measure_rollout.py prints them)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.rollout import RolloutSettings, rollout
from rollout_helpers import NET_ROUNDING, assert_same_rows
from scripts.measure_rollout import contact_positions, measure, summary

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def net():
    from scripts.evaluators import limit_blas_threads, load_evaluator

    limit_blas_threads(1)
    return load_evaluator(None)


def test_luck_adjustment_is_unbiased_and_smaller_on_200_positions(net):
    diffs, ses, smaller = [], [], 0
    # a seed per position: with one seed every position would share its dice, and the luck
    # of, say, a trial's early 6-6 would count the same way in all of them
    for k, b in enumerate(contact_positions(200, seed=21)):
        r = rollout(net, b, RolloutSettings(trials=72, truncate=8, seed=100 + k))
        diffs.append(r.equity.mean - r.raw_equity.mean)
        ses.append(r.raw_equity.se)
        smaller += r.equity.se < r.raw_equity.se
    diffs, ses = np.array(diffs), np.array(ses)
    within = np.abs(diffs) <= 1.96 * ses * np.sqrt(2)
    assert within.mean() >= 0.9
    # over all positions the mean difference is zero within its error
    assert abs(diffs.mean()) <= 3 * diffs.std(ddof=1) / np.sqrt(len(diffs))
    assert smaller >= 190


def test_vr_error_is_at_most_a_third_and_truncation_adds_no_bias_on_50_positions(net):
    figs = measure(net, contact_positions(50, seed=12), games=144, truncate=11, seed=12)
    s = summary(figs)
    assert s["se_ratio_of_means"] <= 1 / 3
    assert s["vr_and_plain_means_agree"] >= 45  # 95% intervals: a few may miss
    # truncation adds no systematic bias over the positions (each position's gap also holds
    # the network's misjudgement of the positions at the cut: see scripts/measure_rollout.py)
    assert abs(s["full_minus_truncated_mean"]) <= 3 * s["full_minus_truncated_mean_se"]


def test_rollout_of_31_ranks_8_5_6_5_first(capsys):
    from scripts.tabla import main

    assert main(["rollout", "--position-id", "4HPwATDgc/ABMA", "--dice", "31", "--games", "144", "--top", "3"]) == 0
    out = capsys.readouterr().out
    first = [line for line in out.splitlines() if line.strip().startswith("1.")][0]
    assert "8/5 6/5" in first


def test_network_rollout_is_the_same_with_two_workers(net):
    from engine.position import Position

    s1 = RolloutSettings(trials=96, truncate=30, cubeful=True)
    a = rollout(net, Position.start().array(), s1)
    b = rollout(net, Position.start().array(), RolloutSettings(trials=96, truncate=30, cubeful=True, workers=2))
    assert_same_rows(b.rows, a.rows, atol=NET_ROUNDING)  # the workers batch differently
