"""``tabla external``: serve GNU Backgammon's external player on a TCP port or Unix socket.

In GNU Backgammon: ``set player 0 external 127.0.0.1:8111`` (or the socket path), then
``new session`` / ``new match``; Tabla answers each board line (see
:mod:`eval.external`). One connection at a time; after a connection closes the server
waits for the next. A malformed line is answered with ``Error: <reason>`` (GNU
Backgammon's error form), logged on standard error, and the connection goes on.
Money play is assumed without the Jacoby rule (``set jacoby off`` in GNU Backgammon).
"""
from __future__ import annotations

import argparse
import logging
import os
import socket
import sys

from engine.api import Engine
from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator
from eval.external import FibsBoardError, answer, parse_board

log = logging.getLogger("tabla.external")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", type=int, default=8111, help="TCP port (default 8111)")
    where.add_argument("--socket", metavar="PATH", help="Unix socket path instead of a TCP port")
    parser.add_argument("--ply", type=int, default=2, help="search depth of checker plays (1-3, default 2)")
    parser.add_argument("--cube-ply", type=int, default=1, help="search depth of cube decisions (0-2, default 1)")
    parser.add_argument("--connections", type=int, default=0, help="stop after this many connections (0 = never)")
    parser.add_argument("--log", metavar="FILE", help="also log every line and answer to FILE")
    parser.add_argument("--model", help="model file; default: the shipped model")
    parser.add_argument("--heuristic", action="store_true", help="use the heuristic evaluator, not the network")


def _listen(args: argparse.Namespace) -> socket.socket:
    if args.socket:
        if os.path.exists(args.socket):
            os.unlink(args.socket)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(args.socket)
    else:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((args.host, args.port))
    srv.listen(1)
    return srv


def reply_to(engine: Engine, line: str, ply: int, cube_ply: int) -> str:
    """The answer to one line: a decision, or ``Error: ...`` for a malformed line."""
    try:
        return answer(engine, parse_board(line), ply, cube_ply)
    except FibsBoardError as exc:
        log.warning("malformed board line %r: %s", line[:120], exc)
        return f"Error: {exc}"


def serve_connection(engine: Engine, conn: socket.socket, ply: int, cube_ply: int) -> int:
    """Answer lines until the peer closes; returns how many lines were answered."""
    buf = b""
    n = 0
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return n
            buf += data.replace(b"\x00", b"")
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                out = reply_to(engine, line, ply, cube_ply)
                log.info("%s -> %s", line, out)
                conn.sendall(out.encode() + b"\n")
                n += 1


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.ply <= 3:
        raise ValueError(f"--ply must be 1 to 3, got {args.ply}")
    if args.log:
        handler = logging.FileHandler(args.log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    limit_blas_threads(1)
    engine = Engine(load_evaluator(evaluator_spec(args.model, args.heuristic)))
    srv = _listen(args)
    where = args.socket or f"{args.host}:{srv.getsockname()[1]}"
    print(f"tabla external: listening on {where}", file=sys.stderr, flush=True)
    served = 0
    with srv:
        while not args.connections or served < args.connections:
            conn, _ = srv.accept()
            served += 1
            try:
                lines = serve_connection(engine, conn, args.ply, args.cube_ply)
                log.info("connection %d closed after %d lines", served, lines)
            except OSError as exc:
                log.warning("connection %d failed: %s", served, exc)
    return 0
