"""Choosing the evaluator from user input, and the thread setup of entry points.

:func:`load_evaluator` is the one place a command turns ``--model`` (or a bot's
``model=`` option) into an :class:`engine.evaluator.Evaluator`.
"""
from __future__ import annotations

from engine.evaluator import Evaluator

HEURISTIC = "heuristic"
DEFAULT = "default"


class ModelError(ValueError):
    """The model file is missing or invalid (``reason``: the loader's own words)."""

    def __init__(self, spec: str | None, reason: str) -> None:
        where = spec if spec not in (None, DEFAULT) else "the shipped model"
        first = reason.splitlines()[0] if reason else reason
        super().__init__(f"cannot load {where}: {first}")
        self.spec = spec
        self.reason = reason


def load_evaluator(spec: str | None = None) -> Evaluator:
    """The evaluator named by ``spec``: ``None`` or ``"default"`` the shipped model,
    ``"heuristic"`` the hand-written :class:`engine.heuristic.HeuristicEvaluator`, anything
    else a model file (``.npz`` export or ``.pt`` checkpoint).

    Raises :class:`ModelError` with a one-line reason when a model is missing or invalid.
    """
    if spec == HEURISTIC:
        from engine.heuristic import HeuristicEvaluator

        return HeuristicEvaluator()
    import models

    try:
        if spec in (None, DEFAULT):
            return models.load_default_evaluator()
        return models.load_evaluator(spec)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(spec, str(exc) if str(exc) else type(exc).__name__) from None


def evaluator_spec(model: str | None, heuristic: bool) -> str | None:
    """The spec of the ``--model PATH`` / ``--heuristic`` options of a command."""
    return HEURISTIC if heuristic else model


def limit_blas_threads(n: int = 1) -> bool:
    """Limit the BLAS libraries loaded so far (numpy's OpenBLAS) to ``n`` threads, with
    threadpoolctl; True when there was one to limit.

    Search evaluates batches of tens to a few thousand positions, where BLAS threads
    cost more than they gain (measured 4x slower with 2 threads on a busy 2-core
    machine). Entry points (``tabla engine``, ``hint``, benchmarks) call this; library
    users decide for themselves.
    """
    from threadpoolctl import threadpool_info, threadpool_limits  # noqa: PLC0415

    threadpool_limits(limits=n, user_api="blas")
    return any(lib.get("user_api") == "blas" for lib in threadpool_info())
