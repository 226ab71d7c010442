"""The `servertune` command: parses options, calls the library, prints. Nothing is computed here.

Every workload option is generated from the Workload model's fields (name, description, unit,
range), so `--help`, validation errors and docs/reference.md all say the same thing.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import enum
import errno
import functools
import inspect
import json
import os
import shlex
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer
from typer.core import TyperCommand, TyperOption

_display_type_rich = TyperOption.display_type_rich


def _switch_shows_no_type(self: TyperOption, ctx: Any) -> str | None:
    """A switch (`--json`, `--help`, `--quick`) takes no value: typer 0.29 labels it `<bool>`,
    which reads as if it wanted one. Help shows no type for it."""
    if self.is_flag and self.metavar is None:
        return None
    return _display_type_rich(self, ctx)


TyperOption.display_type_rich = _switch_shows_no_type  # type: ignore[method-assign]


@contextlib.contextmanager
def _without_pydantic_plugins() -> Iterator[None]:
    """Build servertune's own models without Pydantic's plugin scan, then restore the setting.

    Pydantic looks for plugins (entry points of every installed distribution) when it builds the
    first model; in a full environment that scan is a measurable share of `servertune gen`'s
    cold start (bench cold-start). Pydantic's documented switch turns it off while the CLI's
    models are built; models built later (an app that `measure` imports) still get plugins.
    """
    before = os.environ.get(PYDANTIC_PLUGINS_VARIABLE)
    if before is None:
        os.environ[PYDANTIC_PLUGINS_VARIABLE] = "__all__"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PYDANTIC_PLUGINS_VARIABLE, None)


#: Pydantic's switch for its plugins (docs: "Pydantic plugins"); "__all__" disables them all.
PYDANTIC_PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"

with _without_pydantic_plugins():
    from servertune.render import TARGETS, fitting, render_target, unused_fields, write_atomically
    from servertune.sizing import Machine, Plan, PlanError, plan_for
    from servertune.workload import Workload, WorkloadError, describe_allowed, describe_kind
    from servertune.workload_file import (
        WorkloadFileError,
        load_workload,
        measured_warnings,
        read_workload_file,
    )

__all__ = ["app", "main"]

app = typer.Typer(
    name="servertune",
    help="Tuned, measured uWSGI / gunicorn / nginx configuration from a few workload numbers.",
    no_args_is_help=True,
    # Typer's own --install-completion / --show-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from servertune import __version__

        typer.echo(f"servertune {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="print the version and exit",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Tuned, measured uWSGI / gunicorn / nginx configuration from a few workload numbers."""


F = TypeVar("F", bound=Callable[..., Any])

#: CLI flag of each workload field, e.g. service_time_ms -> --service-time-ms.
FLAGS: dict[str, str] = {name: "--" + name.replace("_", "-") for name in Workload.model_fields}


def fail(message: str) -> typer.Exit:
    """Print one line to stderr and return the exit (code 2: bad input) for the caller to raise."""
    typer.echo(f"error: {one_line(message)}", err=True)
    return typer.Exit(code=2)


def one_line(text: str) -> str:
    """`text` with control characters escaped as Python writes them: a file name or value with a
    newline (or an ANSI escape) in it cannot split the `error:` line or recolour the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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
    for name, info in Workload.model_fields.items():
        if info.annotation is bool:  # a switch: --sync-views / --no-sync-views, no value
            option = typer.Option(
                None,
                f"{FLAGS[name]}/--no-{FLAGS[name][2:]}",
                help=_option_help(name),
                show_default=False,
                rich_help_panel="Workload",
            )
            annotation: Any = Optional[bool]  # noqa: UP045 - typer reads this at run time
        else:
            option = typer.Option(
                None,
                FLAGS[name],
                metavar=f"<{describe_kind(name)}>",
                help=_option_help(name),
                show_default=False,
                rich_help_panel="Workload",
            )
            annotation = Optional[str]  # noqa: UP045 - validated by the Workload model
        extra_params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
            )
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path = kwargs.pop("workload_file")
        overrides = {name: kwargs.pop(name) for name in Workload.model_fields}
        given = {name: FLAGS[name] for name, value in overrides.items() if value is not None}
        # Where each field came from, for errors the plan raises later: a min/max conflict in
        # the file is reported against the file's field, not a flag the user never gave.
        in_file = dict.fromkeys(Workload.model_fields, f"--workload {path}") if path else {}
        _FIELD_SOURCES.set({**FLAGS, **in_file, **given})
        try:
            workload = load_workload(
                path,
                overrides,
                flags={n: f"{n} ({f})" for n, f in given.items()},
                file_label=f"--workload {path}",
            )
        except WorkloadFileError as error:
            raise fail(f"--workload: {error}") from None
        except WorkloadError as error:
            raise fail(str(error)) from None
        if path is not None:
            # The file read cleanly just above; its [measured] table may contradict the workload.
            for warning in measured_warnings(read_workload_file(path).measured, workload):
                typer.echo(f"warning: {warning}", err=True)
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


#: Each workload field's source in this command: its flag, or `--workload FILE` for a field the
#: file may have set (set by `with_workload`; flags alone by default).
_FIELD_SOURCES: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar(
    "_FIELD_SOURCES", default=FLAGS
)


def with_flag(message: str) -> str:
    """A library message that starts with a workload field, with its flag (or file) beside it."""
    field, sep, rest = message.partition(": ")
    sources = _FIELD_SOURCES.get()
    return (
        f"{field} ({sources.get(field, FLAGS.get(field))}): {rest}"
        if sep and field in FLAGS
        else message
    )


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
    # `all` is every file that can serve this app; a named target that cannot is refused.
    names = fitting(workload.interface) if target.value == "all" else [target.value]

    def render(plan: Plan) -> dict[str, str]:
        return {TARGETS[name].filename: render_target(name, plan) for name in names}

    try:
        files = render(plan)
    except PlanError as error:
        raise fail(with_flag(str(error))) from None
    # One consistent behaviour for an option the chosen files do not use: a `note:` on stderr
    # (docs/reference.md, "Options a target does not use"); the files are written all the same.
    given = [n for n, source in _FIELD_SOURCES.get().items() if source == FLAGS.get(n)]
    for name in unused_fields(workload, plan, given, render):
        typer.echo(
            f"note: {FLAGS[name]} changes nothing in {', '.join(files)}; it applies to other targets",
            err=True,
        )
    if out is None:
        for filename, text in files.items():
            if len(files) > 1:
                sys.stdout.write(f"# ==> {filename} <==\n")
            sys.stdout.write(text)
        return
    try:
        written = write_atomically(files, out)
    except OSError as error:
        raise fail(f"--out: cannot write to {error.filename or out}: {error.strerror}") from None
    for path in written:
        typer.echo(f"wrote {path}", err=True)


@app.command()
@with_workload
def explain(ctx: typer.Context, *, workload: Workload) -> None:
    """Print every derived number with its unit and the reason it has."""
    from servertune.explain import format_plan

    typer.echo(format_plan(_plan(workload)))
    # A workload file `measure --log` wrote says where each of its numbers came from.
    source = ctx.params.get("workload_file")
    if source is not None:
        try:
            sources = read_workload_file(source).sources
        except WorkloadFileError as error:
            raise fail(f"--workload: {error}") from None
        if sources:
            typer.echo("\nsources:")
            for name, text in sources.items():
                typer.echo(f"  {name} = {getattr(workload, name)}: {text}")


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
    app_spec: Annotated[
        str,
        typer.Argument(
            metavar="[APP]", help="`bench app` only: the WSGI or ASGI app, module:callable"
        ),
    ] = "",
    quick: Annotated[bool, typer.Option("--quick", help="a smoke run of a few seconds")] = False,
    thorough: Annotated[
        bool,
        typer.Option(
            "--thorough",
            help="`bench app`: every candidate at every level, every repeat (the default run "
            "measures only what the verdict still needs)",
        ),
    ] = False,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat", min=1, max=20, help="multiplies the scenario's interleaved repeats"
        ),
    ] = 1,
    json_file: Annotated[
        Optional[Path], typer.Option("--json", help="write the results as JSON", dir_okay=False)  # noqa: UP045
    ] = None,
    plot_file: Annotated[
        Path | None,
        typer.Option("--plot", help="write a PNG plot (needs servertune\\[plot])", dir_okay=False),
    ] = None,
    python: Annotated[
        str | None,
        typer.Option("--python", help="run under another interpreter, where the scenario can"),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="list the scenarios and exit")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
    path: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--path", help="`bench app`: request path, /x or /x=WEIGHT; repeatable"),
    ] = None,
    workload_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--workload", help="`bench app`: workload TOML for the rest", dir_okay=False),
    ] = None,
    against: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--against",
            help="`bench app`: your gunicorn .py, uWSGI .ini, or uvicorn/granian script or "
            "Procfile; repeatable",
        ),
    ] = None,
    chdir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--chdir", help="`bench app`: import the app from here", file_okay=False),
    ] = None,
    pythonpath: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option("--pythonpath", help="`bench app`: add to the servers' PYTHONPATH"),
    ] = None,
    static: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--static", help="`bench app`: nginx serves URL_PREFIX/ from DIR; repeatable"),
    ] = None,
    interface: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--interface",
            help="`bench app`: wsgi or asgi (default: detected; a Django project's wsgi.py and "
            "asgi.py are both benched, to compare them)",
        ),
    ] = None,
    concurrency: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--concurrency", help="`bench app`: connections per level, e.g. 8,32,128"),
    ] = None,
    only: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--only", help="`bench app`: run only these candidates, e.g. a,b"),
    ] = None,
    report_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--report", help="write a self-contained HTML report", dir_okay=False),
    ] = None,
    replay: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--replay",
            help="`bench app`: the route mix of this access log instead of --path (repeat for "
            "a rotated set)",
            dir_okay=False,
        ),
    ] = None,
    replay_format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--replay-format", metavar="NAME[:SPEC]", help="`bench app`: --replay's format"
        ),
    ] = None,
    keep_log: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--keep-log",
            help="`bench app`: keep each candidate's nginx access log (with "
            "$upstream_response_time) in this directory",
            file_okay=False,
        ),
    ] = None,
    corpus: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--corpus",
            help="`bench check-speed`: also time one check of every deployment file in DIR",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Run a bundled benchmark: servertune's default side by side with the naive one."""
    from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names
    from servertune.bench.harness.report import BenchAppError, BenchInputError

    names = scenario_names()
    if list_ or not scenario:
        for name in names:
            typer.echo(f"{name:16} {load_scenario(name).summary}")
        return
    if scenario not in names:
        raise fail(f"scenario: must be one of {', '.join(names)}; got {scenario!r}")
    if plot_file is not None and plot_file.suffix.lower() != ".png":
        raise fail(f"--plot: must name a .png file; got {str(plot_file)!r}")
    # A run takes minutes: refuse an output that cannot be written before it starts, not after.
    check_output_path("--json", json_file)
    check_output_path("--plot", plot_file)
    if report_file is not None and report_file.suffix.lower() not in (".html", ".htm"):
        raise fail(f"--report: must name an .html file; got {str(report_file)!r}")
    check_output_path("--report", report_file)
    app_flags = {"--path": path, "--workload": workload_file, "--against": against,
                 "--chdir": chdir, "--pythonpath": pythonpath, "--static": static,
                 "--interface": interface, "--concurrency": concurrency, "--only": only,
                 "--replay": replay, "--replay-format": replay_format,
                 "--keep-log": keep_log, "APP": app_spec}  # fmt: skip
    extra: dict[str, object] = {"command": shlex.join(["servertune", *sys.argv[1:]])}
    if scenario == "app":
        profile = None
        if replay:
            if path:
                raise fail("--replay: give --path or --replay, not both")
            path, profile = _replay_paths(replay, replay_format)
        elif replay_format is not None:
            raise fail("--replay-format: goes with --replay")
        given: Any = _app_input(
            app_spec, path, workload_file, against, chdir, pythonpath, static,
            interface, concurrency, only,
        )  # fmt: skip
        try:
            extra["app"] = dataclasses.replace(given, replay=profile, keep_log=keep_log)
        except BenchInputError as error:
            raise fail(str(error)) from None
    elif given := [flag for flag, value in app_flags.items() if value]:
        raise fail(f"{given[0]}: only `servertune bench app` takes it")
    if corpus is not None:
        if scenario != "check-speed":
            raise fail("--corpus: only `servertune bench check-speed` takes it")
        extra["corpus"] = str(corpus)
    chosen = load_scenario(scenario)
    if (plot_file is not None and chosen.has_plot) or report_file is not None:
        from servertune.bench.harness.needs import require

        try:  # the report's charts are matplotlib's too: said before the run, not after it
            require("--plot" if plot_file is not None else "--report", ("matplotlib",))
        except BenchInputError as error:
            raise fail(str(error)) from None
    if thorough and (quick or chosen.sizes.thorough is None):
        raise fail(
            "--thorough: "
            + ("not with --quick" if quick else f"scenario {scenario} has one full run already")
        )
    options = BenchOptions(
        quick=quick,
        thorough=thorough,
        repeat=repeat,
        progress=not no_progress,
        python=python,
        extra=extra,
    )
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
    try:
        if json_file is not None:
            report.write_json(json_file)
            typer.echo(f"wrote {json_file}", err=True)
        if plot_file is not None:
            if not chosen.has_plot:
                typer.echo(f"note: scenario {scenario} has no plot", err=True)
            else:
                chosen.plot(report, plot_file)
                typer.echo(f"wrote {plot_file}", err=True)
        if report_file is not None:
            from servertune.bench.harness.html_report import write_html

            write_html(report, report_file, command=str(extra["command"]))
            typer.echo(f"wrote {report_file}", err=True)
    except OSError as error:
        raise fail(f"cannot write the results: {error}") from None


def _replay_paths(logs: list[Path], log_format: str | None) -> tuple[list[str], Any]:
    """`bench app --replay`: the log's busiest routes as `--path P=WEIGHT` values, and its
    arrival profile."""
    from servertune.logs import LogError, LogFormatError, read_traffic
    from servertune.logs.choose import choose_format
    from servertune.logs.replay import arrival_profile, route_mix

    try:
        traffic = read_traffic(logs, choose_format(log_format, None, logs[0]))
        traffic.require_timing()
        mix, covered = route_mix(traffic)
        profile = arrival_profile(traffic)
    except LogFormatError as error:
        raise fail(f"--replay-format: {error}") from None
    except LogError as error:
        raise fail(f"--replay: {error}") from None
    typer.echo(
        f"replaying {len(mix)} routes of {traffic.source}: {covered:.1%} of its "
        f"{traffic.timed:,} requests, at the arrival profile of {profile.describe()}",
        err=True,
    )
    return [f"{p}={w:g}" for p, w in mix], profile


def _app_input(
    app_spec: str,
    paths: list[str] | None,
    workload_file: Path | None,
    against: list[Path] | None,
    chdir: Path | None,
    pythonpath: list[Path] | None,
    static: list[str] | None,
    interface: str | None = None,
    concurrency: str | None = None,
    only: str | None = None,
) -> object:
    """`bench app`'s validated input (one `error:` line and exit 2 when it is not)."""
    from servertune.bench.harness.report import BenchInputError
    from servertune.bench.scenarios.app import AppInput, parse_concurrency, parse_path

    if interface is not None and interface not in ("wsgi", "asgi"):
        raise fail(f"--interface: must be wsgi or asgi; got {interface[:20]!r}")
    if only is not None and not only.strip(" ,"):
        raise fail("--only: name at least two candidates, comma-separated")
    if not app_spec:
        raise fail("APP: `servertune bench app` needs the app, e.g. mysite.wsgi:application")
    try:
        return AppInput(
            app=app_spec,
            paths=tuple(parse_path(p) for p in (paths or ["/"])),
            workload=workload_file,
            against=tuple(against or ()),
            chdir=chdir,
            pythonpath=tuple(pythonpath or ()),
            static=",".join(static) if static else None,
            interface=interface,  # type: ignore[arg-type]
            concurrency=parse_concurrency(concurrency) if concurrency is not None else (),
            only=tuple(dict.fromkeys(n.strip() for n in (only or "").split(",") if n.strip())),
        )
    except BenchInputError as error:
        raise fail(str(error)) from None


def check_output_path(flag: str, path: Path | None) -> None:
    """Refuse, before any work, an output file that could not be written at the end.

    Creating (and removing) a scratch file next to it is the only honest test: root passes every
    permission check, yet cannot create files in /proc or on a read-only mount.
    """
    if path is None:
        return
    try:
        _check_output_path(flag, path)
    except OSError as error:  # a name too long (ENAMETOOLONG), a loop of symlinks, ...
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None


def _check_output_path(flag: str, path: Path) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise fail(f"{flag}: cannot write {path}: a directory is in the way")
    from servertune.files import SpecialFileError, refuse_special_file

    try:
        refuse_special_file(path)
    except SpecialFileError as error:
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise fail(f"{flag}: cannot write {path}: {directory} {what}")
    try:
        fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=directory)
    except OSError as error:
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None
    os.close(fd)
    os.unlink(scratch)


def _empty_option(argv: list[str]) -> str | None:
    """The first `--flag ''` or `--flag=` in argv: no option of servertune means anything empty
    (an empty --out would be the current directory, an empty --json a file named '')."""
    for flag, value in zip(argv, [*argv[1:], None], strict=True):
        if flag.startswith("--") and "=" not in flag and value == "":
            return flag
        if flag.startswith("--") and flag.endswith("=") and flag.count("=") == 1:
            return flag[:-1]
    return None


def _quiet_broken_stdout() -> None:
    """After stdout failed (a full disk, a closed pipe), point it at /dev/null so the
    interpreter's last flush at exit cannot print a second error."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    """Console entry point: usage errors are one `error:` line with exit code 2, like bad values.

    Bare `servertune` is a request for help, not a mistake: the help goes to stdout, exit 0.
    """
    if len(sys.argv) == 1:
        sys.argv.append("--help")
    empty = _empty_option(sys.argv[1:])
    if empty is not None:
        typer.echo(f"error: {empty}: empty value", err=True)
        sys.exit(2)
    # Typer turns every registered command into a click command (all ~20 workload options of
    # each) before parsing: when argv names a command, register only that one for this run.
    registered = app.registered_commands
    chosen = [c for c in registered if _command_name(c) == sys.argv[1]]
    if chosen:
        app.registered_commands = chosen
    try:
        code = app(standalone_mode=False, prog_name="servertune")
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at the exit
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT, errno.EFBIG):
            raise
        _quiet_broken_stdout()
        typer.echo(f"error: cannot write the output: {error.strerror}", err=True)
        sys.exit(2)
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
    finally:
        app.registered_commands = registered
    sys.exit(code if isinstance(code, int) else 0)


def _command_name(command: Any) -> str:
    """The name Typer gives a registered command (its own, or the function's, dashed)."""
    if command.name:
        return str(command.name)
    return str(command.callback.__name__).lower().replace("_", "-")


# --- measure and advise ----------------------------------------------------------------


class MeasureInterface(enum.StrEnum):
    """How to call the app: by its signature, or forced."""

    auto = "auto"
    wsgi = "wsgi"
    asgi = "asgi"


class NoRepeatedOptions(TyperCommand):
    """A command that refuses a single-valued option given twice instead of keeping the last.

    click keeps the last of `--method GET --method POST` without a word; for a command whose
    options describe what is measured, a dropped value is a wrong measurement.
    """

    # ctx: Any, as typer's Context type lives in a private module (its vendored click).
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Count each option's occurrences first, then parse as usual."""
        order: list[Any] = []
        if not ctx.resilient_parsing:
            # A malformed command line fails here and again, with click's own message, below.
            with contextlib.suppress(Exception):
                _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        seen: set[str] = set()
        for param in order:
            single = getattr(param, "param_type_name", "") == "option" and not (
                param.multiple or param.is_flag
            )
            if single and param.name in seen:
                raise typer.BadParameter("given more than once; give it once", ctx, param)
            if single:
                seen.add(param.name)
        return super().parse_args(ctx, args)


#: CLI name of each input `servertune.measure` names in its errors.
MEASURE_FLAGS = {
    "app": "APP",
    "path": "--path",
    "method": "--method",
    "requests": "--requests",
    "warmup": "--warmup",
    "max_seconds": "--max-seconds",
    "interface": "--interface",
    "app_dir": "--app-dir",
}


@app.command(cls=NoRepeatedOptions)
def measure(
    app_spec: Annotated[
        str,
        typer.Argument(
            metavar="[APP]", help="the WSGI or ASGI app, as module:callable (not with --log)"
        ),
    ] = "",
    path: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--path",
            metavar="P[=WEIGHT]",
            help=(
                "request target, e.g. /items?id=1 (default /); repeat for a mix of paths, each "
                "with an optional relative weight (/get=3; in a query string: /items?id=1=3)"
            ),
        ),
    ] = None,
    method: Annotated[str, typer.Option("--method", help="HTTP method")] = "GET",
    requests: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--requests", min=1, max=1_000_000, help="requests to measure per path (default 50)"
        ),
    ] = None,
    warmup: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--warmup", min=0, max=10_000, help="requests run first, not measured (default 3)"
        ),
    ] = None,
    max_seconds: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--max-seconds",
            # The range (finite, 0.1 s to a day) is the library's: one message for nan and inf.
            help="stop measuring after this long, shared by the paths (0.1 to 86400; default 60)",
        ),
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
    log: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--log",
            help="read the workload from access logs instead (plain or .gz, - for stdin; "
            "repeat for a rotated set)",
            dir_okay=False,
        ),
    ] = None,
    log_format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--log-format",
            metavar="NAME[:SPEC]",
            help="nginx, gunicorn, uwsgi, haproxy or alb; nginx:'<log_format>' or "
            "gunicorn:'<access_log_format>' (default: told from the lines)",
        ),
    ] = None,
    log_conf: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--log-conf", help="the nginx.conf whose log_format wrote --log", dir_okay=False
        ),
    ] = None,
) -> None:
    """Measure an app's service time and cpu_fraction in process, and write a workload file.

    Several --path options are measured in turn and mixed by weight; the mix feeds --out.
    With --log, the workload comes from access logs: arrival rate, service time per route,
    slow calls and statuses. Exit 2: bad input or an app that cannot be imported; exit 1: the
    app raised.
    """
    from servertune import measure as m
    from servertune.bench.harness.progress import Progress

    check_output_path("--out", out)
    if log:
        if app_spec:
            raise fail("APP: give an app or --log, not both")
        app_only = {"--path": path, "--requests": requests, "--warmup": warmup,
                    "--max-seconds": max_seconds, "--header": header, "--data": data,
                    "--app-dir": app_dir}  # fmt: skip
        if given := [flag for flag, value in app_only.items() if value]:
            raise fail(f"{given[0]}: measures an app; --log reads a log instead")
        _measure_log(log, log_format, log_conf, out)
        return
    if log_format is not None or log_conf is not None:
        raise fail(f"{'--log-format' if log_format is not None else '--log-conf'}: goes with --log")
    if not app_spec:
        raise fail("APP: name the app (module:callable) or give --log FILE")
    headers: list[tuple[str, str]] = []
    for item in header or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header: must be 'Name: value'; got {item!r}")
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in item):
            raise fail(f"--header: must not contain CR, LF or control characters; got {item!r}")
        headers.append((name.strip(), value.strip()))
    defaults = {"requests": requests, "warmup": warmup, "max_seconds": max_seconds}
    try:
        paths = [m.parse_weighted_path(item) for item in path or ["/"]]
    except m.MeasureError as error:
        raise fail(f"--path: {error.reason}") from None
    # A bar on a terminal only: in logs and pipes the table is the whole story.
    progress = Progress(len(paths) * (requests or m.DEFAULT_REQUESTS), enabled=sys.stderr.isatty())
    try:
        result = m.measure_mix(
            app_spec,
            paths,
            method=method,
            headers=headers,
            body=(data or "").encode(),
            interface=None if interface is MeasureInterface.auto else interface.value,  # type: ignore[arg-type]
            app_dir=None if app_dir is None else str(app_dir),
            on_sample=lambda _: progress.advance("requests measured"),
            **{k: v for k, v in defaults.items() if v is not None},  # type: ignore[arg-type]
        )
    except m.MeasureError as error:
        raise fail(f"{MEASURE_FLAGS.get(error.field, error.field)}: {error.reason}") from None
    except m.AppFailed as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    finally:
        progress.close()
    typer.echo(result.table())
    if out is not None:
        try:
            write_atomically({out.name: result.to_toml()}, out.parent)
        except OSError as error:
            raise fail(f"--out: cannot write {out}: {error.strerror}") from None
        typer.echo(f"wrote {out}", err=True)


def _measure_log(
    logs: list[Path], log_format: str | None, log_conf: Path | None, out: Path | None
) -> None:
    """`measure --log`: read the logs, print what they show, write the workload file."""
    from servertune.bench.harness.progress import Progress
    from servertune.logs import LogError, LogFormatError, read_traffic
    from servertune.logs.choose import choose_format
    from servertune.logs.errors import LogConfError
    from servertune.logs.report import format_traffic

    try:
        fmt = choose_format(log_format, log_conf, logs[0])
    except LogFormatError as error:
        raise fail(f"--log-format: {error}") from None
    except LogConfError as error:
        raise fail(f"--log-conf: {error}") from None
    except LogError as error:
        raise fail(f"--log: {error}") from None
    # A step per MiB read (a chunk), on a terminal only: a log of gigabytes takes minutes.
    sizes = [p.stat().st_size for p in logs if str(p) != "-" and p.is_file()]
    progress = Progress(sum(sizes) >> 20, enabled=sys.stderr.isatty())
    try:
        traffic = read_traffic(logs, fmt, on_chunk=lambda _: progress.advance("MiB read"))
    except LogError as error:
        raise fail(f"--log: {error}") from None
    finally:
        progress.close()
    typer.echo(format_traffic(traffic))
    if out is None:
        return
    try:
        text = traffic.to_toml()
    except LogError as error:
        raise fail(f"--log: {error}") from None
    try:
        write_atomically({out.name: text}, out.parent)
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
    from servertune.advise import read_parallel

    # The [measured] spread lives beside [workload] in the file `measure --out` wrote.
    source = ctx.params.get("workload_file")
    try:
        measured = read_workload_file(source).measured if source is not None else None
    except WorkloadFileError as error:
        raise fail(f"--workload: {error}") from None
    try:
        report = read_parallel(parallel) if parallel is not None else None
    except ValueError as error:
        raise fail(f"--parallel: {error}") from None
    advice = advise_workload(workload, measured=measured, parallel=report, plan=_plan(workload))
    typer.echo(json.dumps(advice.to_json(), indent=2) if as_json else advice.format())


# --- check ----------------------------------------------------------------------------


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


def _reader_kinds() -> list[str]:
    from servertune.check.readers import READERS

    return [reader.kind for reader in READERS]


ReaderKind = enum.Enum(  # type: ignore[misc]
    "ReaderKind", {name: name for name in _reader_kinds()}, type=str
)


@app.command()
def check(
    files: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Argument(
            help="gunicorn *.py, uWSGI *.ini, shell scripts, Dockerfiles, compose files, "
            "Procfiles, Kubernetes manifests and nginx configs (includes are followed)"
        ),
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
    env_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--env-file",
            help="KEY=value file: the environment the servers run under (WEB_CONCURRENCY, "
            "GUNICORN_CMD_ARGS, UVICORN_*, GRANIAN_*, UWSGI_*, $PORT)",
            dir_okay=False,
        ),
    ] = None,
    rss_mb: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--rss-mb",
            min=1,
            max=1048576,
            help="resident memory of one warm worker (MiB), to compare with memory limits",
        ),
    ] = None,
    kind: Annotated[
        Optional[ReaderKind],  # noqa: UP045
        typer.Option(
            "--kind", help="read every file as this kind, instead of telling it by name and content"
        ),
    ] = None,
    log: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--log",
            help="an access log (plain or .gz; repeat for a rotated set): also the findings "
            "only traffic shows (timeouts hit, 499s, queueing, bodies near the limit)",
            dir_okay=False,
        ),
    ] = None,
    log_format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--log-format",
            metavar="NAME[:SPEC]",
            help="the --log's format, as `measure --log-format` (default: told from the lines, "
            "or the log_format of an nginx config given)",
        ),
    ] = None,
    execute_gunicorn_config: Annotated[
        bool,
        typer.Option(
            "--execute-gunicorn-config",
            help="load gunicorn configs through gunicorn, which RUNS their Python code (only for "
            "files you trust; by default they are read without running them)",
        ),
    ] = False,
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
    traffic = _check_traffic(log, log_format, files) if log else None
    if log_format is not None and not log:
        raise fail("--log-format: goes with --log")
    try:
        env = None
        if env_file is not None:
            from servertune.check.envfile import read_env_file

            env, _ = read_env_file(env_file)
        from servertune.check.gunicorn import executing_configs

        with executing_configs(execute_gunicorn_config):
            result = check_files(
                files,
                lb=balancer,
                machine=machine,
                plan=plan,
                env=env,
                rss_mb=rss_mb,
                kind=kind and kind.value,
                traffic=traffic,
            )
    except CheckInputError as error:
        raise fail(str(error)) from None
    if len(result.errors) < len(files):  # a report when at least one file was read
        typer.echo(FORMATS[output_format.value](result))
    # Every file that could not be read, one line each, after the others' findings: exit 2,
    # as linters do, so one unreadable file never hides the rest.
    for unread in result.errors:
        typer.echo(f"error: {one_line(unread.message)}", err=True)
    if result.errors:
        raise typer.Exit(code=2)
    worst = result.worst()
    if worst is not None and worst >= Severity[fail_on.value]:
        raise typer.Exit(code=1)


def _check_traffic(logs: list[Path], log_format: str | None, files: list[Path]) -> Any:
    """`check --log`: the log read (its format from --log-format, its lines, or an nginx
    config among FILES), or one `error:` line."""
    from servertune.logs import LogError, LogFormatError, read_traffic
    from servertune.logs.choose import choose_format, format_from_configs

    try:
        try:
            fmt = choose_format(log_format, None, logs[0])
        except LogError:
            found = format_from_configs(files) if log_format is None else None
            if found is None:
                raise
            fmt = found
        return read_traffic(logs, fmt)
    except LogFormatError as error:
        raise fail(f"--log-format: {error}") from None
    except LogError as error:
        raise fail(f"--log: {error}") from None
