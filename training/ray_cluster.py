"""Joining or starting Ray: the one place Tabla calls ``ray.init``.

Ray is an optional extra (``pip install -e '.[ray]'``); :func:`import_ray` says how to
install it when it is missing. Without an address, Ray starts here with this machine's
cores, no dashboard and the workers' output kept out of the driver's.
"""
from __future__ import annotations

import logging
import os
from types import ModuleType

INSTALL_HINT = "Ray is not installed: pip install -e '.[ray]'"


class RayUnavailable(ImportError):
    """Ray is not installed (the message says how to install it)."""


def import_ray() -> ModuleType:
    """The ``ray`` module; raises :class:`RayUnavailable` when it is not installed."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address`` (``auto`` or ``HOST:PORT``), or start Ray here with
    ``num_cpus`` (default: this machine's cores). Returns True when this call started or
    joined Ray (the caller then shuts it down), False when Ray was already initialized."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING,
             "configure_logging": True}
    if address is None:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, **quiet)
    else:
        ray.init(address=address, **{k: v for k, v in quiet.items() if k != "include_dashboard"})
    return True


def cluster_cpus() -> int:
    """CPUs of the cluster Ray is connected to (at least 1)."""
    ray = import_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
