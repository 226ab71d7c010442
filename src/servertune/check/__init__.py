"""`servertune check`: audit existing gunicorn, uWSGI, uvicorn, granian and nginx configs across layers.

Each file is read by the parser its own ecosystem trusts (gunicorn's loader in a child
interpreter, crossplane for nginx, uWSGI's ini rules, uvicorn's and granian's own command-line
parsers for the shell scripts that start them), the files are linked into the chain
client -> load balancer -> nginx -> app server, and the rules in `servertune.check.rules` run
on the result. docs/check.md says which parser reads what, and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from servertune.check.balancers import LOAD_BALANCERS, LoadBalancer
from servertune.check.chain import Link, link
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Finding,
    Location,
    NginxConfig,
    Severity,
)
from servertune.check.rules import RULES, Context, Rule, run_rules
from servertune.check.scripts import looks_like_script
from servertune.check.source import read_text
from servertune.machine import Machine
from servertune.sizing import Plan, plan_for
from servertune.workload import Workload

__all__ = [
    "LOAD_BALANCERS",
    "RULES",
    "AppServer",
    "CheckInputError",
    "CheckResult",
    "Finding",
    "Link",
    "LoadBalancer",
    "Location",
    "NginxConfig",
    "Rule",
    "Severity",
    "check_files",
    "config_kind",
    "plan_for_check",
    "read_config",
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

    def worst(self) -> Severity | None:
        """The highest severity found, None when clean."""
        return max((f.severity for f in self.findings), default=None)


def plan_for_check(workload: Workload, machine: Machine | None = None) -> Plan:
    """The plan `--workload` compares against: the one `servertune gen` would render."""
    return plan_for(workload, machine)


def config_kind(path: Path, text: str) -> str:
    """'gunicorn' for Python files, 'uwsgi' for ini files with a [uwsgi] section, 'script' for
    shell scripts (uvicorn, granian), else 'nginx'."""
    if path.suffix == ".py":
        return "gunicorn"
    if looks_like_script(path, text):
        return "script"
    if path.suffix == ".ini" or any(line.strip() == "[uwsgi]" for line in text.splitlines()[:200]):
        return "uwsgi"
    return "nginx"


def read_config(path: Path, env: Mapping[str, str] | None = None) -> AppServer | NginxConfig:
    """One config file, read by its own ecosystem's parser."""
    text = read_text(path)
    kind = config_kind(path, text)
    if kind == "gunicorn":
        from servertune.check.gunicorn import read_gunicorn

        return read_gunicorn(path, text, env)
    if kind == "uwsgi":
        from servertune.check.uwsgi import read_uwsgi

        return read_uwsgi(path, text, env)
    if kind == "script":
        from servertune.check.scripts import read_script

        return read_script(path, text, env)
    from servertune.check.nginx import read_nginx

    return read_nginx(path, text)


def check_files(
    paths: Sequence[Path],
    *,
    lb: LoadBalancer | None = None,
    machine: Machine | None = None,
    plan: Plan | None = None,
    env: Mapping[str, str] | None = None,
) -> CheckResult:
    """Read every file, link the chain and run every rule.

    `machine` defaults to this one (its cgroup's cores and somaxconn); with a `plan`, the plan's
    machine is used instead. `env` is the environment the app server configs are evaluated in.
    """
    apps: list[AppServer] = []
    nginx: list[NginxConfig] = []
    for path in paths:
        config = read_config(path, env)
        if isinstance(config, AppServer):
            apps.append(config)
        else:
            nginx.append(config)
    links = link(nginx, apps)
    context = Context(apps, nginx, links, lb, machine or Machine.read(), plan)
    files = [p for n in nginx for p in n.files] + [a.file for a in apps]
    return CheckResult(
        files=tuple(dict.fromkeys(files)),
        apps=tuple(apps),
        nginx=tuple(nginx),
        links=tuple(links),
        findings=tuple(run_rules(context)),
        lb=lb,
        plan=plan,
    )
