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
close DELAY_S late (servertune.bench.harness.delay_relay): on loopback a close arrives in microseconds,
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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run

__all__ = ["CONFIGS", "DELAY_S", "SIZES", "KeepaliveChain", "KeepaliveChainSizes", "app", "render"]

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
class KeepaliveChainSizes:
    """How many concurrent POSTs per round, how many rounds, and repeats of each stack."""

    threads: int
    rounds: int
    repeats: int = 1


SIZES = QuickFull(
    quick=KeepaliveChainSizes(threads=4, rounds=3),
    full=KeepaliveChainSizes(threads=16, rounds=15),
)


@dataclass(frozen=True)
class Served:
    """A started stack: the port the client posts to, and what `check` found in its files."""

    listen: int
    check_findings: int


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


class KeepaliveChain(BaseScenario[KeepaliveChainSizes]):
    """Both stacks under the same rounds: errors (502s and resets) and connections opened."""

    name = "keepalive-chain"
    needs = ("gunicorn", "crossplane")
    sizes = SIZES

    def setup(self, run: Run[KeepaliveChainSizes]) -> None:
        """Notes collected while measuring (a load thread that hit its deadline)."""
        self.notes: list[str] = []

    def configs(self, run: Run[KeepaliveChainSizes]) -> Sequence[str]:
        """The stack as commonly deployed, then the one `check` asks for."""
        return CONFIGS

    def start(self, run: Run[KeepaliveChainSizes], config: str) -> Served:
        """Check the stack's files as deployed, then start gunicorn, the relay and nginx."""
        from servertune.bench.harness.ports import free_port
        from servertune.bench.harness.supervision import tool_path
        from servertune.check import LOAD_BALANCERS, check_files
        from servertune.machine import Machine

        stack, name = run.stack, f"{config}-{run.repeat}"
        home = stack.dir / name
        home.mkdir()
        listen, upstream, app_port = free_port(), free_port(), free_port()
        while len({listen, upstream, app_port}) < 3:
            upstream, app_port = free_port(), free_port()
        # `check` reads the stack as deployed, nginx straight to gunicorn; the relay that
        # stands in for the network between them is the bench's, not the user's.
        check_dir = home / "as-deployed"
        check_dir.mkdir()
        for filename, text in render(config, listen, app_port, app_port).items():
            (check_dir / filename).write_text(text)
        findings = check_files(
            [check_dir / "nginx.conf", check_dir / "gunicorn.conf.py"],
            lb=LOAD_BALANCERS["aws-alb"],
            machine=Machine(cores=1),
        ).findings
        for filename, text in render(config, listen, upstream, app_port).items():
            (home / filename).write_text(text)
        for temp in ("client_body_temp", "proxy_temp"):
            (home / temp).mkdir()
        stack.start(
            f"{name}-gunicorn",
            "gunicorn",
            [tool_path("gunicorn"), "-c", str(home / "gunicorn.conf.py")],
            ports=[app_port],
            cwd=home,
        )
        relay_argv = [
            sys.executable, "-m", "servertune.bench.harness.delay_relay",
            str(upstream), str(app_port), str(DELAY_S),
        ]  # fmt: skip
        stack.start(f"{name}-relay", "relay", relay_argv, ports=[upstream], cwd=home)
        nginx_argv = [
            tool_path("nginx"), "-p", f"{home}/", "-c", str(home / "nginx.conf"),
            "-e", str(home / "error.log"), "-g", f"daemon off; pid {home}/nginx.pid;",
        ]  # fmt: skip
        stack.start(f"{name}-nginx", "nginx", nginx_argv, ports=[listen], cwd=home)
        return Served(listen=listen, check_findings=len(findings))

    def measure(
        self, run: Run[KeepaliveChainSizes], config: str, served: Served, level: Level
    ) -> dict[str, Any]:
        """The rounds of concurrent POSTs: outcomes and the upstream connections that answered."""
        size = run.size
        # The same pauses for both stacks in one repeat; other pauses in the next.
        gaps = [
            GUNICORN_DEFAULT_KEEPALIVE_S + random.Random(run.repeat * 1000 + n).uniform(*EDGE)
            for n in range(size.rounds)
        ]
        outcomes: dict[str, int] = {}
        upstream_ports: set[str] = set()
        lock = threading.Lock()
        barrier = threading.Barrier(size.threads)

        def worker() -> None:
            for n in range(size.rounds):
                try:
                    barrier.wait(timeout=CLIENT_TIMEOUT_S * 2)
                except threading.BrokenBarrierError:
                    return
                outcome, port = _post(served.listen)
                with lock:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                    if port:
                        upstream_ports.add(port)
                time.sleep(gaps[n])

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(size.threads)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        deadline = started + size.rounds * (max(gaps) + CLIENT_TIMEOUT_S * 2) + 10
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in threads):
            self.notes.append(f"{config} (run {run.repeat + 1}): load threads hit their deadline")
        elapsed = time.monotonic() - started
        with lock:
            outcomes = dict(outcomes)
            connections = len(upstream_ports)
        requests = sum(outcomes.values())
        ok = outcomes.get("200", 0)
        return {
            "config": config,
            "check_findings": served.check_findings,
            "requests": requests,
            "ok": ok,
            "502": outcomes.get("502", 0),
            "errors": requests - ok,
            "error_pct": round(100 * (requests - ok) / requests, 2) if requests else None,
            "upstream_connections": connections,
            "seconds": round(elapsed, 1),
            "outcomes": outcomes,
        }

    def summarize(self, run: Run[KeepaliveChainSizes], results: Results) -> Report:
        """Median rows; errors summed over every repeat for the ratio and the target."""
        size = run.size
        rows = []
        for config in CONFIGS:
            row = results.median(config)
            totals: dict[str, int] = {}
            for sample in results.rows(config):
                for outcome, count in sample["outcomes"].items():
                    totals[outcome] = totals.get(outcome, 0) + count
            row["outcomes"] = totals
            rows.append(row)
        errors = {c: sum(r["errors"] for r in results.rows(c)) for c in CONFIGS}
        notes = [*self.notes]
        notes.append(
            f"{size.threads} concurrent POSTs per round, {size.rounds} rounds, pauses of "
            f"{GUNICORN_DEFAULT_KEEPALIVE_S + EDGE[0]:g}-{GUNICORN_DEFAULT_KEEPALIVE_S + EDGE[1]:g} s "
            f"(gunicorn's default keep-alive); gunicorn's close reaches nginx {DELAY_S * 1000:g} ms late "
            "(a round trip between two hosts); errors = 502s + resets + timeouts seen by the client; "
            "upstream_connections = distinct nginx -> gunicorn connections that answered"
        )
        if run.repeats > 1:
            notes.append(
                f"{run.repeats} interleaved repeats: rows are medians, outcomes and the ratio and "
                "target count every repeat"
            )
        return Report(
            scenario=self.name,
            runs=rows,
            ratios={"errors broken - fixed": float(errors["broken"] - errors["fixed"])},
            targets=[
                Target("errors with check's fix", float(errors["fixed"]), "<=", MAX_FIXED_ERRORS),
            ],
            notes=notes,
        )
