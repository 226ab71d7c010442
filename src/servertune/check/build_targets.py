"""The stage of a Dockerfile the repository's own build commands build: `docker build --target
NAME` (or `--build-arg X=NAME` where the last stage is only `FROM ${X}`) in a Makefile, a
justfile, a shell script or a CI workflow's `run:` step, and docker/build-push-action's
`target:` / `build-args:` / `file:`. The image those commands make runs that stage's CMD, not
the last stage's, which is what a plain build makes
(https://docs.docker.com/reference/cli/docker/buildx/build/#target).

Read only for a Dockerfile no compose file of the run builds (a compose service's own
`build.target` decides its image), and only when every build command of that Dockerfile names
the same stage: two say two images, and the last stage is read as before, both named in a note.
Workflow files are read here as text, never as launches: one that does not read as expected
says nothing."""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from servertune.check import memo, resolve
from servertune.check.model import Location, note

__all__ = [
    "Chosen",
    "built_by_compose",
    "chosen_context",
    "chosen_stage",
    "shown",
]

#: The Dockerfiles (resolved) the run's compose files build: their stage is the service's.
_COMPOSE_BUILT: contextvars.ContextVar[frozenset[Path]] = contextvars.ContextVar(
    "compose_built", default=frozenset()
)
#: Options of `docker build` that take no value (any other option without `=` takes the next).
_FLAGS = frozenset(
    {"--push", "--load", "--no-cache", "--pull", "-q", "--quiet", "--rm", "--force-rm"}
    | {"--compress", "--squash", "--disable-content-trust"}
)
#: Words that end a command on a line (`docker build . && docker push`).
_ENDS = frozenset({"&&", "||", ";", "|", ")", "&"})
_ACTION = re.compile(r"^(?P<indent>[ \t]*(?:-[ \t]+)?)uses:[ \t]*[\"']?docker/build-push-action@")
_KEY = re.compile(r"^[ \t]*(?P<key>target|file|context|build-args):[ \t]*(?P<value>.*?)[ \t]*$")
_ARGUMENT = re.compile(r"(?<![\w-])(?P<name>[A-Za-z_]\w*)=[\"']?(?P<value>[\w.-]+)")


@dataclass(frozen=True)
class Chosen:
    """A build command's choice for one Dockerfile: the stage (None: the last), at its line."""

    dockerfile: Path
    target: str | None
    #: Each `--build-arg NAME=value` with its line.
    arguments: tuple[tuple[str, str, int], ...]
    at: Location
    #: The build context it gives (`docker build -f F CTX`), resolved; None when not read.
    context: Path | None = None


@contextmanager
def built_by_compose(paths: Sequence[Path]) -> Iterator[None]:
    """The run's compose-built Dockerfiles, while the block reads the files (none without
    the YAML parser: no compose file is read then, its reading names the extra)."""
    try:
        from servertune.check.compose import dockerfiles_built
    except ModuleNotFoundError:
        built: frozenset[Path] = frozenset()
    else:
        built = dockerfiles_built(paths)
    from servertune.check.dockerfile import BUILT_IN

    token = _COMPOSE_BUILT.set(built)
    hook = BUILT_IN.set(chosen_context)
    try:
        yield
    finally:
        BUILT_IN.reset(hook)
        _COMPOSE_BUILT.reset(token)


def chosen_stage(dockerfile: Path, text: str) -> tuple[str, Location] | None:
    """The stage (not the last) every build command of the repository builds `dockerfile` as,
    and where the first says so; None when none chooses one, a compose file of the run builds
    it, or they disagree (then a note names each, and the last stage is read)."""
    from servertune.check.dockerfile import stage_starts
    from servertune.check.target_stages import selecting_argument

    root = resolve.root()
    wanted = dockerfile.resolve()
    if root is None or wanted in _COMPOSE_BUILT.get():
        return None
    mine = [c for c in _choices(root) if c.dockerfile == wanted]
    if not mine:
        return None
    starts = stage_starts(text)
    names = {name.lower(): name for _, name in starts if name}
    last = starts[-1][1].lower() if starts else ""
    selector = selecting_argument(text)
    stages = [_stage_of(c, selector) for c in mine]
    distinct = {s for s, _ in stages}
    if len(distinct) > 1:
        first: dict[str | None, Location] = {}
        for stage_of, where in stages:
            first.setdefault(stage_of, where)
        said = "; ".join(f"{_said(s)} at {shown(at)}" for s, at in first.items())
        note(
            "server-chosen",
            Location(dockerfile),
            f"{dockerfile}: the build commands here build it as different images ({said}): "
            "which one a deployment runs is not in these files, read as before",
        )
        return None
    ((stage, at),) = stages[:1]
    if stage is None or stage.lower() == last or stage.lower() not in names:
        return None
    return names[stage.lower()], at


def chosen_context(dockerfile: Path) -> Path | None:
    """The build context every build command of the repository gives `dockerfile` (`docker
    build -f ./oidc-controller/Dockerfile ..` in a script), with a note naming the first;
    None when none gives one, a compose file of the run builds it (its `context` decides) or
    they disagree."""
    root = resolve.root()
    wanted = dockerfile.resolve()
    if root is None or wanted in _COMPOSE_BUILT.get():
        return None
    mine = [c for c in _choices(root) if c.dockerfile == wanted]
    contexts = {c.context for c in mine}
    if len(contexts) != 1 or None in contexts:
        return None
    ((context,),) = [tuple(contexts)]
    if context is None or not context.is_dir() or not resolve.inside(context):
        return None
    written = os.path.relpath(context, root)
    note(
        "build-context",
        Location(dockerfile),
        f"{dockerfile}: built from {written}, the context `docker build` gives it at "
        f"{shown(mine[0].at)}",
    )
    return resolve.tree_form(context, dockerfile)


def shown(at: Location) -> str:
    """`at` as the repository writes it: from its root (`.github/workflows/ci.yml:12`)."""
    root = resolve.root()
    try:
        return f"{at.file.relative_to(root)}:{at.line}" if root is not None else str(at)
    except ValueError:
        return str(at)


def _stage_of(chosen: Chosen, selector: str) -> tuple[str | None, Location]:
    """The stage a build makes, where it says so: its `--target`, else the stage its
    `--build-arg` gives the selecting last stage's argument, else the last (None)."""
    if chosen.target is not None:
        return chosen.target, chosen.at
    given = [(value, line) for name, value, line in chosen.arguments if name == selector]
    if selector and given:
        return given[-1][0], Location(chosen.at.file, given[-1][1])
    return None, chosen.at


def _said(stage: str | None) -> str:
    return f"`--target {stage}`" if stage is not None else "its last stage"


def _choices(root: Path) -> tuple[Chosen, ...]:
    """Every build command of the repository's build files, read once a run."""

    def found() -> tuple[Chosen, ...]:
        from servertune.check.image_builds import command_files

        return tuple(c for file in command_files(root) for c in _read(file, root))

    return memo.recall(memo.run_table("build targets"), str(root), found)


def _read(file: Path, root: Path) -> Iterator[Chosen]:
    from servertune.check.image_builds import build_file_text

    lines = build_file_text(file).splitlines()
    for number, line in enumerate(lines, 1):
        start = re.search(r"\b(?:docker\s+(?:buildx\s+)?|podman\s+)build\b", line)
        if start is not None:
            yield from _command(file, root, lines, number, line[start.end() :])
        if file.suffix in (".yml", ".yaml") and _ACTION.match(line):
            yield from _action(file, root, lines, number)


def _command(file: Path, root: Path, lines: list[str], number: int, rest: str) -> Iterator[Chosen]:
    """The choice of the `docker build` at line `number`, its `\\` continuations joined."""
    from servertune.check.image_builds import continued_words

    words = continued_words(lines, number, rest)
    options: dict[str, tuple[str, int]] = {}
    arguments: list[tuple[str, str, int]] = []
    context: str | None = None
    index = 0
    while index < len(words):
        word, line = words[index]
        if word in _ENDS or word.startswith("#"):
            break
        if not word.startswith("-"):
            context = word if context is None else context
        elif word in _FLAGS:
            pass
        else:
            key, sep, value = word.partition("=")
            if not sep and index + 1 < len(words):
                index += 1
                value, line = words[index]
            if key == "--build-arg" and (found := _ARGUMENT.fullmatch(value)):
                arguments.append((found["name"], found["value"], line))
            options.setdefault(key, (value, line))
        index += 1
    written = options.get("-f") or options.get("--file")
    dockerfile = written[0] if written else f"{context}/Dockerfile" if context else None
    target = options.get("--target")
    if dockerfile is None or "$" in dockerfile or dockerfile == "-" or "://" in dockerfile:
        return
    if target is not None and not re.fullmatch(r"[\w.-]+", target[0]):
        target = ("$", target[1])  # a target a variable gives: one not known here
    resolved = _dockerfile(file, root, dockerfile)
    if resolved is not None:
        path, folder = resolved
        line = target[1] if target else number
        stage = target[0] if target else None
        given = (folder / context).resolve() if context and "$" not in context else None
        yield Chosen(path, stage, tuple(arguments), Location(file, line), given)


def _action(file: Path, root: Path, lines: list[str], number: int) -> Iterator[Chosen]:
    """The choice of the docker/build-push-action step whose `uses:` is at line `number`: its
    `with:` keys (`context` the repository by default, `file` `{context}/Dockerfile`)."""
    opener = _ACTION.match(lines[number - 1])
    written_indent = opener["indent"] if opener is not None else ""
    indent = len(written_indent)
    begin = number - 1
    # `uses:` under `- name: ...`: the step's keys before it are its own too.
    while "-" not in written_indent and begin > 0 and _inside(lines[begin - 1], indent):
        begin -= 1
    end = number
    while end < len(lines) and _inside(lines[end], indent):
        end += 1
    keys: dict[str, tuple[str, int]] = {}
    arguments: list[tuple[str, str, int]] = []
    for index in range(begin, end):
        found = _KEY.match(lines[index])
        if found is None:
            continue
        value = found["value"].strip("\"'")
        if found["key"] == "build-args":
            depth = len(lines[index]) - len(lines[index].lstrip())
            block = [(value, index + 1)]
            for number_of, more in enumerate(lines[index + 1 : end], index + 2):
                if more.strip() and len(more) - len(more.lstrip()) <= depth:
                    break
                block.append((more, number_of))
            arguments += [
                (m["name"], m["value"], at) for text, at in block for m in _ARGUMENT.finditer(text)
            ]
        else:
            keys.setdefault(found["key"], (value, index + 1))
    context = keys.get("context", (".", number))[0]
    written = keys.get("file", (f"{context}/Dockerfile", number))[0]
    if "$" in written or "://" in context:
        return
    target = keys.get("target")
    if target is not None and not re.fullmatch(r"[\w.-]+", target[0]):
        target = ("$", target[1])
    resolved = _dockerfile(file, root, written)
    if resolved is not None:
        line = target[1] if target else number
        stage = target[0] if target else None
        yield Chosen(resolved[0], stage, tuple(arguments), Location(file, line))


def _inside(line: str, indent: int) -> bool:
    """Whether `line` is within a step whose keys sit at `indent` (blank lines are)."""
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return True
    return len(line) - len(stripped) >= indent


def _dockerfile(file: Path, root: Path, written: str) -> tuple[Path, Path] | None:
    """The Dockerfile a command writes and the folder the command runs in: the repository's
    root (where CI and a root Makefile run), else the build file's own folder; None when
    neither holds it."""
    for folder in (root, file.parent):
        path = (folder / written).resolve()
        if path.is_file() and resolve.inside(path):
            return path, folder
    return None
