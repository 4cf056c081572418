"""Helpers shared by the search and accuracy benchmarks: the evaluator to measure."""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np

log = logging.getLogger("tabla.bench")


def bench_evaluator(model: str | None, allow_fallback: bool, fallback: str = "random-net"):
    """``(evaluator, model_path_or_None, description)`` for a benchmark.

    The shipped model (or ``model``) when it loads. Otherwise, with ``allow_fallback``:
    ``"random-net"`` exports a network of the default shape with seeded random weights to a
    temporary ``.npz`` (same inference cost: good for speed figures), ``"heuristic"`` uses
    the heuristic evaluator (for accuracy figures before a model ships).
    """
    from scripts.evaluators import HEURISTIC, ModelError, load_evaluator

    try:
        ev = load_evaluator(model)
        return ev, model, f"model {model or 'shipped default'}"
    except ModelError as exc:
        if not allow_fallback:
            raise
        log.warning("%s; falling back to %s", exc, fallback)
        reason = str(exc)
    if fallback == HEURISTIC:
        return load_evaluator(HEURISTIC), None, f"heuristic evaluator ({reason})"
    from models.checkpoint import export_npz
    from models.network import NetConfig

    cfg = NetConfig()
    rng = np.random.default_rng(12345)
    weights = {
        "fc1.weight": rng.normal(0, 0.1, (cfg.hidden, cfg.inputs)).astype(np.float32),
        "fc1.bias": np.zeros(cfg.hidden, np.float32),
        "fc2.weight": rng.normal(0, 0.1, (5, cfg.hidden)).astype(np.float32),
        "fc2.bias": np.zeros(5, np.float32),
    }
    path = Path(tempfile.mkdtemp(prefix="tabla-bench-")) / "random.npz"
    export_npz(path, cfg, weights, {"note": "random weights for speed benchmarks"})
    return load_evaluator(str(path)), str(path), f"random-weight network of the default shape ({reason})"
