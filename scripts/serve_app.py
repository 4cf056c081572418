"""The HTTP JSON API and the board page of ``tabla serve`` (see ``docs/SERVE.md``).

:func:`create_app` builds the ASGI application over a :class:`~scripts.serve_pool.WorkerPool`.
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
from typing import Any, AsyncIterator, Callable
from urllib.parse import parse_qsl

import orjson
from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
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
    spin_us: int = 500
    """Polling of a worker's pipe while a request is the only one in flight, in microseconds."""
    worker_spin_us: int = 1000
    """Polling of a worker's input after each reply (``tabla engine --spin-us``)."""


Reply = tuple[int, bytes, list[tuple[bytes, bytes]]]
"""Status, JSON body and extra headers of an engine endpoint's answer."""


def _error_body(status: int, message: str, rid: Any = None, retry: bool = False) -> Reply:
    body = orjson.dumps({"id": rid, "ok": False, "error": message})
    return status, body, [(b"retry-after", b"1")] if retry else []


class _TooLarge(Exception):
    pass


class EngineApi:
    """The engine endpoints as a plain ASGI application (``/legal``, ``/best``, ...).

    They skip the framework's request machinery: a 1-ply ``best`` costs about as much as
    that machinery, and the engine's reader checks every field anyway. FastAPI documents
    them (:func:`engine_openapi_paths`) and serves everything else.
    """

    def __init__(self, config: ServeConfig, state: Any) -> None:
        self.config = config
        self.state = state  # holds .pool once the lifespan has started it

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        name = scope["path"][1:]
        try:
            status, body, headers = await self.answer(name, scope, receive)
        except Exception:  # never a traceback to the client
            log.exception("internal error on %s", scope["path"])
            status, body, headers = _error_body(500, "internal error")
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]})
        await send({"type": "http.response.body", "body": body})

    async def answer(self, name: str, scope: dict, receive: Any) -> Reply:
        cfg, method = self.config, scope["method"]
        try:
            if method == "GET":
                query = scope["query_string"]
                if len(query) > cfg.max_query:
                    return _error_body(414, f"the query string is longer than {cfg.max_query} bytes")
                req = query_request(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
            elif method == "POST":
                req = body_request(await _read_body(scope, receive, cfg.max_body))
            else:
                return _error_body(405, f"{method} is not allowed on /{name}")
            if req.setdefault("cmd", name) != name:
                raise BadRequest(f"the command is the path (/{name}): leave out \"cmd\" or make it {name!r}")
            line = orjson.dumps(req) + b"\n"
        except BadRequest as exc:
            return _error_body(400, str(exc))
        except _TooLarge:
            return _error_body(413, f"the body is larger than {cfg.max_body} bytes")
        except TypeError:  # a number orjson cannot write back (past 64 bits)
            return _error_body(400, "the request holds a number out of range")
        rid = req.get("id")
        try:
            reply = await self.state.pool.request(line, cfg.timeout)
        except PoolTimeout:
            return _error_body(503, f"the request took longer than the server's time limit ({cfg.timeout:g} s)",
                               rid, retry=True)
        except WorkerError as exc:
            return _error_body(503, f"{exc}; try again", rid, retry=True)
        head = orjson.loads(reply)
        status = 200
        if not head.get("ok"):
            status = 500 if str(head.get("error", "")).startswith("internal error") else 422
        return status, reply, []


async def _read_body(scope: dict, receive: Any, limit: int) -> bytes:
    for key, value in scope["headers"]:
        if key == b"content-length":
            if not value.isdigit():
                raise BadRequest("the Content-Length header is not a number")
            if int(value) > limit:
                raise _TooLarge()
    chunks, total = [], 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise BadRequest("the client went away")
        chunk = msg.get("body", b"")
        total += len(chunk)
        if total > limit:
            raise _TooLarge()
        chunks.append(chunk)
        if not msg.get("more_body"):
            return b"".join(chunks)


def engine_openapi_paths() -> dict[str, Any]:
    """The OpenAPI description of the engine endpoints (GET with parameters, POST with a body)."""
    responses = {"200": {"description": "the protocol's reply, ok: true"},
                 "400": {"description": "not a JSON object"}, "413": {"description": "body too large"},
                 "422": {"description": "the engine refuses the request: ok false, error in one sentence"},
                 "503": {"description": "over the time limit; the server goes on"}}
    paths = {}
    for name, (summary, fields) in ENDPOINTS.items():
        params = [{"name": f, "in": "query", "required": False, "description": FIELDS[f][1],
                   "schema": _SCHEMA[FIELDS[f][0]]} for f in fields]
        body = {"type": "object", "properties": {f: {**_SCHEMA[FIELDS[f][0]], "description": FIELDS[f][1]}
                                                 for f in fields}}
        paths[f"/{name}"] = {
            "get": {"summary": summary, "operationId": f"{name}_get", "parameters": params, "responses": responses},
            "post": {"summary": summary, "operationId": f"{name}_post", "responses": responses, "requestBody": {
                "required": True, "content": {"application/json": {"schema": body}}}},
        }
    return paths


def make_pool(config: ServeConfig) -> WorkerPool:
    """The worker pool of a server (not started)."""
    return WorkerPool(worker_command(config.model, config.heuristic, config.worker_spin_us), config.workers,
                      config.spin_us)


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _error(status: int, message: str) -> Response:
    return _json(status, {"id": None, "ok": False, "error": message})


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


def create_app(config: ServeConfig = ServeConfig(), pool: WorkerPool | None = None) -> Callable:
    """The ASGI application: the engine endpoints (:class:`EngineApi`) in front of a FastAPI
    application with the page, ``/health`` and the OpenAPI page. With no ``pool`` given,
    the lifespan starts one; ``tabla serve`` starts its own first, so that a model that does
    not load is a one-line error before anything listens. The lifespan's end stops it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = pool is None
        p = make_pool(config) if own else pool
        if own:
            await p.start()
        app.state.pool = p
        try:
            yield
        finally:
            await p.close()

    web = FastAPI(
        title="Tabla", version="1", lifespan=lifespan,
        description="Tabla's engine protocol over HTTP (POST a JSON object or GET with query parameters) "
                    "and the board page at /. Replies are the protocol's: `ok`, `id`, and the command's "
                    "fields, or `error` in one sentence.",
    )
    static = _static_files()

    @web.get("/", include_in_schema=False)
    async def index() -> Response:
        body, media = static["index.html"]
        return Response(body, media_type=media)

    @web.get("/web/{name}", include_in_schema=False)
    async def web_file(name: str) -> Response:
        found = static.get(name)  # a name from a fixed list, never a path
        if found is None:
            return _error(404, f"no such file: /web/{name}")
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "no-cache"})

    @web.get("/health", summary="The server is up: its workers, how many are idle, how often one was replaced.")
    async def health(request: Request) -> Response:
        pool: WorkerPool = request.app.state.pool
        return _json(200, {"ok": True, "workers": pool.size, "idle": pool.idle, "restarts": pool.restarts,
                          "pids": pool.pids()})

    @web.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(404, f"no such path: {request.url.path}")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    def openapi() -> dict[str, Any]:
        if web.openapi_schema is None:
            schema = get_openapi(title=web.title, version=web.version, description=web.description, routes=web.routes)
            schema["paths"] = {**engine_openapi_paths(), **schema.get("paths", {})}
            web.openapi_schema = schema
        return web.openapi_schema

    web.openapi = openapi
    api = EngineApi(config, web.state)

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"][1:] in ENDPOINTS:
            await api(scope, receive, send)
        else:
            await web(scope, receive, send)

    app.web = web  # type: ignore[attr-defined]
    return app
