"""``tabla train --backend ray``: the Ray options and the Ray run of ``tabla train``.

:func:`add_ray_arguments` adds ``--backend {local,ray}``, ``--ray-address`` and (for
commands with self-play actors) ``--actors`` and ``--publish-every``; ``tabla rollout`` and
``tabla bench selfplay`` take them too. :func:`run_ray` trains with
:func:`training.ray_backend.train_ray` on the settings ``tabla train`` built.
"""
from __future__ import annotations

import argparse
import logging
from pathlib import Path
from types import ModuleType

from training.config import RayConfig, TrainConfig


def add_ray_arguments(parser: argparse.ArgumentParser, actors: bool = True) -> None:
    """``--backend``, ``--ray-address`` and, with ``actors``, ``--actors`` and ``--publish-every``."""
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local: processes on this machine; ray: a Ray cluster (pip install -e '.[ray]')")
    parser.add_argument("--ray-address", default=None, metavar="auto|HOST:PORT",
                        help="with --backend ray: the cluster to join (default: start Ray here with this machine's cores)")
    if actors:
        d = RayConfig()
        parser.add_argument("--actors", type=int, default=None,
                            help="with --backend ray: self-play actors, one CPU each (default: one per CPU of the cluster)")
        parser.add_argument("--publish-every", type=int, default=d.publish_every, metavar="K",
                            help=f"with --backend ray: learner updates between weight broadcasts (default {d.publish_every})")


def require_ray() -> ModuleType:
    """The ``ray`` module, or a one-line :class:`~scripts.tabla.CliError` saying how to install it."""
    from scripts.tabla import CliError
    from training.ray_cluster import RayUnavailable, import_ray

    try:
        return import_ray()
    except RayUnavailable as exc:
        raise CliError(str(exc)) from None


def ray_config(args: argparse.Namespace) -> RayConfig:
    """The :class:`RayConfig` of the parsed options (checked)."""
    from scripts.tabla import CliError

    actors = getattr(args, "actors", None)
    publish = getattr(args, "publish_every", RayConfig().publish_every)
    if actors is not None and actors < 1:
        raise CliError(f"--actors must be at least 1, got {actors}")
    if publish < 1:
        raise CliError(f"--publish-every must be at least 1, got {publish}")
    return RayConfig(address=args.ray_address, actors=actors, publish_every=publish)


def run_ray(args: argparse.Namespace, cfg: TrainConfig, resume: Path | None = None) -> int:
    """Train on Ray with ``cfg`` (``resume``: the checkpoint to continue from, default
    ``--resume``); prints what ``tabla train`` prints."""
    require_ray()
    rcfg = ray_config(args)
    from training.ray_backend import train_ray

    logging.getLogger().setLevel(logging.INFO)
    resume = resume if resume is not None else args.resume
    st = train_ray(cfg, rcfg, args.out, games=args.games, minutes=args.minutes, resume=resume,
                   progress=not args.no_progress)
    nodes = len(st.games_by_node)
    print(f"trained to {st.games} games in {st.wall_seconds / 60:.1f} min on Ray ({len(st.games_by_actor)} actors on "
          f"{nodes} node{'s' if nodes != 1 else ''}, {st.updates} learner updates); checkpoint {args.out / 'latest.pt'}")
    return 0
