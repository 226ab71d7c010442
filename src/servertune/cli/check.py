"""`servertune check [FILES OR FOLDERS]`: audit existing configs across layers.

With no argument the current folder is checked, as a repository (`check/discover.py`).
Exit 0 clean, 1 findings at `--fail-on` or worse, 2 unreadable input.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from servertune.cli.options import (
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
        LoadBalancer,
        Severity,
        check_files,
        plan_for_check,
    )
    from servertune.check.readers import READERS
    from servertune.sizing import Machine, Plan, PlanError
    from servertune.workload import WorkloadError
    from servertune.workload_file import load_workload

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
    typer.Option("--lb-idle-timeout", min=1, max=4000, help="the load balancer's idle timeout (s)"),
]
Cores = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--cores",
        min=1,
        max=1024,
        help="cores of the server that runs these configs (default: this machine's limit)",
    ),
]
OutputFormat = Annotated[
    CheckFormat, typer.Option("--format", help="text, json, or sarif (2.1.0) for CI annotations")
]
FailOnOption = Annotated[
    FailOn, typer.Option("--fail-on", help="exit 1 on findings of this severity or worse")
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
        min=1,
        max=1048576,
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
    fail_on: FailOnOption = FailOn.warning,
    env_file: EnvFile = None,
    rss_mb: RssMb = None,
    kind: Kind = None,
    log: Log = None,
    log_format: LogFormat = None,
    execute_gunicorn_config: ExecuteGunicornConfig = False,
) -> None:
    """Audit existing configs across layers: exit 0 clean, 1 findings, 2 unreadable input."""
    from servertune.check.gunicorn import executing_configs
    from servertune.check.output import FORMATS

    paths, walks = _targets(files or [Path(".")])
    if lb is not None and lb_idle_timeout is not None:
        raise fail("--lb and --lb-idle-timeout: give one of them, not both")
    plan = _plan(workload_file)
    balancer = _balancer(lb and lb.value, lb_idle_timeout, plan)
    machine = _machine(cores)
    traffic = _traffic(log, log_format, paths) if log else None
    if log_format is not None and not log:
        raise fail("--log-format: goes with --log")
    try:
        env = None
        if env_file is not None:
            from servertune.check.envfile import read_env_file

            env, _ = read_env_file(env_file)
        with executing_configs(execute_gunicorn_config):
            result = check_files(
                paths, lb=balancer, machine=machine, plan=plan, env=env, rss_mb=rss_mb,
                kind=kind and kind.value, traffic=traffic, discovered=walks,
            )  # fmt: skip
    except CheckInputError as error:
        raise fail(str(error)) from None
    if len(result.errors) < len(paths) or not paths:  # a report when a file was read
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


def _targets(targets: list[Path]) -> tuple[list[Path], list[Any]]:
    """The files to read: each file named, and each folder's files as its walk finds them
    (a found file no reader claims is skipped; a named one is read, or refused with exit 2)."""
    from servertune.check.discover import discover

    paths: list[Path] = []
    walks = []
    for target in targets:
        if target.is_dir():
            walk = discover(target)
            walks.append(walk)
            paths += walk.files
        else:
            paths.append(target)
    return list(dict.fromkeys(paths)), walks


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


def _machine(cores: int | None) -> Machine:
    """This machine, with `--cores` in place of its own count when given."""
    machine = Machine.read()
    if cores is not None:
        machine = machine.model_copy(update={"cores": cores, "cores_source": "--cores"})
    return machine


def _traffic(logs: list[Path], log_format: str | None, files: list[Path]) -> Any:
    """`check --log`: the log read (`servertune.logs.flags`), or one `error:` line."""
    from servertune.logs.flags import LogFlagError, read_logs

    try:
        return read_logs(logs, log_format, configs=files)
    except LogFlagError as error:
        raise fail(str(error)) from None
