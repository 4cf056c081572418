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
