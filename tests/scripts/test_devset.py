"""``python -m scripts.devset``: decision sets are built the same from the same seed, every
choice's error is measured from the best graded result (never below 0), a model compared
with itself differs by nothing, and the grades of chosen results are kept beside the set."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("gnubg_nn")

from scripts.devset import main  # noqa: E402


@pytest.mark.parametrize("source", ["gnubg", "arena"])
def test_a_set_is_the_same_from_the_same_seed(tmp_path, source):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (a, b):
        assert main(["make", "--source", source, "--seed", "4", "--positions", "6", "--out", str(out)]) == 0
    with np.load(a) as za, np.load(b) as zb:
        for k in ("boards", "dice", "keys", "eqs"):
            assert np.array_equal(za[k], zb[k])
        assert len(za["boards"]) == 6 and (za["dice"] >= 1).all()


def test_a_model_against_itself_differs_by_nothing_and_grades_are_kept(tmp_path, capsys):
    import json

    s = tmp_path / "t.npz"
    assert main(["make", "--source", "tabla", "--seed", "5", "--positions", "8", "--out", str(s)]) == 0
    capsys.readouterr()
    twin = tmp_path / "twin.npz"
    shutil.copy("models/tabla.npz", twin)
    assert main(["grade", str(s), "models/tabla.npz", str(twin), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    first, second = res["models"]["models/tabla.npz"], res["models"][str(twin)]
    assert res["decisions"] == 8 and res["source"] == "tabla" and first["all"] >= 0.0
    assert second["all"] == first["all"] and second["diff"] == 0.0 and second["diff_ci95"] == 0.0
    cache = tmp_path / "t.cache.npz"
    if cache.exists():  # written only when a choice lay outside gnubg-nn's six best
        stamp = cache.stat().st_mtime_ns
        assert main(["grade", str(s), "models/tabla.npz"]) == 0
        assert cache.stat().st_mtime_ns == stamp  # nothing new to grade


def test_a_file_that_is_not_a_set_is_refused_in_one_line(tmp_path, capsys):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"no")
    assert main(["grade", str(junk), "models/tabla.npz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a decision set" in err


def test_a_set_of_one_class_holds_only_that_class(tmp_path, capsys):
    from scripts.bench_accuracy import report_class

    out = tmp_path / "c.npz"
    assert main(["make", "--source", "gnubg", "--only", "crashed", "--seed", "4", "--positions", "3",
                 "--out", str(out)]) == 0
    assert "3 crashed decisions" in capsys.readouterr().out
    with np.load(out) as z:
        assert len(z["boards"]) == 3 and all(report_class(b) == "crashed" for b in z["boards"])


def test_a_class_the_games_never_reach_is_refused_not_drawn_for_ever(tmp_path, capsys, monkeypatch):
    import scripts.devset as devset

    monkeypatch.setattr(devset, "ROUND", 4)
    monkeypatch.setattr(devset, "MAX_ROUNDS", 2)
    out = tmp_path / "r.npz"
    assert main(["make", "--source", "gnubg", "--only", "race", "--seed", "4", "--positions", "50",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "race decisions in 8 drawn" in err and not out.exists()
