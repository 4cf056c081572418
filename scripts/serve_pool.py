"""The search workers of ``tabla serve``: processes that speak JSON lines, off the event loop.

Each worker is a ``python -m scripts.serve_worker`` process (the engine protocol on its
pipes, the model loaded once at its start). A request takes an idle worker, writes one
line and awaits one line back; the event loop only waits on the pipe, so a slow 2-ply
search holds one worker and never the loop. A request that is not answered within its
time limit (waiting for a worker included) raises :class:`PoolTimeout`; a worker that was
searching for it is killed and a fresh one started in its place, so the pool keeps its
size and the server goes on.

While a request is the only one in flight, the loop polls the worker's pipe for up to
``spin_us`` microseconds before it sleeps: a process wake-up costs tens of microseconds on
a virtual machine, as much as a 1-ply search (see ``tabla bench serve``).
"""
from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

log = logging.getLogger("tabla.serve")

READY_TIMEOUT = 300.0
"""Seconds a new worker may take to load its model and warm up."""
RESPAWN_DELAY = 5.0
"""Seconds between attempts to start a worker after one failed to start."""


class PoolTimeout(Exception):
    """The request was not answered within its time limit."""


class WorkerError(Exception):
    """A worker could not be started, or stopped while answering."""


def worker_command(model: str | None, heuristic: bool, spin_us: int) -> list[str]:
    """The command line of one worker."""
    cmd = [sys.executable, "-m", "scripts.serve_worker", "--spin-us", str(spin_us)]
    if heuristic:
        cmd.append("--heuristic")
    elif model:
        cmd += ["--model", model]
    return cmd


class Worker:
    """One worker process and the buffered reading end of its output pipe.

    The pipe is watched by the event loop for the worker's whole life (one callback fills
    the buffer); a request waits on a future that the callback resolves at a newline.
    """

    def __init__(self, cmd: list[str]) -> None:
        root = str(Path(__file__).resolve().parent.parent)  # this checkout's packages first
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root, env=env)
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self._buf = b""
        self._eof = False
        self._waiter: asyncio.Future | None = None
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._out, self._on_readable)

    def _read_some(self) -> bool:
        """Read what the pipe holds; True when something (or the end) came."""
        try:
            chunk = os.read(self._out, 1 << 20)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if chunk:
            self._buf += chunk
        else:
            self._eof = True
        return True

    def _on_readable(self) -> None:
        self._read_some()
        w = self._waiter
        if w is not None and not w.done() and (self._eof or b"\n" in self._buf):
            w.set_result(None)

    async def ready(self) -> None:
        """Wait for the worker's ready line; WorkerError with its reason when it fails."""
        import orjson

        try:
            line = await self.read_line(time.monotonic() + READY_TIMEOUT, 0)
        except (PoolTimeout, WorkerError) as exc:
            raise WorkerError(f"the search worker did not start ({exc})") from None
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            msg = {"error": f"the search worker wrote {line[:80]!r}"}
        if not isinstance(msg, dict) or not msg.get("ready"):
            raise WorkerError(msg.get("error") or "the search worker did not start")

    async def ask(self, line: bytes, deadline: float, spin_us: int) -> bytes:
        """Send one request line, return the reply line (PoolTimeout past ``deadline``)."""
        try:
            os.write(self._in, line)
        except OSError as exc:
            raise WorkerError(f"the search worker stopped ({exc.strerror})") from None
        return await self.read_line(deadline, spin_us)

    async def read_line(self, deadline: float, spin_us: int) -> bytes:
        spin_end = time.perf_counter() + spin_us / 1e6
        while True:
            i = self._buf.find(b"\n")
            if i >= 0:
                line, self._buf = self._buf[: i + 1], self._buf[i + 1 :]
                return line
            if self._eof:
                raise WorkerError("the search worker stopped")
            if time.perf_counter() < spin_end:
                if not self._read_some():
                    os.sched_yield()
                continue
            await self._wait(deadline)

    async def _wait(self, deadline: float) -> None:
        fut = self._waiter = self._loop.create_future()
        timer = self._loop.call_later(max(0.0, deadline - time.monotonic()),
                                      lambda: fut.done() or fut.set_exception(PoolTimeout()))
        try:
            await fut
        finally:
            timer.cancel()
            self._waiter = None

    def _unwatch(self) -> None:
        try:
            self._loop.remove_reader(self._out)
        except (ValueError, OSError, RuntimeError):
            pass

    def close(self) -> None:
        """Close the input (the worker exits at end of input); kill it if it lingers."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        self._unwatch()
        self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    @property
    def pid(self) -> int:
        return self.proc.pid


class WorkerPool:
    """``size`` workers; :meth:`request` sends one line to an idle one."""

    def __init__(self, cmd: list[str], size: int, spin_us: int = 500) -> None:
        if size < 1:
            raise ValueError(f"--workers must be at least 1, got {size}")
        self.cmd = cmd
        self.size = size
        self.spin_us = spin_us
        self.in_flight = 0
        self.restarts = 0
        self._idle: asyncio.Queue[Worker] = asyncio.Queue()
        self._all: set[Worker] = set()
        self._tasks: set[asyncio.Task] = set()
        self._closed = False

    async def start(self) -> None:
        """Start every worker and wait until each is ready (WorkerError if one fails)."""
        workers = [Worker(self.cmd) for _ in range(self.size)]
        self._all.update(workers)
        results = await asyncio.gather(*(w.ready() for w in workers), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            await self.close()
            raise WorkerError(str(errors[0]))
        for w in workers:
            self._idle.put_nowait(w)

    def pids(self) -> list[int]:
        return sorted(w.pid for w in self._all)

    @property
    def idle(self) -> int:
        """Workers ready for a request now."""
        return self._idle.qsize()

    async def request(self, line: bytes, timeout: float) -> bytes:
        """The reply line to ``line`` (ending in a newline) within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        if self._idle.qsize():
            worker = self._idle.get_nowait()  # the usual case: no task, no timer
        else:
            try:
                worker = await asyncio.wait_for(self._idle.get(), timeout)
            except asyncio.TimeoutError:
                raise PoolTimeout() from None
        self.in_flight += 1
        try:
            reply = await worker.ask(line, deadline, self.spin_us if self.in_flight == 1 else 0)
        except BaseException:  # timed out, stopped, or cancelled mid-request: never reuse it
            self._replace(worker)
            raise
        finally:
            self.in_flight -= 1
        self._idle.put_nowait(worker)
        return reply

    def _replace(self, worker: Worker) -> None:
        self._all.discard(worker)
        worker.kill()
        if not self._closed:
            self.restarts += 1
            task = asyncio.get_running_loop().create_task(self._respawn())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _respawn(self) -> None:
        while not self._closed:
            w = Worker(self.cmd)
            self._all.add(w)
            try:
                await w.ready()
            except WorkerError as exc:
                self._all.discard(w)
                w.kill()
                log.error("%s; trying again in %.0f s", exc, RESPAWN_DELAY)
                await asyncio.sleep(RESPAWN_DELAY)
                continue
            if self._closed:
                w.close()
            else:
                self._idle.put_nowait(w)
            return

    async def close(self) -> None:
        """Stop every worker (their input is closed; stragglers are killed)."""
        self._closed = True
        for t in list(self._tasks):
            t.cancel()
        workers, self._all = list(self._all), set()
        for w in workers:
            w._unwatch()
        await asyncio.gather(*(asyncio.to_thread(w.close) for w in workers))
