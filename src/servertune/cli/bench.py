"""`servertune bench SCENARIO`: run a bundled benchmark and print (and write) its report.

Flags only some scenarios take are declared here once and handed, by name, to
`servertune.bench.scenario_options`, which owns which scenario takes which.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from servertune.cli.options import check_output_path, fail

__all__ = ["bench"]

Scenario = Annotated[str, typer.Argument(help="scenario to run; --list shows them")]
AppSpec = Annotated[
    str,
    typer.Argument(metavar="[APP]", help="`bench app` only: the WSGI or ASGI app, module:callable"),
]
Quick = Annotated[bool, typer.Option("--quick", help="a smoke run of a few seconds")]
Thorough = Annotated[
    bool,
    typer.Option(
        "--thorough",
        help="`bench app`: every candidate at every level, every repeat (the default run "
        "measures only what the verdict still needs)",
    ),
]
Repeat = Annotated[
    int,
    typer.Option("--repeat", min=1, max=20, help="multiplies the scenario's interleaved repeats"),
]
JsonFile = Annotated[
    Optional[Path], typer.Option("--json", help="write the results as JSON", dir_okay=False)  # noqa: UP045
]
PlotFile = Annotated[
    Path | None,
    typer.Option("--plot", help="write a PNG plot (needs servertune\\[plot])", dir_okay=False),
]
Python = Annotated[
    str | None,
    typer.Option("--python", help="run under another interpreter, where the scenario can"),
]
ListOnly = Annotated[bool, typer.Option("--list", help="list the scenarios and exit")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="no progress bar")]
Paths = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option("--path", help="`bench app`: request path, /x or /x=WEIGHT; repeatable"),
]
WorkloadFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--workload", help="`bench app`: workload TOML for the rest", dir_okay=False),
]
Against = Annotated[
    Optional[list[Path]],  # noqa: UP045
    typer.Option(
        "--against",
        help="`bench app`: your gunicorn .py, uWSGI .ini, or uvicorn/granian script or "
        "Procfile; repeatable",
    ),
]
Chdir = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--chdir", help="`bench app`: import the app from here", file_okay=False),
]
PythonPath = Annotated[
    Optional[list[Path]],  # noqa: UP045
    typer.Option("--pythonpath", help="`bench app`: add to the servers' PYTHONPATH"),
]
Static = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option("--static", help="`bench app`: nginx serves URL_PREFIX/ from DIR; repeatable"),
]
Interface = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--interface",
        help="`bench app`: wsgi or asgi (default: detected; a Django project's wsgi.py and "
        "asgi.py are both benched, to compare them)",
    ),
]
Concurrency = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--concurrency", help="`bench app`: connections per level, e.g. 8,32,128"),
]
Only = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--only", help="`bench app`: run only these candidates, e.g. a,b"),
]
ReportFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--report", help="write a self-contained HTML report", dir_okay=False),
]
Replay = Annotated[
    Optional[list[Path]],  # noqa: UP045
    typer.Option(
        "--replay",
        help="`bench app`: the route mix of this access log instead of --path, and its arrival "
        "times replayed at 1, 2 and 4 x its pace (repeat for a rotated set)",
        dir_okay=False,
    ),
]
ReplayFormat = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--replay-format", metavar="NAME[:SPEC]", help="`bench app`: --replay's format"),
]
KeepLog = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--keep-log",
        help="`bench app`: keep each candidate's access log (nginx's, with "
        "$upstream_response_time, or HAProxy's HTTP log) in this directory",
        file_okay=False,
    ),
]
Corpus = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--corpus",
        help="`bench check-speed`: also time one check of every deployment file in DIR",
        file_okay=False,
    ),
]


def _note(text: str) -> None:
    typer.echo(text, err=True)


def _check_outputs(
    json_file: Path | None, plot_file: Path | None, report_file: Path | None
) -> None:
    """A run takes minutes: refuse an output that cannot be written before it starts, not after."""
    if plot_file is not None and plot_file.suffix.lower() != ".png":
        raise fail(f"--plot: must name a .png file; got {str(plot_file)!r}")
    check_output_path("--json", json_file)
    check_output_path("--plot", plot_file)
    if report_file is not None and report_file.suffix.lower() not in (".html", ".htm"):
        raise fail(f"--report: must name an .html file; got {str(report_file)!r}")
    check_output_path("--report", report_file)


def bench(
    scenario: Scenario = "",
    app_spec: AppSpec = "",
    quick: Quick = False,
    thorough: Thorough = False,
    repeat: Repeat = 1,
    json_file: JsonFile = None,
    plot_file: PlotFile = None,
    python: Python = None,
    list_: ListOnly = False,
    no_progress: NoProgress = False,
    path: Paths = None,
    workload_file: WorkloadFile = None,
    against: Against = None,
    chdir: Chdir = None,
    pythonpath: PythonPath = None,
    static: Static = None,
    interface: Interface = None,
    concurrency: Concurrency = None,
    only: Only = None,
    report_file: ReportFile = None,
    replay: Replay = None,
    replay_format: ReplayFormat = None,
    keep_log: KeepLog = None,
    corpus: Corpus = None,
) -> None:
    """Run a bundled benchmark: servertune's default side by side with the naive one."""
    from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names
    from servertune.bench.harness.report import BenchAppError, BenchInputError
    from servertune.bench.outputs import require_plotting, write_outputs
    from servertune.bench.scenario_options import scenario_extra

    names = scenario_names()
    if list_ or not scenario:
        for name in names:
            typer.echo(f"{name:16} {load_scenario(name).summary}")
        return
    if scenario not in names:
        raise fail(f"scenario: must be one of {', '.join(names)}; got {scenario!r}")
    _check_outputs(json_file, plot_file, report_file)
    given = {"--path": path, "--workload": workload_file, "--against": against, "--chdir": chdir,
             "--pythonpath": pythonpath, "--static": static, "--interface": interface,
             "--concurrency": concurrency, "--only": only, "--replay": replay,
             "--replay-format": replay_format, "--keep-log": keep_log, "APP": app_spec,
             "--corpus": corpus}  # fmt: skip
    command = shlex.join(["servertune", *sys.argv[1:]])
    chosen = load_scenario(scenario)
    try:
        extra = {"command": command, **scenario_extra(scenario, given, _note)}
        if json_file is not None:  # bench app writes a corrected workload beside it
            extra["json_file"] = str(json_file)
        require_plotting(chosen, plot_file, report_file)
    except BenchInputError as error:
        raise fail(str(error)) from None
    if thorough and (quick or chosen.sizes.thorough is None):
        raise fail(
            "--thorough: "
            + ("not with --quick" if quick else f"scenario {scenario} has one full run already")
        )
    options = BenchOptions(
        quick=quick, thorough=thorough, repeat=repeat, progress=not no_progress, python=python,
        extra=extra,
    )  # fmt: skip
    try:
        report = run_scenario(chosen, options)
    except BenchInputError as error:
        raise fail(str(error)) from None
    except BenchAppError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    typer.echo(report.table())
    if report.elapsed_s is not None:
        minutes, seconds = divmod(round(report.elapsed_s), 60)
        typer.echo(f"took {minutes} min {seconds:02d} s", err=True)
    outputs = {"--json": json_file, "--plot": plot_file, "--report": report_file}
    try:
        write_outputs(report, chosen, outputs, command, _note)
    except OSError as error:
        raise fail(f"cannot write the results: {error}") from None
