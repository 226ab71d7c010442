"""Application platforms' files: what Fly.io, Render, Heroku and Cloud Foundry start, and the
machine and stop they give it.

A platform file names what starts the app server (a command, the repository's Dockerfile, or
its Procfile's `web` process) and sets its environment, instance count, CPU and stop grace.
The server is read as a compose service's is, and carries a container of its platform, so the
shutdown and CPU rules judge it against the platform's own numbers, each with its documented
default, and a fix is spelled in the platform file's words:

* `fly.toml` (https://fly.io/docs/reference/configuration/): `[processes]` commands (each the
  image's CMD, its ENTRYPOINT kept), else the image `[build] dockerfile` or `image` names
  (`Dockerfile` beside fly.toml by default), else a `builder`'s Procfile `web`; `[env]`;
  `kill_signal` (SIGINT by default) and `kill_timeout` (5 s by default); `[[vm]] cpus` /
  `memory`.
* `render.yaml` (https://render.com/docs/blueprint-spec): each web / private service or
  worker: `startCommand`, or `runtime: docker` (`env: docker`) with `dockerfilePath`
  (`./Dockerfile`), `dockerContext` and `dockerCommand` (the image's CMD); `envVars`
  (`key` / `value`), PORT 10000 for a web service unless set (https://render.com/docs/web-
  services#port-binding); `maxShutdownDelaySeconds` (30 s by default); `numInstances`.
* `app.json` and `heroku.yml` (https://devcenter.heroku.com/articles/app-json-schema,
  https://devcenter.heroku.com/articles/build-docker-images-heroku-yml): Heroku runs
  heroku.yml's `run.web`, else the image its `build.docker.web` builds, else the Procfile's
  `web`; app.json's `env` values and `formation.web.quantity`. Heroku sends SIGTERM to every
  process of the dyno and SIGKILL 30 s later, which no file sets
  (https://devcenter.heroku.com/articles/dyno-shutdown-behavior).
* A Cloud Foundry manifest (https://docs.cloudfoundry.org/devguide/deploy-apps/manifest-
  attributes.html): each application's `command` (else its `processes` web command, else the
  Procfile's `web` in its `path`), run in `path`; `env`, PORT 8080 unless set
  (https://docs.cloudfoundry.org/devguide/deploy-apps/environment-variable.html#PORT);
  `instances`; `memory`. CF sends SIGTERM and SIGKILL `CLOUDFOUNDRY_STOP_GRACE_S` later,
  which no manifest sets.
* A Google App Engine service file, whatever its name (`gcloud app deploy src/api.yaml` takes
  any: https://cloud.google.com/appengine/docs/standard/reference/app-yaml): a top-level
  `runtime:` with an `entrypoint:`, the command App Engine runs in the file's folder with PORT
  set, 8080 (https://cloud.google.com/appengine/docs/standard/python3/runtime#application_startup,
  https://cloud.google.com/appengine/docs/standard/python3/runtime#environment_variables);
  `env_variables`; `instance_class`'s memory
  (https://cloud.google.com/appengine/docs/standard#instance_classes). Its routing, cron, index
  and queue files (`dispatch.yaml`, ...) have no `runtime:` and start nothing.

What the platform gives at run time only (a `${VAR}` it fills, the router's port) is left to
the server's own reading: an unresolved value is a coverage note, never a refusal.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from servertune.check import resolve
from servertune.check.commands import (
    FollowWords,
    Word,
    beside,
    read_command,
    server_command,
    shell_commands,
)
from servertune.check.dockerfile import (
    Image,
    container_words,
    find_server,
    read_image,
    with_stop_signal,
)
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
from servertune.check.source import read_text

if TYPE_CHECKING:
    from servertune.check.kubernetes import _Node

__all__ = [
    "CLOUDFOUNDRY_STOP_GRACE_S",
    "command_server",
    "dockerfile_image",
    "image_server",
    "in_platform",
    "looks_like_platform",
    "procfile_web",
    "read_platform",
    "seconds",
    "yaml_root",
]

Platform = Literal[
    "fly", "render", "heroku", "cloudfoundry", "appengine", "railway", "digitalocean"
]

#: Fly.io: `kill_timeout` 5 s and `kill_signal` SIGINT when fly.toml sets none.
FLY_KILL_TIMEOUT_S = 5.0
FLY_KILL_SIGNAL = "SIGINT"
_FLY_DOC = (
    "https://fly.io/docs/reference/configuration/#runtime-options (kill_signal: SIGINT by "
    "default; kill_timeout: seconds before the machine is killed, 5 by default); "
    "https://fly.io/blog/graceful-vm-exits-some-dials/"
)
#: Render: `maxShutdownDelaySeconds`, 30 s by default (1 to 300); PORT 10000 for a web service.
RENDER_SHUTDOWN_DELAY_S = 30.0
RENDER_PORT = "10000"
_RENDER_DOC = (
    "https://render.com/docs/blueprint-spec#maxshutdowndelayseconds (the time Render waits "
    "after SIGTERM before SIGKILL, 30 s by default); https://render.com/docs/deploys#graceful-"
    "shutdown"
)

#: Cloud Foundry: the port an app instance listens on, in PORT (Diego's default 8080).
CLOUDFOUNDRY_PORT = "8080"
#: Cloud Foundry: the seconds between SIGTERM to the app's process and SIGKILL, which no
#: manifest sets (https://docs.cloudfoundry.org/devguide/deploy-apps/app-lifecycle.html#shutdown).
CLOUDFOUNDRY_STOP_GRACE_S = 10

_WORDS: dict[Platform, PlatformWords] = {
    "fly": PlatformWords(
        "Fly.io", "kill_timeout", "kill_timeout = {}", _FLY_DOC, "[[vm]] cpus", "[[vm]] memory"
    ),
    "render": PlatformWords(
        "Render", "maxShutdownDelaySeconds", "maxShutdownDelaySeconds: {}", _RENDER_DOC, "plan"
    ),
    "heroku": PlatformWords("Heroku", cpu_name="formation size", memory_name="formation size"),
    "cloudfoundry": PlatformWords("Cloud Foundry", memory_name="memory"),
    "appengine": PlatformWords(
        "App Engine", cpu_name="instance_class", memory_name="instance_class"
    ),
    "railway": PlatformWords(
        "Railway",
        "drainingSeconds",
        "drainingSeconds = {}",
        "https://docs.railway.com/guides/deployment-teardown (draining time: seconds between "
        "SIGTERM and SIGKILL)",
    ),
    "digitalocean": PlatformWords(
        "DigitalOcean App Platform",
        "termination.grace_period_seconds",
        "grace_period_seconds: {} (under termination:)",
        "https://docs.digitalocean.com/products/app-platform/how-to/configure-termination "
        "(grace_period_seconds: seconds between SIGTERM and SIGKILL, 120 by default)",
        "instance_size_slug",
        "instance_size_slug",
    ),
}

_FLY_NAME = re.compile(r"\A(fly|.+\.fly|fly[.-].+)\.toml\Z", re.I)
_FLY_CONTENT = re.compile(
    r"^[ \t]*(kill_timeout|kill_signal|primary_region)[ \t]*=|^[ \t]*\[+(http_service|services"
    r"|processes|vm)\b",
    re.M,
)
_CF_CONTENT = re.compile(r"^applications:[ \t]*(#.*)?\n(?:[ \t]*(#.*)?\n)*[ \t]*-[ \t]", re.M)
#: App Engine: a service file's top level names its runtime and the command that starts it.
_GAE_RUNTIME = re.compile(r"^runtime:[ \t]*\S", re.M)
_GAE_ENTRYPOINT = re.compile(r"^entrypoint:[ \t]*\S", re.M)
#: App Engine: the port the instance's server listens on, in PORT.
APPENGINE_PORT = "8080"
#: App Engine standard: each instance class's memory in MB.
_GAE_MEMORY_MB = {
    "F1": 384.0,
    "F2": 768.0,
    "F4": 1536.0,
    "F4_1G": 3072.0,
    "B1": 384.0,
    "B2": 768.0,
    "B4": 1536.0,
    "B4_1G": 3072.0,
    "B8": 3072.0,
}
#: A `${name}` placeholder written where a JSON value belongs (`"port": ${port}`): no quote
#: before it.
_UNQUOTED_PLACEHOLDER = re.compile(r"[:\[,]\s*\$\{")
_APP_JSON_KEYS = ("formation", "scripts", "env", "buildpacks", "stack", "addons", "image")


def looks_like_platform(path: Path, text: str) -> bool:
    """fly.toml (and `fly.<env>.toml`); render.yaml; app.json and heroku.yml; a YAML file whose
    top level is Cloud Foundry's `applications:` list, or an App Engine service's `runtime:`
    and `entrypoint:` (and no Kubernetes `apiVersion:` or compose `services:`)."""
    name = path.name.lower()
    if _FLY_NAME.match(name):
        return bool(_FLY_CONTENT.search(text)) or bool(re.search(r"^app\s*=", text, re.M))
    if name in ("render.yaml", "render.yml"):
        return bool(re.search(r"^services:", text, re.M))
    if name == "app.json":
        return _heroku_app_json(path, text)
    if name in ("heroku.yml", "heroku.yaml"):
        return bool(re.search(r"^(build|run|setup):", text, re.M))
    if path.suffix.lower() in (".yml", ".yaml"):
        if re.search(r"^apiVersion:", text, re.M):
            return False
        return bool(_CF_CONTENT.search(text)) or _appengine_service(text)
    return False


def _heroku_app_json(path: Path, text: str) -> bool:
    """An app.json is Heroku's when it is an object with Heroku's keys, at the repository's
    root or beside the Procfile / heroku.yml Heroku runs; any other `app.json` (an ECS
    container array under `task-definitions/`) is some other tool's file of that name."""
    if not text.lstrip().startswith("{") or not any(f'"{k}"' in text for k in _APP_JSON_KEYS):
        return False
    root = resolve.root()
    folder = path.parent
    return (
        root is None
        or resolve.real_path(folder) == root
        or any((folder / n).is_file() for n in ("Procfile", "heroku.yml", "heroku.yaml"))
    )


def _appengine_service(text: str) -> bool:
    """A service file's top-level `runtime:` and `entrypoint:` (a compose file's `services:`
    is not one)."""
    return (
        bool(_GAE_RUNTIME.search(text))
        and bool(_GAE_ENTRYPOINT.search(text))
        and not re.search(r"^services:", text, re.M)
    )


def read_platform(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The app servers the platform file starts, each in a container of its platform."""
    name = path.name.lower()
    if name.endswith(".toml"):
        apps = _fly(path, text, env, follow)
    elif name in ("render.yaml", "render.yml"):
        apps = _render(path, text, env, follow)
    elif name == "app.json":
        apps = _app_json(path, text, env, follow)
    elif name in ("heroku.yml", "heroku.yaml"):
        apps = _heroku_yml(path, text, env, follow)
    elif not _CF_CONTENT.search(text) and _appengine_service(text):
        apps = _appengine(path, text, env, follow)
    else:
        apps = _cloudfoundry(path, text, env, follow)
    if not apps:
        raise NothingToCheck(
            f"{path}: no process of this platform file starts a server check reads (gunicorn, "
            "uvicorn, granian, uWSGI) from the files here: nothing to check"
        )
    return apps


# --- what starts the server ---------------------------------------------------------------


def _command(
    path: Path,
    command: Word,
    folder: Path,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    follow: FollowWords | None,
) -> AppServer | None:
    """The server a shell command line starts (a Procfile's, a platform's `command`), run in
    `folder`: the server's own, or a script here it runs."""
    finder = beside(folder / "_")
    for words in shell_commands(command):
        found = server_command(words)
        if found is not None:
            return read_command(path, found, env, env_at, shell=True, find_config=finder)
        if follow is None:
            continue
        try:
            started = follow(path, words, env, finder)
        except CheckInputError:  # not a script that starts one (`./manage.py migrate`)
            started = None
        if started is not None:
            return replace(started, launched_by=(command.at, *started.launched_by))
    return None


#: The server a platform's command line starts, run in a folder (ECS's reader's too).
command_server = _command


def dockerfile_image(path: Path, dockerfile: Path, context: Path) -> Image | None:
    """The image `dockerfile` builds for the platform file `path` (None when outside the tree;
    not followed when absent or a template), as `_image` reads it."""
    if not _admitted(path, dockerfile):
        return None
    return read_image(dockerfile, read_text(dockerfile), context)


def _admitted(path: Path, dockerfile: Path) -> bool:
    """Whether the platform file `path`'s `dockerfile` is inside the tree (a note when not);
    not followed when it is absent."""
    if resolve.admit(dockerfile, dockerfile.name, Location(path), "Dockerfile") is None:
        return False
    if not dockerfile.is_file():
        raise NotFollowed(
            f"{path}:1: not followed: the image is built from {dockerfile.name} in "
            f"{dockerfile.parent.name or '.'}/ (as written, or the platform's default), which "
            "is not among the files here"
        )
    return True


def in_platform(
    app: AppServer,
    platform: Platform,
    name: str,
    at: Location,
    grace: Setting[float] | None,
    replicas: Setting[int] | None,
) -> AppServer:
    """`app` in a container of `platform` (another module's platform reader's)."""
    return _in_container(app, platform, name, at, grace=grace, replicas=replicas)


def _image(
    path: Path,
    dockerfile: Path,
    context: Path,
    cmd: Word | None,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    target: str | None = None,
    shell: bool = False,
) -> AppServer | None:
    """The server the image built from `dockerfile` runs (with `cmd` as its CMD when given,
    its ENTRYPOINT kept), under the platform's environment over the image's `ENV`."""
    if not _admitted(path, dockerfile):
        return None
    text = read_text(dockerfile)
    from servertune.check.template_markers import template_line

    line = template_line(text, dockerfile=True)
    if line is not None:
        # A project template's Dockerfile (`{{ project_name }}`): what it renders to is not
        # here, so neither is what the image runs (the walk notes the template itself).
        raise NotFollowed(
            f"{path}:1: not followed: the image is built from {dockerfile.name}, a template "
            f"(its line {line}): what it renders to is not in the repository"
        )
    image = read_image(dockerfile, text, context, target)
    return _in_image(path, image, cmd, env, env_at, shell)


#: For other modules' platform readers: the server of an image a Dockerfile builds.
image_server = _image


def _named_image(
    path: Path,
    reference: str,
    cmd: Word | None,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
) -> AppServer | None:
    """The server of the repository's own image a reference names (`images.image_named`)."""
    from servertune.check.images import image_named

    image = image_named(reference, path)
    if image is None:
        return None
    return _in_image(path, image, cmd, env, env_at)


def _in_image(
    path: Path,
    image: Image,
    cmd: Word | None,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    shell: bool = False,
) -> AppServer | None:
    """The server `image` runs with `cmd` as its CMD (the platform's words; run by `/bin/sh
    -c` when `shell`, as heroku.yml's `run` strings are), else its own CMD."""
    if cmd is not None and shell:
        first, rest = container_words(image, image.entrypoint, image.entrypoint_shell, (cmd,), True)
    elif cmd is not None:
        try:
            words = tuple(Word(w, cmd.at) for w in shlex.split(cmd.text))
        except ValueError:
            raise CheckInputError(f"{cmd.at}: cannot split the command into words") from None
        first, rest = container_words(image, image.entrypoint, image.entrypoint_shell, words, False)
    else:
        first, rest = container_words(
            image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
        )
    environment = {**image.env, **env}
    where = {**image.env_at, **env_at}
    return find_server(path, first, rest, environment, where, image)


def _procfile_web(
    path: Path,
    folder: Path,
    env: Mapping[str, str],
    follow: FollowWords | None,
    env_at: Mapping[str, Location] | None = None,
    *,
    signals_group: bool = True,
) -> AppServer | None:
    """The server of the `web` process of the Procfile in `folder` (the process a platform's
    router sends HTTP to), None when there is none here; `signals_group` as
    `read_procfile_entries` takes it."""
    from servertune.check.procfile import read_procfile_entries

    procfile = folder / "Procfile"
    if not resolve.inside(procfile, path) or not procfile.is_file():
        return None
    try:
        entries = read_procfile_entries(
            procfile, read_text(procfile), env, follow, env_at, signals_group=signals_group
        )
    except NothingToCheck:
        return None
    return next((app for name, app in entries if name == "web"), None)


procfile_web = _procfile_web


def _in_container(
    app: AppServer,
    platform: Platform,
    name: str,
    at: Location,
    *,
    cpus: Setting[float] | None = None,
    memory_mb: Setting[float] | None = None,
    grace: Setting[float] | None = None,
    replicas: Setting[int] | None = None,
) -> AppServer:
    box = Container(
        name=name,
        at=at,
        platform=platform,
        cpu_limit=cpus,
        memory_limit_mb=memory_mb,
        grace_period_s=grace,
        replicas=replicas,
        words=_WORDS[platform],
    )
    if platform == "heroku" and app.without_exec is not None and app.group_signalled is None:
        # https://devcenter.heroku.com/articles/dyno-shutdown-behavior: the dyno manager sends
        # SIGTERM to every process of the dyno, so a shell's child gets it without `exec`.
        dyno = Setting("Heroku's dyno manager (SIGTERM to every process of the dyno)", at)
        return replace(app, container=box, group_signalled=dyno)
    return replace(app, container=box)


# --- Fly.io ---------------------------------------------------------------------------------


def _fly(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CheckInputError(f"{path}: TOML syntax error: {error}") from None
    lines = _TomlLines(path, text)
    app_name = str(data.get("app") or path.stem)
    fly_env = {str(k): str(v) for k, v in _table(data, "env").items()}
    environment = {**fly_env, **(env or {})}
    env_at = {k: lines.line("env", k) for k in fly_env}
    grace = _fly_grace(data, lines)
    signal_at = lines.at("", "kill_signal")
    signal = str(data.get("kill_signal") or FLY_KILL_SIGNAL)
    vm = _fly_vm(data, lines)
    build = _table(data, "build")
    processes = data.get("processes")
    commands: list[tuple[str, Word | None]] = []
    if isinstance(processes, dict) and processes:
        for process, command in processes.items():
            commands.append((str(process), Word(str(command), lines.line("processes", process))))
    else:
        written = _table(data, "experimental").get("cmd")
        line = (
            " ".join(map(shlex.quote, map(str, written))) if isinstance(written, list) else written
        )
        at = lines.line("experimental", "cmd")
        commands.append(("app", Word(line, at) if isinstance(line, str) and line else None))
    apps: list[AppServer] = []
    for process, cmd in commands:
        found: AppServer | None
        if isinstance(build.get("image"), str):
            found = _named_image(path, build["image"], cmd, environment, env_at)
        elif build.get("builder") or build.get("buildpacks"):
            found = (
                _command(path, cmd, path.parent, environment, env_at, follow)
                if cmd is not None
                else _procfile_web(path, path.parent, environment, follow, env_at)
            )
        else:
            dockerfile = path.parent / str(build.get("dockerfile") or "Dockerfile")
            target = build.get("build-target")
            found = _image(
                path,
                dockerfile,
                dockerfile.parent,
                cmd,
                environment,
                env_at,
                target if isinstance(target, str) else None,
            )
        if found is None:
            continue
        found = _with_fly_signal(found, signal, signal_at or Location(path))
        at = cmd.at if cmd is not None else lines.at("", "app") or Location(path)
        apps.append(
            _in_container(
                found,
                "fly",
                f"{app_name} {process}",
                at,
                cpus=vm[0],
                memory_mb=vm[1],
                grace=grace,
            )
        )
    return tuple(apps)


def _with_fly_signal(app: AppServer, signal: str, at: Location) -> AppServer:
    return with_stop_signal(app, signal, at, 'kill_signal = "SIGTERM"')


def _fly_grace(data: dict[str, Any], lines: _TomlLines) -> Setting[float]:
    """`kill_timeout` in seconds (a number, or a duration such as "30s"), else Fly's 5 s."""
    value = data.get("kill_timeout")
    at = lines.at("", "kill_timeout")
    if value is None or at is None:
        return Setting(FLY_KILL_TIMEOUT_S, at or lines.first, default=True)
    seconds = _seconds(value)
    if seconds is None:
        raise CheckInputError(f"{at}: kill_timeout {value!r} is not a number of seconds")
    return Setting(seconds, at)


def _fly_vm(
    data: dict[str, Any], lines: _TomlLines
) -> tuple[Setting[float] | None, Setting[float] | None]:
    """The first `[[vm]]`'s `cpus` and `memory` (MB), each None when not written."""
    vms = data.get("vm")
    vm = vms[0] if isinstance(vms, list) and vms and isinstance(vms[0], dict) else {}
    cpus = vm.get("cpus")
    cpu_at = lines.at("vm", "cpus")
    cpu = Setting(float(cpus), cpu_at) if isinstance(cpus, int | float) and cpu_at else None
    memory = _megabytes(vm.get("memory"))
    memory_at = lines.at("vm", "memory")
    mem = Setting(memory, memory_at) if memory is not None and memory_at else None
    return cpu, mem


# --- Render -------------------------------------------------------------------------------


def _render(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    root = _yaml_root(path, text)
    apps: list[AppServer] = []
    unfollowed: NotFollowed | None = None
    for service in root.each("services"):
        kind = _text(service.get("type"))
        if kind not in ("web", "pserv", "worker"):
            continue  # a database, a key value store, a cron job, a static site
        name = _text(service.get("name")) or "web"
        environment: dict[str, str] = {}
        env_at: dict[str, Location] = {}
        for item in service.each("envVars"):
            key, value = _text(item.get("key")), item.get("value")
            if key and value is not None and _text(value) is not None:
                environment[key] = _text(value) or ""
                env_at[key] = value.at
        if kind == "web" and "PORT" not in environment:
            environment["PORT"] = RENDER_PORT  # Render's own, where its router sends traffic
        environment = {**environment, **(env or {})}
        runtime = _text(service.get("runtime")) or _text(service.get("env")) or ""
        found: AppServer | None
        if runtime == "docker":
            dockerfile = path.parent / (_text(service.get("dockerfilePath")) or "Dockerfile")
            context = path.parent / (_text(service.get("dockerContext")) or ".")
            command = service.get("dockerCommand")
            cmd = Word(_text(command) or "", command.at) if command is not None else None
            try:
                found = _image(path, dockerfile, context, cmd, environment, env_at)
            except NotFollowed as why:  # another service may be followed: said if none is
                unfollowed, found = unfollowed or why, None
        elif runtime == "image":
            image = service.get("image", "url")
            reference = _text(image) if image is not None else None
            found = _named_image(path, reference, None, environment, env_at) if reference else None
        else:
            start = service.get("startCommand")
            found = (
                _command(
                    path,
                    Word(_text(start) or "", start.at),
                    path.parent,
                    environment,
                    env_at,
                    follow,
                )
                if start is not None
                else None
            )
        if found is None:
            continue
        delay = service.get("maxShutdownDelaySeconds")
        grace = (
            Setting(float(delay.number("maxShutdownDelaySeconds") or 0), delay.at)
            if delay is not None and delay.text() is not None
            else Setting(RENDER_SHUTDOWN_DELAY_S, service.at, default=True)
        )
        count = service.get("numInstances")
        replicas = (
            Setting(int(count.number("numInstances") or 1), count.at)
            if count is not None and count.text() is not None
            else None
        )
        apps.append(
            _in_container(found, "render", name, service.at, grace=grace, replicas=replicas)
        )
    if not apps and unfollowed is not None:
        raise unfollowed
    return tuple(apps)


# --- Heroku ---------------------------------------------------------------------------------


def _app_json(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        if _UNQUOTED_PLACEHOLDER.search(text):
            # A template (Terraform's `templatefile`): JSON only once its tool fills it.
            raise NotFollowed(
                f"{path}:1: not followed: a template whose `${{name}}` placeholders stand "
                "where JSON values belong; it is JSON only once its tool fills them"
            ) from None
        raise CheckInputError(f"{path}: JSON syntax error: {error}") from None
    if not isinstance(data, dict):
        raise CheckInputError(f"{path}: not an app.json (its top level is not an object)")
    environment: dict[str, str] = {}
    env_at: dict[str, Location] = {}
    variables = data.get("env")
    for key, spec in variables.items() if isinstance(variables, dict) else ():
        value = spec.get("value") if isinstance(spec, dict) else spec
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            environment[str(key)] = str(value)
            env_at[str(key)] = _json_line(path, text, str(key))
    environment = {**environment, **(env or {})}
    heroku_yml = next(
        (path.parent / n for n in ("heroku.yml", "heroku.yaml") if (path.parent / n).is_file()),
        None,
    )
    if heroku_yml is not None and resolve.inside(heroku_yml, path):
        found = _heroku_web(heroku_yml, read_text(heroku_yml), environment, env_at, follow)
    elif (path.parent / "Procfile").is_file():
        found = _procfile_web(path, path.parent, environment, follow, env_at)
    else:
        raise NotFollowed(
            f"{path}:1: not followed: Heroku runs the web process of heroku.yml (a container "
            "stack) or of the Procfile beside app.json, and neither is here"
        )
    if found is None:
        return ()
    formation = data.get("formation")
    web = formation.get("web") if isinstance(formation, dict) else None
    quantity = web.get("quantity") if isinstance(web, dict) else None
    replicas = (
        Setting(quantity, _json_line(path, text, "quantity"))
        if isinstance(quantity, int) and not isinstance(quantity, bool)
        else None
    )
    at = _json_line(path, text, "formation") if web is not None else Location(path)
    return (_in_container(found, "heroku", "web", at, replicas=replicas),)


def _heroku_yml(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    app_json = path.parent / "app.json"
    if resolve.inside(app_json, path) and app_json.is_file():
        return ()  # app.json beside it reads it, with its environment: one launch, not two
    found = _heroku_web(path, text, dict(env or {}), {}, follow)
    if found is None:
        return ()
    return (_in_container(found, "heroku", "web", Location(path)),)


def _heroku_web(
    path: Path,
    text: str,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    follow: FollowWords | None,
) -> AppServer | None:
    """heroku.yml's web process: `run.web` (a string, or `command:` a list), in the image
    `build.docker.web` builds; else that image's own command; else the Procfile's web."""
    from servertune.check.procfile import on_platform_port

    root = _yaml_root(path, text)
    dockerfile_node = root.get("build", "docker", "web")
    run = root.get("run", "web")
    command = run.get("command") if run is not None and run.get("command") is not None else run
    cmd: Word | None = None
    run_by_shell = command is not None and _text(command) is not None
    if command is not None:
        words = [_text(n) or "" for n in command.list()] or [_text(command) or ""]
        cmd = Word(" ".join(map(shlex.quote, words)) if len(words) > 1 else words[0], command.at)
    target: str | None = None
    if dockerfile_node is not None and dockerfile_node.get("dockerfile") is not None:
        # The long form `web: {dockerfile: X, target: STAGE}` builds that stage (as compose's
        # `build.target` does), not the Dockerfile's last one.
        target = _text(dockerfile_node.get("target")) or None
        dockerfile_node = dockerfile_node.get("dockerfile")
    dockerfile_name = _text(dockerfile_node) if dockerfile_node is not None else None
    found: AppServer | None
    if dockerfile_name:
        dockerfile = path.parent / dockerfile_name
        # A `run` string is run by `/bin/sh -c` (a list is the exec form).
        found = _image(
            path, dockerfile, path.parent, cmd, env, env_at, target=target, shell=run_by_shell
        )
    elif cmd is not None and cmd.text:
        found = _command(path, cmd, path.parent, env, env_at, follow)
    else:
        return _procfile_web(path, path.parent, env, follow, env_at)
    # Heroku sets PORT for every web dyno, a container's too, to a port it picks: gunicorn
    # with no bind listens on `0.0.0.0:$PORT`, as under a Procfile.
    return on_platform_port(found, cmd.at if cmd is not None else Location(path)) if found else None


# --- Cloud Foundry --------------------------------------------------------------------------

#: A Cloud Foundry manifest variable, `((name))`, filled by `cf push --vars-file`/`--var`
#: (https://docs.cloudfoundry.org/devguide/deploy-apps/manifest-attributes.html#variable-substitution):
#: a value not in the repository, unknown rather than a mistake in the manifest.
_CF_VARIABLE = re.compile(r"\(\([^()\s]+\)\)")


def _cf_instances(count: _Node) -> Setting[int] | None:
    """The app's instance count; None when unknown (absent, or a `((variable))`)."""
    text = count.text()
    if text is None:
        return None
    if _CF_VARIABLE.search(text):
        note(
            "unresolved-variable",
            count.at,
            f"instances {text}: a Cloud Foundry manifest variable (`cf push --vars-file`), "
            "known only when the app is pushed; read without it",
        )
        return None
    return Setting(int(count.number("instances") or 1), count.at)


def _cf_app_root(path: Path, command: str) -> Path:
    """The folder an application with no `path:` is pushed from: `cf push` sends the folder
    it runs in (https://docs.cloudfoundry.org/devguide/deploy-apps/manifest-attributes.html#path),
    the manifest's own or, for `cf push -f manifests/prod.yml`, one above it. The manifest's
    folder unless a file the command names (`bash cf.sh`, `./bin/start.sh`) is not there but
    is in a folder above it, within the tree read: the nearest such folder."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return path.parent
    named = [w for w in words if not w.startswith(("-", "$", "/")) and ("/" in w or "." in w)]
    if not named or any((path.parent / w).is_file() for w in named):
        return path.parent
    top = resolve.root()
    for folder in path.parent.parents:
        if top is None or not folder.resolve().is_relative_to(top):
            break
        if any((folder / w).is_file() for w in named):
            return folder
    return path.parent


def _cloudfoundry(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    root = _yaml_root(path, text)
    apps: list[AppServer] = []
    for application in root.each("applications"):
        name = _text(application.get("name")) or "app"
        folder_node = application.get("path")
        command = application.get("command")
        folder = (
            path.parent / (_text(folder_node) or ".")
            if folder_node
            else _cf_app_root(path, _text(command) or "" if command is not None else "")
        )
        environment: dict[str, str] = {}
        env_at: dict[str, Location] = {}
        variables = application.get("env")
        for key, value in variables.items() if variables is not None else []:
            if value.text() is not None and not _CF_VARIABLE.search(value.text() or ""):
                environment[key] = value.text() or ""
                env_at[key] = value.at
        environment = {"PORT": CLOUDFOUNDRY_PORT, **environment, **(env or {})}
        web = next(
            (p for p in application.each("processes") if _text(p.get("type")) == "web"), None
        )
        if command is None and web is not None:
            command = web.get("command")
        found: AppServer | None
        if command is not None and _text(command):
            found = _command(
                path, Word(_text(command) or "", command.at), folder, environment, env_at, follow
            )
        else:
            # CF runs the `web` line as the instance's start command and signals that
            # process alone (no dyno manager signalling the group, as Heroku's does).
            found = _procfile_web(path, folder, environment, follow, env_at, signals_group=False)
        if found is None:
            continue
        count = application.get("instances") or (web.get("instances") if web else None)
        replicas = _cf_instances(count) if count is not None else None
        memory = application.get("memory") or (web.get("memory") if web else None)
        megabytes = _megabytes(_text(memory)) if memory is not None else None
        memory_mb = Setting(megabytes, memory.at) if memory and megabytes is not None else None
        apps.append(
            _in_container(
                found,
                "cloudfoundry",
                name,
                application.at,
                memory_mb=memory_mb,
                replicas=replicas,
            )
        )
    return tuple(apps)


# --- Google App Engine ---------------------------------------------------------------------


def _appengine(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The server a service file's `entrypoint` starts, run in the file's folder with PORT
    set and its `env_variables`, in an instance of its `instance_class`."""
    root = _yaml_root(path, text)
    entrypoint = root.get("entrypoint")
    if entrypoint is None or not _text(entrypoint):
        return ()
    environment: dict[str, str] = {}
    env_at: dict[str, Location] = {}
    variables = root.get("env_variables")
    for key, value in variables.items() if variables is not None else []:
        if value.text() is not None:
            environment[key] = value.text() or ""
            env_at[key] = value.at
    environment = {"PORT": APPENGINE_PORT, **environment, **(env or {})}
    command = Word(_text(entrypoint) or "", entrypoint.at)
    found = _command(path, command, path.parent, environment, env_at, follow)
    if found is None:
        return ()
    instance = root.get("instance_class")
    megabytes = _GAE_MEMORY_MB.get((_text(instance) or "").upper())
    memory_mb = Setting(megabytes, instance.at) if instance and megabytes is not None else None
    name = _text(root.get("service")) or _text(root.get("module")) or "default"
    return (_in_container(found, "appengine", name, root.at, memory_mb=memory_mb),)


# --- reading the files ----------------------------------------------------------------------


class _TomlLines:
    """The line of a key in a TOML file, by the table it is in (`""` for the top level;
    `vm` for the first `[[vm]]`): tomllib keeps none."""

    def __init__(self, path: Path, text: str) -> None:
        self.first = Location(path)
        self._found: dict[tuple[str, str], Location] = {}
        table = ""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            header = re.match(r"\A\[\[?\s*([^\]]+?)\s*\]\]?", line)
            if header:
                table = header[1].strip()
                continue
            key = re.match(r"""\A["']?([\w.-]+)["']?\s*=""", line)
            if key:
                self._found.setdefault((table, key[1]), Location(path, number))

    def at(self, table: str, key: str) -> Location | None:
        return self._found.get((table, key))

    def line(self, table: str, key: str) -> Location:
        """The key's line, else the file's first (a key tomllib read from an inline table)."""
        return self._found.get((table, key), self.first)


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


_DURATION = re.compile(r"\A\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*\Z")
_DURATION_S = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(value: object) -> float | None:
    """A number of seconds, or a Go duration's simple form (`"30s"`, `"5m"`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = _DURATION.match(str(value))
    return float(match[1]) * _DURATION_S[match[2]] if match else None


seconds = _seconds


_SIZE = re.compile(r"\A\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*\Z", re.I)
_SIZE_MB = {"": 1.0, "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}


def _megabytes(value: object) -> float | None:
    """A memory size in MB: a bare number is MB (fly's `memory = 512`, CF's `512M`), with a
    unit (`1G`, `2gb`, `512mb`) in 1024-based units as both platforms read them."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = _SIZE.match(str(value)) if value is not None else None
    return float(match[1]) * _SIZE_MB[match[2].lower()] if match else None


def _yaml_root(path: Path, text: str) -> _Node:
    from servertune.check.kubernetes import _documents

    documents = _documents(path, text)
    if not documents:
        raise CheckInputError(f"{path}: empty")
    return documents[0]


yaml_root = _yaml_root


def _text(node: _Node | None) -> str | None:
    return node.text() if node is not None else None


def _json_line(path: Path, text: str, key: str) -> Location:
    """The line of `"key":` in a JSON file (json keeps no lines), else its first line."""
    index = text.find(f'"{key}"')
    return Location(path, text.count("\n", 0, index) + 1) if index >= 0 else Location(path)
