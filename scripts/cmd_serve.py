"""``tabla serve``: the engine over HTTP (a JSON API, OpenAPI page at /docs) and a board in
the browser at /; see ``docs/SERVE.md`` and :mod:`scripts.serve_app`."""
from __future__ import annotations

import argparse
import logging

log = logging.getLogger("tabla.serve")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 = any free port)")
    parser.add_argument("--model", default=None, help="model file (.npz or .pt); default: the shipped model")
    parser.add_argument("--heuristic", action="store_true", help="use the heuristic evaluator instead of the network")
    parser.add_argument("--workers", type=int, default=2, help="search worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds a request may take before it answers 503 (default 30)")
    parser.add_argument("--max-body", type=int, default=65536, help="largest request body in bytes (default 65536)")
    parser.add_argument("--spin-us", type=int, default=500,
                        help="poll a worker's pipe this many microseconds while one request is in flight (0 = never)")
    parser.add_argument("--worker-spin-us", type=int, default=1000,
                        help="each worker polls its input this many microseconds after a reply (0 = never)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")


def run(args: argparse.Namespace) -> int:
    from scripts.tabla import CliError

    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise CliError(f"tabla serve needs {' and '.join(missing)}: pip install 'tabla[serve]'")
    from scripts.serve_app import ServeConfig
    for name in ("workers", "max_body"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be at least 1")
    if not args.timeout > 0:
        raise CliError("--timeout must be positive")
    if args.spin_us < 0 or args.worker_spin_us < 0:
        raise CliError("--spin-us and --worker-spin-us must be 0 or more")
    if args.host not in LOCAL_HOSTS:
        log.warning("binding %s: other machines can reach this server (it has no authentication)", args.host)
    logging.getLogger("tabla").setLevel(logging.INFO if args.verbose else logging.WARNING)
    config = ServeConfig(model=args.model, heuristic=args.heuristic, workers=args.workers, timeout=args.timeout,
                         max_body=args.max_body, spin_us=args.spin_us, worker_spin_us=args.worker_spin_us)
    runner = _runner()
    try:
        return runner(_serve(config, args))
    except KeyboardInterrupt:
        return 0


async def _serve(config, args: argparse.Namespace) -> int:
    """Start the workers, then listen; the workers stop when the server does."""
    import uvicorn

    from scripts.serve_app import create_app, make_pool
    from scripts.serve_pool import WorkerError
    from scripts.tabla import CliError

    pool = make_pool(config)
    try:
        await pool.start()
    except WorkerError as exc:
        raise CliError(str(exc)) from None
    try:
        server = uvicorn.Server(uvicorn.Config(
            create_app(config, pool), host=args.host, port=args.port, log_level="info" if args.verbose else "warning",
            access_log=args.verbose, http=_choice("httptools", "auto"), timeout_graceful_shutdown=5,
        ))
        try:
            await server.serve()
        except SystemExit:  # uvicorn could not listen (it logged why)
            raise CliError(f"cannot listen on {args.host}:{args.port}") from None
        if not server.started:
            raise CliError(f"the server did not start on {args.host}:{args.port}")
        return 0
    finally:
        await pool.close()


def _runner():
    """``uvloop.run`` when uvloop is installed (a faster event loop), else ``asyncio.run``."""
    try:
        import uvloop

        return uvloop.run
    except (ImportError, AttributeError):
        import asyncio

        return asyncio.run


def _choice(module: str, fallback: str) -> str:
    """``module`` when it is installed (httptools: a faster HTTP parser), else ``fallback``."""
    import importlib.util

    return module if importlib.util.find_spec(module) else fallback
