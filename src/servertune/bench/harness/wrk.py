"""wrk, the load generator the source articles used: run it with a done() script and parse what it prints.

wrk is used when it is on PATH; its done() hook prints the latency distribution and the exact
maximum, so percentiles never exceed the max through rounding.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from servertune.bench.harness.load_result import LoadError, LoadResult
from servertune.bench.harness.stats import DISTRIBUTION_POINTS

__all__ = ["REFUSED_LUA", "WRK_TIMEOUT_S", "find_wrk", "parse_wrk_output", "run_wrk"]

#: wrk gives up on a request after 2 s by default and leaves it out of the latency figures;
#: the benchmarks want every slow response in the tail, so they wait this long instead.
WRK_TIMEOUT_S = 30

_WRK_PCT_PREFIX = "servertune-pct"
# wrk calls done() once, after the run: print the latency distribution for plots and the
# exact maximum, in microseconds, one line per point.
_WRK_DONE_SCRIPT = """
local points = {%s}
function done(summary, latency, requests)
  if servertune_refused then servertune_refused() end
  for _, p in ipairs(points) do
    io.write(string.format("%s %%g %%d\\n", p, latency:percentile(p)))
  end
  io.write(string.format("%s 100 %%d\\n", latency.max))
end
"""


_REFUSED_PREFIX = "servertune-503"
#: Prepended to a run's script, counts the 503 answers apart from the other non-2xx ones: each
#: thread counts in its own Lua state, done() (in the main state) sums them through setup().
REFUSED_LUA = f"""
local servertune_threads = {{}}
function setup(thread) table.insert(servertune_threads, thread) end
refused = 0
function response(status, headers, body)
  if status == 503 then refused = refused + 1 end
end
function servertune_refused()
  local total = 0
  for _, t in ipairs(servertune_threads) do total = total + (t:get("refused") or 0) end
  io.write(string.format("{_REFUSED_PREFIX} %d\\n", total))
end
"""


def find_wrk() -> str | None:
    """wrk's path, or None when it is not installed."""
    return shutil.which("wrk")


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_TIME = r"([0-9.]+)(us|ms|s|m|h)"


def _ms(number: str, unit: str) -> float:
    return float(number) * _UNITS_MS[unit]


def parse_wrk_output(text: str, connections: int, duration_s: float) -> LoadResult:
    """Parse `wrk --latency` output (and our done() lines, when present) into a LoadResult."""
    latency = re.search(rf"^\s*Latency\s+{_TIME}\s+{_TIME}\s+{_TIME}", text, re.MULTILINE)
    rps = re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.MULTILINE)
    total = re.search(r"^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m|h)", text, re.MULTILINE)
    if latency is None or rps is None or total is None:
        raise LoadError(f"cannot parse wrk output:\n{text}")
    pcts = {
        float(m.group(1)): _ms(m.group(2), m.group(3))
        for m in re.finditer(rf"^\s+([0-9.]+)%\s+{_TIME}\s*$", text, re.MULTILINE)
    }
    if not {50.0, 90.0, 99.0} <= pcts.keys():
        raise LoadError(f"wrk output has no latency distribution (run with --latency):\n{text}")
    socket = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text
    )
    socket_errors = sum(int(g) for g in socket.groups()) if socket else 0
    found = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    non_2xx = int(found.group(1)) if found else 0
    shed = re.search(rf"^{_REFUSED_PREFIX} (\d+)$", text, re.MULTILINE)
    errors = socket_errors + non_2xx
    curve = sorted(
        (float(m.group(1)), int(m.group(2)) / 1000)
        for m in re.finditer(rf"^{_WRK_PCT_PREFIX} ([0-9.]+) (\d+)$", text, re.MULTILINE)
    )
    # The summary's max is rounded to 2 decimals in its unit; done() printed it exactly.
    max_ms = curve[-1][1] if curve and curve[-1][0] == 100 else _ms(*latency.group(5, 6))
    # Same for the percentiles: wrk prints them with %.2Lf (long double), which can round a
    # value up past the exact max; take every figure from done() when it printed them.
    exact = dict(curve)
    pcts = {p: exact.get(p, v) for p, v in pcts.items()}
    return LoadResult(
        tool="wrk",
        connections=connections,
        duration_s=_ms(total.group(2), total.group(3)) / 1000 or duration_s,
        requests=int(total.group(1)),
        errors=errors,
        rps=float(rps.group(1)),
        p50_ms=pcts[50.0],
        p90_ms=pcts[90.0],
        p99_ms=pcts[99.0],
        max_ms=max_ms,
        distribution=tuple(curve),
        non_2xx=non_2xx,
        socket_errors=socket_errors,
        refused_503=int(shed.group(1)) if shed else None,
    )


def run_wrk(
    url: str,
    *,
    connections: int,
    duration_s: float,
    threads: int = 1,
    timeout_s: int = WRK_TIMEOUT_S,
    wrk: str | None = None,
    lua: str = "",
) -> LoadResult:
    """Run `wrk --latency` (one thread, as the source articles ran it) and parse what it prints.

    `lua` is prepended to the script (e.g. a `request()` spreading requests over paths); the
    script's own done() prints the latency distribution.
    """
    binary = wrk or find_wrk()
    if binary is None:
        raise LoadError("wrk is not on PATH")
    seconds = max(1, round(duration_s))  # wrk takes whole seconds
    points = ", ".join(f"{p:g}" for p in DISTRIBUTION_POINTS if p < 100)
    with tempfile.TemporaryDirectory(prefix="servertune-wrk-") as tmp:
        script = Path(tmp) / "done.lua"
        script.write_text(lua + _WRK_DONE_SCRIPT % (points, _WRK_PCT_PREFIX, _WRK_PCT_PREFIX))
        argv = [
            binary,
            f"-t{min(threads, connections)}",
            f"-c{connections}",
            f"-d{seconds}s",
            f"--timeout={timeout_s}s",
            "--latency",
            "-s",
            str(script),
            url,
        ]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=seconds + timeout_s + 10,
                check=False,
            )
        except subprocess.TimeoutExpired as error:  # run() has killed wrk already
            raise LoadError(f"wrk did not finish: {error}") from None
    if done.returncode != 0:
        raise LoadError(f"wrk failed ({done.returncode}): {done.stderr.strip()}")
    return parse_wrk_output(done.stdout, connections, seconds)
