"""The ``tabla`` command: a thin dispatcher to one module per sub-command.

Each sub-command module defines ``add_arguments(parser)`` and ``run(args) -> int``; only
the module of the command being run is imported, so ``tabla legal`` does not load torch.
Errors that reach here as :class:`CliError` (or ``ValueError`` subclasses raised for bad
input, or ``OSError`` naming the file) are printed as one line on stderr with exit status
2, never as a traceback; an echoed input is cut short (:func:`engine.request.shorten_echoes`).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "legal": ("scripts.cmd_legal", "list the legal plays of a roll"),
    "hint": ("scripts.cmd_query", "ranked plays for a roll, or the cube decision"),
    "eval": ("scripts.cmd_query", "probabilities and equity of a position"),
    "cube": ("scripts.cmd_query", "cube decision and cubeful equities"),
    "rollout": ("scripts.cmd_rollout", "roll a position out, or rank the plays of a roll by rollout"),
    "engine": ("scripts.cmd_engine", "the JSON-lines engine protocol on stdin/stdout"),
    "serve": ("scripts.cmd_serve", "the engine over HTTP (JSON API, /docs) and a board in the browser"),
    "train": ("scripts.cmd_train", "TD(lambda) self-play training"),
    "arena": ("scripts.cmd_arena", "play two bots against each other"),
    "chouette": ("scripts.cmd_chouette", "bots play a chouette (three or more players, the box against a team)"),
    "play": ("scripts.cmd_play", "play against Tabla in the terminal"),
    "bench": ("scripts.bench", "benchmarks: movegen, selfplay, search, accuracy"),
    "bearoff": ("scripts.cmd_bearoff", "build the exact bearoff databases, or show a position's values"),
    "analyse": ("scripts.cmd_analyse", "grade every decision of a .mat or .sgf match"),
    "external": ("scripts.cmd_external", "play inside GNU Backgammon as its external player"),
}


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def error_text(exc: BaseException) -> str:
    """One line for the user: an ``OSError`` as ``cannot use FILE: what happened`` (not
    ``[Errno 17] File exists: 'FILE'``), anything else its first line."""
    if isinstance(exc, OSError) and exc.strerror:
        files = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        reason = exc.strerror[0].lower() + exc.strerror[1:]
        return f"cannot use {files}: {reason}" if files else reason
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    top = argparse.ArgumentParser(prog="tabla", description="Tabla backgammon engine")
    top.add_argument("command", choices=sorted(COMMANDS), help="; ".join(f"{k}: {v[1]}" for k, v in COMMANDS.items()))
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        top.parse_args(argv[:1] if argv else ["--help"])
        return 2
    name = argv[0]
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=f"tabla {name}", description=COMMANDS[name][1])
    if hasattr(module, "add_arguments_for"):
        module.add_arguments_for(name, parser)
    else:
        module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    args.command = name
    try:
        return int(module.run(args) or 0)
    except (CliError, ValueError, OSError) as exc:
        from engine.request import shorten_echoes  # noqa: PLC0415 (only on errors)

        print(f"tabla {name}: error: {shorten_echoes(error_text(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tabla {name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    from scripts.tabla import main as _main  # one CliError class, also under python -m

    sys.exit(_main())
