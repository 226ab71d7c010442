"""What every benchmark returns: runs side by side, ratios, targets, and the machine it ran on.

A scenario builds one `Report`; the CLI prints it as a table, writes it as JSON and, where the
scenario can, plots it. The JSON shape is the contract docs/benchmarks.md and tests rely on:

    {"scenario": ..., "machine": {...}, "versions": {...}, "ceiling_rps": float | null,
     "runs": [{"config": name, ...metrics}], "ratios": {...}, "targets": [...], "notes": [...],
     "servers": [{"name", "kind", "pgid", "ports", "stopped"}]}

Load-test scenarios put `concurrency, rps, p50_ms, p90_ms, p99_ms, max_ms, errors` in each run;
servertune's own configuration is always the run whose `config` is "servertune".
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "LOAD_RUN_KEYS",
    "BenchAppError",
    "BenchInputError",
    "BenchOptions",
    "Report",
    "Target",
    "machine_info",
]

#: The keys every run of a load-test scenario carries (the scenarios' JSON contract).
LOAD_RUN_KEYS = ("config", "concurrency", "rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "errors")


class BenchInputError(ValueError):
    """A scenario cannot run with the options given (e.g. no such --python): one line, exit code 2."""


class BenchAppError(RuntimeError):
    """The app under test failed (raised, answered 500, never answered): one line, exit code 1."""


@dataclass(frozen=True)
class BenchOptions:
    """How a scenario should run. `quick` is a smoke run of a few seconds, for tests."""

    quick: bool = False
    #: `--thorough`: a scenario's every measurement, where its default run adapts (bench app).
    thorough: bool = False
    repeat: int = 1
    progress: bool = True
    python: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Target:
    """A goal the scenario checks: `value` against `threshold` by `op`, with a human name."""

    name: str
    value: float | None
    op: str
    threshold: float
    met: bool | None = None

    def __post_init__(self) -> None:
        if self.met is None and self.value is not None:
            ops = {"<=": self.value <= self.threshold, ">=": self.value >= self.threshold,
                   "<": self.value < self.threshold, ">": self.value > self.threshold,
                   "==": self.value == self.threshold}  # fmt: skip
            self.met = ops[self.op]


def machine_info() -> dict[str, Any]:
    """Where a result came from: enough to tell two machines' numbers apart."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    model = ""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": model,
        "cores": cores,
        "date": time.strftime("%Y-%m-%d"),
    }


@dataclass
class Report:
    """One scenario's result."""

    scenario: str
    runs: list[dict[str, Any]]
    ceiling_rps: float | None = None
    ratios: dict[str, float] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=machine_info)
    versions: dict[str, str] = field(default_factory=dict)
    #: Every server the scenario started: name, kind, pgid, ports, stopped (harness invariants).
    servers: list[dict[str, Any]] = field(default_factory=list)
    #: Each configuration's line to paste (`bench app`: the copied command line, or the
    #: `servertune gen` lines of servertune's files), where the scenario records them.
    commands: dict[str, str] = field(default_factory=dict)
    #: Each configuration's files as the run wrote them (file name -> text): its server's and
    #: its fronts' (nginx.conf, haproxy.cfg), where the scenario records them.
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    #: How long the run took, setup to summary (seconds).
    elapsed_s: float | None = None
    #: Where that time went: per phase (setup, start, each kind of load, stop, ...), its total
    #: seconds and count (bench/harness/timing.py).
    time_spent: dict[str, dict[str, float]] = field(default_factory=dict)
    #: Per load level, servertune's best against the best other layout, as data (the report's
    #: headline): level, metric, ours/copied names, values and ranges, ratio, winner, repeats.
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON document `--json FILE` writes."""
        return {
            "scenario": self.scenario,
            "machine": self.machine,
            "versions": self.versions,
            "ceiling_rps": self.ceiling_rps,
            "runs": self.runs,
            "ratios": self.ratios,
            "targets": [asdict(t) for t in self.targets],
            "notes": self.notes,
            "servers": self.servers,
            **({"commands": self.commands} if self.commands else {}),
            **({"files": self.files} if self.files else {}),
            **({"elapsed_s": self.elapsed_s} if self.elapsed_s is not None else {}),
            **({"time_spent": self.time_spent} if self.time_spent else {}),
            **({"verdicts": self.verdicts} if self.verdicts else {}),
        }

    def write_json(self, path: Path) -> None:
        """Write the JSON atomically: a reader never sees half a file."""
        from servertune.files import write_atomically

        write_atomically({path.name: json.dumps(self.to_json(), indent=2) + "\n"}, path.parent)

    def table(self) -> str:
        """Runs as an aligned text table, then ratios, targets and notes."""
        lines = [f"servertune bench {self.scenario}"]
        if self.ceiling_rps is not None:
            lines.append(f"CPU ceiling: {self.ceiling_rps:.1f} req/s")
        if self.runs:
            columns: list[str] = []
            for run in self.runs:
                columns.extend(
                    k for k in run if k not in columns and not isinstance(run[k], list | dict)
                )
            cells = [[_cell(run.get(c)) for c in columns] for run in self.runs]
            widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
            lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(columns)))
            lines.append("  ".join("-" * w for w in widths))
            lines.extend(
                "  ".join(r[i].ljust(widths[i]) for i in range(len(columns))) for r in cells
            )
        if self.ratios:
            lines.append("")
            lines.extend(f"{name}: {value:.3g}" for name, value in self.ratios.items())
        if self.targets:
            lines.append("")
            for t in self.targets:
                if t.value is None:  # not "- <= 2 -> not measured"
                    lines.append(f"target {t.name} ({t.op} {t.threshold:g}): not measured")
                    continue
                verdict = "MET" if t.met else "not met"
                lines.append(f"target {t.name}: {t.value:.3g} {t.op} {t.threshold:g} -> {verdict}")
        if self.notes:
            lines.append("")
            lines.extend(f"note: {n}" for n in self.notes)
        if self.commands:
            lines.append("")
            lines.extend(f"reproduce {name}: {line}" for name, line in self.commands.items())
        return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)
