"""Tabla's rules engine: a pure library (no argparse, no printing, no model loading, no torch).

Importing the package points numba's on-disk cache of compiled functions at a user cache
folder, ``$XDG_CACHE_HOME/tabla/numba`` (``~/.cache/tabla/numba``), unless the user has
set ``NUMBA_CACHE_DIR``. Without this numba writes ``__pycache__`` folders beside the
installed sources: into ``site-packages`` for a wheel install, where they outlive an
uninstall and then shadow a later editable install as empty namespace packages. Every
module of Tabla that compiles with numba imports :mod:`engine` first, before its first
``@njit(cache=True)``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir() -> Path:
    """Tabla's per-user cache folder: ``$XDG_CACHE_HOME/tabla`` (default ``~/.cache/tabla``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tabla"


def use_user_numba_cache() -> str:
    """Set ``NUMBA_CACHE_DIR`` to ``user_cache_dir() / "numba"`` unless it is set; its value.

    Must run before numba compiles (or decorates) a cached function; if numba is already
    imported its configuration is reloaded from the environment, as its compiler does.
    """
    if not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = str(user_cache_dir() / "numba")
        config = sys.modules.get("numba.core.config")
        if config is not None:
            config.reload_config()
    return os.environ["NUMBA_CACHE_DIR"]


use_user_numba_cache()
