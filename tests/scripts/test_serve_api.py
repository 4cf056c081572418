"""``tabla serve``'s JSON API through an in-process client: every endpoint by GET and POST,
the protocol's replies and errors, and every HTTP error code.

The replies are compared with :class:`engine.protocol.EngineSession` answering the same
request in this process: the server must be the engine protocol over HTTP.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

from serve_helpers import START, make_client

from engine.ids import MatchInfo, match_id

ROLLOUT = {"trials": 36, "truncate": 2, "seed": 3}
MATCH_ID = match_id(MatchInfo(cube_value=2, cube_owner=0, match_length=7, score=(3, 5)))


@pytest.fixture(scope="module")
def client():
    with make_client(workers=1, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def session():
    from engine.protocol import EngineSession
    from scripts.evaluators import load_evaluator

    return EngineSession(lambda: load_evaluator(None))


def protocol(session, cmd: str, **fields):
    """The protocol's reply line to the request, as JSON."""
    line, _ = session.reply_line(json.dumps({"cmd": cmd, **fields}))
    return json.loads(line)


CASES = [
    ("legal", {"position_id": START, "dice": [3, 1]}, {"position_id": START, "dice": "3,1"}),
    ("best", {"position_id": START, "dice": [3, 1], "ply": 2, "top": 3},
     {"position_id": START, "dice": "3,1", "ply": "2", "top": "3"}),
    ("eval", {"position_id": START, "ply": 1}, {"position_id": START, "ply": "1"}),
    ("cube", {"position_id": "4HPwATDgc/ABMA", "ply": 0, "cube_value": 2, "cube_owner": "player",
              "match_length": 7, "score": [2, 4]},
     {"position_id": "4HPwATDgc/ABMA", "ply": "0", "cube_value": "2", "cube_owner": "player",
      "match_length": "7", "score": "2,4"}),
    ("cube", {"position_id": START, "match_id": MATCH_ID, "ply": 1}, {"position_id": START, "match_id": MATCH_ID, "ply": "1"}),
    ("eval", {"xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"},
     {"xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"}),
    ("rollout", {"position_id": START, **ROLLOUT}, {"position_id": START, **{k: str(v) for k, v in ROLLOUT.items()}}),
    ("rollout", {"position_id": START, "dice": [3, 1], "top": 2, **ROLLOUT},
     {"position_id": START, "dice": "31", "top": "2", **{k: str(v) for k, v in ROLLOUT.items()}}),
]


def _timeless(obj):
    """``obj`` without the rollouts' wall times (``seconds``)."""
    if isinstance(obj, dict):
        return {k: _timeless(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_timeless(v) for v in obj]
    return obj


def _same(reply: dict, expected: dict) -> None:
    assert _timeless(reply) == _timeless(expected)


@pytest.mark.parametrize("cmd,body,query", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_post_and_get_answer_what_the_protocol_answers(client, session, cmd, body, query):
    expected = protocol(session, cmd, **body)
    assert expected["ok"], expected
    post = client.post(f"/{cmd}", json=body)
    get = client.get(f"/{cmd}", params=query)
    assert post.status_code == get.status_code == 200
    _same(post.json(), expected)
    _same(get.json(), expected)


def test_get_best_with_the_issue_example_plays_8_5_6_5(client):
    r = client.get("/best?position_id=4HPwATDgc/ABMA&dice=3,1&ply=2")
    assert r.status_code == 200
    assert r.json()["play"] == "8/5 6/5" and r.json()["steps"] == [[8, 5], [6, 5]]


def test_the_request_id_comes_back(client):
    assert client.post("/eval", json={"id": {"n": 7}, "position_id": START}).json()["id"] == {"n": 7}
    assert client.get("/eval", params={"id": "41", "position_id": START}).json()["id"] == 41
    assert client.post("/eval", json={"id": "x", "position_id": "bad"}).json()["id"] == "x"


def test_why_explains_every_candidate_in_words(client):
    r = client.get("/best", params={"position_id": START, "dice": "31", "top": "3", "why": "true"}).json()
    assert r["why"] == r["candidates"][0]["why"] == "makes the 5-point; leaves no blot"
    assert all(isinstance(c["why"], str) and c["why"] and "facts" in c for c in r["candidates"])
    alone = client.post("/best", json={"position_id": START, "dice": [3, 1], "why": True}).json()
    assert len(alone["candidates"]) == 1 and alone["why"] == r["why"]
    assert "why" not in client.post("/best", json={"position_id": START, "dice": [3, 1]}).json()


BAD = [
    ("best", {"position_id": "zzz", "dice": [3, 1]}, {"position_id": "zzz", "dice": "31"}),
    ("best", {"position_id": START, "dice": [7, 1]}, {"position_id": START, "dice": "71"}),
    ("best", {"position_id": START}, {"position_id": START}),
    ("best", {"position_id": START, "dice": [3, 1], "ply": 9}, {"position_id": START, "dice": "31", "ply": "9"}),
    ("eval", {"position_id": START, "ply": "two"}, {"position_id": START, "ply": "two"}),
    ("cube", {"position_id": START, "cube_value": 3}, {"position_id": START, "cube_value": "3"}),
    ("cube", {"position_id": START, "score": [1]}, {"position_id": START, "score": "x"}),
    ("legal", {}, {}),
    ("rollout", {"position_id": START, "trials": 0}, {"position_id": START, "trials": "0"}),
]


@pytest.mark.parametrize("cmd,body,query", BAD, ids=[f"{c[0]}{i}" for i, c in enumerate(BAD)])
def test_a_request_the_engine_refuses_is_422_with_the_protocols_one_sentence_error(client, session, cmd, body, query):
    expected = protocol(session, cmd, **body)
    assert not expected["ok"]
    for r in (client.post(f"/{cmd}", json=body), client.get(f"/{cmd}", params=query)):
        assert r.status_code == 422
        reply = r.json()
        assert reply["ok"] is False and "\n" not in reply["error"] and reply["error"]
    assert client.post(f"/{cmd}", json=body).json() == expected
    assert client.post("/best", json={"position_id": START, "dice": [3, 1]}).status_code == 200  # goes on


def test_why_must_be_a_boolean(client):
    r = client.post("/best", json={"position_id": START, "dice": [3, 1], "why": "maybe"})
    assert r.status_code == 422 and r.json()["error"] == "why must be true or false, got 'maybe'"


@pytest.mark.parametrize("body,words", [
    (b"{", "not valid JSON"), (b"[1, 2]", "must be a JSON object"), (b"", "must be a JSON object"),
    (b'{"cmd": "eval", "position_id": "4HPwATDgc/ABMA"}', "the command is the path"),
    (b'\xff\xfe', "not valid JSON"), (b'{"id": 1e999999}', "JSON"),
])
def test_a_body_that_is_not_a_request_object_is_400(client, body, words):
    r = client.post("/best", content=body)
    assert r.status_code == 400 and words in r.json()["error"] and r.json()["ok"] is False
    assert client.get("/health").status_code == 200


def test_a_query_parameter_given_twice_is_400(client):
    r = client.get(f"/best?position_id={START}&dice=31&dice=42")
    assert r.status_code == 400 and r.json()["error"] == "the query parameter 'dice' is given twice"


def test_a_body_over_the_limit_is_413_whether_or_not_it_declares_its_length(client):
    big = b'{"position_id": "' + b"x" * 70000 + b'"}'
    assert client.post("/best", content=big).status_code == 413

    def chunks():
        for _ in range(70):
            yield b" " * 1000

    r = client.post("/best", content=chunks())  # chunked: no Content-Length
    assert r.status_code == 413 and "larger than 65536 bytes" in r.json()["error"]
    r = client.get("/best?position_id=" + "x" * 9000)
    assert r.status_code == 414 and r.json()["error"] == "the query string is longer than 8192 bytes"


def test_unknown_paths_are_404_and_wrong_methods_405(client):
    for path in ("/nope", "/best/x", "/web/../serve_app.py", "/web/serve_app.py", "/quit"):
        r = client.get(path)
        assert r.status_code == 404 and r.json()["ok"] is False, path
    r = client.put("/best", json={})
    assert r.status_code == 405 and r.json()["error"] == "PUT is not allowed on /best"
    assert client.delete("/game").status_code == 405


def test_the_openapi_page_documents_every_endpoint_by_get_and_post(client):
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    for name in ("legal", "best", "eval", "cube", "rollout", "position", "turn", "game"):
        assert set(paths[f"/{name}"]) == {"get", "post"}
    params = {p["name"] for p in paths["/best"]["get"]["parameters"]}
    assert {"position_id", "dice", "ply", "top", "why", "match_id", "cube_value", "score"} <= params


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name in ("board.js", "app.js", "board.css"):
        r = client.get(f"/web/{name}")
        assert r.status_code == 200 and r.content, name
        assert f"/web/{name}" in page.text or name == "board.js"  # app.js imports board.js
    assert client.get("/web/nothing.js").status_code == 404


def test_the_page_requests_answer_by_get_and_post(client):
    pos = client.get("/position", params={"position_id": START, "dice": "31"}).json()
    assert pos["ok"] and pos["pips"] == [167, 167] and pos["dice"] == [3, 1]
    turn = client.get("/turn", params={"position_id": START, "dice": "31", "steps": "[[8,5,3]]"}).json()
    assert turn == client.post("/turn", json={"position_id": START, "dice": [3, 1], "steps": [[8, 5, 3]]}).json()
    assert [6, 5, 1] in turn["next"]
    game = client.post("/game", json={"action": "new", "seed": 4}).json()
    assert game["ok"] and game["game"]["phase"] == "roll"
    assert client.get("/game", params={"action": "new", "seed": "4"}).json() == game
    bad = client.post("/game", json={"action": "roll", "game": {"phase": "x"}})
    assert bad.status_code == 422 and bad.json()["error"] == "game.position_id must be a Position ID"
    assert client.post("/turn", json={"position_id": START, "dice": [3, 1], "steps": [[8, 4, 3]]}).status_code == 422


def test_a_slow_search_holds_one_worker_is_503_past_the_limit_and_the_server_goes_on():
    with make_client(workers=2, timeout=3.0, heuristic=True) as c:
        before = c.get("/health").json()
        slow = {}

        def long_rollout():
            slow["reply"] = c.post("/rollout", json={"id": 5, "position_id": START, "trials": 1_000_000})

        t = threading.Thread(target=long_rollout)
        t.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        fast = c.post("/best", json={"position_id": START, "dice": [3, 1]})
        assert fast.status_code == 200 and time.monotonic() - t0 < 2.0 and t.is_alive()
        t.join()
        r = slow["reply"]
        assert r.status_code == 503 and r.json() == {
            "id": 5, "ok": False, "error": "the request took longer than the server's time limit (3 s)"}
        assert r.headers["retry-after"] == "1"
        assert c.post("/best", json={"position_id": START, "dice": [3, 1]}).status_code == 200
        end = time.monotonic() + 120
        while (h := c.get("/health").json())["idle"] < 2 and time.monotonic() < end:
            time.sleep(0.2)
        assert h["restarts"] == 1 and h["idle"] == 2 and len(set(h["pids"]) - set(before["pids"])) == 1
        legal = {p["play"] for p in c.get("/legal", params={"position_id": START, "dice": "65"}).json()["plays"]}
        assert c.post("/best", json={"position_id": START, "dice": [6, 5]}).json()["play"] in legal


def test_serve_binds_to_this_machine_only_by_default():
    import argparse

    from scripts.cmd_serve import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args([])
    assert args.host == "127.0.0.1" and args.port == 8080 and args.workers >= 1


def test_a_model_that_does_not_load_is_a_one_line_error_before_listening():
    import subprocess
    import sys

    from serve_helpers import ROOT

    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "serve", "--model", "/nonexistent.npz", "--port", "0",
                        "--workers", "1"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 2
    assert r.stderr.strip() == "tabla serve: error: cannot load /nonexistent.npz: model file not found: /nonexistent.npz"


def test_tabla_serve_answers_on_its_port_and_its_workers_end_with_it():
    import os

    import httpx

    from serve_helpers import live_server

    with live_server("--workers", "1") as (base, proc):
        r = httpx.get(base + "/best", params={"position_id": START, "dice": "3,1", "ply": "2"})
        assert r.status_code == 200 and r.json()["play"] == "8/5 6/5"
        pids = httpx.get(base + "/health").json()["pids"]
        proc.terminate()
        assert proc.wait(timeout=30) in (0, -15)  # uvicorn shuts down, then ends by the signal it got
    end = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{p}") for p in pids)
