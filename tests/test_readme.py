"""Every example in README.md runs and prints what the README shows.

Shell examples (``console`` blocks) run through a ``tabla`` on ``PATH`` that is this
checkout's ``python -m scripts.tabla``; their output is compared line by line (trailing
blanks aside). Python examples (``python`` blocks) run as doctests. The set-up block is
run by ``.ci/run`` in a fresh virtual environment; here it is checked to be the two
commands the README describes.
"""
from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

from readme_blocks import python_examples, setup_commands, shell_examples

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tabla_on_path(tmp_path_factory) -> dict[str, str]:
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "tabla"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m scripts.tabla "$@"\n')
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}


def _strip(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


def test_readme_has_shell_and_python_examples():
    assert len(shell_examples()) >= 3 and python_examples()


@pytest.mark.parametrize("example", shell_examples(), ids=lambda e: f"line{e.line}")
def test_readme_shell_example_prints_what_the_readme_shows(example, tabla_on_path):
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", example.command], cwd=ROOT, env=tabla_on_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _strip(proc.stdout) == _strip(example.output), f"README line {example.line}: {example.command}"


@pytest.mark.parametrize("example", python_examples(), ids=lambda e: f"line{e[1]}")
def test_readme_python_example_runs_as_a_doctest(example, monkeypatch):
    body, line = example
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(body, {}, f"README.md:{line}", str(ROOT / "README.md"), line)
    assert test.examples, f"README line {line}: a python block is written as a doctest (>>> lines)"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"README line {line}: see the doctest report above"


def test_readme_setup_is_the_install_command_then_the_test_command():
    first, second = setup_commands()
    assert "pip install ." in first and "tabla hint" in first
    assert "pip install -e '.[dev]'" in second and second.endswith("python -m pytest")
    assert "readme_blocks.py setup" in (ROOT / ".ci" / "run").read_text()
