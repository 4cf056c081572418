"""numba's compiled-function cache lives in the user's cache folder, never beside the
installed sources (a wheel's ``site-packages/engine/__pycache__`` would outlive an
uninstall and shadow a later editable install as an empty namespace package)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import numba  # numba first: its configuration is read before Tabla's package is imported
from engine.movegen import legal_results
from engine.position import Position
import numba.core.config as c
legal_results(Position.start().array(), 3, 1)
print(c.CACHE_DIR)
"""


def _probe(tmp_path: Path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_numba_cache_goes_to_the_user_cache_folder(tmp_path):
    where = _probe(tmp_path, XDG_CACHE_HOME=str(tmp_path))
    assert where == str(tmp_path / "tabla" / "numba")
    assert list((tmp_path / "tabla" / "numba").rglob("movegen.*.nbi")), "nothing was cached there"


def test_a_numba_cache_dir_set_by_the_user_is_kept(tmp_path):
    mine = tmp_path / "mine"
    where = _probe(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"), NUMBA_CACHE_DIR=str(mine))
    assert where == str(mine)
    assert list(mine.rglob("movegen.*.nbi"))
    assert not (tmp_path / "xdg").exists()
