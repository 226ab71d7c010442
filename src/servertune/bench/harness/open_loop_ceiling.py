"""How fast the open-loop client can send on this machine without measuring itself.

The open-loop client (`open_loop`) is Python on one event loop, sharing the cores with the
servers it measures. Asked for more arrivals than it can write, it falls behind its schedule:
every request then carries the client's own lag, and past `timeout_s` of lag every later one
times out before it is written. Such a level measures the load generator, not the layout (seen
on a 0.12 ms path: 4 x the plan's capacity was 26,178 req/s, the client's send lag p99 980 ms,
every layout "timed out" thousands of requests).

So before the open-loop levels, the client is calibrated: it sends CALIBRATION_RPS to an nginx
that answers `return 200` (next to no server work) for CALIBRATION_S, and its own CPU time per
request is read (`time.process_time`: CPU, not wall time, so other work on the machine hardly
moves it). Its ceiling is the rate at which it would use CLIENT_CPU_SHARE of the cores: beyond
that it takes the CPU from the servers it measures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ClientCeiling", "calibrate_client"]

#: The calibration's arrival rate: well inside what the client sends on one core (it used
#: 0.07-0.16 ms of CPU per request at 500-3000 req/s here, 2026-11-26), high enough that the
#: per-run costs (the event loop, opening connections) are spread thin.
CALIBRATION_RPS = 2000.0
#: ... for this long (about 2000 requests: a CPU time per request good to a few percent).
CALIBRATION_S = 1.0
#: The share of the machine's cores the client may use at an open-loop level. On 2 cores
#: running nginx and the app servers as well, half a core for the load generator already
#: leaves the layouts 1.5; more would measure the client's competition with them.
CLIENT_CPU_SHARE = 0.25
#: A calibration request not answered within this long is a failed calibration (nginx answers
#: `return 200` in microseconds).
CALIBRATION_TIMEOUT_S = 1.0
#: Calibrations tried before giving up: a moment of other work on the cores (a test suite's
#: other worker) left nginx answering 925 of 1,987 within the timeout once; the next second
#: is another measurement.
CALIBRATION_TRIES = 3

_NGINX_CONF = """\
worker_processes 1;
pid {home}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    default_type text/plain;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "ok"; }}
    }}
}}
"""


@dataclass(frozen=True)
class ClientCeiling:
    """The calibration's result: the client's CPU per request and the rate it may send."""

    cpu_ms_per_request: float
    cores: int
    #: Requests the calibration sent and had answered.
    sent: int
    answered: int

    @property
    def rps(self) -> float:
        """The highest open-loop rate that keeps the client within CLIENT_CPU_SHARE of the
        cores: CLIENT_CPU_SHARE x cores x 1000 / its CPU ms per request."""
        return CLIENT_CPU_SHARE * self.cores * 1000.0 / self.cpu_ms_per_request

    def said(self) -> str:
        """One line for the report's notes."""
        return (
            f"the open-loop client used {self.cpu_ms_per_request:.3f} ms of CPU per request "
            f"(calibrated: {self.answered} of {self.sent} GETs at {CALIBRATION_RPS:.0f} req/s "
            f"to an nginx `return 200`), so it sends at most {self.rps:.0f} req/s within "
            f"{CLIENT_CPU_SHARE:.0%} of the {self.cores} cores"
        )


def calibrate_client(stack: Any, home: Path, cores: int) -> ClientCeiling:
    """Start a one-worker nginx answering `return 200` in `stack` (its files under `home`),
    send it CALIBRATION_RPS open-loop arrivals for CALIBRATION_S, stop it; the client's CPU per
    request. Raises RuntimeError when nginx answered less than 99% of them in each of
    CALIBRATION_TRIES tries (no calibration)."""
    from servertune.bench.harness.open_loop import run_open_loop
    from servertune.bench.harness.ports import free_port_block
    from servertune.bench.harness.supervision import tool_path

    home.mkdir(parents=True, exist_ok=True)
    port = free_port_block(1)
    conf = home / "nginx.conf"
    conf.write_text(_NGINX_CONF.format(home=home, port=port))
    argv = [tool_path("nginx"), "-p", f"{home}/", "-c", str(conf), "-e", str(home / "error.log"),
            "-g", "daemon off;"]  # fmt: skip
    server = stack.start("open-loop-calibration-nginx", "nginx", argv, ports=[port])
    try:
        for _ in range(CALIBRATION_TRIES):
            cpu = time.process_time()
            result = run_open_loop(
                f"http://127.0.0.1:{port}/",
                rate=CALIBRATION_RPS,
                duration_s=CALIBRATION_S,
                timeout_s=CALIBRATION_TIMEOUT_S,
                seed=1,
            )
            cpu = time.process_time() - cpu
            if result.sent and result.ok >= 0.99 * result.sent:
                break
        else:
            raise RuntimeError(
                f"open-loop calibration: nginx answered {result.ok} of {result.sent} requests "
                f"in the last of {CALIBRATION_TRIES} tries"
            )
    finally:
        stack.stop(server)
    return ClientCeiling(
        cpu_ms_per_request=round(1000.0 * cpu / result.sent, 4),
        cores=cores,
        sent=result.sent,
        answered=result.ok,
    )
