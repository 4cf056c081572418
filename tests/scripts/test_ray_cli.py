"""``--backend ray`` without Ray installed: one line saying how to install it."""
import argparse
import sys

import pytest

from scripts.cmd_train_ray import add_ray_arguments, ray_config, run_ray
from scripts.tabla import CliError, main
from training.config import TrainConfig


@pytest.fixture
def no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError


def train_args(*argv: str) -> argparse.Namespace:
    from scripts.cmd_train import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    if not any(a.dest == "backend" for a in p._actions):  # until tabla train wires the Ray options itself
        add_ray_arguments(p)
    return p.parse_args(["--games", "5", *argv])


def test_train_backend_ray_without_ray_says_how_to_install_it(no_ray):
    with pytest.raises(CliError, match=r"pip install -e '\.\[ray\]'"):
        run_ray(train_args("--backend", "ray"), TrainConfig())


@pytest.mark.parametrize("argv", [["rollout", "--position-id", "4HPwATDgc/ABMA", "--games", "36", "--backend", "ray"],
                                  ["bench", "selfplay", "--seconds", "1", "--backend", "ray"]])
def test_rollout_and_bench_backend_ray_without_ray_fail_in_one_line(no_ray, capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "pip install -e '.[ray]'" in err


def test_ray_options_refuse_sizes_below_one():
    with pytest.raises(CliError, match="--actors"):
        ray_config(train_args("--backend", "ray", "--actors", "0"))
    with pytest.raises(CliError, match="--publish-every"):
        ray_config(train_args("--backend", "ray", "--publish-every", "0"))
