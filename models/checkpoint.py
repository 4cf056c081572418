"""Checkpoints that describe themselves, written atomically.

Two formats:

* training checkpoint (``.pt``, torch): ``format``, ``format_version``, the nets,
  ``optimizer`` (per worker), ``games``, ``wall_seconds``, ``metrics``,
  ``train_config``, ``git_commit``;
* inference export (``.npz``, numpy only): the same net configs (JSON) and weights, plus
  ``meta`` JSON. This is what commands load, so that play never needs torch.

Format version 1 holds one net (``net_config``, ``weights``: the ``tabla-v1`` nets of the
first sessions); version 2 holds a set of class nets (``nets``: name → ``net_config`` and
``weights``; in the ``.npz`` the arrays are named ``<net>.<weight>``), loaded as one
:class:`models.multinet.ClassNets` evaluator. Both are read; version 2 is written.

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
READABLE_VERSIONS = (1, 2)


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

    version = 2 if "nets" in state else 1
    full = {"format": FORMAT, "format_version": version, "git_commit": git_commit(), **state}
    _atomic_write(Path(path), lambda tmp: torch.save(full, tmp))


def save_with_npz(path: str | Path, state: dict[str, Any]) -> None:
    """Write a class-net checkpoint and, beside it (``.npz``), its inference file."""
    save_checkpoint(path, state)
    nets, _ = load_nets(path)
    export_nets_npz(Path(path).with_suffix(".npz"), nets, {
        "games": state.get("games"), "labelled": state.get("labelled", 0), "wall_seconds": state.get("wall_seconds"),
        "metrics": state.get("metrics", {})})


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
    if meta.get("format_version") not in READABLE_VERSIONS:
        raise CheckpointError(
            f"{path} has format version {meta.get('format_version')}, this Tabla reads "
            + " and ".join(map(str, READABLE_VERSIONS)))


def export_npz(path: str | Path, config: NetConfig, weights: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write a one-net (format 1) numpy inference file atomically."""
    _write_npz(path, {"format": FORMAT, "format_version": 1, "net_config": config.to_dict(), **meta}, weights)


def export_nets_npz(path: str | Path, nets: dict[str, tuple[NetConfig, dict[str, np.ndarray]]], meta: dict[str, Any]) -> None:
    """Write a class-net set (format 2) numpy inference file atomically."""
    header = {"format": FORMAT, "format_version": 2, "nets": {n: c.to_dict() for n, (c, _) in nets.items()}, **meta}
    flat = {f"{n}.{k}": v for n, (_, w) in nets.items() for k, v in w.items()}
    _write_npz(path, header, flat)


def _write_npz(path: str | Path, header: dict[str, Any], weights: dict[str, np.ndarray]) -> None:

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, __meta__=np.array(json.dumps(header)), **{k: np.asarray(v) for k, v in weights.items()})

    _atomic_write(Path(path), write)


def _read_npz(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    if not path.is_file():
        raise CheckpointError(f"model file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            weights = {k: z[k] for k in z.files if k != "__meta__"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not a readable Tabla model ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path} is not a Tabla model")
    _check_header(path, meta)
    return weights, meta


def _config(path: Path, raw: Any) -> NetConfig:
    try:
        return NetConfig(**raw)
    except TypeError:
        raise CheckpointError(f"{path} has an unreadable network config") from None


def load_npz(path: str | Path) -> tuple[NetConfig, dict[str, np.ndarray], dict[str, Any]]:
    """Read a one-net (format 1) inference export: (config, weights, meta)."""
    path = Path(path)
    weights, meta = _read_npz(path)
    if "net_config" not in meta:
        raise CheckpointError(f"{path} holds a set of nets, not one net")
    return _config(path, meta["net_config"]), weights, meta


def load_nets(path: str | Path) -> tuple[dict[str, tuple[NetConfig, dict[str, np.ndarray]]], dict[str, Any]]:
    """The nets of a model file (``.npz`` or ``.pt``, either format) and its metadata.

    A format-1 file gives one net named ``"all"``.
    """
    path = Path(path)
    if path.suffix == ".pt":
        state = load_checkpoint(path)
        try:
            if "nets" in state:
                raw = {n: (d["net_config"], {k: v.numpy() for k, v in d["weights"].items()}) for n, d in state["nets"].items()}
            else:
                raw = {"all": (state["net_config"], {k: v.numpy() for k, v in state["weights"].items()})}
        except (KeyError, TypeError, AttributeError):
            raise CheckpointError(f"{path} lacks the network config or weights") from None
        meta = {k: v for k, v in state.items() if k not in ("nets", "weights", "optimizer")}
    else:
        weights, meta = _read_npz(path)
        if "nets" in meta:
            if not isinstance(meta["nets"], dict):
                raise CheckpointError(f"{path} has an unreadable network config")
            raw = {}
            for n, cfg in meta["nets"].items():
                prefix = f"{n}."
                raw[n] = (cfg, {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)})
        elif "net_config" in meta:
            raw = {"all": (meta["net_config"], weights)}
        else:
            raise CheckpointError(f"{path} has no network config")
    return {n: (_config(path, c), w) for n, (c, w) in raw.items()}, meta


def load_evaluator(path: str | Path):
    """An :class:`engine.evaluator.Evaluator` from a ``.npz`` export or a ``.pt`` checkpoint.

    One net (format 1): a :class:`models.network.NumpyNet`; a set of class nets (format
    2): a :class:`models.multinet.ClassNets`.
    """
    from models.multinet import ClassNets

    path = Path(path)
    nets, _ = load_nets(path)
    try:
        built = {n: NumpyNet(c, w) for n, (c, w) in nets.items()}
        if list(built) == ["all"]:
            return built["all"]
        return ClassNets(built, bearoff=default_bearoff())
    except (KeyError, ValueError) as exc:
        raise CheckpointError(f"{path}: {exc.args[0] if exc.args else exc}") from None


def default_bearoff():
    """The bear-off databases (:mod:`engine.bearoff`: the shipped one-sided file, the
    two-sided one built into the user cache on first use)."""
    from engine import bearoff

    return bearoff.get_db()
