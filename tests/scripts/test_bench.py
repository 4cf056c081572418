"""``tabla bench``: every benchmark runs on a small set and reports consistent figures.

No speed is asserted here (speed belongs in the benchmarks' own output); these tests check
that the figures are there, that the ratios are the quotients they claim to be, and that
bad sizes are refused in one line.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("gnubg_nn")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scripts.tabla", "bench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def bench_json(*args: str) -> dict:
    r = bench(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_bench_search_reports_every_rate_and_ratio_of_one_run():
    fig = bench_json("search", "--positions", "8", "--ply2-positions", "2", "--rounds", "1")
    assert fig["pipe_failures"] == 0 and fig["positions_ply1"] == 8 and fig["positions_ply2"] == 2
    rates = [k for k in fig if k.endswith("_per_s")]
    assert len(rates) == 8 and all(fig[k] > 0 for k in rates)  # one CPU: Linux has affinity
    # ratios are printed with 4 decimals: on a loaded machine they can be small
    assert fig["ratio_ply1_pipe_one_cpu_vs_gnubg0"] == pytest.approx(
        fig["tabla_ply1_pipe_one_cpu_per_s"] / fig["gnubg_0ply_per_s"], rel=1e-3, abs=5e-5)
    assert fig["ratio_ply1_pipe_vs_gnubg0"] == pytest.approx(
        fig["tabla_ply1_pipe_per_s"] / fig["gnubg_0ply_per_s"], rel=1e-3, abs=5e-5)
    assert fig["ratio_ply2_vs_gnubg1"] == pytest.approx(fig["tabla_ply2_per_s"] / fig["gnubg_1ply_per_s"], rel=1e-3, abs=5e-5)
    assert fig["json_layer_share_of_ply1"] < 1 and fig["pipe_overhead_share_of_ply1"] < 1


def test_bench_movegen_counts_the_same_results_as_gnubg():
    fig = bench_json("movegen", "--positions", "40", "--repeat", "1")
    assert fig["results"] == fig["gnubg_results"] > 40
    # the ratio is printed with 3 decimals: on a loaded machine it can be small
    assert fig["ratio"] == pytest.approx(fig["tabla_per_s"] / fig["gnubg_per_s"], rel=1e-2, abs=5e-4)


def test_bench_accuracy_grades_every_player_with_a_non_negative_loss():
    fig = bench_json("accuracy", "--positions", "4")
    assert fig["positions"] == 4 and fig["reference"] == "gnubg-nn 2-ply"
    for table in ("play_mEMG_lost_per_decision", "cube_mEMG_lost_per_decision"):
        assert fig[table] and all(v >= 0 for v in fig[table].values())
    for player, by_class in fig["play_mEMG_by_class_ci95"].items():
        assert by_class.keys() == fig["play_mEMG_by_class"][player].keys()
        assert all(v >= 0 for v in by_class.values())


def test_bench_selfplay_trains_and_counts_games():
    pytest.importorskip("torch")
    # few games at once, so that some finish within the time even on a loaded machine
    fig = bench_json("selfplay", "--seconds", "4", "--workers", "1", "--parallel-games", "8")
    assert fig["games"] > 0 and fig["workers"] == 1
    assert fig["games_per_s"] == pytest.approx(fig["games"] / fig["seconds"], rel=1e-6)


def test_bench_rollout_times_tabla_and_gnubg_with_and_without_variance_reduction():
    if not os.path.exists("/usr/games/gnubg"):
        pytest.skip("/usr/games/gnubg is not installed")
    fig = bench_json("rollout", "--games", "4")
    assert fig["games"] == 4 and fig["gnubg_startup_s"] > 0
    for key in ("vr_on", "vr_off"):
        r = fig[key]
        assert r["tabla_s"] > 0 and r["gnubg_s"] > 0
        assert r["ratio"] == pytest.approx(r["gnubg_s"] / r["tabla_s"], rel=1e-6)


@pytest.mark.parametrize("args", [("rollout", "--games", "0"), ("search", "--positions", "0"), ("movegen", "--repeat", "-1"),
                                  ("accuracy", "--positions", "0"), ("selfplay", "--seconds", "0")])
def test_bench_refuses_a_size_that_is_not_positive_in_one_line(args):
    r = bench(*args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "must be positive" in r.stderr


def test_bench_accuracy_interval_is_the_normal_95_percent_half_width_of_the_mean():
    from scripts.bench_accuracy import ci95_mEMG

    # losses 0, 0.01, 0, 0.03: sample std 0.01414 (ddof 1), / sqrt(4) * 1.96 = 0.01386
    assert ci95_mEMG(np.array([0.0, 0.01, 0.0, 0.03])) == 13.86
    assert ci95_mEMG(np.array([0.02])) == 0.0
