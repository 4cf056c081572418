"""The shipped match equity table (Kazaross-XG2) and its lookups."""
from __future__ import annotations

import numpy as np
import pytest

from engine.met import METError, default_met, load_met


def test_table_covers_25_point_matches_and_keeps_its_notice():
    met = default_met()
    assert met.length == 25 and met.pre.shape == (25, 25) and met.post.shape == (25,)
    from engine.met import DEFAULT_MET_PATH

    assert "Copyright (C) 2011 Neil Kazaross" in DEFAULT_MET_PATH.read_text()


def test_pre_crawford_table_is_complementary_and_level_scores_are_even():
    met = default_met()
    np.testing.assert_allclose(met.pre + met.pre.T, 1.0, atol=1e-9)
    assert all(met.mwc(n, n) == pytest.approx(0.5) for n in range(1, 26))


def test_needing_fewer_points_is_better():
    met = default_met()
    for b in range(1, 26):
        col = [met.mwc(a, b) for a in range(1, 26)]
        assert all(x > y for x, y in zip(col, col[1:]))


def test_known_entries_crawford_and_post_crawford():
    met = default_met()
    assert met.mwc(1, 2) == pytest.approx(0.67736)  # leader at the Crawford game
    assert met.mwc(2, 1, post_crawford=True) == pytest.approx(0.48803)  # trailer post-Crawford
    assert met.mwc(1, 2, post_crawford=True) == pytest.approx(1 - 0.48803)
    assert met.mwc(1, 1, post_crawford=True) == 0.5


def test_a_won_or_lost_match():
    met = default_met()
    assert met.mwc(0, 3) == 1.0 and met.mwc(-2, 3) == 1.0
    assert met.mwc(3, 0) == 0.0 and met.mwc(4, -1) == 0.0


def test_scores_outside_the_table_and_bad_files_are_errors(tmp_path):
    met = default_met()
    with pytest.raises(METError):
        met.mwc(26, 3)
    bad = tmp_path / "bad.xml"
    bad.write_text("<met><pre-crawford-table type='explicit'><row><me>x</me></row></pre-crawford-table>"
                   "<post-crawford-table><row><me>0.5</me></row></post-crawford-table></met>")
    with pytest.raises(METError):
        load_met(bad)
    with pytest.raises(METError):
        load_met(tmp_path / "missing.xml")
    broken = tmp_path / "broken.xml"
    broken.write_text("<met>")
    with pytest.raises(METError):
        load_met(broken)
