"""TD(λ) self-play: targets, game ends, and the real ``tabla train`` entry point."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from engine.position import Position
from training.config import TrainConfig
from engine.batch import result_points, segment_argmax
from training.selfplay import SelfPlay, lambda_targets

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

torch = pytest.importorskip("torch")


def test_lambda_one_gives_the_game_result_to_every_state():
    vals = np.zeros((5, 5), np.float32)
    vals[1:4] = np.random.default_rng(0).random((3, 5))
    vals[4] = [0, 0, 0, 1, 1]  # the side on roll at the end lost a backgammon
    g = lambda_targets(vals, 4, 1.0)
    # state 3 is the winner's, state 2 the loser's, ...
    assert np.allclose(g[3], [1, 1, 1, 0, 0]) and np.allclose(g[1], [1, 1, 1, 0, 0])
    assert np.allclose(g[2], [0, 0, 0, 1, 1]) and np.allclose(g[0], [0, 0, 0, 1, 1])


def test_lambda_zero_bootstraps_from_the_next_prediction_seen_from_the_other_side():
    vals = np.zeros((4, 5), np.float32)
    vals[1] = [0.6, 0.2, 0.01, 0.1, 0.0]
    vals[2] = [0.3, 0.05, 0.0, 0.2, 0.02]
    vals[3] = [0, 0, 0, 0, 0]
    g = lambda_targets(vals, 3, 0.0)
    assert np.allclose(g[0], [0.4, 0.1, 0.0, 0.2, 0.01])
    assert np.allclose(g[1], [0.7, 0.2, 0.02, 0.05, 0.0])
    assert np.allclose(g[2], [1, 0, 0, 0, 0])


def test_result_points_scores_single_gammon_and_backgammon():
    single = Position.from_points({}, {6: 14}).array()  # opponent has one off
    gammon = Position.from_points({}, {6: 15}).array()
    backgammon = Position.from_points({}, {6: 14, 20: 1}).array()  # a checker in my home board
    on_bar = Position.from_points({}, {6: 14, 25: 1}).array()
    going_on = Position.from_points({1: 1}, {6: 15}).array()
    assert list(result_points(np.stack([single, gammon, backgammon, on_bar, going_on]))) == [1, 2, 3, 3, 0]


def test_segment_argmax_picks_the_best_of_each_segment():
    v = np.array([0.1, 0.5, 0.2, -1.0, 3.0, 2.0])
    off = np.array([0, 3, 4, 6])
    assert list(segment_argmax(v, off)) == [1, 3, 4]


def test_self_play_games_end_with_15_checkers_a_side_at_every_ply():
    sp = SelfPlay(8, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    finished = []
    for _ in range(400):
        assert ((np.where(sp.boards > 0, sp.boards, 0).sum(1)) <= 15).all()
        finished += sp.step(lambda b: rng.random((len(b), 5)).astype(np.float32) * [1, 0.3, 0.1, 0.3, 0.1])
    assert len(finished) > 0
    boards, vals = finished[0]
    assert len(vals) == len(boards) + 1
    assert vals[-1, 0] == 0 and vals[-1, 3] in (0, 1)  # exact result for the loser on roll


def test_lr_schedule_decays_to_its_final_value():
    c = TrainConfig(lr=1e-3, lr_final=1e-4, lr_decay_games=100)
    assert c.lr_at(0) == pytest.approx(1e-3) and c.lr_at(100) == pytest.approx(1e-4) and c.lr_at(10**6) == pytest.approx(1e-4)


def _train(out, *extra, timeout=240):
    cmd = [sys.executable, "-m", "scripts.tabla", "train", "--out", str(out), "--workers", "1", "--parallel-games", "16",
           "--batch-size", "128", "--eval-minutes", "0", "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_train_entry_point_trains_and_resumes(tmp_path):
    r = _train(tmp_path, "--games", "60", "--seed", "3")
    assert r.returncode == 0, r.stderr
    from models.checkpoint import load_checkpoint

    first = load_checkpoint(tmp_path / "latest.pt")
    assert first["games"] >= 60 and first["optimizer"][0] is not None
    r = _train(tmp_path, "--games", "30", "--resume", str(tmp_path / "latest.pt"))
    assert r.returncode == 0, r.stderr
    second = load_checkpoint(tmp_path / "latest.pt")
    assert second["games"] >= first["games"] + 30
    # each run leaves a record of where it started and with which settings
    assert [st["games"] for st in second["stages"]] == [0, first["games"]]
    assert second["stages"][1]["train_config"]["seed"] == TrainConfig().seed
    assert not torch.equal(first["nets"]["contact"]["weights"]["fc1.weight"], second["nets"]["contact"]["weights"]["fc1.weight"])
    assert (tmp_path / "latest.npz").is_file() and (tmp_path / "tb").is_dir()


def test_train_rejects_bad_arguments_with_one_line(tmp_path):
    r = _train(tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--games or --minutes" in r.stderr
    r = _train(tmp_path, "--games", "5", "--resume", str(tmp_path / "nope.pt"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not found" in r.stderr


def test_sigterm_stops_training_with_a_final_checkpoint(tmp_path):
    # a background job (nohup ... &) ignores SIGINT: SIGTERM must stop it just as cleanly
    cmd = [sys.executable, "-m", "scripts.tabla", "train", "--out", str(tmp_path), "--workers", "1", "--minutes", "5",
           "--parallel-games", "16", "--batch-size", "128", "--checkpoint-minutes", "0.05", "--eval-minutes", "0",
           "--no-progress"]
    p = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    from models.checkpoint import CheckpointError, load_checkpoint

    deadline = time.time() + 150  # games must have finished before the signal (slow on a loaded machine)
    while time.time() < deadline:
        time.sleep(2)
        try:
            if load_checkpoint(tmp_path / "latest.pt")["games"] > 0:
                break
        except CheckpointError:
            pass
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    ck = load_checkpoint(tmp_path / "latest.pt")
    assert ck["games"] > 0 and "final checkpoint" in err


def _running(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except OSError:
        return False


@pytest.mark.slow
def test_killed_training_resumes_from_an_intact_checkpoint(tmp_path):
    cmd = [sys.executable, "-m", "scripts.tabla", "train", "--out", str(tmp_path), "--workers", "1", "--minutes", "5",
           "--checkpoint-minutes", "0.1", "--eval-minutes", "0", "--no-progress"]
    p = subprocess.Popen(cmd, cwd=ROOT)
    deadline = time.time() + 120
    while not (tmp_path / "latest.pt").exists() and time.time() < deadline:
        time.sleep(1)
    time.sleep(9)
    workers = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(5)
    assert workers, "the trainer had worker processes"
    assert [w for w in workers if _running(w)] == [], "the workers of a killed trainer stop by themselves"
    r = _train(tmp_path, "--games", "10", "--resume", str(tmp_path / "latest.pt"))
    assert r.returncode == 0, r.stderr


def test_widening_the_hidden_layer_keeps_every_output_and_the_game_count(tmp_path):
    from models.checkpoint import load_checkpoint, save_checkpoint
    from models.network import NetConfig, NumpyNet, make_torch_net, numpy_weights
    from engine.randpos import random_game_positions
    from scripts.widen import main as widen_main

    torch.manual_seed(5)
    cfg = NetConfig(hidden=16)
    net = make_torch_net(cfg)
    save_checkpoint(tmp_path / "a.pt", {"net_config": cfg.to_dict(), "weights": net.state_dict(), "optimizer": [None],
                                         "games": 1234, "positions": 99, "wall_seconds": 5.0, "metrics": {}, "history": []})
    assert widen_main(["--checkpoint", str(tmp_path / "a.pt"), "--hidden", "24", "--out", str(tmp_path / "b.pt")]) == 0
    wide = load_checkpoint(tmp_path / "b.pt")
    assert wide["net_config"]["hidden"] == 24 and wide["games"] == 1234 and wide["optimizer"] == []
    boards = random_game_positions(np.random.default_rng(6), 300)
    before = NumpyNet(cfg, numpy_weights(net)).evaluate(boards)
    after = NumpyNet(NetConfig(hidden=24), {k: v.numpy() for k, v in wide["weights"].items()}).evaluate(boards)
    np.testing.assert_allclose(after, before, atol=1e-6)
    assert widen_main(["--checkpoint", str(tmp_path / "a.pt"), "--hidden", "8", "--out", str(tmp_path / "c.pt")]) == 2
    assert not (tmp_path / "c.pt").exists()



def test_model_card_stage_rows_say_how_each_stage_trained():
    from scripts.ship_model import _stage_row

    cfg = TrainConfig(lr=3e-4, lr_final=5e-5, lr_decay_games=12_000_000, seed=3).to_dict()
    row = _stage_row({"games": 4_866_848, "hidden": 256, "train_config": cfg, "commit": "abcdef1234567", "started_utc": "2026-12-02 13:35"})
    assert row.startswith("| 4,866,848 | 256 hidden units") and "0.0003 → 5e-05" in row and "seed 3" in row
    assert "widened from 128" in _stage_row({"games": 5, "widened_from": {"hidden": 128, "games": 5}})
