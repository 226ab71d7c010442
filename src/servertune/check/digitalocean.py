"""DigitalOcean App Platform's app spec: what its services and workers start.

An app spec (https://docs.digitalocean.com/products/app-platform/reference/app-spec/) is
`.do/app.yaml`, the spec under `spec:` of a "Deploy to DigitalOcean" button's
`.do/deploy.template.yaml`, or any YAML `doctl apps create --spec` is given whose top-level
`services:` / `workers:` carry App Platform's keys (`run_command`, `dockerfile_path`,
`http_port`, `environment_slug`, ...; App Engine's `app.yaml` has none of them). Each service
or worker runs:

* its `run_command`, a command line run in its `source_dir` (as a Procfile's line is);
* else the image the Dockerfile at `dockerfile_path` (from the repository's root) builds in
  `source_dir`, with its own ENTRYPOINT / CMD;
* else the buildpack's default: the Procfile's `web` line in `source_dir`.

`envs` (`key` / `value`, a `scope` of `BUILD_TIME` only not at run time) are its environment;
a service listens on `http_port`, 8080 by default, which App Platform puts in PORT unless
`envs` sets it (the reference's `http_port`). `termination.grace_period_seconds` is the time
between SIGTERM and SIGKILL, 120 s by default (https://docs.digitalocean.com/products/app-
platform/how-to/configure-termination); `instance_count` the instance count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.commands import FollowWords, Word
from servertune.check.model import AppServer, Location, NotFollowed, NothingToCheck, Setting

if TYPE_CHECKING:
    from servertune.check.kubernetes import _Node

__all__ = ["DIGITALOCEAN_GRACE_S", "DIGITALOCEAN_PORT", "looks_like_app_spec", "read_app_spec"]

#: App Platform: the port a service listens on when `http_port` is unset (put in PORT).
DIGITALOCEAN_PORT = "8080"
#: App Platform: seconds between SIGTERM and SIGKILL when `termination` sets none.
DIGITALOCEAN_GRACE_S = 120.0

#: Keys of an App Platform component that no compose service or App Engine file has.
_COMPONENT_KEYS = re.compile(
    r"^[ \t]*-?[ \t]*(run_command|dockerfile_path|http_port|environment_slug|"
    r"instance_size_slug|source_dir)[ \t]*:",
    re.M,
)
_COMPONENTS = re.compile(r"^[ \t]*(services|workers):", re.M)


def looks_like_app_spec(path: Path, text: str) -> bool:
    """YAML in `.do/` with services or workers, or any YAML whose services / workers carry
    App Platform's keys."""
    if path.suffix.lower() not in (".yaml", ".yml") or not _COMPONENTS.search(text):
        return False
    if re.search(r"^apiVersion:", text, re.M):
        return False
    return path.parent.name == ".do" or bool(_COMPONENT_KEYS.search(text))


def read_app_spec(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The app servers the spec's services and workers start, each in its App Platform
    container."""
    from servertune.check.platforms import yaml_root

    root = yaml_root(path, text)
    spec = root.get("spec") if root.get("spec") is not None else root
    assert spec is not None
    apps: list[AppServer] = []
    unfollowed: NotFollowed | None = None
    for kind in ("services", "workers"):
        for component in spec.each(kind):
            try:
                app = _component(path, component, kind == "services", env or {}, follow)
            except NotFollowed as why:  # another component may be followed: said if none is
                unfollowed, app = unfollowed or why, None
            if app is not None:
                apps.append(app)
    if not apps and unfollowed is not None:
        raise unfollowed
    if not apps:
        raise NothingToCheck(
            f"{path}: no service or worker of this app spec starts a server check reads "
            "(gunicorn, uvicorn, granian, uWSGI) from the files here: nothing to check"
        )
    return tuple(apps)


def _environment(component: _Node, web: bool) -> tuple[dict[str, str], dict[str, Location]]:
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    for item in component.each("envs"):
        key, value = item.get("key"), item.get("value")
        scope = item.get("scope")
        if scope is not None and (scope.text() or "").upper() == "BUILD_TIME":
            continue
        if key is not None and key.text() and value is not None and value.text() is not None:
            values[key.text() or ""] = value.text() or ""
            where[key.text() or ""] = value.at
    port = component.get("http_port")
    if web and "PORT" not in values:
        # App Platform's own: PORT is http_port (8080 by default) unless envs set it.
        values["PORT"] = (port.text() if port is not None else None) or DIGITALOCEAN_PORT
        if port is not None:
            where["PORT"] = port.at
    return values, where


def _component(
    path: Path,
    component: _Node,
    web: bool,
    env: Mapping[str, str],
    follow: FollowWords | None,
) -> AppServer | None:
    from servertune.check.platforms import (
        command_server,
        image_server,
        in_platform,
        procfile_web,
    )

    source = component.get("source_dir")
    root = path.parent.parent if path.parent.name == ".do" else path.parent
    folder = root / ((source.text() if source is not None else None) or ".").lstrip("/")
    environment, env_at = _environment(component, web)
    environment = {**environment, **env}
    run = component.get("run_command")
    dockerfile = component.get("dockerfile_path")
    found: AppServer | None
    if run is not None and run.text():
        found = command_server(
            path, Word(run.text() or "", run.at), folder, environment, env_at, follow
        )
    elif dockerfile is not None and dockerfile.text():
        written = root / (dockerfile.text() or "Dockerfile").lstrip("/")  # the repository's
        found = image_server(path, written, folder, None, environment, env_at)
    else:
        found = procfile_web(path, folder, environment, follow, env_at)
    if found is None:
        return None
    name_node = component.get("name")
    name = (name_node.text() if name_node is not None else None) or "service"
    grace_node = component.get("termination", "grace_period_seconds")
    grace = (
        Setting(float(grace_node.number("grace_period_seconds") or 0), grace_node.at)
        if grace_node is not None and grace_node.text() is not None
        else Setting(DIGITALOCEAN_GRACE_S, component.at, default=True)
    )
    count = component.get("instance_count")
    replicas = (
        Setting(int(count.number("instance_count") or 1), count.at)
        if count is not None and count.text() is not None
        else None
    )
    return in_platform(found, "digitalocean", name, component.at, grace, replicas)
