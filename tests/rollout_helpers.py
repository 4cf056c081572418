"""Comparing the rows of two rollouts of the same seed (played in other slices or places)."""
from __future__ import annotations

import numpy as np

GAME_FIELDS = ("trials", "half_moves")
"""What the games were: each trial's number and length."""
VALUE_FIELDS = ("probs", "luck", "cubeful", "cubeful_luck")
"""What the games are worth."""

NET_ROUNDING = 1e-5
"""How far a network's rollout values may move with the batches: its output for a position
may differ in the last float32 bit with the size of the batch it is evaluated in (the BLAS
kernel depends on it), and luck and cubeful values sum many such outputs, times the cube."""


def assert_same_rows(got, want, atol: float = 0.0) -> None:
    """The same games exactly, and values within ``atol`` (0: bit for bit)."""
    for f in GAME_FIELDS:
        np.testing.assert_array_equal(getattr(got, f), getattr(want, f), err_msg=f)
    for f in VALUE_FIELDS:
        np.testing.assert_allclose(getattr(got, f), getattr(want, f), rtol=0, atol=atol, err_msg=f)
