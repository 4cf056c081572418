"""What ``tabla train`` shows while it runs: the game count of the run (a resumed run
counts on from its checkpoint) and the last measured games/s, TD error and ppg."""
from __future__ import annotations

import io
import sys

from training.trainer import TrainState, progress_bar, progress_figures


def test_training_progress_shows_the_checkpoints_figures_from_the_start():
    state = TrainState(games=27_000, metrics={"eval/ppg_vs_pubeval": 0.512, "train/games_per_s": 41.6,
                                              "train/td_error": 0.01234})
    assert progress_figures(state) == {"gps": "42", "td": "0.0123", "ppg": "+0.512"}


def test_training_progress_marks_figures_not_measured_yet():
    assert progress_figures(TrainState(metrics={"train/td_error": float("nan")})) == {"gps": "-", "td": "-", "ppg": "-"}


def test_training_progress_counts_from_the_resumed_game_number(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = progress_bar(True, 27_000, 29_000)
    assert (bar.n, bar.total) == (27_000, 29_000)
    bar.close()


def test_training_progress_bar_is_off_when_stderr_is_not_a_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = progress_bar(True, 0, 100)
    bar.update(50)
    bar.close()
    assert bar.disable and err.getvalue() == ""
