"""Dockerfiles: the server the image's `ENTRYPOINT` + `CMD` start, under its `ENV`.

Parsed by the `dockerfile` package, which wraps BuildKit's own Dockerfile parser (Go, the one
`docker build` uses): line continuations, the `escape` parser directive, heredocs
(`RUN <<EOF`, `COPY <<EOF /app/gunicorn.conf.py`), JSON (exec) and shell forms are read as
Docker reads them, with each instruction's lines. On top of the parse tree, as the Dockerfile
reference says the builder does:

* stages: the last `FROM` is the image; `FROM <stage>` inherits that stage's `ENV`,
  `WORKDIR`, `SHELL`, `ENTRYPOINT` and `CMD`; an `ENTRYPOINT` resets an inherited `CMD`;
* `ARG` defaults and `ENV` values go through the builder's word processing (quotes, the escape
  character, `$VAR`, `${VAR}`, `${VAR:-word}`, `${VAR:+word}`); only `ENV` reaches the running
  container, so only `ENV` is the server's environment;
* exec form runs its words as written; shell form runs `SHELL` (default `/bin/sh -c`) with the
  text, so the shell expands `$VAR` from the `ENV` at run time;
* an `ENTRYPOINT` script copied from the build context (or written by a `COPY <<EOF`
  heredoc) is read as a shell script with `CMD` as its `"$@"`; a `-c` / `--ini` config file
  is found the same way (`COPY` sources, relative to the `WORKDIR`).

The build context is the Dockerfile's directory (a compose file's `build.context` says
otherwise). A Dockerfile kept in a subdirectory is often built from the repository's root
(`docker build -f docker/Dockerfile .`): a file the image needs that is not found from the
Dockerfile's directory is looked for from its parent, then its grandparent
(`CONTEXT_ANCESTORS`), never above a directory holding `.git` nor outside the tree check
reads (`servertune.check.resolve`: a `COPY` source outside it is a note, never read). Build
arguments given with `--build-arg` are not known here: `ARG` defaults are used.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import glob
import itertools
import json
import os
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from servertune.check import memo, resolve
from servertune.check.base_images import BaseLaunch, known_base
from servertune.check.base_shells import (
    execs_last_command,
    execs_lone_command,
    image_sh,
    library_image,
    sh_words,
)
from servertune.check.commands import (
    WRAPPERS,
    ConfigFile,
    FindConfig,
    Word,
    dockerfile_name,
    expand_known,
    expand_shell,
    is_dockerfile,
    one_string_split,
    program_name,
    server_command,
    shell_commands,
)
from servertune.check.heroku_images import heroku_built
from servertune.check.model import (
    S6_INIT,
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Location,
    NotFollowed,
    NothingToCheck,
    Setting,
    collect_notes,
    note,
    refuse_line,
)
from servertune.check.own_clones import own_clone_folders
from servertune.check.run_folders import made_folders
from servertune.check.run_writes import run_writes
from servertune.check.scripts import _LONE_EXPANSION, run_words
from servertune.check.service_supervisors import SUPERVISED, SUPERVISORS
from servertune.check.source import read_text
from servertune.check.together import with_others
from servertune.check.unfollowed import (
    base_entrypoint_arguments,
    image_development_server,
    not_followed_launcher,
    nothing_started,
)
from servertune.check.working_dirs import started_in

__all__ = [
    "CONTEXT_ANCESTORS",
    "INSTRUCTIONS",
    "Image",
    "looks_like_dockerfile",
    "read_dockerfile",
    "read_image",
]

#: How many directories above a Dockerfile a file it copies is looked for when no build context
#: is given: `docker/Dockerfile` and `contrib/container/Dockerfile` built from the repository's
#: root (taiga-back, InvenTree) are one and two levels down, wger's
#: `extras/docker/production/Dockerfile` three. Never above the tree check reads (a folder
#: walk's root, or the repository `resolve.REPOSITORY_LEVELS` finds above the files given).
CONTEXT_ANCESTORS = 3

#: Every instruction of the Dockerfile reference; anything else is refused, as `docker build`
#: refuses it ("unknown instruction").
INSTRUCTIONS = frozenset(
    [
        "ADD",
        "ARG",
        "CMD",
        "COPY",
        "ENTRYPOINT",
        "ENV",
        "EXPOSE",
        "FROM",
        "HEALTHCHECK",
        "LABEL",
        "MAINTAINER",
        "ONBUILD",
        "RUN",
        "SHELL",
        "STOPSIGNAL",
        "USER",
        "VOLUME",
        "WORKDIR",
    ]
)
_DIRECTIVE = re.compile(r"\A#\s*([A-Za-z]+)\s*=\s*(\S+)\s*\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def looks_like_dockerfile(path: Path, text: str) -> bool:
    """`Dockerfile`, `Containerfile`, `Dockerfile.prod`, `Dockerfile-prod`, `web.Dockerfile`,
    `*.dockerfile`; and a name a Dockerfile may have (`DockerfileCelery`, `api.docker`,
    `Docker-geonode`) when its first instruction is FROM or ARG (`commands.is_dockerfile`)."""
    return is_dockerfile(path, text)


def _escape_character(text: str) -> str:
    """The `# escape=` parser directive (only before the first instruction, comment or blank
    line that is not a directive), default backslash."""
    escape = "\\"
    for line in text.splitlines():
        match = _DIRECTIVE.match(line.strip())
        if not match:
            break
        if match[1].lower() == "escape" and match[2] in ("\\", "`"):
            escape = match[2]
    return escape


def process_word(text: str, variables: Mapping[str, str], escape: str = "\\") -> str:
    """The builder's word processing (the Dockerfile reference, "Environment replacement"):
    quotes removed, the escape character honoured, `$VAR`, `${VAR}`, `${VAR:-word}` and
    `${VAR:+word}` replaced from `variables` (unset: empty)."""
    out: list[str] = []
    index = 0
    quote: str | None = None

    def variable(at: int) -> tuple[str, int]:
        if at + 1 < len(text) and text[at + 1] == "{":
            end = text.find("}", at + 2)
            if end < 0:
                raise ValueError("missing '}'")
            body = text[at + 2 : end]
            match = _NAME.match(body)
            if match is None:
                raise ValueError(f"bad substitution ${{{body}}}")
            name, rest = match[0], body[match.end() :]
            value = variables.get(name)
            if not rest:
                return value or "", end + 1
            if rest.startswith(":-"):
                return (value if value else process_word(rest[2:], variables, escape)), end + 1
            if rest.startswith(":+"):
                return (process_word(rest[2:], variables, escape) if value else ""), end + 1
            if rest.startswith("-"):
                return (value if value is not None else rest[1:]), end + 1
            if rest.startswith("+"):
                return (rest[1:] if value is not None else ""), end + 1
            return value or "", end + 1  # ${VAR#...} and other newer forms: the value
        match = _NAME.match(text, at + 1)
        if match is None:
            return "$", at + 1
        return variables.get(match[0], ""), match.end()

    while index < len(text):
        char = text[index]
        if quote == "'":
            if char == "'":
                quote = None
            else:
                out.append(char)
            index += 1
        elif char == escape and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
        elif char in "'\"" and quote is None:
            quote = char
            index += 1
        elif char == '"' and quote == '"':
            quote = None
            index += 1
        elif char == "$":
            value, index = variable(index)
            out.append(value)
        else:
            out.append(char)
            index += 1
    return "".join(out)


@dataclass
class _Stage:
    """What a build stage has set so far (and what a `FROM <stage>` inherits)."""

    env: dict[str, str] = field(default_factory=dict)
    env_at: dict[str, Location] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    shell: tuple[str, ...] = ("/bin/sh", "-c")
    entrypoint: list[Word] | None = None
    entrypoint_shell: bool = False
    cmd: list[Word] | None = None
    cmd_shell: bool = False
    #: (source, absolute destination, destination is a directory, the stage copied from or
    #: None for the build context, the COPY's line), in COPY order.
    copies: list[tuple[str, str, bool, _Stage | None, Location]] = field(default_factory=list)
    #: Image path -> heredoc text and its first line (COPY <<EOF /path).
    heredocs: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: Symbolic links a `RUN ln -s TARGET LINK` made: absolute link -> absolute target.
    links: dict[str, str] = field(default_factory=dict)
    #: `STOPSIGNAL` as written, at its line.
    stop_signal: tuple[str, Location] | None = None
    #: Whether the working directory is known: a WORKDIR of this file (else the base
    #: image's, not here, and "/" only stands for it).
    workdir_known: bool = False
    #: Where relative COPY destinations went while the WORKDIR was not known.
    guessed: set[str] = field(default_factory=set)
    #: The CMD was written in this stage (an ENTRYPOINT after it keeps it: only a base's
    #: CMD is reset by an ENTRYPOINT).
    cmd_here: bool = False
    #: `FROM`'s word when it is a build argument with no value here (`ARG env` then
    #: `FROM ${env}`): the stage or image built is given by `--build-arg`.
    unset_from: str = ""
    #: The image this stage's line of stages is `FROM`, when it is no stage of this file
    #: (`openwisp/openwisp-base:edge`), as written with its ARGs expanded.
    base: str = ""
    #: The line of that FROM.
    base_line: int = 1
    #: An ENTRYPOINT (a CMD) was written in this line of stages: the base image's is then
    #: not run.
    entrypoint_here: bool = False
    cmd_written: bool = False
    #: The TCP ports its `EXPOSE`s name (and the stages it is built FROM), in order.
    exposed: tuple[str, ...] = ()
    #: Folders a RUN made (`mkdir -p DIR`, `git clone URL DIR`) and the folders above them.
    made: set[str] = field(default_factory=set)

    def inherit(self) -> _Stage:
        return _Stage(
            env=dict(self.env),
            env_at=dict(self.env_at),
            workdir=self.workdir,
            shell=self.shell,
            entrypoint=self.entrypoint,
            entrypoint_shell=self.entrypoint_shell,
            cmd=self.cmd,
            cmd_shell=self.cmd_shell,
            copies=list(self.copies),
            heredocs=dict(self.heredocs),
            links=dict(self.links),
            stop_signal=self.stop_signal,
            workdir_known=self.workdir_known,
            guessed=set(self.guessed),
            base=self.base,
            base_line=self.base_line,
            entrypoint_here=self.entrypoint_here,
            cmd_written=self.cmd_written,
            exposed=self.exposed,
            made=set(self.made),
        )


#: The PATH of an image that sets none (Docker's default for Linux containers).
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Image:
    """What an image runs: its entrypoint and command words, environment and where to find
    the files it copied (for a compose service built from it)."""

    path: Path
    context: Path
    entrypoint: tuple[Word, ...]
    entrypoint_shell: bool
    cmd: tuple[Word, ...]
    cmd_shell: bool
    env: dict[str, str]
    env_at: dict[str, Location]
    workdir: str
    shell: tuple[str, ...]
    copies: tuple[tuple[str, str, bool, _Stage | None, Location], ...]
    heredocs: dict[str, tuple[str, int]]
    #: Symbolic links made by `RUN ln -s`: absolute link -> absolute target.
    links: Mapping[str, str] = field(default_factory=dict)
    #: `STOPSIGNAL` of the final stage as written, at its line: what `docker stop` sends.
    stop_signal: tuple[str, Location] | None = None
    #: The build context was given (a compose file's `build.context`), not assumed.
    context_given: bool = False
    #: Where relative COPY destinations went under a WORKDIR only the base image knows.
    guessed: frozenset[str] = frozenset()
    #: The image named by FROM when no stage of this file is (see `_Stage.base`).
    base_reference: str = ""
    #: The final stage's `FROM` word when a build argument with no value here (`_Stage`'s).
    unset_from: str = ""
    #: That image, when a Dockerfile of the run builds it (`with_base`): what it holds,
    #: sets and runs is this image's too, unless this one sets its own.
    base: Image | None = None
    #: The line of the FROM that names it.
    base_line: int = 1
    workdir_known: bool = False
    entrypoint_here: bool = False
    cmd_here: bool = False
    #: The TCP ports it EXPOSEs (its base's too): where Traefik's docker provider sends when
    #: a container exposes one port and its labels name none.
    exposed: tuple[str, ...] = ()
    #: Its FROM names a well-known base image (`base_images`) whose files and command are
    #: declared, not read: "inherited from tiangolo/uvicorn-gunicorn: /start.sh", for the chain.
    inherited: str = ""

    def find(self, wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        """The file the image holds at `wanted` (relative to WORKDIR), from the build context
        (through `COPY`, and `COPY --from` an earlier stage) or a heredoc; None when it is not
        among them. Without a given context, the Dockerfile's directory and then up to
        `CONTEXT_ANCESTORS` directories above it, nearest first, never above the tree check
        reads. A source outside that tree is never read (a note names its COPY)."""
        del at  # the COPY that brings a file in is what names it
        if not wanted or "\n" in wanted or len(wanted) > 4096:
            return None  # a script's whole text (`sh -c "..."`), not a file's name
        wanted = resolve.at_one_root(wanted)
        # Every command word of every script of a walk is looked for in the images that
        # copy it: each answer once per image and run (`memo`).
        table = self._answers if memo.in_run() else None
        return memo.recall(table, ("find", resolve.root(), wanted), lambda: self._find(wanted))

    def _find(self, wanted: str) -> ConfigFile | None:
        # `ENTRYPOINT ["../docker-entrypoint.sh"]` under `WORKDIR /home/app/backend`: the
        # file one folder up, as the kernel resolves it.
        targets = [PurePosixPath(posixpath.normpath(PurePosixPath(self.workdir) / wanted))]
        if "/" not in wanted:
            # A bare name run as a command (`CMD ["start.sh"]`) is looked up on the PATH.
            # (`ENV PATH=/x/bin:${PATH}` extends the base image's PATH, which is not known
            # here: Docker's default stands for it.)
            path = f"{self.env.get('PATH', '')}:{_DEFAULT_PATH}".split(":")
            targets += [PurePosixPath(d) / wanted for d in dict.fromkeys(path) if d.startswith("/")]
        resolved = [t for t in map(self._through_links, targets) if t not in targets]
        for target in map(self._through_links, targets):
            for context in self._context_folders:
                found = _locate(self.path, context, list(self.copies), self.heredocs, target)
                if found is not None:
                    return found
        found = (
            self._under_base_workdir(wanted)
            or self._under_whole_copy(wanted)
            or next(
                # (`RUN cp /usr/local/lib/python3.12/site-packages/bugsink/x.conf.py /app/`: the
                # copy's source, where the link leads.)
                filter(None, map(self._installed_from_context, [wanted, *map(str, resolved)])),
                None,
            )
        )
        if found is None and self.base is not None:
            # Not copied by this Dockerfile: the image it is built FROM may hold it.
            for target in map(self._through_links, targets):
                found = self.base.find(str(target))
                if found is not None:
                    return found
        return found

    def _installed_from_context(self, wanted: str) -> ConfigFile | None:
        """`-c /venv/lib/python3.13/site-packages/keep/api/config.py`: a file of the project's
        own package, installed into the image (`pip install .`) from a folder a COPY of the
        build brought in (`COPY keep keep`, in this stage or one it copies from), or from a
        wheel of it (bugsink's `pip install /tmp/$WHEEL_FILE`, no COPY) when the repository
        keeps that very file in the package's folder (`bugsink/gunicorn.docker.conf.py`, or under `src/`): that
        folder's file in the repository; a script (a `#!` line) is left to the image's own
        files."""
        _, marker, rest = wanted.partition("-packages/")
        if not marker or not wanted[: -len(rest) - len(marker)].endswith(("/site", "/dist")):
            return None
        top = PurePosixPath(rest).parts[0] if rest else ""
        stages = [c[3] for c in self.copies if c[3] is not None]
        copied = {c[0].strip("/").removeprefix("./") for s in stages for c in s.copies}
        copied |= {c[0].strip("/").removeprefix("./") for c in self.copies if c[3] is None}
        own = bool(copied & {top, "", "."})
        if not top or (not own and len(PurePosixPath(rest).parts) < 2):
            return None
        # Not copied: a wheel's, found only where the repository keeps that very file.
        folders = [""] if own else ["", "src/"]
        for context, folder in itertools.product(self._context_folders, folders):
            candidate = context / (folder + rest)
            if resolve.inside(candidate, self.path) and candidate.is_file():
                text = read_text(candidate)
                # A config or module only: a script kept in the package and run as the
                # entrypoint picks its branch from variables this reading does not decide
                # yet (keep's `if [ "$REDIS" != "true" ]`), so it stays not followed.
                return None if text.startswith("#!") else ConfigFile(text, candidate, 1)
        return None

    def _under_base_workdir(self, wanted: str) -> ConfigFile | None:
        """`COPY ./container/ ./` under the base image's WORKDIR (not known here) and
        `ENTRYPOINT ["/usr/local/searxng/entrypoint.sh"]`: the absolute path whose end is a
        file such a COPY brought, taken as the base image's WORKDIR plus that file."""
        parts = PurePosixPath(wanted).parts
        if not self.guessed or not wanted.startswith("/"):
            return None
        for cut in range(2, len(parts)):
            tail = PurePosixPath("/", *parts[cut:])
            if not any(tail.is_relative_to(g) for g in self.guessed):
                continue
            for context in self._context_folders:
                found = _locate(self.path, context, list(self.copies), self.heredocs, tail)
                if found is not None:
                    return found
        return None

    def _under_whole_copy(self, wanted: str) -> ConfigFile | None:
        """`FROM base-web`, `COPY . /app`, `CMD uwsgi --ini api.ini`: with the WORKDIR the
        base image's (not known here) and the one copy of the whole build context, a
        relative name is taken as under that copy's destination, where such images run
        (money-to-prisoners-api), rather than said not in the build context."""
        if self.workdir_known or self.base is not None or wanted.startswith("/"):
            return None
        whole = [
            dest
            for source, dest, _, stage, _ in self.copies
            if stage is None and source in (".", "./") and dest.startswith("/")
        ]
        if len(whole) != 1:
            return None
        target = PurePosixPath(posixpath.normpath(PurePosixPath(whole[0]) / wanted))
        for context in self._context_folders:
            found = _locate(self.path, context, list(self.copies), self.heredocs, target)
            if found is not None:
                return found
        return None

    def held_under(self, folder: str) -> list[tuple[str, Path]]:
        """The build-context files the image keeps under `folder` (an absolute image path),
        as (image path, repository file), from the final stage's COPYs, sorted."""
        found: dict[str, Path] = {}
        wanted = PurePosixPath(folder)
        for context in self._context_folders:
            for source, dest, is_dir, stage, copied_at in self.copies:
                if stage is not None:
                    continue
                with collect_notes():
                    locals_ = _sources(context, source, copied_at)
                for local in locals_:
                    target = PurePosixPath(dest)
                    if local.is_file():
                        held = target / local.name if is_dir else target
                        if held.is_relative_to(wanted):
                            found.setdefault(str(held), local)
                        continue
                    if not local.is_dir() or not (
                        wanted.is_relative_to(target) or target.is_relative_to(wanted)
                    ):
                        continue
                    below = (
                        local / wanted.relative_to(target)
                        if wanted.is_relative_to(target)
                        else local
                    )
                    if not below.is_dir() or not resolve.inside(below, self.path):
                        continue
                    for file in sorted(itertools.islice(below.rglob("*"), _HELD_FILES)):
                        if file.is_file():
                            inner = PurePosixPath(file.relative_to(local).as_posix())
                            found.setdefault(str(target / inner), file)
        if self.base is not None:
            for inside, file in self.base.held_under(folder):
                found.setdefault(inside, file)
        for link, file in self._linked_under(wanted):
            found.setdefault(link, file)
        return sorted(found.items())

    def _linked_under(self, wanted: PurePosixPath) -> Iterator[tuple[str, Path]]:
        """The links `RUN ln -s` made under `wanted` to a build-context file the image holds
        (`ln -s /srv/app/docker/run_web.bash /etc/service/web/run`: a runit service installed
        by a link), as (link, repository file)."""
        for link in self.links:
            if PurePosixPath(link).is_relative_to(wanted):
                linked = self.find(link)
                if linked is not None and linked.file != self.path and linked.file.is_file():
                    yield link, linked.file

    def _through_links(self, target: PurePosixPath) -> PurePosixPath:
        """Where `target` really is once the image's symbolic links are followed (a link to
        a file, or to a folder `target` is inside), as the kernel follows them."""
        for _ in range(8):  # a link to a link, never a loop
            path = str(target)
            for link, to in self.links.items():
                if path == link or path.startswith(link + "/"):
                    target = PurePosixPath(os.path.normpath(to + path[len(link) :]))
                    break
            else:
                return target
        return target

    def holds(self, file: Path, *, whole_context: bool = True) -> str | None:
        """Where the image keeps the build-context file `file` (its COPY destination, a
        folder's or a wildcard's included), None when no COPY of the final stage brings it in.
        The last COPY that does wins, as the later layer does. Without `whole_context`, a
        copy of the whole build context (`COPY . /app`, which carries every file of the
        repository, other setups' configs too) does not count: only a COPY that names the
        file, its folder or a wildcard matching it."""
        if not memo.in_run():
            return self._holds(file, whole_context)
        key = ("holds", resolve.root(), str(file), whole_context)
        return memo.recall(self._answers, key, lambda: self._holds(file, whole_context))

    def _holds(self, file: Path, whole_context: bool) -> str | None:
        real = os.path.normpath(file.absolute())
        for root, copied in self._copied_from:
            if not self._sources_outside and not _within(real, root):
                continue  # every COPY source is inside the context: none of them is `file`
            for here, dest, is_dir_dest, folder in copied:
                if here == root and not whole_context:
                    continue
                if real == here:
                    name = PurePosixPath(dest) / file.name if is_dir_dest else dest
                    return str(name)
                if folder and real.startswith(here + os.sep):
                    inner = PurePosixPath(Path(real).relative_to(here).as_posix())
                    return str(PurePosixPath(dest) / inner)
        held = self._held_through_stages(real, whole_context)
        if held is not None:
            return held
        if self.base is not None:
            return self.base.holds(file, whole_context=whole_context)
        return None

    def _held_through_stages(self, real: str, whole_context: bool) -> str | None:
        """Where a `COPY --from=STAGE SRC DEST` of the final stage puts the build-context file
        `real` that STAGE's own COPYs brought under SRC (rommapp/romm: `FROM scratch`, then
        `COPY --from=production-stage / /`, the stage holding the nginx templates)."""
        for start, dest, is_dir_dest, copied in self._stages_copied:
            inside = _stage_holds(copied, real, whole_context)
            if inside is None:
                continue
            if inside == start:
                return str(PurePosixPath(dest) / inside.name if is_dir_dest else dest)
            if inside.is_relative_to(start):
                return str(PurePosixPath(dest) / inside.relative_to(start))
        return None

    @functools.cached_property
    def _stages_copied(
        self,
    ) -> tuple[tuple[PurePosixPath, str, bool, tuple[_Copied, ...]], ...]:
        """Per `COPY --from=STAGE SRC DEST` of the final stage, the last first: (SRC as a
        path of STAGE, DEST, whether DEST is a folder, what STAGE's own COPYs bring from the
        build context, the last first). Worked out once per image, as `_copied_from`."""
        found = []
        for source, dest, is_dir_dest, stage, _ in reversed(self.copies):
            if stage is None:
                continue
            start = PurePosixPath(posixpath.normpath(PurePosixPath(stage.workdir) / source))
            copied: list[_Copied] = []
            for context in self._context_folders:
                root = os.path.normpath(context.absolute())
                for from_source, to, to_dir, from_stage, at in reversed(stage.copies):
                    if from_stage is not None:
                        continue
                    with collect_notes():  # looking, not reading
                        locals_ = _sources(context, from_source, at)
                    for local in locals_:
                        here = os.path.normpath(local.absolute())
                        folder = local.is_dir() or from_source in (".", "./")
                        copied.append((here, to, to_dir, folder, here == root))
            found.append((start, dest, is_dir_dest, tuple(copied)))
        return tuple(found)

    @functools.cached_property
    def _copied_from(self) -> tuple[tuple[str, tuple[tuple[str, str, bool, bool], ...]], ...]:
        """Per context folder (normalized), what the final stage's COPYs bring from it, the
        last COPY first: (the source path, normalized; its destination; whether that is a
        folder; whether the source stands for a folder's contents). Looked up once per image:
        `holds` asks it for every file a walk's scripts name."""
        contexts = []
        for context in self._context_folders:
            copied = []
            for source, dest, is_dir_dest, stage, copied_at in reversed(self.copies):
                if stage is not None:
                    continue  # another stage's file: its context path is that stage's COPY's
                with collect_notes():  # looking, not reading: the reading notes what it names
                    locals_ = _sources(context, source, copied_at)
                for local in locals_:
                    here = os.path.normpath(local.absolute())
                    folder = local.is_dir() or source in (".", "./")
                    copied.append((here, dest, is_dir_dest, folder))
            contexts.append((os.path.normpath(context.absolute()), tuple(copied)))
        return tuple(contexts)

    @functools.cached_property
    def _sources_outside(self) -> bool:
        """Whether a COPY of the final stage names a source that may lie outside its context
        (an absolute path, or `..`): only then may a file outside the context be held."""
        return any(
            stage is None and (source.startswith("/") or ".." in PurePosixPath(source).parts)
            for source, _, _, stage, _ in self.copies
        )

    @functools.cached_property
    def _answers(self) -> memo.Table:
        """`find` and `holds` answers of this image in the run in progress (`memo.recall`)."""
        return {}

    @functools.cached_property
    def _context_folders(self) -> tuple[Path, ...]:
        """The build context, then (when none was given) the folders above it a COPY may
        name, worked out once per image: every lookup of a file in it asks."""
        contexts = [self.context]
        if self.context_given:
            return tuple(contexts)
        for _ in range(CONTEXT_ANCESTORS):
            above = contexts[-1].parent
            if (
                (contexts[-1] / ".git").exists()
                or above == contexts[-1]
                or not resolve.inside(above, self.path)
            ):
                break
            contexts.append(above)
        return tuple(contexts)


#: What a COPY brings from the build context: (the source path, normalized; its destination;
#: whether that is a folder; whether the source stands for a folder's contents; whether it is
#: the whole context).
_Copied = tuple[str, str, bool, bool, bool]


def _stage_holds(copied: Sequence[_Copied], real: str, whole_context: bool) -> PurePosixPath | None:
    """Where a stage's COPYs (`copied`, the last first) put the build-context file `real`;
    None when none brings it in. Without `whole_context`, a copy of the whole context does
    not count (`Image.holds`)."""
    for here, dest, is_dir_dest, folder, whole in copied:
        if whole and not whole_context:
            continue
        if real == here:
            name = os.path.basename(real)
            return PurePosixPath(dest) / name if is_dir_dest else PurePosixPath(dest)
        if folder and real.startswith(here + os.sep):
            return PurePosixPath(dest) / Path(real).relative_to(here).as_posix()
    return None


def _within(real: str, root: str) -> bool:
    """Whether the normalized path `real` is `root` or under it."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _locate(
    path: Path,
    context: Path,
    copies: list[tuple[str, str, bool, _Stage | None, Location]],
    heredocs: Mapping[str, tuple[str, int]],
    target: PurePosixPath,
    depth: int = 0,
) -> ConfigFile | None:
    key = str(target)
    if key in heredocs:
        text, first = heredocs[key]
        return ConfigFile(text, path, first)
    if depth > 8:
        return None
    for source, dest, is_dir_dest, stage, copied_at in reversed(copies):
        if not _may_hold(dest, key):
            continue
        try:
            relative = target.relative_to(PurePosixPath(dest))
        except ValueError:
            continue
        if stage is not None:
            inner = PurePosixPath(source if source.startswith("/") else "/" + source)
            # `COPY --from=builder /install/uwsgi.ini .`: a file into a folder keeps its name,
            # so the stage's own file is SRC itself (atst); else SRC is a folder.
            inners = [inner] if is_dir_dest and str(relative) == inner.name else []
            if str(relative) != ".":
                inners.append(inner / relative)
            else:
                inners.append(inner)
            for one in inners:
                found = _locate(path, context, stage.copies, stage.heredocs, one, depth + 1)
                if found is not None:
                    return found
            continue
        for local in _sources(context, source, copied_at):
            if str(relative) == ".":
                candidate = local if not local.is_dir() else None
            elif local.is_dir() or source in (".", "./"):
                candidate = local / relative  # a folder's contents go into the destination
            elif is_dir_dest and str(relative) == local.name:
                candidate = local
            else:
                candidate = None
            if candidate is None or resolve.admit(candidate, source, copied_at, "COPY") is None:
                continue
            candidate = Path(os.path.normpath(candidate))  # `docker/../run.sh`: `run.sh`
            if source.startswith("/"):
                # The repository an image clones (`own_clones`): written as the run's files are.
                candidate = resolve.tree_form(candidate, path)
            if candidate.is_symlink():
                # COPY copies what the link names: read under the file's own name, so the
                # walk's reading of it is the same file, its fronts joined once (atst).
                real = resolve.real_path(candidate.absolute())
                candidate = resolve.tree_form(real, path)
            if candidate.is_file():
                return ConfigFile(read_text(candidate), candidate, 1)
    return None


@functools.lru_cache(maxsize=4096)
def _dest_text(dest: str) -> str:
    return str(PurePosixPath(dest))


def _may_hold(dest: str, target: str) -> bool:
    """False only where `PurePosixPath(target).relative_to(dest)` fails for sure: both
    absolute, and `target` is not `dest` nor under it. A test on text: every lookup of every
    command word against every COPY, as paths, was the largest part of a walk's time."""
    folder = _dest_text(dest)
    if folder in ("/", "//") or not (folder.startswith("/") and target.startswith("/")):
        return True
    return target == folder or target.startswith(folder + "/")


def _sources(context: Path, source: str, copied_at: Location) -> list[Path]:
    """The build-context paths a COPY source names: itself, or for a wildcard (`*.conf`,
    `etc/uwsgi*.ini`, as Go's filepath.Match reads it) each match, sorted; a match that is a
    folder stands for its contents, as COPY copies them."""
    import fnmatch
    import glob

    if not glob.has_magic(source):
        return [context / source]
    written = PurePosixPath(source)
    if any(glob.has_magic(part) for part in written.parent.parts):
        return []  # a wildcard in a folder part: rare, not followed
    folder = context / written.parent
    if resolve.admit(folder, source, copied_at, "COPY") is None or not folder.is_dir():
        return []
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except OSError:
        return []
    return [folder / name for name in names if fnmatch.fnmatchcase(name, written.name)]


def _words(command: Any, lines: list[str]) -> list[Word]:
    """The words of an exec-form instruction, each on the line (of its lines) that holds it."""
    words = []
    for text in command.value:
        quoted = json.dumps(text)
        number = next(
            (
                n
                for n in range(command.start_line, command.end_line + 1)
                if quoted in lines[n - 1] or text in lines[n - 1]
            ),
            command.start_line,
        )
        words.append(Word(text, Location(Path(), number)))
    return words


def _error_line(reason: str, text: str) -> str:
    """`:N` for BuildKit's parse error: the line it names (`... on line 3`), or for an
    unterminated heredoc the line that opens the last one; empty when neither is known."""
    named = re.search(r"\bline (\d+)", reason)
    if named is not None:
        return f":{named[1]}"
    if "heredoc" in reason:
        openings = [n for n, line in enumerate(text.splitlines(), start=1) if "<<" in line]
        if openings:
            return f":{openings[-1]}"
    return ""


def read_image(
    path: Path,
    text: str,
    context: Path | None = None,
    target: str | None = None,
    args: Mapping[str, str] | None = None,
) -> Image:
    """The final stage of the Dockerfile (the stage `target` names, as `docker build
    --target` and compose's `build.target` pick it): what the image runs and with which
    environment. `args` are the build's `--build-arg`s (compose's `build.args`): each
    replaces the default of the ARG of its name."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError as error:
        reason = " ".join(str(error).split())
        raise CheckInputError(
            f"{path}{_error_line(reason, text)}: Dockerfile syntax error: {reason[:200]}"
        ) from None
    escape, lines = _escape_character(text), text.splitlines()
    stages: dict[str, _Stage] = {}
    global_args: dict[str, str] = {}
    stage: _Stage | None = None
    index = 0
    for command in commands:
        name = command.cmd.upper()
        if name not in INSTRUCTIONS:
            raise CheckInputError(
                f"{path}:{command.start_line}: unknown instruction {command.cmd[:40]!r}"
            )
        if name == "FROM":
            stage = _from(command, stages, global_args, index)
            index += 1
        elif name == "ARG":
            _arg(command, stage, global_args, escape, args or {})
        elif stage is None:
            # Docker refuses it too; the rest is read as if it were not there, so what the
            # image runs is still followed (the error stays, at its line).
            refuse_line(Location(path, command.start_line), f"{name} before the first FROM")
        else:
            try:
                _apply(name, command, stage, stages, _Source(path, lines, escape))
            except ValueError as error:
                _unreadable(Location(path, command.start_line), name, error)
    if stage is None:
        raise CheckInputError(f"{path}: no FROM instruction: not a Dockerfile")
    if target is not None and target.lower() in stages:
        stage = stages[target.lower()]
    given_context = context or BUILD_CONTEXTS.get().get(path.absolute()) or BUILT_IN.get()(path)
    folder, given = _context_of(path, given_context, stage)
    image = Image(
        path=path,
        context=folder,
        context_given=given,
        entrypoint=tuple(stage.entrypoint or ()),
        entrypoint_shell=stage.entrypoint_shell,
        cmd=tuple(stage.cmd or ()),
        cmd_shell=stage.cmd_shell,
        env=stage.env,
        env_at=stage.env_at,
        workdir=stage.workdir,
        shell=stage.shell,
        copies=tuple(stage.copies),
        heredocs=stage.heredocs,
        links=stage.links,
        stop_signal=stage.stop_signal,
        guessed=frozenset(stage.guessed),
        base_reference=stage.base,
        base_line=stage.base_line,
        unset_from=stage.unset_from,
        workdir_known=stage.workdir_known,
        entrypoint_here=stage.entrypoint_here,
        cmd_here=stage.cmd_written,
        exposed=stage.exposed,
    )
    return _on_base(image)


def _on_base(image: Image) -> Image:
    """`image` on its base: one a Dockerfile of the run builds, else a well-known base image
    declared in `base_images`, else as read (the base's command is not known)."""
    found = BASE_IMAGE.get()
    if image.base_reference and found is not None:
        base = found(image.base_reference, image.path)
        if base is not None:
            return with_base(image, base)
    known = known_base(image.base_reference) if "$" not in image.base_reference else None
    return image if known is None else _with_known_base(image, known)


def _with_known_base(image: Image, known: BaseLaunch) -> Image:
    """`image` built FROM a well-known base image (`base_images`): the base is made from its
    declared CMD, WORKDIR, ENV and start script, each at the FROM line, so the launch's chain
    shows where the command came from."""
    at = Location(image.path, image.base_line)

    def holds(wanted: str) -> bool:
        return image.find(wanted) is not None

    base = dataclasses.replace(
        image,
        entrypoint=(),
        entrypoint_shell=False,
        cmd=tuple(Word(word, at) for word in known.cmd),
        cmd_shell=False,
        env=dict(known.env),
        env_at=dict.fromkeys(known.env, at),
        workdir=known.workdir,
        workdir_known=True,
        copies=(),
        # Each script's lines start at the FROM line (a script's steps are named by their line
        # in its text), so its launch step is the FROM that brings it.
        heredocs={
            path: ("\n" * (image.base_line - 1) + text(holds), 1)
            for path, text in known.files.items()
        },
        links={},
        stop_signal=None,
        guessed=frozenset(),
        base=None,
        entrypoint_here=False,
        cmd_here=False,
        exposed=(),
    )
    shown = " ".join(known.cmd)
    return replace(
        with_base(image, base, own=False), inherited=f"inherited from {known.family}: {shown}"
    )


def _no_context(path: Path) -> Path | None:
    return None


#: The context the repository's own `docker build -f F CTX` lines give a Dockerfile
#: (`build_targets.chosen_context`, set for a run), preferred over a guess from the COPY
#: sources (bcgov/vc-authn-oidc's docker/manage).
BUILT_IN: contextvars.ContextVar[Callable[[Path], Path | None]] = contextvars.ContextVar(
    "servertune_check_built_in", default=_no_context
)


def _context_of(path: Path, given: Path | None, stage: _Stage) -> tuple[Path, bool]:
    """The build context of the image (and whether it is settled): the one a file gives, else
    the Dockerfile's folder; but when that folder lacks some of the COPY sources and a folder
    above it (up to the repository's root: never above `.git` nor the tree check reads) holds
    all of them, that folder, said in a note. A build from a folder that lacks a COPY source
    fails, so the image is built from the one that holds them: cognee's
    `deployment/helm/Dockerfile` copies the root's `entrypoint.sh` and `cognee/` (`docker
    build -f deployment/helm/Dockerfile .`), though its compose file says `context: .`."""
    start = given if given is not None else path.parent
    folders = [start]
    # Up to the repository's root however deep the Dockerfile is: SecObserve's
    # `docker/backend/prod/django/Dockerfile` copies `./docker/backend/prod/django/entrypoint`
    # from the root, and stopping short at `docker/` (which holds a `backend/` by chance)
    # took the wrong folder.
    while True:
        above = folders[-1].parent
        if (folders[-1] / ".git").exists() or above == folders[-1]:
            break
        if not resolve.inside(above, path):
            break
        folders.append(above)
    # A source no candidate holds (a file not among those here) says nothing about which.
    sources = [s for s in _local_sources(stage, set()) if any(_holds(f, s) for f in folders)]
    if not sources or all(_holds(start, s) for s in sources):
        return start, given is not None
    for above in folders[1:]:
        if all(_holds(above, s) for s in sources):
            lacking = "the build context it is given" if given is not None else "its own folder"
            note(
                "build-context",
                sources[0][1],
                f"built from {_shown(above)} (assumed): {lacking}, {_shown(start)}, lacks "
                f"files its COPYs name, which {_shown(above)} holds all of (as `docker build "
                f"-f {_shown(path)} {_shown(above)}` builds it)",
            )
            return above, True
    return start, given is not None


def _shown(folder: Path) -> str:
    """`folder` as a note names it: relative to the working folder when inside it."""
    try:
        return str(folder.absolute().relative_to(Path.cwd())) or "."
    except ValueError:
        return str(folder)


def _local_sources(stage: _Stage, seen: set[int]) -> list[tuple[str, Location]]:
    """The build-context sources the stage's COPYs name (and those of the stages it copies
    from), with their lines: not a URL, an absolute path or one with `..`."""
    seen.add(id(stage))
    found: list[tuple[str, Location]] = []
    for source, _, _, origin, copied_at in stage.copies:
        if origin is not None:
            if id(origin) not in seen:
                found += _local_sources(origin, seen)
            continue
        parts = PurePosixPath(source).parts
        if source.startswith("/") or ".." in parts or "://" in source or "$" in source:
            continue
        found.append((source, copied_at))
    return found


def _holds(folder: Path, source: tuple[str, Location]) -> bool:
    """Whether the COPY source is in `folder` (a wildcard: some file matches)."""
    with collect_notes():  # looking, not reading: the reading notes what it names
        return any(p.exists() for p in _sources(folder, *source))


#: The build context of each Dockerfile of the run that its compose services build with one
#: context (`build.context` with `build.dockerfile`): read on its own, it is built from there
#: too, not from its own folder (`building_from` sets it).
BUILD_CONTEXTS: contextvars.ContextVar[Mapping[Path, Path]] = contextvars.ContextVar(
    "servertune_check_build_contexts", default=MappingProxyType({})
)


@contextmanager
def building_from(contexts: Mapping[Path, Path]) -> Iterator[None]:
    """Each Dockerfile of `contexts` (absolute) read with its build context while the block
    runs, unless its reader gives one."""
    token = BUILD_CONTEXTS.set(contexts)
    try:
        yield
    finally:
        BUILD_CONTEXTS.reset(token)


#: How a Dockerfile finds the image of the run its FROM names (a Dockerfile here that builds
#: it): (the reference, the Dockerfile) -> that image, set by `images.images_of_run`.
BASE_IMAGE: contextvars.ContextVar[Callable[[str, Path], Image | None] | None] = (
    contextvars.ContextVar("servertune_check_base_image", default=None)
)


def with_base(image: Image, base: Image, *, own: bool = True) -> Image:
    """`image` built FROM `base` (an image a Dockerfile of the run builds): it holds what
    `base` holds, runs under `base`'s ENV (its own winning), in `base`'s WORKDIR unless it
    sets one, and runs `base`'s ENTRYPOINT and CMD unless it sets its own (an ENTRYPOINT of
    its own resets the base's CMD, as Docker does). `own`: `base` is no Dockerfile of the run
    but a well-known image declared at `image`'s FROM (`base_images`)."""
    if own and base.path == image.path:
        return image
    entrypoint, entrypoint_shell = image.entrypoint, image.entrypoint_shell
    cmd, cmd_shell = image.cmd, image.cmd_shell
    if not image.entrypoint_here:
        entrypoint, entrypoint_shell = base.entrypoint, base.entrypoint_shell
        if not image.cmd_here:
            cmd, cmd_shell = base.cmd, base.cmd_shell
    return dataclasses.replace(
        image,
        base=base,
        env={**base.env, **image.env},
        env_at={**base.env_at, **image.env_at},
        workdir=image.workdir if image.workdir_known else base.workdir,
        workdir_known=image.workdir_known or base.workdir_known,
        entrypoint=entrypoint,
        entrypoint_shell=entrypoint_shell,
        cmd=cmd,
        cmd_shell=cmd_shell,
        stop_signal=image.stop_signal or base.stop_signal,
        exposed=tuple(dict.fromkeys((*base.exposed, *image.exposed))),
    )


@dataclass(frozen=True)
class _Source:
    """The Dockerfile being read: its path, its lines and its escape character."""

    path: Path
    lines: list[str]
    escape: str


def _from(
    command: Any, stages: dict[str, _Stage], global_args: dict[str, str], index: int
) -> _Stage:
    """`FROM base [AS name]`: a new stage, inheriting a stage of this file when it names one
    (also through a global ARG: `ARG TARGET=app` then `FROM ${TARGET}` builds the `app`
    stage, the default a `--build-arg` may change)."""
    base = command.value[0].lower() if command.value else ""
    if "$" in base:
        base = process_word(command.value[0], global_args).lower()
    stage = stages[base].inherit() if base in stages else _Stage()
    if base not in stages and base != "scratch":
        stage.base = process_word(command.value[0], global_args)
        stage.base_line = command.start_line
        if not stage.base:
            stage.unset_from = command.value[0]
        known = known_base(stage.base) if stage.base and "$" not in stage.base else None
        if known is not None:
            # A well-known base's WORKDIR (`base_images`) is a folder the image has from its
            # first line: `COPY gunicorn_conf.py /app` copies into it, as Docker does.
            stage.workdir, stage.workdir_known = known.workdir, True
    # An ARG declared in a stage is inherited by the stages built FROM it (Docker's "Variables"
    # page: "Once a build argument is declared or consumed in a stage, it's automatically
    # inherited by child stages"): `FROM common AS app` keeps common's `ARG WORKDIR=/webodm`.
    stage.args = {**global_args, **(stages[base].args if base in stages else {})}
    name = _stage_name(command)
    if name is not None:
        stages[name.lower()] = stage
    stages[str(index)] = stage  # `COPY --from=0`: stages by number too
    return stage


def stage_starts(text: str) -> tuple[tuple[int, str], ...]:
    """Each `FROM`'s line and the stage name it gives ("" when unnamed), as the build reads
    them (`FROM --platform=$BUILDPLATFORM python:3.12 AS build` too); () when the text does not
    parse."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return ()
    return tuple(
        (command.start_line, _stage_name(command) or "")
        for command in commands
        if command.cmd.upper() == "FROM"
    )


def stage_heirs(text: str, line: int) -> tuple[str, ...]:
    """The names of the stages that run the command set in the stage holding `line`: that
    stage's, then each stage built FROM one of them that sets no ENTRYPOINT / CMD of its own
    and so inherits it ("" for an unnamed one); () when the text does not parse."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return ()
    # (the stage's name, the stage it is built FROM, whether it sets a command of its own)
    stages: list[tuple[str, str, bool]] = []
    held = -1
    for command in commands:
        verb = command.cmd.upper()
        if verb == "FROM":
            base = command.value[0].lower() if command.value else ""
            stages.append(((_stage_name(command) or "").lower(), base, False))
            held = len(stages) - 1 if command.start_line <= line else held
        elif verb in {"CMD", "ENTRYPOINT"} and stages:
            stages[-1] = (*stages[-1][:2], True)
    if held < 0:
        return ()
    heirs = [stages[held][0]]
    for name, base, own in stages[held + 1 :]:
        if base and base in heirs and not own:
            heirs.append(name)
    return tuple(heirs)


def _stage_name(command: Any) -> str | None:
    """The stage a `FROM base AS name` names, None for a `FROM` with no `AS`."""
    if len(command.value) >= 3 and command.value[1].upper() == "AS":
        return str(command.value[2])
    return None


def _arg(
    command: Any,
    stage: _Stage | None,
    global_args: dict[str, str],
    escape: str,
    given: Mapping[str, str],
) -> None:
    """`ARG NAME[=default]`: before the first FROM a global, else the stage's; a bare `ARG
    NAME` in a stage brings the global's value in; a build argument of that name (`given`)
    replaces the default."""
    for item in command.value:
        key, sep, value = item.partition("=")
        if key in given:
            (stage.args if stage is not None else global_args)[key] = given[key]
            continue
        variables = {
            **(stage.args if stage else global_args),
            **(stage.env if stage else {}),
        }
        resolved = process_word(value, variables, escape) if sep else ""
        scope = stage.args if stage is not None else global_args
        if sep or key not in scope:
            scope[key] = resolved if sep else global_args.get(key, "")


def _apply(
    name: str, command: Any, stage: _Stage, stages: dict[str, _Stage], source: _Source
) -> None:
    """An instruction of a stage, applied to what the stage has set so far."""
    variables = {**stage.args, **stage.env}
    if name == "ENV":
        values = list(command.value)
        for key, value in zip(values[::2], values[1::2], strict=False):
            stage.env[key] = process_word(value, {**stage.args, **stage.env}, source.escape)
            stage.env_at[key] = Location(source.path, command.start_line)
    elif name == "WORKDIR" and command.value:
        workdir = process_word(command.value[0], variables, source.escape)
        stage.workdir = str(PurePosixPath(stage.workdir) / workdir)
        stage.workdir_known = stage.workdir_known or workdir.startswith("/")
    elif name == "SHELL" and command.json:
        stage.shell = tuple(command.value)
    elif name in ("CMD", "ENTRYPOINT"):
        words = _command_words(command, source)
        if name == "CMD":
            stage.cmd, stage.cmd_shell, stage.cmd_here = words, not command.json, True
            stage.cmd_written = True
        else:
            stage.entrypoint, stage.entrypoint_shell = words, not command.json
            stage.entrypoint_here = True
            if not stage.cmd_here:
                stage.cmd = None  # an ENTRYPOINT resets the CMD of the base, not its own
    elif name in ("COPY", "ADD"):
        _copy(command, stage, stages, variables, source)
    elif name == "EXPOSE":
        stage.exposed += tuple(_exposed(command.value, variables, source.escape))
    elif name == "STOPSIGNAL" and command.value:
        signal = process_word(command.value[0], variables, source.escape)
        stage.stop_signal = (signal, Location(source.path, command.start_line))
    elif name == "RUN" and not command.json and command.value:
        _links(process_word(" ".join(command.value), variables, source.escape), stage)
        _copies(process_word(" ".join(command.value), variables, source.escape), stage)
        stage.made |= made_folders(
            process_word(" ".join(command.value), variables, source.escape), stage.workdir
        )
        _own_clones(command, stage, variables, source)
        _run_written(command, stage, variables, source)


def _run_written(
    command: Any, stage: _Stage, variables: Mapping[str, str], source: _Source
) -> None:
    """The files the RUN writes (`run_writes`: `echo TEXT > /entrypoint.sh`, `cat > PATH
    <<EOF`), kept as a `COPY <<EOF` heredoc's are: `>>` adds to a file this Dockerfile wrote
    before, and makes a file not known here (one a COPY brought) unknown no more than before."""
    text = process_word(" ".join(command.value), variables, source.escape)
    documents = [(h.name, h.content) for h in command.heredocs or ()]
    for target, content, append in run_writes(text, documents, stage.workdir):
        if not append:
            # Each line at its own line of the Dockerfile (one `echo` a line, as written), as
            # a base image's scripts are kept: the launch step is the RUN's line that runs it.
            padding = "\n" * (command.start_line - (0 if documents else 1))
            stage.heredocs[target] = (padding + content, 1)
        elif target in stage.heredocs:
            before, first = stage.heredocs[target]
            stage.heredocs[target] = (before + content, first)


def _own_clones(command: Any, stage: _Stage, variables: Mapping[str, str], source: _Source) -> None:
    """A RUN that `git clone`s the repository checked here (`own_clones`): its folder in the
    image holds the repository's files, as a `COPY` of the whole repository there would. The
    source is the repository's root as an absolute path, which the lookups take as it is."""
    text = process_word(" ".join(command.value), variables, source.escape)
    if "clone" not in text:
        return
    with resolve.within_default(Path(source.path)) as root:
        folders = own_clone_folders(text, stage.workdir, root)
        copied_at = Location(source.path, command.start_line)
        for folder in folders:
            stage.copies.append((str(root), folder, True, None, copied_at))


def _exposed(words: Sequence[str], variables: Mapping[str, str], escape: str) -> list[str]:
    """The TCP ports of an `EXPOSE 5000 8080/tcp 53/udp` (a range or an unset variable is no
    port known here)."""
    found = []
    for word in words:
        port, _, protocol = process_word(word, variables, escape).partition("/")
        if port.isdigit() and protocol.lower() in ("", "tcp"):
            found.append(port)
    return found


#: `ln`'s options that take no value, any of which may be run together (`-sf`, `-snf`).
_LN_FLAGS = frozenset("sfnrvTb")


def _links(text: str, stage: _Stage) -> None:
    """The symbolic links a RUN's `ln -s TARGET LINK` commands make (an ENTRYPOINT often
    names one: `ln -s /app/entrypoint.sh /entrypoint`); a relative TARGET is relative to
    the link's folder, as the kernel reads it. Other forms (several targets into a folder,
    a link into an existing folder) are not followed."""
    for part in re.split(r"&&|\|\||;|\n", text):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        if not words or PurePosixPath(words[0]).name != "ln":
            continue
        flags = [w for w in words[1:] if w.startswith("-")]
        names = [w for w in words[1:] if not w.startswith("-")]
        symbolic = any(
            f in ("-s", "--symbolic") or (f[1:2] != "-" and "s" in f and set(f[1:]) <= _LN_FLAGS)
            for f in flags
        )
        if not symbolic or len(names) != 2 or names[1].endswith("/"):
            continue
        target, link = names
        link_path = PurePosixPath(os.path.normpath(str(PurePosixPath(stage.workdir) / link)))
        if str(link_path) in _folders(stage):
            # `ln -s /app/start.sh /usr/local/bin`: the link is made inside that folder.
            link_path = link_path / PurePosixPath(target).name
        target_path = link_path.parent / target
        stage.links[str(link_path)] = os.path.normpath(str(target_path))


#: `cp`'s and `mv`'s options that take no value, run together or not (`-a`, `-rf`, `-fv`).
_CP_FLAGS = frozenset("afinprRuvLPdHTl")


def _copies(text: str, stage: _Stage) -> None:
    """The files a RUN's `cp SRC DST` / `mv SRC DST` puts elsewhere in the image (yeti's
    `RUN cp ./extras/docker/docker-entrypoint.sh /docker-entrypoint.sh` after `ADD . /app`):
    DST holds what SRC held, so it is looked up there, as a link made by `ln -s` is; a
    relative path is relative to the WORKDIR. Other forms (several sources, a glob) are not
    followed."""
    for part in re.split(r"&&|\|\||;|\n", text):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        if not words or PurePosixPath(words[0]).name not in ("cp", "mv"):
            continue
        flags = [w for w in words[1:] if w.startswith("-")]
        names = [w for w in words[1:] if not w.startswith("-")]
        if any(set(f.lstrip("-")) - _CP_FLAGS for f in flags if not f.startswith("--")):
            continue  # an option with a value (`-t DIR`, `-S SUFFIX`): not this form
        if len(names) != 2 or any(glob.has_magic(n) or "$" in n for n in names):
            continue
        source, target = (
            PurePosixPath(os.path.normpath(str(PurePosixPath(stage.workdir) / n))) for n in names
        )
        contents = names[0].endswith("/.")  # `cp -r conf/. /etc/app/`: what the folder holds
        if not contents and (names[1].endswith("/") or str(target) in _folders(stage)):
            target = target / source.name  # into a folder the image has
        if target != source:
            stage.links[str(target)] = str(source)


def _folders(stage: _Stage) -> set[str]:
    """Folders every image has or this stage named: a link written onto one goes inside."""
    path = f"{stage.env.get('PATH', '')}:{_DEFAULT_PATH}".split(":")
    known = {"/", "/etc", "/opt", "/srv", "/tmp", "/usr", "/usr/local", stage.workdir}
    return known | {os.path.normpath(d) for d in path if d.startswith("/")}


def _command_words(command: Any, source: _Source) -> list[Word]:
    """A CMD's or ENTRYPOINT's words, each on the line it is written on."""
    at = Location(source.path, command.start_line)
    if command.json:
        words = [
            Word(w.text, Location(source.path, w.at.line)) for w in _words(command, source.lines)
        ]
        return one_string_split(words)
    if command.end_line > command.start_line and source.escape == "\\":
        # A shell form over continued lines: its text as written, so each word
        # keeps its own line (`--http-to $X` on line 45 is reported at 45, not at
        # the instruction's first line); the shell joins the continuations.
        written = "\n".join(source.lines[command.start_line - 1 : command.end_line])
        written = re.sub(r"\A\s*\w+\s+", "", written)
        return [Word(written, at)]
    return [Word(" ".join(command.value), at)]


def _copy(
    command: Any,
    stage: _Stage,
    stages: dict[str, _Stage],
    variables: dict[str, str],
    source: _Source,
) -> None:
    """COPY / ADD: what goes where in the image, from the build context or a stage of this
    file (another image's files are not here); a heredoc's text is kept as the file."""
    escape = source.escape
    sources = [f.partition("=")[2] for f in command.flags if f.startswith("--from=")]
    origin = stages.get(sources[-1].lower()) if sources else None
    if sources and origin is None:
        return  # from another image: nothing of it is here
    values = [process_word(v, variables, escape) for v in command.value]
    if command.heredocs:
        dest = values[-1]
        dest = dest if dest.startswith("/") else f"{stage.workdir}/{dest}"
        for heredoc in command.heredocs:
            target = dest
            if dest.endswith("/"):
                target = dest + heredoc.name
            first = command.start_line + 1
            stage.heredocs[str(PurePosixPath(target))] = (heredoc.content, first)
        return
    if len(values) < 2:
        return
    dest = values[-1]
    # `COPY app.ini .`: the WORKDIR, a folder that exists, as `..` and `/` do.
    is_dir = dest.endswith(("/", "/.", "/..")) or dest in (".", "..") or len(values) > 2
    absolute = str(PurePosixPath(stage.workdir) / dest)
    # `WORKDIR /opt/app` then `COPY uwsgi.ini /opt/app`: a folder the image already has (the
    # WORKDIR, one an earlier COPY filled) takes the file in, as Docker copies into it.
    made = {PurePosixPath(stage.workdir)} | {
        PurePosixPath(d) if folder else PurePosixPath(d).parent
        for _, d, folder, _, _ in stage.copies
    }
    # `RUN git clone URL /badgr/badgr-server` (or `mkdir -p`), then `COPY uwsgi.ini
    # /badgr/badgr-server`: the file goes into the folder the RUN made.
    made |= {PurePosixPath(d) for d in stage.made}
    is_dir = is_dir or PurePosixPath(os.path.normpath(absolute)) in made
    # `COPY entrypoint.sh /usr/bin`: a folder every image has (or one on its PATH) takes the
    # file in, as Docker copies into an existing folder.
    is_dir = is_dir or os.path.normpath(absolute) in _folders(stage)
    copied_at = Location(source.path, command.start_line)
    if not stage.workdir_known and not dest.startswith("/"):
        stage.guessed.add(os.path.normpath(absolute))
    for name in values[:-1]:
        if origin is None and name.startswith("/"):
            # A build-context source is relative to the context, a leading `/` or not
            # (`COPY /start.sh /start.sh` copies the context's start.sh); `..` still escapes.
            name = name.lstrip("/") or "."
        stage.copies.append((name, absolute, is_dir, origin, copied_at))


def container_words(
    image: Image | None,
    entrypoint: tuple[Word, ...] | None,
    entrypoint_shell: bool,
    cmd: tuple[Word, ...] | None,
    cmd_shell: bool,
) -> tuple[list[Word], list[Word]]:
    """(entrypoint, command) as the container runs them: a shell form becomes `SHELL` + text,
    and the command's words come after a shell-form entrypoint's text as the shell's `$0`,
    `$1` ... (Docker runs `/bin/sh -c TEXT CMD...`): the Dockerfile reference's table says it
    ignores the command, which is so unless TEXT reads them (`/entrypoint.sh $0 $@`)."""
    shell = image.shell if image is not None else ("/bin/sh", "-c")

    def form(words: tuple[Word, ...] | None, is_shell: bool) -> list[Word]:
        if not words:
            return []
        if is_shell:
            return [*(Word(s, words[0].at) for s in shell), *words]
        return list(words)

    first = form(entrypoint, entrypoint_shell)
    return first, form(cmd, cmd_shell)


def image_run_server(
    path: Path,
    image: Image,
    entrypoint: tuple[Word, ...] | None,
    cmd: tuple[Word, ...] | None,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
) -> AppServer | None:
    """The server a platform's container starts from `image`: its `entrypoint` and `cmd` (exec
    form) replace the image's own where given, as ECS, Copilot and Nomad's docker driver
    replace them, and `env` is set over the image's `ENV`."""
    first, rest = container_words(
        image,
        entrypoint if entrypoint is not None else image.entrypoint,
        entrypoint is None and image.entrypoint_shell,
        cmd if cmd is not None else image.cmd,
        cmd is None and image.cmd_shell,
    )
    return find_server(path, first, rest, {**image.env, **env}, {**image.env_at, **env_at}, image)


def find_server(
    path: Path,
    entrypoint: list[Word],
    cmd: list[Word],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    image: Image | None,
    *,
    find: FindConfig | None = None,
) -> AppServer | None:
    """The server `entrypoint` + `cmd` start, read by its own parser; a script from the image
    (an entrypoint ending in `exec "$@"`, `bash /app/start`) is read as a shell script.
    `find` finds the files they name (default: the image's, through its COPYs)."""
    if find is None:
        find = image.find if image is not None else None
    program = entrypoint[0].text if entrypoint else ""
    # An ENTRYPOINT script the image does not hold here: its CMD is read as what it runs.
    script = bool(_SCRIPT_WORD.match(program)) and not program.startswith(_SYSTEM_PATHS)
    script = script and program_name(program) not in WRAPPERS  # `/tini --` is no script
    absent = script and bool(cmd) and not server_command(entrypoint)
    absent = absent and find is not None and find(program) is None
    app = None if absent else run_words(path, entrypoint + cmd, env, env_at, find_config=find)
    if app is not None or not entrypoint or not cmd or server_command(entrypoint):
        return _launched(app, entrypoint[:1] + cmd[:1])
    if find is not None and find(program) is not None:
        return None
    # An entrypoint script that is not here: images' entrypoints end in `exec "$@"`.
    app = run_words(path, cmd, env, env_at, find_config=find)
    if app is None:
        return None
    # A script that is not here is not a variable: a config-not-found note naming it.
    note(
        "config-not-found",
        entrypoint[0].at,
        f"ENTRYPOINT {program}: not in the build context or the files given; the CMD was read "
        'as what it runs (an entrypoint ending in `exec "$@"` runs it); what the script does '
        "before it was not checked",
    )
    return _launched(app, entrypoint[:1] + cmd[:1])


def _launched(app: AppServer | None, words: list[Word]) -> AppServer | None:
    """The app with the lines that start it (ENTRYPOINT, CMD, a compose `command`) first in
    its launch chain."""
    if app is None:
        return None
    steps = tuple(dict.fromkeys(w.at for w in words))
    return dataclasses.replace(app, launched_by=steps + app.launched_by)


def _unreadable(at: Location, name: str, error: ValueError) -> None:
    """A construct the builder's word rules cannot read (`${#VAR}` in a RUN, which the shell
    expands, not the builder): what this one instruction does is not known, said so at its
    line; the rest of the file is still read."""
    note(
        "not-followed",
        at,
        f"not followed: {name} holds what check cannot read ({error}): what it does to the "
        "image is not known; the rest of the file is read",
    )


def read_dockerfile(
    path: Path, text: str, env: Mapping[str, str] | None = None, target: str | None = None
) -> AppServer:
    """The server the image starts, under the image's `ENV` (and `env`, from `--env-file`);
    of the stage `target` names, when given (`docker build --target`)."""
    image = read_image(path, text, target=target)
    entrypoint, cmd = container_words(
        image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
    )
    environment = {**image.env, **(env or {})}
    try:
        app = _server_of(path, image, entrypoint, cmd, environment)
    except NotFollowed:
        app = None
        if not _supervises(entrypoint + cmd):
            raise
        sibling = _sibling_services(path, text, env, entrypoint + cmd)
        if sibling is None:
            raise
        image, app = sibling
    if app is None and _supervises(entrypoint + cmd):
        image, app = _sibling_services(path, text, env, entrypoint + cmd) or (image, None)
    if app is None and (entrypoint or cmd):
        below = _stage_below(path, text, env, entrypoint + cmd)
        if below is not None:
            image, app = below
    if app is None:
        # The command from its program on: a wrapper's options (`tini -g --`) are its own.
        shown = " ".join(w.text for w in entrypoint + cmd)
        if not shown and image.unset_from:
            raise _unset_from(path, text, image)
        if not shown and owned_base(image):
            # The command of an owner's base image (`FROM ckan/ckan-base:2.11`) is that image's
            # own: what it starts is not in these files, which is not starting nothing.
            raise NotFollowed(
                f"{path}:{image.base_line}: not followed: the image sets no CMD or ENTRYPOINT, "
                f"so its base image's command runs ({image.base_reference}, not built from "
                "these files): what that command starts is not known here"
            )
        if not shown:  # a builder stage, a base image: the base image's own command runs
            raise NothingToCheck(
                f"{path}: the image sets no CMD or ENTRYPOINT (its base image's command runs), "
                f"so it starts no server check reads ({SERVERS_READ})"
            )
        if not entrypoint and unknown_base(image):
            arguments = base_entrypoint_arguments(cmd, image.base_reference)
            if arguments is not None:
                raise arguments
        if target is None:  # the final stage: the image's own command
            image_development_server(entrypoint + cmd)
        _not_followed(path, image, entrypoint + cmd)
        launched = nothing_started([entrypoint + cmd], image.find)
        if launched is not None:
            raise launched
        raise NothingToCheck(
            f"{path}: the image runs {_cut(shown)!r}, which starts no server check reads "
            f"({SERVERS_READ}): nothing to check"
        )
    started = shell_form(
        image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
    )
    launch_line = started or app.without_exec
    if app.group_signalled is None and launch_line is not None:
        app = replace(app, group_signalled=heroku_built(path, launch_line.at))
    return _stop_signal(
        replace(app, shell_form=started, shell_form_sh=sh_of(image) if started else ""), path, text
    )


def _unset_from(path: Path, text: str, image: Image) -> NotFollowed:
    """Why an image whose final stage is `FROM ${env}`, a build argument with no value here
    (boxwise/boxtribute's `ARG env` choosing its `production` or `development` stage), is
    not followed: `docker build --build-arg` names the stage or image, not these files."""
    named = ", ".join(name for _, name in stage_starts(text)[:-1] if name)
    stages = f" (this file's stages: {named})" if named else ""
    return NotFollowed(
        f"{path}:{image.base_line}: not followed: the final stage is `FROM "
        f"{image.unset_from}`, a build argument with no value here: the stage or image it "
        f"builds{stages} is given by `--build-arg` where the image is built, not in these files"
    )


def _server_of(
    path: Path,
    image: Image,
    entrypoint: list[Word],
    cmd: list[Word],
    environment: Mapping[str, str],
) -> AppServer | None:
    """The server the image's command starts (through s6 services and its base image); a
    script of the image that ends by running a supervisor of its service folders (`exec
    runsvdir /etc/service`) starts the image's services."""

    def services(
        words: Sequence[Word], env: Mapping[str, str], env_at: Mapping[str, Location]
    ) -> AppServer | None:
        if words[0].at.file == path:
            return None  # the image's own command: read below, by `_s6_services`
        given = [Word(expand_known(w.text, env), w.at) for w in words]
        return _runit_services(path, image, given, env, env_at)

    token = SUPERVISED.set(services)
    try:
        app = find_server(path, entrypoint, cmd, environment, image.env_at, image)
    finally:
        SUPERVISED.reset(token)
    if app is None:
        app = _s6_services(path, image, entrypoint + cmd, environment, image.env_at)
    app = _through_base(app, image)
    # Docker runs the command in the WORKDIR (one a base image not read here sets: unknown).
    return None if app is None else started_in(app, image.workdir if image.workdir_known else "")


def _stage_below(
    path: Path, text: str, env: Mapping[str, str] | None, ran: list[Word]
) -> tuple[Image, AppServer] | None:
    """The server of the nearest stage the last stage is built FROM, when the last stage
    replaces that stage's command with one that starts none (`FROM base AS dev` then
    `CMD tail -f /dev/null`: an idle container for `docker exec`): the server stage is what
    `docker build --target` of it runs, and a stage whose own command starts nothing says
    nothing of it. None when no stage below starts a server check reads."""
    for name in _stages_below(text):
        image = read_image(path, text, target=name)
        entrypoint, cmd = container_words(
            image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
        )
        if entrypoint + cmd == ran:
            continue  # the same command, inherited: it starts nothing there either
        with collect_notes():  # the stage's reading is a candidate's, not the file's
            app = _server_of(path, image, entrypoint, cmd, {**image.env, **(env or {})})
        if app is not None:
            shown = " ".join(w.text for w in ran[-6:])
            note(
                "server-chosen",
                ran[-1].at,
                f"{ran[-1].at}: the last stage runs {shown[:80]!r}, which starts no server "
                f"check reads; the stage {name!r} it is built FROM starts one, read as "
                f"`docker build --target {name}` builds it",
            )
            return image, app
    return None


def _supervises(words: list[Word]) -> bool:
    return bool(words) and program_name(words[0].text) in _SERVICE_SUPERVISORS


def _sibling_services(
    path: Path, text: str, env: Mapping[str, str] | None, ran: list[Word]
) -> tuple[Image, AppServer] | None:
    """The server of another stage that runs the same supervisor of a folder of services
    (`CMD ["runsvdir", "/opt/x/services"]` in a `base` stage, each of `web`, `worker` and
    `static` built FROM it copying its own services there), when the last stage's services
    start none check reads: the stage whose services do is what `docker build --target`
    of it runs, and a note says which (ocf/ocfweb)."""
    for name in _stage_names(text)[:-1]:
        image = read_image(path, text, target=name)
        entrypoint, cmd = container_words(
            image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
        )
        if [w.text for w in entrypoint + cmd] != [w.text for w in ran]:
            continue
        with collect_notes():  # the stage's reading is a candidate's, not the file's
            try:
                app = _server_of(path, image, entrypoint, cmd, {**image.env, **(env or {})})
            except (NotFollowed, NothingToCheck):
                continue
        if app is not None:
            shown = " ".join(w.text for w in ran[-6:])
            note(
                "server-chosen",
                ran[-1].at,
                f"{ran[-1].at}: {shown[:80]!r} starts the services each stage copies in: "
                f"the last stage's start no server check reads, those of the stage {name!r} "
                f"do, read as `docker build --target {name}` builds it",
            )
            return image, app
    return None


def _stage_names(text: str) -> list[str]:
    """The named stages of the Dockerfile, in order."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return []
    froms = [c for c in commands if c.cmd.upper() == "FROM" and c.value]
    return [name for c in froms if (name := _stage_name(c))]


def _stages_below(text: str) -> list[str]:
    """The named stages the last stage is built FROM, the nearest first (`FROM base AS dev`
    last: `base`, then the stage `base` is FROM, and so on)."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return []
    froms = [c for c in commands if c.cmd.upper() == "FROM" and c.value]
    bases = {name.lower(): c.value[0].lower() for c in froms if (name := _stage_name(c))}
    below: list[str] = []
    base = froms[-1].value[0].lower() if froms else ""
    while base in bases and base not in below:
        below.append(base)
        base = bases[base]
    return below


def owned_base(image: Image) -> bool:
    """The image's FROM names an owner's image that no Dockerfile here builds and no variable
    completes (`ckan/ckan-base:2.11`, not `python:3.12` nor `$BASE`), and whose command the
    image does not make known (s6-overlay services it installs run under the base's `/init`)."""
    reference = image.base_reference
    return (
        bool(reference)
        and image.base is None
        and "$" not in reference
        and not library_image(reference)
        and not _installs_s6(image)
        and not _installs_runit(image)
    )


def unknown_base(image: Image) -> bool:
    """The image's FROM names an image no Dockerfile here builds and check does not know
    (an owner's image, or one a build argument names): its ENTRYPOINT is not known here."""
    reference = image.base_reference
    return bool(reference) and image.base is None and not library_image(reference)


#: A word that names a script to run: a path, or a file name with a script's suffix.
_SCRIPT_WORD = re.compile(r"\A(/|\./)\S+\Z|\A\S+\.(sh|bash)\Z")


#: Where a base image keeps its own programs, never the build context's scripts; and the
#: kernel's files (`tail -f /dev/null`), never a script at all.
_SYSTEM_PATHS = ("/bin/", "/sbin/", "/usr/", "/lib/", "/opt/venv/", "/venv/", "/dev/", "/proc/")


def _cut(text: str, most: int = 80) -> str:
    """`text`, or its first `most` characters and `...` when longer."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _not_followed(path: Path, image: Image, words: list[Word]) -> None:
    """NotFollowed when the command runs a script the image does not hold here (not in the
    build context, not written by a heredoc): what it starts is unknown, not nothing. The
    folder a supervisor of services is given (`runsvdir /opt/x/services`) is not a script:
    its services are read as the supervisor's (`_s6_services`)."""
    if words and program_name(words[0].text) in _SERVICE_SUPERVISORS:
        return
    for index, word in enumerate(words):
        before = index - 1
        while before > 0 and words[before].text.startswith("-"):
            before -= 1  # the interpreter's options (`python3 -u app.py`)
        interpreter = before >= 0 and program_name(words[before].text).startswith("python")
        if interpreter and word.text.endswith(".py") and image.find(word.text) is None:
            # `CMD ["python3", "app.py"]`: the image's process is a Python program not read
            # here (often `app.run(host=..., port=...)`): what it serves is not known. (Its
            # words may say more: `manage.py runserver 0.0.0.0:8000` is a server's launcher.)
            launcher = not_followed_launcher(words, image.find)
            if launcher is not None:
                raise launcher
            raise NotFollowed(
                f"{word.at}: not followed: the image runs {word.text}, a Python program not "
                "in the build context (its COPY sources) or the files given, so the server "
                "it starts is not known"
            )
        if word.text.startswith(_SYSTEM_PATHS) or program_name(word.text) in WRAPPERS:
            # the base image's programs (/bin/bash, /usr/local/bin/gunicorn), and a process
            # wrapper wherever the image puts it (`COPY --from=build /tini /tini`)
            continue
        if _SCRIPT_WORD.match(word.text) and image.find(word.text) is None:
            raise NotFollowed(
                f"{word.at}: not followed: the image runs {word.text}, which is not in the "
                "build context (its COPY sources) or written by the Dockerfile, so the server "
                "it starts is not known"
            )


#: How many files of one copied folder `Image.held_under` lists (a service folder holds a few).
_HELD_FILES = 500
#: Where s6-overlay's `/init` finds the services it starts: s6-rc's longruns and the legacy
#: services.d folders (s6-overlay's README, "Writing a service script").
_S6_SERVICES = ("/etc/s6-overlay/s6-rc.d", "/etc/services.d")


def _s6_services(
    path: Path,
    image: Image,
    words: list[Word],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
) -> AppServer | None:
    """`ENTRYPOINT ["/init"]` (s6-overlay): the server of the first service `run` script the
    image holds, read under the image's ENV, the ENTRYPOINT's line first in its chain. An
    image that sets no command and installs s6-overlay services (`_installs_s6`) runs its
    base image's `/init` the same way: its FROM line first, the graph saying so."""
    if words and words[0].text == "/init":
        first, base = words[0].at, None
    elif not words and not image.entrypoint and not image.cmd and _installs_s6(image):
        first, base = Location(image.path, image.base_line), S6_BASE_INIT
    elif (words and program_name(words[0].text) in _RUNIT_STARTERS) or (
        not words and not image.entrypoint and not image.cmd and _installs_runit(image)
    ):
        return _runit_services(path, image, words, env, env_at)
    else:
        return None
    started = _s6_started(image)
    for folder in _S6_SERVICES:
        for held, _ in image.held_under(folder):
            if PurePosixPath(held).name != "run":
                continue
            service = PurePosixPath(held).parent.name
            if folder == _S6_SERVICES[0] and started is not None and service not in started:
                continue  # a service of no bundle `/init` starts (s6-rc starts `user`)
            run = [Word(held, first)]
            app = run_words(path, run, env, env_at, find_config=image.find)
            if app is not None:
                return _down_signal(
                    replace(
                        app,
                        launched_by=(first, *app.launched_by),
                        started_by_base=base,
                        front_stops_with=_nginx_service_beside(image, folder, held),
                        # s6-overlay's /init is PID 1: the run script's shell is not.
                        init=app.init or Setting(S6_INIT, first),
                    ),
                    image,
                    held,
                )
    return None


def _down_signal(app: AppServer, image: Image, held: str) -> AppServer:
    """The app under its s6 service's `down-signal` file, when the image holds one beside the
    `run` script: s6-supervise stops the service with that signal instead of SIGTERM (s6's
    servicedir docs), whatever the container is stopped with."""
    wanted = str(PurePosixPath(held).parent / "down-signal")
    for other, local in image.held_under(str(PurePosixPath(held).parent)):
        if other != wanted:
            continue
        try:
            text = read_text(local).strip()
        except CheckInputError:
            return app
        if re.fullmatch(r"(?:SIG)?[A-Z0-9]+", text.upper()):
            return with_stop_signal(
                app, text, Location(local, 1), f"echo SIGTERM > {wanted}   (or remove it)"
            )
    return app


#: The programs given a folder whose services (`DIR/*/run`) they start: runit's runsvdir,
#: s6's s6-svscan (the same layout: s6-svscan(8), "the scan directory"); and runit's runsv,
#: given one service's folder, whose `DIR/run` it starts (runsv(8)).
_SERVICE_SUPERVISORS = SUPERVISORS
#: The programs that start runit's services: runsvdir (over the folder it is given), runsv
#: (the one service of its folder) and phusion/baseimage's my_init (runsvdir over
#: /etc/service, unless `--skip-runit`).
_RUNIT_STARTERS = frozenset({"runsvdir", "runsv", "my_init", "s6-svscan"})
#: Where runit's services are when no folder is given: /etc/service (runsvdir's usual
#: folder, my_init's), and /etc/sv (Debian's and Void's, linked into it).
_RUNIT_SERVICES = ("/etc/service", "/etc/sv")


def _runit_services(
    path: Path,
    image: Image,
    words: list[Word],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
) -> AppServer | None:
    """`CMD ["/sbin/my_init"]` or `runsvdir -P /etc/service`: runit runs each service
    folder's `run` script (`COPY docker/runit-web /etc/service/`); the server of the first one
    the image holds that starts one, read under the image's ENV, the command's line first in
    its chain; each other service that starts one runs beside it (`together.with_others`).
    None with `my_init --skip-runit` (only the command after `--` runs). With no `words`, an
    image that sets no command and installs runit services (`_installs_runit`) runs them
    under its base image's runsvdir: its FROM line first, the graph saying so."""
    texts = [w.text for w in words]
    # `runsv DIR` runs DIR/run; the others each DIR/NAME/run.
    depth = 1 if texts and program_name(texts[0]) == "runsv" else 2
    own = texts[1 : texts.index("--")] if "--" in texts else texts[1:]
    folders: tuple[str, ...] = _RUNIT_SERVICES
    if texts and program_name(texts[0]) == "my_init" and "--skip-runit" in own:
        return None
    if texts and program_name(texts[0]) != "my_init":
        folders = tuple(t.rstrip("/") for t in own if not t.startswith("-"))[:1] or folders
    first = words[0].at if words else Location(image.path, image.base_line)
    base = None if words else RUNIT_BASE
    unknown: NotFollowed | None = None  # a service whose server is not known here
    apps: list[AppServer] = []
    if texts and program_name(texts[0]) == "my_init" and "--skip-startup-files" not in own:
        # my_init runs each /etc/my_init.d/* script to its end before runit: one that runs
        # the server in the foreground is the launch (pypicloud-docker's baseimage).
        apps += _startup_files(path, image, first, base, env, env_at)
    for folder in folders:
        for held, _ in image.held_under(folder):
            run = PurePosixPath(held)
            if run.name != "run" or run.parents[depth - 1] != PurePosixPath(folder):
                continue  # runit runs DIR/NAME/run (runsv DIR/run), never a deeper file
            try:
                app = run_words(path, [Word(held, first)], env, env_at, find_config=image.find)
            except NotFollowed as why:
                unknown = unknown or why
                continue
            except NothingToCheck:
                continue  # another service (nginx, cron): the image's other processes
            if app is not None:
                apps.append(
                    replace(
                        app,
                        launched_by=(first, *app.launched_by),
                        started_by_base=base,
                        front_stops_with=_nginx_service_beside(image, folder, held),
                    )
                )
    if apps:
        return with_others(apps)
    if unknown is not None:
        raise unknown
    return None


#: Where phusion's my_init finds the startup scripts it runs, in name order, before runit.
_MY_INIT_STARTUP = "/etc/my_init.d"


def _startup_files(
    path: Path,
    image: Image,
    first: Location,
    base: str | None,
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
) -> list[AppServer]:
    """The servers the image's `/etc/my_init.d/*` scripts start (a script whose server is not
    known here, or that starts none, is the image's other work)."""
    apps: list[AppServer] = []
    for held, _ in image.held_under(_MY_INIT_STARTUP):
        if PurePosixPath(held).parent != PurePosixPath(_MY_INIT_STARTUP):
            continue  # my_init runs the folder's own files, never a deeper one
        try:
            app = run_words(path, [Word(held, first)], env, env_at, find_config=image.find)
        except (NotFollowed, NothingToCheck):
            continue
        if app is not None:
            # At stop my_init sends SIGTERM to every process (its kill_all_processes), so the
            # server gets it though the script's shell does not `exec` it.
            signalled = Setting("my_init", first)
            launched = (first, *app.launched_by)
            apps.append(
                replace(app, launched_by=launched, started_by_base=base, group_signalled=signalled)
            )
    return apps


def _installs_runit(image: Image) -> bool:
    """The image's files put a `run` script in a runit service folder (`COPY web.service
    /etc/service/web/run`, whatever the file's name here): its base image's runsvdir runs it,
    as phusion/baseimage's and other runit base images' commands do."""
    return any(
        PurePosixPath(held).name == "run" and PurePosixPath(held).parent.parent == PurePosixPath(f)
        for f in _RUNIT_SERVICES
        for held, _ in image.held_under(f)
    )


#: A `run` script's line that starts nginx in the foreground of the service: `exec nginx`,
#: `/usr/sbin/nginx -g 'daemon off;'` (a comment, or `nginx -t`, `-s reload`, starts none).
_RUNS_NGINX = re.compile(r"^\s*(?:exec\s+)?(?:\S+/)?nginx(?![\w.-])(?!.*\s-(?:t|T|s)\b)", re.M)


def _nginx_service_beside(image: Image, folder: str, held: str) -> tuple[Location, str] | None:
    """The line of another service's `run` script, beside the server's `held` one under
    `folder`, that starts nginx: runit (runsvdir and my_init forward the container's SIGTERM
    to every service at once) and s6-overlay bring the two down together; None otherwise."""
    service = PurePosixPath(held).parent
    for other, local in image.held_under(folder):
        run = PurePosixPath(other)
        if run.name != "run" or run.parent == service or run.parent.parent != service.parent:
            continue
        try:
            text = read_text(local)
        except CheckInputError:
            continue  # said where the file is read, if it is
        found = _RUNS_NGINX.search(text)
        if found is not None:
            line = text.count("\n", 0, found.start()) + 1
            return Location(local, line), found[0].strip()
    return None


#: What runs an image's s6-overlay services when the image sets no command: its base image's
#: ENTRYPOINT, s6-overlay's `/init` (services exist for nothing else to run: s6-overlay's
#: README, "Writing a service script"), as the launch graph names it.
S6_BASE_INIT = "its base image's s6-overlay /init runs the services"
#: What runs an image's runit services when the image sets no command: its base image's
#: runsvdir (or my_init), over /etc/service.
RUNIT_BASE = "its base image's runit runs the services"
#: The bundle s6-overlay's `/init` starts (s6-overlay's README: "add it to the user bundle").
_S6_USER_BUNDLE = "/etc/s6-overlay/s6-rc.d/user/contents.d"


def _s6_started(image: Image) -> set[str] | None:
    """The s6-rc services the image puts in the `user` bundle, which `/init` starts; None
    when the files here hold no bundle entries (the empty marker files are often not
    gathered): every service with a `run` script is taken as started, as for `/init`."""
    names = {PurePosixPath(held).name for held, _ in image.held_under(_S6_USER_BUNDLE)}
    return names or None


def _installs_s6(image: Image) -> bool:
    """The image's files install s6-overlay services that `/init` starts: an s6-rc service
    with a `run` script in the `user` bundle (a service folder alone may be another image's,
    or one nothing starts: without the bundle's entry it is not taken as run)."""
    started = _s6_started(image) or set()
    return any(
        PurePosixPath(held).name == "run" and PurePosixPath(held).parent.name in started
        for held, _ in image.held_under(_S6_SERVICES[0])
    )


#: Signals that stop uWSGI 2.0 (SIGINT, SIGQUIT: "immediately kill the entire uWSGI stack"),
#: as a Dockerfile's STOPSIGNAL may name them: `docker stop` sends this, not SIGTERM.
_UWSGI_STOPS = frozenset({"SIGINT", "INT", "2", "SIGQUIT", "QUIT", "3"})
_STOPSIGNAL = re.compile(r"^[ \t]*STOPSIGNAL[ \t]+(\S+)", re.I | re.M)


def _stop_signal(app: AppServer, path: Path, text: str) -> AppServer:
    """The app under its image's last STOPSIGNAL (what `docker stop` sends)."""
    found = list(_STOPSIGNAL.finditer(text))
    if not found:
        return app
    signal = found[-1]
    line = text.count("\n", 0, signal.start()) + 1
    return with_stop_signal(app, signal[1], Location(path, line), "STOPSIGNAL SIGTERM")


def with_stop_signal(app: AppServer, signal: str, at: Location, fix: str) -> AppServer:
    """The app stopped with `signal` (a Dockerfile's STOPSIGNAL, a compose `stop_signal`),
    `fix` the line that makes it SIGTERM; uWSGI stopped with SIGINT or SIGQUIT stops at once
    whatever its SIGTERM handling (`die_on_term` set from that line)."""
    from servertune.check.model import Setting

    # (a signal already read from a file that is not a Dockerfile is a manager's inside the
    # container; an image's STOPSIGNAL is the container's, which compose or a platform
    # overrides)
    inner = app.stop_signal is not None and not dockerfile_name(app.stop_signal.at.file)
    if (app.stop_wait is not None or inner) and signal.upper().removeprefix("SIG") not in (
        "KILL",
        "9",
    ):
        # A process manager in between (supervisord, honcho, a Procfile runner, s6 with a
        # service's down-signal) takes the container's signal and stops the server with its
        # own (supervisord's `stopsignal`, TERM by default); only SIGKILL, which nothing
        # catches, reaches the server as sent.
        return app
    # What `docker stop` sends, for every server (gunicorn quits at once on INT and QUIT).
    app = replace(
        app,
        stop_signal=Setting(signal.upper().removeprefix("SIG"), at),
        stop_signal_fix=fix,
    )
    if app.kind != "uwsgi" or app.die_on_term is not None:
        return app
    if signal.upper() not in _UWSGI_STOPS:
        return app
    return replace(app, die_on_term=Setting(True, at))


def root_base(image: Image | None) -> str:
    """The image, built by no Dockerfile of the run, that `image`'s line of bases starts FROM
    (`python:3.12-slim` under an `app` image FROM a `base` image built here); "" when none is
    known."""
    while image is not None and image.base is not None:
        image = image.base
    return image.base_reference if image is not None else ""


def sh_of(image: Image | None) -> str:
    """What runs a shell-form command of `image`, for a message: its SHELL when it sets one,
    else /bin/sh of its base (`base_shells.sh_words`)."""
    if image is not None and image.shell[0] != "/bin/sh":
        return f"{image.shell[0]}, the image's SHELL"
    return sh_words(root_base(image))


def shell_form(
    image: Image | None,
    entrypoint: tuple[Word, ...] | None,
    entrypoint_shell: bool,
    cmd: tuple[Word, ...] | None,
    cmd_shell: bool,
) -> Setting[str] | None:
    """The shell-form instruction that starts a server as the child of `SHELL` (`/bin/sh -c`,
    which stays PID 1), as `CMD <text>` at its line; None when the server gets the signals:
    exec form, `exec` first, or bash or BusyBox ash running one simple command (they exec it,
    as the SHELL or as the /bin/sh of a base such as Fedora's or Alpine's, `base_shells`;
    dash, the /bin/sh of Debian-based images, does not). The image's own exec form
    that runs a shell's `-c` string (`CMD ["sh", "-c", "gunicorn ..."]`) is that string's
    shell form, under that shell (carbonplan/offsets-db-api); a compose service's own
    command is judged by the compose reader."""
    shell = image.shell if image is not None else ("/bin/sh", "-c")
    if entrypoint and entrypoint_shell:
        instruction, words = "ENTRYPOINT", entrypoint
    elif not entrypoint and cmd and cmd_shell:
        instruction, words = "CMD", cmd
    elif _image_own(image, entrypoint, cmd) and (found := _exec_form_string(entrypoint, cmd)):
        instruction, words, shell = found
    else:
        return None
    text = " ".join(w.text for w in words)
    if execs_lone_command(shell[0], root_base(image)) and not re.search(r"[;&|]", text):
        return None
    if execs_last_command(shell[0], root_base(image), text) and _server_last(text, words[0].at):
        return None  # BusyBox ash execs a list's last command: the server is PID 1
    try:
        # Docker's parser removes each escaped newline before the shell sees the text.
        split = shlex.split(text.replace("\\\n", ""), comments=True)
    except ValueError:
        return None
    # `CMD $CMD_PREFIX gunicorn ...` with `ENV CMD_PREFIX=""`: field splitting drops it.
    env = image.env if image is not None else {}
    while split and _LONE_EXPANSION.match(split[0]) and expand_shell(split[0], env) == "":
        split = split[1:]
    if not split or split[0] == "exec":
        return None
    # The server, or a script of the launch that starts it (`ENTRYPOINT
    # /docker-entrypoint.sh $0 $@`, its `exec gunicorn` a child of the shell all the same).
    if not _starts_server(split, words[0].at) and not _dash_list_server(
        shell[0], image, text, words[0].at
    ):
        return None
    return Setting(f"{instruction} {text}", words[0].at)


def _starts_server(split: list[str], at: Location) -> bool:
    """The words start the server, or a script of the launch that starts it."""
    return server_command([Word(w, at) for w in split]) is not None or bool(
        _SCRIPT_WORD.match(split[0])
    )


def _dash_list_server(shell: str, image: Image | None, text: str, at: Location) -> bool:
    """The last command of a list (`flask upgrade && gunicorn ...`, `a; b`) starts the server
    with no `exec`, under dash: dash forks every command of a `-c` list, the last too, and
    stays PID 1 (seen with dash 0.5.12, Debian bookworm's /bin/sh: the server's pid is not the
    shell's). Not for bash, whose forks of a `-c` string's last command depend on its version
    (5.2 execs it), nor for an image whose /bin/sh is not known to be dash."""
    name = shell.rpartition("/")[2]
    if name == "sh":
        name = image_sh(root_base(image)) or ""
    parts = re.split(r"&&|\|\||;", text.replace("\\\n", ""))
    if name != "dash" or len(parts) < 2:
        return False
    try:
        last = shlex.split(parts[-1], comments=True)
    except ValueError:
        return False
    return bool(last) and last[0] != "exec" and _starts_server(last, at)


def _server_last(text: str, at: Location) -> bool:
    """The last command of the list `text` (past its last `&&`, `||` or `;`) starts a
    server."""
    last = re.split(r"&&|\|\||;", text.replace("\\\n", ""))[-1]
    try:
        split = shlex.split(last, comments=True)
    except ValueError:
        return False
    return bool(split) and server_command([Word(w, at) for w in split]) is not None


#: The shells whose `-c` string check judges as a shell form's (zsh's own rules are not read).
_C_SHELLS = frozenset({"sh", "bash", "dash", "ash"})


def _image_own(
    image: Image | None, entrypoint: tuple[Word, ...] | None, cmd: tuple[Word, ...] | None
) -> bool:
    """Whether `entrypoint` and `cmd` are the image's own (no compose command or pod args
    in their place)."""
    return image is not None and (entrypoint, cmd) == (image.entrypoint, image.cmd)


def _exec_form_string(
    entrypoint: tuple[Word, ...] | None, cmd: tuple[Word, ...] | None
) -> tuple[str, tuple[Word, ...], tuple[str, str]] | None:
    """The instruction, the `-c` string (one word) and the shell of an exec form whose
    command is `sh -c STRING` with no arguments after it (`ENTRYPOINT ["/bin/sh", "-c",
    "..."]`, or a CMD with no ENTRYPOINT); None otherwise."""
    instruction, words = ("ENTRYPOINT", entrypoint) if entrypoint else ("CMD", cmd)
    if not words or len(words) != 3 or (entrypoint and cmd):
        return None
    program, flag, string = words
    if PurePosixPath(program.text).name not in _C_SHELLS or not re.fullmatch(r"-\w*c", flag.text):
        return None
    return instruction, (string,), (program.text, "-c")


# Re-exported for the compose reader: the shell's commands of a `sh -c` script.
__all__ += [
    "container_words",
    "find_server",
    "image_run_server",
    "sh_of",
    "shell_commands",
    "shell_form",
    "with_stop_signal",
]


def image_server(
    path: Path,
    entrypoint: list[Word],
    cmd: list[Word],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    image: Image | None,
    *,
    find: FindConfig | None = None,
) -> AppServer | None:
    """The server a container running `image` starts (`find_server`, then s6-overlay's
    `/init` services, as the image's own reading finds them): for a compose service or a
    Kubernetes container that runs an image a Dockerfile here builds (or none known)."""
    app = find_server(path, entrypoint, cmd, env, env_at, image, find=find)
    if app is None and image is not None:
        app = _s6_services(path, image, entrypoint + cmd, env, env_at)
    return _through_base(app, image) if image is not None else app


def _base_script_run(app: AppServer, base: Location) -> bool:
    """Whether the server line is a well-known base's declared start script (its lines are at
    the FROM line `base`) that a script of the image runs (COPYed, or written by a RUN line):
    the app is read in the Dockerfile, and a setting it read there (not a default) is at the
    FROM line, where nothing but the base's declared files is read (its ENV lines give others:
    `ENV PORT=8808`)."""
    if app.file != base.file or app.launched_by[-1] == base:
        return False
    read = {
        one.at
        for field in dataclasses.fields(app)
        for value in (getattr(app, field.name),)
        for one in (value if isinstance(value, tuple) else (value,))
        if isinstance(one, Setting) and not one.default and one.at.file == base.file
    }
    return base in read


def _through_base(app: AppServer | None, image: Image) -> AppServer | None:
    """The app with the image's FROM line first in its launch chain when what it runs is
    its base's (a CMD of the base's Dockerfile): the image built here is what starts it."""
    if app is None or image.base is None or not app.launched_by:
        return app
    if image.inherited:
        # A well-known base's command and files are declared at the FROM line, already in
        # the chain when they run (a compose command of its own starts at the compose file).
        base = Location(image.path, image.base_line)
        if app.launched_by[0] == base:
            return replace(app, started_by_base=app.started_by_base or image.inherited)
        own = {word.at for word in (*image.entrypoint, *image.cmd)}
        if app.launched_by[-1] not in own and _base_script_run(app, base):
            # A script of the image runs the base's start script (`exec /start.sh`; not its
            # own `CMD ["/start.sh"]`): the FROM line that brings that script is the chain's
            # last step, after the script's line.
            return replace(
                app,
                launched_by=(*app.launched_by, base),
                started_by_base=app.started_by_base or image.inherited,
            )
        return app
    if app.launched_by[0].file == image.path:
        return app
    return replace(app, launched_by=(Location(image.path, image.base_line), *app.launched_by))


__all__ += ["image_server"]
