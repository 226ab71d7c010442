"""Access-log reading: lines per CPU second and peak memory of servertune's reader, a re loop, GoAccess.

For 1, 10 and 50 million lines (GoAccess, where installed, up to GOACCESS_MAX_LINES).

The log is generated (nginx, a timed `log_format`: ids, UUIDs and query strings in the paths, a
status mix, 50 requests a second) and written once per size; each reader then runs in its own
process, one at a time (in a process group the harness kills whatever ends the run), and
reports its CPU time and peak resident memory from the kernel (`getrusage` for CPU; its own
VmHWM for memory, or GoAccess's ru_maxrss as its child). Lines per second are per CPU second of that one process, so a busy
machine slows the wall clock more than the number. The `re` loop is what a short script does:
match each line, keep every time in a list, sort it at the end for the percentiles.

Targets: servertune's CPU time at most 1.2x the `re` loop's (the largest size both read), 500,000
lines per CPU second for servertune at the largest size, and memory flat (peak RSS at the largest
size within 1.2x of the smallest: the sketches and counters are bounded).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run

__all__ = [
    "CPU_RATIO_TARGET",
    "FORMAT",
    "LINES_PER_SECOND_TARGET",
    "MEMORY_GROWTH_TARGET",
    "SIZES",
    "LogRead",
    "LogReadSizes",
    "write_log",
]

#: The issue's targets: lines per CPU second on one core, and memory flat from the smallest size
#: to the largest (peak RSS ratio).
LINES_PER_SECOND_TARGET = 500_000
MEMORY_GROWTH_TARGET = 1.2
#: Reading bounded by the parse, not by servertune: its CPU time at most this multiple of the
#: `re` loop's over the same log (the largest both read).
CPU_RATIO_TARGET = 1.2
#: The nginx log_format of the generated log.
FORMAT = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" $request_length $request_time $upstream_response_time'
)
#: GoAccess's spelling of the same format (%T: the time served, in seconds with ms).
GOACCESS_FORMAT = '%h %^[%d:%t %^] "%r" %s %b "%R" "%u" %^ %^ %T'
SERVERTUNE = "servertune"
RE_LOOP = "re loop"
GOACCESS = "goaccess"
#: Requests per second of the generated log.
RATE = 50
#: Largest log GoAccess is given: it takes about 14 us of CPU a line here (8.3 s for 1M lines),
#: so 50M lines would hold the shared benchmark lock for over 12 minutes on its own.
GOACCESS_MAX_LINES = 10_000_000


@dataclass(frozen=True)
class LogReadSizes:
    """Lines of each generated log, and repeats."""

    lines: tuple[int, ...]
    repeats: int = 1


SIZES = QuickFull(
    quick=LogReadSizes(lines=(20_000, 100_000)),
    full=LogReadSizes(lines=(1_000_000, 10_000_000, 50_000_000)),
)


def write_log(path: Path, lines: int, seed: int = 1) -> None:
    """An nginx access log of `lines` lines in FORMAT, RATE requests a second."""
    rng = random.Random(seed)
    routes = [
        "/api/items/{n}", "/api/items/{n}/reviews?page=2", "/users/{n}/orders", "/",
        "/static/app.css", "/a/{u}", "/search?q=shoes", "/health",
    ]  # fmt: skip
    times = [f"{rng.lognormvariate(-3.5, 0.8):.3f}" for _ in range(997)]
    statuses = ["200"] * 90 + ["304", "404", "499", "502", "504"] * 2
    start = 1_764_000_000
    with path.open("w", buffering=1 << 20) as handle:
        written = 0
        while written < lines:
            second = start + written // RATE
            stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(second))
            batch = []
            for i in range(min(RATE, lines - written)):
                n = written + i
                path_ = routes[n % len(routes)].format(
                    n=n % 100_003, u=f"{n % 2**32:08x}-1111-2222-3333-{n:012x}"
                )
                t = times[n % 997]
                batch.append(
                    f'10.1.{n % 250}.{n % 199} - - [{stamp}] "GET {path_} HTTP/1.1" '
                    f'{statuses[n % 100]} 512 "-" "Mozilla/5.0 (X11; Linux x86_64)" 230 {t} {t}\n'
                )
            handle.write("".join(batch))
            written += len(batch)


class LogRead(BaseScenario[LogReadSizes]):
    """Lines per CPU second and peak memory: servertune, a plain `re` loop, GoAccess."""

    name = "log-read"
    needs = ("ddsketch",)
    sizes = SIZES

    def setup(self, run: Run[LogReadSizes]) -> None:
        """Generate one log per size (not timed)."""
        root = run.stack.dir / "log-read"
        root.mkdir(parents=True, exist_ok=True)
        self.logs: dict[str, tuple[int, Path]] = {}
        for lines in run.size.lines:
            path = root / f"access-{lines}.log"
            run.progress.show(f"writing a log of {lines:,} lines")
            write_log(path, lines)
            self.logs[f"{lines:,} lines"] = (lines, path)
        self.goaccess = shutil.which("goaccess")

    def configs(self, run: Run[LogReadSizes]) -> Sequence[str]:
        """servertune, the `re` loop, and GoAccess when it is installed."""
        return [SERVERTUNE, RE_LOOP] + ([GOACCESS] if self.goaccess else [])

    def levels(self, run: Run[LogReadSizes], config: str) -> Sequence[Level]:
        """One level per log size (GoAccess: up to GOACCESS_MAX_LINES)."""
        return [
            Level(role=name)
            for name, (lines, _) in self.logs.items()
            if config != GOACCESS or lines <= GOACCESS_MAX_LINES
        ]

    def measure(
        self, run: Run[LogReadSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """Run one reader over one log in a child process: CPU seconds and peak RSS."""
        lines, path = self.logs[level.role]
        argv = [sys.executable, "-m", "servertune.bench.scenarios.log_read", config, str(path)]
        if config == GOACCESS:
            assert self.goaccess is not None
            out = run.stack.dir / "log-read" / "goaccess.json"
            argv += [
                self.goaccess, str(path), "--no-global-config", "--no-progress",
                f"--log-format={GOACCESS_FORMAT}", "--date-format=%d/%b/%Y",
                "--time-format=%T", "-o", str(out),
            ]  # fmt: skip
        started = time.perf_counter()
        # The stack runs it in a process group of its own, killed whatever ends the run.
        done = run.stack.run(f"{config} {lines:,}", argv, timeout_s=3600)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{config} exited {done.returncode} on {path.name}")
        answer: dict[str, Any] = json.loads(done.stdout)
        if config == GOACCESS:
            answer["lines"] = json.loads(out.read_text())["general"]["total_requests"]
        cpu = answer["cpu_s"]
        return {
            "config": config,
            "lines": lines,
            "read": answer.get("lines"),
            "p99_ms": answer.get("p99_ms"),
            "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3),
            "lines_per_cpu_s": round(lines / cpu) if cpu else None,
            "peak_rss_mb": answer["peak_rss_mb"],
        }

    def summarize(self, run: Run[LogReadSizes], results: Results) -> Report:
        """Median lines/s and peak memory per reader and size; the two targets for servertune."""
        rows: list[dict[str, Any]] = []
        for config in self.configs(run):
            for level in self.levels(run, config):
                samples = results.rows(config, level)
                rows.append(
                    {
                        "config": config,
                        "lines": samples[-1]["lines"],
                        "read": samples[-1]["read"],
                        "p99_ms": samples[-1]["p99_ms"],
                        "lines_per_cpu_s": round(
                            results.median_of(config, "lines_per_cpu_s", level)
                        ),
                        "cpu_s": results.median_of(config, "cpu_s", level),
                        "wall_s": results.median_of(config, "wall_s", level),
                        "peak_rss_mb": max(s["peak_rss_mb"] for s in samples),
                    }
                )
        ours = [r for r in rows if r["config"] == SERVERTUNE]
        growth = ours[-1]["peak_rss_mb"] / ours[0]["peak_rss_mb"]
        ratios = {}
        for other in (RE_LOOP, GOACCESS):
            for theirs in (r for r in rows if r["config"] == other):
                mine = next(r for r in ours if r["lines"] == theirs["lines"])
                size = f"{mine['lines']:,} lines"
                ratios[f"servertune / {other} lines per CPU s, {size}"] = round(
                    mine["lines_per_cpu_s"] / theirs["lines_per_cpu_s"], 2
                )
                ratios[f"servertune / {other} peak memory, {size}"] = round(
                    mine["peak_rss_mb"] / theirs["peak_rss_mb"], 2
                )
        loop = {r["lines"]: r for r in rows if r["config"] == RE_LOOP}
        both = max(r["lines"] for r in ours if r["lines"] in loop)
        mine_cpu = next(r["cpu_s"] for r in ours if r["lines"] == both)
        return Report(
            scenario=self.name,
            runs=rows,
            ratios=ratios,
            targets=[
                Target(
                    f"servertune CPU s / the re loop's, {both:,} lines",
                    round(mine_cpu / loop[both]["cpu_s"], 3) if loop[both]["cpu_s"] else None,
                    "<=",
                    CPU_RATIO_TARGET,
                ),
                Target(
                    f"servertune lines per CPU second, {ours[-1]['lines']:,} lines",
                    ours[-1]["lines_per_cpu_s"],
                    ">=",
                    LINES_PER_SECOND_TARGET,
                ),
                Target(
                    f"servertune peak RSS, {ours[-1]['lines']:,} / {ours[0]['lines']:,} lines",
                    round(growth, 3),
                    "<=",
                    MEMORY_GROWTH_TARGET,
                ),
            ],
            notes=[
                (
                    "each reader in its own process, one at a time; CPU seconds from getrusage(), "
                    "peak RSS from VmHWM (GoAccess: ru_maxrss); the re loop keeps every time in a "
                    "list and sorts it (what a script does for a percentile), so its memory grows "
                    "with the log"
                ),
                (
                    f"the log: nginx, {RATE} requests a second, ids and UUIDs in the paths; GoAccess "
                    f"is given logs of up to {GOACCESS_MAX_LINES:,} lines"
                ),
            ],
        )


def _read_servertune(path: Path) -> dict[str, Any]:
    from servertune.logs import build_format, read_traffic

    traffic = read_traffic([path], build_format("nginx", FORMAT))
    return {"lines": traffic.requests, "p99_ms": round(traffic.quantile(0.99), 3)}


def _read_re_loop(path: Path) -> dict[str, Any]:
    import re

    line = re.compile(
        r'^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) \S+ "[^"]*" "[^"]*" '
        r"\S+ \S+ (\S+)$"
    )
    times: list[float] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for text in handle:
            match = line.match(text.rstrip("\n"))
            if match is not None and match.group(6) != "-":
                times.append(float(match.group(6)) * 1000)
    times.sort()
    return {"lines": len(times), "p99_ms": times[int(0.99 * (len(times) - 1))] if times else None}


def _usage(who: int) -> dict[str, float]:
    """CPU seconds and peak RSS (MiB) of this process (RUSAGE_SELF) or its waited-for children.

    This process's own peak is /proc/self/status's VmHWM: Linux keeps ru_maxrss across fork and
    exec, so getrusage() gives at least the peak of the process that started this one (the
    `bench` harness: 38 MiB in a quick run, whatever the reader used; measured: a child of a
    311 MiB parent reported 311 MiB by ru_maxrss, 8.6 MiB by VmHWM). A child's (GoAccess's)
    includes this small wrapper's peak when it started GoAccess."""
    import resource

    usage = resource.getrusage(who)
    peak_kib = float(usage.ru_maxrss)  # KiB on Linux
    if who == resource.RUSAGE_SELF:
        peak_kib = _own_peak_kib() or peak_kib
    return {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(peak_kib / 1024, 1),
    }


def _own_peak_kib() -> float | None:
    """VmHWM (KiB) of this process, None where /proc does not give it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def main(argv: list[str]) -> int:
    """`python -m servertune.bench.scenarios.log_read CONFIG LOG [GOACCESS ARGS...]`: read the
    log, print JSON with the reader's own CPU time and peak RSS (GoAccess: its, as a child)."""
    import resource

    config, path = argv[0], Path(argv[1])
    if config == GOACCESS:
        subprocess.run(argv[2:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(json.dumps(_usage(resource.RUSAGE_CHILDREN)))
        return 0
    reader = _read_servertune if config == SERVERTUNE else _read_re_loop
    answer = reader(path)
    print(json.dumps({**answer, **_usage(resource.RUSAGE_SELF)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
