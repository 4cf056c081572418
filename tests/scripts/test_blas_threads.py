"""Entry points run numpy's BLAS on one thread (threadpoolctl)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_limit_blas_threads_leaves_one_blas_thread():
    code = ("import numpy\nfrom threadpoolctl import threadpool_info\nfrom scripts.evaluators import limit_blas_threads\n"
            "assert limit_blas_threads(1)\nprint(sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2", "HOME": str(Path.home())})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"
