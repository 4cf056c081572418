"""``tabla train`` never destroys a run: a folder holding a checkpoint is only written
into by its own continuation (``--resume``) or with ``--overwrite``; every option's help
shows its default."""
from __future__ import annotations

import argparse

import pytest

from scripts.tabla import main


def _run_folder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "latest.pt").write_bytes(b"a 27k-game checkpoint")
    return out


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_train_refuses_to_overwrite_an_existing_run(tmp_path, capsys):
    out = _run_folder(tmp_path)
    assert main(["train", "--out", str(out), "--games", "1"]) == 2
    err = _one_line_error(capsys)
    assert f"--resume {out / 'latest.pt'}" in err and "--overwrite" in err
    assert (out / "latest.pt").read_bytes() == b"a 27k-game checkpoint"


def test_train_from_v1_refuses_to_overwrite_an_existing_run(tmp_path, capsys):
    out = _run_folder(tmp_path)
    assert main(["train", "--from-v1", "models/tabla.pt", "--out", str(out), "--games", "1"]) == 2
    assert "--overwrite" in _one_line_error(capsys)
    assert not (out / "converted.pt").exists()


def test_train_refuses_to_continue_another_run_into_an_existing_one(tmp_path, capsys):
    out = _run_folder(tmp_path)
    other = tmp_path / "other.pt"
    other.write_bytes(b"x")
    assert main(["train", "--resume", str(other), "--out", str(out), "--games", "1"]) == 2
    assert "--overwrite" in _one_line_error(capsys)


def test_refine_refuses_to_overwrite_an_existing_run(tmp_path, capsys):
    out = _run_folder(tmp_path)
    other = tmp_path / "other.pt"
    other.write_bytes(b"x")
    assert main(["train", "--stage", "refine", "--resume", str(other), "--out", str(out), "--minutes", "1"]) == 2
    assert "--overwrite" in _one_line_error(capsys)


def test_every_train_option_has_help_with_its_default():
    from scripts import cmd_train

    parser = argparse.ArgumentParser()
    cmd_train.add_arguments(parser)
    text = parser.format_help()
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert action.help, f"{action.option_strings[0]} has no help"
        if action.default not in (None, False):
            assert f"(default: {action.default})" in " ".join(text.split()), action.option_strings[0]


def test_os_errors_are_one_line_naming_the_file(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("a file, not a folder")
    assert main(["train", "--out", str(taken), "--games", "1"]) == 2
    err = _one_line_error(capsys)
    assert err == f"tabla train: error: cannot use {taken}: file exists\n"


def test_race_stage_needs_a_checkpoint_to_start_from(tmp_path, capsys):
    assert main(["train", "--stage", "race", "--out", str(tmp_path / "run")]) == 2
    assert "--resume" in _one_line_error(capsys)
    assert main(["train", "--stage", "race", "--resume", "models/tabla.pt", "--race-trials", "0",
                 "--out", str(tmp_path / "run")]) == 2
    assert "--race-trials" in _one_line_error(capsys)


def test_race_stage_fits_the_race_net_and_records_the_stage(tmp_path, capsys, monkeypatch):
    import training.race_stage as race_stage
    from models.checkpoint import load_checkpoint, load_nets
    from scripts.ship_model import _stage_row

    out = tmp_path / "race"
    # HEAD moves on once the run is under way (its tensorboard log exists): the stage keeps the first
    monkeypatch.setattr(race_stage, "git_commit", lambda: "b" * 40 if (out / "tb").exists() else "a" * 40)
    args = ["train", "--stage", "race", "--resume", "models/tabla.pt", "--out", str(out), "--race-positions", "300",
            "--race-trials", "4", "--race-epochs", "2", "--eval-games", "0", "--workers", "1"]
    assert main(args) == 0
    assert "held-out loss" in capsys.readouterr().out
    before, after = load_checkpoint("models/tabla.pt"), load_checkpoint(out / "latest.pt")
    st = after["stages"][-1]
    assert st["stage"] == "race" and st["race_positions"] == 300 and len(after["stages"]) == len(before["stages"]) + 1
    assert st["commit"] == "a" * 40
    assert 0 < st["heldout_loss_after"] < 1 and 0 < st["heldout_loss_before"] < 1
    for name in ("contact", "crashed"):  # only the race net learns
        for k, v in before["nets"][name]["weights"].items():
            assert (after["nets"][name]["weights"][k] == v).all()
    assert any((after["nets"]["race"]["weights"][k] != v).any() for k, v in before["nets"]["race"]["weights"].items())
    assert set(load_nets(out / "latest.npz")[0]) == {"contact", "crashed", "race"}
    assert "race stage (`tabla train --stage race`)" in _stage_row(st) and "300 race" in _stage_row(st)
    # a rerun with the same settings reuses the cached labels and needs --overwrite only for another start
    assert main(args[:3] + ["--resume", str(out / "latest.pt")] + args[5:]) == 0
