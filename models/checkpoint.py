"""Checkpoints that describe themselves, written atomically.

Two formats:

* training checkpoint (``.pt``, torch): ``format``, ``format_version``, ``net_config``,
  ``weights``, ``optimizer`` (per worker), ``games``, ``wall_seconds``, ``metrics``,
  ``train_config``, ``git_commit``;
* inference export (``.npz``, numpy only): the same net config (JSON) and weights, plus
  ``meta`` JSON. This is what commands load, so that play never needs torch.

Loading a wrong, truncated or foreign file raises :class:`CheckpointError` with a clear
message.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from models.network import NetConfig, NumpyNet

FORMAT = "tabla-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A model file that cannot be used: missing, truncated, foreign or incompatible."""


def git_commit() -> str:
    """The current git commit of the source tree, or ``"unknown"``."""
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _atomic_write(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write a training checkpoint (torch) atomically; ``state`` gets the format fields."""
    import torch

    full = {"format": FORMAT, "format_version": FORMAT_VERSION, "git_commit": git_commit(), **state}
    _atomic_write(Path(path), lambda tmp: torch.save(full, tmp))


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a training checkpoint; raises :class:`CheckpointError` when it is not one."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"model file not found: {path}")
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch raises many kinds for a broken file
        raise CheckpointError(f"{path} is not a readable Tabla checkpoint ({type(exc).__name__})") from None
    _check_header(path, state if isinstance(state, dict) else {})
    return state


def _check_header(path: Path, meta: dict) -> None:
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a Tabla checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path} has format version {meta.get('format_version')}, this Tabla reads {FORMAT_VERSION}")


def export_npz(path: str | Path, config: NetConfig, weights: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write the numpy inference file atomically."""
    header = {"format": FORMAT, "format_version": FORMAT_VERSION, "net_config": config.to_dict(), **meta}

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, __meta__=np.array(json.dumps(header)), **{k: np.asarray(v) for k, v in weights.items()})

    _atomic_write(Path(path), write)


def load_npz(path: str | Path) -> tuple[NetConfig, dict[str, np.ndarray], dict[str, Any]]:
    """Read an inference export: (config, weights, meta)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"model file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            weights = {k: z[k] for k in z.files if k != "__meta__"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not a readable Tabla model ({type(exc).__name__})") from None
    _check_header(path, meta)
    try:
        config = NetConfig(**meta["net_config"])
    except (TypeError, KeyError):
        raise CheckpointError(f"{path} has an unreadable network config") from None
    return config, weights, meta


def load_evaluator(path: str | Path) -> NumpyNet:
    """An :class:`engine.evaluator.Evaluator` from a ``.npz`` export or a ``.pt`` checkpoint."""
    path = Path(path)
    if path.suffix == ".pt":
        state = load_checkpoint(path)
        try:
            config = NetConfig(**state["net_config"])
            weights = {k: v.numpy() for k, v in state["weights"].items()}
        except (KeyError, TypeError, AttributeError):
            raise CheckpointError(f"{path} lacks the network config or weights") from None
    else:
        config, weights, _ = load_npz(path)
    try:
        return NumpyNet(config, weights)
    except (KeyError, ValueError) as exc:
        raise CheckpointError(f"{path}: {exc}") from None
