"""``tabla chouette``: the table, ``--log`` (one JSON line per game, each following the
rotation rule from the one before), ``--json``, and one-line errors for bad arguments."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.tabla import main

ROOT = Path(__file__).resolve().parents[2]
BOTS = ["pubeval", "random", "race"]


def chouette(capsys, *args):
    code = main(["chouette", *args, "--no-progress"])
    out = capsys.readouterr()
    return code, out.out, out.err


def read_log(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def expected_next(line):
    """The rotation rule, from a game's log line: a team win (the captain won his game)
    puts the captain in the box and the old box at the end of the line; a team loss
    sends the captain to the end of the line and keeps the box."""
    team = line["team"]
    if line["result"]["captain_won"]:
        return team[0], team[1:] + [line["box"]]
    return line["box"], team[1:] + team[:1]


def check_log(lines, players):
    for prev, cur in zip(lines, lines[1:]):
        assert (cur["box"], cur["team"]) == expected_next(prev), (prev["game"], cur["game"])
        assert cur["captain"] == cur["team"][0]
    for line in lines:
        assert sorted([line["box"], *line["team"]]) == sorted(players)
        assert sum(line["points"].values()) == 0
        for m in line["members"]:
            assert line["points"][m["player"]] == m["points"]
        assert line["points"][line["box"]] == -sum(m["points"] for m in line["members"])


def test_the_table_shows_each_players_figures_and_a_ledger_that_sums_to_zero(capsys):
    code, out, err = chouette(capsys, *BOTS, "--games", "12", "--seed", "3")
    assert code == 0 and err == ""
    assert "chouette: 3 players, 12 games" in out
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("player"))
    assert lines[start].split()[:9] == ["player", "points", "ppg", "box", "capt", "double", "take", "pass", "beaver"]
    rows = {l.split()[0]: l.split() for l in lines[start + 1:start + 1 + len(BOTS)]}
    assert set(rows) == set(BOTS)
    assert sum(int(rows[b][1]) for b in BOTS) == 0
    assert sum(int(rows[b][3]) for b in BOTS) == 12 and sum(int(rows[b][4]) for b in BOTS) == 12
    assert "ledger (row won from column):" in out
    assert out.splitlines()[-1].split() == ["sum", "+0"]


def test_log_has_one_line_per_game_and_every_game_follows_the_rotation_rule(capsys, tmp_path):
    log = tmp_path / "x.jsonl"
    code, out, _ = chouette(capsys, *BOTS, "pipcube", "--games", "30", "--seed", "1", "--log", str(log))
    lines = read_log(log)
    assert code == 0 and len(lines) == 30 and [l["game"] for l in lines] == list(range(1, 31))
    check_log(lines, BOTS + ["pipcube"])
    first = lines[0]
    assert set(first) >= {"box", "captain", "team", "members", "result", "points", "disagreements"}
    assert set(first["members"][0]) == {"player", "actions", "stake", "points"}
    assert f"log {log} (30 games)" in out


def test_gammon_and_split_stakes_in_the_log_match_each_members_points(capsys, tmp_path):
    log = tmp_path / "x.jsonl"
    chouette(capsys, "pipcube", "pubeval", "race", "pipcube", "--games", "40", "--seed", "2", "--log", str(log))
    lines = read_log(log)
    mult = {"single": 1, "gammon": 2, "backgammon": 3}
    for line in lines:
        res = line["result"]
        for m in line["members"]:
            passed = any(a["action"] == "pass" for a in m["actions"])
            if passed:
                assert m["points"] == -m["stake"]
            else:
                sign = 1 if res["winner"] == "team" else -1
                k = 1 if res["end"] == "passed" else mult[res["kind"]]
                assert m["points"] == sign * k * m["stake"]
    split_gammons = [l for l in lines if len({m["stake"] for m in l["members"]}) > 1 and l["result"]["kind"] != "single"]
    assert split_gammons, "the seed gives games where members played for different stakes and a gammon fell"


def test_json_prints_one_object_with_figures_and_the_ledger(capsys, tmp_path):
    code, out, _ = chouette(capsys, *BOTS, "--games", "8", "--seed", "4", "--json", "--jacoby")
    data = json.loads(out)
    assert code == 0 and data["games"] == 8 and data["options"]["jacoby"] is True
    assert data["ledger_sum"] == 0 and sum(data["ledger"].values()) == 0
    assert [f["player"] for f in data["figures"]] == BOTS
    assert {f["player"]: f["points"] for f in data["figures"]} == data["ledger"]
    assert sum(f["box_games"] for f in data["figures"]) == 8
    for a in BOTS:
        for b in BOTS:
            if a != b:
                assert data["ledger_pairs"][a][b] == -data["ledger_pairs"][b][a]


def test_the_same_seed_gives_the_same_games(capsys, tmp_path):
    logs = []
    for name in ("a.jsonl", "b.jsonl"):
        chouette(capsys, *BOTS, "--games", "5", "--seed", "9", "--log", str(tmp_path / name))
        logs.append((tmp_path / name).read_text())
    assert logs[0] == logs[1]


def test_tabla_sits_in_a_chouette_seat(capsys, tmp_path):
    log = tmp_path / "t.jsonl"
    code, out, _ = chouette(capsys, "tabla:ply=1", "pubeval", "random", "--games", "3", "--seed", "1", "--log", str(log))
    assert code == 0 and "tabla:ply=1" in out
    check_log(read_log(log), ["tabla:ply=1", "pubeval", "random"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["pubeval", "random"], "needs 3 to 10 players, got 2"),
        ([*BOTS, "--games", "0"], "--games must be at least 1"),
        ([*BOTS, "--seed", "-1"], "--seed must be non-negative"),
        ([*BOTS, "--max-cube", "3"], "--max-cube must be a power of two"),
        ([*BOTS, "--auto-doubles", "-1"], "--auto-doubles must be 0 or more"),
        (["pubeval", "random", "nosuchbot"], "unknown bot 'nosuchbot'"),
        (["pubeval", "random", "gnubg:ply=9"], "gnubg: ply must be 0 to 2"),
        ([*BOTS, "--log", "/nonexistent/dir/x.jsonl"], "/nonexistent/dir/x.jsonl"),
    ],
)
def test_bad_arguments_give_a_one_line_error(capsys, args, message):
    code, out, err = chouette(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message.lower() in err.lower() and err.startswith("tabla chouette: error:")


def test_the_installed_command_runs_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "scripts.tabla", "chouette", *BOTS, "--games", "2", "--json",
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["games"] == 2


@pytest.mark.slow
def test_two_hundred_games_of_tabla_pubeval_and_random_follow_the_rotation_and_sum_to_zero(tmp_path):
    """The issue's run: ``tabla chouette tabla:ply=1 pubeval random --games 200 --seed 1
    --log x.jsonl`` (about 15 s), with ``--json``."""
    log = tmp_path / "x.jsonl"
    players = ["tabla:ply=1", "pubeval", "random"]
    proc = subprocess.run([sys.executable, "-m", "scripts.tabla", "chouette", *players, "--games", "200", "--seed", "1",
                           "--log", str(log), "--json", "--no-progress"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = read_log(log)
    assert len(lines) == 200
    check_log(lines, players)
    data = json.loads(proc.stdout)
    assert data["games"] == 200 and data["ledger_sum"] == 0
    assert data["ledger"] == {p: sum(l["points"][p] for l in lines) for p in players}
