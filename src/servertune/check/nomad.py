"""HashiCorp Nomad job files: the servers their tasks start, and the stop Nomad gives them.

A job file (`*.nomad`, `*.nomad.hcl`, or any `.hcl` declaring `job "x" {`;
https://developer.hashicorp.com/nomad/docs/job-specification) holds groups of tasks. A task
(https://developer.hashicorp.com/nomad/docs/job-specification/task) runs by its `driver`:

* `docker` (https://developer.hashicorp.com/nomad/docs/drivers/docker): `config { image,
  entrypoint, command, args }`, the image run with `entrypoint` in place of its ENTRYPOINT
  and `command` + `args` in place of its CMD (`args` alone when no `command`), stopped as
  `docker stop` stops it: the image's STOPSIGNAL, else SIGTERM;
* `exec` / `raw_exec`: `config { command, args }`, run as written (no shell), stopped with
  SIGINT.

`env { }` is the task's environment; `kill_timeout` ("5s" by default) the time between the
signal and SIGKILL, `kill_signal` the signal
(https://developer.hashicorp.com/nomad/docs/job-declare/exit-signals). The group's `count`
is its instance count. A `template` block renders a file only when Nomad runs the task: a
file it writes is not followed. A value Nomad interpolates (`${NOMAD_PORT_http}`) is left to
the server's own reading.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.commands import FollowWords, Word
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Container,
    Location,
    NotFollowed,
    NothingToCheck,
    PlatformWords,
    Setting,
    note,
)

if TYPE_CHECKING:
    from servertune.check.ecs import HclObject

__all__ = [
    "NOMAD_KILL_SIGNAL",
    "NOMAD_KILL_TIMEOUT_S",
    "looks_like_nomad_job",
    "nomad_template_line",
    "read_nomad_job",
]

#: Nomad: `kill_timeout` when a task sets none, and the signal of the exec drivers.
NOMAD_KILL_TIMEOUT_S = 5.0
NOMAD_KILL_SIGNAL = "SIGINT"
_DOC = (
    "https://developer.hashicorp.com/nomad/docs/job-specification/task (kill_timeout: the "
    'time between the kill signal and SIGKILL, "5s" by default); '
    "https://developer.hashicorp.com/nomad/docs/job-declare/exit-signals"
)
_WORDS = PlatformWords("Nomad", "kill_timeout", 'kill_timeout = "{}s"', _DOC, "cpu", "memory")
_JOB = re.compile(r'^\s*job\s+"[^"]+"\s*\{', re.M)


def looks_like_nomad_job(path: Path, text: str) -> bool:
    """`*.nomad`, `*.nomad.hcl` or `*.hcl` with a `job "name" {` block."""
    name = path.name.lower()
    return name.endswith((".nomad", ".hcl")) and bool(_JOB.search(text))


_HEREDOC_BODY = re.compile(r"<<-?[ \t]*(\w+)[ \t]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def nomad_template_line(text: str) -> int | None:
    """The first template marker of a job file outside its strings and heredocs, None when
    there is none: a `template` block's `data` (`{{ key "db" }}`) is a template Nomad renders
    when the task runs, not a marker of the job file; one outside them (`image = {{ x }}`)
    makes the file a template (an Ansible role's)."""
    from servertune.check.template_markers import template_line

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group())

    return template_line(_STRING.sub(blank, _HEREDOC_BODY.sub(blank, text)))


def read_nomad_job(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The app servers the job's tasks start, each in its Nomad allocation."""
    from servertune.check.ecs import HclObject, read_hcl

    try:
        root = read_hcl(text)
    except (CheckInputError, IndexError) as error:
        raise NotFollowed(f"{path}:1: not followed: cannot read the job's HCL: {error}") from None
    apps: list[AppServer] = []
    for kind, _, job in root.blocks:
        if kind != "job":
            continue
        for group_kind, _, group in job.blocks:
            if group_kind != "group":
                continue
            count = group.get("count")
            replicas = (
                Setting(count, Location(path, group.lines["count"]))
                if isinstance(count, int) and not isinstance(count, bool)
                else None
            )
            for task_kind, labels, task in group.blocks:
                if task_kind == "task" and isinstance(task, HclObject):
                    name = labels[0] if labels else "task"
                    app = _task(path, name, task, replicas, env or {}, follow)
                    if app is not None:
                        apps.append(app)
    if not apps:
        raise NothingToCheck(
            f"{path}: no task of this Nomad job starts a server check reads (gunicorn, "
            "uvicorn, granian, uWSGI) from the files here: nothing to check"
        )
    return tuple(apps)


def _words(path: Path, config: HclObject, field: str) -> tuple[Word, ...] | None:
    value = config.get(field)
    at = Location(path, config.lines.get(field, 1))
    if isinstance(value, str):
        return (Word(value, at),) if field == "command" else None
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return tuple(Word(str(w), at) for w in value)
    return None


def _environment(path: Path, task: HclObject) -> tuple[dict[str, str], dict[str, Location]]:
    from servertune.check.ecs import HclObject

    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    block = task.get("env")
    if isinstance(block, HclObject):
        for key, value in block.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                values[key] = str(value)
                where[key] = Location(path, block.lines.get(key, 1))
    return values, where


def _task(
    path: Path,
    name: str,
    task: HclObject,
    replicas: Setting[int] | None,
    env: Mapping[str, str],
    follow: FollowWords | None,
) -> AppServer | None:
    from servertune.check.dockerfile import image_run_server, with_stop_signal
    from servertune.check.ecs import HclObject
    from servertune.check.images import image_named
    from servertune.check.platforms import command_server

    driver = task.get("driver")
    config = task.get("config")
    if driver not in ("docker", "exec", "raw_exec") or not isinstance(config, HclObject):
        return None
    environment, env_at = _environment(path, task)
    environment = {**environment, **env}
    command = _words(path, config, "command")
    args = _words(path, config, "args")
    for kind, _, template in task.blocks:
        destination = template.get("destination") if kind == "template" else None
        if isinstance(destination, str):
            note(
                "not-followed",
                Location(path, task.lines.get("template", 1)),
                f"not followed: {destination} is rendered by Nomad's template block when the "
                f"task {name!r} runs: what it holds is not in the repository",
            )
    found: AppServer | None
    if driver == "docker":
        reference = config.get("image")
        at = Location(path, config.lines.get("image", 1))
        image = image_named(reference, path, at) if isinstance(reference, str) else None
        entrypoint = _words(path, config, "entrypoint")
        cmd = (*command, *(args or ())) if command is not None else args
        if image is None:
            if cmd is None and entrypoint is None:
                raise NotFollowed(
                    f"{at}: not followed: task {name!r} runs the image {reference!r}, which "
                    "the files do not tie to a Dockerfile here"
                )
            argv = [*(entrypoint or ()), *(cmd or ())]
            line = Word(shlex.join(w.text for w in argv), argv[0].at)
            found = command_server(path, line, path.parent, environment, env_at, follow)
        else:
            found = image_run_server(path, image, entrypoint, cmd, environment, env_at)
    else:
        argv = [*(command or ()), *(args or ())]
        if not argv:
            return None
        line = Word(shlex.join(w.text for w in argv), argv[0].at)
        found = command_server(path, line, path.parent, environment, env_at, follow)
    if found is None:
        return None
    signal = task.get("kill_signal")
    signal_at = Location(path, task.lines.get("kill_signal", 1))
    if isinstance(signal, str):
        found = with_stop_signal(found, signal, signal_at, 'kill_signal = "SIGTERM"')
    elif driver != "docker":  # docker stop sends the image's STOPSIGNAL, else SIGTERM
        at = Location(path, min(task.lines.values(), default=1))
        found = with_stop_signal(found, NOMAD_KILL_SIGNAL, at, 'kill_signal = "SIGTERM"')
    return replace(found, container=_allocation(path, name, task, replicas))


def _allocation(path: Path, name: str, task: HclObject, replicas: Setting[int] | None) -> Container:
    from servertune.check.ecs import HclObject
    from servertune.check.platforms import seconds

    first = Location(path, min(task.lines.values(), default=1))
    timeout = task.get("kill_timeout")
    written = seconds(timeout) if isinstance(timeout, (str, int, float)) else None
    grace = (
        Setting(written, Location(path, task.lines["kill_timeout"]))
        if written is not None
        else Setting(NOMAD_KILL_TIMEOUT_S, first, default=True)
    )
    resources = task.get("resources")
    memory = resources.get("memory") if isinstance(resources, HclObject) else None
    memory_mb = (
        Setting(float(memory), Location(path, resources.lines.get("memory", 1)))
        if isinstance(resources, HclObject)
        and isinstance(memory, (int, float))
        and not isinstance(memory, bool)
        else None
    )
    return Container(
        name=name,
        at=first,
        platform="nomad",
        memory_limit_mb=memory_mb,
        grace_period_s=grace,
        replicas=replicas,
        words=_WORDS,
    )
