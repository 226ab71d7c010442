"""uwsgi.ini, read the way uWSGI's own ini loader reads it.

uWSGI keeps every `key = value` line of the `[uwsgi]` section in order: options such as
`socket` and `map-socket` repeat, and a later scalar wins. Supported, as uWSGI documents them
(uwsgi-docs.readthedocs.io, "Configuration" and "Magic variables"):

* comments: lines starting with `;` or `#`; lines before the first section are ignored;
* a key without `=` is a boolean flag set to true;
* `%(option)`: the value of an option (or `set-placeholder` / `set-ph`) set earlier (in this
  file or one it chained);
* `$(VAR)`: an environment variable (empty when unset, as uWSGI does);
* `@(file)`: the file's content without its final newline;
* magic variables: `%d` (directory of the file, with a trailing slash), `%p` (absolute path),
  `%s` (file name), `%n` (name without extension), `%e` (extension), `%c` (name of the directory),
  `%k` (CPU cores: `check` records that the count follows the host), `%h` (host name), `%%`;
  in a chained file they describe that file;
* `ini = file`, `ini = file:section`, `ini = :section` (the file read last): that section's
  options read in place ("How uWSGI parses config files": top-bottom, expand asap);
* options uWSGI applies as it reads them (`listen`, `ini`) see the magic variables only.

A chained or `@()` file is read like the main one (size, NUL bytes, UTF-8), relative to the
ini's directory (uWSGI opens it from its working directory: the ini's, when started there),
and refused when it is missing (uWSGI stops too) or when chaining loops. One outside the tree
check reads (a symlink, `..`, an absolute path: `servertune.check.resolve`) is never read: a
coverage note names it and the option it would set is left out; so is the body of a
`for-glob` over one or of an `if-exists` / `if-file` / `if-dir` about one (check does not look
at the machine it runs on). `include` and `inherit` read an ini file in place, as `ini =`
does. An absolute path of the image a Dockerfile of the run copies the ini into (`COPY
docker/uwsgi /etc/` with `for-glob = /etc/uwsgi.d/*` and `include = %(_)`) is the repository
file that image holds there: the loop's files are parts of this one instance.
Not supported: `@(exec://...)` and other schemes (uWSGI would run or fetch them; check never
does).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import posixpath
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from servertune.check import resolve
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Location,
    Setting,
    evaluation_cores,
    note,
)
from servertune.check.working_dirs import started_in

__all__ = [
    "IMAGE_FILES",
    "UWSGI_DEFAULTS",
    "read_uwsgi",
    "read_uwsgi_files",
    "uwsgi_app",
    "uwsgi_options",
    "uwsgi_settings",
]

#: uWSGI's defaults for the options the rules read (uwsgi-docs "Options"): listen queue 100,
#: no harakiri, no recycling, one process, one thread.
UWSGI_DEFAULTS = {"listen": 100, "harakiri": 0, "max-requests": 0, "processes": 1, "threads": 1}
#: Option aliases as uWSGI declares them: the rules read the canonical name.
_ALIASES = {
    "workers": "processes",
    "p": "processes",
    "s": "socket",
    "uwsgi-socket": "socket",
    "l": "listen",
    "set-ph": "set-placeholder",
}
#: The addresses uWSGI listens on: its workers' `socket` (uwsgi protocol) and `http-socket`, and
#: its HTTP router's `http` (a process of its own that passes each request to the workers),
#: which is what a front reaches (`proxy_pass http://app:5000` to `--http 0.0.0.0:5000`).
_SOCKET_OPTIONS = ("socket", "http-socket", "http")
#: uWSGI's magic variables of where the file is: its folder and its path.
_PLACED_MAGIC = re.compile(r"(?<!%)%[dp]")
_PLACEHOLDER = re.compile(r"%\(([^)]*)\)|\$\(([^)]*)\)|@\(([^)]*)\)|%(.)")
#: The values that turn a uWSGI flag off (`uwsgi_opt_true`, compared without case, "0" as
#: written); any other value turns it on: `master = true ; comment`, `master = false ; no`
#: and `master = 2` alike, since uWSGI has no comment after a value (uWSGI 2.0.30, run).
_FALSE = frozenset({"false", "off", "no", "0"})
#: A number as uWSGI reads it (C's `atoi`): its leading digits; what follows, an inline
#: `; comment` included, is ignored (`harakiri = 600 ; kill after 10 minutes` is 600).
_LEADING_NUMBER = re.compile(r"\s*([+-]?\d+)")
#: A number written in a form atoi stops inside: an exponent, a fraction, digit groups
#: (`1e3`, `2.5`, `1_000`). uWSGI takes the leading digits alone (2.0.30 runs one worker for
#: `processes = 1e3`), while the line reads as a thousand.
_CUT_NUMBER = re.compile(r"\s*[+-]?\d+(?:[eE][+-]?\d+|\.\d*(?:[eE][+-]?\d+)?|(?:_\d+)+)\s*\Z")
#: uWSGI options that make a process serve many requests at once on its own loop.
_ASYNC_ENGINES = frozenset({"gevent", "async", "ugreen", "greenlet", "asyncio", "tornado"})
#: uWSGI's configuration logic ("Configuration logic" in its docs): a block up to `endif` is
#: read only when its condition holds, with `%(_)` the tested value. Paths are tested on the
#: machine running check (uWSGI tests them where it starts).
_CONDITIONS: dict[str, Callable[[str, Mapping[str, str], Mapping[str, str]], bool]] = {
    "if-env": lambda v, env, opts: v in env,
    "if-not-env": lambda v, env, opts: v not in env,
    "if-exists": lambda v, env, opts: os.path.exists(v),
    "if-not-exists": lambda v, env, opts: not os.path.exists(v),
    "if-file": lambda v, env, opts: os.path.isfile(v),
    "if-not-file": lambda v, env, opts: not os.path.isfile(v),
    "if-dir": lambda v, env, opts: os.path.isdir(v),
    "if-not-dir": lambda v, env, opts: not os.path.isdir(v),
    "if-opt": lambda v, env, opts: v.partition("=")[0] in opts,
    "if-not-opt": lambda v, env, opts: v.partition("=")[0] not in opts,
}


#: uWSGI's include depth is unbounded; real configs chain a base file or two.
MAX_INCLUDE_DEPTH = 16
#: uWSGI's configuration loops (`for`, `for-times`, `for-readline`, `for-glob`: each line up
#: to the loop's end is added once per item, `%(_)` the item) and the keys that end a loop or
#: an `if-*` block (core/config.c compares these exact names).
_LOOPS = frozenset({"for", "for-times", "for-readline", "for-glob"})
_ENDS = frozenset({"end", "endif", "endfor", "end-if", "end-for"})
#: Loop rounds read at most: real configs loop over a few sockets or env lines; a hostile
#: `for-times = 1000000000` must not hold check.
MAX_LOOP_ITEMS = 1000
#: Options uWSGI applies the moment it reads them (UWSGI_OPT_IMMEDIATE in core/uwsgi.c), before
#: `$(VAR)`, `%(option)` and `@(file)` are expanded: only the magic variables (expanded as the
#: file is read) reach them. uWSGI 2.0 reads `listen = %(x)` as 0 (C's atoi of the text).
_IMMEDIATE = frozenset({"ini", "listen"})
#: Conditions that look at a path on the machine check runs on: only inside the tree.
_PATH_CONDITIONS = frozenset(k for k in _CONDITIONS if k.endswith(("exists", "file", "dir")))
#: Options that load another config file in place (uWSGI's uwsgi_opt_load, by extension): an
#: ini one is read as `ini =` is; one outside the tree or not here is left out, with a note.
_NAMES_FILES = frozenset({"include", "inherit"})
#: A value naming a source by scheme (`exec://`, `http://`, `sym://`, `fd://`, ...): uWSGI runs
#: or fetches it; check never does.
_SCHEME = re.compile(r"\A[a-z]+://")
#: Config formats uWSGI's `include` loads by extension (uwsgi_opt_load) that check does not read
#: as uWSGI config: an include of one is noted, not followed.
_OTHER_FORMATS = (".xml", ".yml", ".yaml", ".json", ".js")

#: The files an image of the run keeps at a container path or glob, asked for the ini that
#: names it (an ini the image copies: `COPY docker/uwsgi /etc/` then `for-glob =
#: /etc/uwsgi.d/*`): (the ini, the path or glob) -> (container path, repository file) pairs,
#: sorted by container path; set by `images.images_of_run`.
IMAGE_FILES: contextvars.ContextVar[Callable[[Path, str], list[tuple[str, Path]]] | None] = (
    contextvars.ContextVar("servertune_check_uwsgi_image_files", default=None)
)


def _in_image(name: str, at: Location) -> list[tuple[str, Path]]:
    """What an absolute `name` (a path or glob) is in the image of the run that copies the
    ini at `at`: uWSGI opens it there, not on the machine running check."""
    listed = IMAGE_FILES.get()
    if listed is None or not name.startswith("/"):
        return []
    return listed(at.file, name)


@dataclass
class _State:
    """What uWSGI keeps across every file of one instance: the placeholders set so far, the
    options in the order read, the file `ini = :section` means, and the chain of includes."""

    environ: Mapping[str, str]
    placeholders: dict[str, str] = field(default_factory=dict)
    options: list[tuple[str, str, Location]] = field(default_factory=list)
    last_file: Path | None = None
    stack: tuple[tuple[Path, str], ...] = ()
    #: Every other file read (chained, or read by `@()`), in the order read.
    files: list[Path] = field(default_factory=list)
    #: The path uWSGI opens a file read here at, where the launch says (`--ini
    #: /etc/app/uwsgi.ini`, the image's copy): its magic `%d`, `%p`, ... are that path's.
    installed: dict[Path, str] = field(default_factory=dict)


#: uWSGI's placeholder math (1.9.20+, "Placeholders math" in its docs): `%(foo + 1)`,
#: `%(%k * 2)`: operands and operators separated by spaces, applied left to right.
_MATH = re.compile(r"\s[-+*/]\s")
_OPERATORS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b if b else 0,
}


def _placeholder_math(
    expression: str, placeholders: Mapping[str, str], magic: Mapping[str, str], at: Location
) -> str:
    """The value of `%(a op b op c)`, as uWSGI computes it (whole numbers, left to right)."""

    def operand(word: str) -> int:
        value = magic.get(word[1:], word) if word.startswith("%") and len(word) == 2 else word
        value = placeholders.get(value, value)
        try:
            return int(value)
        except ValueError:
            raise CheckInputError(
                f"{at}: %({expression}): {word!r} is not a number or an option set before"
            ) from None

    words = expression.split()
    if len(words) % 2 == 0 or any(w not in _OPERATORS for w in words[1::2]):
        raise CheckInputError(f"{at}: %({expression}): not uWSGI placeholder math (a op b ...)")
    result = operand(words[0])
    for op, word in zip(words[1::2], words[2::2], strict=True):
        result = _OPERATORS[op](result, operand(word))
    return str(result)


def _magic(path: Path, installed: str | None = None) -> dict[str, str]:
    """uWSGI's magic variables of the ini at `path` (core/uwsgi.c's magic table): of the path
    the launch opens it at when known (`installed`; relative to where the server runs when
    the launch names it so), else of the file here."""
    absolute = path.absolute()
    where = PurePosixPath(installed) if installed else PurePosixPath(absolute)
    folder = "" if str(where.parent) == "." else f"{where.parent}/"
    return {
        "d": folder,
        "p": str(where),
        "s": where.name,
        "n": where.stem,
        "e": where.suffix,
        "c": where.parent.name or absolute.parent.name,
        # The cores being judged (--cores, the deployment's CPU limit, else this host's), not
        # always the machine running check (a finding must not flip with it).
        "k": str(evaluation_cores()),
        "h": socket.gethostname(),
        "%": "%",
    }


class _Unread(Exception):
    """A file a line names lies outside the tree (a coverage note says so): the line's option
    is left out rather than read with a value check could not see."""


def _included(name: str, at: Location, what: str) -> Path:
    """The file an `ini =` or `@(...)` names, read as uWSGI opens it from the ini's directory
    (uWSGI opens a relative name from its working directory: the ini's, in the usual `cd app
    && uwsgi --ini app.ini`); _Unread when it lies outside the tree check reads (a note says
    so), CheckInputError when it is not a local file."""
    if _SCHEME.match(name):
        raise CheckInputError(
            f"{at}: {what} {name!r} reads from a scheme uWSGI fetches or runs; check reads files only"
        )
    in_image = _in_image(name, at)
    if in_image:
        return in_image[0][1]
    target = Path(name) if name.startswith("/") else at.file.parent / name
    if resolve.admit(target, name, at, what) is None:
        raise _Unread(name)
    if not target.exists() and what in _NAMES_FILES:
        # Made where uWSGI starts (a file an entrypoint writes), or not among the files here.
        note("include-not-found", at, f"{what} {name!r}: not in this config tree here; "
             "settings in it were not checked")  # fmt: skip
        raise _Unread(name)
    if not target.exists():
        raise CheckInputError(f"{at}: {what} {name!r}: no such file (uWSGI stops here too)")
    return target


def _outside(value: str, at: Location, what: str) -> bool:
    """Whether the path or glob `value` (relative to the ini's directory) leaves the tree;
    a note then says so. uWSGI would look there on its own machine; check never does."""
    fixed = resolve.glob_prefix(value)
    target = Path(fixed) if fixed.startswith("/") else at.file.parent / fixed
    return resolve.admit(target, value, at, what) is None


def _read_included(target: Path, at: Location) -> str:
    """The text of a chained or `@()` file, refused as any config file is (too big, binary,
    not UTF-8), the error naming the line that reads it."""
    from servertune.check.source import read_text

    try:
        return read_text(target)
    except CheckInputError as error:
        raise CheckInputError(f"{at}: {error}") from None


#: `listen` written with a placeholder: uWSGI reads it before expanding it, as the number 0.
_LISTEN_AS_WRITTEN = "listen (as written)"

#: Options whose value is a log format: there `%(status)`, `%(uri)`, ... are the request's log
#: variables, filled in per request, not references to options.
_LOG_FORMATS = frozenset({"log-format", "logformat", "log-format-strftime", "log-req-format"})


def _expand(
    value: str,
    at: Location,
    state: _State,
    magic: dict[str, str],
    immediate: bool = False,
    log_format: bool = False,
    files: dict[str, str] | None = None,
) -> str:
    """`value` with uWSGI's `%(option)`, `$(VAR)`, `@(file)` and magic `%x` expanded as at
    `at`; `immediate` (an option uWSGI applies as soon as it reads it): the magic ones only;
    `log_format`: a `%(name)` no option sets is a log variable, kept as written."""
    placeholders, environ = state.placeholders, state.environ

    def one(match: re.Match[str]) -> str:
        option, variable, include, letter = match.groups()
        if letter is not None:
            return magic.get(letter, match.group(0))
        if immediate:
            return match.group(0)
        if option is not None:
            if option in placeholders:
                return placeholders[option]
            if log_format:
                return str(match.group(0))
            if _MATH.search(option):
                return _placeholder_math(option, placeholders, magic, at)
            # Set where it starts (a `--set-ph` of a launch not read here, a vassal's
            # emperor): a value not known here, not a broken file.
            note("unresolved-variable", at, f"%({option[:40]}) is set by no option before "
                 "this line nor by the command line read here: this line was not checked")  # fmt: skip
            raise _Unread(option)
        if variable is not None:
            return environ.get(variable, "")
        here = magic if files is None else files  # `@(%dx)` opens the file here
        name = _PLACEHOLDER.sub(lambda m: here.get(m[4], m[0]) if m[4] else m[0], include)
        target = _included(name, at, "@()")
        content = _read_included(target, at)
        state.files.append(target)
        # uWSGI's @(file): the file's content without its one final newline.
        return content[:-1] if content.endswith("\n") else content

    return _PLACEHOLDER.sub(one, value)


def _read_ini(path: Path, text: str, section: str, state: _State) -> bool:
    """Append the options of `[section]` of `path` to state.options, following `ini =` where
    it appears, as uWSGI does ("expand asap"); True when the section was there."""

    # Paths check opens are the files here (`%d` of the checkout); values uWSGI keeps (a
    # socket, a chdir) are of the path the launch opens the ini at, when it says.
    here = _magic(path)
    installed = state.installed.get(path.resolve())
    magic = _magic(path, installed) if installed else here
    state.last_file = path
    found = False
    current: str | None = None
    #: The `if-*` blocks around this line, each True when its condition holds.
    blocks: list[bool] = []
    #: The items of the `for*` loop open at this line (None: no loop is open).
    items: list[str] | None = None

    def one_line(number: int, line: str) -> None:
        nonlocal items
        key, sep, value = line.partition("=")
        key = key.strip()
        key = _ALIASES.get(key, key)
        at = Location(path, number)
        if items is not None:
            if key in _ENDS:
                items = None
            elif key not in _LOOPS and key not in _CONDITIONS:  # uWSGI nests no logic
                for item in items:
                    # uWSGI adds a loop's line once per item, the item in place of `%(_)`.
                    _option(key, sep, value.replace("%(_)", item), at, state, (magic, here))
            return
        if key in _LOOPS:
            items = _loop_items(key, value.strip(), at, state, here) if all(blocks) else []
            return
        if key in _ENDS:
            if blocks:
                blocks.pop()
            return
        if key in _CONDITIONS:
            blocks.append(_block(key, value.strip(), at, state, here, blocks))
            return
        if all(blocks):
            _option(key, sep, value, at, state, (magic, here))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise CheckInputError(f"{path}:{number}: unterminated section header {line[:40]!r}")
            current = line[1:-1].strip()
            found = found or current == section
            continue
        if current == section:
            one_line(number, line)
    return found


def _option(
    key: str,
    sep: str,
    value: str,
    at: Location,
    state: _State,
    tables: tuple[dict[str, str], dict[str, str]],
) -> None:
    """Add the option `key = value` written at `at` as uWSGI does: expanded as it is read, an
    `ini =` followed in place, a placeholder kept for the lines after it. `tables`: the magic
    variables of the ini where uWSGI opens it, and of the file here (for the files it names)."""
    placeholders = state.placeholders
    magic = tables[1] if key in _NAMES_FILES or key == "ini" else tables[0]
    if key in _SOCKET_OPTIONS and tables[0] is tables[1] and _PLACED_MAGIC.search(value):
        # No launch read here says where the file is deployed: its `%d` is that folder, never
        # this checkout's, so the address is not known (and never shown as a local path).
        note("unresolved-variable", at, f"{key} = {value.strip()[:60]}: %d / %p are the folder "
             "the file is deployed in, which no launch read here says (a COPY, a unit): this "
             "address is not known, so what reaches it was not checked")  # fmt: skip
        return
    try:
        value = (
            _expand(
                value.strip(), at, state, magic, key in _IMMEDIATE, key in _LOG_FORMATS, tables[1]
            )
            if sep
            else "true"
        )
    except _Unread:
        return
    if key == "listen" and re.search(r"[%$@]\(", value):
        # What uWSGI does with it is a fault of the file (the rules judge the queue it
        # gets), not a reason to refuse the rest of the file.
        state.options.append((_LISTEN_AS_WRITTEN, value, at))
        return
    if key in _NAMES_FILES:
        state.options.append((key, value, at))
        if value.endswith(_OTHER_FORMATS):
            note("not-supported", at, f"{key} = {value[:60]}: a config in a format other "
                 "than ini is not read; settings in it were not checked")  # fmt: skip
            return
        with contextlib.suppress(_Unread):  # outside the tree or not here: a note says so
            _chain(value, at, state, key)
        return
    if key in _IMMEDIATE and re.search(r"[%$@]\(", value):
        raise CheckInputError(
            f"{at}: uWSGI applies `{key}` as soon as it reads it, before $(VAR), %(option) "
            f"and @(file) are expanded, so it would use {value!r} as written"
            + (" (a listen queue of 0)" if key == "listen" else " (no such file)")
        )
    if key == "ini":
        state.options.append((key, value, at))
        with contextlib.suppress(_Unread):  # outside the tree: its note says so
            _chain(value, at, state)
        return
    if key == "set-placeholder":
        name, _, ph_value = value.partition("=")
        placeholders[name.strip()] = ph_value.strip()
        return
    placeholders[key] = value
    state.options.append((key, value, at))


def _block(
    key: str, value: str, at: Location, state: _State, magic: dict[str, str], blocks: list[bool]
) -> bool:
    """Whether the lines of an `if-*` block starting at `at` are read. One about
    a path outside the tree check reads is not (a note says so): what is there is the
    machine's, not this tree's, to say."""
    try:
        tested = _expand(value, at, state, magic)
    except _Unread:
        return False
    if key in _PATH_CONDITIONS and all(blocks):
        if _outside(tested, at, key):
            return False
        if not tested.startswith("/"):
            tested = str(at.file.parent / tested)  # from the ini's directory, as `ini =`
    active = all(blocks) and _CONDITIONS[key](tested, state.environ, state.placeholders)
    if active:
        # `%(_)` is the tested value: the variable's value, or the path that exists
        state.placeholders["_"] = state.environ.get(tested, "") if "env" in key else tested
    return active


def _loop_items(
    key: str, value: str, at: Location, state: _State, magic: dict[str, str]
) -> list[str]:
    """The items a `for*` loop at `at` runs its lines over (core/config.c): the words of
    `for`, 1..N of `for-times`, the lines of the file `for-readline` names, the paths
    `for-glob` matches (the pattern itself when none does, as glob(3) with GLOB_NOCHECK). A
    file or folder outside the tree (a note says so) or not here: no items, and a note says
    the loop's lines were not read (they are the machine's, known only where uWSGI starts)."""
    try:
        over = _expand(value, at, state, magic)
    except _Unread:
        return []
    if key == "for":
        return over.split()
    if key == "for-times":
        times = _as_uwsgi_number(over) or 0
        if times > MAX_LOOP_ITEMS:
            note("not-supported", at, f"{key} = {over[:40]}: more than {MAX_LOOP_ITEMS} "
                 "rounds; the loop's lines were not read")  # fmt: skip
            return []
        return [str(n) for n in range(1, times + 1)]
    in_image = _in_image(over, at)
    if key == "for-glob" and in_image:
        return [inside for inside, _ in in_image][:MAX_LOOP_ITEMS]
    if in_image:  # for-readline: the lines of the image's file
        state.files.append(in_image[0][1])
        return _read_included(in_image[0][1], at).splitlines()[:MAX_LOOP_ITEMS]
    if _outside(over, at, key):
        return []
    target = Path(over) if over.startswith("/") else at.file.parent / over
    if key == "for-glob":
        found = resolve.glob_inside(str(target), over, at, key)
        # uWSGI spells each path as the pattern does: relative to its working folder.
        base = len(str(at.file.parent)) + 1 if not over.startswith("/") else 0
        return [str(path)[base:] for path in found][:MAX_LOOP_ITEMS] or [over]
    if not target.is_file():
        note("unresolved-variable", at, f"{key} = {over[:60]}: not here, so the lines uWSGI "
             "reads from it where it starts are not known; the loop's lines were not read")  # fmt: skip
        return []
    state.files.append(target)
    return _read_included(target, at).splitlines()[:MAX_LOOP_ITEMS]


def _chain(value: str, at: Location, state: _State, what: str = "ini") -> None:
    """`ini = file`, `ini = file:section` or `ini = :section` (the file read last), as
    uWSGI's uwsgi_ini_config() splits it at the last colon; a section that is not there adds
    nothing (uWSGI warns and goes on). `include` and `inherit` load an ini file the same way
    (uwsgi_opt_load, by its extension): `what` names the option."""

    name, colon, section = value.rpartition(":")
    if not colon:
        name, section = value, ""
    section = section or "uwsgi"
    target = (state.last_file or at.file) if colon and not name else _included(name, at, what)
    key = (target.resolve(), section)
    if key in state.stack:
        chain = " -> ".join(f"{p}:{s}" for p, s in (*state.stack, key))
        raise CheckInputError(f"{at}: ini include cycle: {chain}")
    if len(state.stack) > MAX_INCLUDE_DEPTH:
        raise CheckInputError(f"{at}: ini includes nested deeper than {MAX_INCLUDE_DEPTH} levels")
    state.stack = (*state.stack, key)
    state.files.append(target)
    try:
        _read_ini(target, _read_included(target, at), section, state)
    finally:
        state.stack = state.stack[:-1]


def uwsgi_settings(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    section: str = "uwsgi",
    placeholders: Mapping[str, str] | None = None,
    installed: str | None = None,
) -> list[tuple[str, str, Location]]:
    """Every (option, resolved value, where it was written) of the [uwsgi] section (or the
    one `--ini file:section` names) and the files it chains (`ini =`) or reads values from
    (`@(file)`), in the order uWSGI reads them; `placeholders`: those the command line sets
    (`--set-ph name=value`), known to every line; `installed`: the path the launch opens
    the file at (its magic `%d` is that path's folder)."""
    return _settings(path, text, env, section, placeholders, installed).options


def _settings(
    path: Path,
    text: str,
    env: Mapping[str, str] | None,
    section: str = "uwsgi",
    placeholders: Mapping[str, str] | None = None,
    installed: str | None = None,
) -> _State:
    state = _State(environ=os.environ if env is None else env)
    state.placeholders.update(placeholders or {})
    if installed:
        state.installed[path.resolve()] = installed
    state.stack = ((path.resolve(), section),)
    state.last_file = path  # `ini = :uwsgi` in it: this file's other section
    with resolve.within_default(path):
        found = _read_ini(path, text, section, state)
    if not found:
        raise CheckInputError(f"{path}: no [{section}] section (is this a uWSGI ini file?)")
    return state


def uwsgi_options(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> list[tuple[str, str, int]]:
    """Every (option, resolved value, line) of the [uwsgi] section, in file order (an option
    from a chained file carries its line in that file: uwsgi_settings says which)."""
    return [(k, v, at.line) for k, v, at in uwsgi_settings(path, text, env)]


def _address(value: str) -> str:
    """As nginx would spell the socket: `:8000` binds every interface, a path is a unix socket."""
    if value.startswith(":"):
        return f"0.0.0.0{value}"
    if "/" in value and not value.startswith("["):
        # `%d../app.sock` of /webapp/deploy/: the kernel binds /webapp/app.sock (no symlink
        # on the way is known here), so it is shown, and matched, as that path.
        return f"unix:{posixpath.normpath(value) if value.startswith('/') else value}"
    if value and ":" not in value and not value.startswith(("@", "$")) and not value.isdigit():
        return f"unix:{value}"  # uWSGI binds a name with no port (`app.sock`) as a unix socket
    return value


def _sockets(
    options: list[tuple[str, str, Location]], names: tuple[str, ...] = _SOCKET_OPTIONS
) -> tuple[Setting[str], ...]:
    """Every address uWSGI listens on (by the options `names`); a `${NAME}` left in a value (a
    template's placeholder, rendered where uWSGI is installed) is an address not known here,
    not listed, and so is one whose `$(PORT)` the environment here does not set (uWSGI
    expands it to nothing: `http-socket = :$(PORT)` on Heroku), said in a note."""
    found: list[Setting[str]] = []
    for key, value, at in options:
        if key not in names or "${" in value:
            continue
        if "$(" in (written := _written(at)) and (not value.strip() or value.endswith(":")):
            note(
                "unresolved-variable",
                at,
                f"{key} = {written.strip()[:60]}: known only when uWSGI starts (an environment "
                "variable, as Heroku's $PORT); the address it listens on was not checked",
            )
            continue
        found.append(Setting(_address(value), at))
    return tuple(found)


#: A value that is one template value and nothing else (`${uwsgi_socket}`).
_ONE_VALUE = re.compile(r"\$\{\w+\}")


def _template_sockets(
    options: list[tuple[str, str, Location]],
) -> tuple[tuple[str, Setting[str]], ...]:
    """The sockets written as one unresolved value of a template read as its kind
    (`socket = {{ uwsgi_socket }}`), with their option."""
    from servertune.check.source import read_in_place

    return tuple(
        (key, Setting(value.strip(), at))
        for key, value, at in options
        if key in _SOCKET_OPTIONS and _ONE_VALUE.fullmatch(value.strip()) and read_in_place(at.file)
    )


def read_uwsgi(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The settings uWSGI would run `path` with."""
    return read_uwsgi_files(path, text, env)[0]


def read_uwsgi_files(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[AppServer, tuple[Path, ...]]:
    """The settings uWSGI would run `path` with, and the files it chained to get them."""
    state = _settings(path, text, env)
    options = state.options
    # A default is cited at the `[uwsgi]` line, the section it is missing from, never at
    # line 1 (a licence comment).
    header = next(
        (n for n, line in enumerate(text.splitlines(), 1) if line.strip().lower() == "[uwsgi]"),
        1,
    )
    app = uwsgi_app(path, options, Location(path, header))
    files = tuple(dict.fromkeys(f for f in state.files if f != path))
    return replace(app, config_parts=files), files


def _sigterm_drains(options: list[tuple[str, str, Location]]) -> Setting[bool] | None:
    """The hook that makes SIGTERM drain the workers (`hook-master-start = unix_signal:15
    gracefully_kill_them_all`), where it is written; None without one."""
    return next(
        (
            Setting(True, at)
            for key, value, at in options
            if key.startswith("hook-")
            and re.search(r"unix_signal:\s*15\s+gracefully_kill_them_all", value)
        ),
        None,
    )


def _as_uwsgi_number(value: str) -> int | None:
    """`value` as uWSGI reads a number (its leading digits); None when it has none."""
    leading = _LEADING_NUMBER.match(value)
    return int(leading[1]) if leading is not None else None


def uwsgi_app(path: Path, options: list[tuple[str, str, Location]], start: Location) -> AppServer:
    """The AppServer of uWSGI options in the order uWSGI reads them (an ini file's lines, a
    command line's options, `UWSGI_*` variables), each with where it was written; a default
    points at `start`."""
    # A relative socket is made in `chdir`, which uWSGI changes to before it binds.
    server = replace(
        _uwsgi_server(path, options, start),
        daemonizes=_daemonizes(options),
        inline_comments=_inline_comments(options),
        template_sockets=_template_sockets(options),
    )
    return started_in(server, "")


def _uwsgi_server(
    path: Path, options: list[tuple[str, str, Location]], start: Location
) -> AppServer:
    """`uwsgi_app`, before its relative sockets are placed."""
    options = [(_ALIASES.get(k, k), v, at) for k, v, at in options]
    last: dict[str, tuple[str, Location]] = {}
    for key, value, at in options:
        last[key] = (value, at)
    unknown: set[str] = set()  # the numbers written with a value known only where it runs

    def number(key: str) -> Setting[int]:
        if key not in last:
            return Setting(UWSGI_DEFAULTS[key], start, default=True)
        value, at = last[key]
        if (read := _as_uwsgi_number(value)) is not None:
            return Setting(read, at)
        written = _written(at)
        if not value.strip() or "$(" in written or "${" in written:
            # `$(UWSGI_WORKERS)` unset where check runs (uWSGI expands it to ""), or a
            # template's `${VAR}`: known only where it runs; read with the default.
            note(
                "unresolved-variable",
                at,
                f"{key} = {written.strip()[:60] or value[:60]!r}: known only when uWSGI "
                f"starts (an environment variable or a template's); read with uWSGI's "
                f"default {UWSGI_DEFAULTS[key]}",
            )
            unknown.add(key)
            return Setting(UWSGI_DEFAULTS[key], at, default=True)
        raise CheckInputError(f"{at}: {key} must be a whole number; got {value[:40]!r}")

    def flag(key: str) -> Setting[bool] | None:
        if key not in last:
            return None
        value, at = last[key]
        return Setting(value.strip().lower() not in _FALSE, at)

    # Every number is read before `unknown_settings` is taken from what the reading met.
    harakiri, workers, threads = number("harakiri"), number("processes"), number("threads")
    max_requests, backlog = number("max-requests"), _backlog(options, number)
    jitter = (
        number("max-requests-delta")
        if "max-requests-delta" in last
        else Setting(0, start, default=True)
    )
    return AppServer(
        kind="uwsgi",
        file=path,
        workers=workers,
        threads=threads,
        sockets=_sockets(options),
        uwsgi_protocol=tuple(s.value for s in _sockets(options, ("socket",))),
        mapped_sockets=any(k == "map-socket" for k, _, _ in options),
        keepalive=None,
        request_timeout=Setting(float(harakiri.value), harakiri.at, harakiri.default),
        graceful_timeout=None,
        max_requests=max_requests,
        max_requests_jitter=jitter,
        backlog=backlog,
        thunder_lock=flag("thunder-lock"),
        cheaper=_cheaper(last),
        # An async engine (`gevent = 100`, `async = 10`): many requests per process at once,
        # whatever processes and threads say.
        worker_class=next(
            (Setting(k, at) for k, _, at in reversed(options) if k in _ASYNC_ENGINES), None
        ),
        chdir=last["chdir"][0].strip() if "chdir" in last else "",
        die_on_term=_sigterm_stops(options, flag("die-on-term")),
        sigterm_drains=_sigterm_drains(options),
        # `processes = %k` (or arithmetic on it) as written, wherever the ini was read from:
        # an ini on its own, or one a Dockerfile's `uwsgi --ini` names.
        workers_follow_cpu_count="processes" in last and "%k" in _written(last["processes"][1]),
        # `processes = %k` itself is the node's count; arithmetic on it is not evaluated here.
        workers_on_nodes=((16, 16), (64, 64))
        if "processes" in last and _written(last["processes"][1]).strip() == "%k"
        else (),
        unknown_settings=frozenset(unknown),
        cut_numbers=_cut_numbers(options),
        emperor=Setting(*last["emperor"]) if "emperor" in last else None,
    )


def _daemonizes(options: list[tuple[str, str, Location]]) -> Setting[bool] | None:
    """Where `daemonize = LOG` (or `daemonize2`) detaches uWSGI from what started it; None
    when neither is set, or set false."""
    last = {_ALIASES.get(k, k): (v, at) for k, v, at in options}
    for key in ("daemonize", "daemonize2"):
        if key in last and last[key][0].strip().lower() not in _FALSE:
            return Setting(True, last[key][1])
    return None


def _cut_numbers(
    options: list[tuple[str, str, Location]],
) -> tuple[tuple[str, Setting[str], int], ...]:
    """Each option whose number uWSGI cuts at its first non-digit (`1e3` read as 1), with the
    number it takes; any option, since every numeric one is parsed so (atoi, strtoul)."""
    cut = []
    for key, value, at in options:
        read = _as_uwsgi_number(value) if _CUT_NUMBER.match(value) else None
        if read is not None:
            cut.append((key, Setting(value.strip(), at), read))
    return tuple(cut)


#: A comment written after a value (`processes = 1  # workers`): uWSGI's ini reader has no
#: such comment (core/ini.c skips a line that starts with `#` or `;`, and keeps the rest of
#: any other line, after `=`, as the value).
_INLINE_COMMENT = re.compile(r"\s[#;]")
#: The values that turn a flag on whatever follows them in uWSGI's reading.
_TRUE = frozenset({"true", "on", "yes", "1"})
#: Options whose value is a command, a route or a format, where `#` or `;` after a space may
#: be the value's own (a shell's `cmd1 ; cmd2`, a log format): not read as a comment.
_COMMAND_VALUED = ("exec-", "hook-", "attach-", "smart-attach-", "route", "log-format",
                   "logformat", "cron", "unique-cron", "legion-cron", "mule", "spooler-")  # fmt: skip


#: Options whose value uWSGI does not know falls back to one of its own, with a log line:
#: `cheaper-algo = spare # ...` logs "unable to find requested cheaper algorithm, falling
#: back to spare" (seen with uWSGI 2.0 here) and runs spare, the algorithm meant.
_FALLS_BACK_TO = {"cheaper-algo": "spare"}


def _inline_comments(
    options: list[tuple[str, str, Location]],
) -> tuple[tuple[str, Setting[str], str], ...]:
    """Each option whose value carries a comment after it that changes what uWSGI reads, as
    (option, value as written, the value before the comment): a text value kept with its
    comment (`module = app.main # the app` names no module), or a flag written off and read
    on (`master = false # no master`: `false # ...` is none of uWSGI's false words). A number
    before the comment is what was meant (atoi stops at it): none (Sage-Bionetworks/schematic's
    `processes = 1  # Number of ...`)."""
    found = []
    for key, value, at in options:
        comment = _INLINE_COMMENT.search(value)
        if comment is None or key.startswith(_COMMAND_VALUED):
            continue
        meant = value[: comment.start()].strip()
        if not meant or re.fullmatch(r"[+-]?\d+", meant) or meant.lower() in _TRUE:
            continue
        if _FALLS_BACK_TO.get(key) == meant:
            continue  # the name uWSGI does not know falls back to the very value meant
        found.append((key, Setting(value.strip(), at), meant))
    return tuple(found)


def _cheaper(last: Mapping[str, tuple[str, Location]]) -> Setting[int] | None:
    """`cheaper = N` as a number (the processes at idle); None when unset or not a number
    (a placeholder known where it runs)."""
    if "cheaper" not in last:
        return None
    value, at = last["cheaper"]
    return Setting(int(value), at) if value.strip().isdigit() and int(value) > 0 else None


def _backlog(
    options: list[tuple[str, str, Location]], number: Callable[[str], Setting[int]]
) -> Setting[int]:
    """`listen`, or 0 where the last `listen` is written with a placeholder: uWSGI applies it
    as soon as it reads it, before expanding it, and its atoi reads the text as 0."""
    listens = [(k, at) for k, _, at in options if k in ("listen", _LISTEN_AS_WRITTEN)]
    if listens and listens[-1][0] == _LISTEN_AS_WRITTEN:
        return Setting(0, listens[-1][1])
    return number("listen")


def _sigterm_stops(
    options: list[tuple[str, str, Location]], die_on_term: Setting[bool] | None
) -> Setting[bool] | None:
    """How SIGTERM is handled when the config says: `die-on-term`, or a master hook that
    makes SIGTERM (15) a graceful stop (`hook-master-start = unix_signal:15
    gracefully_kill_them_all`, uWSGI's documented recipe). None: uWSGI 2.0's brutal reload."""
    if die_on_term is not None:
        return die_on_term
    for key, value, at in options:
        if key.startswith("hook-") and re.search(r"unix_signal:\s*15\b", value):
            return Setting(True, at)
    return None


def _written(at: Location) -> str:
    """The option's line as written (empty when it cannot be read back)."""
    try:
        return _raw_value(at)
    except (CheckInputError, IndexError):
        return ""


def _raw_value(at: Location) -> str:
    from servertune.check.source import read_text

    return read_text(at.file).splitlines()[at.line - 1].partition("=")[2]
