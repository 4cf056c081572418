"""A simulated two-node Ray cluster (ray.cluster_utils.Cluster) trains; each node's actors play.

Slow (two raylets start): run with ``-m slow``. Skipped when Ray is not installed.
"""
import os
import signal
import threading
import time

import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")

from models.checkpoint import load_checkpoint  # noqa: E402
from training.config import RayConfig, TrainConfig  # noqa: E402
from training.ray_backend import train_ray  # noqa: E402
from training.trainer import _raise_interrupt  # noqa: E402


def _handle(name: str, timeout: float = 300.0):
    deadline = time.time() + timeout
    while True:
        try:
            (full,) = [a for a in ray.util.list_named_actors() if a.startswith("tabla-selfplay-") and a.endswith(f"-{name}")]
            return ray.get_actor(full)
        except ValueError:
            assert time.time() < deadline, f"no actor {name}"
            time.sleep(0.5)


@pytest.mark.slow
def test_a_two_node_cluster_trains_with_games_from_the_actors_of_each_node(tmp_path):
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)

        def stop_once_both_played():
            try:
                for name in ("0.0", "1.0"):
                    h = _handle(name)
                    deadline = time.time() + 300
                    while ray.get(h.played.remote()) == 0 and time.time() < deadline:
                        time.sleep(0.5)
                time.sleep(2.0)
            finally:
                if signal.getsignal(signal.SIGTERM) is _raise_interrupt:
                    os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=stop_once_both_played, daemon=True).start()
        cfg = TrainConfig(hidden=16, race_hidden=8, parallel_games=8, batch_size=64, eval_minutes=0, checkpoint_minutes=100)
        st = train_ray(cfg, RayConfig(address=cluster.address, actors=2, call_seconds=0.5), tmp_path, minutes=6, progress=False)
        nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        assert set(st.games_by_node) == nodes and len(nodes) == 2
        assert all(g > 0 for g in st.games_by_node.values()) and st.updates > 0
        assert load_checkpoint(tmp_path / "latest.pt")["games"] == st.games
    finally:
        ray.shutdown()
        cluster.shutdown()
