"""The HTTP JSON API and the board page of ``tabla serve`` (see ``docs/SERVE.md``).

:func:`create_app` builds a FastAPI application over a :class:`~scripts.serve_pool.WorkerPool`.
Every endpoint is one request of the engine protocol (``../shared/PROTOCOL.md``), or of
the page (:mod:`scripts.serve_game`), by ``POST`` with a JSON object or by ``GET`` with
query parameters: the HTTP layer only turns the query string into JSON values
(:func:`query_request`), adds ``cmd`` from the path and hands the request to a worker,
where :mod:`engine.request` reads and checks it as it does for ``tabla engine``. The
reply is the protocol's reply. Status codes: 200 ``ok: true``; 400 a body that is not a
JSON object; 413 a body over the size limit (414 a query string over its own); 404 an unknown
path; 405 a wrong method; 422 a request the engine refuses (its one-sentence ``error``);
500 an internal error; 503 over the time limit (or no worker), after which the server
goes on. Static files are served from a fixed list read at start: nothing a client sends
names a file.
"""
from __future__ import annotations

import logging
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any, AsyncIterator

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from scripts.serve_pool import PoolTimeout, WorkerError, WorkerPool, worker_command

log = logging.getLogger("tabla.serve")

# --------------------------------------------------------------------------- request fields
_COMMON = ("id", "position_id", "xgid", "match_id", "cube_value", "cube_owner", "match_length", "score",
           "crawford", "jacoby", "beavers", "max_cube")
ENDPOINTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "legal": ("Every distinct legal play of a roll, with its resulting Position ID.", _COMMON + ("dice",)),
    "best": ("The play the engine chooses, and the ranked candidates (top); why=true explains them in words.",
             _COMMON + ("dice", "ply", "top", "why")),
    "eval": ("Probabilities and equities of a position before the roll.", _COMMON + ("ply",)),
    "cube": ("The doubling decision of the player on roll.", _COMMON + ("ply",)),
    "rollout": ("A rollout of the position, or of the top plays of a roll (docs/PROTOCOL-rollout.md).",
                _COMMON + ("dice", "top", "trials", "ply", "truncate", "cubeful", "variance_reduction", "until_se",
                           "seed", "bearoff")),
    "position": ("The board page: the checkers, pips, cube and score of a query.", _COMMON + ("dice",)),
    "turn": ("The board page: single-die moves typed so far, the board after each, the moves that may come next.",
             _COMMON + ("dice", "steps")),
    "game": ("The board page: one action on a game (new, roll, double, take, drop, play, next).",
             ("id", "action", "game", "steps", "seed", "match_length", "jacoby")),
}
"""Path → (summary, the request fields it reads)."""

FIELDS: dict[str, tuple[str, str]] = {
    "id": ("json", "any JSON value, repeated in the reply"),
    "position_id": ("str", "GNU Backgammon Position ID, player on roll, e.g. 4HPwATDgc/ABMA"),
    "xgid": ("str", "XGID instead of position_id (its cube, score, turn and dice apply)"),
    "match_id": ("str", "GNU Backgammon Match ID (cube, score, dice) with position_id"),
    "dice": ("dice", "the roll: [3, 1] in JSON; 3,1 or 31 in a query string"),
    "ply": ("int", "search depth (best 1-3, default 1; eval and cube 0-2, default 0; rollout 1-3)"),
    "top": ("int", "how many ranked plays to return"),
    "why": ("bool", "best: explain each candidate in words (why, facts)"),
    "cube_value": ("int", "cube value 1, 2, 4, ... (default 1)"),
    "cube_owner": ("str", "centre, player (on roll) or opponent"),
    "match_length": ("int", "0 = money (default), else the match length (up to 25)"),
    "score": ("ints", "[player on roll, opponent]; 2,1 in a query string"),
    "crawford": ("bool", "this is the Crawford game"),
    "jacoby": ("bool", "money: the Jacoby rule"),
    "beavers": ("bool", "money: beavers allowed"),
    "max_cube": ("int", "the highest cube value (default 64)"),
    "trials": ("int", "rollout: number of trials (default 1296)"),
    "truncate": ("int", "rollout: cut each trial after this many half-moves"),
    "cubeful": ("bool", "rollout: also the money cubeful equity"),
    "variance_reduction": ("bool", "rollout: luck adjustment (default true)"),
    "until_se": ("number", "rollout: stop at this standard error"),
    "seed": ("int", "rollout: dice seed; game (new): the seed of the session's dice"),
    "bearoff": ("bool", "rollout: use the bear-off databases (default true)"),
    "steps": ("json", "turn: [[from, to, die], ...] typed so far; game (play): [[from, to], ...]"),
    "action": ("str", "game: new, roll, double, take, drop, play or next"),
    "game": ("json", "game: the game object of the previous reply (not for new)"),
}
"""Field → (how a query-string value is read, description)."""

_SCHEMA = {
    "json": {}, "str": {"type": "string"}, "int": {"type": "integer"}, "number": {"type": "number"},
    "bool": {"type": "boolean"}, "ints": {"type": "array", "items": {"type": "integer"}},
    "dice": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}},
}
_INT = re.compile(r"[+-]?\d{1,18}")


class BadRequest(ValueError):
    """A request the HTTP layer cannot turn into a JSON object (status 400)."""


def _query_value(kind: str, text: str) -> Any:
    """One query-string value as JSON. A value that does not read as its kind stays a string,
    so that the engine's reader refuses it with its own message."""
    if text[:1] in "[{" and kind in ("json", "ints", "dice"):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    if kind == "int":
        return int(text) if _INT.fullmatch(text) else text
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            return text
    if kind == "bool":
        return {"": True, "true": True, "1": True, "false": False, "0": False}.get(text.lower(), text)
    if kind == "ints":
        parts = text.split(",")
        return [int(p) for p in parts] if all(_INT.fullmatch(p.strip()) for p in parts) else text
    if kind == "json":
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return text  # str, dice ("3,1", "31", "3-1": engine.request.parse_dice reads them)


def query_request(items: list[tuple[str, str]]) -> dict[str, Any]:
    """The request object of a query string (``GET /best?position_id=...&dice=3,1&ply=2``)."""
    req: dict[str, Any] = {}
    for key, text in items:
        if key in req:
            raise BadRequest(f"the query parameter {key!r} is given twice")
        req[key] = _query_value(FIELDS.get(key, ("str", ""))[0], text)
    return req


def body_request(body: bytes) -> dict[str, Any]:
    """The request object of a POST body (a JSON object)."""
    if not body.strip():
        raise BadRequest("the body must be a JSON object, e.g. {\"position_id\": \"4HPwATDgc/ABMA\"}")
    try:
        req = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the body is not valid JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(req, dict):
        raise BadRequest("the body must be a JSON object")
    return req


# --------------------------------------------------------------------------- app
@dataclass(frozen=True)
class ServeConfig:
    """Settings of one server (``tabla serve``'s options)."""

    model: str | None = None
    """Model file; None = the shipped model."""
    heuristic: bool = False
    """Use the heuristic evaluator instead of a network (tests, demos)."""
    workers: int = 2
    """Search worker processes."""
    timeout: float = 30.0
    """Seconds a request may take (waiting for a worker included) before it answers 503."""
    max_body: int = 65536
    """Largest request body in bytes; larger ones answer 413."""
    max_query: int = 8192
    """Longest query string in bytes; longer ones answer 414."""
    spin_us: int = 200
    """Polling of a worker's pipe while a request is the only one in flight, in microseconds."""
    worker_spin_us: int = 500
    """Polling of a worker's input after each reply (``tabla engine --spin-us``)."""


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _error(status: int, message: str, rid: Any = None, headers: dict[str, str] | None = None) -> Response:
    return _json(status, {"id": rid, "ok": False, "error": message}, headers)


async def _read_body(request: Request, limit: int) -> bytes:
    size = request.headers.get("content-length")
    if size is not None:
        if not size.isdigit():
            raise BadRequest("the Content-Length header is not a number")
        if int(size) > limit:
            raise _TooLarge()
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise _TooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


class _TooLarge(Exception):
    pass


def _static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files (name → bytes, media type), read once from ``scripts/web``."""
    types = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
             ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
    files = {}
    for entry in resources.files("scripts").joinpath("web").iterdir():
        suffix = entry.name[entry.name.rfind("."):]
        if suffix in types and entry.is_file():
            files[entry.name] = (entry.read_bytes(), types[suffix])
    return files


def create_app(config: ServeConfig = ServeConfig()) -> FastAPI:
    """The application; its lifespan starts and stops the worker pool."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = WorkerPool(worker_command(config.model, config.heuristic, config.worker_spin_us),
                          config.workers, config.spin_us)
        await pool.start()
        app.state.pool = pool
        try:
            yield
        finally:
            await pool.close()

    app = FastAPI(
        title="Tabla", version="1", lifespan=lifespan,
        description="Tabla's engine protocol over HTTP (POST a JSON object or GET with query parameters) "
                    "and the board page at /. Replies are the protocol's: `ok`, `id`, and the command's "
                    "fields, or `error` in one sentence.",
    )
    static = _static_files()

    for name, (summary, fields) in ENDPOINTS.items():
        _add_endpoint(app, config, name, summary, fields)

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        body, media = static["index.html"]
        return Response(body, media_type=media)

    @app.get("/web/{name}", include_in_schema=False)
    async def web(name: str) -> Response:
        found = static.get(name)  # a name from a fixed list, never a path
        if found is None:
            return _error(404, f"no such file: /web/{name}")
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "no-cache"})

    @app.get("/health", summary="The server is up: its workers and how often one was restarted.")
    async def health(request: Request) -> Response:
        pool: WorkerPool = request.app.state.pool
        return _json(200, {"ok": True, "workers": pool.size, "idle": pool.idle, "restarts": pool.restarts,
                          "pids": pool.pids()})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(404, f"no such path: {request.url.path}")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    return app


def _add_endpoint(app: FastAPI, config: ServeConfig, name: str, summary: str, fields: tuple[str, ...]) -> None:
    async def answer(request: Request) -> Response:
        try:
            if request.method == "GET":
                if len(request.scope["query_string"]) > config.max_query:
                    return _error(414, f"the query string is longer than {config.max_query} bytes")
                req = query_request(request.query_params.multi_items())
            else:
                req = body_request(await _read_body(request, config.max_body))
            if req.setdefault("cmd", name) != name:
                raise BadRequest(f"the command is the path (/{name}): leave out \"cmd\" or make it {name!r}")
        except BadRequest as exc:
            return _error(400, str(exc))
        except _TooLarge:
            return _error(413, f"the body is larger than {config.max_body} bytes")
        rid = req.get("id")
        try:
            line = orjson.dumps(req) + b"\n"
        except TypeError:  # a number orjson cannot write back (e.g. past 64 bits)
            return _error(400, "the request holds a number out of range", None)
        try:
            reply = await request.app.state.pool.request(line, config.timeout)
        except PoolTimeout:
            return _error(503, f"the request took longer than the server's time limit ({config.timeout:g} s)",
                          rid, {"Retry-After": "1"})
        except WorkerError as exc:
            return _error(503, f"{exc}; try again", rid, {"Retry-After": "1"})
        head = orjson.loads(reply)
        status = 200
        if not head.get("ok"):
            status = 500 if str(head.get("error", "")).startswith("internal error") else 422
        return Response(reply, status_code=status, media_type="application/json")

    params = [{"name": f, "in": "query", "required": False, "description": FIELDS[f][1],
               "schema": _SCHEMA[FIELDS[f][0]]} for f in fields]
    body_schema = {"type": "object", "properties": {f: {**_SCHEMA[FIELDS[f][0]], "description": FIELDS[f][1]}
                                                    for f in fields}}
    responses = {"200": {"description": "the protocol's reply, ok: true"},
                 "400": {"description": "not a JSON object"}, "413": {"description": "body too large"},
                 "422": {"description": "the engine refuses the request: ok false, error"},
                 "503": {"description": "over the time limit; the server goes on"}}
    app.add_api_route(f"/{name}", answer, methods=["GET"], summary=summary, name=f"{name}_get",
                      openapi_extra={"parameters": params, "responses": responses})
    app.add_api_route(f"/{name}", answer, methods=["POST"], summary=summary, name=f"{name}_post",
                      openapi_extra={"requestBody": {"required": True, "content": {
                          "application/json": {"schema": body_schema}}}, "responses": responses})
