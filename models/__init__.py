"""Tabla's value network: encoding, network, checkpoints and the shipped weights.

``load_default_evaluator()`` loads the shipped model (numpy inference, no torch).
"""
from __future__ import annotations

from pathlib import Path

import engine  # noqa: F401  (first: numba's cache goes to the user cache folder, see engine/__init__.py)

DEFAULT_MODEL = Path(__file__).resolve().parent / "tabla.npz"


def load_evaluator(path: str | Path):
    """An Evaluator from a model file (``.npz`` export or ``.pt`` training checkpoint)."""
    from models.checkpoint import load_evaluator as _load

    return _load(path)


def load_default_evaluator():
    """The shipped model as an Evaluator; CheckpointError when it is missing or broken."""
    return load_evaluator(DEFAULT_MODEL)
