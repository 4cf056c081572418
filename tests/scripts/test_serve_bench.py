"""``tabla bench serve`` on a tiny set: every rate is there, the ratio is the quotient it
claims to be, every HTTP reply was the protocol's (no speed is asserted here)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from serve_helpers import ROOT

pytest.importorskip("uvicorn")


def test_bench_serve_reports_the_http_and_protocol_rates_of_one_run():
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "bench", "serve", "--positions", "30", "--rounds", "2",
                        "--clients", "3", "--workers", "1", "--json"], capture_output=True, text=True, timeout=600,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    fig = json.loads(r.stdout)
    assert fig["failures"] == 0 and fig["positions"] == 30 and fig["clients"] == 3
    for key in ("protocol_per_s", "protocol_pipelined_per_s", "http_one_client_per_s", "http_several_clients_per_s"):
        assert fig[key] > 0
    assert fig["ratio_http_one_client_vs_protocol"] == pytest.approx(
        fig["http_one_client_per_s"] / fig["protocol_per_s"], rel=1e-3, abs=5e-5)
    assert len(fig["ratio_http_one_client_vs_protocol_by_round"]) == 2


def test_bench_serve_refuses_a_size_that_is_not_positive():
    r = subprocess.run([sys.executable, "-m", "scripts.tabla", "bench", "serve", "--clients", "0"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.strip() == "tabla bench: error: --clients must be positive, got 0"
