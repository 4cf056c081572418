"""``tabla hint`` / ``eval`` / ``cube`` through the real dispatcher."""
from __future__ import annotations

import json

import pytest

from scripts.tabla import main

START = "4HPwATDgc/ABMA"


def tabla(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_hint_with_dice_ranks_plays_with_equity_difference_and_probabilities(capsys):
    rc, out, _ = tabla(capsys, "hint", "--position-id", START, "--dice", "31", "--ply", "1", "--top", "3", "--heuristic")
    assert rc == 0
    lines = out.splitlines()
    ranked = [l for l in lines if l.lstrip()[:2] in ("1.", "2.", "3.")]
    assert len(ranked) == 3 and "8/5 6/5" in ranked[0]
    assert "(-" in ranked[1] and out.count("win ") == 3


def test_hint_json_is_the_protocol_best_reply(capsys):
    rc, out, _ = tabla(capsys, "hint", "--position-id", START, "--dice", "3-1", "--top", "2", "--json", "--heuristic")
    reply = json.loads(out)
    assert rc == 0 and reply["ok"] and reply["play"] == reply["candidates"][0]["play"]
    assert len(reply["candidates"]) == 2 and reply["steps"]


def test_hint_without_dice_gives_the_cube_decision(capsys):
    rc, out, _ = tabla(capsys, "hint", "--position-id", START, "--json", "--heuristic", "--ply", "0")
    reply = json.loads(out)
    assert rc == 0 and reply["action"] == "no_double" and set(reply["equities"]) >= {"no_double", "double_take", "double_drop"}


def test_hint_reads_the_dice_of_an_xgid(capsys):
    rc, out, _ = tabla(capsys, "hint", "--xgid", "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10", "--ply", "1", "--heuristic")
    assert rc == 0 and "Dice 5-2" in out


def test_eval_and_cube_text_and_json(capsys):
    rc, out, _ = tabla(capsys, "eval", "--position-id", START, "--ply", "0", "--heuristic")
    assert rc == 0 and "cubeless equity" in out and "cubeful equity" in out
    rc, out, _ = tabla(capsys, "cube", "--position-id", START, "--match-length", "7", "--score", "4", "2", "--heuristic")
    assert rc == 0 and "Proper cube action" in out and "7-point match" in out
    rc, out, _ = tabla(capsys, "cube", "--position-id", START, "--json", "--heuristic", "--ply", "0")
    assert json.loads(out)["ok"] is True


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["hint", "--position-id", "nope", "--dice", "31", "--heuristic"], "Position ID"),
        (["hint", "--position-id", START, "--dice", "71", "--heuristic"], "dice"),
        (["hint", "--position-id", START, "--dice", "31", "--ply", "7", "--heuristic"], "ply"),
        (["cube", "--position-id", START, "--cube-value", "3", "--heuristic"], "cube value"),
        (["eval", "--position-id", START, "--model", "/nonexistent/x.npz"], "model"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    rc, out, err = tabla(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle.lower() in err.lower()


def test_cube_text_without_a_cube_action_measures_the_options_from_no_double(capsys):
    # the opponent owns the cube: the player may not double, so no double is the proper
    # action and the other rows are shown relative to it (CubeDecision.proper_equity)
    rc, out, _ = tabla(capsys, "cube", "--position-id", "4OfCICGGZ8UDIA", "--cube-value", "2", "--cube-owner", "opponent",
                       "--ply", "0", "--heuristic")
    rows = [l for l in out.splitlines() if l.lstrip()[:2] in ("1.", "2.", "3.")]
    assert rc == 0 and "No cube action available" in out
    assert "(" not in rows[0] and all("(" in r for r in rows[1:])


XGID_52 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"


@pytest.mark.parametrize(
    ("given", "by_option"),
    [
        ([XGID_52], ["--xgid", XGID_52]),
        ([XGID_52], [f"--xgid={XGID_52[5:]}"]),  # an XGID starting with '-': the prefix, or '=' after --xgid
        ([f"{START}:cAkAAAAAAAAA"], ["--position-id", START, "--match-id", "cAkAAAAAAAAA"]),
        ([START, "--dice", "31"], ["--position-id", START, "--dice", "31"]),
    ],
)
def test_hint_takes_the_id_as_an_argument_told_by_its_form(capsys, given, by_option):
    rc, out, err = tabla(capsys, "hint", *given, "--ply", "1", "--heuristic", "--json")
    assert rc == 0, err
    assert (rc, out) == tabla(capsys, "hint", *by_option, "--ply", "1", "--heuristic", "--json")[:2]


def test_an_id_of_no_known_form_is_one_line_naming_the_forms(capsys):
    rc, out, err = tabla(capsys, "eval", "4HPwATDgc", "--heuristic")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "XGID=" in err and "Position ID" in err


def test_cube_and_eval_default_to_the_engine_protocols_ply(capsys):
    from engine.protocol import EngineSession
    from engine.heuristic import HeuristicEvaluator

    session = EngineSession(HeuristicEvaluator)
    for cmd in ("cube", "eval"):
        rc, out, _ = tabla(capsys, cmd, START, "--match-length", "7", "--score", "2", "4", "--heuristic", "--json")
        reply, _ = session.handle({"id": None, "cmd": cmd, "position_id": START, "match_length": 7, "score": [2, 4]})
        assert rc == 0 and json.loads(out) == json.loads(json.dumps(reply))


def test_cube_tables_show_every_figure_with_three_decimals(capsys):
    import re

    for state in ([], ["--match-length", "7", "--score", "2", "4"]):
        rc, out, _ = tabla(capsys, "cube", START, *state, "--heuristic")
        figures = re.findall(r"[-+]?\d+\.\d+", out)
        assert rc == 0 and figures and {len(f.split(".")[1]) for f in figures} == {3}, out
