"""``tabla legal``: the README's first command, JSON output, one-line errors."""
import json
import subprocess
import sys

import pytest

from scripts.tabla import main


def test_lists_the_16_plays_of_the_opening_31(capsys):
    assert main(["legal", "--position-id", "4HPwATDgc/ABMA", "--dice", "31"]) == 0
    out = capsys.readouterr().out
    assert "16 legal plays for 3-1" in out
    assert "8/5 6/5" in out and "sGfwATDgc/ABMA" in out


def test_json_is_the_protocol_legal_reply(capsys):
    assert main(["legal", "--position-id", "4HPwATDgc/ABMA", "--dice", "3-1", "--json"]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["ok"] is True and len(reply["plays"]) == 16
    entry = next(p for p in reply["plays"] if p["play"] == "8/5 6/5")
    assert entry == {"play": "8/5 6/5", "steps": [[8, 5], [6, 5]], "position_id": "sGfwATDgc/ABMA"}


def test_xgid_supplies_its_own_dice(capsys):
    assert main(["legal", "--xgid", "XGID=-b----E-C---eE---c-e----B-:0:0:1:65:0:0:0:0:10", "--json"]) == 0
    plays = {p["play"] for p in json.loads(capsys.readouterr().out)["plays"]}
    assert "24/13" in plays and len(plays) == 7


def test_an_unplayable_roll_is_announced(capsys):
    closed = "XGID=-------------------bbbbbbA:0:0:1:00:0:0:0:0:10"
    assert main(["legal", "--xgid", closed, "--dice", "66"]) == 0
    assert "cannot be played" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["legal", "--position-id", "nonsense", "--dice", "31"],
        ["legal", "--position-id", "4HPwATDgc/ABMA", "--dice", "71"],
        ["legal", "--position-id", "4HPwATDgc/ABMA"],
        ["legal", "--xgid", "XGID=broken", "--dice", "31"],
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_2(args):
    run = subprocess.run([sys.executable, "-m", "scripts.tabla", *args], capture_output=True, text=True)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and run.stderr.startswith("tabla legal: error:")
