"""One search worker of ``tabla serve``: the engine protocol on its pipes, plus the page's
requests.

``python -m scripts.serve_worker [--model PATH | --heuristic] [--spin-us N]`` loads the
evaluator at once, writes one line ``{"ready": true}`` (or ``{"ready": false, "error":
...}`` and exits 1), then answers JSON lines exactly like ``tabla engine``
(:func:`scripts.cmd_engine.serve` over :class:`ServeSession`): the protocol's commands
through :class:`engine.protocol.EngineSession`, and

* ``best`` with ``"why": true``: each candidate also carries ``why`` (one line in words,
  :func:`eval.explain.explain_plays`) and ``facts``; the chosen play's line is ``why`` at
  the top level (``top`` defaults to 1 then, so the candidates are in the reply);
* ``position``, ``turn``, ``game``: the board page's requests (:mod:`scripts.serve_game`).

``quit`` is refused: the server, not a client, ends a worker (by closing its input).
"""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, Callable

import orjson

from engine.api import PlayInfo
from engine.protocol import EngineSession
from engine.request import read_query
from scripts.serve_game import game_step, position_view, turn_view

log = logging.getLogger("tabla.serve")

PAGE_COMMANDS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "position": position_view,
    "turn": turn_view,
    "game": game_step,
}
"""Requests of the board page, answered beside the protocol's commands."""


def _error(rid: Any, exc: BaseException | str) -> dict[str, Any]:
    text = str(exc).strip()
    return {"id": rid, "ok": False, "error": (text.splitlines()[0] if text else type(exc).__name__)}


class ServeSession(EngineSession):
    """:class:`EngineSession` with ``why`` on ``best`` and the page's commands."""

    def handle(self, req: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        rid, cmd = req.get("id"), req.get("cmd")
        page = PAGE_COMMANDS.get(cmd)
        if page is not None:
            try:
                return {"id": rid, "ok": True, **page(req)}, False
            except ValueError as exc:  # QueryError, GameError, IllegalPlayError, ...
                return _error(rid, exc), False
            except Exception as exc:  # never crash: report and go on
                log.exception("internal error on %r", req)
                return _error(rid, f"internal error: {type(exc).__name__}: {exc}"), False
        if cmd == "quit":
            return _error(rid, "quit is not a request of the HTTP server"), False
        why = req.get("why", False) if cmd == "best" else False
        if not isinstance(why, bool):
            return _error(rid, f"why must be true or false, got {why!r}"), False
        if why and req.get("top") is None:
            req = {**req, "top": 1}
        reply, stop = super().handle(req)
        if why and reply.get("ok"):
            _explain(req, reply)
        return reply, stop


def _explain(req: dict[str, Any], reply: dict[str, Any]) -> None:
    """Add ``why`` and ``facts`` to the candidates of a ``best`` reply (in place)."""
    from eval.explain import explain_plays  # noqa: PLC0415 (only for why)

    q = read_query(req, need_dice=True)
    cands = reply["candidates"]
    plays = [PlayInfo(play=c["play"], steps=tuple(map(tuple, c["steps"])), position_id=c["position_id"],
                      equity=c.get("equity"), probabilities=c.get("probabilities")) for c in cands]
    for cand, (line, facts) in zip(cands, explain_plays(q.position, q.dice, plays)):
        cand["why"] = line
        cand["facts"] = facts
    reply["why"] = cands[0]["why"]


def _warm_up(session: ServeSession) -> None:
    """Run each kind of request once, so the first client request pays no first-call cost."""
    start = {"position_id": "4HPwATDgc/ABMA"}
    for req in ({"cmd": "best", "dice": [3, 1], "why": True}, {"cmd": "cube"}, {"cmd": "turn", "dice": [3, 1]},
                {"cmd": "game", "action": "new", "seed": 1}):
        reply, _ = session.handle({**start, **req})
        if not reply.get("ok"):
            raise RuntimeError(f"warm-up request failed: {reply.get('error')}")


def main(argv: list[str] | None = None) -> int:
    from scripts.cmd_engine import SpinLineReader, serve
    from scripts.evaluators import evaluator_spec, limit_blas_threads, load_evaluator

    parser = argparse.ArgumentParser(prog="python -m scripts.serve_worker", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--heuristic", action="store_true")
    parser.add_argument("--spin-us", type=int, default=500)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s[worker]: %(message)s", stream=sys.stderr)
    limit_blas_threads(1)
    out = sys.stdout.buffer
    spec = evaluator_spec(args.model, args.heuristic)
    session = ServeSession(lambda: load_evaluator(spec))
    try:
        session.engine()
        _warm_up(session)
    except (ValueError, OSError, RuntimeError) as exc:
        out.write(orjson.dumps({"ready": False, "error": str(exc).splitlines()[0]}) + b"\n")
        out.flush()
        return 1
    out.write(b'{"ready":true}\n')
    out.flush()
    try:
        return serve(session, SpinLineReader(sys.stdin.fileno(), max(0, args.spin_us)), out)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
