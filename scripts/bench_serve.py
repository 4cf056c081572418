"""``tabla bench serve``: requests per second for 1-ply ``best`` over HTTP beside ``tabla engine``.

In one run, on a fixed seeded set of contact positions each with a roll (the set of
``tabla bench search``), round by round:

* the protocol: the requests one after another through a ``tabla engine`` subprocess
  (each reply read before the next request), and pipelined;
* HTTP, one client: the same requests as ``POST /best`` to a ``tabla serve`` subprocess
  over one keep-alive connection, each reply read before the next request;
* HTTP, several clients: ``--clients`` keep-alive connections at once.

Every HTTP reply must be 200 with the play the protocol chose. The ratio
``http_one_client / protocol`` is the figure the issue asks for (at least 0.5).

With ``--load-clients N --load-seconds S`` it then runs a bounded load on localhost: N
connections sending 1-ply requests for S seconds while one more client sends a rollout
far over the server's ``--timeout`` every few seconds (those answer 503 on purpose). It
counts every other failure, and reads the resident memory of the server and its workers
when idle before, at the peak, and once the load is over.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

import orjson

SLOW_REQUEST = {"cmd": "rollout", "position_id": "4HPwATDgc/ABMA", "trials": 10_000_000}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positions", type=int, default=1000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of fresh positions (totals are summed)")
    parser.add_argument("--clients", type=int, default=8, help="connections of the several-clients timing")
    parser.add_argument("--workers", type=int, default=2, help="the server's search workers")
    parser.add_argument("--timeout", type=float, default=3.0, help="the server's time limit per request, seconds")
    parser.add_argument("--load-clients", type=int, default=0, help="connections of the load phase (0 = no load phase)")
    parser.add_argument("--load-seconds", type=float, default=20.0, help="length of the load phase")
    parser.add_argument("--serve-args", default="", help="more options for tabla serve, e.g. '--spin-us 1000'")
    parser.add_argument("--model", default=None, help="model file; default: the shipped model")
    parser.add_argument("--no-fallback", action="store_true",
                        help="fail when the model is missing instead of timing a random-weight net of the same shape")


# --------------------------------------------------------------------------- HTTP clients
def http_request(path: str, body: bytes) -> bytes:
    return (b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (path.encode(), len(body)) + body)


class HttpConnection:
    """One keep-alive HTTP/1.1 connection (a minimal client: the server is what is timed)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")

    def post(self, raw: bytes) -> tuple[int, bytes]:
        self.sock.sendall(raw)
        return read_response(self.file.readline, self.file.read)

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def read_response(readline, read) -> tuple[int, bytes]:
    status = int(readline().split()[1])
    length = 0
    while (h := readline()) not in (b"\r\n", b""):
        if h[:15].lower() == b"content-length:":
            length = int(h[15:])
    return status, read(length)


async def _aread_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    status = int((await reader.readline()).split()[1])
    length = 0
    while (h := await reader.readline()) not in (b"\r\n", b""):
        if h[:15].lower() == b"content-length:":
            length = int(h[15:])
    return status, await reader.readexactly(length)


async def _client(port: int, raws: list[bytes], out: list, stop: float | None = None) -> None:
    """Send ``raws`` one at a time on one connection (in a loop until ``stop``), appending
    ``(status, body)`` to ``out``; a broken connection appends ``(0, reason)``."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        out.append((0, str(exc).encode()))
        return
    try:
        k = 0
        while True:
            if stop is None and k == len(raws) or stop is not None and time.monotonic() >= stop:
                break
            writer.write(raws[k % len(raws)])
            out.append(await _aread_response(reader))
            k += 1
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
        out.append((0, repr(exc).encode()))
    finally:
        writer.close()


def several_clients(port: int, raws: list[bytes], clients: int) -> tuple[float, list[tuple[int, bytes]]]:
    """Seconds for ``raws`` split over ``clients`` connections at once, and the replies."""
    parts = [raws[i::clients] for i in range(clients)]
    outs: list[list] = [[] for _ in parts]

    async def main() -> None:
        await asyncio.gather(*(_client(port, p, o) for p, o in zip(parts, outs)))

    t = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - t, [r for o in outs for r in o]


# --------------------------------------------------------------------------- the server
class ServeProcess:
    """``tabla serve`` on a free local port."""

    def __init__(self, model: str | None, workers: int, timeout: float, extra: list[str] = ()) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [sys.executable, "-m", "scripts.tabla", "serve", "--port", str(self.port), "--workers", str(workers),
               "--timeout", str(timeout), *extra]
        if model:
            cmd += ["--model", model]
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL)
        end = time.monotonic() + 300
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("tabla serve exited before it was ready")
            try:
                self.health()
                return
            except OSError:
                if time.monotonic() > end:
                    raise RuntimeError("tabla serve did not start within 300 s") from None
                time.sleep(0.3)

    def get(self, path: str) -> dict:
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path.encode())
            f = s.makefile("rb")
            return json.loads(read_response(f.readline, f.read)[1])

    def health(self) -> dict:
        return self.get("/health")

    def rss_mb(self) -> float:
        """Resident memory of the server and its workers, in MiB."""
        return sum(rss_kib(p) for p in [self.proc.pid, *self.health()["pids"]]) / 1024

    def wait_idle(self, timeout: float = 300) -> dict:
        end = time.monotonic() + timeout
        while (h := self.health())["idle"] < h["workers"] and time.monotonic() < end:
            time.sleep(0.2)
        return h

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


# --------------------------------------------------------------------------- load
@dataclass
class LoadResult:
    seconds: float
    clients: int
    ok: int = 0
    deliberate_503: int = 0
    failures: list[str] = field(default_factory=list)
    idle_mb: float = 0.0
    peak_mb: float = 0.0
    after_mb: float = 0.0

    @property
    def memory_back(self) -> bool:
        """After the load the server and its workers hold no more than 5% (and 8 MiB) over idle."""
        return self.after_mb <= self.idle_mb * 1.05 + 8


def load(server: ServeProcess, raws: list[bytes], clients: int, seconds: float, slow_every: float = 5.0) -> LoadResult:
    """``clients`` connections sending ``raws`` for ``seconds``, one client sending a slow
    request every ``slow_every`` seconds (0 = none); memory read idle, at peak and after."""
    res = LoadResult(seconds=seconds, clients=clients)
    server.wait_idle()
    res.idle_mb = res.peak_mb = server.rss_mb()
    outs: list[list] = [[] for _ in range(clients)]
    slow_out: list = []

    async def slow_client(stop: float) -> None:
        raw = http_request("/rollout", orjson.dumps(SLOW_REQUEST))
        while time.monotonic() + slow_every < stop:
            await _client(server.port, [raw], slow_out)
            await asyncio.sleep(slow_every)

    async def watch(stop: float) -> None:
        while time.monotonic() < stop:
            await asyncio.sleep(0.5)
            res.peak_mb = max(res.peak_mb, await asyncio.to_thread(server.rss_mb))

    async def main() -> None:
        stop = time.monotonic() + seconds
        tasks = [_client(server.port, raws[i::clients] or raws, outs[i], stop) for i in range(clients)]
        if slow_every > 0:
            tasks.append(slow_client(stop))
        await asyncio.gather(watch(stop), *tasks)

    asyncio.run(main())
    for status, body in (r for o in outs for r in o):
        if status == 200:
            res.ok += 1
        else:
            res.failures.append(f"{status}: {body[:120]!r}")
    for status, body in slow_out:
        if status == 503:
            res.deliberate_503 += 1
        else:
            res.failures.append(f"slow request answered {status}: {body[:120]!r}")
    server.wait_idle()
    time.sleep(1.0)
    res.after_mb = server.rss_mb()
    return res


# --------------------------------------------------------------------------- run
def run(args: argparse.Namespace) -> int:
    from scripts.bench_common import bench_evaluator
    from scripts.bench_search import PipeEngine, contact_set, requests

    _, model_path, described = bench_evaluator(args.model, not args.no_fallback)
    n, rounds = args.positions, args.rounds
    boards, dice = contact_set(args.seed, n * rounds)
    lines = requests(boards, dice)
    engine = PipeEngine(model_path)
    server = ServeProcess(model_path, args.workers, args.timeout, args.serve_args.split())
    fig: dict = {"model": described, "positions": n, "rounds": rounds, "clients": args.clients,
                 "workers": args.workers}
    try:
        warm = lines[: min(50, len(lines))]
        engine.sequential(warm)
        conn = HttpConnection(server.port)
        for line in warm:
            conn.post(http_request("/best", line.encode()))
        t_pipe = t_pipelined = t_one = t_many = 0.0
        failures = 0
        per_round = []
        for r in range(rounds):
            chunk = lines[r * n:(r + 1) * n]
            raws = [http_request("/best", line.encode()) for line in chunk]
            pdt, expected = protocol_sequential(engine, chunk)
            t_pipe += pdt
            dt, bad = engine.pipelined(chunk)
            t_pipelined += dt
            failures += bad
            t = time.perf_counter()
            replies = [conn.post(raw) for raw in raws]
            one = time.perf_counter() - t
            t_one += one
            failures += _check(replies, expected)
            dt, many = several_clients(server.port, raws, args.clients)
            t_many += dt
            failures += sum(status != 200 for status, _ in many)
            per_round.append(round(pdt / one, 4))  # (n / one) / (n / pdt)
        conn.close()
        total = n * rounds
        fig.update({
            "protocol_per_s": round(total / t_pipe, 1),
            "protocol_pipelined_per_s": round(total / t_pipelined, 1),
            "http_one_client_per_s": round(total / t_one, 1),
            "http_several_clients_per_s": round(total / t_many, 1),
            "failures": failures,
            "ratio_http_one_client_vs_protocol_by_round": per_round,
        })
        fig["ratio_http_one_client_vs_protocol"] = round(fig["http_one_client_per_s"] / fig["protocol_per_s"], 4)
        fig["ratio_http_several_vs_protocol"] = round(fig["http_several_clients_per_s"] / fig["protocol_per_s"], 4)
        if args.load_clients:
            raws = [http_request("/best", line.encode()) for line in lines]
            res = load(server, raws, args.load_clients, args.load_seconds)
            fig["load"] = {"clients": res.clients, "seconds": res.seconds, "ok": res.ok,
                           "requests_per_s": round(res.ok / res.seconds, 1), "deliberate_503": res.deliberate_503,
                           "failures": len(res.failures), "first_failures": res.failures[:5],
                           "idle_mb": round(res.idle_mb, 1), "peak_mb": round(res.peak_mb, 1),
                           "after_mb": round(res.after_mb, 1), "memory_back_to_idle": res.memory_back}
    finally:
        engine.close()
        server.close()
    if args.json:
        print(json.dumps(fig))
    else:
        _print(fig)
    return 0 if fig["failures"] == 0 and not fig.get("load", {}).get("failures") else 1


def protocol_sequential(engine, lines: list[str]) -> tuple[float, list[dict]]:
    """Seconds for the lines one after another through ``tabla engine``, and its replies."""
    replies = []
    t = time.perf_counter()
    for line in lines:
        engine.proc.stdin.write(line + "\n")
        engine.proc.stdin.flush()
        replies.append(engine.proc.stdout.readline())
    dt = time.perf_counter() - t
    return dt, [json.loads(r) for r in replies]


def _check(replies: list[tuple[int, bytes]], expected: list[dict]) -> int:
    """HTTP replies that are not 200 with the protocol's reply."""
    return sum(status != 200 or orjson.loads(body) != want for (status, body), want in zip(replies, expected))


def _print(fig: dict) -> None:
    print(f"tabla bench serve: 1-ply best, {fig['positions']} requests x {fig['rounds']} rounds ({fig['model']}), "
          f"server with {fig['workers']} workers")
    print(f"  tabla engine (one request at a time) {fig['protocol_per_s']:>9.1f} /s")
    print(f"  tabla engine (pipelined)             {fig['protocol_pipelined_per_s']:>9.1f} /s")
    print(f"  HTTP, one keep-alive client          {fig['http_one_client_per_s']:>9.1f} /s   "
          f"{fig['ratio_http_one_client_vs_protocol']:.3f} x the protocol (required >= 0.5; by round "
          f"{', '.join(f'{x:.3f}' for x in fig['ratio_http_one_client_vs_protocol_by_round'])})")
    print(f"  HTTP, {fig['clients']} keep-alive clients            {fig['http_several_clients_per_s']:>9.1f} /s   "
          f"{fig['ratio_http_several_vs_protocol']:.3f} x the protocol")
    print(f"  failed requests: {fig['failures']}")
    if "load" in fig:
        ld = fig["load"]
        print(f"load: {ld['clients']} clients for {ld['seconds']:g} s: {ld['ok']} answered ({ld['requests_per_s']}/s), "
              f"{ld['deliberate_503']} deliberate 503s, {ld['failures']} other failures")
        print(f"  memory of server + workers: idle {ld['idle_mb']} MiB, peak {ld['peak_mb']} MiB, after "
              f"{ld['after_mb']} MiB ({'back to idle' if ld['memory_back_to_idle'] else 'NOT back to idle'})")
