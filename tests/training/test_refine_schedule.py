"""The refine stage's learning-rate schedule: linear in the run's elapsed time."""
import pytest

from training.config import RefineConfig
from training.refine import scheduled_lr


def test_learning_rate_is_constant_without_an_end_value():
    cfg = RefineConfig(lr=1e-4)
    assert [scheduled_lr(cfg, t, 600.0) for t in (0.0, 300.0, 600.0, 900.0)] == [1e-4] * 4


def test_learning_rate_falls_linearly_to_its_end_value_and_stays_there():
    cfg = RefineConfig(lr=1e-4, lr_end=2e-5)
    assert scheduled_lr(cfg, 0.0, 600.0) == pytest.approx(1e-4)
    assert scheduled_lr(cfg, 150.0, 600.0) == pytest.approx(8e-5)
    assert scheduled_lr(cfg, 300.0, 600.0) == pytest.approx(6e-5)
    assert scheduled_lr(cfg, 600.0, 600.0) == pytest.approx(2e-5)
    assert scheduled_lr(cfg, 1200.0, 600.0) == pytest.approx(2e-5)  # overtime: the end value


def test_learning_rate_schedule_is_recorded_in_the_config():
    assert RefineConfig(lr=1e-4, lr_end=1e-5).to_dict()["lr_end"] == 1e-5
