"""The image a script's `docker run IMAGE [CMD ARGS...]` starts, when the repository builds it.

A developer's or a deploy script builds an image and runs it (`docker build -t app-dev -f
dev.Dockerfile .`, then `docker run -p 7051:80 app-dev`): the container runs that
Dockerfile's ENTRYPOINT and CMD as a compose service built from it does, with what `docker
run` changes (https://docs.docker.com/reference/cli/docker/container/run/): `--entrypoint`
replaces the ENTRYPOINT and drops the image's CMD, the words after IMAGE replace the CMD,
`-e KEY=VAL` is added to the image's ENV, `-w` moves the working directory, and a bind mount
(`-v ./conf.py:/app/conf.py`, `--mount type=bind,...`) puts the script's file where the image
held its own. The image is the one a `docker build -t IMAGE` line of the same script builds,
else the one the repository's files say builds that name (`images.image_named`); a name no
file builds (`postgres`, an image pulled from a registry) starts nothing check reads. A `docker
run` whose words start no server (a migration's `--entrypoint alembic`) is not a launch.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check import resolve
from servertune.check.commands import Word, expand_known
from servertune.check.model import AppServer, CheckInputError, Location, collect_notes
from servertune.check.shell_lists import logical_lines, simple_commands

if TYPE_CHECKING:
    from servertune.check.dockerfile import Image

__all__ = ["DockerRun", "docker_runs", "run_servers"]

#: `docker run`, `docker container run`, `podman run` (and `podman container run`).
_ENGINES = frozenset({"docker", "podman"})
#: `docker run`'s options that take a value (the next word, or `--opt=value`).
_VALUED = frozenset(
    [
        "--add-host",
        "--annotation",
        "--attach",
        "--blkio-weight",
        "--blkio-weight-device",
        "--cap-add",
        "--cap-drop",
        "--cgroup-parent",
        "--cgroupns",
        "--cidfile",
        "--cpu-period",
        "--cpu-quota",
        "--cpu-rt-period",
        "--cpu-rt-runtime",
        "--cpu-shares",
        "--cpus",
        "--cpuset-cpus",
        "--cpuset-mems",
        "--device",
        "--device-cgroup-rule",
        "--device-read-bps",
        "--device-read-iops",
        "--device-write-bps",
        "--device-write-iops",
        "--dns",
        "--dns-option",
        "--dns-search",
        "--domainname",
        "--entrypoint",
        "--env",
        "--env-file",
        "--expose",
        "--gpus",
        "--group-add",
        "--health-cmd",
        "--health-interval",
        "--health-retries",
        "--health-start-interval",
        "--health-start-period",
        "--health-timeout",
        "--hostname",
        "--ip",
        "--ip6",
        "--ipc",
        "--isolation",
        "--kernel-memory",
        "--label",
        "--label-file",
        "--link",
        "--link-local-ip",
        "--log-driver",
        "--log-opt",
        "--mac-address",
        "--memory",
        "--memory-reservation",
        "--memory-swap",
        "--memory-swappiness",
        "--mount",
        "--name",
        "--network",
        "--net",
        "--network-alias",
        "--oom-score-adj",
        "--pid",
        "--pids-limit",
        "--platform",
        "--publish",
        "--pull",
        "--restart",
        "--runtime",
        "--security-opt",
        "--shm-size",
        "--stop-signal",
        "--stop-timeout",
        "--storage-opt",
        "--sysctl",
        "--tmpfs",
        "--ulimit",
        "--user",
        "--userns",
        "--uts",
        "--volume",
        "--volume-driver",
        "--volumes-from",
        "--workdir",
    ]
)
#: The short options that take a value: -a -c -e -h -l -m -p -u -v -w.
_VALUED_SHORT = frozenset("acehlmpuvw")
#: A redirection (`> /dev/null`, `2>&1`): no word of the command it follows.
_REDIRECTION = re.compile(r"(?<!\S)\d*(?:>>?|<)&?\s*(?:&?\d+|[^\s;&|]+)")
_ASSIGNMENT = re.compile(r"^(?:export\s+)?(?P<name>[A-Za-z_]\w*)=(?P<value>\S*)\s*$")
#: Words a command may follow on its line (`then docker run ...`, `exec docker run`).
_LEADING = frozenset({"then", "else", "do", "exec", "{", "!", "sudo"})
#: What `$(pwd)` / `$PWD` in a mount's host path is: the folder the script runs from.
_PWD = re.compile(r"\$\(pwd\)|\$\{PWD\}|\$PWD\b|`pwd`")


@dataclass(frozen=True)
class DockerRun:
    """One `docker run` line: its image and what it changes of the image's run."""

    at: Location
    image: str
    args: tuple[Word, ...]
    entrypoint: Word | None = None
    env: tuple[tuple[str, str], ...] = ()
    workdir: str | None = None
    #: Bind mounts of files here: (host path, container path, line).
    mounts: tuple[tuple[Path, PurePosixPath, Location], ...] = ()


def _commands(line: str) -> list[list[str]]:
    """The line's simple commands (split at `;`, `&&`, `||`, `|`, `&`), redirections left
    out; [] when the shell could not split it."""
    return simple_commands(_REDIRECTION.sub(" ", line), commenters="#")


def docker_runs(path: Path, text: str) -> list[DockerRun]:
    """Each `docker run` of the script, its variables (`IMAGE=app`) expanded as far as the
    script's own top-level assignments say."""
    env: dict[str, str] = {}
    found: list[DockerRun] = []
    for first, line in logical_lines(text):
        assigned = _ASSIGNMENT.match(line.strip())
        if assigned is not None:
            env[assigned["name"]] = expand_known(assigned["value"].strip("\"'"), env)
            continue
        for words in _commands(line):
            while words and words[0] in _LEADING:
                words = words[1:]
            run = _run_words(words)
            if run is not None:
                parsed = _parsed(path, Location(path, first), [expand_known(w, env) for w in run])
                if parsed is not None:
                    found.append(parsed)
    return found


def _run_words(words: list[str]) -> list[str] | None:
    """The words after `docker run` (or `docker container run`), None for another command."""
    if len(words) < 2 or os.path.basename(words[0]) not in _ENGINES:
        return None
    if words[1] == "run":
        return words[2:]
    if words[1:3] == ["container", "run"]:
        return words[3:]
    return None


def _parsed(path: Path, at: Location, words: list[str]) -> DockerRun | None:
    """The run `words` (after `docker run`) say, None when they name no image."""
    options: list[tuple[str, str]] = []
    index = 0
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        word = words[index]
        index += 1
        if word == "--":
            break
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if not equals and name in _VALUED and index < len(words):
                value, index = words[index], index + 1
            options.append((name, value))
            continue
        letters = word[1:]
        valued = next((i for i, c in enumerate(letters) if c in _VALUED_SHORT), None)
        if valued is None:
            continue  # `-d`, `-it`, `--rm`'s short kin: flags
        value = letters[valued + 1 :]
        if not value and index < len(words):
            value, index = words[index], index + 1
        options.append(("-" + letters[valued], value))
    if index >= len(words) or "$" in words[index]:
        return None
    return _run(path, at, words[index], [Word(w, at) for w in words[index + 1 :]], options)


def _run(
    path: Path, at: Location, image: str, args: list[Word], options: list[tuple[str, str]]
) -> DockerRun:
    env: list[tuple[str, str]] = []
    entrypoint: Word | None = None
    workdir: str | None = None
    mounts: list[tuple[Path, PurePosixPath, Location]] = []
    for name, value in options:
        if name in ("-e", "--env") and "=" in value:
            key, _, val = value.partition("=")
            env.append((key, val))
        elif name == "--entrypoint":
            entrypoint = Word(value, at)
        elif name in ("-w", "--workdir"):
            workdir = value
        elif name in ("-v", "--volume", "--mount"):
            mount = _mount(path, at, value, name == "--mount")
            if mount is not None:
                mounts.append(mount)
    return DockerRun(at, image, tuple(args), entrypoint, tuple(env), workdir, tuple(mounts))


def _mount(
    path: Path, at: Location, value: str, long: bool
) -> tuple[Path, PurePosixPath, Location] | None:
    """A bind mount of a path of the script's folder (`-v ./app.ini:/etc/app.ini:ro`,
    `--mount type=bind,source=$(pwd),target=/app`); None for a named volume or a path outside."""
    if long:
        fields = dict(f.partition("=")[::2] for f in value.split(","))
        if fields.get("type") != "bind":
            return None
        host = fields.get("source", fields.get("src", ""))
        inside = fields.get("target", fields.get("destination", fields.get("dst", "")))
    else:
        parts = value.split(":")
        if len(parts) < 2:
            return None
        host, inside = parts[0], parts[1]
    host = _PWD.sub(lambda _: str(path.parent.absolute()), host)
    if not host.startswith((".", "/")) or not inside.startswith("/") or "$" in host:
        return None
    host_path = resolve.tree_form(Path(os.path.normpath(path.parent / host)), path)
    if not resolve.inside(host_path, path):
        return None
    return host_path, PurePosixPath(os.path.normpath(inside)), at


def run_servers(path: Path, text: str) -> tuple[AppServer, ...]:
    """The servers the script's `docker run` lines start from images built here, each with
    the `docker run` line first in its launch chain."""
    apps: list[AppServer] = []
    for run in docker_runs(path, text):
        app = _started(path, run)
        if app is not None:
            apps.append(replace(app, launched_by=(run.at, *app.launched_by)))
    return tuple(apps)


def _started(path: Path, run: DockerRun) -> AppServer | None:
    """The server `run` starts, None when its image is not built here or starts none."""
    from servertune.check.compose import mounted_finder
    from servertune.check.dockerfile import container_words, image_server
    from servertune.check.working_dirs import started_in

    image = _image(path, run)
    if image is None:
        return None
    entry: tuple[Word, ...] = image.entrypoint
    entry_shell, cmd, cmd_shell = image.entrypoint_shell, image.cmd, image.cmd_shell
    if run.entrypoint is not None:  # it drops the image's CMD too
        entry, entry_shell, cmd, cmd_shell = (run.entrypoint,), False, (), False
    if run.args:
        cmd, cmd_shell = run.args, False
    first, rest = container_words(image, entry, entry_shell, cmd, cmd_shell)
    env = {**image.env, **dict(run.env)}
    env_at = {**image.env_at, **{key: run.at for key, _ in run.env}}
    workdir = run.workdir or image.workdir
    find = mounted_finder(list(run.mounts), workdir, image)
    try:
        app = image_server(path, first, rest, env, env_at, image, find=find)
    except CheckInputError:
        return None  # what the image's own reading says of it, said when it is read
    return started_in(app, workdir) if app is not None else None


def _image(path: Path, run: DockerRun) -> Image | None:
    """The image `run` names: the one a `docker build -t` line of the script builds, else the
    one the repository's files say builds that name."""
    from servertune.check.image_builds import built_in_script
    from servertune.check.images import image_named

    name = run.image.split("@")[0]
    plain = re.sub(r":[\w.-]+$", "", name)
    built = built_in_script(path, plain, resolve.root() or path.parent)
    if built is None:
        return image_named(run.image, path, run.at)
    from servertune.check.dockerfile import read_image
    from servertune.check.source import read_text

    dockerfile = resolve.tree_form(built.dockerfile, path)
    try:
        with collect_notes():  # the Dockerfile's own reading says what it notes
            return read_image(dockerfile, read_text(dockerfile), None, built.target)
    except (CheckInputError, OSError, ModuleNotFoundError):
        return None
