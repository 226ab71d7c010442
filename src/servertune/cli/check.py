"""`servertune check [FILES OR FOLDERS]`: audit existing configs across layers.

With no argument the current folder is checked, as a repository (`check/discover.py`).
Exit 0 clean, 1 findings at `--fail-on` or worse, 2 unreadable input.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from servertune.cli.options import (
    check_output_path,
    fail,
    log_format_option,
    log_option,
    one_line,
    without_pydantic_plugins,
)

with without_pydantic_plugins():
    from servertune.check import (
        LOAD_BALANCERS,
        CheckInputError,
        CheckResult,
        LoadBalancer,
        Severity,
        check_files,
        plan_for_check,
    )
    from servertune.check.readers import READERS
    from servertune.check.settings import CORES_RANGE, LB_IDLE_TIMEOUT_RANGE, RSS_MB_RANGE
    from servertune.sizing import Machine, Plan, PlanError
    from servertune.workload import WorkloadError
    from servertune.workload_file import load_workload

if TYPE_CHECKING:
    from servertune.check.settings import Applied, CheckSettings

__all__ = ["check"]


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
    advice = "advice"


LoadBalancerName = enum.Enum(  # type: ignore[misc]
    "LoadBalancerName", {name: name for name in LOAD_BALANCERS}, type=str
)
ReaderKind = enum.Enum(  # type: ignore[misc]
    "ReaderKind", {reader.kind: reader.kind for reader in READERS}, type=str
)

Files = Annotated[
    Optional[list[Path]],  # noqa: UP045
    typer.Argument(
        help="files or folders (default: the current folder, walked as a repository, "
        ".gitignore respected): gunicorn *.py, uWSGI *.ini, shell scripts, Dockerfiles, "
        "compose files, Procfiles, env files, Kubernetes manifests and nginx configs "
        "(includes are followed)"
    ),
]
WorkloadFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--workload",
        help="TOML workload: also compare each number with the plan's, and use its LB idle timeout",
        dir_okay=False,
    ),
]
Lb = Annotated[
    Optional[LoadBalancerName],  # noqa: UP045
    typer.Option("--lb", help="the load balancer in front, by name (its documented idle timeout)"),
]
LbIdleTimeout = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--lb-idle-timeout",
        min=LB_IDLE_TIMEOUT_RANGE[0],
        max=LB_IDLE_TIMEOUT_RANGE[1],
        help="the load balancer's idle timeout (s)",
    ),
]
Cores = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--cores",
        min=CORES_RANGE[0],
        max=CORES_RANGE[1],
        help="cores of the server that runs these configs (default: this machine's limit)",
    ),
]
OutputFormat = Annotated[
    CheckFormat, typer.Option("--format", help="text, json, or sarif (2.1.0) for CI annotations")
]
FailOnOption = Annotated[
    Optional[FailOn],  # noqa: UP045
    typer.Option(
        "--fail-on",
        help="exit 1 on findings of this severity or worse (default: warning; advice, below info, only when named)",
    ),
]
SettingsFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--settings",
        help="the settings file (default: [tool.servertune.check] in the nearest pyproject.toml, "
        "or servertune.toml, upwards from the files checked)",
        dir_okay=False,
    ),
]
ShowSettings = Annotated[
    bool,
    typer.Option("--show-settings", help="print each setting, its value and where it came from"),
]
BaselineFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--baseline", help="fail only on findings this baseline does not record", dir_okay=False
    ),
]
BaselineWrite = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--baseline-write", help="record today's findings in this file (exit 0)", dir_okay=False
    ),
]
EnvFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--env-file",
        help="KEY=value file: the environment the servers run under (WEB_CONCURRENCY, "
        "GUNICORN_CMD_ARGS, UVICORN_*, GRANIAN_*, UWSGI_*, $PORT)",
        dir_okay=False,
    ),
]
RssMb = Annotated[
    Optional[float],  # noqa: UP045
    typer.Option(
        "--rss-mb",
        min=RSS_MB_RANGE[0],
        max=RSS_MB_RANGE[1],
        help="resident memory of one warm worker (MiB), to compare with memory limits",
    ),
]
Kind = Annotated[
    Optional[ReaderKind],  # noqa: UP045
    typer.Option(
        "--kind", help="read every file as this kind, instead of telling it by name and content"
    ),
]
Log = Annotated[
    Optional[list[Path]],  # noqa: UP045
    log_option(
        "an access log (plain or .gz; repeat for a rotated set): also the findings "
        "only traffic shows (timeouts hit, 499s, queueing, bodies near the limit)"
    ),
]
LogFormat = Annotated[
    Optional[str],  # noqa: UP045
    log_format_option(
        "the --log's format, as `measure --log-format` (default: told from the lines, "
        "or the log_format of an nginx config given)"
    ),
]
ExecuteGunicornConfig = Annotated[
    bool,
    typer.Option(
        "--execute-gunicorn-config",
        help="load gunicorn configs through gunicorn, which RUNS their Python code (only for "
        "files you trust; by default they are read without running them)",
    ),
]


def check(
    files: Files = None,
    workload_file: WorkloadFile = None,
    lb: Lb = None,
    lb_idle_timeout: LbIdleTimeout = None,
    cores: Cores = None,
    output_format: OutputFormat = CheckFormat.text,
    fail_on: FailOnOption = None,
    env_file: EnvFile = None,
    rss_mb: RssMb = None,
    kind: Kind = None,
    log: Log = None,
    log_format: LogFormat = None,
    execute_gunicorn_config: ExecuteGunicornConfig = False,
    settings_file: SettingsFile = None,
    show_settings: ShowSettings = False,
    baseline: BaselineFile = None,
    baseline_write: BaselineWrite = None,
) -> None:
    """Audit existing configs across layers: exit 0 clean, 1 findings, 2 unreadable input."""
    from servertune.check.gunicorn import executing_configs
    from servertune.check.output import FORMATS

    targets = files or [Path(".")]
    if lb is not None and lb_idle_timeout is not None:
        raise fail("--lb and --lb-idle-timeout: give one of them, not both")
    if baseline is not None and baseline_write is not None:
        raise fail("--baseline and --baseline-write: give one of them, not both")
    check_output_path("--baseline-write", baseline_write)
    flags = {
        "cores": cores, "fail-on": fail_on and fail_on.value, "lb": lb and lb.value,
        "lb-idle-timeout": lb_idle_timeout, "rss-mb": rss_mb,
        "env-files": None if env_file is None else (env_file,), "baseline": baseline,
    }  # fmt: skip
    settings, values = _settings(targets, settings_file, flags)
    if show_settings:
        from servertune.check.settings import show_settings as shown

        typer.echo(shown(settings, values))
        return
    paths, walks = _targets(targets)
    if paths:
        paths = _not_excluded(paths, settings)
    plan = _plan(workload_file)
    balancer = _balancer(values["lb"].value, values["lb-idle-timeout"].value, plan)
    machine = _machine(values["cores"].value, values["cores"].source)
    traffic = _traffic(log, log_format, paths) if log else None
    if log_format is not None and not log:
        raise fail("--log-format: goes with --log")
    try:
        env = _env(values["env-files"].value)
        with executing_configs(execute_gunicorn_config):
            result = check_files(
                paths, lb=balancer, machine=machine, plan=plan, env=env,
                rss_mb=values["rss-mb"].value, kind=kind and kind.value, traffic=traffic,
                discovered=walks, root=_root(targets),
            )  # fmt: skip
        result = _suppressed(result, settings, values["baseline"].value, baseline_write)
    except CheckInputError as error:
        raise fail(str(error)) from None
    if _any_read(result, paths, walks):  # a report when a file was read
        typer.echo(FORMATS[output_format.value](result))
    _exit(result, values["fail-on"].value, baseline_write)


def _any_read(result: CheckResult, paths: list[Path], walks: list[Any]) -> bool:
    """Whether a report is due: no file given, or one file read. A walk's templates read in
    place count: a walk of one Procfile and one broken `gunicorn.py.j2` reports the Procfile
    (model-my-watershed's ansible role printed nothing)."""
    unread = {error.file for error in result.errors}
    found = [*paths, *(p for walk in walks for p in walk.in_place)]
    return not paths or any(p not in unread for p in found)


def _exit(result: CheckResult, fail_on: str, baseline_write: Path | None) -> None:
    """Exit 2 on unreadable files, else write the baseline asked for, else 1 on findings at
    `fail_on` or worse."""
    # Every file that could not be read, one line each, after the others' findings: exit 2,
    # as linters do, so one unreadable file never hides the rest.
    # (Once each: a file several launches read is refused by each of them.)
    for message in dict.fromkeys(one_line(unread.message) for unread in result.errors):
        typer.echo(f"error: {message}", err=True)
    if result.errors:
        raise typer.Exit(code=2)
    if baseline_write is not None:
        from servertune.check.baseline import write_baseline

        try:
            count = write_baseline(baseline_write, result.findings)
        except OSError as error:
            raise fail(f"--baseline-write {baseline_write}: {error.strerror}") from None
        typer.echo(f"recorded {count} findings in {baseline_write}", err=True)
        return
    worst = result.worst()
    if worst is not None and worst >= Severity[fail_on]:
        raise typer.Exit(code=1)


def _settings(
    files: list[Path], settings_file: Path | None, flags: dict[str, Any]
) -> tuple[CheckSettings, dict[str, Applied]]:
    """The settings file that applies, and each setting's value with the flags winning."""
    from servertune.check.settings import applied, settings_for

    try:
        settings = settings_for(files, settings_file)
    except CheckInputError as error:
        raise fail(str(error)) from None
    return settings, applied(settings, flags)


def _not_excluded(files: list[Path], settings: CheckSettings) -> list[Path]:
    """The files the settings' `exclude` leaves; exit 0 saying so when it leaves none."""
    from servertune.check.settings import excluded

    kept = [f for f in files if not excluded(f, settings)]
    if not kept:
        typer.echo(f"no file to check: all {len(files)} excluded by {settings.where}")
        raise typer.Exit(code=0)
    return kept


def _env(env_files: tuple[Path, ...]) -> dict[str, str] | None:
    """The environment of the env files, in order (a later file wins); None without one."""
    if not env_files:
        return None
    from servertune.check.envfile import read_env_file

    env: dict[str, str] = {}
    for path in env_files:
        env.update(read_env_file(path)[0])
    return env


def _suppressed(
    result: CheckResult, settings: CheckSettings, baseline: Path | None, writing: Path | None
) -> CheckResult:
    """The result with the settings, the ignores and the baseline applied (none when writing
    one: a baseline records every finding the ignores leave)."""
    from servertune.check.baseline import read_baseline
    from servertune.check.suppress import suppress

    recorded = None if baseline is None or writing is not None else read_baseline(baseline)
    return suppress(result, settings, recorded)


def _targets(targets: list[Path]) -> tuple[list[Path], list[Any]]:
    """The files to read: each file named, and each folder's files as its walk finds them
    (a found file no reader claims is skipped; a named one is read, or refused with exit 2)."""
    from servertune.check.discover import discover
    from servertune.check.settings import is_folder

    paths: list[Path] = []
    walks = []
    for target in targets:
        if is_folder(target):
            walk = discover(target)
            walks.append(walk)
            paths += walk.files
        else:
            paths.append(target)
    return list(dict.fromkeys(paths)), walks


def _root(targets: list[Path]) -> Path | None:
    """The tree a folder run may read in: the one folder given (the repository in folder
    mode); else None, the files' common folder (`check.resolve.default_root`)."""
    from servertune.check.settings import is_folder

    if len(targets) == 1 and is_folder(targets[0]):
        return targets[0].resolve()
    return None


def _plan(workload_file: Path | None) -> Plan | None:
    """`--workload`: the plan to compare each number with, or None."""
    if workload_file is None:
        return None
    try:
        return plan_for_check(load_workload(workload_file))
    except WorkloadError as error:
        raise fail(str(error)) from None
    except PlanError as error:
        raise fail(f"--workload: {error}") from None


def _balancer(name: str | None, idle_timeout: int | None, plan: Plan | None) -> LoadBalancer | None:
    """The load balancer in front: by `--lb` name, `--lb-idle-timeout`, or the workload's."""
    if name is not None:
        return LOAD_BALANCERS[name]
    if idle_timeout is not None:
        return LoadBalancer("load balancer", idle_timeout, "--lb-idle-timeout", "")
    if plan is not None:
        return LoadBalancer(
            "workload's load balancer", plan.workload.lb_idle_timeout_s, "--workload", ""
        )
    return None


def _machine(cores: int | None, source: str) -> Machine:
    """This machine, with `--cores` (or the settings' `cores`) in place of its own count."""
    machine = Machine.read()
    if cores is not None:
        where = source if source.startswith("--") else f"cores in {source}"
        machine = machine.model_copy(update={"cores": cores, "cores_source": where})
    return machine


def _traffic(logs: list[Path], log_format: str | None, files: list[Path]) -> Any:
    """`check --log`: the log read (`servertune.logs.flags`), or one `error:` line."""
    from servertune.logs.flags import LogFlagError, in_flags_of, read_logs

    try:
        return read_logs(logs, log_format, configs=files)
    except LogFlagError as error:
        # check has no --log-conf: it reads the log_format of an nginx config it checks.
        raise fail(
            in_flags_of(str(error), "--log-format", " or check its nginx.conf with it")
        ) from None
