"""Training and rollouts on Ray (local Ray, 2 CPUs): checkpoints, resume, dead actors, rollouts.

Skipped when Ray is not installed (``pip install -e '.[ray]'``).
"""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")

from models.checkpoint import load_checkpoint, load_evaluator  # noqa: E402
from rollout_helpers import NET_ROUNDING, assert_same_rows  # noqa: E402
from training.config import RayConfig, TrainConfig  # noqa: E402
from training.ray_backend import train_ray  # noqa: E402
from training.ray_cluster import connect  # noqa: E402
from training.trainer import _raise_interrupt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = dict(hidden=16, race_hidden=8, parallel_games=8, batch_size=64, eval_minutes=0, checkpoint_minutes=100)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of 2 CPUs for the module (its start-up is the slow part)."""
    assert connect(num_cpus=2)
    yield ray
    ray.shutdown()


def actor(name: str, timeout: float = 240.0):
    """The handle of self-play actor ``name`` (``<slot>.<generation>``) once it exists."""
    deadline = time.time() + timeout
    while True:
        try:
            (full,) = [a for a in ray.util.list_named_actors() if a.startswith("tabla-selfplay-") and a.endswith(f"-{name}")]
            return ray.get_actor(full)
        except ValueError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def wait_played(handle, timeout: float = 240.0) -> None:
    """Until the actor has finished games (its ``played`` call runs after its queued plays)."""
    deadline = time.time() + timeout
    while ray.get(handle.played.remote()) == 0:
        assert time.time() < deadline, "the actor finished no game"
        time.sleep(0.5)


def in_background(work) -> threading.Thread:
    """Run ``work()`` in a thread, then stop the run as SIGTERM does (while it is training)."""

    def go():
        try:
            work()
        finally:
            time.sleep(2.0)  # the driver collects the last calls
            if signal.getsignal(signal.SIGTERM) is _raise_interrupt:
                os.kill(os.getpid(), signal.SIGTERM)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def assert_same_figures(remote, local, where: str = "") -> None:
    """Two rollout reports agree: the same keys, counts and settings, and every float
    within :data:`rollout_helpers.NET_ROUNDING` (printed to six decimals from values that may
    differ in the last bits of float32); the run time (``seconds``) is not compared."""
    if isinstance(local, dict):
        assert isinstance(remote, dict) and remote.keys() == local.keys(), where
        for k in local:
            if k != "seconds":
                assert_same_figures(remote[k], local[k], f"{where}.{k}")
    elif isinstance(local, list):
        assert isinstance(remote, list) and len(remote) == len(local), where
        for i, (r, v) in enumerate(zip(remote, local)):
            assert_same_figures(r, v, f"{where}[{i}]")
    elif isinstance(local, float):
        assert isinstance(remote, float) and abs(remote - local) <= NET_ROUNDING, f"{where}: {remote} vs {local}"
    else:
        assert remote == local, f"{where}: {remote!r} vs {local!r}"


def test_ray_run_writes_a_checkpoint_that_resumes_with_either_backend(local_ray, tmp_path):
    # a strength check is due at once (0.06 s): a quiet machine plays the games within seconds
    cfg = TrainConfig(**{**SMALL, "eval_minutes": 0.001, "eval_games": 2}, seed=3)  # strength checks run beside
    # enough games that both actors send some, however fast one call is
    first = train_ray(cfg, RayConfig(actors=2, call_seconds=0.5), tmp_path, games=300, progress=False)
    ck = load_checkpoint(tmp_path / "latest.pt")
    assert ck["format_version"] == 2 and ck["games"] == first.games >= 300 and first.updates > 0
    assert ck["stages"][-1]["backend"] == "ray" and ck["optimizer"][0] is not None
    assert "eval/ppg_vs_pubeval" in ck["history"][0] and ck["history"][0]["games"] <= first.games
    assert len(first.games_by_actor) == 2 and all(g > 0 for g in first.games_by_actor.values())
    load_evaluator(tmp_path / "latest.npz")  # the inference export loads
    second = train_ray(cfg, RayConfig(actors=1, call_seconds=0.5), tmp_path, games=10,
                       resume=tmp_path / "latest.pt", progress=False)
    assert second.games >= first.games + 10
    ck2 = load_checkpoint(tmp_path / "latest.pt")
    assert [st["games"] for st in ck2["stages"]] == [0, first.games]
    assert not np.array_equal(ck["nets"]["contact"]["weights"]["fc1.weight"], ck2["nets"]["contact"]["weights"]["fc1.weight"])
    # the local backend takes the Ray checkpoint up
    cmd = [sys.executable, "-m", "scripts.tabla", "train", "--out", str(tmp_path), "--workers", "1", "--parallel-games", "8",
           "--batch-size", "64", "--eval-minutes", "0", "--no-progress", "--games", "5", "--resume", str(tmp_path / "latest.pt")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    ck3 = load_checkpoint(tmp_path / "latest.pt")
    assert ck3["games"] >= second.games + 5 and "backend" not in ck3["stages"][-1]


def test_a_killed_actor_is_replaced_and_the_run_goes_on_until_sigterm(local_ray, tmp_path):
    cfg = TrainConfig(**SMALL, seed=4)

    def kill_then_wait_for_the_replacement():
        first = actor("0.0")
        wait_played(first)
        ray.kill(first)
        wait_played(actor("0.1"))

    in_background(kill_then_wait_for_the_replacement)
    st = train_ray(cfg, RayConfig(actors=2, call_seconds=0.5), tmp_path, minutes=5, progress=False)
    assert st.actors_replaced >= 1 and st.games_by_actor.get("0.1", 0) > 0
    assert st.wall_seconds < 5 * 60  # SIGTERM ended it
    assert load_checkpoint(tmp_path / "latest.pt")["games"] == st.games  # the final checkpoint


def test_rollout_over_ray_equals_the_local_rollout_for_the_same_seed(local_ray):
    from engine.position import Position
    from engine.rollout import RolloutSettings, rollout
    from scripts.evaluators import load_evaluator as load_spec
    from training.ray_rollout import RaySlices

    ev = load_spec(None)
    s = RolloutSettings(trials=40, truncate=4, cubeful=True, seed=5)
    board = Position.start().array()
    local = rollout(ev, board, s)
    remote = rollout(ev, board, s, slice_map=RaySlices(tasks=3))
    assert_same_rows(remote.rows, local.rows, atol=NET_ROUNDING)  # the tasks batch differently
    assert_same_figures(remote.to_dict(), local.to_dict())


def test_rollout_command_with_backend_ray_prints_the_figures_of_the_local_backend(local_ray, capsys):
    import json

    from scripts.tabla import main

    argv = ["rollout", "--position-id", "4HPwATDgc/ABMA", "--games", "24", "--truncate", "3", "--seed", "9", "--json"]
    assert main(argv) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*argv, "--backend", "ray"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert_same_figures(remote, local)
