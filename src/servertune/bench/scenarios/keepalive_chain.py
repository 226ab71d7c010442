"""Keep-alive chain: 502s from nginx's upstream pool when gunicorn closes first, and after `check`'s fix.

The stack `servertune check` flags in docs/recipes/keepalive-chain.md: a load balancer (the
client here) -> nginx with a pool of idle upstream connections (`keepalive 16`, nginx's 60 s
`keepalive_timeout`) -> gunicorn running uvicorn's worker with gunicorn's default 2 s
`keepalive`. gunicorn closes a pooled connection after 2 s idle; nginx still holds it for up to
60 s, and a request it sends while the close is in flight gets a reset: for a POST (never
retried by nginx) the client sees a 502. The fixed stack is the one `check` asks for
(`keepalive = 65`, nginx's `keepalive_timeout 60s` in the upstream, `keepalive_timeout 65s` to
the load balancer, `proxy_read_timeout 35s`): gunicorn never closes a connection nginx may reuse.

Real nginx and gunicorn run on 127.0.0.1 with a relay between them that delivers gunicorn's
close DELAY_S late (servertune.bench.delay_relay): on loopback a close arrives in microseconds,
between two hosts it takes a network round trip. Rounds of concurrent POSTs pause for just
about gunicorn's keep-alive (the race window, as in `bench idle-race`), so every round reuses
connections at the moment gunicorn closes them. Both stacks get the same rounds and pauses.
"""

from __future__ import annotations

import http.client
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["CONFIGS", "DELAY_S", "app", "render", "run"]

#: A round trip between two hosts in one region: how long gunicorn's close is in flight.
DELAY_S = 0.002
#: gunicorn's default keep-alive (docs.gunicorn.org settings: keepalive = 2).
GUNICORN_DEFAULT_KEEPALIVE_S = 2.0
#: Pauses end from 10 ms before to 30 ms after gunicorn's close: the race window.
EDGE = (-0.010, 0.030)
#: Each request must finish within this (a lost request must not stall the run).
CLIENT_TIMEOUT_S = 5.0
#: The issue's target for the fixed stack.
MAX_FIXED_ERRORS = 0
CONFIGS = ("broken", "fixed")

GUNICORN = {
    "broken": """wsgi_app = "servertune.bench.scenarios.keepalive_chain:app"
bind = "127.0.0.1:{app_port}"
workers = 1
worker_class = "uvicorn.workers.UvicornWorker"
""",
    "fixed": """wsgi_app = "servertune.bench.scenarios.keepalive_chain:app"
bind = "127.0.0.1:{app_port}"
workers = 1
worker_class = "uvicorn.workers.UvicornWorker"
keepalive = 65
timeout = 30
""",
}
NGINX = {
    "broken": """events {{
}}

http {{
    upstream app {{
        server 127.0.0.1:{upstream_port};
        keepalive 16;
    }}

    server {{
        listen 127.0.0.1:{listen_port};

        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
""",
    "fixed": """events {{
}}

http {{
    keepalive_timeout 65s;

    upstream app {{
        server 127.0.0.1:{upstream_port};
        keepalive 16;
        keepalive_timeout 60s;
    }}

    server {{
        listen 127.0.0.1:{listen_port};

        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 35s;
        }}
    }}
}}
""",
}


def render(config: str, listen_port: int, upstream_port: int, app_port: int) -> dict[str, str]:
    """The two files of a stack: nginx.conf and gunicorn.conf.py."""
    return {
        "nginx.conf": NGINX[config].format(listen_port=listen_port, upstream_port=upstream_port),
        "gunicorn.conf.py": GUNICORN[config].format(app_port=app_port),
    }


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """ASGI: read the body, answer with the client port of this upstream connection."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    body = str((scope.get("client") or ("", 0))[1]).encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass(frozen=True)
class Load:
    """How many concurrent POSTs per round, and how many rounds."""

    threads: int
    rounds: int


FULL = Load(threads=16, rounds=15)
QUICK = Load(threads=4, rounds=3)


def _post(port: int) -> tuple[str, str]:
    """One POST through nginx on a new client connection: (outcome, upstream port seen)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT_S)
    try:
        connection.request(
            "POST", "/orders", body=b"item=1", headers={"Content-Type": "text/plain"}
        )
        response = connection.getresponse()
        body = response.read().decode(errors="replace")
        return (str(response.status), body if response.status == 200 else "")
    except (OSError, http.client.HTTPException) as error:
        return (type(error).__name__, "")
    finally:
        connection.close()


def measure(config: str, load: Load, seed: int, progress: bool) -> dict[str, Any]:
    """Start the stack, run the rounds, stop it; count outcomes and upstream connections."""
    from servertune.bench.servers import Stack, free_port, tool_path
    from servertune.check import LOAD_BALANCERS, check_files
    from servertune.machine import Machine

    gaps = [
        GUNICORN_DEFAULT_KEEPALIVE_S + random.Random(seed * 1000 + n).uniform(*EDGE)
        for n in range(load.rounds)
    ]
    outcomes: dict[str, int] = {}
    upstream_ports: set[str] = set()
    lock = threading.Lock()
    with Stack(label="keepalive-chain") as stack:
        listen, upstream, app_port = free_port(), free_port(), free_port()
        while len({listen, upstream, app_port}) < 3:
            upstream, app_port = free_port(), free_port()
        # `check` reads the stack as deployed, nginx straight to gunicorn; the relay that
        # stands in for the network between them is the bench's, not the user's.
        check_dir = stack.dir / "as-deployed"
        check_dir.mkdir()
        for name, text in render(config, listen, app_port, app_port).items():
            (check_dir / name).write_text(text)
        findings = check_files(
            [check_dir / "nginx.conf", check_dir / "gunicorn.conf.py"],
            lb=LOAD_BALANCERS["aws-alb"],
            machine=Machine(cores=1),
        ).findings
        for name, text in render(config, listen, upstream, app_port).items():
            (stack.dir / name).write_text(text)
        for temp in ("client_body_temp", "proxy_temp"):
            (stack.dir / temp).mkdir()
        stack.start(
            "gunicorn",
            "gunicorn",
            [tool_path("gunicorn"), "-c", str(stack.dir / "gunicorn.conf.py")],
            ports=[app_port],
        )
        stack.start(
            "relay",
            "relay",
            [
                sys.executable,
                "-m",
                "servertune.bench.delay_relay",
                str(upstream),
                str(app_port),
                str(DELAY_S),
            ],
            ports=[upstream],
        )
        nginx_argv = [
            tool_path("nginx"), "-p", f"{stack.dir}/", "-c", str(stack.dir / "nginx.conf"),
            "-e", str(stack.dir / "error.log"), "-g", f"daemon off; pid {stack.dir}/nginx.pid;",
        ]  # fmt: skip
        stack.start("nginx", "nginx", nginx_argv, ports=[listen])
        barrier = threading.Barrier(load.threads)

        def worker() -> None:
            for n in range(load.rounds):
                try:
                    barrier.wait(timeout=CLIENT_TIMEOUT_S * 2)
                except threading.BrokenBarrierError:
                    return
                outcome, port = _post(listen)
                with lock:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                    if port:
                        upstream_ports.add(port)
                time.sleep(gaps[n])

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(load.threads)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        deadline = started + load.rounds * (max(gaps) + CLIENT_TIMEOUT_S * 2) + 10
        for n, thread in enumerate(threads):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            if progress and n == 0:
                print(f"keepalive-chain: {config} done", file=sys.stderr)
        stopped_early = any(t.is_alive() for t in threads)
        elapsed = time.monotonic() - started
    servers = stack.record()  # after the `with`: every server is stopped by now
    requests = sum(outcomes.values())
    ok = outcomes.get("200", 0)
    return {
        "config": config,
        "check_findings": len(findings),
        "requests": requests,
        "ok": ok,
        "502": outcomes.get("502", 0),
        "errors": requests - ok,
        "error_pct": round(100 * (requests - ok) / requests, 2) if requests else None,
        "upstream_connections": len(upstream_ports),
        "seconds": round(elapsed, 1),
        "outcomes": outcomes,
        "timed_out": stopped_early,
        "servers": servers,
    }


def run(options: BenchOptions) -> Report:
    """Both stacks under the same rounds: errors (502s and resets) and connections opened."""
    load = QUICK if options.quick else FULL
    rows: list[dict[str, Any]] = []
    servers: list[dict[str, Any]] = []
    notes: list[str] = []
    for repeat in range(options.repeat):
        for config in CONFIGS:
            if options.progress:
                print(f"keepalive-chain: {config} run {repeat + 1}", file=sys.stderr)
            row = measure(config, load, repeat, options.progress)
            servers.extend(row.pop("servers"))
            if row.pop("timed_out"):
                notes.append(f"{config}: load threads hit their deadline")
            rows.append(row)
    fixed_errors = sum(r["errors"] for r in rows if r["config"] == "fixed")
    broken_errors = sum(r["errors"] for r in rows if r["config"] == "broken")
    notes.append(
        f"{load.threads} concurrent POSTs per round, {load.rounds} rounds, pauses of "
        f"{GUNICORN_DEFAULT_KEEPALIVE_S + EDGE[0]:g}-{GUNICORN_DEFAULT_KEEPALIVE_S + EDGE[1]:g} s "
        f"(gunicorn's default keep-alive); gunicorn's close reaches nginx {DELAY_S * 1000:g} ms late "
        "(a round trip between two hosts); errors = 502s + resets + timeouts seen by the client; "
        "upstream_connections = distinct nginx -> gunicorn connections that answered"
    )
    return Report(
        scenario="keepalive-chain",
        runs=rows,
        ratios={"errors broken - fixed": float(broken_errors - fixed_errors)},
        targets=[
            Target("errors with check's fix", float(fixed_errors), "<=", MAX_FIXED_ERRORS),
        ],
        notes=notes,
        servers=servers,
    )
