"""The `servertune` command: parses options, calls the library, prints. Nothing is computed here.

Every workload option is generated from the Workload model's fields (name, description, unit,
range), so `--help`, validation errors and docs/reference.md all say the same thing.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import os
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer

from servertune.render import TARGETS, write_atomically
from servertune.sizing import Machine, Plan, PlanError, plan_for
from servertune.workload import Workload, WorkloadError, describe_allowed, load_workload

__all__ = ["app", "main"]

app = typer.Typer(
    name="servertune",
    help="Tuned, measured uWSGI / gunicorn / nginx configuration from a few workload numbers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])

#: CLI flag of each workload field, e.g. service_time_ms -> --service-time-ms.
FLAGS: dict[str, str] = {name: "--" + name.replace("_", "-") for name in Workload.model_fields}


def fail(message: str) -> typer.Exit:
    """Print one line to stderr and return the exit (code 2: bad input) for the caller to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _option_help(name: str) -> str:
    info = Workload.model_fields[name]
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    default = info.default
    shown_default = "unset" if default is None else str(default)
    # Parentheses, not brackets: typer's rich help would read "[...]" as markup and drop it.
    return f"{info.description} ({extra.get('unit', '')}; {describe_allowed(name)}; default {shown_default})"


def with_workload(func: F) -> F:
    """Add --workload FILE and one option per Workload field; pass the validated `workload`."""
    extra_params = [
        inspect.Parameter(
            "workload_file",
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(
                None,
                "--workload",
                help="TOML file with workload fields (flags win)",
                dir_okay=False,
            ),
            annotation=Optional[Path],  # noqa: UP045 - typer reads this at run time
        )
    ]
    for name in Workload.model_fields:
        extra_params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(
                    None,
                    FLAGS[name],
                    help=_option_help(name),
                    show_default=False,
                    rich_help_panel="Workload",
                ),
                annotation=Optional[str],  # noqa: UP045 - validated by the Workload model
            )
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path = kwargs.pop("workload_file")
        overrides = {name: kwargs.pop(name) for name in Workload.model_fields}
        given = {name: FLAGS[name] for name, value in overrides.items() if value is not None}
        try:
            workload = load_workload(
                path, overrides, flags={n: f"{n} ({f})" for n, f in given.items()}
            )
        except WorkloadError as error:
            raise fail(str(error)) from None
        return func(*args, workload=workload, **kwargs)

    # Resolve the string annotations (PEP 563) so typer sees the Annotated[..., Option] metadata.
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(func).parameters.values()
        if p.name != "workload"
    ]
    wrapper.__signature__ = inspect.Signature([*own, *extra_params])  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def with_flag(message: str) -> str:
    """A library message that starts with a workload field, with the field's flag beside it."""
    field, sep, rest = message.partition(": ")
    return f"{field} ({FLAGS[field]}): {rest}" if sep and field in FLAGS else message


def _plan(workload: Workload) -> Plan:
    try:
        plan = plan_for(workload)
    except PlanError as error:
        raise fail(with_flag(str(error))) from None
    for warning in plan.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return plan


GenTarget = enum.Enum("GenTarget", {name: name for name in [*TARGETS, "all"]}, type=str)  # type: ignore[misc]


@app.command()
@with_workload
def gen(
    target: Annotated[GenTarget, typer.Argument(help="what to generate; 'all' is every file")],
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--out",
            help="write into this directory (atomically) instead of stdout",
            file_okay=False,
        ),
    ] = None,
    *,
    workload: Workload,
) -> None:
    """Generate config files: uwsgi, nginx, gunicorn, ... or all of them."""
    plan = _plan(workload)
    names = list(TARGETS) if target.value == "all" else [target.value]
    files = {TARGETS[name].filename: TARGETS[name].render(plan) for name in names}
    if out is None:
        for filename, text in files.items():
            if len(files) > 1:
                sys.stdout.write(f"# ==> {filename} <==\n")
            sys.stdout.write(text)
        return
    try:
        written = write_atomically(files, out)
    except OSError as error:
        raise fail(f"--out: cannot write to {out}: {error.strerror}") from None
    for path in written:
        typer.echo(f"wrote {path}", err=True)


@app.command()
@with_workload
def explain(*, workload: Workload) -> None:
    """Print every derived number with its unit and the reason it has."""
    from servertune.explain import format_plan

    typer.echo(format_plan(_plan(workload)))


@app.command()
@with_workload
def plan(
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for machines")] = False,
    *,
    workload: Workload,
) -> None:
    """Print the plan (the numbers only, or --json with units and reasons)."""
    result = _plan(workload)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        for name, value, unit, _ in result.rows():
            typer.echo(f"{name} = {value}" + (f"  # {unit}" if unit else ""))


@app.command()
def bench(
    scenario: Annotated[str, typer.Argument(help="scenario to run; --list shows them")] = "",
    quick: Annotated[bool, typer.Option("--quick", help="a smoke run of a few seconds")] = False,
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, max=20, help="runs per configuration")
    ] = 1,
    json_file: Annotated[
        Optional[Path], typer.Option("--json", help="write the results as JSON", dir_okay=False)  # noqa: UP045
    ] = None,
    plot_file: Annotated[
        Path | None,
        typer.Option("--plot", help="write a PNG plot (needs servertune[plot])", dir_okay=False),
    ] = None,
    python: Annotated[
        str | None,
        typer.Option("--python", help="run under another interpreter, where the scenario can"),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="list the scenarios and exit")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
) -> None:
    """Run a bundled benchmark: servertune's default side by side with the naive one."""
    from servertune.bench import BenchOptions, load_scenario, scenario_names, summary
    from servertune.bench.report import BenchInputError

    names = scenario_names()
    if list_ or not scenario:
        for name in names:
            typer.echo(f"{name:16} {summary(name)}")
        return
    if scenario not in names:
        raise fail(f"scenario: must be one of {', '.join(names)}; got {scenario!r}")
    if plot_file is not None and plot_file.suffix.lower() != ".png":
        raise fail(f"--plot: must name a .png file; got {str(plot_file)!r}")
    # A run takes minutes: refuse an output that cannot be written before it starts, not after.
    for flag, target in (("--json", json_file), ("--plot", plot_file)):
        if target is not None and not _writable(target):
            raise fail(f"{flag}: cannot write {target} (its directory is missing or read-only)")
    module = load_scenario(scenario)
    options = BenchOptions(quick=quick, repeat=repeat, progress=not no_progress, python=python)
    try:
        report = module.run(options)
    except BenchInputError as error:
        raise fail(str(error)) from None
    typer.echo(report.table())
    try:
        if json_file is not None:
            report.write_json(json_file)
            typer.echo(f"wrote {json_file}", err=True)
        if plot_file is not None:
            plotter = getattr(module, "plot", None)
            if plotter is None:
                typer.echo(f"note: scenario {scenario} has no plot", err=True)
            else:
                plotter(report, plot_file)
                typer.echo(f"wrote {plot_file}", err=True)
    except OSError as error:
        raise fail(f"cannot write the results: {error}") from None


def _writable(path: Path) -> bool:
    """Whether `path` can be created or replaced: an existing, writable directory holds it."""
    directory = path.parent if str(path.parent) else Path(".")
    return directory.is_dir() and os.access(directory, os.W_OK | os.X_OK) and not path.is_dir()


def main() -> None:
    """Console entry point: usage errors are one `error:` line with exit code 2, like bad values."""
    try:
        code = app(standalone_mode=False)
    except Exception as error:
        # typer's (vendored) click raises UsageError / BadParameter / ClickException here; they
        # all carry `exit_code` and `format_message()`. Anything else is a bug: let it surface.
        message = getattr(error, "format_message", None)
        if message is None or not hasattr(error, "exit_code"):
            raise
        text = " ".join(str(message()).split())
        if text:  # no_args_is_help raises with an empty message after printing the help
            typer.echo(f"error: {text}", err=True)
        sys.exit(int(error.exit_code))
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


# --- measure and advise (issue 6) ----------------------------------------------------------------


class MeasureInterface(enum.StrEnum):
    """How to call the app: by its signature, or forced."""

    auto = "auto"
    wsgi = "wsgi"
    asgi = "asgi"


@app.command()
def measure(
    app_spec: Annotated[
        str, typer.Argument(metavar="APP", help="the WSGI or ASGI app, as module:callable")
    ],
    path: Annotated[str, typer.Option("--path", help="request target, e.g. /items?id=1")] = "/",
    method: Annotated[str, typer.Option("--method", help="HTTP method")] = "GET",
    requests: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--requests", min=1, max=1_000_000, help="requests to measure (default 50)"),
    ] = None,
    warmup: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--warmup", min=0, max=10_000, help="requests run first, not measured (default 3)"
        ),
    ] = None,
    max_seconds: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option("--max-seconds", min=0.1, help="stop measuring after this long (default 60)"),
    ] = None,
    header: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--header", "-H", help="'Name: value' request header; repeatable"),
    ] = None,
    data: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--data", help="request body (UTF-8)"),
    ] = None,
    interface: Annotated[
        MeasureInterface, typer.Option("--interface", help="WSGI or ASGI; auto reads the signature")
    ] = MeasureInterface.auto,
    app_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--app-dir",
            help="import the app from here (default: the current directory)",
            file_okay=False,
        ),
    ] = None,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--out", help="write a workload TOML that `gen --workload` reads", dir_okay=False
        ),
    ] = None,
) -> None:
    """Measure an app's service time and cpu_fraction in process, and write a workload file."""
    from servertune import measure as m

    headers: list[tuple[str, str]] = []
    for item in header or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header: must be 'Name: value'; got {item!r}")
        headers.append((name.strip(), value.strip()))
    defaults = {"requests": requests, "warmup": warmup, "max_seconds": max_seconds}
    try:
        result = m.measure_app(
            app_spec,
            path=path,
            method=method,
            headers=headers,
            body=(data or "").encode(),
            interface=None if interface is MeasureInterface.auto else interface.value,  # type: ignore[arg-type]
            app_dir=None if app_dir is None else str(app_dir),
            **{k: v for k, v in defaults.items() if v is not None},  # type: ignore[arg-type]
        )
    except m.MeasureError as error:
        raise fail(str(error)) from None
    typer.echo(result.table())
    if out is not None:
        try:
            write_atomically({out.name: result.to_toml()}, out.parent)
        except OSError as error:
            raise fail(f"--out: cannot write {out}: {error.strerror}") from None
        typer.echo(f"wrote {out}", err=True)


@app.command()
@with_workload
def advise(
    ctx: typer.Context,
    parallel: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--parallel", help="a `bench parallel --json` report to cite", dir_okay=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for machines")] = False,
    *,
    workload: Workload,
) -> None:
    """Which execution model fits: processes x threads, asyncio or sub-interpreters, and why."""
    from servertune.advise import advise as advise_workload
    from servertune.advise import read_measured, read_parallel

    # The [measured] spread lives beside [workload] in the file `measure --out` wrote.
    source = ctx.params.get("workload_file")
    measured = read_measured(source) if source is not None else None
    try:
        report = read_parallel(parallel) if parallel is not None else None
    except ValueError as error:
        raise fail(str(error)) from None
    advice = advise_workload(workload, measured=measured, parallel=report, plan=_plan(workload))
    typer.echo(json.dumps(advice.to_json(), indent=2) if as_json else advice.format())


# --- check (issue 12) ----------------------------------------------------------------------------


class CheckFormat(enum.StrEnum):
    """How `check` prints its findings."""

    text = "text"
    json = "json"
    sarif = "sarif"


class FailOn(enum.StrEnum):
    """The lowest severity that makes `check` exit 1."""

    error = "error"
    warning = "warning"
    info = "info"


def _load_balancer_names() -> list[str]:
    from servertune.check.balancers import LOAD_BALANCERS

    return list(LOAD_BALANCERS)


LoadBalancerName = enum.Enum(  # type: ignore[misc]
    "LoadBalancerName", {name: name for name in _load_balancer_names()}, type=str
)


@app.command()
def check(
    files: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Argument(help="gunicorn *.py, uWSGI *.ini and nginx configs (includes are followed)"),
    ] = None,
    workload_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--workload",
            help="TOML workload: also compare each number with the plan's, and use its LB idle timeout",
            dir_okay=False,
        ),
    ] = None,
    lb: Annotated[
        Optional[LoadBalancerName],  # noqa: UP045
        typer.Option(
            "--lb", help="the load balancer in front, by name (its documented idle timeout)"
        ),
    ] = None,
    lb_idle_timeout: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--lb-idle-timeout", min=1, max=4000, help="the load balancer's idle timeout (s)"
        ),
    ] = None,
    cores: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--cores",
            min=1,
            max=1024,
            help="cores of the server that runs these configs (default: this machine's limit)",
        ),
    ] = None,
    output_format: Annotated[
        CheckFormat,
        typer.Option("--format", help="text, json, or sarif (2.1.0) for CI annotations"),
    ] = CheckFormat.text,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="exit 1 on findings of this severity or worse")
    ] = FailOn.warning,
) -> None:
    """Audit existing configs across layers: exit 0 clean, 1 findings, 2 unreadable input."""
    from servertune.check import (
        LOAD_BALANCERS,
        CheckInputError,
        LoadBalancer,
        Severity,
        check_files,
        plan_for_check,
    )
    from servertune.check.output import FORMATS

    if not files:
        raise fail("check: name at least one config file")
    if lb is not None and lb_idle_timeout is not None:
        raise fail("--lb and --lb-idle-timeout: give one of them, not both")
    plan = None
    if workload_file is not None:
        try:
            plan = plan_for_check(load_workload(workload_file))
        except WorkloadError as error:
            raise fail(str(error)) from None
        except PlanError as error:
            raise fail(f"--workload: {error}") from None
    balancer = None
    if lb is not None:
        balancer = LOAD_BALANCERS[lb.value]
    elif lb_idle_timeout is not None:
        balancer = LoadBalancer("load balancer", lb_idle_timeout, "--lb-idle-timeout", "")
    elif plan is not None:
        balancer = LoadBalancer(
            "workload's load balancer", plan.workload.lb_idle_timeout_s, "--workload", ""
        )
    machine = Machine.read()
    if cores is not None:
        machine = machine.model_copy(update={"cores": cores, "cores_source": "--cores"})
    try:
        result = check_files(files, lb=balancer, machine=machine, plan=plan)
    except CheckInputError as error:
        raise fail(str(error)) from None
    typer.echo(FORMATS[output_format.value](result))
    worst = result.worst()
    if worst is not None and worst >= Severity[fail_on.value]:
        raise typer.Exit(code=1)
