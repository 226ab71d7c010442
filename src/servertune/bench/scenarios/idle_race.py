"""Idle-timeout race: errors and connection reuse per HTTP client, library default vs servertune.

The experiment of the keep-alive article (docs/references.md), on a loopback server with a 1 s keep-alive idle timeout (Go-like: it closes
a connection idle for 1 s). Ten threads, each with its own client, pause between requests, in a
cycle of four: just under the timeout (0.99-1.0 s, the race), well inside it (0.1-0.4 s, where a
connection should be reused, twice), and anywhere between (0.4-0.99 s, which straddles the
client's expiry, so the reuse that the safety margin gives up is measured too). Each client runs
with its defaults, with the folk fix the article tried (requests `pool_maxsize=1`, niquests `keepalive_delay` under the timeout), and as
`servertune.http.session(...)`.

Targets: zero errors for every servertune session, and at least 90% of the requests
sent within the idle window reuse a connection. niquests runs under the interpreter of
.venv-niquests (its urllib3-future replaces urllib3), or is reported as not measured.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.versions import dist_version

#: The in-process clients; niquests needs an environment of its own.
IN_PROCESS = ("requests", "httpx", "urllib3")
#: Configurations per client, in table order. "fix" is the folk workaround where one exists.
CONFIGS: dict[str, tuple[str, ...]] = {
    "requests": ("default", "pool_maxsize=1", "servertune"),
    "httpx": ("default", "servertune"),
    "urllib3": ("default", "servertune"),
    "niquests": ("default", "keepalive_delay", "servertune"),
}
#: The issue's targets.
MAX_SERVERTUNE_ERRORS = 0
MIN_REUSE_IN_WINDOW_PCT = 90.0
#: Where to look for the niquests interpreter unless SERVERTUNE_NIQUESTS_PYTHON says.
NIQUESTS_VENV = ".venv-niquests"


@dataclass(frozen=True)
class IdleRaceSizes:
    """How hard to push: the server's idle timeout, the bounded load, and repeats."""

    idle_timeout: float
    threads: int
    per_thread: int
    repeats: int = 1

    @property
    def edge_gap(self) -> tuple[float, float]:
        """Pauses that end just before the server's close: the race (the article's 0.99-1.0 s)."""
        return (0.99 * self.idle_timeout, self.idle_timeout)

    @property
    def short_gap(self) -> tuple[float, float]:
        """Pauses well inside the idle window, where reuse should happen."""
        return (0.1 * self.idle_timeout, 0.4 * self.idle_timeout)

    @property
    def mid_gap(self) -> tuple[float, float]:
        """Pauses between the short ones and the race: across the client's expiry."""
        return (0.4 * self.idle_timeout, 0.99 * self.idle_timeout)

    def gap_range(self, index: int) -> tuple[float, float]:
        """The pause before request `index` (from 1): edge, short, mid, short, edge, ..."""
        return {1: self.edge_gap, 3: self.mid_gap}.get(index % 4, self.short_gap)


SIZES = QuickFull(
    quick=IdleRaceSizes(idle_timeout=0.3, threads=4, per_thread=4),
    full=IdleRaceSizes(idle_timeout=1.0, threads=10, per_thread=30),
)


def _make_client(client: str, config: str, plan: IdleRaceSizes) -> Any:
    if config == "servertune":
        from servertune.http import session

        return session(client, server_idle_timeout=plan.idle_timeout)  # type: ignore[call-overload]
    if client == "requests":
        import requests

        s = requests.Session()
        if config == "pool_maxsize=1":
            from requests.adapters import HTTPAdapter

            s.mount("http://", HTTPAdapter(pool_maxsize=1))
        return s
    if client == "httpx":
        import httpx

        return httpx.Client()
    if client == "urllib3":
        import urllib3

        return urllib3.PoolManager()
    import niquests

    if config == "keepalive_delay":
        # The folk fix: a maximum connection age under the idle timeout (the article's).
        from servertune.http import client_idle_expiry

        return niquests.Session(keepalive_delay=client_idle_expiry(None, plan.idle_timeout))
    return niquests.Session()


def _send(client: Any, url: str) -> int:
    if hasattr(client, "build_request"):  # httpx
        response = client.get(url)
        status = response.status_code
    elif hasattr(client, "connection_from_url"):  # urllib3
        response = client.request("GET", url)
        status = response.status
    else:
        response = client.get(url)
        status = response.status_code
    if status != 200:
        raise RuntimeError(f"HTTP {status}")
    return int(response.headers["X-Connection-Request"])


def measure(client: str, config: str, plan: IdleRaceSizes, seed: int) -> dict[str, Any]:
    """One run: start the server, run the bounded load, return per-request records and counts."""
    from servertune.bench.harness.loopback import KeepAliveServer

    records: list[tuple[float | None, bool, bool]] = []  # (gap, ok, reused)
    lock = threading.Lock()

    def worker(index: int, url: str) -> None:
        rng = random.Random(seed * 1000 + index)
        c = _make_client(client, config, plan)
        try:
            gap: float | None = None
            for i in range(plan.per_thread):
                if i:
                    # One pause at the edge, then three inside the server's window: a connection
                    # that lives on through several pauses shows whether reuse survives.
                    gap = rng.uniform(*plan.gap_range(i))
                    time.sleep(gap)
                try:
                    reused = _send(c, url) > 1
                    ok = True
                except Exception:
                    ok, reused = False, False
                with lock:
                    records.append((gap, ok, reused))
        finally:
            (getattr(c, "close", None) or c.clear)()

    with KeepAliveServer(plan.idle_timeout, mode="timer") as server:
        threads = [
            threading.Thread(target=worker, args=(i, server.url), daemon=True)
            for i in range(plan.threads)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + plan.per_thread * (plan.idle_timeout + 5.0)
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        stats = server.stats
        return {
            "records": records,
            "connections": stats.connections,
            "received": len(stats.received),
            "timed_out": any(t.is_alive() for t in threads),
        }


def _niquests_python() -> Path | None:
    env = os.environ.get("SERVERTUNE_NIQUESTS_PYTHON")
    candidates = [Path(env)] if env else []
    candidates.append(Path.cwd() / NIQUESTS_VENV / "bin" / "python")
    return next((p for p in candidates if p.exists()), None)


def _measure_niquests(
    stack: Any, config: str, plan: IdleRaceSizes, seed: int, python: Path
) -> dict[str, Any]:
    """One run under the niquests interpreter (its urllib3-future replaces urllib3 there)."""
    args = json.dumps({"config": config, "plan": plan.__dict__, "seed": seed})
    done = stack.run(
        f"niquests-{config}-{seed}",
        [str(python), "-m", "servertune.bench.scenarios.idle_race", args],
        timeout_s=plan.per_thread * (plan.idle_timeout + 5.0) + 60,
        cwd=Path.cwd(),
    )
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"niquests run failed: {lines[-1] if lines else done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def summarize_rows(
    client: str, config: str, plan: IdleRaceSizes, runs: list[dict[str, Any]]
) -> dict[str, Any]:
    """One table row from one or more runs: errors, new connections, reuse inside the window."""
    from servertune.http import client_idle_expiry

    window = client_idle_expiry(None, plan.idle_timeout)
    records = [tuple(r) for run in runs for r in run["records"]]
    sent = len(records)
    errors = sum(1 for _, ok, _ in records if not ok)
    inside = [reused for gap, ok, reused in records if gap is not None and gap < window and ok]
    before_race = [
        reused for gap, ok, reused in records if gap is not None and gap < plan.edge_gap[0] and ok
    ]
    edge = [r for r in records if r[0] is not None and r[0] >= window]
    return {
        "config": f"{client} {config}",
        "client": client,
        "setting": config,
        "requests": sent,
        "errors": errors,
        "error_pct": round(100.0 * errors / sent, 2) if sent else None,
        "edge_requests": len(edge),
        "new_connections": sum(run["connections"] for run in runs),
        "server_received": sum(run["received"] for run in runs),
        "reuse_in_window_pct": round(100.0 * sum(inside) / len(inside), 1) if inside else None,
        # Every pause short of the race band: what the expiry's safety margin costs in reuse.
        "reuse_before_race_pct": (
            round(100.0 * sum(before_race) / len(before_race), 1) if before_race else None
        ),
    }


class IdleRace(BaseScenario[IdleRaceSizes]):
    """Every client and configuration; rows, ratios and the issue's two targets."""

    name = "idle-race"
    needs = ("requests", "httpx", "urllib3")
    sizes = SIZES

    def setup(self, run: Run[IdleRaceSizes]) -> None:
        """Find the niquests interpreter (or say it is not measured)."""
        self.niquests_python = _niquests_python()
        self.versions: dict[str, str] = {}
        self.notes: list[str] = []
        if self.niquests_python is None:
            self.notes.append(
                "niquests not measured: no .venv-niquests in the current directory "
                "(python -m venv .venv-niquests && .venv-niquests/bin/pip install "
                "'servertune[niquests]'), or set SERVERTUNE_NIQUESTS_PYTHON"
            )

    def configs(self, run: Run[IdleRaceSizes]) -> list[str]:
        """`client setting` for every client measured here."""
        clients = (*IN_PROCESS, "niquests") if self.niquests_python else IN_PROCESS
        return [f"{client} {config}" for client in clients for config in CONFIGS[client]]

    def measure(
        self, run: Run[IdleRaceSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One run of the bounded load through one client configuration."""
        client, setting = config.split(" ", 1)
        if client == "niquests":
            assert self.niquests_python is not None
            result = _measure_niquests(
                run.stack, setting, run.size, run.repeat, self.niquests_python
            )
            self.versions["niquests"] = result.get("version", "?")
            self.versions["urllib3-future"] = result.get("urllib3", "?")
        else:
            result = measure(client, setting, run.size, run.repeat)
        if result["timed_out"]:
            self.notes.append(f"{config}: load threads hit their deadline")
        return result

    def summarize(self, run: Run[IdleRaceSizes], results: Results) -> Report:
        """Rows pooled over the repeats, new connections servertune/default, the targets."""
        plan = run.size
        rows = []
        for config in self.configs(run):
            client, setting = config.split(" ", 1)
            rows.append(summarize_rows(client, setting, plan, results.rows(config)))
        versions = dict(self.versions)
        for client in IN_PROCESS:
            versions.setdefault(client, dist_version(client))
        ours = [r for r in rows if r["setting"] == "servertune"]
        reuse = [r["reuse_in_window_pct"] for r in ours if r["reuse_in_window_pct"] is not None]
        ratios = {}
        for row in rows:
            if row["setting"] == "default" and row["new_connections"]:
                mine = next(r for r in ours if r["client"] == row["client"])
                # The price of safety: connections servertune opens per connection the default opens.
                ratios[f"{row['client']} new connections servertune/default"] = (
                    mine["new_connections"] / row["new_connections"]
                )
        notes = [*self.notes]
        notes.append(
            f"server idle timeout {plan.idle_timeout:g} s; {plan.threads} threads x "
            f"{plan.per_thread} GETs, each thread with its own client; pauses cycle through "
            f"{plan.edge_gap[0]:.3g}-{plan.edge_gap[1]:.3g} s (the race), "
            f"{plan.short_gap[0]:.3g}-{plan.short_gap[1]:.3g} s (twice) and "
            f"{plan.mid_gap[0]:.3g}-{plan.mid_gap[1]:.3g} s (across servertune's expiry)"
        )
        notes.append(
            "errors: requests that raised; edge_requests: requests after a pause at least "
            "servertune's idle expiry; server_received: requests the server read (a request lost "
            "on a closed connection is not read; a replay is read twice); reuse_in_window_pct: "
            "successful requests after a pause shorter than servertune's idle expiry that reused "
            "a connection (the target); reuse_before_race_pct: the same for every pause short of "
            "the race band, so the reuse the expiry's safety margin gives up shows"
        )
        return Report(
            scenario=self.name,
            runs=rows,
            ratios=ratios,
            targets=[
                Target(
                    "servertune errors, all clients",
                    float(sum(r["errors"] for r in ours)) if ours else None,
                    "<=",
                    MAX_SERVERTUNE_ERRORS,
                ),
                Target(
                    "servertune reuse within the idle window, worst client (%)",
                    min(reuse) if reuse else None,
                    ">=",
                    MIN_REUSE_IN_WINDOW_PCT,
                ),
            ],
            notes=notes,
            versions=versions,
        )


def _worker_main(argv: list[str]) -> None:
    """Entry point for the niquests subprocess: one run, JSON on stdout."""
    params = json.loads(argv[0])
    plan = IdleRaceSizes(**params["plan"])
    result = measure("niquests", params["config"], plan, params["seed"])
    result["version"] = dist_version("niquests")
    result["urllib3"] = dist_version("urllib3-future")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
