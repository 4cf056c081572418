"""The model card's stage rows (scripts.ship_model): a 2-ply refinement names the nets it taught; a rollouts
refinement says how often its self-play explored."""
from scripts.ship_model import _stage_row


def _search_stage(**config) -> dict:
    return {"stage": "refine", "games": 10, "labelled": 5, "labelled_here": 1234, "decisions": 2000,
            "disputed": 300, "bearoff": True, "started_utc": "2026-12-04 22:39", "commit": "0" * 40,
            "refine_config": {"candidates": 4, "lr": 3e-5, "lr_end": 5e-6, "labels": "search", **config}}


def test_a_search_refinement_row_names_the_nets_it_taught():
    row = _stage_row(_search_stage(nets=("contact",)))
    assert "refinement (`tabla train --stage refine`) of the contact nets: supervised on Tabla's own 2-ply" in row
    assert "1,234 positions from 2,000 self-play decisions (300 disputed)" in row


def test_an_older_search_refinement_without_its_nets_keeps_its_row():
    row = _stage_row(_search_stage())
    assert "refinement (`tabla train --stage refine`): supervised on Tabla's own 2-ply" in row


def _rollouts_stage(**config) -> dict:
    return {**_search_stage(), "explored": 321,
            "refine_config": {"candidates": 4, "lr": 1e-5, "lr_end": 0.0, "labels": "rollouts", "nets": ("contact",),
                              "rollout_trials": 36, "rollout_truncate": 4, "rollout_others": 1, **config}}


def test_a_rollouts_row_says_how_often_its_self_play_explored():
    row = _stage_row(_rollouts_stage(explore=0.15))
    assert "decisions of greedy 1-ply self-play (at 15% of plies one of the 2nd to 4th best results, 321 plies in all)" in row
    assert "at 15% of plies" not in _stage_row(_rollouts_stage())
