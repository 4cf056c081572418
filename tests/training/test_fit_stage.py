"""The fit stage (:mod:`training.fit_stage`, ``tabla train --stage fit``): stored labels are
split by whole decisions, trained on in batches of whole decisions, and the epoch whose
nets choose best among the held-out decisions' results is the one kept."""
from __future__ import annotations

import numpy as np
import pytest

from models.checkpoint import default_bearoff, load_checkpoint, load_nets
from models.network import NetConfig
from scripts.tabla import main
from training.config import FitConfig, RefineConfig
from training.fit_stage import choice_regret, decision_batches, heldout_figures, split_decisions
from training.label_store import replay_labels, write_labels
from training.netset import TorchNets
from training.refine import Generator


def _opp_probs_for_mover_equity(eq: list[float]) -> np.ndarray:
    """Probabilities seen by the opponent (no gammons) whose mover's equity is ``eq``: the
    opponent's equity is 2 p - 1, the mover's its negation, so p = (1 - eq) / 2."""
    p = np.zeros((len(eq), 5), np.float32)
    p[:, 0] = (1.0 - np.asarray(eq)) / 2.0
    return p


def test_regret_is_the_labels_best_less_the_labels_value_of_the_nets_first_choice():
    # decision 7: labels value the results 0.30, 0.20, 0.10 for the mover; the nets prefer the
    # second (0.5 > 0.4 > 0.0): regret 0.10. Decision 9: the nets prefer the labels' best.
    # Decision 4 has one result: no choice, left out.
    groups = np.array([7, 7, 7, 9, 9, 4])
    targets = _opp_probs_for_mover_equity([0.30, 0.20, 0.10, -0.20, 0.00, 0.5])
    pred = _opp_probs_for_mover_equity([0.40, 0.50, 0.00, -0.30, 0.10, 0.0])
    regret, agree, decisions = choice_regret(pred, targets, groups)
    assert decisions == 2
    assert regret == pytest.approx(1000 * 0.10 / 2, abs=1e-3)
    assert agree == 0.5


def test_held_out_decisions_are_whole_and_the_split_covers_every_label():
    groups = np.repeat(np.arange(200), 3)
    train, hold = split_decisions(groups, 0.25, np.random.default_rng(1))
    assert sorted(np.concatenate([train, hold]).tolist()) == list(range(600))
    assert not set(groups[train]) & set(groups[hold])
    assert 20 < len(set(groups[hold])) < 80


def test_batches_hold_whole_decisions_of_about_the_batch_size():
    rng = np.random.default_rng(2)
    groups = np.repeat(rng.permutation(300), rng.integers(1, 6, 300))
    batches = decision_batches(groups, 64, rng)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(groups)))
    seen: set[int] = set()
    for b in batches:
        here = set(groups[b].tolist())
        assert not here & seen  # a decision lies in one batch only
        seen |= here
        assert len(b) <= 64 + 5
    assert all(len(b) >= 64 - 5 for b in batches[:-1])


def _store_two_ply_labels(directory, plies: int = 24) -> TorchNets:
    """Disputed decisions of the shipped model's 1-ply self-play labelled by its 2-ply values
    (the refine stage's search labels), written as a label file; returns the nets."""
    ck = load_checkpoint("models/tabla.pt")
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, default_bearoff())
    nets.load_state(ck["nets"])
    gen = Generator(RefineConfig(parallel_games=16, keep_agreed=0.0, epsilon=0.0, seed=3), np.random.default_rng(3))
    parts = [gen.step_grouped(nets.evaluate) for _ in range(plies)]
    b, t, g = (np.concatenate([p[i] for p in parts]) for i in range(3))
    write_labels(directory, b, t, g, "search", first=0)
    return nets


def test_fit_stage_learns_the_stored_labels_and_keeps_the_epoch_of_least_regret(tmp_path, capsys):
    store = tmp_path / "store"
    _store_two_ply_labels(store)
    out = tmp_path / "fit"
    args = ["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(store), "--out", str(out),
            "--fit-epochs", "3", "--fit-lr", "1e-3", "--fit-lr-final", "3e-4", "--fit-holdout", "0.3",
            "--batch-size", "64", "--eval-games", "0", "--seed", "5"]
    assert main(args) == 0
    assert "held-out regret" in capsys.readouterr().out
    before, after = load_checkpoint("models/tabla.pt"), load_checkpoint(out / "latest.pt")
    st = after["stages"][-1]
    assert st["stage"] == "fit" and len(after["stages"]) == len(before["stages"]) + 1
    assert st["train_labels"] + st["heldout_labels"] == st["labels"] > 0
    epochs = st["epochs"]
    assert [e["epoch"] for e in epochs] == [0, 1, 2, 3]
    assert epochs[3]["loss"] < epochs[1]["loss"]  # the nets learn the training labels
    best = min(range(4), key=lambda i: (epochs[i]["regret"], i))
    assert st["best_epoch"] == best
    for k, v in before["nets"]["race"]["weights"].items():  # only the contact net learns
        assert (after["nets"]["race"]["weights"][k] == v).all()
    # the kept nets are the best epoch's: their held-out regret is the one recorded for it
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in after["nets"].items()}, default_bearoff())
    nets.load_state(after["nets"])
    boards, targets, groups = replay_labels([str(store)])
    from training.refine import valued_by

    keep = valued_by(boards, ("contact",))
    boards, targets, groups = boards[keep], targets[keep], groups[keep]
    _, hold = split_decisions(groups, 0.3, np.random.default_rng([5, 11]))
    assert heldout_figures(nets, boards[hold], targets[hold], groups[hold])["regret"] == pytest.approx(
        epochs[best]["regret"], abs=1e-4)
    assert set(load_nets(out / "latest.npz")[0]) == {"contact", "crashed", "race"}
    from scripts.ship_model import _stage_row

    row = _stage_row(st)
    assert "`tabla train --stage fit`" in row and f"{st['train_labels']:,} stored labels" in row


def test_fit_stage_refuses_bad_labels_and_settings_in_one_line(tmp_path, capsys):
    junk = tmp_path / "labels-junk.npz"
    junk.write_bytes(b"not a label file")
    assert main(["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(junk),
                 "--out", str(tmp_path / "a"), "--eval-games", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a label file" in err and not (tmp_path / "a").exists()
    assert main(["train", "--stage", "fit", "--resume", "models/tabla.pt", "--out", str(tmp_path / "b")]) == 2
    assert "--fit-labels" in capsys.readouterr().err
    assert main(["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(junk),
                 "--fit-holdout", "1.5", "--out", str(tmp_path / "c")]) == 2
    assert "holdout" in capsys.readouterr().err
    with pytest.raises(ValueError, match="labels"):
        FitConfig()


def _pip_evaluate(boards: np.ndarray) -> np.ndarray:
    """A stand-in evaluator: the side on roll wins more the fewer pips it has left than its
    opponent (no gammons); enough to make one play the best."""
    b = boards.astype(np.int64)
    pts = np.arange(26)
    mine = (np.clip(b, 0, None) * pts).sum(axis=1)
    theirs = (np.clip(-b, 0, None) * (25 - pts)).sum(axis=1)
    p = np.zeros((len(boards), 5), np.float32)
    p[:, 0] = 1 / (1 + np.exp((mine - theirs) / 20.0))
    return p


def test_reply_position_is_the_best_play_of_the_drawn_roll_seen_by_the_next_side():
    from engine.dice import ROLL_ARRAY, ROLL_WEIGHTS
    from engine.movegen import legal_results
    from engine.position import Position, flip_array
    from engine.values import mover_equity
    from training.reply_labels import reply_positions

    start = Position.start().array()
    got = reply_positions(start[None, :], _pip_evaluate, np.random.default_rng(9))
    d1, d2 = ROLL_ARRAY[np.random.default_rng(9).choice(21, size=1, p=ROLL_WEIGHTS)[0]]
    children = legal_results(start, int(d1), int(d2))
    seen = np.array([flip_array(c) for c in children])
    best = seen[int(np.argmax(mover_equity(_pip_evaluate(seen))))]
    assert got.shape == (1, 26) and (got[0] == best).all()


def test_reply_labels_are_the_one_ply_values_of_distinct_positions_in_play():
    from engine.position import Position
    from training.labels import ply1_probs
    from training.reply_labels import reply_labels

    start = Position.start().array()
    boards = np.repeat(start[None, :], 40, axis=0)
    pos, targets = reply_labels(boards, _pip_evaluate, np.random.default_rng(4), ("contact",))
    assert 1 < len(pos) <= 21 and len(np.unique(pos, axis=0)) == len(pos)  # one per distinct roll's best play
    assert np.allclose(targets, ply1_probs(_pip_evaluate, pos))


def _fit_with_replies(tmp_path):
    """Store a few 2-ply labels and fit the shipped model's contact net to them with
    ``--fit-replies`` (two epochs); the store and the output folder."""
    store = tmp_path / "store"
    _store_two_ply_labels(store, plies=12)
    out = tmp_path / "fit"
    args = ["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(store), "--out", str(out),
            "--fit-epochs", "2", "--fit-lr", "1e-3", "--fit-lr-final", "3e-4", "--fit-holdout", "0.3",
            "--batch-size", "64", "--eval-games", "0", "--seed", "5", "--fit-replies"]
    assert main(args) == 0
    return store, out


def test_fit_with_replies_fits_again_from_the_start_on_the_stored_and_the_reply_labels(tmp_path, capsys):
    from training.refine import valued_by

    store, out = _fit_with_replies(tmp_path)
    assert "reply labels" in capsys.readouterr().out
    st = load_checkpoint(out / "latest.pt")["stages"][-1]
    stored, _, _ = replay_labels([str(store)])
    replies, targets, _ = replay_labels([str(out / "replies")])
    assert st["reply_labels"] == len(replies) > 0 and st["fit_config"]["replies"] is True
    # the reply labels train; the held-out decisions are the stored ones, as without replies
    assert st["train_labels"] + st["heldout_labels"] == st["labels"] == st["reply_labels"] + int(
        valued_by(stored, ("contact",)).sum())
    assert ((targets >= 0) & (targets <= 1)).all()
    assert [e["epoch"] for e in st["epochs"]] == [0, 1, 2] and "first_pass" in st
    from scripts.ship_model import _stage_row

    assert f"{st['reply_labels']:,} reply labels" in _stage_row(st)


@pytest.mark.parametrize("second_regret_shift, kept", [(+1.0, "first"), (-1.0, "second")])
def test_fit_with_replies_keeps_the_pass_of_least_held_out_regret(tmp_path, monkeypatch, second_regret_shift, kept):
    import training.fit_stage as fit_stage

    real = fit_stage.fit_pass
    seen = {}

    def shifted(*args, **kwargs):  # each pass keeps its last epoch; the second's regret made worse (or better)
        epochs, _, _ = real(*args, **kwargs)
        seen[args[-1]] = state = args[0].state()
        if args[-1] == "fit":
            seen["regret"] = epochs[-1]["regret"]
        else:
            epochs = [{**e, "regret": seen["regret"] + second_regret_shift} for e in epochs]
        return epochs, len(epochs) - 1, state

    monkeypatch.setattr(fit_stage, "fit_pass", shifted)
    _, out = _fit_with_replies(tmp_path)
    ck = load_checkpoint(out / "latest.pt")
    st = ck["stages"][-1]
    assert st["kept_pass"] == kept
    # the checkpoint holds the kept pass's nets, and the two passes' nets differ
    kept_weights = seen["fit" if kept == "first" else "fit_replies"]["contact"]["weights"]
    other_weights = seen["fit_replies" if kept == "first" else "fit"]["contact"]["weights"]
    saved = ck["nets"]["contact"]["weights"]
    assert all(np.array_equal(saved[k].numpy(), kept_weights[k].numpy()) for k in kept_weights)
    assert not all(np.array_equal(saved[k].numpy(), other_weights[k].numpy()) for k in other_weights)
    from scripts.ship_model import _stage_row

    row = _stage_row(st)
    assert ("so the first fit's nets are kept" in row) == (kept == "first")
    from scripts.cmd_train import _fit_summary

    line = _fit_summary(st, 2, out / "latest.pt")
    assert ("the first pass kept" in line) == (kept == "first")
    assert f"after {st['reply_labels']} reply labels" in line or kept == "first"
    trained = st["train_labels"] - (st["reply_labels"] if kept == "first" else 0)
    assert line.startswith(f"fitted to {trained} labels,")
    if kept == "first":
        assert st["epochs"][st["best_epoch"]]["regret"] == pytest.approx(seen["regret"])
        assert st["second_pass"]["regret"] == pytest.approx(seen["regret"] + 1.0)


def test_fit_stage_records_the_commit_it_started_from_not_one_made_while_it_ran(tmp_path, monkeypatch):
    import training.fit_stage as fit_stage

    store = tmp_path / "store"
    _store_two_ply_labels(store, plies=12)
    out = tmp_path / "fit"
    # HEAD moves on once the run is under way (its tensorboard log exists)
    monkeypatch.setattr(fit_stage, "git_commit", lambda: "b" * 40 if (out / "tb").exists() else "a" * 40)
    args = ["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(store), "--out", str(out),
            "--fit-epochs", "1", "--fit-holdout", "0.3", "--batch-size", "64", "--eval-games", "0", "--seed", "5"]
    assert main(args) == 0
    assert load_checkpoint(out / "latest.pt")["stages"][-1]["commit"] == "a" * 40


def test_weight_average_moves_one_minus_decay_of_the_way_to_the_weights_each_step():
    import torch

    from training.fit_stage import WeightAverage

    ck = load_checkpoint("models/tabla.pt")
    nets = TorchNets({n: NetConfig(**d["net_config"]) for n, d in ck["nets"].items()}, default_bearoff())
    nets.load_state(ck["nets"])
    fc1 = nets.modules["contact"].fc1.weight
    start = fc1.detach().clone()
    avg = WeightAverage(nets, ("contact",), 0.75)
    with torch.no_grad():
        fc1.add_(1.0)  # the trained weights move by 1: the average by a quarter of it
    avg.update()
    avg.update()  # again: 0.25 + 0.75 * 0.25 = 0.4375 of the way
    race_before = nets.modules["race"].fc1.weight.detach().clone()
    avg.load_into_nets()
    assert torch.allclose(fc1, start + 0.4375, atol=1e-6)
    assert torch.equal(nets.modules["race"].fc1.weight, race_before)  # nets not averaged are left alone


def test_fit_with_ema_keeps_the_average_and_trains_on_from_the_trained_weights(tmp_path):
    store = tmp_path / "store"
    _store_two_ply_labels(store, plies=12)
    base = ["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(store), "--fit-epochs", "2",
            "--fit-lr", "1e-3", "--fit-lr-final", "1e-3", "--fit-holdout", "0.3", "--batch-size", "64",
            "--eval-games", "0", "--seed", "5"]
    assert main(base + ["--out", str(tmp_path / "plain")]) == 0
    assert main(base + ["--out", str(tmp_path / "ema"), "--fit-ema", "0.9"]) == 0
    plain = load_checkpoint(tmp_path / "plain" / "latest.pt")["stages"][-1]
    ema = load_checkpoint(tmp_path / "ema" / "latest.pt")["stages"][-1]
    assert ema["fit_config"]["ema"] == 0.9
    # the same gradient steps: training goes on from the trained weights, not the average
    assert [e["loss"] for e in ema["epochs"][1:]] == pytest.approx([e["loss"] for e in plain["epochs"][1:]], rel=1e-6)
    # but what is measured after each epoch is the average, not the trained weights
    assert ema["epochs"][0]["mse"] == plain["epochs"][0]["mse"]
    assert ema["epochs"][1]["mse"] != pytest.approx(plain["epochs"][1]["mse"], rel=1e-6)


def test_fit_refuses_an_ema_decay_outside_zero_to_one(tmp_path, capsys):
    args = ["train", "--stage", "fit", "--resume", "models/tabla.pt", "--fit-labels", str(tmp_path),
            "--out", str(tmp_path / "o"), "--fit-ema", "1.0"]
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ema must be at least 0 and below 1" in err[0]
