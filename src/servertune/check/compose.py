"""Compose files: each service's server, with the CPU, memory and replicas compose gives it.

Read as the Compose Specification says, by PyYAML's safe composer (the node graph with each
node's line, aliases bounded, no object constructed; the same loader as Kubernetes manifests),
then:

* interpolation first, over every value of the file (compose fails the whole file on an error,
  so check does too): `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`,
  `${VAR?err}`, `${VAR:+replacement}`, `${VAR+replacement}`, nested defaults, `$$` for a
  literal `$`; values come from the shell's environment over the `.env` file beside the
  compose file, as `docker compose` takes them; an unset required variable is one `error:` line;
* `command` / `entrypoint`: a list is the exec form, a string is split into words as compose
  splits it (no shell runs it); `entrypoint` also clears the image's `CMD`; without them the
  image's own `ENTRYPOINT` / `CMD` run: a service `build` from a Dockerfile here is read for
  them, and for its `ENV`;
* the server's environment: the image's `ENV`, then `env_file` (in order, compose's env file
  format, interpolated), then `environment` (a map or `KEY=value` list; a bare `KEY` is taken
  from the shell), then `check --env-file`;
* `cpus`, `mem_limit`, `mem_reservation`, `deploy.resources.limits` / `reservations` (`cpus`,
  `memory` in compose's byte units: b, k, kb, m, mb, g, gb, 1024-based as Docker reads them),
  `deploy.replicas` / `scale`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

import yaml

from servertune.check import memo, overlay, resolve
from servertune.check.base_shells import execs_last_command, execs_lone_command
from servertune.check.budget import each_within_budget
from servertune.check.chain import Service
from servertune.check.commands import (
    COMMAND_COMPLETE,
    ENVIRONMENT_COMPLETE,
    ConfigFile,
    FindConfig,
    Word,
    one_string_split,
    place_words,
    program_name,
    server_command,
    shell_commands,
)
from servertune.check.compose_v1 import COMPOSE_V1, legacy_v1
from servertune.check.development import compose_development_server, production_name
from servertune.check.dockerfile import (
    Image,
    container_words,
    image_server,
    owned_base,
    read_image,
    root_base,
    sh_of,
    shell_form,
    unknown_base,
    with_stop_signal,
)
from servertune.check.envfile import read_env_file
from servertune.check.extends import extended_services, settled_services
from servertune.check.images import Build
from servertune.check.kubernetes import _documents, _Node
from servertune.check.model import (
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Container,
    Location,
    NotFollowed,
    NothingToCheck,
    Setting,
    collect_notes,
    note,
)
from servertune.check.source import read_text
from servertune.check.unfollowed import (
    base_entrypoint_arguments,
    development_server,
    nothing_started,
)
from servertune.check.working_dirs import started_in

__all__ = [
    "BYTE_UNITS",
    "MAX_EXPANDED_NODES",
    "builds_of",
    "declares_only_resources",
    "dockerfiles_built",
    "included_files",
    "interpolate",
    "looks_like_compose",
    "mounted_finder",
    "parse_bytes",
    "read_builds",
    "read_compose",
    "services_nodes",
]

#: Compose's byte units (docker/go-units RAMInBytes): binary multiples, case-insensitive.
BYTE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_BYTES = re.compile(r"\A\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtp]?)i?b?\s*\Z", re.I)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPOSE_NAMES = re.compile(r"\A(docker-)?compose([.-][\w.-]+)?\.ya?ml\Z")


def looks_like_compose(path: Path, text: str) -> bool:
    """`compose.yaml`, `docker-compose.yml`, `docker-compose.prod.yml`, ...; or any YAML file
    with a top-level `services:` and no Kubernetes `apiVersion:`, or one that declares only
    compose's own top-level keys (`volumes:` and `networks:` for the files given with it)."""
    if _COMPOSE_NAMES.match(path.name):
        return True
    if path.suffix not in (".yaml", ".yml") or re.search(r"^apiVersion:", text, re.M):
        return False
    return (
        bool(re.search(r"^services:", text, re.M))
        or declares_only_resources(text)
        or includes_only(text)
    )


#: The top-level keys of the Compose file format besides `services`
#: (https://docs.docker.com/reference/compose-file/): with `x-` extensions, all a file may hold.
_COMPOSE_TOP_KEYS = frozenset(
    {"version", "name", "include", "volumes", "networks", "configs", "secrets"}
)


def declares_only_resources(text: str) -> bool:
    """A compose file with no `services:`: its top-level keys all compose's own, volumes or
    networks among them. It completes the files given with it (`docker compose -f
    docker-compose.yml -f docker/prod.yml`: external volumes, a shared network)."""
    keys = _top_keys(text)
    return bool(keys & {"volumes", "networks"}) and keys <= _COMPOSE_TOP_KEYS


def _top_keys(text: str) -> set[str]:
    """The file's top-level keys but the `x-` extensions."""
    return {k for k in re.findall(r"^([A-Za-z_][\w.-]*):", text, re.M) if not k.startswith("x-")}


def includes_only(text: str) -> bool:
    """A compose file with no `services:` that `include:`s other compose files (Compose 2.20+,
    https://docs.docker.com/reference/compose-file/include/): its services are theirs, the rest
    of its top-level keys compose's own (`name:`, volumes, networks, secrets, configs)."""
    keys = _top_keys(text)
    return "include" in keys and "services" not in keys and keys <= _COMPOSE_TOP_KEYS


def parse_bytes(text: str) -> int:
    """A compose byte value ("512m", "1gb", "1073741824") in bytes."""
    match = _BYTES.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a byte value (a number with b, k, m or g)")
    return int(float(match[1]) * BYTE_UNITS[match[2].lower()])


def interpolate(
    text: str, lookup: Mapping[str, str], at: Location, *, keep_unset: bool = False
) -> str:
    """`text` with compose's interpolation done from `lookup`; with `keep_unset`, a variable
    set nowhere and given no default is kept as `${NAME}` (`_unset`), not blanked."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "$":
            out.append(char)
            index += 1
            continue
        following = text[index + 1 : index + 2]
        if following == "$":
            out.append("$")
            index += 2
            continue
        if following == "{":
            depth, end = 1, index + 2
            while end < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
            if depth:
                raise CheckInputError(f"{at}: invalid interpolation format: missing '}}'")
            out.append(_braced(text[index + 2 : end - 1], lookup, at, keep_unset))
            index = end
            continue
        match = _NAME.match(text, index + 1)
        if match is None:
            # `$(redis-cli ping)`, `HostRegexp(`^.+$`)`: compose's pattern matches only
            # `$$`, `$NAME` and `${...}`, so any other `$` is kept as written.
            out.append(char)
            index += 1
            continue
        value = lookup.get(match[0])
        out.append(_unset(match[0], at, keep_unset) if value is None else value)
        index = match.end()
    return "".join(out)


def _braced(body: str, lookup: Mapping[str, str], at: Location, keep_unset: bool) -> str:
    match = _NAME.match(body)
    if match is None:
        raise CheckInputError(f"{at}: invalid interpolation format ${{{body[:40]}}}")
    name, rest = match[0], body[match.end() :]
    value = lookup.get(name)
    if not rest:
        return _unset(name, at, keep_unset) if value is None else value
    colon = rest.startswith(":")
    operator = rest[1:2] if colon else rest[:1]
    word = rest[2:] if colon else rest[1:]
    unset = value is None or (colon and value == "")
    if operator == "-":
        return interpolate(word, lookup, at) if unset else (value or "")
    if operator == "+":
        return "" if unset else interpolate(word, lookup, at)
    if operator == "?":
        if unset:
            # Set where the deployment runs (its shell, CI, a `.env` not committed): a value
            # check cannot know, said in coverage; the rest of the file is still judged.
            reason = interpolate(word, lookup, at) or "not set"
            note(
                "unresolved-variable",
                at,
                f"{at}: ${{{name}:?}} is not set here ({reason}): what depends on it was "
                "not checked",
            )
            # Left as the variable, as the shell that runs the command would see it unset:
            # the command readers and the numbers below take `${NAME}` as unknown.
            return "${" + name + "}"
        return value or ""
    raise CheckInputError(f"{at}: invalid interpolation format ${{{body[:40]}}}")


#: The copies of `.env` a project keeps for a person to fill in (`cp .env.example .env`).
_DOTENV_EXAMPLES = (".env.example", ".env.sample", ".env.dist", ".env.template")


def _unset(name: str, at: Location, keep: bool) -> str:
    """An unset `${NAME}` with no default: compose blanks it (with a warning), which in a
    command line leaves an option without its argument (`--timeout ${GUNICORN_TIMEOUT_S}`,
    opengisch/qfieldcloud). Where it runs, the deployment's own `.env` or shell sets it: in a
    command (`keep`) it stays `${NAME}`, a value check cannot know, with a note; an example
    copy of `.env` beside the file only documents a value, named in the note, never used
    (the deployment's copy is edited)."""
    if not keep:
        return ""
    documented = ""
    for example in _DOTENV_EXAMPLES:
        path = at.file.parent / example
        if resolve.inside(path, at.file) and path.is_file():
            with contextlib.suppress(CheckInputError, OSError):
                values, where = read_env_file(path)
                if name in values:
                    documented = f"; {where[name]} documents {values[name]!r}, an example, not used"
                    break
    note(
        "unresolved-variable",
        at,
        f"{at}: ${{{name}}} is not set here (no default, no .env beside {at.file.name} sets it"
        f"{documented}): compose would blank it; its deployment sets it, so it was read as "
        "unknown",
    )
    return "${" + name + "}"


#: More values than any compose file holds once its anchors and merge keys are expanded; a file
#: past it is an alias bomb ("billion laughs": nine aliases of nine aliases of ...), refused
#: before anything walks it expanded.
MAX_EXPANDED_NODES = 100_000


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many nodes `node` stands for with every alias and merge expanded (memoised, so
    counting is linear in the file even when the expansion is exponential)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a cycle counts once
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[id(node)] = min(size, MAX_EXPANDED_NODES + 1)
    return memo[id(node)]


#: The keys whose values are command lines: an unset variable in them is kept (`_unset`).
_COMMAND_KEYS = frozenset({"command", "entrypoint"})


def _interpolate_all(
    node: yaml.Node, lookup: Mapping[str, str], path: Path, seen: set[int], keep: bool = False
) -> None:
    """Every value of the file interpolated in place (keys are not), each node once."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        if "$" in node.value:
            at = Location(path, node.start_mark.line + 1)
            node.value = interpolate(node.value, lookup, at, keep_unset=keep)
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            _interpolate_all(child, lookup, path, seen, keep)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            command = isinstance(key, yaml.ScalarNode) and key.value in _COMMAND_KEYS
            _interpolate_all(value, lookup, path, seen, keep or command)


def shell_words(text: str) -> list[str]:
    """A string `command` / `entrypoint` split as Compose splits it (compose-go's loader calls
    mattn/go-shellwords' `Parse`): spaces split words outside quotes and quotes are removed, as
    POSIX sh does, and a backslash before a space, tab or line break escapes it inside double
    quotes too, so `"... --timeout 600 \\ --workers 8"` holds a plain space where sh would
    keep the backslash (gunicorn then got the word ` --workers`). go-shellwords drops every
    other backslash inside double quotes as well (`\\r` becomes `r`); those are kept as sh
    keeps them, as the scripts such a command writes are read (`sed 's/\\r$//'`).
    ValueError for an unclosed quote."""
    return shlex.split(_ESCAPED_BLANK.sub(_unescaped_in_quotes(text), text), comments=False)


#: A backslash and the blank it escapes (a space, a tab, a line break).
_ESCAPED_BLANK = re.compile(r"\\([ \t\n])")


def _unescaped_in_quotes(text: str) -> Callable[[re.Match[str]], str]:
    """For `_ESCAPED_BLANK.sub`: inside double quotes, the blank without its backslash (as
    go-shellwords reads it); elsewhere as written (sh reads an escaped blank there alike)."""
    inside = _double_quoted(text)

    def one(match: re.Match[str]) -> str:
        return match[1] if match.start() in inside else match[0]

    return one


def _double_quoted(text: str) -> set[int]:
    """The offsets of `text` inside double quotes, as sh reads quotes."""
    found: set[int] = set()
    quote, index = "", 0
    while index < len(text):
        char = text[index]
        if quote == '"':
            found.add(index)
            if char == "\\":
                found.add(index + 1)
                index += 1
            elif char == '"':
                quote = ""
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            index += 1
        elif char in "'\"":
            quote = char
        index += 1
    return found


def _command(node: _Node | None, lines: Mapping[Path, list[str]]) -> tuple[Word, ...] | None:
    """A `command` / `entrypoint`: a list as written, a string split as compose splits it
    (placed on the lines of the file it is written in: `lines`, each file's)."""
    if node is None:
        return None
    if isinstance(node.node, yaml.SequenceNode):
        return tuple(
            Word(item.text() or "", item.at) for item in node.list() if item.text() is not None
        )
    text = node.text()
    if text is None:
        return None
    try:
        words = shell_words(text)
    except ValueError:
        raise CheckInputError(
            f"{node.at}: cannot split as compose does (an unclosed quote)"
        ) from None
    first = node.node.start_mark.line + 1
    end = node.node.end_mark
    last = end.line + (1 if end.column else 0)
    written = lines.get(node.path, [])
    last = min(last, len(written))
    return tuple(place_words(words, written, node.path, first, max(first, last)))


def _environment(
    service: _Node,
    path: Path,
    lookup: Mapping[str, str],
    interpolated: Callable[[str, Location], str],
) -> tuple[dict[str, str], dict[str, Location], tuple[Path, ...], bool]:
    """The service's `env_file`s and `environment`, each variable's line, the env files read,
    and whether that is all of it (`ENVIRONMENT_COMPLETE`): no env_file missing, no bare
    `KEY` or `${VAR}` the deployment's shell would fill and the files do not."""
    env: dict[str, str] = {}
    where: dict[str, Location] = {}
    files: list[Path] = []
    complete, from_shell = True, _from_shell(lookup)
    env_files = service.get("env_file")
    entries = (
        env_files.list()
        if env_files is not None and isinstance(env_files.node, yaml.SequenceNode)
        else ([env_files] if env_files is not None else [])
    )
    for entry in entries:
        name = entry.get("path") if isinstance(entry.node, yaml.MappingNode) else entry
        required = entry.get("required") if isinstance(entry.node, yaml.MappingNode) else None
        if name is None or name.text() is None:
            continue
        env_path = overlay.project_folder(path) / (name.text() or "")
        if resolve.admit(env_path, name.text() or "", name.at, "env_file") is None:
            complete = False
            continue
        if not env_path.is_file():
            complete = False  # optional or not, a deployment may have it
            if required is not None and (required.text() or "").lower() == "false":
                continue
            # Usually a gitignored `.env` each deployment writes: read the service without it,
            # and say so (compose itself would refuse to start, but the file is not wrong).
            note(
                "env-file-not-found",
                name.at,
                f"env_file {name.text()}: not here (a deployment's own file?); the service "
                "was read without its variables",
            )
            continue
        values, at = read_env_file(env_path, lookup, interpolated)
        complete = complete and not any(map(from_shell, at.values()))
        env.update(values)
        where.update(at)
        files.append(env_path)
    for key, text, line in _environment_entries(service.get("environment"), lookup):
        if text is None:
            complete = False  # a bare `KEY` the shell that runs compose does not set here
            continue
        env[key] = text
        where[key] = line
        complete = complete and not from_shell(line)
    return env, where, tuple(files), complete


def _environment_entries(
    environment: _Node | None, lookup: Mapping[str, str]
) -> Iterator[tuple[str, str | None, Location]]:
    """The `environment` entries, a map or a `KEY=value` list: each name, value (a bare
    `KEY` takes the compose shell's value, None when it has none) and line."""
    if environment is not None and isinstance(environment.node, yaml.MappingNode):
        for key, value in environment.items():
            text = value.text()
            yield key, lookup.get(key) if text is None else text, value.at
    elif environment is not None:
        for item in environment.list():
            key, sep, text = (item.text() or "").partition("=")
            yield key, text if sep else lookup.get(key), item.at


#: A reference compose interpolates (`$NAME`, `${NAME}`, `${NAME:?err}`), not `$$`: its
#: operator, when it has one (`:-` and `-` give a default, `+` a word or nothing).
_REFERENCE = re.compile(
    r"(?<!\$)(?:\$\$)*\$(?:\{(?P<braced>[A-Za-z_]\w*)(?P<operator>:?[-+?=])?|(?P<plain>[A-Za-z_]\w*))"
)


def _from_shell(lookup: Mapping[str, str]) -> Callable[[Location], bool]:
    """Whether the line at a location (a variable of `environment` or an env file) takes a
    value from a variable neither the `.env` beside the compose file nor the shell sets
    (with no default): where it runs, the deployment's shell fills it."""

    read: dict[Path, list[str]] = {}

    def unset(at: Location) -> bool:
        if at.file not in read:
            read[at.file] = read_text(at.file).splitlines() if at.file.is_file() else []
        lines = read[at.file]
        line = lines[at.line - 1] if 0 < at.line <= len(lines) else ""
        return any(
            (found["braced"] or found["plain"]) not in lookup
            and (found["operator"] or "?").lstrip(":") not in ("-", "+")
            for found in _REFERENCE.finditer(line)
        )

    return unset


def _unknown(node: _Node | None) -> bool:
    """No value here: absent, a `${VAR:?}` compose could not fill (noted where it is), or blank:
    a `$HIGH_MEMORY_LIMIT` no file here sets, which the deployment's `--env-file` fills
    (internetstandards/Internet.nl)."""
    return node is None or not (node.text() or "").strip() or "${" in (node.text() or "")


def _cpus(node: _Node | None, field: str) -> Setting[float] | None:
    if node is None or _unknown(node):
        return None
    try:
        value = float(node.text() or "")
    except ValueError:
        raise CheckInputError(
            f"{node.at}: {field} {node.text()!r} is not a number of CPUs"
        ) from None
    if value <= 0:
        return None  # Docker's `--cpus 0`: no limit (`${DOCKER_WEB_CPUS:-0}` left unset)
    return Setting(value, node.at)


def _memory(node: _Node | None, field: str) -> Setting[float] | None:
    if node is None or _unknown(node):
        return None
    try:
        value = parse_bytes(node.text() or "")
    except ValueError as error:
        raise CheckInputError(f"{node.at}: {field}: {error}") from None
    return Setting(value / 1024**2, node.at)


#: `docker compose stop` / `docker stop` wait this long after SIGTERM before SIGKILL when the
#: service sets no stop_grace_period: https://docs.docker.com/reference/compose-file/services/#stop_grace_period
DOCKER_STOP_GRACE_S = 10.0
#: A compose duration (`1m30s`, `10s`, `500ms`, `1.5h`), Go's time.ParseDuration units.
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?)(us|ms|s|m|h)")
_DURATION_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _init(service: _Node) -> Setting[bool] | None:
    """The service's `init: true` (Docker's init as PID 1, the command its child), where it
    is written; None when unset, false or a variable."""
    node = service.get("init")
    text = node.text() if node is not None else None
    if node is None or text is None or _unknown(node):
        return None
    return Setting(True, node.at) if text.strip().lower() in ("true", "yes", "on") else None


def _stop_grace(service: _Node, at: Location) -> Setting[float]:
    """The service's stop_grace_period in seconds (Docker's 10 s default when unset)."""
    node = service.get("stop_grace_period")
    text = node.text() if node is not None else None
    if node is None or text is None or _unknown(node):
        return Setting(DOCKER_STOP_GRACE_S, at, default=True)
    text = text.strip()
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise CheckInputError(
            f"{node.at}: stop_grace_period {text[:40]!r} is not a duration (e.g. 30s, 1m30s)"
        )
    return Setting(sum(float(n) * _DURATION_UNITS[u] for n, u in parts), node.at)


def _container(
    name: str, key_at: Location, service: _Node, replaces: tuple[Location, ...] = ()
) -> Container:
    limits = service.get("deploy", "resources", "limits")
    reservations = service.get("deploy", "resources", "reservations")
    replicas = service.get("deploy", "replicas") or service.get("scale")
    count = replicas.number("deploy.replicas") if replicas is not None else None
    return Container(
        name=name,
        at=key_at,
        platform="compose",
        cpu_limit=_cpus(limits.get("cpus") if limits else None, "deploy.resources.limits.cpus")
        or _cpus(service.get("cpus"), "cpus"),
        cpu_request=_cpus(
            reservations.get("cpus") if reservations else None,
            "deploy.resources.reservations.cpus",
        ),
        memory_limit_mb=_memory(
            limits.get("memory") if limits else None, "deploy.resources.limits.memory"
        )
        or _memory(service.get("mem_limit"), "mem_limit"),
        memory_request_mb=_memory(
            reservations.get("memory") if reservations else None,
            "deploy.resources.reservations.memory",
        )
        or _memory(service.get("mem_reservation"), "mem_reservation"),
        replicas=Setting(int(count), replicas.at)  # type: ignore[union-attr]
        if count is not None
        else None,
        grace_period_s=_stop_grace(service, key_at),
        somaxconn=_somaxconn(service),
        init=_init(service),
        replaces=replaces,
        production=production_name(key_at.file),
        stage=_target(service),
        published=_released(service, key_at.file),
        extends=_extended(service, key_at.file),
        ports=_targets(service),
    )


def _extended(service: _Node, path: Path) -> tuple[Path, str] | None:
    """The service `service` (of the file `path`) `extends`: its file and name; None when it
    extends none (`extends: app` is one of the same file)."""
    extends = service.get("extends")
    if extends is None:
        return None
    if isinstance(extends.node, yaml.ScalarNode):
        return (path, extends.text() or "") if extends.text() else None
    named, file_node = extends.get("service"), extends.get("file")
    name = named.text() if named is not None else None
    if not name:
        return None
    other = file_node.text() if file_node is not None else None
    return (Path(os.path.normpath(path.parent / other)) if other else path), name


def _stopped_with(app: AppServer, service: _Node, image: Image | None) -> AppServer:
    """The app under the signal `docker compose stop` sends: the service's `stop_signal`,
    else its image's STOPSIGNAL (SIGTERM when neither names one)."""
    node = service.get("stop_signal")
    written = node.text() if node is not None else None
    if node is not None and written and not _unknown(node):
        return with_stop_signal(app, written.strip(), node.at, "stop_signal: SIGTERM")
    if image is not None and image.stop_signal is not None:
        return with_stop_signal(app, *image.stop_signal, "STOPSIGNAL SIGTERM")
    return app


def _somaxconn(service: _Node) -> Setting[int] | None:
    """`sysctls: {net.core.somaxconn: 2048}` (or the list form `- net.core.somaxconn=2048`):
    the container's own somaxconn; None when the service sets none or a variable."""
    sysctls = service.get("sysctls")
    if sysctls is None:
        return None
    pairs: list[tuple[str, str | None, Location]] = [
        (k, v.text(), v.at) for k, v in sysctls.items()
    ]
    for item in sysctls.list():
        name, _, written = (item.text() or "").partition("=")
        pairs.append((name.strip(), written.strip(), item.at))
    for key, value, at in pairs:
        if key == "net.core.somaxconn" and value is not None and value.isdigit():
            return Setting(int(value), at)
    return None


def _image(
    service: _Node, path: Path, runs: Mapping[str, list[str]]
) -> tuple[Image | None, tuple[Path, ...]]:
    """The Dockerfile a service is built from, when it is here; for a service that builds
    none, the image of the run its `image:` names (`images.image_named`), on the evidence of
    the files the file's services running that name start (`runs`)."""
    build = service.get("build")
    if build is None:
        named = service.get("image")
        reference = named.text() if named is not None else None
        if not reference:
            return None, ()
        from servertune.check.images import image_named

        return image_named(reference, path, named.at, runs.get(reference, ())), ()  # type: ignore[union-attr]
    if isinstance(build.node, yaml.MappingNode) and build.get("dockerfile_inline") is not None:
        inline = build.get("dockerfile_inline")
        context_node = build.get("context")
        context = (context_node.text() if context_node else None) or "."
        # Its COPY sources are each read inside the tree only (dockerfile.Image.find).
        folder = overlay.project_folder(path)
        return read_image(path, inline.text() or "", folder / context), ()  # type: ignore[union-attr]
    built = _build(build, path, overlay.project_folder(path))
    if built is None:
        return None, ()
    dockerfile, directory, target = built
    # `build.target`: the stage the service runs (a `dev` stage's runserver, not the final
    # stage's server); `build.args`: the ARGs it is built with (`FROM ${TARGET}` too).
    image = read_image(dockerfile, read_text(dockerfile), directory, target, _build_args(build))
    return image, (dockerfile,)


def _build_args(build: _Node) -> dict[str, str]:
    """A service's `build.args` written as values (the mapping or the `NAME=value` list); a
    name given with no value takes it from the shell that runs compose: not known here."""
    args = build.get("args") if isinstance(build.node, yaml.MappingNode) else None
    if args is None:
        return {}
    if isinstance(args.node, yaml.MappingNode):
        pairs = [(key, value.text()) for key, value in args.items()]
    else:
        pairs = [
            (key, text if sep else None)
            for key, sep, text in ((item.text() or "").partition("=") for item in args.list())
        ]
    return {key: value for key, value in pairs if value is not None}


#: Words of a compose file's name that say a developer's or a test's stack, not a release's.
_NOT_RELEASE_WORDS = frozenset({"dev", "devel", "develop", "development", "test", "tests"}) | {
    "testing",
    "local",
    "ci",
    "e2e",
    "example",
    "sample",
}


def _released(service: _Node, path: Path) -> str | None:
    """The image the service pulls as published (`image:` with no `build:`), when it mounts
    no folder of the repository (a live source a reloader would watch) and its file is named
    for no developer's or test's stack (PySpur-Dev/pyspur's docker-compose.yml runs the
    released backend image); None otherwise."""
    named = service.get("image")
    if service.get("build") is not None or named is None or not named.text():
        return None
    if set(re.split(r"[^a-z0-9]+", path.name.lower())) & _NOT_RELEASE_WORDS:
        return None
    if any(host.is_dir() for host, _, _ in _mounts(service, path)):
        return None
    return named.text()


def _target(service: _Node) -> str | None:
    """The stage a service's `build.target` names; None when it builds the final stage."""
    build = service.get("build")
    if build is None or not isinstance(build.node, yaml.MappingNode):
        return None
    node = build.get("target")
    return (node.text() or None) if node is not None else None


def _build(
    build: _Node, path: Path, folder: Path | None = None
) -> tuple[Path, Path, str | None] | None:
    """(the Dockerfile, the build context, the target stage) a service's `build` names, its
    paths from `folder` (the file's own by default), when the Dockerfile is here; None for a
    git URL, a path out of the tree or a missing file."""
    file_node: _Node | None = None
    context_at = build.at
    target: str | None = None
    if isinstance(build.node, yaml.MappingNode):
        target_node = build.get("target")
        target = target_node.text() if target_node is not None else None
        context_node, file_node = build.get("context"), build.get("dockerfile")
        context = (context_node.text() if context_node else None) or "."
        context_at = context_node.at if context_node is not None else build.at
        name = (file_node.text() if file_node else None) or "Dockerfile"
    else:
        context, name = build.text() or ".", "Dockerfile"
    if "://" in context:
        return None  # a git URL: not here
    # `..` and `$PWD`: one path for one file
    folder = path.parent if folder is None else folder
    directory = resolve.tree_form(Path(os.path.normpath(folder / context)), path)
    dockerfile = directory / name
    named_at = file_node.at if file_node is not None else build.at
    if resolve.admit(directory, context, context_at, "build context") is None:
        return None
    if resolve.admit(dockerfile, name, named_at, "build dockerfile") is None:
        return None
    if not dockerfile.is_file():
        return None
    return dockerfile, directory, target


def _parsed(path: Path, text: str) -> list[_Node]:
    """The file's YAML documents; none when it does not parse (its own reading says why)."""
    try:
        return _documents(path, text)
    except CheckInputError:
        return []


def builds_of(path: Path, text: str, *, tagged: bool = True) -> tuple[Build, ...]:
    """The images the file's services build here and tag (`build:` with `image:`), each the
    image that name runs elsewhere (`images.image_named`); without `tagged`, every build, an
    untagged one's reference ""; () when the file does not parse (its reading says why)."""
    documents = _parsed(path, text)
    if not documents:
        return ()
    lookup = _shell_environment(path)
    written = _images_written(documents[0])
    with collect_notes():  # the file's own reading notes what it names, and its errors
        try:
            # As its reading takes them: `dockerfile: "Dockerfile.django-${OS:-debian}"`.
            _interpolate_all(documents[0].node, lookup, path, set())
        except CheckInputError:
            return ()
    services = documents[0].get("services")
    if services is None or not isinstance(services.node, yaml.MappingNode):
        return ()
    found: list[Build] = []
    with collect_notes():
        for _, service in services.items():
            build, named = service.get("build"), service.get("image")
            reference = named.text() if named is not None else None
            if named is not None and id(named.node) in written:
                reference = _kept_path(written[id(named.node)], reference or "", lookup, named.at)
            if build is None or (tagged and not reference):
                continue
            built = _build(build, path)
            if built is not None:
                found.append(Build(reference or "", *built))
    return tuple(found)


def _images_written(document: _Node) -> dict[int, str]:
    """Each service's `image:` as written, where it names a variable (by its node's id)."""
    services = document.get("services")
    if services is None or not isinstance(services.node, yaml.MappingNode):
        return {}
    found: dict[int, str] = {}
    for _, service in services.items():
        named = service.get("image")
        if (
            named is not None
            and isinstance(named.node, yaml.ScalarNode)
            and "$" in named.node.value
        ):
            found[id(named.node)] = named.node.value
    return found


#: A variable of an image name as compose writes it.
_IMAGE_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*")


def _kept_path(written: str, interpolated: str, lookup: Mapping[str, str], at: Location) -> str:
    """The image name a build tags, its path's variables that nothing here sets kept as
    written (`eu.gcr.io/${PROJECT_NAME}/web`, which `images.image_named` matches by its
    literal parts) and its tag as compose interpolates it; as interpolated when the path's
    last part, the image's own name, is no literal (`${registry}core`)."""
    head, _, last = written.rpartition("/")
    spans = [m[0] for m in _IMAGE_VARIABLE.finditer(written)]
    # A variable holding a path (`${EDA_IMAGE:-quay.io/ansible/eda-server:main}`), or one in
    # the image's own name: compose's value, as before.
    if any("/" in v for v in spans) or "$" not in head or "$" in last.split(":", 1)[0]:
        return interpolated
    tag = interpolated.rpartition("/")[2].partition(":")[2]
    path = f"{_set_filled(head, lookup, at)}/{last.split(':', 1)[0]}"
    return f"{path}:{tag}" if tag else path


def _set_filled(written: str, lookup: Mapping[str, str], at: Location) -> str:
    """`written` with each variable the environment sets filled in, the others as written."""

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["plain"]
        if name not in lookup:
            return match[0]
        try:
            return interpolate(match[0], lookup, at)
        except CheckInputError:
            return match[0]

    return re.sub(r"\$\{(?P<braced>[A-Za-z_]\w*)[^}]*\}|\$(?P<plain>[A-Za-z_]\w*)", one, written)


def dockerfiles_built(paths: Sequence[Path]) -> frozenset[Path]:
    """Every Dockerfile (resolved) a compose file among `paths` builds, tagged or not: the
    launches of those are the compose services', whatever stage a build script targets."""

    def built_by(path: Path) -> list[Path]:
        try:
            text = read_text(path)
            if not looks_like_compose(path, text):
                return []
            return [b.dockerfile.resolve() for b in builds_of(path, text, tagged=False)]
        except (CheckInputError, OSError):
            return []

    return frozenset(p for _, found in each_within_budget(paths, built_by) for p in found)


def _no_arguments(command: object, entrypoint: object, image: Image | None) -> bool:
    """A service with no `command` gets the image's CMD: none after a compose `entrypoint`,
    and none when the image sets its own ENTRYPOINT and no CMD (Docker clears an inherited
    CMD then). Its entrypoint's script then runs with no argument, which is known."""
    cleared = image is not None and bool(image.entrypoint) and not image.cmd
    return command is None and (entrypoint is not None or cleared)


def services_nodes(paths: Sequence[Path]) -> Iterator[tuple[Path, _Node | None]]:
    """Each compose file among `paths` that parses, with its `services` (None: it has none);
    a file that does not parse is skipped (its own reading says why)."""

    def documents_of(path: Path) -> list[_Node] | None:
        try:
            text = read_text(path)
            return _documents(path, text) if looks_like_compose(path, text) else None
        except (CheckInputError, OSError):
            return None

    # One over its budget is left out: its own reading says so.
    for path, documents in each_within_budget(paths, documents_of):
        if documents is not None:
            yield path, documents[0].get("services") if documents else None


def build_contexts(paths: Sequence[Path]) -> dict[Path, set[Path]]:
    """Each Dockerfile the compose files among `paths` build, with the build contexts their
    services give it (`build.context`, tagged or not); a file that does not parse gives none
    (its reading says why)."""
    found: dict[Path, set[Path]] = {}
    for path, services in services_nodes(paths):
        if services is None or not isinstance(services.node, yaml.MappingNode):
            continue
        with collect_notes():  # the file's own reading notes what its builds name
            for _, service in services.items():
                build = service.get("build")
                built = _build(build, path) if build is not None else None
                if built is not None:
                    found.setdefault(built[0].absolute(), set()).add(built[1])
    return found


def read_builds(paths: Sequence[Path]) -> tuple[Build, ...]:
    """The images the compose files among `paths` build and tag (`images.Build`), for
    `images.images_of_run`; a file that does not parse is its reader's error to report.
    Worked out once per run for the same files (each run of images asks)."""
    key = tuple(map(str, paths))
    return memo.recall(memo.run_table("compose builds"), key, lambda: _read_builds(paths))


def _read_builds(paths: Sequence[Path]) -> tuple[Build, ...]:
    def built_by(path: Path) -> list[Build]:
        try:
            text = read_text(path)
            return list(builds_of(path, text)) if looks_like_compose(path, text) else []
        except (CheckInputError, OSError):
            return []

    # One over its budget is left out: its own reading says so.
    builds = [b for _, found in each_within_budget(paths, built_by) for b in found]
    return (*builds, *_split_builds(paths))


def _split_builds(paths: Sequence[Path]) -> list[Build]:
    """A service one compose file names the image of (`image:`, no `build`) and another builds
    (`build:`, no `image`), as a base file and the overlay given with it (`-f docker/dev.yml`)
    write it: Compose tags what the merged service builds with that name. The build's paths
    are the project's, the base file's folder (Compose's rule); a build that the file finds
    from its own folder is a file run alone, no overlay."""
    named: dict[str, list[tuple[str, Path]]] = {}
    building: dict[str, list[tuple[_Node, Path]]] = {}
    with collect_notes():  # each file's own reading notes what it names, and its errors
        for path, services in services_nodes(paths):
            if services is None or not isinstance(services.node, yaml.MappingNode):
                continue
            for name, service in services.items():
                build, image = service.get("build"), service.get("image")
                reference = image.text() if image is not None else None
                if build is None and reference and "$" not in reference.split(":", 1)[0]:
                    # A tag the deployment's variables give (`:${TAG:-dev}`): any tag.
                    named.setdefault(name, []).append((reference.split(":$", 1)[0], path))
                elif build is not None and image is None:
                    building.setdefault(name, []).append((build, path))
        found: list[Build] = []
        for name, references in named.items():
            builders = building.get(name, [])
            if len(references) != 1 or len(builders) != 1 or references[0][1] == builders[0][1]:
                continue
            (reference, base), (build, overlay) = references[0], builders[0]
            # An overlay, not a file run on its own: its build is found only from the base's
            # folder (`context: .` in docker/dev.yml); a file that builds alone (another
            # setup's compose file, with a service of the same name) says nothing of the name.
            built = _build(build, base) if _build(build, overlay) is None else None
            if built is not None:
                found.append(Build(reference, *built))
    return found


def _runs(services: _Node, lines: Mapping[Path, list[str]]) -> dict[str, list[str]]:
    """Each `image:` name with the words of the `entrypoint` / `command` of the services that
    run it (the paths among them are what the image must hold: `./bin/entrypoint-api.sh`)."""
    runs: dict[str, list[str]] = {}
    for _, service in services.items():
        named = service.get("image")
        reference = named.text() if named is not None else None
        if not reference or service.get("build") is not None:
            continue
        for key in ("entrypoint", "command"):
            words = _command(service.get(key), lines) or ()
            runs.setdefault(reference, []).extend(w.text for w in words)
    return runs


#: `${PWD}` / `$PWD` in a mount's host path: where `docker compose` runs, the compose file's
#: folder (`_shell_environment`).
_PWD = re.compile(r"\$\{PWD\}|\$PWD(?![A-Za-z0-9_])")


def _mounts(service: _Node, path: Path) -> list[tuple[Path, PurePosixPath, Location]]:
    """The service's bind mounts of files here, as (host path, container path, line): the
    short syntax `./nginx.conf:/etc/nginx/nginx.conf:ro` and the long one (`type: bind`,
    `source`, `target`); a named volume (no `/` or `.` first) holds nothing of the repository."""
    volumes = service.get("volumes")
    if volumes is None or not isinstance(volumes.node, yaml.SequenceNode):
        return []
    found: list[tuple[Path, PurePosixPath, Location]] = []
    folder = overlay.project_folder(path)
    for entry in volumes.list():
        if isinstance(entry.node, yaml.MappingNode):
            kind, source, target = entry.get("type"), entry.get("source"), entry.get("target")
            if kind is None or kind.text() != "bind" or source is None or target is None:
                continue
            host, inside = source.text() or "", target.text() or ""
        else:
            # (A `:` inside `${NAME:-default}` is the variable's, not the separator.)
            parts = re.split(r":(?![^{}]*\})", entry.text() or "")
            if len(parts) < 2:
                continue  # an anonymous volume: a container path only
            host, inside = parts[0], parts[1]
        host = _PWD.sub(lambda _: str(folder.absolute()), host)  # `${PWD}/nginx.conf`
        if not host.startswith((".", "/", "~")) or not inside.startswith("/"):
            continue
        if host.startswith("~"):
            continue  # the user's home on the Docker host: not the repository
        # `../configuration` as one path; `$PWD/bin` as the name `bin` has in this run
        host_path = resolve.tree_form(Path(os.path.normpath(folder / host)), path)
        found.append((host_path, PurePosixPath(os.path.normpath(inside)), entry.at))
    return found


def mounted_finder(
    mounts: list[tuple[Path, PurePosixPath, Location]], workdir: str, image: Image | None
) -> FindConfig | None:
    """Finds a file the service's command names: in a bind mount first (it hides what the
    image holds there), then in the image (its COPYs)."""
    if not mounts and (image is None or image.workdir == workdir):
        return image.find if image is not None else None

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        if not _path_like(wanted):
            return None
        wanted = resolve.at_one_root(wanted)
        target = PurePosixPath(os.path.normpath(PurePosixPath(workdir or "/") / wanted))
        for host, inside, mounted_at in reversed(mounts):
            try:
                relative = target.relative_to(inside)
            except ValueError:
                continue
            candidate = host if str(relative) == "." else host / relative
            if resolve.admit(candidate, str(host), mounted_at, "volume") is None:
                continue
            try:
                if candidate.is_file():
                    return ConfigFile(read_text(candidate), candidate, 1)
            except OSError:
                continue
        if image is None:
            return None
        # From the service's working_dir when it sets one, not the image's WORKDIR.
        return image.find(wanted if workdir == image.workdir else str(target), at)

    return find


def services_of(path: Path, text: str) -> tuple[Service, ...]:
    """Every service of a compose file, for linking (which stack a front belongs to); () when
    the file does not parse (its reading says why). Values are taken as written: a mount whose
    host path needs a variable without a default is not one of the repository's files here."""
    documents = _parsed(path, text)
    services = documents[0].get("services") if documents else None
    if services is None or not isinstance(services.node, yaml.MappingNode):
        return ()
    services = extended_services(path, services, overlay.services_in, {})
    found: list[Service] = []
    for key, value in services.node.value:
        if not isinstance(value, yaml.MappingNode):
            continue
        service = _Node(value, path)
        hosts = (defaulted(host, path) for host, _, _ in _mounts(service, path))
        mounts = tuple(host for host in hosts if host is not None)
        build = service.get("build")
        dockerfile: Path | None = None
        built: Path | None = None
        if build is not None and isinstance(build.node, yaml.MappingNode):
            context, named = build.get("context"), build.get("dockerfile")
            folder = overlay.project_folder(path) / ((context.text() if context else None) or ".")
            dockerfile = folder / ((named.text() if named else None) or "Dockerfile")
            built = folder
        elif build is not None and build.text():
            built = overlay.project_folder(path) / (build.text() or ".")
            dockerfile = built / "Dockerfile"
        elif build is None:
            dockerfile = _runs_dockerfile(service, path)
        mode = service.get("network_mode")
        found.append(
            Service(
                path,
                str(key.value),
                mounts,
                dockerfile,
                _literal_env(service),
                _aliases(service),
                # `none` and `bridge` leave it a namespace of its own.
                network_shared=mode is not None and (mode.text() or "") not in ("none", "bridge"),
                published=_published(service),
                target=_target(service),
                context=built,
            )
        )
    return tuple(found)


#: A short-syntax port: `[HOST_IP:]HOST_PORT:CONTAINER_PORT[/PROTOCOL]`, each port a number or
#: a range (`8000-8001`).
_PORT = re.compile(
    r"\A(?:(?P<ip>\[[^]]*\]|[0-9.]*):)?(?P<host>[0-9]+(?:-[0-9]+)?):(?P<target>[0-9]+(?:-[0-9]+)?)"
    r"(?:/(?P<protocol>[a-z]+))?\Z"
)


def _published(service: _Node) -> tuple[tuple[str, str], ...] | None:
    """The (host port, container port) pairs a service's `ports:` publishes where the host's
    loopback reaches them (every address, or 127.0.0.1), in the short syntax or the long
    one; a bare `8000` publishes on a port Docker picks, reached by no port written here.
    None when an entry holds a variable (the deployment's value)."""
    ports = service.get("ports")
    found: list[tuple[str, str]] = []
    for entry in ports.list() if ports is not None else ():
        if isinstance(entry.node, yaml.MappingNode):
            values = {key: (node.text() or "") for key, node in entry.items()}
            ip, host, target = (values.get(k, "") for k in ("host_ip", "published", "target"))
            protocol = values.get("protocol", "tcp")
        else:
            text = entry.text() or ""
            if "$" in text:
                return None
            match = _PORT.match(text.strip())
            if match is None:
                continue
            ip, host, target = match["ip"] or "", match["host"], match["target"]
            protocol = match["protocol"] or "tcp"
        if "$" in ip + host + target:
            return None
        if protocol != "tcp" or ip not in ("", "0.0.0.0", "127.0.0.1", "[::]", "::", "[::1]"):
            continue
        found += _pairs(host, target)
    return tuple(found)


def _targets(service: _Node) -> tuple[Setting[int], ...] | None:
    """The container ports a service's `ports:` publishes, each at its entry's line: the
    short syntax's last port (`8000`, `80:8000`, `127.0.0.1:80:8000/tcp`, ranges each), the
    long syntax's `target`. None when an entry holds a variable or is not read, so the
    published ports are not all known."""
    ports, mode = service.get("ports"), service.get("network_mode")
    if mode is not None:  # `host` discards `ports:`; another's namespace is not this one's
        return None
    found: list[Setting[int]] = []
    for entry in ports.list() if ports is not None else ():
        if isinstance(entry.node, yaml.MappingNode):
            node = entry.get("target")
            text = (node.text() or "") if node is not None else ""
        else:
            text = (entry.text() or "").strip().rpartition(":")[2].partition("/")[0]
        numbers = _span(text) if "$" not in text else []
        if not numbers:
            return None
        found += [Setting(int(n), entry.at) for n in numbers]
    return tuple(found)


def _pairs(host: str, target: str) -> list[tuple[str, str]]:
    """Each host port with the container port it publishes (`8000-8001:9000-9001`: two)."""
    hosts, targets = _span(host), _span(target)
    if not hosts or len(hosts) != len(targets):
        return []
    return list(zip(hosts, targets, strict=True))


def _span(text: str) -> list[str]:
    first, _, last = text.partition("-")
    if not first.isdigit() or not (last or first).isdigit():
        return []
    low, high = int(first), int(last or first)
    return [str(n) for n in range(low, high + 1)] if 0 <= high - low < 1024 else []


def _aliases(service: _Node) -> tuple[str, ...]:
    """The names besides its own a service's container is reached by on its networks: its
    `container_name`, each network's `aliases` (the mapping form of `networks`) and its
    `hostname`.

    Docker's embedded DNS answers, on a user-defined network (a compose project's), each of
    the endpoint's `DNSNames`, "based on the container name, network aliases, container short
    ID, and hostname" (the Engine API's EndpointSettings,
    https://docs.docker.com/reference/api/engine/version/v1.57/schemas/EndpointSettings/;
    moby's buildEndpointDNSNames adds `Config.Hostname` since Engine 25, API 1.44). Before
    that a hostname was the container's own name for itself only (moby/moby#36333)."""
    found = [
        n.text() or ""
        for n in (service.get("container_name"), service.get("hostname"))
        if n is not None
    ]
    networks = service.get("networks")
    for _, network in networks.items() if networks is not None else ():
        found += [alias.text() or "" for alias in network.each("aliases")]
    return tuple(dict.fromkeys(a for a in found if a and "$" not in a))


#: `${NAME:-default}` / `${NAME-default}` with a literal default.
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?)-([^}$]*)\}")


def defaulted(host: Path, path: Path) -> Path | None:
    """A mount's host path as compose interpolates it when its variables have a default
    (`./nginx/${NGINX_SETUP:-https}.conf`), from the `.env` beside the compose file, else the
    default; None when a variable without one is left (a deployment's own value)."""
    if "$" not in str(host):
        return host
    text = _with_defaults(str(host), path)
    return None if text is None else Path(os.path.normpath(text))


def _with_defaults(text: str, path: Path) -> str | None:
    """`text` as compose interpolates it when each variable has a default (`${X:-word}`), from
    the `.env` beside the compose file `path`, else the default; None when a variable without
    one is left (a deployment's own value)."""
    if "$" not in text:
        return text
    lookup = _dotenv(path) if (path.parent / ".env").is_file() else {}

    def value(match: re.Match[str]) -> str:
        found = lookup.get(match[1])
        return match[3] if found is None or (match[2] and not found) else found

    done = _DEFAULTED.sub(value, text)
    return None if "$" in done else done


def _runs_dockerfile(service: _Node, path: Path) -> Path | None:
    """The Dockerfile here whose image a service's `image:` runs, as its reading links it
    (`images.image_named`, with the images of the run set; its notes are the reading's)."""
    named = service.get("image")
    reference = named.text() if named is not None else None
    # Compose interpolates `ghcr.io/acme/api:${VERSION:-latest}` before it pulls: the name
    # the service runs is the one its reading links (libretime/libretime's nginx service).
    reference = _with_defaults(reference, path) if reference else None
    if not reference:
        return None
    from servertune.check.images import image_named

    with collect_notes():
        image = image_named(reference, path)
    return image.path if image is not None else None


def _literal_env(service: _Node) -> tuple[tuple[str, str], ...]:
    """The service's `environment` entries written as literal values, or with defaults
    (`EDA_SERVER: http://${EDA_HOST:-eda-api:8000}`, ansible/eda-server: the `.env` beside the
    file, else the default); a value compose interpolates from the deployment's shell alone is
    not known here."""
    environment = service.get("environment")
    if environment is None:
        return ()
    if isinstance(environment.node, yaml.MappingNode):
        pairs = [(key, value.text()) for key, value in environment.items()]
    else:
        pairs = [
            (key, text)
            for key, sep, text in (
                (item.text() or "").partition("=") for item in environment.list()
            )
            if sep
        ]
    found = ((k, _with_defaults(v, service.path)) for k, v in pairs if v is not None)
    return tuple((k, v) for k, v in found if v is not None)


def _service_finder(service: _Node, path: Path, image: Image | None) -> FindConfig | None:
    """How the service finds the files its command names: its bind mounts, then its image's
    files. A service with no `build` here runs an image named by `image:`: when a Dockerfile
    of the run copies this very compose file (`COPY . /app`), its files are the ones here."""
    files_from = _files_from(service, path, image)
    return mounted_finder(_mounts(service, path), _workdir(service, files_from), files_from)


def _files_from(service: _Node, path: Path, image: Image | None) -> Image | None:
    """The image whose files the service runs with (`_service_finder`)."""
    if image is None and service.get("build") is None:
        from servertune.check.images import image_holding

        return image_holding(path)
    return image


def _workdir(service: _Node, files_from: Image | None) -> str:
    """The directory the service's command runs in: its `working_dir`, else its image's."""
    working = service.get("working_dir")
    return (working.text() if working is not None else None) or (
        files_from.workdir if files_from is not None else "/"
    )


def _path_like(wanted: str) -> bool:
    """A word that can name a file (a `sh -c` script's whole text cannot: several lines)."""
    return bool(wanted) and "\n" not in wanted and len(wanted) <= _PATH_MAX


#: Linux's PATH_MAX: a longer word names no file.
_PATH_MAX = 4096


def _outside_references(root: _Node, services: _Node, path: Path) -> None:
    """`include` and `extends: {file}` name other compose files, which check does not follow
    (give them on the command line to have them read): one outside the tree check reads is
    said to be never read, at its line."""
    _outside_includes(root, path)
    for _, service in services.items():
        extended = service.get("extends") if isinstance(service.node, yaml.MappingNode) else None
        named = (
            extended.get("file")
            if extended is not None and isinstance(extended.node, yaml.MappingNode)
            else None
        )
        if named is not None and named.text():
            resolve.admit(
                path.parent / (named.text() or ""), named.text() or "", named.at, "extends file"
            )


def _outside_includes(root: _Node, path: Path) -> None:
    """An `include:`d file outside the tree check reads is said to be never read, at its line."""
    included = root.get("include")
    for entry in included.list() if included is not None else []:
        paths = entry.get("path") if isinstance(entry.node, yaml.MappingNode) else entry
        for one in (
            paths.list()
            if paths is not None and isinstance(paths.node, yaml.SequenceNode)
            else [paths]
        ):
            if one is not None and one.text():
                resolve.admit(path.parent / (one.text() or ""), one.text() or "", one.at, "include")


def _shell_environment(path: Path) -> dict[str, str]:
    """What compose interpolates the file `path` with: the `.env` beside it, then the shell's
    environment over it, whose `PWD` is where `docker compose` runs, taken as the compose
    file's own folder (as the file is run from there), never the folder check runs in."""
    return {**_dotenv(path), **os.environ, "PWD": str(path.parent.absolute())}


def _dotenv(path: Path) -> dict[str, str]:
    dotenv = path.parent / ".env"
    if resolve.admit(dotenv, ".env", Location(path), "the .env beside it") is None:
        return {}  # a symlink out of the tree
    if not dotenv.is_file():
        return {}
    values, _ = read_env_file(dotenv)
    return values


def _other_services(path: Path) -> _Node | None:
    """The services of another compose file (one a service `extends`), its values
    interpolated as its own reading does; None when it has none or is an alias bomb."""
    found = overlay.services_in(path)
    if found is None or _expanded_size(found.node, {}) > MAX_EXPANDED_NODES:
        return None
    _interpolate_all(found.node, _shell_environment(path), path, set())
    return found


def _over_base(path: Path, services: _Node, lines: dict[Path, list[str]]) -> _Node:
    """The services of `path`, merged over the base file's when `path` is an overlay of it
    (`overlay.base_of`; the base's lines added to `lines`), else as they are."""
    base = overlay.base_of(path, services)
    base_services = overlay.services_in(base) if base is not None else None
    if base is None or base_services is None:
        return services
    # The base's values interpolated as its own reading does (its `.env` is the same: they
    # are in one folder), then the overlay's services merged over its.
    _interpolate_all(base_services.node, _shell_environment(base), base, set())
    lines[base] = read_text(base).splitlines()
    base_services = settled_services(base, base_services, _other_services, lines)
    return overlay.merged_services(path, services, base, base_services)


def _services(root: _Node, path: Path, text: str) -> _Node:
    """The file's `services:` mapping; a file of volumes and networks only starts nothing."""
    services = root.get("services")
    if services is None and includes_only(text):
        _outside_includes(root, path)
        included = ", ".join(_included(root)) or "no file"
        raise NothingToCheck(
            f"{path}: a compose file that includes {included} (`include:`, Compose 2.20+): its "
            "services are those files', read as files of their own; it starts none itself"
        )
    if services is None and declares_only_resources(text):
        raise NothingToCheck(
            f"{path}: a compose file of volumes and networks only, for the files given with "
            "it (-f): it starts no container"
        )
    if services is None and legacy_v1(text):
        raise CheckInputError(f"{path}: not read: {COMPOSE_V1}")
    if services is None or not isinstance(services.node, yaml.MappingNode):
        raise CheckInputError(f"{path}: no services: mapping (is this a compose file?)")
    return services


def _included(root: _Node) -> list[str]:
    """The files an `include:` names, short form (a path) or long (`path:`, one or a list)."""
    found: list[str] = []
    included = root.get("include")
    for entry in included.list() if included is not None else []:
        paths = entry.get("path") if isinstance(entry.node, yaml.MappingNode) else entry
        if paths is not None and isinstance(paths.node, yaml.SequenceNode):
            found += [one.text() or "" for one in paths.list()]
        elif paths is not None:
            found.append(paths.text() or "")
    return [name for name in found if name]


def included_files(path: Path, text: str) -> tuple[Path, ...]:
    """The compose files the file `path` (read: `text`) `include:`s, each a part of its
    project (Compose 2.20+); a name written with a variable is not followed."""
    documents = _parsed(path, text)
    if not documents:
        return ()
    names = [n for n in _included(documents[0]) if "$" not in n]
    return tuple(Path(os.path.normpath(path.parent / n)) for n in names)


def read_compose(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[tuple[AppServer, ...], tuple[Path, ...]]:
    """The app servers the services start, each with its container, and the files read."""
    documents = _documents(path, text)
    if not documents:
        raise CheckInputError(f"{path}: empty compose file")
    lookup = _shell_environment(path)
    root = documents[0]
    if _expanded_size(root.node, {}) > MAX_EXPANDED_NODES:
        raise CheckInputError(
            f"{path}: more than {MAX_EXPANDED_NODES} values once its anchors are expanded; "
            "refused (an alias bomb)"
        )
    _interpolate_all(root.node, lookup, path, set())
    services = _services(root, path, text)
    lines = {path: text.splitlines()}
    services = extended_services(path, _over_base(path, services, lines), _other_services, lines)

    def interpolated(value: str, at: Location) -> str:
        return interpolate(value, lookup, at)

    _outside_references(root, services, path)
    runs = _runs(services, lines)
    apps: list[AppServer] = []
    unstarted: list[tuple[list[Word], FindConfig | None, list[NotFollowed]]] = []
    unsaid: list[NothingToCheck] = []  # why a service's script starts no server (_image_app)
    # The `.env` beside the file is compose's own: it loads it (the launch graph says so).
    # One outside the tree (a symlink out of it) is not compose's to show: _dotenv noted it.
    dotenv = path.parent / ".env"
    files: list[Path] = [dotenv] if resolve.inside(dotenv, path) and dotenv.is_file() else []
    for key, value in _not_overridden(services, path):
        name = str(key.value)
        service = _Node(value, path)
        key_at = Location(path, key.start_mark.line + 1)
        image, image_files = _image(service, path, runs)
        files += image_files
        entrypoint, command = _own_commands(service, lines, image)
        entry: tuple[Word, ...] | None
        if entrypoint is not None:
            base_cmd: tuple[Word, ...] | None = None
            entry, entry_shell = entrypoint, False
        else:
            entry = image.entrypoint if image else None
            entry_shell = image.entrypoint_shell if image else False
            base_cmd = image.cmd if image else None
        cmd, cmd_shell = (
            (command, False)
            if command is not None
            else (
                base_cmd,
                image.cmd_shell if image and base_cmd else False,
            )
        )
        first, rest = container_words(image, entry, entry_shell, cmd, cmd_shell)
        own_env, own_at, env_files, known = _environment(service, path, lookup, interpolated)
        files += env_files
        environment = {**(image.env if image else {}), **own_env, **(env or {})}
        where = {**(image.env_at if image else {}), **own_at}
        find = _service_finder(service, path, image)
        unseen = image is None and service.get("image") is not None and entrypoint is None
        with _complete(_no_arguments(command, entrypoint, image), known and image is not None):
            call = (path, first, rest, environment, where, image, find, unsaid)
            app = _image_app(call, (name, first[0] if first else key_at) if unseen else None)
        if app is None:
            words = first + rest
            _development_launch(name, key_at, words)
            # An image not built here runs its own program (minio's, `server /data`): not ours.
            if service.get("build") is not None:
                unstarted.append((words, find, _base_command(name, key_at, image, words)))
            continue
        if entrypoint is not None or command is not None:
            app = replace(app, without_exec=_list_child(first + rest, image) or app.without_exec)
        # compose's own `command` / `entrypoint` run no shell; the image's shell form does.
        started = shell_form(image, entry, entry_shell, cmd, cmd_shell)
        app = _stopped_with(app, service, image)
        box = _container(name, key_at, service, _replaced(image, entrypoint, command))
        app = started_in(app, _workdir(service, _files_from(service, path, image)))
        apps.append(replace(app, container=box, shell_form=started, shell_form_sh=sh_of(image)))
    return _started(path, apps, files, unstarted, unsaid)


def _not_overridden(services: _Node, path: Path) -> list[tuple[yaml.Node, yaml.Node]]:
    """The services of the file `path` as (key, value), without those the override beside
    it redefines without changing what runs (`overlay.overridden`): those are read merged
    with the override, one launch, the override's."""
    merged_away = overlay.overridden(path)
    assert isinstance(services.node, yaml.MappingNode)
    return [(k, v) for k, v in services.node.value if str(k.value) not in merged_away]


def _own_commands(
    service: _Node, lines: Mapping[Path, list[str]], image: Image | None
) -> tuple[tuple[Word, ...] | None, tuple[Word, ...] | None]:
    """The service's `entrypoint` and `command`, the one that names the program split into
    words when it is one item holding a whole command line (`command: ["gunicorn app:app -b
    0.0.0.0:8000"]`): the runtime runs no shell, so it looks for a program named by the whole
    string (the rule `exec-form-one-string` says so; the split is a guess at what was meant).
    A command after an entrypoint (the service's or the image's) is that program's argument,
    left as written."""
    entrypoint = _command(service.get("entrypoint"), lines)
    command = _command(service.get("command"), lines)
    if entrypoint is not None:
        return tuple(one_string_split(list(entrypoint))), command
    if command is not None and not (image is not None and image.entrypoint):
        return None, tuple(one_string_split(list(command)))
    return entrypoint, command


def _replaced(
    image: Image | None, entrypoint: tuple[Word, ...] | None, command: tuple[Word, ...] | None
) -> tuple[Location, ...]:
    """The lines of the image's ENTRYPOINT / CMD a service's own `entrypoint` / `command`
    replaces (an `entrypoint` clears the image's CMD too: the Compose Specification)."""
    if image is None:
        return ()
    gone = [*(image.entrypoint if entrypoint is not None else ())]
    gone += image.cmd if entrypoint is not None or command is not None else ()
    return tuple(dict.fromkeys(w.at for w in gone))


def _started(
    path: Path,
    apps: list[AppServer],
    files: list[Path],
    unstarted: list[tuple[list[Word], FindConfig | None, list[NotFollowed]]],
    unsaid: list[NothingToCheck],
) -> tuple[tuple[AppServer, ...], tuple[Path, ...]]:
    """The servers the file's services start and the files read for them; when none starts
    one, why: the first service script's own reason, else `_nothing_started`'s."""
    if not apps:
        raise unsaid[0] if unsaid else _nothing_started(path, unstarted)
    return tuple(apps), tuple(files)


def _development_launch(name: str, at: Location, words: Sequence[Word]) -> None:
    """A service that runs a framework's development server (`flask run`, `manage.py
    runserver`): a development launch, shown in the launch graph, not sized."""
    what = development_server(words)
    compose_development_server(name, at, words)
    if what is not None:
        note(
            "development-launch",
            at,
            f"compose service {name} ({at}) -> {what}: a development launch (reloads on code "
            "changes), not sized",
        )


@contextlib.contextmanager
def _complete(complete: bool, environment: bool = False) -> Iterator[None]:
    """While the block runs, `COMMAND_COMPLETE` is `complete` and `ENVIRONMENT_COMPLETE`
    `environment`."""
    token = COMMAND_COMPLETE.set(complete)
    known = ENVIRONMENT_COMPLETE.set(environment)
    try:
        yield
    finally:
        ENVIRONMENT_COMPLETE.reset(known)
        COMMAND_COMPLETE.reset(token)


def _image_app(
    call: tuple[
        Path,
        list[Word],
        list[Word],
        dict[str, str],
        dict[str, Location],
        Image | None,
        FindConfig | None,
        list[NothingToCheck],
    ],
    unseen: tuple[str, Location | Word] | None,
) -> AppServer | None:
    """`image_server` on `call`'s arguments. For a service of an image not built from these
    files (`unseen`: its name and where), a command its server refuses alone (`command:
    ["uvicorn", "--port", "8000"]`) holds arguments to the image's ENTRYPOINT, which no file
    here shows (prowler-mcp's adds the app): what they start is not known, a note says so,
    never the file refused. A service whose script starts no server (a worker's `arq`)
    starts nothing (why is added to `unsaid`, said when no service of the file starts one):
    the file's other services are still read."""
    path, first, rest, environment, where, image, find, unsaid = call
    try:
        return image_server(path, first, rest, environment, where, image, find=find)
    except CheckInputError as error:
        if unseen is None and isinstance(error, NothingToCheck):
            unsaid.append(error)
            return None
        if unseen is None:
            raise
        name, place = unseen
        at = place if isinstance(place, Location) else place.at
        note(
            "not-followed",
            at,
            f"not followed: service {name} runs an image not built from these files, whose "
            f"ENTRYPOINT may take these words as its arguments; read alone, "
            f"{str(error).rpartition(': ')[2][:120]}",
        )
        return None


#: The shells that may run a `-c` list's last command as their child: dash (the `sh` of
#: Debian's images, python:*-slim's included) and BusyBox's ash, which execs a lone command
#: (`base_shells.execs_lone_command`). bash 5.1 execs it; not counted.
_FORKING_SHELLS = frozenset({"sh", "dash", "ash"})


def _list_child(words: list[Word], image: Image | None) -> Setting[str] | None:
    """`sh -c "alembic upgrade head && uvicorn app:app"`: the server's command, the last of
    the list, which `sh` runs as its child (no `exec`), so the shell stays PID 1; also `sh -c
    "hypercorn ..."` alone, as a shell-form CMD is judged: dash keeps one command as its
    child too, bash (the image's /bin/sh on Fedora-like bases) and BusyBox ash exec it
    (nachet-backend, scieloorg/opac_5). None for any other command."""
    program = program_name(words[0].text) if words else ""
    if len(words) < 3 or program not in _FORKING_SHELLS:
        return None
    flag = next((i for i, w in enumerate(words[1:], 1) if re.fullmatch(r"-\w*c", w.text)), 0)
    if not flag or flag + 1 >= len(words):
        return None
    commands = [c for c in shell_commands(words[flag + 1]) if c]
    execs_one = execs_lone_command(program, root_base(image))
    if not commands or (len(commands) < 2 and execs_one) or commands[-1][0].text == "exec":
        return None
    if execs_last_command(program, root_base(image), words[flag + 1].text):
        return None  # BusyBox ash execs a list's last command: the server is PID 1
    last = commands[-1]
    if server_command(last) is None or any(server_command(c) for c in commands[:-1]):
        return None
    return Setting(" ".join(w.text for w in last), last[0].at)


def _base_command(
    name: str, at: Location, image: Image | None, words: Sequence[Word]
) -> list[NotFollowed]:
    """[why service `name` (at `at`), which runs `words`, is not followed] when they are
    none and its image sets none either and is `FROM` an owner's image not built here, or
    when they are only arguments for the base image's ENTRYPOINT (`CMD ["app.wsgi:application",
    "--workers=2"]`, `unfollowed.base_entrypoint_arguments`); [] otherwise."""
    if image is not None and words and not image.entrypoint and unknown_base(image):
        arguments = base_entrypoint_arguments(words, image.base_reference)
        return [] if arguments is None else [arguments]
    if image is None or words or not owned_base(image):
        return []
    return [
        NotFollowed(
            f"{at}: not followed: service {name} runs the command of its image's base image "
            f"({image.base_reference}, not built from these files; {image.path.name} sets no "
            "CMD or ENTRYPOINT): what it starts is not known here"
        )
    ]


def _server_handed_on(words: list[Word]) -> NotFollowed | None:
    """Why a command that gives its program a server's command line as arguments (`command:
    [run_in_container, bash, uwsgi, --ini, app.ini]`, a script that hands them on through a
    program named by a variable: translate/pootle) is not followed: what that program does
    with them was not followed, which is not starting no server. None for any other."""
    for index in range(1, len(words)):
        started = server_command(words[index:])
        if started is None or program_name(words[index].text) in _SHELL_WORDS:
            continue
        shown = " ".join(w.text for w in words[index:])[:80]
        return NotFollowed(
            f"{words[0].at}: not followed: {words[0].text} is given a {started.server} command "
            f"line as its arguments (`{shown}`), and how it runs them was not followed: what "
            "the service starts is not known here"
        )
    return None


#: Programs that run the words after them as a command (`bash -c`, `env`): a server line
#: after one is the command's own, which `server_command` reads from the first word.
_SHELL_WORDS = frozenset({"sh", "bash", "dash", "ash", "env", "exec"})


def _nothing_started(
    path: Path, unstarted: list[tuple[list[Word], FindConfig | None, list[NotFollowed]]]
) -> NothingToCheck:
    """Why a compose file starts no server check reads: a service's launcher not followed
    (NotFollowed), else a service that runs its owner's base image's command (the third of
    each of `unstarted`), else nothing to check."""
    for words, finder, _ in unstarted:
        if development_server(words) is not None:
            continue  # a development launch: shown in the launch graph (_development_launch)
        launched = nothing_started([words], finder)
        if launched is not None:
            return launched
    handed = next((why for words, _, _ in unstarted if (why := _server_handed_on(words))), None)
    if handed is not None:
        return handed
    based = [why for _, _, whys in unstarted for why in whys]
    if based:
        return based[0]
    return NothingToCheck(
        f"{path}: no service starts a server check reads ({SERVERS_READ}): nothing to check"
    )
