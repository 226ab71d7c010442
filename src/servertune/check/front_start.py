"""The files a front's container makes when it starts, for the nginx it then starts.

An nginx container's start script often writes what its config includes just before it
starts nginx: `echo "server ${APP_HOST}:${APP_PORT};" > /run/app/upstream` then `exec nginx
-c /etc/nginx/nginx.conf`, or `envsubst '$APP_ADDR' < /tmp/site.conf >
/etc/nginx/conf.d/site.conf && nginx -g 'daemon off;'`. The rule is the app server's
(`runtime_files`): the script the container runs (its compose service's `entrypoint` /
`command`, else its image's ENTRYPOINT + CMD) makes those files by its lines that run before
nginx, with that container's environment (the image's ENV, the service's `environment`,
compose's `${NAME:-default}` taken as compose takes it when NAME is unset, and the script's own
variables). An nginx config the container holds (its image copies it by name or folder, or
the service bind-mounts it) then reads an absolute `include` of such a path from what was
made. A script that starts no nginx, or a path two containers holding the same config make
differently, makes nothing here: unknown, never guessed.

The script is followed as the shell runs it: a `sh -c '...'` text is a script of its own, and
a script it runs first (found among what was made so far: `sed 's/\r$//' run.sh >
/tmp/run.sh && /tmp/run.sh app.conf.template`) is read with its words as its `$1`, `$2`. So a
start that renders the template its command names (`envsubst < "/etc/nginx/conf.d/$1"`)
says which template is its front (`renders_of_run`, read by `chain.Stacks.reads`), and with
which values it renders it.
"""

from __future__ import annotations

import contextvars
import fnmatch
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check import runtime_files
from servertune.check.budget import each_within_budget
from servertune.check.commands import (
    SHELLS,
    ConfigFile,
    FindConfig,
    Word,
    expand_shell,
    in_directory,
)
from servertune.check.model import CheckInputError, Location, collect_notes
from servertune.check.source import read_text

if TYPE_CHECKING:
    from servertune.check.chain import Rendering
    from servertune.check.dockerfile import Image
    from servertune.check.scripts import _Line

__all__ = ["fronts_of_run", "made_for", "renders_of_run"]


@dataclass(frozen=True)
class _Start:
    """A container whose script starts nginx: which repository files it holds, what its
    script made before nginx, and how it finds a container path."""

    holds: Callable[[Path], bool]
    made: tuple[runtime_files.Made, ...]
    find: FindConfig
    #: A compose service's (its environment and mounts known), not an image's alone.
    compose: bool
    #: The compose service's file and name.
    service: tuple[Path, str] | None = None
    #: Where its nginx reads its config (`nginx -c PATH`, its script's or its process
    #: manager's program's): a relative `include` is in that folder (nginx's prefix).
    configs: tuple[str, ...] = ()
    #: Where the container holds a repository file (its image's COPY, whole context too).
    held_at: Callable[[Path], str | None] = lambda _: None
    #: The `if` arms each file was made in (`_Arms`).
    arms: tuple[tuple[runtime_files.Made, tuple[tuple[int, int], ...]], ...] = ()

    def possible(self, path: str) -> list[runtime_files.Made]:
        """The lines that may have made `path` when nginx starts: the last that makes it,
        and each before it that a later one does not always replace (`ln -sf a.conf x` in
        one arm of an undecided `if`, `ln -sf b.conf x` in the other: either may be there).
        A later line always replaces an earlier one when it runs whenever that one ran: its
        arms are the earlier's own or outer ones."""
        arms = dict(self.arms)
        kept: list[runtime_files.Made] = []
        for one in (m for m in self.made if m.path == path):
            mine = arms.get(one, ())
            kept = [k for k in kept if arms.get(k, ())[: len(mine)] != mine]
            kept.append(one)
        return kept

    def inside(self, config: Path) -> str | None:
        """The container path nginx is started with, when it is `config`'s."""
        at = self.held_at(config)
        return at if at is not None and at in self.configs else None


class _Run:
    """The run's containers, read the first time an include asks (a run with no nginx
    include outside its tree never reads them)."""

    def __init__(self, paths: Sequence[Path], images: Sequence[Image]) -> None:
        self.paths, self.images = tuple(paths), tuple(images)
        self.found: tuple[_Start, ...] | None = None

    def starts(self) -> tuple[_Start, ...]:
        if self.found is None:
            self.found = tuple(_starts(self.paths, self.images))
        return self.found


_RUN: contextvars.ContextVar[_Run | None] = contextvars.ContextVar(
    "servertune_check_front_starts", default=None
)
#: The programs that run the script named after them (`sh /start.sh`, `tini -- /start.sh`).
_RUNNERS = frozenset({"sh", "bash", "dash", "ash", "tini", "dumb-init", "--", "-e", "-x"})
#: The words after which a command starts, on a line of the script.
_BEFORE_COMMAND = frozenset({"exec", "then", "do", "else", "&&", "||", ";"})


@contextmanager
def fronts_of_run(paths: Sequence[Path], images: Sequence[Image]) -> Iterator[None]:
    """While the block runs, `made_for` sees the files each container of the run (a compose
    service of `paths`, or an image of `images` no service runs) makes before its nginx."""
    token = _RUN.set(_Run(paths, images))
    try:
        yield
    finally:
        _RUN.reset(token)


def made_for(config: Path, pattern: str, at: Location) -> list[ConfigFile] | None:
    """What an `include` (`pattern`, a glob or a path) of the nginx config whose main file
    is `config` reads from the files the start script of the container holding it made; a
    relative one where that container starts nginx with `config` (`nginx -c PATH`: in PATH's
    folder). None when none made such a file, or the containers holding it disagree."""
    run = _RUN.get()
    holding = [s for s in (run.starts() if run is not None else ()) if s.holds(config)]
    if any(s.compose for s in holding):
        holding = [s for s in holding if s.compose]  # a service's run of its image is the run
    found: list[list[ConfigFile]] = []
    for start in holding:
        inside = start.inside(config)
        if not pattern.startswith("/") and inside is None:
            return None  # where nginx's prefix is in this container is not known
        wanted = os.path.normpath(os.path.join(os.path.dirname(inside or "/"), pattern))
        names = list(
            dict.fromkeys(m.path for m in start.made if fnmatch.fnmatchcase(m.path, wanted))
        )
        files = _possible_files(start, names, at)
        if files is None:
            return None  # one of them is not known here: neither is what nginx reads
        found.append(files)
    if not found or any(f != found[0] for f in found[1:]):
        return None
    return found[0]


def _possible_files(start: _Start, names: Sequence[str], at: Location) -> list[ConfigFile] | None:
    """The files made at `names` as nginx reads them, each possibility of an undecided `if`
    (`_Start.possible`); None when one is not known here."""
    files: list[ConfigFile] = []
    for name in names:
        possible = start.possible(name)
        for one in possible:
            others = [m for m in possible if m is not one]
            kept = [m for m in start.made if m not in others]
            found = runtime_files.finding(kept, start.find)(name, at)
            if found is None:
                return None
            files.append(found)
    return files or None


def renders_of_run(paths: Sequence[Path]) -> tuple[Rendering, ...]:
    """Each compose service of `paths` whose start script renders templates before it starts
    nginx (`envsubst < "/templates/$1" > /etc/nginx/conf.d/app.conf`, with the template its
    command names), every one a repository file: the files it renders, each with the
    variables it substitutes there. A service whose renderings are not all known is left out."""
    from servertune.check.chain import Rendering

    found: list[Rendering] = []
    # One over its budget is left out: its own reading says so.
    for _, starts in each_within_budget(paths, _compose_starts):
        for start, _ in starts:
            if start is None or start.service is None:
                continue
            templates = _rendered_templates(start)
            if templates:
                found.append(Rendering(*start.service, templates))
    return tuple(found)


def _rendered_templates(
    start: _Start,
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None:
    """The repository files the start renders (real paths), each with the variables
    envsubst substitutes there; None when one rendering's source is not known here."""
    find = runtime_files.finding(start.made, start.find)
    templates: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for made in start.made:
        if not made.rendered or made.source is None:
            continue
        with collect_notes():  # looking, not reading
            try:
                template = find(made.source, made.at)
            except (CheckInputError, OSError):
                template = None
        if template is None:
            return None  # which file it renders is not known here
        environment = tuple(
            (name, value)
            for name, value in made.environment
            if made.names is None or name in made.names
        )
        templates.append((os.path.normpath(template.file.absolute()), environment))
    return tuple(templates)


def _starts(paths: Sequence[Path], images: Sequence[Image]) -> list[_Start]:
    starts: list[_Start] = []
    run_by_services: set[str] = set()
    # One over its budget is left out: its own reading says so.
    for _, found in each_within_budget(paths, _compose_starts):
        for start, dockerfile in found:
            if dockerfile is not None:
                run_by_services.add(os.path.normpath(dockerfile.absolute()))
            if start is not None:
                starts.append(start)
    for image in images:
        if os.path.normpath(image.path.absolute()) in run_by_services:
            continue
        from servertune.check.dockerfile import container_words

        first, rest = container_words(
            image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
        )
        started = _made_before_nginx([*first, *rest], dict(image.env), image.find)
        if started is not None:
            starts.append(_start_of(started, image, [], None))
    return starts


def _compose_starts(path: Path) -> list[tuple[_Start | None, Path | None]]:
    """Each service of the compose file `path` with the Dockerfile it runs: a `_Start` when
    its command runs a script that starts nginx."""
    try:
        from yaml import MappingNode

        from servertune.check.compose import (
            _command,
            _dotenv,
            _environment,
            _image,
            _interpolate_all,
            _mounts,
            _runs,
            _service_finder,
            defaulted,
            interpolate,
            looks_like_compose,
        )
        from servertune.check.dockerfile import container_words
        from servertune.check.kubernetes import _documents, _Node
    except ModuleNotFoundError:  # no YAML parser: the compose file's reading says so
        return []
    found: list[tuple[_Start | None, Path | None]] = []
    try:
        text = read_text(path)
        if not looks_like_compose(path, text):
            return []
        with collect_notes():  # the compose file's own reading says what it notes
            documents = _documents(path, text)
            root = documents[0] if documents else None
            services = root.get("services") if root is not None else None
            if root is None or services is None or not isinstance(services.node, MappingNode):
                return []
            # A `${NAME:-default}` the deployment's shell may set: compose's default, as when
            # it is unset (the `.env` beside the file first), never this machine's value.
            lookup = _dotenv(path)
            _interpolate_all(root.node, lookup, path, set())
            lines = {path: text.splitlines()}
            runs = _runs(services, lines)
            for key, value in services.node.value:
                service = _Node(value, path)
                image, _ = _image(service, path, runs)
                entrypoint = _command(service.get("entrypoint"), lines)
                command = _command(service.get("command"), lines)
                entry = (
                    entrypoint if entrypoint is not None else (image.entrypoint if image else None)
                )
                shell = False if entrypoint is not None else bool(image and image.entrypoint_shell)
                cmd = command if command is not None else (image.cmd if image else None)
                cmd_shell = False if command is not None else bool(image and image.cmd_shell)
                if entrypoint is not None and command is None:
                    cmd = None  # compose's `entrypoint` drops the image's CMD
                first, rest = container_words(image, entry, shell, cmd, cmd_shell)
                env, _, _, _ = _environment(
                    service, path, lookup, lambda v, at: interpolate(v, lookup, at)
                )
                environment = {**(image.env if image else {}), **env}
                find = _service_finder(service, path, image)
                dockerfile = image.path if image is not None else None
                started = None
                if find is not None:
                    started = _made_before_nginx([*first, *rest], environment, find)
                if started is None or find is None:
                    found.append((None, dockerfile))
                    continue
                hosts = [defaulted(host, path) for host, _, _ in _mounts(service, path)]
                mounted = [os.path.normpath(h.absolute()) for h in hosts if h is not None]
                start = _start_of(started, image, mounted, (path, str(key.value)))
                found.append((start, dockerfile))
    except (CheckInputError, OSError, ValueError):
        return found  # its own reading says why
    return found


def _start_of(
    reading: _Reading, image: Image | None, mounted: list[str], service: tuple[Path, str] | None
) -> _Start:
    """The container that `reading` read the start of: its image's (`service` None) or a
    compose service's (its bind mounts `mounted`)."""
    configs = tuple(dict.fromkeys(reading.configs))
    return _Start(
        _holding(image, mounted, configs),
        tuple(dict.fromkeys(reading.made)),
        reading.find,
        compose=service is not None,
        service=service,
        configs=configs,
        held_at=_held_at(image),
        arms=tuple(reading.arms.items()),
    )


def _holding(
    image: Image | None, mounted: list[str], configs: Sequence[str] = ()
) -> Callable[[Path], bool]:
    """Whether a service's container holds a repository file: one of its bind mounts
    (`mounted`, real paths of files or folders) or its image's COPY by name or folder, or
    any COPY (`COPY . /app`) that puts it where its nginx is started with (`configs`)."""

    def holds(file: Path) -> bool:
        real = os.path.normpath(file.absolute())
        if any(real == m or real.startswith(m + os.sep) for m in mounted):
            return True
        if image is not None and configs and image.holds(file) in configs:
            return True
        return image is not None and image.holds(file, whole_context=False) is not None

    return holds


def _held_at(image: Image | None) -> Callable[[Path], str | None]:
    """Where the image keeps a repository file (any COPY), None without an image."""
    return (lambda file: image.holds(file)) if image is not None else (lambda _: None)


def _script(
    words: list[str], find: FindConfig, at: Location | None
) -> tuple[ConfigFile, list[str] | None] | None:
    """The script of the repository the container's words run (`/start.sh`, `sh
    /app/start.sh`, `tini -- /entrypoint.sh`), or the text a shell runs (`sh -c 'cp ... &&
    /tmp/start.sh site.conf'`, read as a script written at `at`), with its arguments (its
    `$1`, `$2`; None when not known here); None when they run none."""
    for index, word in enumerate(words[:4]):
        if PurePosixPath(word).name in _RUNNERS or word == "-c":
            continue
        if index and words[index - 1] == "-c" and at is not None:
            # `sh -c TEXT NAME ARG...`: TEXT is the script, NAME its `$0`, ARG... its `$1`...
            return ConfigFile(word, at.file, at.line), _known(words[index + 2 :])
        head = word.split()[0] if word.split() else ""
        if "/" not in head and not head.endswith(".sh"):
            return None
        with collect_notes():  # looking, not reading
            found = find(head)
        if found is None:
            return None
        return found, _known(words[index + 1 :]) if head == word else None
    return None


#: An argument written out in full (no quoting, expansion or operator the shell would read).
_PLAIN_ARGUMENT = re.compile(r"[\w./:@%+=,-]*")
#: A positional parameter: `$1`, `${2}` (`$0`, `$@` and defaults are left as written).
_POSITIONAL = re.compile(r"\$(?:\{([1-9])\}|([1-9]))")
#: How deep scripts that call scripts are followed to the one that starts nginx.
_SCRIPT_DEPTH = 4


def _known(arguments: Sequence[str]) -> list[str] | None:
    """`arguments` when each is a plain word the script's `$1`... can be read as; None when
    one is not (its value is not known here)."""
    if all(_PLAIN_ARGUMENT.fullmatch(a) for a in arguments):
        return list(arguments)
    return None


def _with_arguments(text: str, arguments: list[str] | None) -> str:
    """`text` with the script's positional parameters replaced by `arguments` (an unset one
    empty, as the shell has it); as written when the arguments are not known."""
    if arguments is None:
        return text

    def one(match: re.Match[str]) -> str:
        index = int(match[1] or match[2])
        return arguments[index - 1] if index <= len(arguments) else ""

    return _POSITIONAL.sub(one, text)


def _made_before_nginx(
    words: Sequence[Word], environment: Mapping[str, str], find: FindConfig
) -> _Reading | None:
    """The files the script the words run makes before it starts nginx (itself, through a
    script it runs, a process manager it hands to, or through `exec "$@"` when the
    container's later words run nginx), and the configs nginx is started with where that
    is written (`nginx -c PATH`); None when it starts none."""
    texts = [w.text for w in words]
    try:
        found = _script(texts, find, words[0].at if words else None)
    except (CheckInputError, OSError):
        return None  # the file's own reading says why
    if found is None:
        return None
    script, arguments = found
    made: list[runtime_files.Made] = []
    configs: list[str] = []
    hands_to_nginx = any(PurePosixPath(w).name == "nginx" for w in texts[1:])
    reading = _Reading(find, made, configs)
    if _read_to_nginx(script, arguments, dict(environment), reading, hands_to_nginx, 0):
        return reading
    return None


@dataclass
class _Reading:
    """What reading a container's start scripts up to nginx collects: the files made so far
    (`made`), the configs nginx is started with (`configs`), and how a container path is
    found (`find`, the image's or the service's)."""

    find: FindConfig
    made: list[runtime_files.Made]
    configs: list[str]
    #: The `if` arms each file was made in (`_Arms`), outermost first.
    arms: dict[runtime_files.Made, tuple[tuple[int, int], ...]] = field(default_factory=dict)


#: Numbers each `if` block read (every script's), so that two blocks are never one.
_IF_BLOCKS = itertools.count()


class _Arms:
    """Where a script's line is among its `if` blocks: each open block's number and the arm
    (`then` 0, each `elif` / `else` one more) the line is in, outermost first."""

    def __init__(self) -> None:
        self.open: list[tuple[int, int]] = []

    def step(self, words: Sequence[str]) -> None:
        head = words[0] if words else ""
        if head == "if":
            self.open.append((next(_IF_BLOCKS), 0))
        elif head in ("elif", "else") and self.open:
            number, arm = self.open[-1]
            self.open[-1] = (number, arm + 1)
        elif head == "fi" and self.open:
            self.open.pop()


def _read_to_nginx(
    script: ConfigFile,
    arguments: list[str] | None,
    env: dict[str, str],
    reading: _Reading,
    hands_to_nginx: bool,
    depth: int,
) -> bool:
    """Adds to `reading.made` what `script` (run with `arguments`) makes before nginx starts,
    and says whether nginx starts: on a line of its own, of a script it runs first (`cp
    /conf/start.sh /tmp/ && /tmp/start.sh site.conf`, found among what was made so far), or
    as a program of the supervisord it hands the container to (`exec supervisord -c FILE`).
    A relative path a line makes is in the folder a `cd DIR` before it moved to."""
    from servertune.check.scripts import (
        _assignments,
        _changed_directory,
        _logical_lines,
        _own_variables,
    )

    try:
        lines = _logical_lines(script.file, script.text)
    except CheckInputError:
        return False
    physical = script.text.splitlines()
    folders: set[str] = set()
    spans: set[tuple[int, int]] = set()
    directory: str | None = None
    made = reading.made
    arms = _Arms()
    for line in lines:
        line = replace(line, words=[_with_arguments(w, arguments) for w in line.words])
        arms.step(line.words)
        if line.words[:1] == ["cd"]:
            at = Location(script.file, script.first_line + line.first - 1)
            args = [Word(w, at) for w in line.words[1:]]
            directory = _changed_directory(directory, args, _own_variables(env))
        if (line.first, line.last) not in spans:
            spans.add((line.first, line.last))
            one = runtime_files.made_by(
                script.file,
                _with_arguments("\n".join(physical[line.first - 1 : line.last]), arguments),
                script.first_line + line.first - 1,
                _own_variables(env),
                folders,
                directory=directory,
            )
            made += one
            reading.arms.update((m, tuple(arms.open)) for m in one if m not in reading.arms)
        if _starts_nginx(line) or (hands_to_nginx and any("$@" in w for w in line.words)):
            reading.configs += _nginx_config(line.words, _own_variables(env))
            return True
        if _supervises_nginx(line.words, _own_variables(env), reading, directory):
            return True
        called = _called_script(line.words, _own_variables(env), made, reading.find)
        if called is not None and depth < _SCRIPT_DEPTH:
            inner, passed = called
            handing = any(PurePosixPath(w).name == "nginx" for w in passed or ())
            if _read_to_nginx(inner, passed, dict(env), reading, handing, depth + 1):
                return True
        _assignments(line, env)
    return False


def _nginx_config(words: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The config the line's nginx is started with, when written out (`nginx -c PATH`)."""
    names = [PurePosixPath(w).name for w in words]
    if "nginx" not in names:
        return []
    rest = list(words[names.index("nginx") + 1 :])
    if "-c" not in rest or rest.index("-c") + 1 >= len(rest):
        return []
    named = rest[rest.index("-c") + 1]
    wanted = expand_shell(named, env) if "$" in named else named
    return [os.path.normpath(wanted)] if wanted and wanted.startswith("/") else []


def _supervises_nginx(
    words: Sequence[str], env: Mapping[str, str], reading: _Reading, directory: str | None
) -> bool:
    """The line hands the container to supervisord (`exec supervisord -c FILE`, FILE in the
    container) whose programs start nginx: the configs they start it with are collected."""
    from servertune.check.supervisord import nginx_configs

    names = [PurePosixPath(w).name for w in words]
    if "supervisord" not in names:
        return False
    rest = list(words[names.index("supervisord") + 1 :])
    flag = next((f for f in ("-c", "--configuration") if f in rest), None)
    if flag is None or rest.index(flag) + 1 >= len(rest):
        return False
    named = rest[rest.index(flag) + 1]
    wanted = expand_shell(named, env) if "$" in named else named
    if not wanted:
        return False
    find = runtime_files.finding(reading.made, reading.find)
    if directory is not None:
        find = in_directory(directory, find)
    with collect_notes():  # looking, not reading
        try:
            config = find(wanted)
        except (CheckInputError, OSError):
            return False
    configs = nginx_configs(config.file, config.text) if config is not None else []
    reading.configs += configs
    return bool(configs)


def _called_script(
    words: list[str], env: Mapping[str, str], made: Sequence[runtime_files.Made], find: FindConfig
) -> tuple[ConfigFile, list[str] | None] | None:
    """The shell script a line runs (`/tmp/start.sh site.conf`, `exec sh /start.sh`), found
    among the files made so far or the container's, with its arguments; None otherwise."""
    from servertune.check.scripts import looks_like_script

    rest = words[1:] if words[:1] == ["exec"] else list(words)
    if len(rest) > 1 and PurePosixPath(rest[0]).name in SHELLS and not rest[1].startswith("-"):
        rest = rest[1:]
    if not rest:
        return None
    path = expand_shell(rest[0], env) if "$" in rest[0] else rest[0]
    if not path or ("/" not in path and not path.endswith(".sh")):
        return None
    with collect_notes():  # looking, not reading
        try:
            found = runtime_files.finding(made, find)(path)
        except (CheckInputError, OSError):
            return None
    if found is None or not looks_like_script(found.file, found.text):
        return None
    passed = [expand_shell(w, env) if "$" in w else w for w in rest[1:]]
    return found, _known([w for w in passed if w is not None]) if None not in passed else None


def _starts_nginx(line: _Line) -> bool:
    """The line runs nginx (`exec nginx -g 'daemon off;'`, `nginx -c "$CONF"`)."""
    return any(
        PurePosixPath(word).name == "nginx"
        and (index == 0 or line.words[index - 1] in _BEFORE_COMMAND)
        for index, word in enumerate(line.words)
    )
