"""AWS ECS task definitions: the servers their containers start, and the stop ECS gives them.

A task definition lists containers (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/
API_ContainerDefinition.html), each run as Docker runs an image: `entryPoint` replaces the
image's ENTRYPOINT, `command` its CMD; `environment` is name / value pairs over the image's
`ENV`; `memory` the hard limit in MiB; `stopTimeout` the seconds between SIGTERM and SIGKILL,
30 s when unset (API_ContainerDefinition.html#ECS-Type-ContainerDefinition-stopTimeout;
API_StopTask.html: "a SIGTERM value and a default 30-second timeout, after which the SIGKILL
value is sent"). It is read where it is written:

* a JSON file with `containerDefinitions` (`aws ecs register-task-definition
  --cli-input-json file://task.json`);
* Terraform's `aws_ecs_task_definition` (https://registry.terraform.io/providers/hashicorp/
  aws/latest/docs/resources/ecs_task_definition), whose `container_definitions` is
  `jsonencode([...])` of HCL objects, a JSON heredoc, or `file("x.json")` /
  `templatefile("x.json", ...)` naming a JSON file of the repository.

An image the repository builds (`images.image_named`, on evidence in the files) runs with its
ENTRYPOINT / CMD where the container does not replace them; a registry name only the
deployment completes (`${aws_ecr_repository.x.repository_url}`) leaves the container's own
words. A Terraform expression (`local.env_vars`, `var.port`) is known only when Terraform
runs: an unresolved-variable note, never a refusal.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

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

__all__ = [
    "ECS_STOP_TIMEOUT_S",
    "HclExpression",
    "HclObject",
    "looks_like_task_definition",
    "read_hcl",
    "read_task_definitions",
]

#: ECS: seconds between SIGTERM and SIGKILL when a container sets no `stopTimeout`.
ECS_STOP_TIMEOUT_S = 30.0
_DOC = (
    "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html "
    "(stopTimeout: seconds before the container is killed, 30 by default); "
    "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_StopTask.html"
)
_WORDS = PlatformWords("Amazon ECS", "stopTimeout", '"stopTimeout": {}', _DOC, "cpu", "memory")
#: The same in Terraform's HCL (`jsonencode` of objects written `key = value`).
_HCL_WORDS = replace(_WORDS, grace_fix="stopTimeout = {}")

_TERRAFORM = re.compile(r'^\s*resource\s+"aws_ecs_task_definition"\s+"([^"]+)"', re.M)
_JSON_TASK = re.compile(r'"containerDefinitions"\s*:\s*\[')


#: A JSON list of container definitions on its own (what Terraform's `container_definitions
#: = templatefile("app.json", ...)` reads): objects with a `name` and an `image`, and what
#: runs in it or how it is run.
_CONTAINER_LIST = re.compile(r"\A\s*\[\s*\{")
_CONTAINER_KEYS = re.compile(r'"(?:command|entryPoint|portMappings|essential)"\s*:')


def looks_like_task_definition(path: Path, text: str) -> bool:
    """A Terraform file declaring `aws_ecs_task_definition`, JSON with `containerDefinitions`,
    or a JSON list of container definitions (`[{"name": .., "image": .., "command": ..}]`,
    kept apart as a Terraform template: `${name}` placeholders are read as unresolved)."""
    suffix = path.suffix.lower()
    if suffix == ".tf":
        return bool(_TERRAFORM.search(text))
    return suffix == ".json" and (bool(_JSON_TASK.search(text)) or _container_list(text))


def _container_list(text: str) -> bool:
    return (
        bool(_CONTAINER_LIST.match(text))
        and bool(re.search(r'"image"\s*:', text))
        and bool(re.search(r'"name"\s*:', text))
        and bool(_CONTAINER_KEYS.search(text))
    )


# --- a small reader of HCL values (JSON is one of them) -------------------------------------


class _Expression:
    """A Terraform expression (`local.env_vars`): known only when Terraform runs."""

    def __init__(self, text: str, line: int) -> None:
        self.text = text
        self.line = line


class _Object(dict[str, object]):
    """An object, with the line each key is written on, and its HCL blocks in order (`task
    "web" { ... }`: its type, labels and body; one without labels is also its key's value)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[str, int] = {}
        self.blocks: list[tuple[str, tuple[str, ...], _Object]] = []


class _Parser:
    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.at = start

    def line(self) -> int:
        return self.text.count("\n", 0, self.at) + 1

    def skip(self, newlines: bool = True) -> None:
        blank = " \t\r\n," if newlines else " \t\r"
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in blank:
                self.at += 1
            elif self.text.startswith(("#", "//"), self.at):
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end
            elif self.text.startswith("/*", self.at):
                end = self.text.find("*/", self.at)
                self.at = len(self.text) if end < 0 else end + 2
            else:
                return

    def value(self) -> object:
        self.skip()
        char = self.text[self.at : self.at + 1]
        if char == "[":
            self.at += 1
            items: list[object] = []
            while self._more("]"):
                items.append(self.value())
            return items
        if char == "{":
            return self._object()
        if char == '"':
            return self._string()
        heredoc = _HEREDOC.match(self.text, self.at)
        if heredoc is not None:  # HCL's `<<EOF ... EOF`: its lines as one string
            end = re.compile(rf"^[ \t]*{heredoc.group(1)}[ \t]*$", re.M).search(
                self.text, heredoc.end()
            )
            if end is None:
                raise CheckInputError("unclosed heredoc")
            self.at = end.end()
            return self.text[heredoc.end() : end.start()]
        return self._bare()

    def _more(self, close: str) -> bool:
        self.skip()
        if self.at >= len(self.text):
            raise CheckInputError("unclosed bracket")
        if self.text[self.at] == close:
            self.at += 1
            return False
        return True

    def _object(self) -> _Object:
        self.at += 1
        found = _Object()
        while self._more("}"):
            line = self.line()
            if self.text[self.at] == '"':
                key = self._string()
            else:
                match = _KEY.match(self.text, self.at)
                if match is None:
                    raise CheckInputError(f"line {line}: an object key expected")
                key, self.at = match.group(), match.end()
            self.skip(newlines=False)
            labels: list[str] = []
            while self.text.startswith('"', self.at):
                labels.append(self._string())
                self.skip(newlines=False)
            if self.text.startswith("{", self.at):  # an HCL block: `config { ... }`
                block = self._object()
                found.blocks.append((key, tuple(labels), block))
                if not labels:
                    found[key], found.lines[key] = block, line
                continue
            if self.text[self.at : self.at + 1] not in ("=", ":"):
                raise CheckInputError(f"line {line}: a key without `=` or `:`")
            self.at += 1
            found[key] = self.value()
            found.lines[key] = line
        return found

    def _string(self) -> str:
        out, depth = [], 0
        self.at += 1
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "\\" and depth == 0:
                escaped = self.text[self.at + 1 : self.at + 2]
                out.append({"n": "\n", "t": "\t"}.get(escaped, escaped))
                self.at += 2
                continue
            if self.text.startswith("${", self.at):
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            elif char == '"' and depth == 0:
                self.at += 1
                return "".join(out)
            out.append(char)
            self.at += 1
        raise CheckInputError("unclosed string")

    def _bare(self) -> object:
        line, start, depth = self.line(), self.at, 0
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in "([{":
                depth += 1
            elif char in ")]}" and depth:
                depth -= 1
            elif char in "]}\n," and depth == 0:
                break
            self.at += 1
        word = self.text[start : self.at].strip()
        if re.fullmatch(r"-?\d+(\.\d+)?", word):
            return float(word) if "." in word else int(word)
        literals: dict[str, object] = {"true": True, "false": False, "null": None}
        if word in literals:
            return literals[word]
        return _Expression(word, line)


def _parse(text: str, start: int = 0) -> object:
    return _Parser(text, start).value()


def read_hcl(text: str) -> _Object:
    """A whole HCL file (Nomad's job file): its top level's attributes and blocks."""
    root = _parse("{" + text + "\n}")
    assert isinstance(root, _Object)
    return root


#: For readers of other HCL files: a value known only when the tool runs, and an object.
HclExpression = _Expression
HclObject = _Object


# --- where the containers are written -------------------------------------------------------

#: An HCL object's bare key (`name`, `port.mappings`).
_KEY = re.compile(r"[\w.-]+")
_DEFINITIONS = re.compile(r"\bcontainer_definitions\s*=\s*")
_HEREDOC = re.compile(r"<<-?\s*(\w+)[ \t]*\n")
_FILE_CALL = re.compile(r'(?:template)?file\(\s*"(?:\$\{path\.(?:module|root)\}/)?([^"$]+)"')


def _terraform(path: Path, text: str) -> list[tuple[Path, str, object]]:
    """(file, text, containers) of each `aws_ecs_task_definition`: the value its
    `container_definitions` is, read where it is written."""
    found: list[tuple[Path, str, object]] = []
    for resource in _TERRAFORM.finditer(text):
        assigned = _DEFINITIONS.search(text, resource.end())
        following = _TERRAFORM.search(text, resource.end())
        if assigned is None or (following is not None and following.start() < assigned.start()):
            continue
        at = assigned.end()
        heredoc = _HEREDOC.match(text, at)
        called = _FILE_CALL.match(text, at)
        if text.startswith("jsonencode(", at):
            found.append((path, text, _parse(text, at + len("jsonencode("))))
        elif heredoc is not None:
            found.append((path, text, _parse(text, heredoc.end())))
        elif called is not None:
            named = path.parent / called.group(1)
            line = text.count("\n", 0, at) + 1
            if not named.is_file():
                note(
                    "not-followed",
                    Location(path, line),
                    f"not followed: container_definitions are read from {called.group(1)}, "
                    "which is not among the files here",
                )
                continue
            named_text = named.read_text(errors="replace")
            found.append((named, named_text, _parse(named_text)))
        else:
            line = text.count("\n", 0, at) + 1
            note(
                "unresolved-variable",
                Location(path, line),
                f"container_definitions of aws_ecs_task_definition {resource.group(1)!r} is a "
                "Terraform expression known only when it runs: what it starts was not checked",
            )
    return found


def read_task_definitions(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The app servers the task definitions' containers start, each in its ECS container."""
    try:
        if path.suffix.lower() == ".tf":
            places = _terraform(path, text)
        else:
            root = _parse(text)
            containers = root.get("containerDefinitions") if isinstance(root, dict) else root
            if isinstance(root, list) and _read_by_terraform(path):
                return ()  # the Terraform file that names it reads it: one launch, not two
            places = [(path, text, containers)]
    except (CheckInputError, IndexError) as error:
        raise CheckInputError(f"{path}: cannot read the task definition: {error}") from None
    apps: list[AppServer] = []
    untied: list[tuple[Location, str]] = []
    for file, _, containers in places:
        for container in containers if isinstance(containers, list) else []:
            if isinstance(container, _Object):
                app = _container(file, container, env or {}, follow)
                if app is not None:
                    apps.append(app)
                elif _runs_in_untied_image(container):
                    untied.append(_untied(file, container))
    if not apps and untied:
        for at, message in untied[1:]:  # the file's own note says the first
            note("not-followed", at, message)
        at, message = untied[0]
        raise NotFollowed(f"{at}: {message}")
    for at, message in untied:
        note("not-followed", at, message)
    if not apps:
        raise NothingToCheck(
            f"{path}: no container of its ECS task definitions starts a server check reads "
            "(gunicorn, uvicorn, granian, uWSGI) from the files here: nothing to check"
        )
    return tuple(apps)


def _read_by_terraform(path: Path) -> bool:
    """Whether a Terraform file here (in the JSON's folder or one above it, within the run's
    root) reads `path` as an `aws_ecs_task_definition`'s containers."""
    from servertune.check import resolve

    wanted = resolve.real_path(path)
    for folder in path.parents:
        if not resolve.inside(folder, path):
            break
        for terraform in sorted(folder.glob("*.tf")):
            text = terraform.read_text(errors="replace")
            if not _TERRAFORM.search(text):
                continue
            for called in _FILE_CALL.finditer(text):
                if resolve.real_path(folder / called.group(1)) == wanted:
                    return True
    return False


def _runs_in_untied_image(container: _Object) -> bool:
    """The container gives its image's ENTRYPOINT a `command` of options (`-b :8000`: the
    arguments of a program, not one) and no Dockerfile here is tied to that image: what runs
    them is not known. A command that names a program (`celery worker`) runs it."""
    command = container.get("command")
    if "entryPoint" not in container and command is None:
        # No command of its own: its image's runs, and an image the deployment names
        # (`"image": "${app_server_django_url}"`) may be the project's.
        image = container.get("image")
        return isinstance(image, str) and "$" in image.rsplit(":", 1)[0]
    return (
        "entryPoint" not in container
        and isinstance(command, list)
        and bool(command)
        and str(command[0]).startswith("-")
    )


def _untied(file: Path, container: _Object) -> tuple[Location, str]:
    name, image = container.get("name"), container.get("image")
    shown = image if isinstance(image, str) else "an image set where it is deployed"
    if container.get("command") is None:
        return Location(file, container.lines.get("image", 1)), (
            f"not followed: container {name!r} runs the command of image {shown!r}, which the "
            "files do not tie to a Dockerfile here: what it starts is not known"
        )
    return Location(file, container.lines.get("command", 1)), (
        f"not followed: container {name!r} gives its command to the ENTRYPOINT of {shown!r}, "
        "which the files do not tie to a Dockerfile here: what runs the command is not known"
    )


def _words(file: Path, container: _Object, field: str) -> tuple[Word, ...] | None:
    """A container's `entryPoint` / `command` list, None when unset or not a list of strings."""
    value = container.get(field)
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        if isinstance(value, _Expression):
            _unresolved(file, field, value)
        return None
    at = Location(file, container.lines.get(field, 1))
    return tuple(Word(str(w), at) for w in value)


def _unresolved(file: Path, field: str, value: _Expression) -> None:
    note(
        "unresolved-variable",
        Location(file, value.line),
        f"{field} = {value.text} is known only when Terraform runs: what depends on it was "
        "not checked",
    )


def _environment(file: Path, container: _Object) -> tuple[dict[str, str], dict[str, Location]]:
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    pairs = container.get("environment")
    if isinstance(pairs, _Expression):
        _unresolved(file, "environment", pairs)
    for pair in pairs if isinstance(pairs, list) else []:
        if isinstance(pair, _Object) and isinstance(pair.get("name"), str):
            value = pair.get("value")
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                values[str(pair["name"])] = str(value)
                where[str(pair["name"])] = Location(file, pair.lines.get("value", 1))
    return values, where


def _container(
    file: Path, container: _Object, env: Mapping[str, str], follow: FollowWords | None
) -> AppServer | None:
    """The server one container starts: its `entryPoint` + `command` in its image."""
    from servertune.check.dockerfile import image_run_server
    from servertune.check.images import image_named
    from servertune.check.platforms import command_server

    entrypoint = _words(file, container, "entryPoint")
    command = _words(file, container, "command")
    environment, env_at = _environment(file, container)
    environment = {**environment, **env}
    reference = container.get("image")
    at = Location(file, container.lines.get("image", 1))
    image = image_named(reference, file, at) if isinstance(reference, str) else None
    if image is not None:
        found = image_run_server(file, image, entrypoint, command, environment, env_at)
    elif entrypoint is None and command is None:
        return None
    else:
        argv = [*(entrypoint or ()), *(command or ())]
        line = Word(shlex.join(w.text for w in argv), argv[0].at) if argv else None
        found = (
            command_server(file, line, file.parent, environment, env_at, follow) if line else None
        )
    if found is None:
        return None
    return _in_task(file, container, found)


def _in_task(file: Path, container: _Object, app: AppServer) -> AppServer:
    first = min(container.lines.values(), default=1)
    timeout = container.get("stopTimeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        grace = Setting(float(timeout), Location(file, container.lines["stopTimeout"]))
    else:
        grace = Setting(ECS_STOP_TIMEOUT_S, Location(file, first), default=True)
    memory = container.get("memory")
    memory_mb = (
        Setting(float(memory), Location(file, container.lines["memory"]))
        if isinstance(memory, (int, float)) and not isinstance(memory, bool)
        else None
    )
    name = container.get("name")
    box = Container(
        name=name if isinstance(name, str) else "container",
        at=Location(file, first),
        platform="ecs",
        memory_limit_mb=memory_mb,
        grace_period_s=grace,
        words=_HCL_WORDS if file.suffix.lower() == ".tf" else _WORDS,
    )
    return replace(app, container=box)
