"""Label files (:mod:`training.label_store`): written whole, read back the same, checked on
reading, and replayed with every file's decisions kept apart."""
from __future__ import annotations

import numpy as np
import pytest

from engine.position import Position
from training.label_store import LabelFileError, label_files, read_labels, replay_labels, write_labels


def _labels(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    boards = np.tile(Position.start().array(), (n, 1))
    targets = rng.random((n, 5)).astype(np.float32)
    decisions = np.repeat(np.arange(n // 2), 2)[:n].astype(np.int64)
    return boards, targets, decisions


def test_a_label_file_reads_back_what_was_written(tmp_path):
    b, t, g = _labels(6, 1)
    path = write_labels(tmp_path / "store", b, t, g, "rollouts", first=100)
    assert path.name.startswith("labels-") and path.name.endswith("-000000100-000000105.npz")
    rb, rt, rg, kind = read_labels(path)
    assert np.array_equal(rb, b) and np.array_equal(rt, t) and np.array_equal(rg, g) and kind == "rollouts"
    assert label_files([str(tmp_path / "store")]) == [path]
    assert [p.name for p in (tmp_path / "store").iterdir()] == [path.name]  # written beside, then renamed


def test_a_file_that_is_not_a_label_file_is_refused_in_one_line(tmp_path):
    junk = tmp_path / "labels-junk.npz"
    junk.write_bytes(b"not an npz")
    with pytest.raises(LabelFileError, match="not a label file"):
        read_labels(junk)
    b, t, g = _labels(4, 2)
    np.savez(tmp_path / "wrong.npz", boards=b.astype(np.int16), targets=t, decisions=g, kind=np.array("search"))
    with pytest.raises(LabelFileError, match="boards should be int8"):
        read_labels(tmp_path / "wrong.npz")
    np.savez(tmp_path / "big.npz", boards=b, targets=t + 1.5, decisions=g, kind=np.array("search"))
    with pytest.raises(LabelFileError, match="probabilities"):
        read_labels(tmp_path / "big.npz")
    b2 = b.copy()
    b2[0, 6] = 16
    np.savez(tmp_path / "sixteen.npz", boards=b2, targets=t, decisions=g, kind=np.array("search"))
    with pytest.raises(LabelFileError, match="more than 15 checkers"):
        read_labels(tmp_path / "sixteen.npz")
    with pytest.raises(LabelFileError, match="no such label file"):
        label_files([str(tmp_path / "absent")])


def test_replayed_files_keep_their_decisions_apart_and_their_order(tmp_path):
    b, t, g = _labels(4, 3)  # decisions 0, 0, 1, 1 in each file
    g_alone = np.array([-1, -2, 0, 0], np.int64)  # two labels of no decision
    write_labels(tmp_path / "s", b, t, g, "search", first=0)
    write_labels(tmp_path / "s", b, t + 0, g_alone, "search", first=4)
    rb, rt, rg = replay_labels([str(tmp_path / "s")])
    assert len(rb) == 8 and np.array_equal(rt[:4], t)
    assert rg[0] == rg[1] != rg[2] == rg[3]  # siblings stay siblings
    assert len({*rg[:4]} & {*rg[4:]}) == 0  # no decision shared across files
    assert rg[4] < 0 and rg[5] < 0 and rg[4] != rg[5] and rg[6] == rg[7] >= 1 << 48
    assert len(replay_labels([])[0]) == 0
