"""One task 10 times under a loop, asyncio, threads, processes and sub-interpreters.

Three tasks: a CPU-bound `fib`, a `sleep`, and a `fetch` from a local HTTP server that answers
after a delay (the network and a remote service, as a client sees them). Each (task, model)
runs in a fresh worker process under the measured interpreter (`--python python3.13`), timing
every task's start and end; the report gives each model's wall time as a ratio to the plain
loop and draws the waterfalls (text here, PNG with `--plot`).

What the parallelism article (docs/references.md) found, and the targets below check: threads and asyncio cut waiting (sleep,
fetch) to about 1/10 but do nothing for CPU work under the GIL; processes and sub-interpreters
(3.12+, each with its own GIL) run CPU work on every core, sub-interpreters without the
start-up cost of a process.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import BenchInputError, Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import median

__all__ = [
    "MODELS",
    "TASKS",
    "InterpreterNotFoundError",
    "Parallel",
    "ParallelReport",
    "Sizes",
    "find_python",
    "worker_path",
]

#: The execution models, in the article's order; "loop" is the baseline of every ratio.
MODELS = ("loop", "asyncio", "threads", "processes", "subinterpreters")
TASKS = ("fib", "sleep", "fetch")
#: Tasks per run: the article's concurrency of 10.
COUNT = 10
#: A worker that takes longer than this is killed and its column reported as failed.
WORKER_TIMEOUT_S = 120.0
#: A target for a ratio is met within this slack of the ideal 1/COUNT (waiting tasks) or
#: 1/cores (CPU tasks): start-up, scheduling and the shared 2-core CI box all cost something.
WAIT_RATIO_MAX = 0.25
CPU_RATIO_SLACK = 0.25
#: Threads must not speed fib up: under the GIL their ratio stays near 1.
GIL_RATIO_MIN = 0.8


@dataclass(frozen=True)
class Sizes:
    """How big each task is: fib's argument, the sleep, and the fetch server's delay and body."""

    fib_n: int
    sleep_s: float
    fetch_delay_ms: float
    fetch_body_kb: int
    repeats: int = 1


#: fib(30) takes ~0.1 s on CPython 3.11-3.13 here: long enough that a process's start-up
#: (~10 ms) is small beside it. The sleep and fetch delays are typical remote-call latencies.
#: --quick: a smoke run of a few seconds in all.
SIZES = QuickFull(
    quick=Sizes(fib_n=20, sleep_s=0.02, fetch_delay_ms=20.0, fetch_body_kb=4),
    full=Sizes(fib_n=30, sleep_s=0.2, fetch_delay_ms=100.0, fetch_body_kb=64),
)


class InterpreterNotFoundError(BenchInputError):
    """`--python` named no interpreter that runs."""


def worker_path() -> Path:
    """The self-contained worker script shipped in the package."""
    return Path(__file__).resolve().parent.parent / "apps" / "parallel_worker.py"


def _runs(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; sys.exit(sys.version_info < (3, 9))"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_python(name: str | None) -> str:
    """The interpreter to measure: this one, a path, a command on PATH, or a pyenv version.

    `python3.13` is often a pyenv shim that refuses to run unless that version is selected, so
    each candidate is tried, then `$PYENV_ROOT/versions/3.13.*/bin/python`.
    """
    if name is None:
        return sys.executable
    candidates: list[str] = []
    if os.sep in name:
        candidates.append(name)
    elif found := shutil.which(name):
        candidates.append(found)
    version = re.fullmatch(r"(?:python)?(\d+(?:\.\d+)*)", name)
    if version:
        root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        matches = glob.glob(os.path.join(root, "versions", f"{version.group(1)}*", "bin", "python"))
        candidates.extend(sorted(matches, key=_version_key, reverse=True))
    for candidate in candidates:
        if _runs(candidate):
            return candidate
    tried = ", ".join(candidates) or "nothing on PATH or under pyenv"
    raise InterpreterNotFoundError(f"--python: no working Python 3.9+ for {name!r} (tried {tried})")


def _version_key(path: str) -> tuple[int, ...]:
    name = Path(path).parent.parent.name
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.]", name))


def _run_worker(stack: Any, python: str, args: list[str]) -> dict[str, Any]:
    """One worker run on the stack (its group is reaped whatever happens); its JSON line, or
    `{"failed": why}` when it timed out, crashed or exited non-zero."""
    from servertune.bench.harness.supervision import ServerError

    try:
        done = stack.run("worker", [python, str(worker_path()), *args], timeout_s=WORKER_TIMEOUT_S)
    except ServerError:
        return {"failed": f"timed out after {WORKER_TIMEOUT_S:g} s"}
    if done.returncode != 0:
        if done.returncode < 0:
            why = f"the worker died of {signal.Signals(-done.returncode).name}"
        else:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            why = lines[-1] if lines else f"exit {done.returncode}"
        return {"failed": why}
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


class ParallelReport(Report):
    """The report, whose table ends with the text waterfalls of each task."""

    def table(self) -> str:
        """Runs, ratios and targets, then one waterfall per (task, model) on one scale per task."""
        from servertune.bench.harness.waterfall import text_waterfall

        lines = [super().table()]
        for task, charts in _charts(self):
            scale = max((c.wall_s for c in charts if c is not None), default=1.0)
            lines += ["", f"== {task}: each task's start and end, one scale for all models =="]
            for model, chart in zip(MODELS, charts, strict=True):
                if chart is not None:
                    lines += ["", *text_waterfall(chart, scale)]
                else:
                    lines += ["", f"{model}: skipped"]
        return "\n".join(lines)


def _charts(report: Report) -> list[tuple[str, list[Any]]]:
    """Per task, the median run's waterfall of each model (None where skipped)."""
    from servertune.bench.harness.waterfall import Waterfall

    rows = []
    for task in TASKS:
        charts: list[Any] = []
        for model in MODELS:
            run_ = next(
                (r for r in report.runs if r.get("task") == task and r["config"] == model), None
            )
            if run_ is None or "spans" not in run_:
                charts.append(None)
                continue
            ratio = run_.get("ratio")
            title = model + ("" if ratio is None or model == "loop" else f" x{ratio:.2f}")
            spans = [(float(s), float(e)) for s, e in run_["spans"]]
            charts.append(Waterfall(title=title, spans=spans, wall_s=float(run_["wall_s"])))
        if any(c is not None for c in charts):
            rows.append((task, charts))
    return rows


class Parallel(BaseScenario[Sizes]):
    """Every task under every model, repeats interleaved; medians and ratios to the loop."""

    name = "parallel"
    sizes = SIZES
    has_plot = True

    def setup(self, run: Run[Sizes]) -> None:
        """Find the interpreter, probe it, and start the fetch server on the run's stack."""
        from servertune.bench.harness.ports import free_port

        self.python = find_python(run.options.python)
        probe = run.stack.run("probe", [self.python, str(worker_path()), "probe"], timeout_s=30)
        if probe.returncode != 0:
            raise InterpreterNotFoundError(f"--python: {self.python} cannot run the worker")
        self.probe: dict[str, Any] = json.loads(probe.stdout)
        # A separate process, so its threads never compete with the measured tasks for one GIL.
        self.port = free_port()
        size = run.size
        run.stack.start(
            "fetch-server",
            "python",
            [self.python, str(worker_path()), "serve", "--port", str(self.port),
             "--delay-ms", str(size.fetch_delay_ms), "--body-kb", str(size.fetch_body_kb)],
            ports=[self.port],
        )  # fmt: skip

    def configs(self, run: Run[Sizes]) -> list[str]:
        """`task model` for every task and model, task by task."""
        return [f"{task} {model}" for task in TASKS for model in MODELS]

    def measure(self, run: Run[Sizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        """One worker process running the task COUNT times under the model."""
        task, model = config.split(" ")
        size = run.size
        args = ["run", "--task", task, "--model", model, "--count", str(COUNT),
                "--fib-n", str(size.fib_n), "--sleep-s", str(size.sleep_s),
                "--port", str(self.port)]  # fmt: skip
        return {"config": config, **_run_worker(run.stack, self.python, args)}

    def summarize(self, run: Run[Sizes], results: Results) -> Report:
        """Rows per task and model (the median run's waterfall), ratios, targets."""
        by_pair = {
            (task, model): results.rows(f"{task} {model}") for task in TASKS for model in MODELS
        }
        return _report(by_pair, run.repeats, run.size, self.probe)

    def plot(self, report: Report, path: Path) -> None:
        """A PNG grid of waterfalls: one row per task, one column per model."""
        from servertune.bench.harness.waterfall import plot_waterfalls

        python = report.machine.get("measured_python", report.machine.get("python", ""))
        plot_waterfalls(
            _charts(report),
            MODELS,
            path,
            title=(
                f"servertune bench parallel: {COUNT} tasks, Python {python}; xN = wall time / loop"
            ),
        )


def _report(
    results: dict[tuple[str, str], list[dict[str, Any]]],
    repeats: int,
    sizes: Sizes,
    probe: dict[str, Any],
) -> ParallelReport:
    runs: list[dict[str, Any]] = []
    ratios: dict[str, float] = {}
    notes: list[str] = []
    for task in TASKS:
        base: float | None = None
        for model in MODELS:
            attempts = results[(task, model)]
            good = [a for a in attempts if "wall_s" in a]
            if not good:
                why = attempts[0].get("skipped") or attempts[0].get("failed", "no result")
                if "skipped" in attempts[0]:
                    short = f"not in Python {probe['python']} (see notes)"
                    note = f"{model} skipped: {why}"
                else:
                    short = "failed (see notes)"
                    note = f"{task} / {model} failed: {why}"
                runs.append({"config": model, "task": task, "skipped": short})
                if note not in notes:
                    notes.append(note)
                continue
            walls = [a["wall_s"] for a in good]
            middle = median(walls)
            chosen = min(good, key=lambda a: abs(a["wall_s"] - middle))
            if model == "loop":
                base = middle
            ratio = None if base is None else middle / base
            run_: dict[str, Any] = {
                "config": model,
                "task": task,
                "wall_s": round(middle, 4),
                "ratio": None if ratio is None else round(ratio, 3),
                "first_start_s": round(min(s for s, _ in chosen["spans"]), 4),
                "runs": len(good),
                "walls_s": [round(w, 4) for w in walls],
                "spans": [[round(s, 5), round(e, 5)] for s, e in chosen["spans"]],
            }
            runs.append(run_)
            if ratio is not None and model != "loop":
                ratios[f"{task}: {model} / loop"] = round(ratio, 3)
    cores = _cores()
    targets = _targets(ratios, cores)
    notes.append(
        f"{COUNT} tasks per run; fib({sizes.fib_n}), sleep {sizes.sleep_s:g} s, fetch from "
        f"127.0.0.1 answering after {sizes.fetch_delay_ms:g} ms with {sizes.fetch_body_kb} KiB; "
        f"median of {repeats} run(s); {cores} core(s) for this process"
    )
    notes.append(
        "asyncio runs fib with no await, so it is serial; sub-interpreters run one per thread, "
        "each with its own GIL; processes are forked (multiprocessing 'fork')"
    )
    report = ParallelReport(
        scenario="parallel",
        runs=runs,
        ratios=ratios,
        targets=targets,
        notes=notes,
        versions={"measured_python": probe["python"], "subinterpreters": probe["subinterpreters"]},
    )
    report.machine["measured_python"] = probe["python"]
    return report


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _targets(ratios: dict[str, float], cores: int) -> list[Target]:
    targets = []
    for task in ("sleep", "fetch"):
        for model in ("asyncio", "threads"):
            key = f"{task}: {model} / loop"
            targets.append(Target(key, ratios.get(key), "<=", WAIT_RATIO_MAX))
    targets.append(
        Target("fib: threads / loop", ratios.get("fib: threads / loop"), ">=", GIL_RATIO_MIN)
    )
    if cores >= 2:
        # Ten CPU tasks on `cores` cores can at best take 1/cores of the serial time.
        limit = round(min(0.95, 1 / cores + CPU_RATIO_SLACK), 2)
        for model in ("processes", "subinterpreters"):
            key = f"fib: {model} / loop"
            if model == "processes" or key in ratios:
                targets.append(Target(key, ratios.get(key), "<=", limit))
    return targets
