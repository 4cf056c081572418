"""Golden outputs of ``tabla hint`` / ``eval`` / ``cube`` / ``engine`` on 200 positions.

The recording (``tests/data/golden/outputs.jsonl``) was made by this module from the code
before the redesign of issue 10, with the model frozen in ``tests/data/golden/model.npz``
(a copy of the shipped ``models/tabla.npz`` at that time), so that a new shipped model does
not change it. ``tests/test_golden_outputs.py`` replays every case through the real
dispatcher and compares standard output, standard error and exit status byte for byte.

Each line of the recording is one case: ``argv`` (``{model}`` stands for the frozen model
file), ``stdin`` (engine sessions only), ``rc``, ``stdout``, ``stderr``. The cases are
seeded random positions (games of random plays, and scattered checkers) with random cube,
score and match states given as explicit options, Match IDs or XGIDs, random dice and
plies 0-2 (ply 2 on a small subset, to keep the replay fast), plus bad inputs.

Re-record (only when a behaviour change is intended): ``python tests/golden.py``.
Intended changes since, applied to the cases they touch (issue 16): ``tabla engine`` with
a model it cannot load exits at start-up; ``eval`` / ``cube`` without ``--ply`` use the
protocol's default ply (0); cube tables and MWC figures show 3 decimals; the usage line
names the positional ID; (issue 11) a play at 2 ply is valued with a quarter of its 1-ply
value mixed in (``engine.search.SHALLOW_WEIGHT``): the 23 cases with 2-ply plays were
re-recorded, every other case kept as recorded.
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
GOLDEN_DIR = HERE / "data" / "golden"
MODEL = GOLDEN_DIR / "model.npz"
RECORDING = GOLDEN_DIR / "outputs.jsonl"
N_POSITIONS = 200
SEED = 20261202


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Run one case through ``scripts.tabla.main`` in this process; its rc/stdout/stderr."""
    from scripts.tabla import main

    argv = [str(MODEL) if a == "{model}" else a for a in case["argv"]]
    out_bytes = io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", newline="")
    err = io.StringIO()
    old_in = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(case.get("stdin", "").encode("utf-8")), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc: int | str = main(argv)
            except SystemExit as exc:  # argparse's usage errors
                rc = f"exit {exc.code}"
            out.flush()
    finally:
        sys.stdin = old_in
    return {"rc": rc, "stdout": out_bytes.getvalue().decode("utf-8"), "stderr": err.getvalue()}


# --------------------------------------------------------------------------- cases
def _states(rng) -> dict[str, Any]:
    """A random game state as protocol fields (player on roll's view)."""
    fields: dict[str, Any] = {}
    kind = rng.random()
    if kind < 0.45:  # money
        if rng.random() < 0.5:
            v = int(2 ** rng.integers(1, 5))
            fields["cube_value"] = v
            fields["cube_owner"] = ["player", "opponent"][int(rng.integers(2))]
        if rng.random() < 0.3:
            fields["jacoby"] = True
        if rng.random() < 0.3:
            fields["beavers"] = True
    else:  # match
        n = int(rng.integers(1, 16))
        a, b = int(rng.integers(n)), int(rng.integers(n))
        fields["match_length"] = n
        fields["score"] = [a, b]
        crawford_possible = (a == n - 1) != (b == n - 1)
        if crawford_possible and rng.random() < 0.5:
            fields["crawford"] = True
        elif rng.random() < 0.5 and n > 1:
            fields["cube_value"] = int(2 ** rng.integers(1, 4))
            fields["cube_owner"] = ["player", "opponent"][int(rng.integers(2))]
    return fields


def _cli_state(fields: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in fields.items():
        opt = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            argv.append(opt)
        elif isinstance(value, list):
            argv += [opt, str(value[0]), str(value[1])]
        else:
            argv += [opt, str(value)]
    return argv


def _where(rng, position, fields: dict[str, Any], dice) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """How the position and state are given: CLI argv, protocol request fields, and the
    state fields still given explicitly."""
    from engine.ids import MatchInfo, Xgid, match_id, position_id, xgid

    pid = position_id(position)
    how = rng.random()
    if how < 0.2:
        score = tuple(fields.get("score", (0, 0)))
        owner = {"player": 1, "opponent": -1}.get(fields.get("cube_owner"), 0)
        x = Xgid(
            position=position,
            turn=1,
            cube_value=fields.get("cube_value", 1),
            cube_owner=owner,
            dice=None if dice is None else (dice.high, dice.low),
            score=score,
            crawford=fields.get("crawford", False),
            jacoby=fields.get("jacoby", False),
            beavers=fields.get("beavers", False),
            match_length=fields.get("match_length", 0),
        )
        text = xgid(x)
        return ["--xgid", text], {"xgid": text}, {}
    if how < 0.4 and not fields.get("beavers"):
        score = tuple(fields.get("score", (0, 0)))
        owner = {"player": 0, "opponent": 1}.get(fields.get("cube_owner"))
        m = MatchInfo(
            cube_value=fields.get("cube_value", 1),
            cube_owner=owner,
            crawford=fields.get("crawford", False),
            match_length=fields.get("match_length", 0),
            score=score,
            jacoby=fields.get("jacoby", False),
        )
        mid = match_id(m)
        return ["--position-id", pid, "--match-id", mid], {"position_id": pid, "match_id": mid}, {}
    return ["--position-id", pid], {"position_id": pid}, fields


def _positions(rng):
    from engine.position import Position
    from engine.randpos import random_game_positions, random_scatter_positions

    boards = list(random_game_positions(rng, N_POSITIONS - 30))
    scatter = [b for b in random_scatter_positions(rng, 200) if not Position.from_array(b).is_game_over()]
    boards += scatter[:29]
    out = [Position.start()] + [Position.from_array(b) for b in boards]
    return out[:N_POSITIONS]


def build_cases() -> list[dict[str, Any]]:
    """Every case, without outputs (deterministic: seeded)."""
    import numpy as np

    from engine.dice import roll_dice

    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    requests: list[str] = []
    for i, position in enumerate(_positions(rng)):
        fields = _states(rng)
        dice = roll_dice(rng)
        where, req_where, explicit = _where(rng, position, fields, dice if rng.random() < 0.5 else None)
        state = _cli_state(explicit)
        hint_ply = 2 if i % 25 == 3 else 1
        pos_ply = 2 if i % 40 == 7 else int(rng.integers(0, 2))
        cube_ply = 2 if i % 40 == 27 else int(rng.integers(0, 2))
        top = int(rng.integers(1, 7))
        model = ["--heuristic"] if i % 20 == 11 else ["--model", "{model}"]
        for fmt in ([], ["--json"]):
            cases.append({"argv": ["hint", *where, "--dice", str(dice), "--ply", str(hint_ply), "--top", str(top), *state, *model, *fmt]})
            cases.append({"argv": ["eval", *where, "--ply", str(pos_ply), *state, *model, *fmt]})
            cases.append({"argv": ["cube", *where, "--ply", str(cube_ply), *state, *model, *fmt]})
        if i % 8 == 5:
            cases.append({"argv": ["hint", *where, "--ply", str(int(rng.integers(0, 2))), *state, *model]})
        # protocol requests on the same position
        rid = len(requests)
        plain = {"id": rid, "cmd": "best", "position_id": _pid(position), "dice": [dice.high, dice.low]}
        if i % 3 == 0:
            plain["ply"] = 2 if i % 30 == 0 else 1
        requests.append(json.dumps(plain))
        general = {"id": rid + 1, "cmd": "best", **req_where, **explicit, "dice": [dice.low, dice.high], "top": top}
        if i % 25 == 9:
            general["ply"] = 2
        requests.append(json.dumps(general))
        requests.append(json.dumps({"id": rid + 2, "cmd": "eval", **req_where, **explicit, "ply": pos_ply % 2 if i % 40 != 15 else 2}))
        requests.append(json.dumps({"id": rid + 3, "cmd": "cube", **req_where, **explicit, "ply": cube_ply % 2}))
        if i % 4 == 0:
            requests.append(json.dumps({"id": f"legal-{i}", "cmd": "legal", "position_id": _pid(position), "dice": str(dice)}))
    requests += _bad_requests()
    for k in range(0, len(requests), 100):
        cases.append({"argv": ["engine", "--model", "{model}", "--spin-us", "0"], "stdin": "\n".join(requests[k : k + 100]) + "\n"})
    cases.append({"argv": ["engine", "--model", "no/such/model.npz"], "stdin": _bad_model_session()})
    cases += _bad_cli()
    return cases


def _pid(position) -> str:
    from engine.ids import position_id

    return position_id(position)


START = "4HPwATDgc/ABMA"
OVER = "AAAAAAAAAAAAAA"


def _bad_requests() -> list[str]:
    lines = [
        "not json",
        "[1, 2]",
        '{"id": 1}',
        '{"id": 2, "cmd": "fly"}',
        '{"id": 3, "cmd": "best", "position_id": "4HPwATDgc/ABMA"}',
        '{"id": 4, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 4}',
        '{"id": 5, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 0}',
        '{"id": 6, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "top": 0}',
        '{"id": 7, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 7]}',
        '{"id": 8, "cmd": "best", "position_id": "4HPwATDgc/ABM", "dice": [3, 1]}',
        '{"id": 9, "cmd": "best", "position_id": "////////////AA", "dice": [3, 1]}',
        '{"id": 10, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "ply": 3}',
        '{"id": 11, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "ply": true}',
        '{"id": 12, "cmd": "cube", "position_id": "4HPwATDgc/ABMA", "crawford": true}',
        '{"id": 13, "cmd": "cube", "position_id": "4HPwATDgc/ABMA", "match_length": 5, "score": [5, 0]}',
        '{"id": 14, "cmd": "cube", "position_id": "4HPwATDgc/ABMA", "cube_value": 3}',
        '{"id": 15, "cmd": "cube", "position_id": "4HPwATDgc/ABMA", "cube_owner": "me", "cube_value": 2}',
        '{"id": 16, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "colour": "white"}',
        '{"id": 17, "cmd": "eval", "xgid": "XGID=nonsense"}',
        '{"id": 18, "cmd": "eval", "xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "match_id": "cAkAAAAAAAAA"}',
        '{"id": 19, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "match_id": "zzzz"}',
        '{"id": 20, "cmd": "eval"}',
        '{"id": 21, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"}',
        '{"id": 22, "cmd": "legal", "position_id": 5, "dice": [3, 1]}',
        '{"id": 23, "cmd": "best", "position_id": "%s", "dice": [3, 1]}' % OVER,
        '{"id": 24, "cmd": "eval", "position_id": "%s"}' % OVER,
        '{"id": 25, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": "31", "score": [1]}',
        '{"id": 26, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "match_length": 30}',
        '{"id": 27, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "jacoby": 1}',
        '{"id": 28, "cmd": "eval", "position_id": "4HPwATDgc/ABMA", "max_cube": 8, "cube_value": 8, "cube_owner": "player"}',
        '{"id": 29, "cmd": "cube", "position_id": "4HPwATDgc/ABMA", "max_cube": 8, "cube_value": 8, "cube_owner": "player", "ply": 1}',
        '{"id": NaN, "cmd": "quitting"}',
        '{"id": [1, {"a": 2}], "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [6, 6], "top": 3, "ply": 1}',
        '{"id": 30, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [True, 1]}',
        '{"id": 31, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 1.0}',
        '{"id": 32, "cmd": "quit"}',
        '{"id": 33, "cmd": "eval", "position_id": "4HPwATDgc/ABMA"}',
    ]
    return lines


def _bad_model_session() -> str:
    return (
        '{"id": 1, "cmd": "legal", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1]}\n'
        '{"id": 2, "cmd": "best", "position_id": "4HPwATDgc/ABMA", "dice": [3, 1]}\n'
        '{"id": 3, "cmd": "eval", "position_id": "4HPwATDgc/ABMA"}\n'
    )


def _bad_cli() -> list[dict[str, Any]]:
    m = ["--model", "{model}"]
    bad = [
        ["hint", "--position-id", "nope", "--dice", "31", *m],
        ["hint", "--position-id", START, "--dice", "71", *m],
        ["hint", "--position-id", START, "--dice", "31", "--ply", "7", *m],
        ["hint", "--position-id", START, "--dice", "31", "--ply", "0", *m],
        ["hint", "--position-id", START, "--dice", "31", "--top", "0", *m],
        ["hint", "--position-id", START, "--dice", "31", "--ply", "1", "--model", "no/such/model.npz"],
        ["eval", "--position-id", START, "--ply", "3", *m],
        ["eval", "--position-id", START, "--crawford", *m],
        ["eval", "--position-id", START, "--match-length", "5", "--score", "5", "1", *m],
        ["eval", "--position-id", OVER, *m],
        ["cube", "--position-id", START, "--cube-value", "3", *m],
        ["cube", "--position-id", START, "--cube-value", "2", "--ply", "0", *m],
        ["cube", "--xgid", "XGID=bad", *m],
        ["cube", "--xgid", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "--match-id", "cAkAAAAAAAAA", *m],
        ["cube", "--position-id", START, "--match-id", "cAkAAAAAAAAA", "--ply", "0", *m],
        ["cube", "--position-id", START, "--match-id", "cAk", *m],
        ["eval", "--position-id", START, "--match-length", "7", "--score", "6", "3", "--crawford", "--ply", "0", *m],
        ["cube", "--position-id", START, "--match-length", "7", "--score", "6", "3", "--cube-value", "2", "--cube-owner", "player", "--ply", "0", *m],
        ["hint", "--position-id", START, "--dice", "31", *m],
        ["hint", "--xgid", "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10", "--ply", "1", *m],
        ["hint", "--xgid", "XGID=-b----E-C---eE---c-e----B-:1:1:-1:00:0:0:3:0:10", "--ply", "1", *m],
        ["eval", "--position-id", START, "--jacoby", "--beavers", "--cube-value", "2", "--cube-owner", "opponent", *m, "--json"],
        ["eval"],
        ["hint", "--position-id", START, "--xgid", "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"],
    ]
    return [{"argv": a} for a in bad]


def record(cases: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for case in cases:
        yield {**case, **run_case(case)}


def load_recording() -> list[dict[str, Any]]:
    with open(RECORDING, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def main() -> int:
    sys.path.insert(0, str(HERE.parent))
    cases = build_cases()
    with open(RECORDING, "w", encoding="utf-8") as f:
        for row in record(cases):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {RECORDING}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
