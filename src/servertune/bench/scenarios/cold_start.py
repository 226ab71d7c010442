"""Cold start of `servertune gen uwsgi --cores 4` against a one-option Typer command and its imports.

The target: within 1.15x of a one-command Typer app with one option that imports pydantic and
jinja2 (the last baseline below): what any Typer CLI pays to parse an option, whatever its own
code does. All are run alternately in fresh interpreters, so a noisy neighbour slows each alike;
medians are compared. The first baseline is `python -c "import pydantic, jinja2, typer"`.
`import pydantic` is lazy (BaseModel is not loaded until used), so a second, fairer baseline also
loads BaseModel, and a third builds and validates one one-field model: the least any CLI that
validates its input with Pydantic pays before its own code runs. A fourth runs a one-command
Typer app with one option: since Typer 0.29 parses options through a Pydantic `TypeAdapter`
each, that is what any Typer CLI with an option pays, whatever its own code does.

Every command reads its modules from bytecode, as an installed package does (pip compiles a
wheel's modules when it installs them): the scenario gives its children a private bytecode cache
(`PYTHONPYCACHEPREFIX`, a temporary directory filled by the untimed warm-up run and removed at
the end) and drops `PYTHONDONTWRITEBYTECODE`. The same directory is their `XDG_CACHE_HOME`, so
`gen` loads its templates compiled (servertune.templating) as every run after a user's first
does, and the user's own cache is neither read nor filled. Without that, a caller that sets the variable and
runs servertune from a source checkout would time servertune compiling the ~40 modules `gen`
imports on every run, while its installed dependencies load theirs compiled.

Where the difference goes is read once, untimed, from `python -X importtime`: the modules the
command imports that the one-option Typer command does not, summed by top-level package (servertune's
own by subpackage), in the report's notes. The timed ratio above is what the target judges.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.versions import dist_version

__all__ = ["ColdStart", "ColdStartSizes"]

TARGET_RATIO = 1.15


@dataclass(frozen=True)
class ColdStartSizes:
    """Fresh interpreters per command (each one a repeat)."""

    repeats: int


#: 30 runs give a stable median on a shared 2-core machine.
SIZES = QuickFull(quick=ColdStartSizes(repeats=3), full=ColdStartSizes(repeats=30))

ONE_OPTION_TYPER_APP = """\
import pydantic, jinja2, typer
app = typer.Typer()
@app.command()
def gen(cores: int = 1) -> None:
    print(cores)
app(["--cores", "4"])
"""

#: The target's denominator, and what it judges.
TYPER_FLOOR = "+ a one-option Typer command"
GEN = "servertune gen uwsgi --cores 4"

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
    # The least any Typer CLI pays to parse one option: Typer 0.29 builds a Pydantic TypeAdapter
    # per option it parses, which loads the same schema machinery a model build does.
    TYPER_FLOOR: [
        sys.executable,
        "-c",
        ONE_OPTION_TYPER_APP,
    ],
    GEN: [
        sys.executable,
        "-m",
        "servertune",
        "gen",
        "uwsgi",
        "--cores",
        "4",
    ],
}


BYTECODE_NOTE = (
    "every command reads its modules from bytecode (a private PYTHONPYCACHEPREFIX, filled by "
    "an untimed run), as an installed package does"
)

#: How many of the heaviest extra packages the report names.
IMPORTTIME_TOP = 8


def bytecode_environ(cache: str) -> dict[str, str]:
    """This process's environment, with bytecode (and compiled templates) written to and read
    from `cache` only."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ["PYTHONPYCACHEPREFIX"] = cache
    environ["XDG_CACHE_HOME"] = cache
    return environ


def _importtime(argv: list[str], environ: dict[str, str]) -> dict[str, int]:
    """Self import time in microseconds per module, from one `-X importtime` run of `argv`."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        check=True,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    times: dict[str, int] = {}
    for line in done.stderr.splitlines():
        fields = line.split("|")
        if len(fields) != 3 or not line.startswith("import time:"):
            continue
        self_us = fields[0].removeprefix("import time:").strip()
        if self_us.isdigit():  # the header line has no number
            times[fields[2].strip()] = int(self_us)
    return times


def _group(module: str) -> str:
    """`servertune.check.rules` -> `servertune.check`; `pydantic.types` -> `pydantic`."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "servertune" else parts[0]


def importtime_extra(baseline: dict[str, int], command: dict[str, int]) -> dict[str, int]:
    """Self import time (us) of the modules `command` imports and `baseline` does not, by group."""
    groups: dict[str, int] = {}
    for module, self_us in command.items():
        if module not in baseline:
            groups[_group(module)] = groups.get(_group(module), 0) + self_us
    return dict(sorted(groups.items(), key=lambda item: -item[1]))


def _time(argv: list[str], environ: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ
    )
    return time.perf_counter() - start


class ColdStart(BaseScenario[ColdStartSizes]):
    """Time each command in alternation and compare medians."""

    name = "cold-start"
    sizes = SIZES

    def setup(self, run: Run[ColdStartSizes]) -> None:
        """Fill the bytecode cache and warm the page cache: one untimed run per command."""
        cache = run.enter(tempfile.TemporaryDirectory(prefix="servertune-cold-start-"))
        self.environ = bytecode_environ(cache)
        for argv in COMMANDS.values():
            _time(argv, self.environ)
        self.extra = importtime_extra(
            _importtime(COMMANDS[TYPER_FLOOR], self.environ),
            _importtime(COMMANDS[GEN], self.environ),
        )

    def configs(self, run: Run[ColdStartSizes]) -> list[str]:
        """The four baselines, then servertune's command."""
        return list(COMMANDS)

    def measure(
        self, run: Run[ColdStartSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One fresh interpreter running the command to its end."""
        return {"config": config, "seconds": _time(COMMANDS[config], self.environ)}

    def summarize(self, run: Run[ColdStartSizes], results: Results) -> Report:
        """Medians, min and max per command; ratios to both baselines; the target."""
        medians = {name: results.median_of(name, "seconds") for name in COMMANDS}
        rows = []
        for name in COMMANDS:
            seconds = [row["seconds"] for row in results.rows(name)]
            rows.append(
                {
                    "config": name,
                    "runs": len(seconds),
                    "median_ms": medians[name] * 1000,
                    "min_ms": min(seconds) * 1000,
                    "max_ms": max(seconds) * 1000,
                }
            )
        base, fair, model, typer_floor, ours = (medians[name] for name in COMMANDS)
        ratio = ours / typer_floor
        return Report(
            scenario=self.name,
            runs=rows,
            ratios={
                "gen / import pydantic, jinja2, typer": ours / base,
                "gen / + BaseModel": ours / fair,
                "gen / + one validated model": ours / model,
                "gen / + a one-option Typer command": ratio,
                "one validated model / import pydantic, jinja2, typer": model / base,
                "one-option Typer command / import pydantic, jinja2, typer": typer_floor / base,
            },
            targets=[Target("cold start vs a one-option Typer command", ratio, "<=", TARGET_RATIO)],
            notes=[
                f"{run.repeats} alternating runs per command; medians compared",
                BYTECODE_NOTE,
                "-X importtime, one untimed run: imported beyond the one-option Typer command, self ms: "
                + ", ".join(
                    f"{group} {us / 1000:.1f}"
                    for group, us in list(self.extra.items())[:IMPORTTIME_TOP]
                )
                + f" (total {sum(self.extra.values()) / 1000:.1f}; model builds at import "
                "count as their module's)",
            ],
            # The floors above move with Pydantic's and Typer's releases.
            versions={
                "python": sys.version.split()[0],
                **{dist: dist_version(dist) for dist in ("pydantic", "typer", "jinja2")},
            },
        )
