"""Behaviour is unchanged: the recorded ``tabla hint`` / ``eval`` / ``cube`` / ``engine``
outputs on 200 positions (see :mod:`golden`) are reproduced byte for byte."""
from __future__ import annotations

import pytest

from golden import load_recording, run_case

RECORDING = load_recording()


@pytest.mark.parametrize("command", ["hint", "eval", "cube", "engine"])
def test_outputs_are_byte_identical_to_the_recording(command):
    cases = [c for c in RECORDING if c["argv"][0] == command]
    assert len(cases) >= 10
    for case in cases:
        got = run_case(case)
        want = {k: case[k] for k in ("rc", "stdout", "stderr")}
        assert got == want, f"tabla {' '.join(case['argv'])} differs from the recording"


def test_recording_covers_200_positions_text_json_and_errors():
    argvs = [c["argv"] for c in RECORDING]
    positions = {a[a.index("--position-id") + 1] if "--position-id" in a else a[a.index("--xgid") + 1].split(":")[0]
                 for a in argvs if "--position-id" in a or "--xgid" in a}
    assert len(positions) >= 200
    assert sum("--json" in a for a in argvs) >= 600
    assert {c["rc"] for c in RECORDING} >= {0, 2}
    assert any('"ok":false' in c["stdout"] or '"ok": false' in c["stdout"] for c in RECORDING if c["argv"][0] == "engine")
