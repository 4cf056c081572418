"""Class nets: one evaluator over the contact, crashed and race nets; their checkpoints;
the refinement stage and its deeper-search labels."""
import os
import subprocess
import sys

import numpy as np
import pytest

from engine.classes import CONTACT, CRASHED, RACE, classify
from engine.randpos import random_game_positions
from engine.search import Search
from models.checkpoint import CheckpointError, export_nets_npz, load_checkpoint, load_evaluator, load_nets
from models.multinet import ClassNets, over_probs
from models.network import NumpyNet
from training.config import TrainConfig
from training.labels import ply1_probs

torch = pytest.importorskip("torch")
from training.netset import TorchNets, new_configs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _nets(seed=0):
    torch.manual_seed(seed)
    tn = TorchNets(new_configs(TrainConfig(hidden=8, race_hidden=4)))
    return tn, {n: NumpyNet(c, w) for n, (c, w) in tn.numpy_nets().items()}


def test_each_position_is_valued_by_the_net_of_its_class():
    tn, nets = _nets()
    ev = ClassNets(nets)
    boards = random_game_positions(np.random.default_rng(3), 3000)
    cls = classify(boards)
    got = ev.evaluate(boards)
    for c, name in ((CONTACT, "contact"), (CRASHED, "crashed"), (RACE, "race")):
        idx = np.flatnonzero(cls == c)
        assert len(idx) > 10
        assert np.allclose(got[idx], nets[name].evaluate(boards[idx]), atol=1e-6)
    # the torch twin used in training gives the same numbers
    assert np.allclose(tn.evaluate(boards), got, atol=1e-5)


def test_finished_games_get_exact_probabilities():
    lost_gammon = np.zeros(26, np.int8)
    lost_gammon[6] = 15  # I am on roll with 15 checkers; the opponent has none left
    lost_single = lost_gammon.copy()
    lost_single[6] = 14
    assert over_probs(np.stack([lost_gammon, lost_single])).tolist() == [[0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]


def test_a_net_set_round_trips_through_the_npz_export(tmp_path):
    tn, nets = _nets(1)
    export_nets_npz(tmp_path / "m.npz", tn.numpy_nets(), {"games": 5})
    back, meta = load_nets(tmp_path / "m.npz")
    assert sorted(back) == ["contact", "crashed", "race"] and meta["games"] == 5
    boards = random_game_positions(np.random.default_rng(4), 500)
    from engine import bearoff

    loaded = load_evaluator(tmp_path / "m.npz")  # with the bear-off databases
    assert np.array_equal(loaded.evaluate(boards), ClassNets(nets, bearoff=bearoff.get_db()).evaluate(boards))


def test_a_net_set_missing_a_net_is_refused_in_one_line(tmp_path):
    tn, _ = _nets(2)
    export_nets_npz(tmp_path / "m.npz", {k: v for k, v in tn.numpy_nets().items() if k != "race"}, {})
    with pytest.raises(CheckpointError, match="missing nets: race"):
        load_evaluator(tmp_path / "m.npz")


def test_deeper_labels_equal_the_searchs_one_ply_position_value():
    _, nets = _nets(3)
    ev = ClassNets(nets)
    boards = random_game_positions(np.random.default_rng(5), 40)
    got = ply1_probs(ev.evaluate, boards)
    s = Search(ev)
    want = np.stack([s.evaluate_position(b, ply=1).probs.reshape(5) for b in boards])
    assert np.allclose(got, want, atol=1e-5)


def _train_args(parallel_games: int = 16, batch_size: int = 64) -> list[str]:
    """``tabla train`` with one worker, small batches and no strength checks."""
    return [sys.executable, "-m", "scripts.tabla", "train", "--workers", "1", "--parallel-games", str(parallel_games),
            "--batch-size", str(batch_size), "--eval-minutes", "0", "--no-progress", "--hidden", "8"]


@pytest.fixture(scope="module")
def td_checkpoint(tmp_path_factory):
    """A tiny TD checkpoint (20 games, 8 hidden units) that the refine tests start from."""
    out = tmp_path_factory.mktemp("td")
    r = subprocess.run(_train_args() + ["--out", str(out), "--games", "20"], capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    return out / "latest.pt"


def _refine(tmp_path, start, refine_flags: list[str], labels: int, parallel_games: int = 16, batch_size: int = 64,
            widen: list[str] | None = None):
    """``tabla train --stage refine`` from checkpoint ``start`` until it has ``labels`` labels
    of its own, with ``refine_flags`` (after ``python -m scripts.widen`` with ``widen``, if
    given); the refined checkpoint."""
    if widen:
        r = subprocess.run([sys.executable, "-m", "scripts.widen", "--checkpoint", str(start), "--out", str(tmp_path / "w.pt"),
                            *widen], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        start = tmp_path / "w.pt"
    r = subprocess.run(_train_args(parallel_games, batch_size) + [
        "--stage", "refine", "--resume", str(start), "--out", str(tmp_path / "rf"), "--refine-max-labels", str(labels),
        "--buffer", "5000", *refine_flags], capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    assert f"labels (limit {labels:,} labels)" in r.stdout
    return load_checkpoint(tmp_path / "rf" / "latest.pt")


def test_refine_stage_trains_from_a_checkpoint_and_records_itself(tmp_path, td_checkpoint):
    ck = _refine(tmp_path, td_checkpoint, [], labels=128)
    st = ck["stages"][-1]
    assert st["stage"] == "refine" and ck["labelled"] >= 128 and st["labelled_here"] == ck["labelled"] and st["decisions"] > 0
    assert st["limits"] == {"minutes": None, "labels": 128}
    before = load_checkpoint(td_checkpoint)
    assert not torch.equal(before["nets"]["contact"]["weights"]["fc1.weight"], ck["nets"]["contact"]["weights"]["fc1.weight"])


def test_refine_on_search_labels_with_the_within_decision_term_says_so_on_the_card(tmp_path, td_checkpoint):
    ck = _refine(tmp_path, td_checkpoint, ["--refine-rank-weight", "1.5", "--candidates", "3"], labels=128)
    st = ck["stages"][-1]
    assert st["refine_config"]["labels"] == "search" and st["refine_config"]["rank_weight"] == 1.5 and ck["labelled"] > 0
    from scripts.ship_model import _stage_row

    row = _stage_row(st)
    assert "2-ply play values" in row
    assert "3 candidates per decision, plus 1.5 × the squared error of each result's equity less its decision's mean error" in row


def test_refine_on_luck_adjusted_returns_teaches_only_the_chosen_nets(tmp_path, td_checkpoint):
    ck = _refine(tmp_path, td_checkpoint, ["--refine-labels", "returns", "--refine-nets", "contact", "--reuse", "2",
                                       "--refine-lr", "1e-3", "--refine-lr-end", "1e-4", "--refine-explore", "0.2",
                                       "--refine-lambda", "0.7", "--refine-restart-class", "crashed", "--refine-restart", "0.5",
                                       "--refine-policy-ply", "2", "--refine-policy-classes", "contact", "crashed"],
                 labels=16, parallel_games=8, batch_size=16)  # 2-ply games end slowly: train from the first labels
    assert ck["stages"][-1]["refine_config"]["labels"] == "returns" and ck["labelled"] >= 16
    before = load_checkpoint(td_checkpoint)
    w = "fc1.weight"
    assert not torch.equal(before["nets"]["contact"]["weights"][w], ck["nets"]["contact"]["weights"][w])
    for name in ("crashed", "race"):
        assert torch.equal(before["nets"][name]["weights"][w], ck["nets"][name]["weights"][w])
    from scripts.ship_model import _stage_row

    row = _stage_row(ck["stages"][-1])
    assert "--refine-labels returns" in row and "of the contact nets" in row and "luck-adjusted λ-returns, λ = 0.7," in row and "1-ply value plus λ times" in row
    assert ck["stages"][-1]["refine_config"]["lam"] == 0.7
    assert "0.001 → 0.0001 (linear in labels, to 16)" in row and "at 20% of plies one of the 2nd to 4th best results, " in row
    assert ck["stages"][-1]["explored"] > 0
    assert "restarted with chance 0.5 from one of the last 20,000 crashed positions reached from the opening" in row
    assert ck["stages"][-1]["refine_config"]["restart_class"] == "crashed" and ck["stages"][-1]["restarts"] >= 0
    assert "positions of greedy 2-ply self-play (each play in contact and crashed positions the best at 2 ply of the nets' 4 best results; " in row
    assert ck["stages"][-1]["refine_config"]["policy_ply"] == 2 and ck["stages"][-1]["deeper"] >= 0
    assert list(ck["stages"][-1]["refine_config"]["policy_classes"]) == ["contact", "crashed"]


def test_refine_on_rollout_labels_teaches_the_chosen_net_and_says_how_on_the_card(tmp_path, td_checkpoint):
    ck = _refine(tmp_path, td_checkpoint, ["--refine-labels", "rollouts", "--refine-nets", "contact", "--reuse", "4",
                                       "--candidates", "2", "--refine-rollout-others", "1", "--refine-rollout-trials", "2",
                                       "--refine-rollout-truncate", "4", "--refine-rollout-follow",
                                       "--refine-rank-weight", "2"], labels=16, parallel_games=4, batch_size=16)
    from scripts.ship_model import _stage_row

    st = ck["stages"][-1]
    assert st["refine_config"]["labels"] == "rollouts" and ck["labelled"] >= 16 and st["decisions"] > 0
    before = load_checkpoint(td_checkpoint)
    w = "fc1.weight"
    assert not torch.equal(before["nets"]["contact"]["weights"][w], ck["nets"]["contact"]["weights"][w])
    for name in ("crashed", "race"):
        assert torch.equal(before["nets"][name]["weights"][w], ck["nets"][name]["weights"][w])
    row = _stage_row(st)
    assert "--refine-labels rollouts" in row and "of the contact nets" in row and "disputed: the best rolled-out" in row
    assert "decisions of 1-ply self-play that plays the rolled-out best result at rolled-out decisions" in row
    assert "plus 2.0 × the squared error of each result's equity less its decision's mean error" in row
    assert "the nets' 2 best results and 1 more at random per decision, each rolled out with 2 variance-reduced 1-ply trials cut after 4 half-moves" in row


def test_refine_stores_its_labels_and_a_later_run_replays_them(tmp_path, td_checkpoint):
    store = tmp_path / "store"
    ck = _refine(tmp_path, td_checkpoint, ["--refine-nets", "contact", "--refine-store", str(store)], labels=128)
    from training.label_store import label_files, replay_labels

    files = label_files([str(store)])
    boards, targets, _ = replay_labels([str(store)])
    assert files and len(boards) == ck["labelled"]  # every label of the run, once
    r = subprocess.run(_train_args(parallel_games=4) + [
        "--stage", "refine", "--resume", str(tmp_path / "rf" / "latest.pt"), "--out", str(tmp_path / "rf2"),
        "--refine-max-labels", "16", "--refine-nets", "contact", "--refine-replay", str(store)],
        capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    st = load_checkpoint(tmp_path / "rf2" / "latest.pt")["stages"][-1]
    assert st["replayed"] == len(boards) and st["labelled_here"] >= 0
    from scripts.ship_model import _stage_row

    assert f"with {len(boards):,} stored labels of earlier runs put into the buffer first" in _stage_row(st)
    bad = tmp_path / "labels-bad.npz"
    bad.write_bytes(b"junk")
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "train", "--stage", "refine", "--resume", str(tmp_path / "rf" / "latest.pt"),
                        "--out", str(tmp_path / "rf3"), "--minutes", "0.1", "--workers", "1", "--refine-replay", str(bad)],
                       capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode != 0 and "Traceback" not in r.stderr and "not a label file" in r.stderr
    assert not (tmp_path / "rf3").exists()  # refused before the run wrote anything


def test_refine_of_new_inputs_only_keeps_every_other_weight(tmp_path, td_checkpoint):
    ck = _refine(tmp_path, td_checkpoint, ["--refine-labels", "returns", "--refine-nets", "contact", "--reuse", "2",
                                           "--refine-lr", "1e-2", "--refine-new-inputs-only"],
                 labels=64, widen=["--net", "contact", "--encoding", "tabla-contact-v3"])
    st = ck["stages"][-1]
    assert st["refine_config"]["new_inputs_only"] and ck["labelled"] > 0
    before = load_checkpoint(tmp_path / "w.pt")["nets"]["contact"]["weights"]
    after = ck["nets"]["contact"]["weights"]
    assert torch.equal(before["fc1.weight"][:, :242], after["fc1.weight"][:, :242])
    for k in ("fc1.bias", "fc2.weight", "fc2.bias"):
        assert torch.equal(before[k], after[k])
    from scripts.ship_model import _stage_row

    assert "only the weights of the inputs each net's encoding adds to the one it extends learning" in _stage_row(st)


def test_refine_of_new_inputs_only_refuses_a_net_without_new_inputs(tmp_path):
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "train", "--stage", "refine", "--resume", "models/tabla.pt",
                        "--out", str(tmp_path / "rf"), "--minutes", "1", "--refine-nets", "contact", "--refine-new-inputs-only"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "the contact net reads tabla-contact-v2, which adds no inputs to another encoding" in r.stderr


@pytest.mark.parametrize("flags", [["--refine-lr", "0"], ["--refine-lr-end", "-1e-5"], ["--refine-explore", "1.5"],
                                   ["--refine-lambda", "1.2"], ["--refine-restart", "1.5"], ["--refine-restart", "0.5"],
                                   ["--refine-policy-classes", "crashed"], ["--refine-rollout-trials", "0"],
                                   ["--refine-rollout-truncate", "0"], ["--refine-rollout-share", "0"],
                                   ["--refine-rank-weight", "-1"], ["--refine-rank-weight", "0.5", "--refine-labels", "returns"],
                                   ["--refine-rollout-follow"], ["--refine-rollout-close", "0.05"],
                                   ["--refine-rollout-close", "-0.1", "--refine-labels", "rollouts"],
                                   ["--refine-rollout-clear-share", "1.5", "--refine-labels", "rollouts"],
                                   ["--refine-max-labels", "0"]])
def test_refine_rejects_a_learning_rate_exploration_or_lambda_out_of_range(tmp_path, flags):
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "train", "--stage", "refine", "--resume", str(tmp_path / "x.pt"),
                        "--out", str(tmp_path / "rf"), "--minutes", "1", *flags], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and flags[0] in r.stderr


def test_refine_needs_a_checkpoint_and_a_limit_in_minutes_or_labels(tmp_path):
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "train", "--stage", "refine", "--out", str(tmp_path), "--minutes", "1"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--resume" in r.stderr
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "train", "--stage", "refine", "--out", str(tmp_path / "rf"),
                        "--resume", "models/tabla.pt"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--minutes or --refine-max-labels" in r.stderr
    assert not (tmp_path / "rf").exists()


def test_money_cube_decisions_in_short_bearoffs_use_the_exact_two_sided_values():
    from engine import bearoff
    from engine.api import Engine
    from engine.position import Position

    ev = ClassNets(_nets(4)[1], bearoff=bearoff.get_db())
    b = np.zeros(26, np.int8)
    b[[1, 3, 5, 6]] = [2, 1, 1, 1]       # me: 5 checkers home
    b[[20, 22, 24]] = [-1, -2, -1]       # the opponent: 4 checkers home
    centred, owned, opp_owns = bearoff.two_sided_cubeful(b[None])[0]
    res = Engine(ev).cube(Position.from_array(b), ply=0)
    assert res.decision.no_double == pytest.approx(centred, abs=1e-6)
    # doubled, the opponent owns a cube at 2: twice the database's value per cube
    assert res.decision.double_take == pytest.approx(2 * opp_owns, abs=1e-6)


def test_races_within_eight_points_are_valued_by_the_one_sided_databases_not_the_race_net():
    from engine import bearoff
    from engine.ids import position_from_id
    from engine.movegen import legal_results

    ev = ClassNets(_nets(5)[1], bearoff=bearoff.get_db())
    # 33sAAMA7AwEAAA, 3-1: 10/6 brings the last checker home, 10/7 4/3 leaves it on the
    # 7-point; both results are valued from the one-sided databases
    results = legal_results(position_from_id("33sAAMA7AwEAAA").array(), 3, 1)
    wide = bearoff.in_one_sided_wide(results)
    assert wide.sum() >= 3 and not wide.all()
    assert np.allclose(ev.evaluate(results[wide]), bearoff.one_sided_probs(results[wide]), atol=1e-6)
