"""Read every file, link the chain and run the rules: what `servertune check` does, as a library."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from servertune.check.balancers import LoadBalancer
from servertune.check.chain import BalancerLink, Link, link, link_balancers
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Finding,
    NginxConfig,
    NothingToCheck,
    Severity,
)
from servertune.check.readers import Reading, read_with, reader_for
from servertune.check.rules import Context, run_rules
from servertune.check.source import read_text
from servertune.machine import Machine
from servertune.sizing import Plan, plan_for
from servertune.workload import Workload

__all__ = [
    "CheckResult",
    "check_files",
    "config_kind",
    "plan_for_check",
    "read_config",
    "read_file",
]


@dataclass(frozen=True)
class CheckResult:
    """What was read (with its includes), how it links up, and what the rules found."""

    files: tuple[Path, ...]
    apps: tuple[AppServer, ...]
    nginx: tuple[NginxConfig, ...]
    links: tuple[Link, ...]
    findings: tuple[Finding, ...]
    lb: LoadBalancer | None
    plan: Plan | None
    #: Load balancer configs read (HAProxy backends) and what each one sends to.
    balancer_links: tuple[BalancerLink, ...] = ()

    def worst(self) -> Severity | None:
        """The highest severity found, None when clean."""
        return max((f.severity for f in self.findings), default=None)


def plan_for_check(workload: Workload, machine: Machine | None = None) -> Plan:
    """The plan `--workload` compares against: the one `servertune gen` would render."""
    return plan_for(workload, machine)


def config_kind(path: Path, text: str) -> str:
    """The kind of the reader that claims the file ('gunicorn', 'uwsgi', 'script', 'nginx', ...)."""
    return reader_for(path, text).kind


def read_file(path: Path, env: Mapping[str, str] | None = None, kind: str | None = None) -> Reading:
    """Everything one file contributes, read by the reader that claims it (or by the reader of
    `kind`, one of READERS' kinds, when the caller says what the file is)."""
    text = read_text(path)
    return read_with(reader_for(path, text, kind), path, text, env)


def read_config(path: Path, env: Mapping[str, str] | None = None) -> AppServer | NginxConfig:
    """One config file that holds exactly one app server or nginx site."""
    reading = read_file(path, env)
    found: tuple[AppServer | NginxConfig, ...] = (*reading.apps, *reading.nginx)
    if len(found) != 1:
        raise CheckInputError(f"{path}: holds {len(found)} server configs, not one")
    return found[0]


def _once(apps: Sequence[AppServer]) -> list[AppServer]:
    """Each server once. A server read twice (a Dockerfile given beside the compose file that
    builds it; a gunicorn.conf.py beside the Procfile that names it) is the same process: keep
    the reading that knows its container, or the first."""

    def key(app: AppServer) -> tuple[object, ...]:
        return (app.kind, app.workers.at)  # where its command or config sets the workers

    boxed = {key(a) for a in apps if a.container is not None}
    kept: list[AppServer] = []
    seen: set[tuple[object, ...]] = set()
    for app in apps:
        if app.container is None and (key(app) in boxed or key(app) in seen):
            continue
        seen.add(key(app))
        kept.append(app)
    return kept


def _run_images(reading: Reading) -> list[AppServer]:
    """Every app server, with a Kubernetes container that sets no command bound to the server
    its image's CMD starts, when the run gives exactly one Dockerfile that starts one (with
    several, which image a container runs is not in these files)."""
    apps = list(reading.apps)
    if not reading.image_containers or len(reading.image_apps) != 1:
        return apps
    (image,) = reading.image_apps
    if image.container is not None:
        return apps
    bound = [dataclasses.replace(image, container=box) for box in reading.image_containers]
    return [a for a in apps if a is not image] + bound


def check_files(
    paths: Sequence[Path],
    *,
    lb: LoadBalancer | None = None,
    machine: Machine | None = None,
    plan: Plan | None = None,
    env: Mapping[str, str] | None = None,
    rss_mb: float | None = None,
    kind: str | None = None,
) -> CheckResult:
    """Read every file, link the chain and run every rule.

    `machine` defaults to this one (its cgroup's cores and somaxconn); with a `plan`, the plan's
    machine is used instead. `env` is the environment the app server configs are evaluated in
    (default: this process's for a config read on its own; a container's own variables for a
    Dockerfile, compose file or manifest, which `env` adds to). `rss_mb` is one worker's
    resident memory (default: the plan's workload's `memory_per_worker_mb`, when it has one).
    `kind` reads every file with that reader instead of the one that claims it.
    """
    reading = Reading()
    idle: list[str] = []  # each file that brought no server, as what it was read as
    for path in paths:
        text = read_text(path)
        reader = reader_for(path, text, kind)
        try:
            one = read_with(reader, path, text, env)
        except NothingToCheck as nothing:
            idle.append(str(nothing))
            continue
        if not one.apps and not one.nginx and not one.balancers:
            idle.append(
                f"{path}: read as {reader.described}, but it starts no app server and holds no "
                "nginx config: nothing to check"
            )
        reading += one
    apps, nginx = _once(_run_images(reading)), list(reading.nginx)
    if idle and not apps and not nginx and not reading.balancers:
        others = f" (and {len(idle) - 1} more files like it)" if len(idle) > 1 else ""
        raise NothingToCheck(idle[0] + others)
    links = link(nginx, apps)
    rss_source = "--rss-mb"
    if rss_mb is None and plan is not None and plan.workload.memory_per_worker_mb is not None:
        rss_mb, rss_source = float(plan.workload.memory_per_worker_mb), "memory_per_worker_mb"
    fronts = link_balancers(list(reading.balancers), nginx, apps)
    context = Context(
        apps,
        nginx,
        links,
        lb,
        machine or Machine.read(),
        plan,
        rss_mb=rss_mb,
        rss_source=rss_source,
        balancer_links=fronts,
    )
    files = (
        [b.file for b in reading.balancers]
        + [p for n in nginx for p in n.files]
        + [a.file for a in apps]
        + list(reading.files)
    )
    files += paths  # a file that brought nothing still counts as read
    return CheckResult(
        files=tuple(dict.fromkeys(files)),
        apps=tuple(apps),
        nginx=tuple(nginx),
        links=tuple(links),
        findings=tuple(run_rules(context)),
        lb=lb,
        plan=plan,
        balancer_links=tuple(fronts),
    )
