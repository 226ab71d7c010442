"""Files a container makes when it starts, from the repository's files.

An entrypoint often makes the file its server reads just before starting it: `cp
/defaults/uwsgi.ini /app/uwsgi.ini`, `ln -s /etc/app/web.conf /run/conf.d/`, `envsubst <
uwsgi.conf.ini > uwsgi.ini`, `sed "s/placeholder/$VALUE/g" SRC > DST`, `echo "server $HOST:$PORT;" >
/run/upstream`. Such a line makes
its destination (a container path) resolve to its source, the file the image holds there (and
so the repository file its COPY brought), or, for `echo`/`printf`, to the text written. A
rendered file (`envsubst`) is read with the values the environment gives (the script's own,
the image's ENV, the platform's) and every other `$NAME` left as written: unknown, never
guessed; one `j2` renders (j2cli: a Jinja template, its variables the environment's) is read
as `servertune.check.jinja` renders it. Only lines that run before the server count: a script's lines before its server line,
the functions it calls first, and an s6 service's `dependencies.d` (its init services).

A script is read, never run: the words are split as the shell splits them, variables expanded
from what the script and its environment set; a line whose destination or source depends on a
value not known here makes nothing.
"""

from __future__ import annotations

import contextvars
import fnmatch
import os
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from servertune.check.commands import ConfigFile, FindConfig, expand_shell, without_comments
from servertune.check.model import Location, note

__all__ = [
    "ENVSUBST_VARIABLE",
    "IMAGE_FILES",
    "ListFiles",
    "Made",
    "finding",
    "image_listing",
    "made_by",
    "made_here",
    "matching",
    "s6_predecessors",
]

#: Lists the container files under a folder (an image's, through its COPYs).
ListFiles = Callable[[str], list[str]]


@dataclass(frozen=True)
class Made:
    """A file the container makes when it starts: at `path` (absolute, or relative to the
    script's working directory as written), from the container file `source` (copied, linked
    or rendered), or holding `text`, by the line `at`."""

    path: str
    at: Location
    source: str | None = None
    text: str | None = None
    #: envsubst: the environment it renders with, and the names it substitutes (None: all).
    rendered: bool = False
    environment: tuple[tuple[str, str], ...] = ()
    names: frozenset[str] | None = None
    #: Names the text (`echo "$HOST"`) needs that are not known here.
    unknown: tuple[str, ...] = ()
    #: What renders it: "envsubst", or "jinja" (j2cli, the environment its variables;
    #: `strict`: an undefined name is an error there, as j2's default is).
    engine: str = "envsubst"
    strict: bool = False
    #: sed's substitutions of literal text (pattern, replacement, every one on a line).
    edits: tuple[tuple[str, str, bool], ...] = ()


#: The files made so far by the script being read, for a `[include]` glob (supervisord).
_MADE: contextvars.ContextVar[tuple[Made, ...]] = contextvars.ContextVar(
    "servertune_check_runtime_made", default=()
)

#: A variable envsubst substitutes: `$NAME` or `${NAME}` (also what an nginx template's passes
#: render with: `chain._render`).
ENVSUBST_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)
_OPERATORS = frozenset({";", "&&", "||", "|", "&", ";;"})
#: `ln`'s options that take no value, any of which may be run together (`-sf`, `-snf`).
_LN_FLAGS = frozenset("sfnrvTbLP")


def _norm(path: str) -> str:
    return os.path.normpath(path) if path else path


def _tokens(text: str) -> list[str] | None:
    lexer = shlex.shlex(without_comments(text), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def _commands(text: str) -> list[tuple[list[str], str | None, str | None]]:
    """Each simple command of `text`: its words, its stdin file and its stdout file (`>`,
    never `>>`, which only adds to a file whose start is not known here)."""
    tokens = _tokens(text)
    if tokens is None:
        return []
    found: list[tuple[list[str], str | None, str | None]] = []
    words: list[str] = []
    stdin: str | None = None
    stdout: str | None = None
    skip_out = False
    index = 0
    while index < len(tokens):
        token = tokens[index]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token in _OPERATORS:
            if words:
                found.append((words, stdin, None if skip_out else stdout))
            words, stdin, stdout, skip_out = [], None, None, False
        elif token == "<" and following is not None:
            stdin = following
            index += 1
        elif token in (">", ">|") and following is not None:
            if words and words[-1].isdigit():  # `2> file`: another stream
                words.pop()
            else:
                stdout = following
            index += 1
        elif token == ">>" and following is not None:
            skip_out = True
            index += 1
        elif set(token) <= set("<>&") and following is not None:
            if words and words[-1].isdigit() and token.endswith("&"):
                words.pop()  # `2>&1`: the stream's number, not a word of the command
            index += 1  # `>&2`, `2>&1`, `&>file`, `<<<`: not a file this makes
        else:
            words.append(token)
        index += 1
    if words:
        found.append((words, stdin, None if skip_out else stdout))
    return found


def _expanded(word: str, env: Mapping[str, str]) -> str | None:
    return expand_shell(word, env) if "$" in word or "`" in word else word


def made_by(
    path: Path,
    text: str,
    first: int,
    env: Mapping[str, str],
    folders: set[str],
    listing: ListFiles | None = None,
    directory: str | None = None,
) -> list[Made]:
    """The files the commands of `text` (a script's line `first`) make, with `env` the
    script's variables there; `folders` the folders it made before (`mkdir -p DIR`: a link
    written onto one goes inside), updated; `listing` lists the image's files under a folder
    (for `find DIR ... -exec ln -s -t DEST {} +`); `directory` the folder a `cd DIR` before
    the line moved to (None: not known), where a relative path of a copy or link is."""
    at = Location(path, first)
    made: list[Made] = []
    for words, stdin, stdout in _commands(text):
        program = PurePosixPath(words[0]).name
        if program == "mkdir":
            folders.update(
                _norm(d) for w in words[1:] if not w.startswith("-") if (d := _expanded(w, env))
            )
        elif program in ("cp", "ln", "mv"):
            # `mv` (s6 init scripts: `mv /defaults/uwsgi.ini /app/uwsgi.ini`) puts the image's
            # file at its destination, as `cp` does.
            made += _copied(program, words[1:], env, folders, at, directory)
        elif program == "envsubst" and stdin is not None and stdout is not None:
            made += _rendered(words[1:], stdin, stdout, env, at)
        elif program == "j2":
            made += _jinja_rendered(words[1:], stdout, env, at)
        elif program in ("echo", "printf") and stdout is not None:
            made += _written(program, words[1:], stdout, env, at)
        elif program == "find" and listing is not None:
            made += _found_links(words[1:], env, listing, at)
        elif program in ("cat", "sed", "tr") and stdout is not None:
            made += _copied_through(program, words[1:], stdin, stdout, env, at)
    return made


#: A sed script that only drops carriage returns (`s/\r$//`, `s/\r//g`): the file's lines
#: unchanged, written for Unix (a checkout on Windows ends its lines in CRLF).
_CR_ONLY_SED = re.compile(r"s(?P<d>[/|#,])\\r\$?(?P=d)(?P=d)g?")


def _copied_through(
    program: str,
    args: list[str],
    stdin: str | None,
    stdout: str,
    env: Mapping[str, str],
    at: Location,
) -> list[Made]:
    """`cat SRC > DST`, and a line-ending conversion (`sed 's/\r$//' SRC > DST`, `tr -d '\r'
    < SRC > DST`): DST is a copy of SRC, its lines as written. Any other edit makes a file
    whose text is not known here: nothing."""
    operands = [a for a in args if not a.startswith("-")]
    edits: tuple[tuple[str, str, bool], ...] = ()
    if program == "sed":
        if len(operands) < 1 or any(a not in ("-e", "--expression") for a in args if a[:1] == "-"):
            return []
        if not _CR_ONLY_SED.fullmatch(operands[0]):
            found = _literal_substitution(operands[0], env)
            if found is None:
                return []
            edits = (found,)
        operands = operands[1:]
    elif program == "tr":
        if args != ["-d", "\\r"] or stdin is None:
            return []
        operands = []
    elif len(operands) != len(args):
        return []  # `cat -n`, `cat -A`: not the file's text
    if len(operands) > 1 or (not operands and stdin is None):
        return []
    source = _expanded(operands[0] if operands else stdin or "", env)
    destination = _expanded(stdout, env)
    if not source or not destination:
        return []
    if edits:
        made = Made(_norm(destination), at, source=_norm(source), rendered=True, engine="sed")
        return [replace(made, edits=edits)]
    return [Made(_norm(destination), at, source=_norm(source))]


#: sed's `s` command with any delimiter: `s/A/B/`, `s|A|B|g`.
_SUBSTITUTE = re.compile(
    r"s(?P<d>[^\w\s\\])(?P<a>(?:\\.|(?!(?P=d)).)*)(?P=d)"
    r"(?P<b>(?:\\.|(?!(?P=d)).)*)(?P=d)(?P<flags>g?)"
)
#: What makes a sed pattern more than literal text (basic regular expressions).
_PATTERN_SPECIAL = re.compile(r"[.*\[\]^$\\]")


def _literal_substitution(expression: str, env: Mapping[str, str]) -> tuple[str, str, bool] | None:
    """`s/PLACEHOLDER/VALUE/[g]` of literal text (`sed "s/will_be_replaced/$(pwgen 40 1)/g"
    SRC > DST`, helfertool/helfertool): the text and what replaces it, the value as the
    script's variables give it, else as written (`$PORT`, `$(pwgen 40 1)`: known only when it
    runs, read as the unknown it is). None for any other sed script: its result is not known."""
    match = _SUBSTITUTE.fullmatch(expression)
    if match is None or not match["a"] or _PATTERN_SPECIAL.search(match["a"]):
        return None
    value = match["b"]
    if "&" in value or "\\" in value:
        return None  # the matched text or a group put back: not a plain value
    known = _expanded(value, env) if "$(" not in value and "`" not in value else None
    return match["a"], value if known is None else known, bool(match["flags"])


def _sed_edited(text: str, edits: Sequence[tuple[str, str, bool]]) -> str:
    """`text` as sed's literal substitutions leave it, line by line (without `g`, the first
    on each line only)."""
    for pattern, value, every in edits:
        text = "\n".join(
            line.replace(pattern, value, -1 if every else 1) for line in text.split("\n")
        )
    return text


#: How a script's files are listed in the image of the run that copies it: (the script, a
#: folder) -> the container files under it, set by `images.images_of_run`.
IMAGE_FILES: contextvars.ContextVar[Callable[[Path, str], list[str]] | None] = (
    contextvars.ContextVar("servertune_check_runtime_image_files", default=None)
)


def image_listing(file: Path) -> ListFiles | None:
    """The files under a folder of the image of the run that copies `file` (a script it
    runs), None when no images are known."""
    listed = IMAGE_FILES.get()
    if listed is None:
        return None
    return lambda folder: listed(file, folder)


def _copied(
    program: str,
    args: list[str],
    env: Mapping[str, str],
    folders: set[str],
    at: Location,
    directory: str | None = None,
) -> list[Made]:
    """`cp SRC DST` (and `mv`), `cp SRC... DIR`, `ln -s TARGET LINK`, `ln -s TARGET... DIR`, `ln -s -t
    DIR TARGET...`: each file made, from its source. A relative path is in `directory` (the
    script's working directory, when known); a symbolic link's relative TARGET is read by the
    kernel from the link's own folder, not from where `ln` ran (`cd /conf && ln -s a.conf
    b.conf` links /conf/b.conf to /conf/a.conf; `ln -s ../a.conf /etc/x/` to /etc/a.conf),
    unless `ln -r` computed it from there."""
    target_dir: str | None = None
    names: list[str] = []
    flags: list[str] = []
    rest = list(args)
    while rest:
        word = rest.pop(0)
        if word in ("-t", "--target-directory") and rest:
            target_dir = rest.pop(0)
        elif word.startswith("--target-directory="):
            target_dir = word.partition("=")[2]
        elif word == "--":
            names += rest
            break
        elif word.startswith("-") and len(word) > 1:
            flags.append(word)
        else:
            names.append(word)
    if program == "ln" and not any(
        f in ("-s", "--symbolic") or (f[1:2] != "-" and "s" in f and set(f[1:]) <= _LN_FLAGS)
        for f in flags
    ):
        return []  # a hard link names the same file; not what these images write
    expanded = [_expanded(n, env) for n in names]
    into = _expanded(target_dir, env) if target_dir is not None else None
    if target_dir is not None and into is None:
        return []
    if any(e is None or not e for e in expanded):
        return []
    words = [e for e in expanded if e is not None]
    linking = program == "ln" and not any(
        f in ("-r", "--relative") or (f[1:2] != "-" and "r" in f) for f in flags
    )
    if into is None:
        if len(words) < 2:
            return []
        *sources, destination = words
        if len(sources) > 1 or destination.endswith("/") or _norm(destination) in folders:
            into = destination
        else:
            made = _placed(destination, directory)
            return [Made(made, at, source=_source(sources[0], made, linking, directory))]
    else:
        sources = words
    into = _placed(into, directory)
    found = []
    for s in sources:
        # `cp -a /src/. /dst/` copies the folder's contents into /dst, not a folder `src`.
        made = _norm(into if s.endswith("/.") else str(PurePosixPath(into) / PurePosixPath(s).name))
        found.append(Made(made, at, source=_source(s, made, linking, directory)))
    return found


def _placed(path: str, directory: str | None) -> str:
    """`path` as written in a script whose working directory is `directory` (None: not
    known, the path left as written)."""
    if directory is None or path.startswith("/"):
        return _norm(path)
    return _norm(posixpath.join(directory, path))


def _source(source: str, made: str, linking: bool, directory: str | None) -> str:
    """Where the copy or link `made` reads: a symbolic link's relative target from the
    link's folder; a copy's source from the working directory."""
    if linking and not source.startswith("/"):
        return _norm(posixpath.join(posixpath.dirname(made), source))
    return _placed(source, directory)


def _rendered(
    args: list[str], stdin: str, stdout: str, env: Mapping[str, str], at: Location
) -> list[Made]:
    """`envsubst [SHELL-FORMAT] < SRC > DST`: DST is SRC with the variables substituted (only
    those SHELL-FORMAT names, when given)."""
    source, destination = _expanded(stdin, env), _expanded(stdout, env)
    if not source or not destination:
        return []
    formats = [a for a in args if not a.startswith("-")]
    names = (
        frozenset(m["braced"] or m["bare"] for f in formats for m in ENVSUBST_VARIABLE.finditer(f))
        if formats
        else None
    )
    return [_render_of(source, destination, env, at, names=names)]


#: j2cli's options that take a value; any option not here or in `_J2_FLAGS` (`--filters`,
#: `--customize`: the project's own Python) leaves the file unknown.
_J2_VALUED = frozenset({"-o", "-f", "--format"})
_J2_FLAGS = frozenset({"--undefined"})


def _jinja_rendered(
    args: list[str], stdout: str | None, env: Mapping[str, str], at: Location
) -> list[Made]:
    """`j2 [-f env] [--undefined] TEMPLATE [-o DST]` (or `> DST`): DST is TEMPLATE rendered by
    Jinja with the environment's variables (j2cli's data when no data file is given)."""
    options: dict[str, str] = {}
    positional: list[str] = []
    rest = list(args)
    while rest:
        word = rest.pop(0)
        if word in _J2_VALUED and rest:
            options[word] = rest.pop(0)
        elif word in _J2_FLAGS:
            options[word] = ""
        elif word.startswith("-"):
            return []  # a data format, filters or hooks of the project's: not rendered here
        else:
            positional.append(word)
    if len(positional) != 1 or options.get("-f", options.get("--format", "env")) != "env":
        return []  # a data file's values are not read here
    source = _expanded(positional[0], env)
    written = options.get("-o", stdout)
    destination = _expanded(written, env) if written else None
    if not source or not destination:
        return []
    return [
        _render_of(
            source, destination, env, at, engine="jinja", strict="--undefined" not in options
        )
    ]


def _render_of(
    source: str,
    destination: str,
    env: Mapping[str, str],
    at: Location,
    *,
    names: frozenset[str] | None = None,
    engine: str = "envsubst",
    strict: bool = False,
) -> Made:
    """DST made at `at` by rendering SRC with the environment `env` (envsubst's or Jinja's)."""
    return Made(
        _norm(destination),
        at,
        source=_norm(source),
        rendered=True,
        environment=tuple(sorted(env.items())),
        names=names,
        engine=engine,
        strict=strict,
    )


def _written(
    program: str, args: list[str], stdout: str, env: Mapping[str, str], at: Location
) -> list[Made]:
    """`echo WORDS > DST` / `printf 'FORMAT' > DST` (a format with no `%`): DST holds the
    text, its variables expanded from what is known and the others kept as written."""
    destination = _expanded(stdout, env)
    if not destination:
        return []
    newline = True
    words = list(args)
    if program == "echo":
        while words and re.fullmatch(r"-[neE]+", words[0]):
            newline = newline and "n" not in words[0]
            words.pop(0)
        text = " ".join(words) + ("\n" if newline else "")
    else:
        if len(words) != 1 or "%" in words[0]:
            return []
        text = words[0].replace("\\n", "\n").replace("\\t", "\t")
    unknown: list[str] = []

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["bare"]
        if name in env:
            return env[name]
        unknown.append(name)
        return match[0]

    text = ENVSUBST_VARIABLE.sub(one, text)
    return [Made(_norm(destination), at, text=text, unknown=tuple(dict.fromkeys(unknown)))]


def _found_links(
    args: list[str], env: Mapping[str, str], listing: ListFiles, at: Location
) -> list[Made]:
    """`find DIR [-type f] [!] -name PATTERN ... -exec ln -s -t DEST {} +`: a link in DEST to
    each file of DIR (the image's) the tests keep."""
    if "-exec" not in args:
        return []
    tests, command = args[: args.index("-exec")], args[args.index("-exec") + 1 :]
    if command[-1:] in (["+"], [";"]):
        command = command[:-1]
    if not tests or not command or PurePosixPath(command[0]).name != "ln" or "{}" not in command:
        return []
    folder = _expanded(tests[0], env)
    if not folder or not folder.startswith("/"):
        return []
    keep: list[tuple[bool, str]] = []
    index = 1
    while index < len(tests):
        word = tests[index]
        negate = word in ("!", "-not")
        if negate:
            index += 1
            word = tests[index] if index < len(tests) else ""
        if word == "-name" and index + 1 < len(tests):
            keep.append((negate, tests[index + 1]))
            index += 2
        elif word == "-type" and index + 1 < len(tests):
            index += 2
        else:
            return []  # a test not read here: which files it keeps is not known
    made: list[Made] = []
    for file in listing(folder):
        name = PurePosixPath(file).name
        if all(fnmatch.fnmatchcase(name, pattern) != negate for negate, pattern in keep):
            words = [file if w == "{}" else w for w in command[1:]]
            made += _copied("ln", words, env, set(), at)
    return made


def _render(text: str, made: Made) -> str:
    """`text` as envsubst renders it for `made`: the names it substitutes that the
    environment holds; every other `$NAME` as written (unknown here, never empty)."""
    environment = dict(made.environment)

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["bare"]
        if made.names is not None and name not in made.names:
            return match[0]
        value = environment.get(name, match[0])
        # A value of several lines would move every line below it: the file:line of what
        # is read there would name another line of the repository file. Left unknown.
        return match[0] if "\n" in value else value

    return ENVSUBST_VARIABLE.sub(one, text)


def finding(made: Sequence[Made], find_config: FindConfig) -> FindConfig:
    """`find_config` that first resolves a path the container made (`made`, the last one
    that makes a path wins, as the later command does) to what it was made from."""

    def find(wanted: str, at: Location | None = None, /, depth: int = 0) -> ConfigFile | None:
        if depth > 8 or not wanted or "\n" in wanted or len(wanted) > 4096:
            return find_config(wanted, at)
        key = _norm(wanted)
        for one in reversed(made):
            if one.path == key:

                def deeper(inner: str, where: Location | None = None, /) -> ConfigFile | None:
                    return find(inner, where, depth + 1)

                return _resolved(one, at, deeper)
            if one.source is not None and not one.rendered and key.startswith(one.path + "/"):
                # A link to a folder (`ln -s /etc/app/conf.d /run/conf.d`): the file inside.
                return find(one.source + key[len(one.path) :], at, depth + 1)
        return find_config(wanted, at)

    return find


def _resolved(made: Made, at: Location | None, find: FindConfig) -> ConfigFile | None:
    if made.text is not None:
        if made.unknown:
            note(
                "unresolved-variable",
                made.at,
                f"{made.at}: {made.path} is written at start with "
                f"{', '.join('$' + n for n in made.unknown)}: known only when the container "
                "runs, so what it sets was not checked",
            )
        return ConfigFile(made.text, made.at.file, made.at.line)
    if made.source is None:
        return None
    found = find(made.source, at)
    if found is None or not made.rendered:
        return found
    if made.engine == "sed":
        return ConfigFile(_sed_edited(found.text, made.edits), found.file, found.first_line)
    if made.engine == "jinja":
        from servertune.check.jinja import read_rendered

        return read_rendered(found, made.path, made.at, dict(made.environment), made.strict)
    return ConfigFile(_render(found.text, made), found.file, found.first_line)


@contextmanager
def made_here(made: Sequence[Made]) -> Iterator[None]:
    """While the block runs, `matching` sees the files `made` (a script's, before the
    process manager it hands over to reads its config)."""
    token = _MADE.set((*_MADE.get(), *made))
    try:
        yield
    finally:
        _MADE.reset(token)


def matching(pattern: str) -> list[str]:
    """The container paths linked or copied so far (`made_here`) that the absolute glob
    `pattern` names, in the order made, each once (a rendered file is text, not a file)."""
    found = [
        m.path
        for m in _MADE.get()
        if m.source is not None and not m.rendered and fnmatch.fnmatchcase(m.path, pattern)
    ]
    return list(dict.fromkeys(found))


def s6_predecessors(run: Path) -> list[Path]:
    """The `run` (or `up`) scripts of the s6-rc services the service of `run` depends on
    (`s6-rc.d/svc-app/dependencies.d/init-app`: s6-rc starts init-app first), and of the
    services those depend on, as far as the files here go, the earliest first, when `run` is
    an s6-rc service's script; [] otherwise."""
    if run.name != "run":
        return []
    found: list[Path] = []
    seen = {run.parent.name}

    def visit(service: Path, depth: int) -> None:
        depends = service / "dependencies.d"
        if depth > _S6_DEPTH or not depends.is_dir():
            return
        try:
            names = sorted(entry.name for entry in os.scandir(depends))
        except OSError:
            return
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            before = service.parent / name
            visit(before, depth + 1)  # what it depends on runs before it
            for script in ("run", "up"):
                candidate = before / script
                if candidate.is_file():
                    found.append(candidate)
                    break

    visit(run.parent, 0)
    return found


#: How deep a chain of s6-rc dependencies is followed (base images' chains are a dozen long).
_S6_DEPTH = 32
