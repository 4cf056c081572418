"""``tabla engine``: the JSON-lines engine protocol of ``../shared/PROTOCOL.md``.

One JSON object a line in, exactly one JSON object a line out, in order, flushed after
every line; logs go to standard error; end of input exits with status 0. Commands:
``legal``, ``best``, ``eval``, ``cube``, ``rollout`` (``docs/PROTOCOL-rollout.md``), ``quit``. Every failure is a reply
``{"id": ..., "ok": false, "error": "<one sentence>"}`` and the loop goes on.

The evaluator is loaded on the first request that needs it (``legal`` never does), so a
missing or invalid model file is reported in the replies of ``best`` / ``eval`` / ``cube``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import select
import sys
import time
from typing import Any, BinaryIO, Callable, TextIO

import orjson

from engine.api import (
    Engine,
    ModelError,
    Query,
    QueryError,
    fast_position_from_id,
    limit_blas_threads,
    load_model,
    parse_dice,
    resolve_query,
)
from engine.cube import MONEY
from engine.ids import IdError
from engine.evaluator import Evaluator
from engine.position import Position
from engine.rollout import RolloutSettings

log = logging.getLogger("tabla.engine")

STATE_FIELDS = ("cube_value", "cube_owner", "match_length", "score", "crawford", "jacoby", "beavers", "max_cube")
COMMANDS = ("legal", "best", "eval", "cube", "rollout", "quit")
_PLAIN_BEST_KEYS = frozenset(("id", "cmd", "position_id", "dice", "ply", "top"))


class ProtocolError(ValueError):
    """A request that is not a valid protocol request."""


class EngineSession:
    """Answers protocol requests (dicts) with replies (dicts); never raises."""

    def __init__(self, evaluator_factory: Callable[[], Evaluator]) -> None:
        self._factory = evaluator_factory
        self._engine: Engine | None = None
        self._load_error: str | None = None
        self._legal_engine = Engine(_NoEvaluator())

    def engine(self) -> Engine:
        if self._engine is None:
            if self._load_error is not None:
                raise ModelError(self._load_error)
            try:
                self._engine = Engine(self._factory())
            except (ModelError, OSError, ValueError) as exc:
                self._load_error = str(exc)
                raise ModelError(self._load_error) from None
        return self._engine

    # ----------------------------------------------------------------- dispatch
    def handle_line(self, line: str) -> tuple[dict[str, Any], bool]:
        """The reply to one input line, and whether the session should end."""
        req, error = _parse(line)
        return (error, False) if req is None else self.handle(req)

    def reply_line(self, line: str) -> tuple[bytes, bool]:
        """The reply to one input line as UTF-8 JSON ending in a newline, and whether the
        session should end."""
        req, error = _parse(line)
        if req is None:
            return _dumps(error), False
        if req.get("cmd") == "best" and req.keys() <= _PLAIN_BEST_KEYS:
            data = self._plain_best(req)
            if data is not None:
                return data, False
        reply, stop = self.handle(req)
        return _dumps(reply), stop

    def _plain_best(self, req: dict[str, Any]) -> bytes | None:
        """The reply to the most common request, a money-game ``best`` with a Position ID,
        dice and maybe ``ply``, built in one step; ``None`` sends the request down the
        general path (which also words any error)."""
        pid, dice, ply = req.get("position_id"), req.get("dice"), req.get("ply", 1)
        if type(pid) is not str or type(dice) is not list or type(ply) is not int or not 1 <= ply <= 3 or "top" in req:
            return None
        try:
            res = self.engine().best(fast_position_from_id(pid), parse_dice(dice), ply=ply)
            # the general path's reply, without its checks and dispatch
            reply = {"id": req.get("id"), "ok": True, **res.plays[0].to_dict(with_probabilities=False)}
            return orjson.dumps(reply, option=orjson.OPT_APPEND_NEWLINE)
        except Exception:  # noqa: BLE001 - the general path gives the error its reply
            return None

    def handle(self, req: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        rid = req.get("id")
        cmd = req.get("cmd")
        try:
            if cmd == "quit":
                return {"id": rid, "ok": True}, True
            if cmd == "legal":
                body = self._legal(req)
            elif cmd == "best":
                body = self._best(req)
            elif cmd == "eval":
                body = self._eval(req)
            elif cmd == "cube":
                body = self._cube(req)
            elif cmd == "rollout":
                body = self._rollout(req)
            elif cmd is None:
                raise ProtocolError(f"the request has no \"cmd\" (one of {', '.join(COMMANDS)})")
            else:
                raise ProtocolError(f"unknown command {cmd!r} (expected one of {', '.join(COMMANDS)})")
        except (QueryError, ProtocolError, ModelError, ValueError) as exc:
            return _error(rid, _first_line(exc)), False
        except Exception as exc:  # never crash: report and go on
            log.exception("internal error on %r", req)
            return _error(rid, f"internal error: {type(exc).__name__}: {_first_line(exc)}"), False
        reply = {"id": rid, "ok": True}
        reply.update(body)
        return reply, False

    # ----------------------------------------------------------------- commands
    @staticmethod
    def _query(req: dict[str, Any], need_dice: bool):
        fields = {k: req[k] for k in STATE_FIELDS if k in req}
        pid = req.get("position_id")
        if not fields and type(pid) is str and "xgid" not in req and "match_id" not in req:
            # the common request: a Position ID, maybe dice, money game
            position = _decode(pid)
            dice = req.get("dice")
            q = Query(position, MONEY, None if dice is None else parse_dice(dice))
        else:
            q = resolve_query(
                position_id=pid,
                xgid=req.get("xgid"),
                match_id=req.get("match_id"),
                dice=req.get("dice"),
                **fields,
            )
        if need_dice and q.dice is None:
            raise ProtocolError("the request needs \"dice\", e.g. [3, 1]")
        _check_live(q.position)
        return q

    @staticmethod
    def _ply(req: dict[str, Any], default: int, lo: int, hi: int) -> int:
        ply = req.get("ply", default)
        if not isinstance(ply, int) or isinstance(ply, bool) or not lo <= ply <= hi:
            raise ProtocolError(f"ply must be an integer {lo}-{hi} for {req.get('cmd')}, got {ply!r}")
        return ply

    def _legal(self, req: dict[str, Any]) -> dict[str, Any]:
        q = self._query(req, need_dice=True)
        plays = self._legal_engine.legal(q.position, q.dice)
        return {"plays": [p.to_dict() for p in plays]}

    def _best(self, req: dict[str, Any]) -> dict[str, Any]:
        q = self._query(req, need_dice=True)
        ply, top = self._ply(req, 1, 1, 3), _top(req)
        res = self.engine().best(q.position, q.dice, ply=ply, top=top or 1, state=q.state)
        # PROTOCOL.md: candidates may be left out only when top is absent
        return res.to_dict(with_candidates=top is not None)

    def _eval(self, req: dict[str, Any]) -> dict[str, Any]:
        q = self._query(req, need_dice=False)
        ply = self._ply(req, 0, 0, 2)
        return self.engine().eval(q.position, ply=ply, state=q.state).to_dict()

    def _cube(self, req: dict[str, Any]) -> dict[str, Any]:
        q = self._query(req, need_dice=False)
        ply = self._ply(req, 0, 0, 2)
        return self.engine().cube(q.position, ply=ply, state=q.state).to_dict()

    def _rollout(self, req: dict[str, Any]) -> dict[str, Any]:
        q = self._query(req, need_dice=False)
        known = {"trials", "ply", "truncate", "cubeful", "variance_reduction", "until_se", "seed", "bearoff"}
        settings = RolloutSettings(**{k: req[k] for k in known if k in req and req[k] is not None})
        if q.dice is None:
            if "top" in req:
                raise ProtocolError("top needs dice: it ranks the plays of a roll")
            return self.engine().rollout(q.position, settings, q.state).to_dict()
        top = _top(req) or 5
        plays = self.engine().rollout_plays(q.position, q.dice, settings, q.state, top)
        return {"plays": [p.to_dict() for p in plays]}


def _parse(line: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(request, None)``, or ``(None, error reply)`` when the line is not a JSON object."""
    try:
        req = orjson.loads(line)
    except orjson.JSONDecodeError:
        # orjson is strict (64-bit integers, nesting depth): let the standard parser
        # accept what it can and give its message otherwise
        try:
            req = json.loads(line)
        except (ValueError, RecursionError) as exc:
            return None, _error(None, f"the line is not valid JSON ({_first_line(exc)})")
    if not isinstance(req, dict):
        return None, _error(None, "a request must be a JSON object")
    return req, None


def _check_live(position: Position) -> None:
    if position.is_game_over():
        raise ProtocolError("the game in this position is already over")


def _decode(pid: str) -> Position:
    try:
        return fast_position_from_id(pid)
    except IdError as exc:
        raise QueryError(str(exc)) from None


def _top(req: dict[str, Any]) -> int | None:
    """The request's ``top`` (None when absent); a positive integer."""
    top = req.get("top")
    if top is not None and (type(top) is not int or top < 1):
        raise ProtocolError(f"top must be a positive integer, got {top!r}")
    return top


class _NoEvaluator:
    """Stands in where no evaluation is needed (``legal``)."""

    def evaluate(self, boards):  # pragma: no cover - never called
        raise ModelError("no evaluator")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _error(rid: Any, message: str) -> dict[str, Any]:
    return {"id": rid, "ok": False, "error": message}


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def _dumps(obj: dict[str, Any]) -> bytes:
    """One reply line: compact UTF-8 JSON and a newline."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        text = _ENCODER.encode(obj)
    except (TypeError, ValueError):
        # an id that cannot be echoed as JSON (NaN): echo null rather than crash
        text = json.dumps(dict(obj, id=None), separators=(",", ":"), default=str)
    return (text + "\n").encode("utf-8")


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


def serve(session: EngineSession, stdin: BinaryIO | TextIO | SpinLineReader, stdout: BinaryIO) -> int:
    """Run the loop until ``quit`` or end of input; returns the exit status (0).

    ``stdin`` may yield bytes (undecodable lines get an error reply) or text; replies are
    written to the binary stream ``stdout``.
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
                write(_dumps(_error(None, "the line is not valid UTF-8")))
                flush()
                continue
        else:
            line = raw
        if not line.strip():
            continue
        data, stop = session.reply_line(line)
        write(data)
        flush()
        if stop:
            return 0


# --------------------------------------------------------------------------- CLI
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


def evaluator_factory(args: argparse.Namespace) -> Callable[[], Evaluator]:
    def make() -> Evaluator:
        if getattr(args, "heuristic", False):
            from engine.heuristic import HeuristicEvaluator

            return HeuristicEvaluator()
        return load_model(args.model)

    return make


def run(args: argparse.Namespace) -> int:
    if args.verbose:
        logging.getLogger("tabla").setLevel(logging.INFO)
    limit_blas_threads(1)
    session = EngineSession(evaluator_factory(args))
    if args.spin_us < 0:
        raise ValueError("--spin-us must be 0 or more")
    try:
        stdin: Any = SpinLineReader(sys.stdin.fileno(), args.spin_us)
    except (AttributeError, OSError, ValueError):  # no real descriptor (embedded use)
        stdin = sys.stdin.buffer
    try:
        return serve(session, stdin, getattr(sys.stdout, "buffer", None) or _TextWriter(sys.stdout))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
