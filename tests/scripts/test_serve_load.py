"""``tabla serve`` under load, on localhost and bounded in time: 200 keep-alive clients
sending 1-ply requests while another sends requests far over the time limit. No request
fails but those deliberate 503s, and the server's memory (with its workers) comes back to
its idle level. The default run loads it for a few seconds; ``-m slow`` for 20 seconds."""
from __future__ import annotations

import pytest

pytest.importorskip("uvicorn")


def _load(seconds: float, clients: int = 200):
    from scripts.bench_search import contact_set, requests
    from scripts.bench_serve import ServeProcess, http_request, load

    boards, dice = contact_set(7, 400)
    raws = [http_request("/best", line.encode()) for line in requests(boards, dice)]
    server = ServeProcess(None, workers=2, timeout=5.0)
    try:
        warm = load(server, raws, clients, 2.0, slow_every=0)  # every buffer and worker path used once
        assert warm.failures == []
        return load(server, raws, clients, seconds, slow_every=min(5.0, seconds / 2))
    finally:
        server.close()


def _check(res) -> None:
    assert res.failures == [], res.failures[:5]
    assert res.ok > res.clients  # every client was answered, most more than once
    assert res.deliberate_503 >= 1
    assert res.memory_back, (res.idle_mb, res.peak_mb, res.after_mb)


def test_200_clients_get_answers_and_memory_comes_back():
    _check(_load(6.0))


@pytest.mark.slow
def test_200_clients_for_20_seconds_get_answers_and_memory_comes_back():
    _check(_load(20.0))
