"""Shared pieces of the ``tabla serve`` tests: the in-process client, a live server, a free port."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import warnings
from typing import Iterator

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START = "4HPwATDgc/ABMA"


def make_client(**config):
    """An in-process client (``fastapi.testclient``) over an app with real workers."""
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():  # starlette asks for httpx2; httpx is what it runs on
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from scripts.serve_app import ServeConfig, create_app

    return TestClient(create_app(ServeConfig(**config)), raise_server_exceptions=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(*args: str, ready_timeout: float = 240.0) -> Iterator[tuple[str, subprocess.Popen]]:
    """``tabla serve`` in a subprocess on a free local port: ``(base URL, process)``."""
    pytest.importorskip("uvicorn")
    import httpx

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "scripts.tabla", "serve", "--port", str(port), *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"tabla serve exited: {proc.stderr.read()}")
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > end:
                raise AssertionError("tabla serve did not start in time")
            time.sleep(0.3)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
