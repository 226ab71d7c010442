"""The app `bench restart` and the multi-host tests serve: quick GETs, slow GETs, counted POSTs.

`GET /quick` answers after a few ms of waiting, `GET /cpu` after as long, half of it spent on the
CPU (its thread's own CPU time, so a host under a CPU quota serves it more slowly), `GET /slow`
after a slow call, `POST /order?id=X`
writes X to a ledger (with `SERVERTUNE_BENCH_HOST` set every answer names the host in `X-Served-By`) (one line per arrival, one file per process, O_APPEND) before answering: a
POST that arrives twice anywhere (a replay) shows as an id written twice across the ledgers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

#: How long /slow holds its thread (an external call); /quick's own service time.
SLOW_S = float(os.environ.get("SERVERTUNE_BENCH_SLOW_S", "2"))
QUICK_S = float(os.environ.get("SERVERTUNE_BENCH_QUICK_S", "0.005"))
#: Directory of the POST ledgers (unset: POSTs are answered but not counted).
LEDGER_DIR = os.environ.get("SERVERTUNE_BENCH_LEDGER", "")
#: The host's name, sent back as `X-Served-By` (unset: no header): which host answered.
HOST = os.environ.get("SERVERTUNE_BENCH_HOST", "")


def _record(order_id: str) -> None:
    path = os.path.join(LEDGER_DIR, f"{os.getpid()}.ledger")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, order_id.encode("ascii", "replace")[:64] + b"\n")
    finally:
        os.close(fd)


def _spin(cpu_s: float) -> None:
    """Hold the CPU (and the GIL) for `cpu_s` of this thread's CPU time."""
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        pass


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Route by method and path; every answer is 200 with a short body."""
    path = environ.get("PATH_INFO", "/")
    if environ.get("REQUEST_METHOD") == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        environ["wsgi.input"].read(length)
        order_id = environ.get("QUERY_STRING", "").removeprefix("id=")
        if LEDGER_DIR and order_id:
            _record(order_id)
        time.sleep(QUICK_S)
        body = b"created"
    elif path == "/cpu":
        _spin(QUICK_S / 2)
        time.sleep(QUICK_S / 2)
        body = b"ok"
    elif path == "/slow":
        time.sleep(SLOW_S)
        body = b"slow"
    else:
        time.sleep(QUICK_S)
        body = b"ok"
    headers = [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
    if HOST:
        headers.append(("X-Served-By", HOST))
    start_response("200 OK", headers)
    return [body]


def arrivals(ledger_dir: str) -> dict[str, int]:
    """How many times each POST id arrived, over every process's ledger."""
    counts: dict[str, int] = {}
    for name in os.listdir(ledger_dir):
        if name.endswith(".ledger"):
            with open(os.path.join(ledger_dir, name), encoding="ascii", errors="replace") as f:
                for line in f:
                    counts[line.strip()] = counts.get(line.strip(), 0) + 1
    return counts
