"""The JSON-lines engine protocol of ``../shared/PROTOCOL.md``: the session.

:class:`EngineSession` answers one request line with exactly one reply line; every
failure is a reply ``{"id": ..., "ok": false, "error": "<one sentence>"}``. Commands:
``legal``, ``best``, ``eval``, ``cube``, ``rollout`` (``docs/PROTOCOL-rollout.md``), ``quit``. Requests are read by
:mod:`engine.request`. The stdin/stdout loop is ``tabla engine``
(:mod:`scripts.cmd_engine`).

The evaluator is made by a factory on the first request that needs it (``legal`` never
does); a factory that fails is reported in the replies of ``best`` / ``eval`` / ``cube``.
``tabla engine`` loads its model before it reads a line, so there a model that cannot be
loaded is a start-up error. Error messages repeat at most
:data:`engine.request.ECHO_LIMIT` characters of any one input
(:func:`engine.request.shorten_echoes`). Omitted plies take
:data:`engine.request.DEFAULT_PLY` (PROTOCOL.md: ``best`` 1, ``eval`` and ``cube`` 0).
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

import orjson

from engine.api import Engine
from engine.evaluator import Evaluator
from engine.request import read_ply, read_query, read_top, shorten_echoes
from engine.rollout import RolloutSettings

log = logging.getLogger("tabla.engine")

COMMANDS = ("legal", "best", "eval", "cube", "rollout", "quit")


class ProtocolError(ValueError):
    """A request that is not a valid protocol request."""


class EvaluatorUnavailable(ValueError):
    """The evaluator could not be made (the factory's one-line reason)."""


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
                raise EvaluatorUnavailable(self._load_error)
            try:
                self._engine = Engine(self._factory())
            except (OSError, ValueError) as exc:
                self._load_error = str(exc)
                raise EvaluatorUnavailable(self._load_error) from None
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
        reply, stop = self.handle(req)
        return _dumps(reply), stop

    def handle(self, req: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        rid = req.get("id")
        cmd = req.get("cmd")
        try:
            if cmd == "best":
                body = self._best(req)
            elif cmd == "quit":
                return {"id": rid, "ok": True}, True
            elif cmd == "legal":
                body = self._legal(req)
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
        except ValueError as exc:  # QueryError, ProtocolError, EvaluatorUnavailable, CubeStateError ...
            return _error(rid, _first_line(exc)), False
        except Exception as exc:  # never crash: report and go on
            log.exception("internal error on %s", shorten_echoes(repr(req), 200))
            return _error(rid, f"internal error: {type(exc).__name__}: {_first_line(exc)}"), False
        return {"id": rid, "ok": True, **body}, False

    # ----------------------------------------------------------------- commands
    def _legal(self, req: dict[str, Any]) -> dict[str, Any]:
        q = read_query(req, need_dice=True)
        plays = self._legal_engine.legal(q.position, q.dice)
        return {"plays": [p.to_dict() for p in plays]}

    def _best(self, req: dict[str, Any]) -> dict[str, Any]:
        q = read_query(req, need_dice=True)
        ply, top = read_ply(req, "best"), read_top(req)
        res = self.engine().best(q.position, q.dice, ply=ply, top=top or 1, state=q.state)
        # PROTOCOL.md: candidates may be left out only when top is absent
        return res.to_dict(with_candidates=top is not None)

    def _eval(self, req: dict[str, Any]) -> dict[str, Any]:
        q = read_query(req, need_dice=False)
        ply = read_ply(req, "eval")
        return self.engine().eval(q.position, ply=ply, state=q.state).to_dict()

    def _cube(self, req: dict[str, Any]) -> dict[str, Any]:
        q = read_query(req, need_dice=False)
        ply = read_ply(req, "cube")
        return self.engine().cube(q.position, ply=ply, state=q.state).to_dict()

    def _rollout(self, req: dict[str, Any]) -> dict[str, Any]:
        q = read_query(req, need_dice=False)
        known = {"trials", "ply", "truncate", "cubeful", "variance_reduction", "until_se", "seed", "bearoff"}
        settings = RolloutSettings(**{k: req[k] for k in known if k in req and req[k] is not None})
        if q.dice is None:
            if "top" in req:
                raise ProtocolError("top needs dice: it ranks the plays of a roll")
            return self.engine().rollout(q.position, settings, q.state).to_dict()
        top = read_top(req) or 5
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


class _NoEvaluator:
    """Stands in where no evaluation is needed (``legal``)."""

    def evaluate(self, boards):  # pragma: no cover - never called
        raise EvaluatorUnavailable("no evaluator")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _error(rid: Any, message: str) -> dict[str, Any]:
    return {"id": rid, "ok": False, "error": shorten_echoes(message)}


def error_reply(message: str) -> bytes:
    """An error reply line without an id (e.g. for a line that is not UTF-8)."""
    return _dumps(_error(None, message))


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
