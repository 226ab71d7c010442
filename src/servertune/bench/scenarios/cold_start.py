"""Cold start of `servertune gen uwsgi --cores 4` against importing its three dependencies.

The target (issue #2): within 1.25x of `python -c "import pydantic, jinja2, typer"`. Both are run
alternately in fresh interpreters, so a noisy neighbour slows both alike; medians are compared.
`import pydantic` is lazy (BaseModel is not loaded until used), so a second, fairer baseline also
loads BaseModel, and a third builds and validates one one-field model: the least any CLI that
validates its input with Pydantic pays before its own code runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["run"]

#: Fresh interpreters per command: enough for a stable median on a shared 2-core machine.
RUNS = 30
QUICK_RUNS = 3
TARGET_RATIO = 1.25

COMMANDS = {
    "import pydantic, jinja2, typer": [sys.executable, "-c", "import pydantic, jinja2, typer"],
    "+ pydantic.BaseModel": [
        sys.executable,
        "-c",
        "import jinja2, typer; from pydantic import BaseModel",
    ],
    # What any CLI that validates its input with a Pydantic model pays before its own code runs:
    # the first model build loads most of pydantic (its schema generator, types, plugin hook).
    "+ one validated model": [
        sys.executable,
        "-c",
        "import jinja2, typer\nfrom pydantic import BaseModel\nclass M(BaseModel):\n    x: int = 1\nM(x=1)",
    ],
    "servertune gen uwsgi --cores 4": [
        sys.executable,
        "-m",
        "servertune",
        "gen",
        "uwsgi",
        "--cores",
        "4",
    ],
}


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def run(options: BenchOptions) -> Report:
    """Time each command in alternation and compare medians."""
    runs = QUICK_RUNS if options.quick else RUNS * options.repeat
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm the page cache once, untimed
        _time(argv)
    for i in range(runs):
        for name, argv in COMMANDS.items():
            samples[name].append(_time(argv))
        if options.progress:
            print(f"\rcold-start {i + 1}/{runs}", end="", file=sys.stderr, flush=True)
    if options.progress:
        print(file=sys.stderr)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    rows = [
        {
            "config": name,
            "runs": len(samples[name]),
            "median_ms": medians[name] * 1000,
            "min_ms": min(samples[name]) * 1000,
            "max_ms": max(samples[name]) * 1000,
        }
        for name in COMMANDS
    ]
    base, fair, model, ours = (medians[name] for name in COMMANDS)
    ratio = ours / base
    return Report(
        scenario="cold-start",
        runs=rows,
        ratios={
            "gen / import pydantic, jinja2, typer": ratio,
            "gen / + BaseModel": ours / fair,
            "gen / + one validated model": ours / model,
            "one validated model / import pydantic, jinja2, typer": model / base,
        },
        targets=[Target("cold start vs imports", ratio, "<=", TARGET_RATIO)],
        notes=[f"{runs} alternating runs per command; medians compared"],
        versions={"python": sys.version.split()[0]},
    )
