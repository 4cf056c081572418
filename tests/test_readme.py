"""Every example in README.md runs and prints what the README shows.

Shell examples (``console`` blocks) run through a ``tabla`` on ``PATH`` that is this
checkout's ``python -m scripts.tabla``; their output is compared line by line (trailing
blanks aside, and a decimal may differ by one unit of its last digit: float32 rounding
differs between CPUs). Python examples (``python`` blocks) run as doctests. The set-up block is
run by ``.ci/run`` in a fresh virtual environment; here it is checked to be the two
commands the README describes.
"""
from __future__ import annotations

import doctest
import os
import re
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


_NUMBER = re.compile(r"[-+]?\d+\.\d+")


def _same_but_last_digits(printed: list[str], shown: list[str]) -> bool:
    """Whether two outputs are the same line by line, except that a decimal may differ by one
    unit of its last digit: float32 sums round differently on different CPUs, which can move
    a value printed to 6 places across a rounding boundary."""
    if len(printed) != len(shown):
        return False
    for a, b in zip(printed, shown):
        if _NUMBER.split(a) != _NUMBER.split(b):
            return False
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
            places = len(x.split(".")[1])
            if places != len(y.split(".")[1]) or abs(float(x) - float(y)) > 1.5 * 10.0 ** -places:
                return False
    return True


def test_outputs_may_differ_by_one_unit_of_a_decimals_last_digit_only():
    assert _same_but_last_digits(['"equity":0.162128}'], ['"equity":0.162127}'])
    assert _same_but_last_digits(["win 0.554 +0.162"], ["win 0.555 +0.161"])
    assert not _same_but_last_digits(['"equity":0.162129}'], ['"equity":0.162127}'])
    assert not _same_but_last_digits(["win 0.55"], ["win 0.554"])  # the same places only
    assert not _same_but_last_digits(["8/5 6/5 +0.162"], ["24/23 13/10 +0.162"])
    assert not _same_but_last_digits(["a", "b"], ["a"])


def test_readme_has_shell_and_python_examples():
    assert len(shell_examples()) >= 3 and python_examples()


@pytest.mark.parametrize("example", shell_examples(), ids=lambda e: f"line{e.line}")
def test_readme_shell_example_prints_what_the_readme_shows(example, tabla_on_path):
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", example.command], cwd=ROOT, env=tabla_on_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _same_but_last_digits(_strip(proc.stdout), _strip(example.output)), \
        f"README line {example.line}: {example.command}\n{proc.stdout}"


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
