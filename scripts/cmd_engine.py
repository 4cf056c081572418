"""``tabla engine``: the JSON-lines engine protocol of ``../shared/PROTOCOL.md`` on
standard input and output.

One JSON object a line in, exactly one JSON object a line out, in order, flushed after
every line; logs go to standard error (``-v``: every request and reply, logger
``tabla.engine``); end of input exits with status 0. The model is loaded before the
first line is read: one that cannot be loaded is a one-line error and exit status 2. The
replies come from :class:`engine.protocol.EngineSession`.
"""
from __future__ import annotations

import argparse
import logging
import os
import select
import sys
import time
from typing import Any, BinaryIO, TextIO

from engine.protocol import EngineSession, error_reply
from engine.request import shorten_echoes
from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator

log = logging.getLogger("tabla.engine")


class SpinLineReader:
    """Lines from a file descriptor, polling briefly before each blocking wait.

    A client of a request/reply protocol usually sends its next request right after it
    reads a reply. Waking a sleeping process on another core costs tens of microseconds
    on a virtual machine, more than the JSON layer itself, so after each line the reader
    polls the descriptor for up to ``spin_us`` microseconds before it blocks.
    ``spin_us=0`` never polls.
    """

    def __init__(self, fd: int, spin_us: int) -> None:
        self.fd = fd
        self.spin = spin_us / 1e6
        self.buf = b""
        self.eof = False

    def readline(self) -> bytes:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[: i + 1], self.buf[i + 1 :]
                return line
            if self.eof:
                line, self.buf = self.buf, b""
                return line
            if self.spin > 0:
                end = time.perf_counter() + self.spin
                while time.perf_counter() < end and not select.select([self.fd], [], [], 0)[0]:
                    os.sched_yield()  # a client on the same core gets the CPU at once
            chunk = os.read(self.fd, 1 << 16)
            if chunk:
                self.buf += chunk
            else:
                self.eof = True


class _TextWriter:
    """Bytes onto a text stream that has no binary buffer (embedded use)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, data: bytes) -> None:
        self.stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self.stream.flush()


def serve(session: EngineSession, stdin: BinaryIO | TextIO | SpinLineReader, stdout: BinaryIO,
          log_requests: bool = False) -> int:
    """Run the loop until ``quit`` or end of input; returns the exit status (0).

    ``stdin`` may yield bytes (undecodable lines get an error reply) or text; replies are
    written to the binary stream ``stdout``. ``log_requests``: each request, its reply
    and the time taken go to the ``tabla.engine`` logger at INFO (shortened).
    """
    readline = stdin.readline
    write = stdout.write
    flush = stdout.flush
    while True:
        raw = readline()
        if not raw:
            return 0
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                write(error_reply("the line is not valid UTF-8"))
                flush()
                continue
        else:
            line = raw
        if not line.strip():
            continue
        if log_requests:
            t = time.perf_counter()
            data, stop = session.reply_line(line)
            log.info("%s -> %s (%.1f ms)", shorten_echoes(line.strip(), 200),
                     shorten_echoes(data.decode("utf-8").strip(), 200), 1e3 * (time.perf_counter() - t))
        else:
            data, stop = session.reply_line(line)
        write(data)
        flush()
        if stop:
            return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model file (.npz or .pt); default: the shipped model")
    parser.add_argument(
        "--heuristic",
        action="store_true",
        help="use the hand-written heuristic evaluator instead of the network",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log requests to standard error")
    parser.add_argument(
        "--spin-us",
        type=int,
        default=500,
        help="after each reply, poll standard input this many microseconds before sleeping "
        "(lower latency for clients that send the next request at once; 0 = never poll)",
    )


def run(args: argparse.Namespace) -> int:
    if args.verbose:
        log.setLevel(logging.INFO)
    if args.spin_us < 0:
        raise ValueError("--spin-us must be 0 or more")
    limit_blas_threads(1)
    evaluator = load_evaluator(evaluator_spec(args.model, args.heuristic))  # ModelError: a start-up error
    session = EngineSession(lambda: evaluator)
    try:
        stdin: Any = SpinLineReader(sys.stdin.fileno(), args.spin_us)
    except (AttributeError, OSError, ValueError):  # no real descriptor (embedded use)
        stdin = sys.stdin.buffer
    try:
        return serve(session, stdin, getattr(sys.stdout, "buffer", None) or _TextWriter(sys.stdout), args.verbose)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
