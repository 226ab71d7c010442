"""Self-contained worker for `servertune bench parallel`: standard library only, any Python 3.8+.

The scenario runs this file under the interpreter it measures (`--python python3.13`), which
does not have servertune installed, so nothing here imports servertune. Two commands:

    serve --port P --delay-ms D --body-kb K
                                     an HTTP server on 127.0.0.1:P that answers every GET after
                                     D ms with K KiB, until it is signalled (the harness's Stack
                                     starts and stops it like any server).
    run --task T --model M ...       runs task T (fib, sleep, fetch) COUNT times under model M
                                      (loop, asyncio, threads, processes, subinterpreters) and
                                      prints {"wall_s": ..., "spans": [[start, end], ...]} or
                                      {"skipped": reason} as one JSON line.

Each model runs in a worker process of its own, so a sub-interpreter that crashes the
interpreter (some extension modules do) costs one column, not the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# One source per task, run as-is in this interpreter and, as text, inside sub-interpreters:
# a sub-interpreter shares no objects with its creator, only the code it is given.
TASK_SOURCE = {
    "fib": """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def task():
    fib({fib_n})
""",
    "sleep": """
import time

def task():
    time.sleep({sleep_s})
""",
    # A raw HTTP/1.0 GET over a socket: http.client pulls in modules that are not safe in a
    # sub-interpreter on 3.12/3.13 (importing it there aborted the process in our runs).
    "fetch": """
import socket

def task():
    conn = socket.create_connection(("127.0.0.1", {port}), timeout=30)
    try:
        conn.sendall(b"GET / HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
        while conn.recv(65536):
            pass
    finally:
        conn.close()
""",
}

ASYNC_TASK_SOURCE = {
    # No await inside: the event loop runs each coroutine to the end before starting the next.
    "fib": """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

async def task():
    fib({fib_n})
""",
    "sleep": """
import asyncio

async def task():
    await asyncio.sleep({sleep_s})
""",
    "fetch": """
import asyncio

async def task():
    reader, writer = await asyncio.open_connection("127.0.0.1", {port})
    writer.write(b"GET / HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
    await writer.drain()
    while await reader.read(65536):
        pass
    writer.close()
    await writer.wait_closed()
""",
}

# What each sub-interpreter runs: the task, then one line "index start end" to a pipe. Lines
# are far shorter than PIPE_BUF, so concurrent writes never interleave.
SUB_TEMPLATE = """
import os, time
{source}
_start = time.monotonic()
task()
os.write({fd}, ("%d %r %r\\n" % ({index}, _start, time.monotonic())).encode())
"""


def _task(source: str) -> Callable[[], Any]:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    task: Callable[[], Any] = namespace["task"]
    return task


def _read_spans(fd: int, count: int) -> list[list[float]]:
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    spans: list[list[float]] = [[0.0, 0.0]] * count
    for line in data.decode().splitlines():
        index, start, end = line.split()
        spans[int(index)] = [float(start), float(end)]
    return spans


def run_loop(source: str, count: int) -> list[list[float]]:
    task = _task(source)
    spans = []
    for _ in range(count):
        start = time.monotonic()
        task()
        spans.append([start, time.monotonic()])
    return spans


def run_threads(source: str, count: int) -> list[list[float]]:
    task = _task(source)
    spans: list[list[float]] = [[0.0, 0.0]] * count

    def one(index: int) -> None:
        start = time.monotonic()
        task()
        spans[index] = [start, time.monotonic()]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return spans


def run_asyncio(source: str, count: int) -> list[list[float]]:
    import asyncio

    task = _task(source)
    spans: list[list[float]] = [[0.0, 0.0]] * count

    async def one(index: int) -> None:
        start = time.monotonic()
        await task()
        spans[index] = [start, time.monotonic()]

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(count)))

    asyncio.run(main())
    return spans


def _child(index: int, source: str, fd: int) -> None:
    task = _task(source)
    start = time.monotonic()
    task()
    os.write(fd, f"{index} {start!r} {time.monotonic()!r}\n".encode())


def run_processes(source: str, count: int) -> list[list[float]]:
    import multiprocessing

    # fork, as multiprocessing.Process did by default on Linux through 3.13 (the published comparison's setup):
    # explicit, so 3.14's forkserver default does not change what is measured.
    context = multiprocessing.get_context("fork")
    read_fd, write_fd = os.pipe()
    procs = [context.Process(target=_child, args=(i, source, write_fd)) for i in range(count)]
    try:
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        os.close(write_fd)
    try:
        if any(proc.exitcode != 0 for proc in procs):
            raise RuntimeError(f"a child process failed: exit codes {[p.exitcode for p in procs]}")
        return _read_spans(read_fd, count)
    finally:
        os.close(read_fd)


def subinterpreter_runner() -> tuple[Callable[[str], None] | None, str]:
    """A function running code in a fresh sub-interpreter with its own GIL, or why there is none."""
    try:
        from concurrent import interpreters  # type: ignore[attr-defined,unused-ignore]  # 3.14+

        def run_314(code: str) -> None:
            interp = interpreters.create()
            try:
                interp.exec(code)
            finally:
                interp.close()

        return run_314, "concurrent.interpreters"
    except ImportError:
        pass
    try:
        import _interpreters  # type: ignore[import-not-found,unused-ignore]  # 3.13

        def run_313(code: str) -> None:
            interp = _interpreters.create()
            try:
                failure = _interpreters.exec(interp, code)
                if failure is not None:
                    raise RuntimeError(f"sub-interpreter raised: {failure}")
            finally:
                _interpreters.destroy(interp)

        return run_313, "_interpreters"
    except ImportError:
        pass
    try:
        import _xxsubinterpreters  # type: ignore[import-not-found,unused-ignore]  # 3.12

        def run_312(code: str) -> None:
            interp = _xxsubinterpreters.create()
            try:
                _xxsubinterpreters.run_string(interp, code)
            finally:
                _xxsubinterpreters.destroy(interp)

        if sys.version_info >= (3, 12):  # 3.8-3.11 have the module, but one GIL for all
            return run_312, "_xxsubinterpreters"
    except ImportError:
        pass
    version = ".".join(map(str, sys.version_info[:2]))
    return None, (
        f"Python {version} has no sub-interpreters with their own GIL "
        "(3.12 _xxsubinterpreters, 3.13 _interpreters, 3.14 concurrent.interpreters)"
    )


def run_subinterpreters(source: str, count: int) -> list[list[float]]:
    runner, _ = subinterpreter_runner()
    assert runner is not None
    read_fd, write_fd = os.pipe()
    errors: list[str] = []

    def one(index: int) -> None:
        code = SUB_TEMPLATE.format(source=source, fd=write_fd, index=index)
        try:
            runner(code)
        except Exception as error:  # reported as the column's failure
            errors.append(f"{type(error).__name__}: {error}")

    # Each sub-interpreter in a thread of its own, as in the published comparison: the threads only wait while
    # the sub-interpreters, each with its own GIL, compute in parallel.
    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    os.close(write_fd)
    try:
        if errors:
            raise RuntimeError(errors[0])
        return _read_spans(read_fd, count)
    finally:
        os.close(read_fd)


MODELS: dict[str, Callable[[str, int], list[list[float]]]] = {
    "loop": run_loop,
    "asyncio": run_asyncio,
    "threads": run_threads,
    "processes": run_processes,
    "subinterpreters": run_subinterpreters,
}


def run(task: str, model: str, count: int, params: dict[str, Any]) -> dict[str, Any]:
    """Run one model once; times are seconds from the start of the run."""
    if model == "subinterpreters":
        runner, reason = subinterpreter_runner()
        if runner is None:
            return {"skipped": reason}
    table = ASYNC_TASK_SOURCE if model == "asyncio" else TASK_SOURCE
    source = table[task].format(**params)
    # Import what the model needs before the clock starts: a server pays that once, not per task.
    if model == "asyncio":
        import asyncio  # noqa: F401
    elif model == "processes":
        import multiprocessing  # noqa: F401
    start = time.monotonic()
    spans = MODELS[model](source, count)
    wall = time.monotonic() - start
    # time.monotonic is CLOCK_MONOTONIC on Linux: one clock for every process on the machine,
    # so spans from child processes and sub-interpreters share this run's time axis.
    return {
        "wall_s": wall,
        "spans": [[s - start, e - start] for s, e in spans],
        "python": sys.version.split()[0],
    }


class _Handler(BaseHTTPRequestHandler):
    delay_s = 0.0
    body = b""

    def do_GET(self) -> None:
        time.sleep(self.delay_s)  # the network and the remote service, as seen by the client
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    # The stdlib's listen backlog of 5 drops SYNs when ten clients connect at once, and a
    # dropped SYN costs a 1 s retransmit: the benchmark would measure the backlog.
    request_queue_size = 128
    daemon_threads = True


def serve(port: int, delay_ms: float, body_kb: int) -> None:
    """Serve on 127.0.0.1:`port` until a signal ends the process (SIGTERM from the harness)."""
    _Handler.delay_s = delay_ms / 1000
    _Handler.body = b"x" * (body_kb * 1024)
    with _Server(("127.0.0.1", port), _Handler) as server:
        server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servertune-parallel-worker")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve")
    p_serve.add_argument("--port", type=int, required=True)
    p_serve.add_argument("--delay-ms", type=float, required=True)
    p_serve.add_argument("--body-kb", type=int, default=0)
    p_run = sub.add_parser("run")
    p_run.add_argument("--task", choices=sorted(TASK_SOURCE), required=True)
    p_run.add_argument("--model", choices=list(MODELS), required=True)
    p_run.add_argument("--count", type=int, default=10)
    p_run.add_argument("--fib-n", type=int, default=25)
    p_run.add_argument("--sleep-s", type=float, default=0.1)
    p_run.add_argument("--port", type=int, default=0)
    sub.add_parser("probe")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.port, args.delay_ms, args.body_kb)
        return 0
    if args.command == "probe":
        _, reason = subinterpreter_runner()
        print(json.dumps({"python": sys.version.split()[0], "subinterpreters": reason}))
        return 0
    params = {"fib_n": args.fib_n, "sleep_s": args.sleep_s, "port": args.port}
    print(json.dumps(run(args.task, args.model, args.count, params)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
