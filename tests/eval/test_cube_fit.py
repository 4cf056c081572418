"""Fitting Janowski's cube efficiency (:mod:`eval.cube_fit`): the least-squares fits
recover a known efficiency, and the fit command refuses bad sizes in one line."""
from __future__ import annotations

import numpy as np
import pytest

from eval.cube_fit import fit_linear_x, fit_x, model_error


def _synthetic(rng, n, x):
    dead = rng.uniform(-0.5, 1.5, n)
    live = dead - rng.uniform(0.05, 0.4, n)  # the live cube is worth less to the taker
    return dead, live, x * live + (1 - x) * dead


def test_the_least_squares_efficiency_is_the_one_that_made_the_targets():
    rng = np.random.default_rng(1)
    dead, live, target = _synthetic(rng, 200, np.float64(0.63))
    x, se = fit_x(dead, live, target + rng.normal(0, 0.01, 200))
    assert x == pytest.approx(0.63, abs=4 * se) and 0 < se < 0.05
    assert model_error(dead, live, target, 0.63) == pytest.approx(0.0, abs=1e-12)
    assert model_error(dead, live, target, 0.9) > model_error(dead, live, target, 0.7)


def test_a_race_efficiency_linear_in_the_pips_is_recovered():
    rng = np.random.default_rng(2)
    pips = rng.uniform(20, 120, 300)
    dead, live, _ = _synthetic(rng, 300, 0.0)
    x = 0.5 + 0.002 * pips
    a, b = fit_linear_x(dead, live, x * live + (1 - x) * dead, pips)
    assert a == pytest.approx(0.5, abs=1e-9) and b == pytest.approx(0.002, abs=1e-11)


@pytest.mark.parametrize("args", [["--positions", "0"], ["--trials", "-3"], ["--workers", "0"]])
def test_fit_cube_refuses_a_size_that_is_not_positive_in_one_line(args, capsys):
    from scripts.fit_cube import main

    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be positive" in err
