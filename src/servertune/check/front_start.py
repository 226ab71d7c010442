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
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check import runtime_files
from servertune.check.commands import SHELLS, ConfigFile, FindConfig, Word, expand_shell
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
    """What an absolute `include` (`pattern`, a glob or a path) of the nginx config whose
    main file is `config` reads from the files the start script of the container holding it
    made; None when none made such a file, or the containers holding it disagree."""
    run = _RUN.get()
    holding = [s for s in (run.starts() if run is not None else ()) if s.holds(config)]
    if any(s.compose for s in holding):
        holding = [s for s in holding if s.compose]  # a service's run of its image is the run
    wanted = os.path.normpath(pattern)
    found: list[list[ConfigFile]] = []
    for start in holding:
        names = list(
            dict.fromkeys(m.path for m in start.made if fnmatch.fnmatchcase(m.path, wanted))
        )
        find = runtime_files.finding(start.made, start.find)
        files = [f for f in (find(name, at) for name in names) if f is not None]
        if not files or len(files) != len(names):
            return None  # one of them is not known here: neither is what nginx reads
        found.append(files)
    if not found or any(f != found[0] for f in found[1:]):
        return None
    return found[0]


def renders_of_run(paths: Sequence[Path]) -> tuple[Rendering, ...]:
    """Each compose service of `paths` whose start script renders templates before it starts
    nginx (`envsubst < "/templates/$1" > /etc/nginx/conf.d/app.conf`, with the template its
    command names), every one a repository file: the files it renders, each with the
    variables it substitutes there. A service whose renderings are not all known is left out."""
    from servertune.check.chain import Rendering

    found: list[Rendering] = []
    for path in paths:
        for start, _ in _compose_starts(path):
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
    for path in paths:
        for start, dockerfile in _compose_starts(path):
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
        made = _made_before_nginx([*first, *rest], dict(image.env), image.find)
        if made is not None:
            starts.append(_Start(_holding(image, []), made, image.find, compose=False))
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
                made = None
                if find is not None:
                    made = _made_before_nginx([*first, *rest], environment, find)
                if made is None or find is None:
                    found.append((None, dockerfile))
                    continue
                hosts = [defaulted(host, path) for host, _, _ in _mounts(service, path)]
                mounted = [os.path.normpath(h.absolute()) for h in hosts if h is not None]
                holds = _holding(image, mounted)
                start = _Start(holds, made, find, compose=True, service=(path, str(key.value)))
                found.append((start, dockerfile))
    except (CheckInputError, OSError, ValueError):
        return found  # its own reading says why
    return found


def _holding(image: Image | None, mounted: list[str]) -> Callable[[Path], bool]:
    """Whether a service's container holds a repository file: one of its bind mounts
    (`mounted`, real paths of files or folders) or its image's COPY by name or folder."""

    def holds(file: Path) -> bool:
        real = os.path.normpath(file.absolute())
        if any(real == m or real.startswith(m + os.sep) for m in mounted):
            return True
        return image is not None and image.holds(file, whole_context=False) is not None

    return holds


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
) -> tuple[runtime_files.Made, ...] | None:
    """The files the script the words run makes before it starts nginx (itself, through a
    script it runs, or through `exec "$@"` when the container's later words run nginx); None
    when it starts none."""
    texts = [w.text for w in words]
    try:
        found = _script(texts, find, words[0].at if words else None)
    except (CheckInputError, OSError):
        return None  # the file's own reading says why
    if found is None:
        return None
    script, arguments = found
    made: list[runtime_files.Made] = []
    hands_to_nginx = any(PurePosixPath(w).name == "nginx" for w in texts[1:])
    if _read_to_nginx(script, arguments, dict(environment), find, made, hands_to_nginx, 0):
        return tuple(dict.fromkeys(made))
    return None


def _read_to_nginx(
    script: ConfigFile,
    arguments: list[str] | None,
    env: dict[str, str],
    find: FindConfig,
    made: list[runtime_files.Made],
    hands_to_nginx: bool,
    depth: int,
) -> bool:
    """Adds to `made` what `script` (run with `arguments`) makes before nginx starts, and
    says whether nginx starts: on a line of its own, or of a script it runs first (`cp
    /conf/start.sh /tmp/ && /tmp/start.sh site.conf`, found among what was made so far)."""
    from servertune.check.scripts import _assignments, _logical_lines, _own_variables

    try:
        lines = _logical_lines(script.file, script.text)
    except CheckInputError:
        return False
    physical = script.text.splitlines()
    folders: set[str] = set()
    spans: set[tuple[int, int]] = set()
    for line in lines:
        line = replace(line, words=[_with_arguments(w, arguments) for w in line.words])
        if (line.first, line.last) not in spans:
            spans.add((line.first, line.last))
            made += runtime_files.made_by(
                script.file,
                _with_arguments("\n".join(physical[line.first - 1 : line.last]), arguments),
                script.first_line + line.first - 1,
                _own_variables(env),
                folders,
            )
        if _starts_nginx(line) or (hands_to_nginx and any("$@" in w for w in line.words)):
            return True
        called = _called_script(line.words, _own_variables(env), made, find)
        if called is not None and depth < _SCRIPT_DEPTH:
            inner, passed = called
            handing = any(PurePosixPath(w).name == "nginx" for w in passed or ())
            if _read_to_nginx(inner, passed, dict(env), find, made, handing, depth + 1):
                return True
        _assignments(line, env)
    return False


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
