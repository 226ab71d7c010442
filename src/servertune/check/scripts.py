"""Shell scripts that start a server: `gen`'s uvicorn / granian scripts, and the entrypoint
scripts images run (`exec gunicorn ...`, `exec uwsgi ...`).

A script is read, never run: its lines are split as the shell splits words (`shlex`, with line
continuations joined and comments dropped), the one server command line is found by
`commands.server_command` (after `exec`, `env`, `VAR=value`, `python -m`, process wrappers and
`sh -c`), and its arguments are handed to the server's own parser (`commands.read_command`), so
options, defaults and the server's environment variables are read exactly as the server would.
The script's own `VAR=value` / `export VAR=value` lines before the command are its environment.
A per-worker script (`case "$SERVERTUNE_WORKER" in N) set -- --host H --port P ;;`) is one
single-worker server per `case` arm, each on its own socket. What only the running shell knows
(a variable set nowhere, `"$@"` of an unknown caller) is left out and named by a finding.
"""

from __future__ import annotations

import contextvars
import fnmatch
import itertools
import os
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from servertune.check import memo, runtime_files
from servertune.check.asgi_cli import CLI_EVAL_TIMEOUT_S, SERVERS, parse_command_lines
from servertune.check.commands import (
    _DAEMON_PROGRAM,
    COMMAND_COMPLETE,
    ENVIRONMENT_COMPLETE,
    SCRIPT_SUFFIXES,
    SHELLS,
    WRAPPERS,
    ConfigFile,
    FindConfig,
    ServerCommand,
    Word,
    _braced,
    _without_redirections,
    asgi_server,
    beside,
    config_argument,
    expand_known,
    expand_shell,
    in_directory,
    is_dockerfile,
    monofy_children,
    program_name,
    read_command,
    reloading_wrapper,
    server_command,
    shell_commands,
    without_comments,
    wrapped,
)
from servertune.check.consul_template import exec_command, rendering
from servertune.check.jinja import with_templates
from servertune.check.justfile import just_recipe
from servertune.check.makefile import Recipe, make_recipe
from servertune.check.model import (
    ASSUMED_UNSET,
    SERVERS_READ,
    UNCALLED,
    AppServer,
    CheckInputError,
    Location,
    NotFollowed,
    NothingToCheck,
    Setting,
    collect_notes,
    note,
)
from servertune.check.model import (
    SERVERS as SERVER_KINDS,
)
from servertune.check.packaging import ConsoleScript, console_script
from servertune.check.paste import pserve_served
from servertune.check.pylauncher import (
    PythonLaunch,
    child_launch,
    looks_like_python,
    python_launch,
)
from servertune.check.script_folder import (
    HELD_AT,
    INVOKED_AS,
    computed_folder,
    own_folder,
    real_path,
)
from servertune.check.server_arms import branch_value, condition
from servertune.check.service_supervisors import SUPERVISORS, supervised
from servertune.check.shell_paths import BlockValues, alternatives, unresolved_by_branches
from servertune.check.shell_values import condition_value, numeric_test, own_values, test_operands
from servertune.check.supervisord import read_programs
from servertune.check.together import with_others
from servertune.check.tox import tox_recipe
from servertune.check.unfollowed import (
    development_server,
    met_since,
    met_so_far,
    nothing_started,
    remember,
)

__all__ = [
    "CLI_EVAL_TIMEOUT_S",
    "SERVERS",
    "SHELL_SUFFIXES",
    "command_line",
    "follow_words",
    "looks_like_script",
    "parse_command_lines",
    "read_python_launcher",
    "read_script",
    "run_words",
]

_ASSIGNMENT = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=")
_WORKER_ARM = re.compile(r"\A[0-9]+\)\Z")


#: A word that is one parameter expansion and nothing else (`$PREFIX`, `${CMDPREFIX}`,
#: `${WRAPPER:-}`).
_LONE_EXPANSION = re.compile(
    r"\A\$(\{[A-Za-z_][A-Za-z0-9_]*(:?-[^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)\Z"
)

#: A word made of parameter expansions only, each one or several (`${SUB}$prefix`, codecov/
#: codecov-api's enterprise.sh): empty when each of them is, dropped then as the shell drops it.
_EXPANSIONS_ONLY = re.compile(
    r"\A(?:\$(?:\{[A-Za-z_][A-Za-z0-9_]*(?::?-[^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*))+\Z"
)


def _without_empty_prefix(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """The command's words without the leading expansions the script's own variables make
    empty: `CMDPREFIX="${CMDPREFIX:-}"` then `${CMDPREFIX} gunicorn ...` runs gunicorn, as the
    shell's field splitting drops an unquoted word that expands to nothing (Socorro's webapp
    script). A prefix whose value is unknown or not empty is kept: the command is not guessed."""
    if words[:1] and words[0].text in _CONDITIONS:
        return words  # a test's operands, never a program's prefix
    start = 0
    while (
        start < len(words)
        and _EXPANSIONS_ONLY.match(words[start].text)
        and not expand_shell(words[start].text, env)
    ):
        start += 1
    unknown = [w for w in words[:start] if expand_shell(w.text, env) is None]
    if unknown and not any(unresolved_by_branches(w.text.strip("${}"), env) for w in unknown):
        # (A name an undecided block's branches set apart is read per path: `_alike_on_every_path`.)
        # A prefix no file read sets (`${CMD_PREFIX} gunicorn ...`: a profiler, ddtrace-run):
        # the server after it is what serves; the prefix is named as not known.
        note(
            "unresolved-variable",
            words[0].at,
            f"{words[0].text} before the server's command: set where it runs, so what it "
            "wraps the server with was not checked",
        )
    return words[start:]


#: Suffixes of shell scripts, whatever their first line: `.sh`, bash's `.bash` (a sourced
#: helper has no shebang), and the nginx image's `.envsh` (sourced by its entrypoint from
#: /docker-entrypoint.d/ to export variables before the templates are rendered).
SHELL_SUFFIXES = SCRIPT_SUFFIXES


def looks_like_script(path: Path, text: str) -> bool:
    """A shell script by its suffix, or any file starting with `#!`: not an nginx config."""
    return path.suffix.lower() in SHELL_SUFFIXES or text.startswith("#!")


@dataclass(frozen=True)
class _Line:
    """One logical line of the script: its words and the physical lines it spans."""

    words: list[str]
    first: int
    last: int
    #: Ended by a lone `&`: the shell runs it in the background and goes on.
    background: bool = False
    #: Which pass of a `for` loop over literal words runs it (`_unrolled`): 0 outside one.
    iteration: int = 0
    #: The arguments of the function call that runs it (its `$1`, `$2`), () outside one.
    arguments: tuple[str, ...] = ()
    #: The line of the head of the function it is read in when no line calls that function
    #: (read where it is written: `_inline_functions`), 0 otherwise.
    uncalled_in: int = 0


#: A here-document (`python << END`, `cat <<-'EOF'`): its body is data, not commands.
_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def _substitutions(text: str) -> tuple[str, dict[str, str]]:
    """`text` with each command substitution `$(...)` outside single quotes (not an
    arithmetic `$((...))`) replaced by a placeholder word, and the placeholders' texts: the
    shell runs what is inside in a subshell, so its `||` and spaces split nothing here."""
    kept: dict[str, str] = {}
    out: list[str] = []
    quoting, index = _Quoting(), 0
    while index < len(text):
        char = text[index]
        if (
            char == "$"
            and quoting.quote != "'"
            and not quoting.escaped
            and text.startswith("$(", index)
            and not text.startswith("$((", index)
        ):
            depth, end = 0, index + 1
            while end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
                end += 1
            if depth == 0:
                key = f"__servertune_substitution_{len(kept)}__"
                kept[key] = text[index : end + 1]
                out.append(key)
                index = end + 1
                continue
        quoting.code(char)
        out.append(char)
        index += 1
    return "".join(out), kept


#: A whole line that is one subshell group, `( list )`, maybe run in the background (not an
#: arithmetic `(( ... ))`).
_SUBSHELL = re.compile(r"\A\s*\((?!\()(?P<body>.*)\)(?P<tail>\s*&?\s*)\Z", re.S)


#: One alternative of a `case` arm's patterns: quoted, or a word of glob characters.
_ARM_WORD = r"(?:\"[^\"$`]*\"|'[^']*'|[^\s|()'\";&$`]+)"
#: A `case` arm's patterns at the start of a line (`"prod"|"staging")`, `web | api )`).
_CASE_ARM = re.compile(rf"\A\s*\(?\s*(?P<patterns>{_ARM_WORD}(?:\s*\|\s*{_ARM_WORD})*)\s*\)")
_ARM_ALTERNATIVE = re.compile(_ARM_WORD)


def _split(path: Path, start: int, text: str) -> list[tuple[list[str], bool]]:
    """The simple commands of one logical line (split at `;`, `&&`, `||`, `|`, `&`), each
    with whether a lone `&` ends it (run in the background); a command substitution `$(...)`
    stays in the word that holds it."""
    text, substituted = _substitutions(text) if "$(" in text else (text, {})
    if substituted:
        return [
            ([_restored(w, substituted) for w in words], background)
            for words, background in _split(path, start, text)
        ]
    text = without_comments(text)
    arm = _CASE_ARM.match(text)
    if arm is not None and ("|" in arm["patterns"] or arm["patterns"][:1] in ("'", '"')):
        # `"prod"|"staging")`: one `case` arm's patterns, not a pipeline: one word.
        patterns = "|".join(
            p.strip().strip("'\"") for p in _ARM_ALTERNATIVE.findall(arm["patterns"])
        )
        text = shlex.quote(f"{patterns})") + text[arm.end() :]
    group = _SUBSHELL.match(text)
    if group is not None:
        # `(set -x; exec gunicorn ...)`: the list runs in a subshell; its commands are read
        # as written (the parentheses are no part of any word).
        text = f"{group['body']}{group['tail']}"
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as error:  # an unclosed quote
        raise CheckInputError(f"{path}:{start}: cannot split as the shell does: {error}") from None
    commands: list[list[str]] = [[]]
    background: list[bool] = [False]
    braced = _without_redirections(list(_braced(tokens)))
    test = False  # inside `[[ ... ]]`, whose `&&` / `||` join operands, not commands
    for index, token in enumerate(braced):
        if token in ("[[", "]]"):
            test = token == "[["
        if token and set(token) <= set(";&|") and not (test and token in ("&&", "||")):
            after = braced[index + 1] if index + 1 < len(braced) else ""
            before = braced[index - 1] if index else ""
            # `2>&1`, `>&2`, `&>file` are redirections, not a background `&`.
            redirect = token == "&" and (before.endswith((">", "<")) or after.startswith(">"))
            background[-1] = token == "&" and not redirect
            commands.append([])
            background.append(False)
        else:
            commands[-1].append(token)
    return [(c, b) for c, b in zip(commands, background, strict=True) if c]


def _restored(word: str, substituted: Mapping[str, str]) -> str:
    for key, value in substituted.items():
        word = word.replace(key, value)
    return word


def _lines_run(
    path: Path,
    text: str,
    logical: list[_Line],
    physical: list[str],
    env: Mapping[str, str] | None,
    arguments: list[Word] | None,
    find_config: FindConfig | None,
) -> tuple[list[_Line], list[_Line] | None, _Assumption, set[int]]:
    """(the lines that run with the script's known first argument and fixed variables
    (`_selected`), without a development switch no file sets (`_without_development_switch`),
    the lines that would run with the image's own default CMD as its
    arguments, None when the arguments are not that CMD, and those that run when the
    variables no file sets are also unset; and the `if` lines whose chain the files decide)."""
    fixed, unknown, unset = _fixed_variables(text, logical, env, find_config)
    names = frozenset(env or ())
    files = _FileTests(find_config)
    decided: set[int] = set()
    lines = _selected(
        logical, arguments, physical, fixed, unknown, names, files=files, decided=decided
    )
    more = _fixed_where_run(env, fixed, logical, lines, text)
    if more:
        fixed = {**fixed, **more}
        decided.clear()
        lines = _selected(
            logical, arguments, physical, fixed, unknown, names, files=files, decided=decided
        )
    # A source not here may set any name: the unset ones are then not even assumed so.
    defaults = {} if unknown else _own_defaults(text, logical)
    unset_tests = _Branches(_as_words({} if unknown else {**unset, **defaults}), physical)
    lines = _without_development_switch(path, lines, names, unset_tests, set(defaults), decided)
    assumed = _Assumption(lines, {})
    if env is None:
        unset = _alone_unset(text, logical, find_config)
    if unset:
        assumed.lines = _selected(
            lines,
            arguments,
            physical,
            fixed,
            unknown,
            names,
            (unset, assumed.taken),
            files,
            assumed.settled,
        )
        assumed.settled -= decided
        assumed.unset = frozenset(unset)
    if not arguments or not is_dockerfile(arguments[0].at.file):
        return lines, None, assumed, decided
    given = [Word(w.text, Location(Path("command"), w.at.line)) for w in arguments]
    # A chain the image's own CMD decides: read as before (a deployment's command may not).
    by_default = _selected(
        lines, given, physical, fixed, unknown, names, files=files, decided=decided
    )
    return lines, by_default, assumed, decided


@dataclass
class _Assumption:
    """The lines that run when the variables no file sets (and the container may) are
    unset, and the head of the branch each runs in when that decided it (by `id` of the
    line): the choice among a script's several server lines when nothing else decides it,
    (`chosen`), never a reason to drop a server."""

    lines: list[_Line]
    taken: dict[int, _Line]
    chosen: bool = False
    #: `id` of each `if` line whose chain only taking those variables unset decides.
    settled: set[int] = field(default_factory=set)
    unset: frozenset[str] = frozenset()

    def head(self, line: _Line) -> _Line | None:
        """The branch head that took `line`, when the server was chosen so."""
        return self.taken.get(id(line)) if self.chosen else None


class _AssumedOut:
    """The lines of the branches an `if` chain does not take when the variables no file
    here sets (not the script, not the container's environment read) are unset, in a chain
    only that decides (`_Assumption.settled`): the image run as it is, as `docker run IMAGE`
    runs it, takes that one branch, so what the others assign is not read, and a value the
    branches set apart is the taken one's, not unresolved (thunderbird/thunderbird-accounts:
    `if [[ "$TBA_CELERY" == "yes" ]]; then CMD="uv run celery ..."; else CMD="uv run uvicorn
    ..."; fi; $CMD`). A note names the variables so taken where that left a value out. A
    chain with a server line in a branch so left out is read as before: choosing among
    several servers is `_one_server`'s, which names the branch it assumed."""

    def __init__(
        self, path: Path, lines: list[_Line], physical: list[str], assumed: _Assumption
    ) -> None:
        self.path = path
        self.settled = set(assumed.settled)
        kept = {id(line) for line in assumed.lines}
        self.chain_of: dict[int, _Line] = {}  # a line left out: its outermost such `if`
        self.tested: dict[int, set[str]] = {}  # such an `if`: the unset names its tests read
        self.said: dict[int, _Line] = {}
        chains: list[_Line] = []
        for line in lines:
            head = line.words[:1]
            case = head == ["case"] and line.words[-1:] == ["in"]
            if head == ["if"] or case:
                chains.append(line)
            tests = head in (["if"], ["elif"]) or case
            if tests and chains and id(chains[-1]) in self.settled:
                names = {n for w in line.words for n in re.findall(r"\$\{?(\w+)", w)}
                self.tested.setdefault(id(chains[-1]), set()).update(names & assumed.unset)
            outer = next((c for c in chains if id(c) in self.settled), None)
            if outer is not None and id(line) not in kept:
                self.chain_of[id(line)] = outer
            if head in (["fi"], ["esac"]) and chains:
                chains.pop()
        serving = {
            id(self.chain_of[id(line)])
            for line in lines
            if id(line) in self.chain_of and server_command(_words(line, physical, path))
        }
        self.settled -= serving
        self.chain_of = {k: c for k, c in self.chain_of.items() if id(c) not in serving}

    def decided(self, line: _Line, decided: set[int]) -> bool:
        """Whether only the branch the `if` at `line` takes is read."""
        return id(line) in decided or id(line) in self.settled

    def out(self, line: _Line) -> bool:
        """Whether `line` is in a branch left out so (its assignments not read)."""
        chain = self.chain_of.get(id(line))
        if chain is not None and any(_assigns(w) for w in line.words):
            self.said[id(chain)] = chain
        return chain is not None

    def say(self) -> None:
        """A note at each `if` whose branch left out assigned a value."""
        for key, chain in self.said.items():
            names = sorted(self.tested.get(key, ()))
            if not names:
                continue
            them = "it" if len(names) == 1 else "them"
            note(
                "server-chosen",
                Location(self.path, chain.first),
                f"{', '.join(names)} taken as unset: neither the script nor the environment "
                f"it is started with here sets {them}, so the `{chain.words[0]}` at line "
                f"{chain.first} is "
                f"read as the image run as it is runs it; a deployment that sets {them} runs "
                "another branch",
            )


def _one_server(
    path: Path,
    commands: list[tuple[_Line, ServerCommand, dict[str, str]]],
    by_default: list[_Line] | None = None,
    assumed: _Assumption | None = None,
) -> list[tuple[_Line, ServerCommand, dict[str, str]]]:
    """The one server of a script with several server command lines: the same server with the
    same arguments (the two branches of an `if`, one under `s6-setuidgid`) is one; different
    ones (a development branch and a production one) are read as the one the image's own CMD
    selects (`by_default`: `CMD ["server"]` runs the `server)` arm, not a test arm's
    `gunicorn ... &`), else as the one that runs when the variables no file sets are unset
    (`assumed`: a deployment that sets none of them), else as the last, which scripts put in
    the `else` / fall-through, and the others named in a coverage note."""
    chosen = [c for c in commands if any(c[0] is line for line in by_default or ())]
    if not chosen and assumed is not None:
        chosen = [c for c in commands if any(c[0] is line for line in assumed.lines)]
        assumed.chosen = 0 < len(chosen) < len(commands)
        chosen = chosen if assumed.chosen else []
    if chosen:
        # The image's CMD's arm last, where the rule below reads; first when all are one.
        commands = [c for c in commands if c not in chosen] + chosen[-1:]
    first = commands[-1][1] if chosen else commands[0][1]

    def same(command: ServerCommand) -> bool:
        return command.server == first.server and [w.text for w in command.args] == [
            w.text for w in first.args
        ]

    if all(same(c) for _, c, _ in commands):
        return commands[-1:] if chosen else commands[:1]
    kept = commands[-1]
    why = assumed is not None and assumed.chosen
    library = all(line.uncalled_in for line, _, _ in commands)
    others = ", ".join(f"{c.server} at line {line.first}" for line, c, _ in commands[:-1])
    note(
        "server-chosen",
        Location(path, kept[0].first),
        f"starts a server on more than one path ({others}; {kept[1].server} at line "
        f"{kept[0].first}): which runs depends on the script's tests at run time; read the "
        f"one at line {kept[0].first}"
        + (f", {ASSUMED_UNSET}" if why else "")
        + (f", {UNCALLED}" if library else ""),
    )
    return [kept]


@dataclass
class _Quoting:
    """The shell's quotes, read one character at a time: a `'` inside double quotes and a `"`
    inside single ones are literal; a backslash escapes the next character outside single
    quotes."""

    quote: str = ""
    escaped: bool = False

    def code(self, char: str) -> bool:
        """Whether `char` is read as code (outside quotes, not escaped, not a quote mark),
        the state moved past it."""
        if self.escaped:
            self.escaped = False
        elif char == "\\" and self.quote != "'":
            self.escaped = True
        elif self.quote:
            if char == self.quote:
                self.quote = ""
        elif char in "'\"":
            self.quote = char
        else:
            return True
        return False


def _open_quote(text: str) -> bool:
    """Whether `text` ends inside a quoted string, as the shell reads quotes (`_Quoting`)."""
    quoting = _Quoting()
    for char in text:
        if quoting.code(char) and char == "#":
            break  # a comment: quotes in it mean nothing (a `#` inside a word is rare)
    return bool(quoting.quote)


def _logical_lines(path: Path, text: str) -> list[_Line]:
    """Each simple command of the script, with the physical lines it spans; continued lines
    joined, here-document bodies skipped. Split once per run for each file and text (`memo`):
    a script is read again for every chain that runs it and every function it sources
    (CMSgov/bluebutton-web-server's scripts were split 344 times)."""
    split = memo.recall(
        memo.run_table("script lines"), (path, text), lambda: tuple(_split_lines(path, text))
    )
    return list(split)


def _split_lines(path: Path, text: str) -> list[_Line]:
    """`_logical_lines`, worked out."""
    lines: list[_Line] = []
    physical = text.splitlines()
    start, parts = 0, list[str]()
    heredoc: tuple[str, bool] | None = None
    outputs = _program_functions(physical) if "$(" in text or "`" in text else {}
    for number, raw in enumerate(physical, start=1):
        if heredoc is not None:
            delimiter, strip = heredoc
            if (raw.lstrip("\t") if strip else raw) == delimiter:
                heredoc = None
            continue
        if not parts:
            start = number
        # A backslash at the end continues the command (an even run of them is literal).
        trailing = len(raw) - len(raw.rstrip("\\"))
        if trailing % 2 == 1:
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        joined = " ".join(parts)
        if (_open_quote(joined) or _open_array(joined)) and number < len(physical):
            # A quoted string that spans lines (`echo "...` then `..."`): the shell reads on
            # to its closing quote, so the command goes on (newline kept inside the quotes).
            parts = ["\n".join(parts)]
            continue
        parts = []
        # (A comment line's `<< END`, `# python << END`, opens no here-document.)
        found = None if joined.lstrip().startswith("#") else _HEREDOC.search(joined)
        if found is not None:
            heredoc = (found[3], found[1] == "-")
            joined = joined[: found.start()] + joined[found.end() :]
        joined = _LOOKUP.sub(lambda m: m["name"] or m["tick"], joined)
        if outputs:
            joined = _OUTPUT_CALL.sub(lambda m: outputs.get(m["call"] or m["tick"], m[0]), joined)
        joined = _array_words(joined, physical[start - 1 : number], start)
        for words, background in _split(path, start, joined):
            if words[:1] == ["else"] and words[1:]:
                # `else if [ "$1" = serve ]; then` (an `if` nested in the `else`, closed by
                # its own `fi`) or `else exec "$@"`: the `else`, then the command it runs.
                lines.append(_Line(["else"], start, number))
                words = words[1:]
            lines.append(_Line(words, start, number, background))
    return lines


#: A bash array assignment's start (`ARGS=(`, `ARGS+=(`, after `local`, `declare -a`, ...).
_ARRAY_START = re.compile(
    r"\A\s*(?:(?:export|local|readonly|declare|typeset)(?:\s+-[A-Za-z]+)*\s+)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<plus>\+?)=\("
)
#: The words a bash array assignment becomes (`ARGS[@]=<its elements, quoted>` and
#: `ARGS[#]=<the line of each>`): names no shell variable can have, so the script's own
#: variables and the environment never meet them.
_ARRAY_WORD = re.compile(r"\A(?P<name>[A-Za-z_][A-Za-z0-9_]*)\[(?P<part>[@#])\](?P<plus>\+?)=")
#: A whole word expanding an array to its elements: `"${ARGS[@]}"`, `${ARGS[*]}`.
_ARRAY_EXPANSION = re.compile(r"\A\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}\Z")


def _array_end(text: str, start: int) -> int | None:
    """Where the `)` closing the array opened before `start` is, reading quotes, comments and
    `$(...)` as the shell does; None while it is still open."""
    quoting, depth, index = _Quoting(), 0, start
    while index < len(text):
        char = text[index]
        if not quoting.code(char):
            pass
        elif char == "#" and (index == start or text[index - 1].isspace()):
            newline = text.find("\n", index)
            if newline < 0:
                return None
            index = newline
        elif char == "(":
            depth += 1
        elif char == ")":
            if not depth:
                return index
            depth -= 1
        index += 1
    return None


def _open_array(text: str) -> bool:
    """Whether `text` starts a bash array whose `)` is on a later line (one element a line)."""
    found = _ARRAY_START.match(text)
    return found is not None and _array_end(text, found.end()) is None


def _array_words(text: str, physical: list[str], first: int) -> str:
    """A bash array assignment (`ARGS=(--bind "$ADDR" --workers 4)`) as the two words
    `_assignments` reads, the rest of the line kept; other text as it is. Bash keeps each
    element one word, as quoted: the elements are split here, once."""
    found = _ARRAY_START.match(text)
    if found is None:
        return text
    end = _array_end(text, found.end())
    if end is None:
        return text
    try:
        elements = shlex.split(text[found.end() : end], comments=True)
    except ValueError:
        return text
    lines = [
        next((first + n for n, line in enumerate(physical) if element in line), first)
        for element in elements
    ]
    name, plus = found["name"], found["plus"]
    values = shlex.quote(f"{name}[@]{plus}=" + shlex.join(elements))
    at = shlex.quote(f"{name}[#]{plus}=" + " ".join(map(str, lines)))
    return f"{values} {at}{text[end + 1 :]}"


def _assign_array(words: list[str], env: dict[str, str]) -> None:
    """`ARGS=(...)` / `ARGS+=(...)` as `_array_words` wrote them: the elements, each expanded
    from the variables known at that line (an element not known here makes the array not
    known), kept under `ARGS[@]` and their lines under `ARGS[#]`; `$ARGS` is the first."""
    for word in words:
        found = _ARRAY_WORD.match(word)
        if found is None:
            continue
        name, part, plus = found["name"], found["part"], found["plus"]
        key = f"{name}[{part}]"
        value = word[found.end() :]
        if part == "#":
            if f"{name}[@]" in env:
                env[key] = f"{env[key]} {value}".strip() if plus and key in env else value
            continue
        expanded = [expand_shell(element, env) for element in shlex.split(value)]
        if any(element is None for element in expanded):
            for gone in (key, f"{name}[#]", name):
                env.pop(gone, None)
            return
        before = shlex.split(env[key]) if plus and key in env else []
        if plus and key not in env and name in env:
            before = [env[name]]  # `+=` on a plain variable makes it the array's first element
        elements = [*before, *(e for e in expanded if e is not None)]
        env[key] = shlex.join(elements)
        if elements:
            env[name] = elements[0]


def _expand_arrays(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """`"${ARGS[@]}"` / `${ARGS[*]}` replaced by the array's elements, each at the line that
    writes it, as bash expands them; `${ARGS}` when no array of that name is known here."""
    expanded: list[Word] = []
    for word in words:
        found = _ARRAY_EXPANSION.match(word.text)
        elements = env.get(f"{found['name']}[@]") if found is not None else None
        if found is None:
            expanded.append(word)
            continue
        if elements is None:
            # Not an array here: a plain variable's value, or one only the running script
            # knows (said as such, as `$NAME` would be).
            expanded.append(Word(f"${{{found['name']}}}", word.at))
            continue
        lines = env.get(f"{found['name']}[#]", "").split()
        for index, element in enumerate(shlex.split(elements)):
            line = int(lines[index]) if index < len(lines) else word.at.line
            expanded.append(Word(element, Location(word.at.file, line)))
    return expanded


def _known_fields(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """An unquoted `$OPTS` after the program, whose value the script sets from variables
    known only when it runs (`OPTS="-p 2 --harakiri $UWSGI_HARAKIRI"`): the fields the shell
    splits it into, each unknown one kept as written (said unresolved, its option with it); a
    command substitution in it (`--name app_$(echo $X | cut -d . -f 3)`) stays in the one
    field that holds it, its output known only when it runs."""
    fields: list[Word] = []
    for index, word in enumerate(words):
        found = _LONE_EXPANSION.match(word.text) if index else None
        name = word.text.strip("${}").partition(":")[0] if found else ""
        partial = env.get(f"{name}[~]") if found and expand_shell(word.text, env) is None else None
        protected, substituted = _substitutions(partial) if partial is not None else ("", {})
        try:
            split = shlex.split(protected) if partial is not None else None
        except ValueError:
            split = None
        if split is not None:
            split = [_restored(w, substituted) for w in split]
        if split is None:
            fields.append(word)
        else:
            fields.extend(Word(w, word.at) for w in split)
    return fields


#: A slice of the script's arguments: `"${@:2}"`, `${*:1:3}`.
_ARGUMENT_SLICE = re.compile(r"\A\$\{[@*]:(?P<start>\d+)(?::(?P<length>\d+))?\}\Z")


def _argument_slices(words: list[Word], arguments: list[Word] | None) -> list[Word]:
    """`"${@:2}"`: the script's arguments from the second on, when they are known; else
    `"$@"`, the arguments only its caller knows (said so, never refused)."""
    sliced: list[Word] = []
    for word in words:
        found = _ARGUMENT_SLICE.match(word.text)
        if found is None:
            sliced.append(word)
        elif arguments is None:
            sliced.append(Word("$@", word.at))
        else:
            start = max(int(found["start"]) - 1, 0)  # `${@:0}` starts with $0, not an argument
            end = start + int(found["length"]) if found["length"] is not None else None
            sliced.extend(arguments[start:end])
    return sliced


def _positional_values(words: list[Word], arguments: list[Word] | None) -> list[Word]:
    """`--bind $1` with the script's arguments known (an image's `CMD ["0.0.0.0:80"]` after
    its ENTRYPOINT script, a compose `command`): `$1`, `${2}` are those words; one past them,
    or arguments only the caller knows, are left as written (unknown here)."""
    if not arguments or any("$" in a.text for a in arguments):
        return words
    texts = [a.text for a in arguments]

    def one(match: re.Match[str]) -> str:
        index = int(match[1] or match[2])
        return texts[index - 1] if index <= len(texts) else match[0]

    return [replace(w, text=_POSITIONAL.sub(one, w.text)) if "$" in w.text else w for w in words]


def _own_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The script's environment without the arrays' bookkeeping (`ARGS[@]`), for the server."""
    return {k: v for k, v in env.items() if "[" not in k}


#: A command word the shell finds on the PATH first: `$(command -v uwsgi)`, `$(which
#: gunicorn)`, `` `which uwsgi` ``: it runs that program, as the name alone would.
_LOOKUP = re.compile(
    r"\$\(\s*(?:command\s+-v|which)\s+(?P<name>[\w.-]+)\s*\)"
    r"|`\s*(?:command\s+-v|which)\s+(?P<tick>[\w.-]+)\s*`"
)


#: A function's output taken as a word: `$(select_gunicorn)`, `` `select_gunicorn` ``.
_OUTPUT_CALL = re.compile(
    r"\$\(\s*(?P<call>[A-Za-z_][\w-]*)\s*\)|`\s*(?P<tick>[A-Za-z_][\w-]*)\s*`"
)
#: A function definition's first line: `name() {`, `function name {`, `function name() {`.
_FUNCTION_LINE = re.compile(
    r"\A\s*(?:function\s+)?(?P<name>[A-Za-z_][\w-]*)\s*(?:\(\s*\))?\s*\{\s*\Z"
)
#: A line that prints: where a function's output comes from.
_PRINTS = re.compile(r"\b(?:echo|printf|cat)\b")


def _program_functions(physical: Sequence[str]) -> dict[str, str]:
    """The functions whose output is a program's name: every line of the body that prints is
    `echo WORD`, each WORD naming the same program (`echo gunicorn` or `echo
    "${BASE_DIR}/venv/bin/gunicorn"` on the two arms of an `if`), so `bin=$(select_gunicorn)`
    runs that program whichever arm the running shell takes. Other functions: not known."""
    found: dict[str, str] = {}
    index = 0
    while index < len(physical):
        head = _FUNCTION_LINE.match(physical[index])
        index += 1
        if head is None or head["name"] in ("if", "while", "for", "until"):
            continue
        programs: set[str] = set()
        plain = True
        while index < len(physical) and physical[index].strip() != "}":
            line = physical[index].strip()
            index += 1
            if line.startswith("#") or not _PRINTS.search(line):
                continue
            try:
                words = shlex.split(line)
            except ValueError:
                words = []
            if len(words) != 2 or words[0] != "echo" or words[1].startswith("-"):
                plain = False
                continue
            programs.add(PurePosixPath(words[1]).name)
        if plain and len(programs) == 1 and "$" not in (program := programs.pop()):
            found[head["name"]] = program
    return found


def _arm(line: _Line) -> list[str] | None:
    """The arguments of a per-worker `case` arm: `N) set -- --host H --port P ;;`."""
    words = line.words
    if len(words) < 3 or not _WORKER_ARM.match(words[0]) or words[1:3] != ["set", "--"]:
        return None
    args = list(words[3:])
    if args and args[-1].endswith(";;"):
        args[-1] = args[-1][:-2]
        if not args[-1]:
            args.pop()
    return args


def _words(line: _Line, physical: list[str], path: Path) -> list[Word]:
    """The line's words, each on the first physical line (of those it spans) that holds it."""
    words = []
    for text in line.words:
        number = next(
            (n for n in range(line.first, line.last + 1) if text in physical[n - 1]), line.first
        )
        words.append(Word(text, Location(path, number)))
    return words


#: `${NAME:=word}` / `${NAME=word}`: the shell assigns `word` to NAME when it is unset (with
#: `:`, also when empty); a script's `: "${PORT:=8000}"` line sets its defaults so.
_ASSIGN_DEFAULT = re.compile(r"\A\$\{([A-Za-z_][A-Za-z0-9_]*)(:?)=([^}]*)\}\Z")


#: A value that is the script's arguments and nothing else: `$*`, `$@`, `${*}`, `${@}`.
_ARGUMENTS_ONLY = re.compile(r"\A\$(?:[@*]|\{[@*]\})\Z")
#: A positional parameter left in a value once the known arguments are put in (`$2`, `${1}`,
#: `${1:-web}`): the script's caller gives it, so the value is not known here.
_UNKNOWN_ARGUMENT = re.compile(r"\$(?:[1-9]|\{[1-9][0-9]*[:}=+?-])")
#: The builtins that assign the variables written after them.
_DECLARING = frozenset({"export", "local", "readonly", "declare", "typeset"})


def _assignments(line: _Line, env: dict[str, str], script: Path | None = None) -> None:
    """`VAR=value` / `export VAR=value` lines, and `: "${VAR:=value}"` ones: the script's own
    variables, for what follows; a value that is the folder of `script` (`$(dirname "$0")`)
    is that folder where it is known (`script_folder.own_folder`)."""
    if line.words[:1] == [":"]:
        for word in line.words[1:]:
            found = _ASSIGN_DEFAULT.match(word)
            if found is None:
                continue
            name, colon, value = found.groups()
            if name not in env or (colon and not env[name]):
                expanded = expand_shell(value, env)
                if expanded is not None:
                    env[name] = expanded
        return
    if line.words and all(_ARRAY_WORD.match(w) for w in line.words):
        _assign_array(line.words, env)
        return
    words = line.words
    if words[:1] and words[0] in _DECLARING:
        # `export`, and a function's `local workers=3`, `readonly`, `declare -x` alike.
        words = [w for w in words[1:] if not w.startswith("-")]
    if not words or not all(_ASSIGNMENT.match(w) for w in words):
        return
    for word in words:
        name, _, value = word.partition("=")
        if _UNKNOWN_ARGUMENT.search(value):
            # `PORT="$2"` in an option loop (`case $1 in --port) PORT="$2"; shift 2;;`) with
            # the script's arguments unknown: the value is the caller's, unknown, never the
            # text `$2` (IBM/mcp-context-forge's run.sh).
            for key in (name, f"{name}[~]", f"{name}[$@]"):
                env.pop(key, None)
            continue
        if _ARGUMENTS_ONLY.match(value):
            # `cmd="$*"`: the script's arguments, known only to its caller (never the text
            # `$*`). Inside a longer value (`cmd="exec gunicorn app $@"`) `$@` stays, as the
            # caller's arguments a later line passes on.
            env.pop(name, None)
            env.pop(f"{name}[~]", None)
            env[f"{name}[$@]"] = ""  # a later `exec $cmd` runs the arguments: `exec "$@"`
            continue
        own = own_folder(script, value, relative=True) if script is not None else None
        if own is None:
            # `ROOT_DIR=$(dirname "$(dirname "$BASE_DIR")")`: a folder of a known path.
            own = computed_folder(value, lambda word: expand_shell(word, env))
        expanded = own if own is not None else expand_shell(value, env)
        if expanded is not None:
            env[name] = real_path(expanded)
            env.pop(f"{name}[~]", None)
            env.pop(f"{name}[$@]", None)
        else:
            # Known in part (`OPTS="-p 2 --harakiri $UWSGI_HARAKIRI"`): kept apart, for the
            # fields an unquoted `$OPTS` on a command line splits into (`_known_fields`).
            # A variable known in part is its known part here too (`A="$A --more $X"`).
            parts = {k[:-3]: v for k, v in env.items() if k.endswith("[~]")}
            env[f"{name}[~]"] = expand_known(value, {**env, **parts})
            env.pop(name, None)


def command_line(path: Path, text: str) -> tuple[str, list[str]]:
    """The server and the arguments of the script's one server command line, as the shell
    splits them (`read_script` checks them with the server's own parser)."""
    physical = text.splitlines()
    for line in _logical_lines(path, text):
        found = server_command(_words(line, physical, path))
        if found is not None:
            return found.server, [w.text for w in found.args]
    raise NothingToCheck(f"{path}: {_NO_SERVER}")


_NO_SERVER = f"no command line of {SERVERS_READ} in this script"


def read_script(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    arguments: list[Word] | None = None,
    find_config: FindConfig | None = None,
    env_at: Mapping[str, Location] | None = None,
    *,
    uncalled: bool = True,
) -> AppServer:
    """The server the script starts (the one `exec gunicorn ...` / `uvicorn ...` line), read
    by that server's own parser; `arguments` are the script's `"$@"` (an image's `CMD` after
    an `ENTRYPOINT` script), unknown when None; without `uncalled`, a function no line calls
    is not read (a sourced file run up to the call of one of its functions)."""
    physical = text.splitlines()
    split = _function_by_arguments(_logical_lines(path, text), arguments)
    logical = _unrolled(_inline_functions(split, uncalled=uncalled))
    lines, by_default, assumed, decided = _lines_run(
        path, text, logical, physical, env, arguments, find_config
    )
    environment = dict(os.environ if env is None else env)
    commands: list[tuple[_Line, ServerCommand, dict[str, str]]] = []
    passing: _Line | None = None  # the first line that runs the arguments, once expanded
    making = _Making(path, physical, env is not None, find_config)
    making.sourced = _sourced_functions(path, logical, find_config, env or {})
    branching = _ArgumentsByBranch()
    blocks = BlockValues()
    known: set[int] = set()  # the lines whose `$PROGRAM` was known where they ran
    skipped = _AssumedOut(path, lines, physical, assumed)
    for line in lines:
        blocks.step(line.words, line.first, skipped.decided(line, decided), environment)
        words = _line_words(line, physical, path, environment, arguments)
        found = server_command(_without_empty_prefix(words, environment))
        if found is None:
            found = _alike_on_every_path(line, physical, path, environment, arguments)
        if found is None and _program_known(line, environment):
            known.add(id(line))
        if found is not None:
            if found.directory is None and making.directory is not None:
                found = replace(found, directory=making.directory)
            commands.append((line, found, _own_variables(environment)))
        elif skipped.out(line):
            continue
        else:
            if not commands:
                making.step(line, environment)
            if passing is None and _runs_arguments([w.text for w in words], environment):
                # `exec "${PRE_ARGS[@]}" "$@"` with the array empty here: `exec "$@"`
                passing = line
            _assignments(_argument_values(_past_keywords(line), arguments), environment, path)
            _eval_assignments(line, environment, physical)
            arguments = branching.step(line, arguments)
            if line.words[:2] == ["set", "--"] and _rebinds(line, by_default):
                text = _line_text(line, physical)
                arguments = _positional(words[2:], arguments, environment, text)
            elif line.words[:1] == ["shift"] and arguments is not None:
                # `shift 2` after `COLOR=$1; PREFIX=$2`: "$@" is what follows them.
                count = line.words[1] if len(line.words) > 1 else "1"
                arguments = arguments[int(count) :] if count.isdigit() else None
    if commands:  # a script that starts no server: which branch ran is not worth a note
        skipped.say()
    making.collect()
    find_config = making.find_config()
    if not commands:
        with runtime_files.made_here(making.made):
            return _handed_over(
                path, lines, physical, environment, env_at, arguments, find_config, passing, known
            )
    started, commands = _in_background(commands)
    script = _Script(path, text, lines, physical, arguments, env_at, find_config, assumed)
    daemons, commands = _daemonizing(script, commands)
    arms: list[AppServer] = []
    if len(commands) > 1:
        every = commands
        commands = _one_server(path, commands, by_default, assumed)
        arms = other_arms(script, every, commands[0])
    apps = [_script_app(script, *found) for found in started]
    read = (_script_app(script, *found) for found in commands)
    return with_others([*apps, *daemons, *read, *arms])


def other_arms(
    script: _Script,
    commands: list[tuple[_Line, ServerCommand, dict[str, str]]],
    kept: tuple[_Line, ServerCommand, dict[str, str]],
) -> list[AppServer]:
    """The servers of the branches beside the one read (`kept`, chosen as the one that runs
    when the variables no file sets are unset: `_Assumption`) that a deployment picks by
    setting one of those variables to a word (`server_arms`), each with that condition
    (`AppServer.when`): only another server program (granian beside gunicorn, not the same
    one with other flags), in another branch of the same `if` chain or `case`, and never a
    developer's reloading one (ynput/ayon-backend's start.sh)."""
    assumed = script.assumed
    if not assumed.chosen or not any(kept[0] is line for line in assumed.lines):
        return []
    around = _innermost_branch(script.lines, kept[0])
    arms: list[AppServer] = []
    for line, command, environment in commands:
        if command.server in (kept[1].server, *[a.kind for a in arms]):
            continue
        branch = _innermost_branch(script.lines, line)
        if around is None or branch is None or branch[0] is not around[0]:
            continue
        start, head = branch
        compared = start.words[1] if start.words[:1] == ["case"] else None
        text = _branch_text(head, script.physical) if compared is None else head.words[0]
        tested = branch_value(text, compared)
        when = tested and condition(*tested, script.text, assumed.unset)
        written = " ".join(script.physical[line.first - 1 : line.last])
        if not when or command.server not in SERVER_KINDS or _DEVELOPMENT_SWITCH.search(written):
            continue
        app = _script_app(script, line, command, environment)
        if app.reloads is None:
            arms.append(replace(app, assumed_branch=None, when=when))
    return arms


def _innermost_branch(lines: Sequence[_Line], target: _Line) -> tuple[_Line, _Line] | None:
    """(the `if` or `case` line, the head of its branch or arm) innermost around `target`;
    None when it sits in none."""
    blocks: list[list[_Line]] = []
    for line in lines:
        words = line.words
        head = words[0] if words else ""
        kind = blocks[-1][0].words[0] if blocks else ""
        # A `case` arm's pattern heads the command written after it on its line.
        if kind == "case" and (_CASE_PATTERN.match(head) or words[1:2] == [")"]):
            blocks[-1][1] = line
        if line is target:
            return (blocks[-1][0], blocks[-1][1]) if blocks else None
        if head == "if" or (head == "case" and words[-1:] == ["in"]):
            blocks.append([line, line])
        elif (head, kind) in (("fi", "if"), ("esac", "case")):
            blocks.pop()
        elif kind == "if" and head in ("elif", "else"):
            blocks[-1][1] = line
    return None


def _line_words(
    line: _Line,
    physical: list[str],
    path: Path,
    env: Mapping[str, str],
    arguments: list[Word] | None,
) -> list[Word]:
    """The words the line runs, its variables, arrays, `eval` and arguments expanded."""
    words = _evaluated(_expand_arrays(_words(line, physical, path), env), env)
    words = _known_fields(_command_variable(_after_keywords(words), env), env)
    words = _daemon_program(words, env)
    words = _positional_values(_argument_slices(words, arguments), arguments)
    return _echoed_arguments(words, arguments, env)


def _program_known(line: _Line, env: Mapping[str, str]) -> bool:
    """Whether the line runs a program named by a variable that holds a value here."""
    words = line.words[1:] if line.words[:1] == ["exec"] else line.words
    while words[:1] and words[0] in _KEYWORDS:
        words = words[1:]
    return bool(words and _VARIABLE_PROGRAM.match(words[0]) and expand_shell(words[0], env))


def _alike_on_every_path(
    line: _Line,
    physical: list[str],
    path: Path,
    env: Mapping[str, str],
    arguments: list[Word] | None,
) -> ServerCommand | None:
    """The server the line starts with the values an undecided block's paths give the name it
    expands (`shell_paths.alternatives`), read as the same commands written in those branches
    are (`_one_server`): the same server with the same words on each path is that server
    (`cmd="exec gunicorn ..."`, or `cmd="su app -c '$cmd'"` in an `if`, then `eval "$cmd"`);
    different ones, or values of which only some start a server, are read as the last value
    that starts one (the `else`'s or the one kept when no branch runs), the others named in a
    `server-chosen` note. Values that name different config files stay unknown: which file
    is loaded decides what is checked, and linking one of them may be false."""
    each = alternatives(_line_text(line, physical), env)
    found = [
        server_command(_without_empty_prefix(_line_words(line, physical, path, e, arguments), e))
        for e in each
    ]
    servers = [f for f in found if f is not None]
    if not servers:
        return None
    kept = servers[-1]
    if len(servers) == len(found) and all(_same_command(kept, f) for f in servers):
        return kept
    if len({_config_words(f) for f in servers}) > 1:
        return None
    name = next(k for k in each[0] if k not in env)
    others = "; ".join(
        f"`{e[name]}`" + ("" if f is not None else ", no server read")
        for e, f in zip(each, found, strict=True)
        if f is not kept
    )
    note(
        "server-chosen",
        Location(path, line.first),
        f"starts a server on more than one path: ${name} is a variable "
        f"{unresolved_by_branches(name, env)}: {others}; then "
        f"`{each[found.index(kept)][name]}`, the last that starts {kept.server}, which was read",
    )
    return kept


def _config_words(command: ServerCommand) -> tuple[str, ...]:
    """The words of a command line that name its config file (`-c x.py`, `--ini=x.ini`)."""
    words = [w.text for w in command.args]
    return tuple(
        word
        for index, word in enumerate(words)
        if word.partition("=")[0] in _CONFIG_OPTIONS
        or (index > 0 and words[index - 1] in _CONFIG_OPTIONS)
    )


#: The options that name a server's config file (gunicorn's, uWSGI's, Hypercorn's).
_CONFIG_OPTIONS = frozenset({"-c", "--config", "--ini", "--yaml", "--json", "--xml"})


def _in_background(
    commands: list[tuple[_Line, ServerCommand, dict[str, str]]],
) -> tuple[
    list[tuple[_Line, ServerCommand, dict[str, str]]],
    list[tuple[_Line, ServerCommand, dict[str, str]]],
]:
    """(the servers started with a trailing `&` while the script goes on to start another,
    each once: `gunicorn -c tmp.conf & ... gunicorn -c main.conf & wait` runs both, not one
    or the other; the server lines left to choose from). One server line, or only copies of
    one, is one server as before."""
    distinct = _distinct(commands)
    if len(distinct) < 2:
        return [], commands
    started = [c for c in distinct[:-1] if c[0].background]
    rest = [c for c in commands if not any(c is s for s in started)]
    rest = [c for c in rest if not any(_same_command(c[1], s[1]) for s in started)]
    return started, rest


def _distinct(
    commands: list[tuple[_Line, ServerCommand, dict[str, str]]],
) -> list[tuple[_Line, ServerCommand, dict[str, str]]]:
    """The server lines, each command once (copies of one line in several branches dropped)."""
    distinct: list[tuple[_Line, ServerCommand, dict[str, str]]] = []
    for found in commands:
        if not any(_same_command(found[1], other[1]) for other in distinct):
            distinct.append(found)
    return distinct


def _daemonizing(
    script: _Script, commands: list[tuple[_Line, ServerCommand, dict[str, str]]]
) -> tuple[list[AppServer], list[tuple[_Line, ServerCommand, dict[str, str]]]]:
    """(the servers of the lines that daemonize, by their flags or their config, before the
    script's last server line: `gunicorn -c api.conf.py` with `daemon = True` forks to the
    background and the script goes on to `gunicorn -c admin.conf.py`, so both run, as `&`
    makes them; the server lines left to choose from). A line on another arm of an `if` /
    `case` than the last server line, or beside it across `||`, is an alternative to it, not
    one more server: still chosen between."""
    distinct = _distinct(commands)
    if len(distinct) < 2:
        return [], commands
    last = distinct[-1][0]
    daemons: list[AppServer] = []
    kept: list[tuple[_Line, ServerCommand, dict[str, str]]] = []
    for found in distinct[:-1]:
        if _alternatives(script, found[0], last):
            continue
        app = _read_quietly(script, found)
        if app is not None and app.daemonizes is not None:
            daemons.append(app)
            kept.append(found)
    rest = [c for c in commands if not any(_same_command(c[1], k[1]) for k in kept)]
    return daemons, rest


def _read_quietly(
    script: _Script, found: tuple[_Line, ServerCommand, dict[str, str]]
) -> AppServer | None:
    """The server one line starts, its notes recorded only when it is kept (a line that
    turns out not to daemonize is chosen among the others, and read again if chosen); None
    when it cannot be read (the reading that keeps it says why)."""
    try:
        with collect_notes() as notes:
            app = _script_app(script, *found)
    except (CheckInputError, NothingToCheck, NotFollowed):
        return None
    if app.daemonizes is not None:
        for each in notes:
            note(each.kind, each.at, each.message, each.fix)
    return app


def _alternatives(script: _Script, one: _Line, other: _Line) -> bool:
    """Whether the two lines are on different arms of one `if` / `case` block (each open
    block as its head and the arm being read), or on one physical line joined by `||`."""
    if one.first == other.first:
        return "||" in script.physical[one.first - 1]
    stack: list[list[int]] = []  # each open block: [id of its head, index of its arm]
    seen: dict[int, list[tuple[int, int]]] = {}
    for line in script.lines:
        head = line.words[0] if line.words else ""
        if head in ("if", "case") and (head == "if" or line.words[-1:] == ["in"]):
            stack.append([id(line), 0])
        elif head in ("fi", "esac") and stack:
            stack.pop()
        elif stack and (
            head in ("elif", "else") or _CASE_PATTERN.match(head) or line.words[1:2] == [")"]
        ):
            stack[-1][1] += 1
        if line is one or line is other:
            seen[id(line)] = [(b[0], b[1]) for b in stack]
    heads = [dict(seen.get(id(one), [])), dict(seen.get(id(other), []))]
    return any(arm != heads[1].get(block, arm) for block, arm in heads[0].items())


def _same_command(one: ServerCommand, other: ServerCommand) -> bool:
    return one.server == other.server and [w.text for w in one.args] == [w.text for w in other.args]


@dataclass(frozen=True)
class _Script:
    """What reading one server line of a script needs of the whole script."""

    path: Path
    text: str
    lines: list[_Line]
    physical: list[str]
    arguments: list[Word] | None
    env_at: Mapping[str, Location] | None
    find_config: FindConfig | None
    assumed: _Assumption


def _script_app(
    script: _Script, line: _Line, command: ServerCommand, environment: dict[str, str]
) -> AppServer:
    """The server one server line of the script starts, read by the server's own parser."""
    path, lines, physical, arguments = script.path, script.lines, script.physical, script.arguments
    env_at, find_config, text, assumed = (
        script.env_at,
        script.find_config,
        script.text,
        script.assumed,
    )
    holes = [i for i, w in enumerate(command.args) if w.text == "$@"]
    # Every arm, also where the environment picks one (`SERVERTUNE_WORKER=0`): the arms are
    # the instances of one layout, each started with its own value.
    every = _logical_lines(path, text) if holes else []
    arms = [(arm_line, arm) for arm_line in every if (arm := _arm(arm_line)) is not None]
    if holes and arms and command.server in SERVERS:
        return _per_worker(path, command, holes[0], arms, environment)
    if holes and arguments is not None:
        hole = holes[0]
        command = replace(
            command, args=(*command.args[:hole], *arguments, *command.args[hole + 1 :])
        )
    app = read_command(path, command, environment, env_at, shell=True, find_config=find_config)
    # execline (s6-overlay's run scripts) chain-loads: each program execs into the rest of the
    # line, so the server is the process s6 signals, never a shell's child.
    # An `eval "$cmd"` runs the text built in variables: it execs when that text starts with
    # `exec`, and is the shell's child when it does not (its fix: `eval exec $cmd`); when the
    # text is not known here, neither is whether it execs.
    chained = bool(_EXECLINE.match(text)) or _evaluated_execs(line, physical, path, environment)
    # A config that daemonizes it (`daemon = True`) detaches it as `-D` on the line does.
    daemon = app.daemonizes is not None
    detached = _detached(line, lines, daemon)
    return replace(
        app,
        without_exec=None if chained or daemon else _without_exec(line, lines, command, physical),
        backgrounded=None if detached else _backgrounded(line, lines, command, physical, daemon),
        detached=_line_setting(line, command, physical) if detached else None,
        substrings=_substrings(command),
        assumed_branch=_assumed_branch(path, lines, line, physical, arguments, assumed.head(line)),
    )


def _evaluated_execs(
    line: _Line, physical: list[str], path: Path, environment: Mapping[str, str]
) -> bool:
    """Whether an `eval` line hands the process over: the text it evaluates starts with
    `exec`, or is not known here (then that is not known either); False for any other line."""
    if line.words[:1] != ["eval"]:
        return False
    written = _expand_arrays(_words(line, physical, path), environment)
    words = _evaluated(written, environment)
    return not words or words[0].text in ("eval", "exec")


def _assumed_branch(
    path: Path,
    lines: Sequence[_Line],
    server: _Line,
    physical: Sequence[str],
    arguments: list[Word] | None,
    taken: _Line | None = None,
) -> tuple[Location, str] | None:
    """The innermost `if`/`elif`/`else` or `case` arm around the `server` line whose test is
    on the script's first argument (`elif [[ "$1" = 'webserver-prod' ]]`, `webapp)` of `case
    "$1" in`), as (where it is written, its text), when no file read gives that argument;
    else the branch at `taken` (taken when the variables no file sets are unset, which chose
    the server: `_Assumption`); None when it is given, or the line sits in no such branch."""
    if taken is not None:
        return Location(path, taken.first), _branch_text(taken, physical)
    if _first_argument(arguments) is not None:
        return None
    if server.uncalled_in:
        # A library's function (a sourced file's), which only its caller's call runs.
        return Location(path, server.uncalled_in), _branch_text(
            replace(server, first=server.uncalled_in, last=server.uncalled_in), physical
        )
    # Each open block: [its head's kind, the line of the branch being read, on "$1"].
    blocks: list[list[object]] = []
    for line in lines:
        if line is server:
            break
        words = line.words
        head = words[0] if words else ""
        first = any(w in _FIRST_WORDS or w in ("$@", "$*") for w in words[1:])
        if head == "if":
            blocks.append(["if", line, first])
        elif head in ("elif", "else") and blocks and blocks[-1][0] == "if":
            blocks[-1][1] = line
            blocks[-1][2] = bool(blocks[-1][2]) or first
        elif head == "fi" and blocks and blocks[-1][0] == "if":
            blocks.pop()
        elif head == "case" and words[-1:] == ["in"]:
            blocks.append(["case", line, first])
        elif head == "esac" and blocks and blocks[-1][0] == "case":
            blocks.pop()
        elif (
            blocks
            and blocks[-1][0] == "case"
            and (
                _CASE_PATTERN.match(head) or words[1:2] == [")"]  # `"uwsgi" )`
            )
        ):
            blocks[-1][1] = line
    else:
        return None
    for _, branch, on_first in reversed(blocks):
        if on_first and isinstance(branch, _Line):
            return Location(path, branch.first), _branch_text(branch, physical)
    return None


def _branch_text(branch: _Line, physical: Sequence[str]) -> str:
    """A branch's head as written, without its `; then` and what follows."""
    text = " ".join(physical[branch.first - 1 : branch.last]).strip()
    return re.sub(r";\s*then\b.*\Z", "", text)


#: A server's development switch: the server reloads on code changes (gunicorn, uvicorn and
#: granian `--reload`, uWSGI `--py-autoreload`), for a developer's machine, not a deployment.
_DEVELOPMENT_SWITCH = re.compile(r"--(?:reload|py-autoreload)\b")


def _alone_unset(text: str, lines: list[_Line], find_config: FindConfig | None) -> dict[str, str]:
    """For a script read alone (no image or service here runs it): what the names its tests
    read hold where a deployment sets none of them, to choose among its server lines as the
    image run as it is does (`_Assumption`): each name nothing it holds sets "", and its own
    names set once to `${NAME:-word}` that word (ynput/ayon-backend's
    `SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}` then `if [ $SERVER_TYPE = "gunicorn" ]`
    runs gunicorn, not the `elif`'s granian). None when it sources a file not here or makes
    names at run time, which may set any of them."""
    texts = [text]
    for line in lines:
        if len(line.words) >= 2 and line.words[0] in _SOURCING:
            found = find_config(line.words[1]) if find_config is not None else None
            if found is None and not _ACTIVATE.search(line.words[1]):
                return {}
            texts.append(found.text if found is not None else "")
    written = without_comments("\n".join(texts))
    if _DYNAMIC.search(written):
        return {}
    assigned = set(_ASSIGNED.findall(written)) | {"VIRTUAL_ENV"}
    assigned.update(w for rest in _READ.findall(written) for w in re.findall(r"\w+", rest))
    return {**dict.fromkeys(_unset(written, assigned, {}), ""), **_own_defaults(text, lines)}


def _own_defaults(text: str, lines: list[_Line]) -> dict[str, str]:
    """The script's own names set once, at its top level, to a word or to `${NAME:-word}`
    (`DEV=${DEV:-false}`): what each holds where a deployment sets none of them, as
    `shell_values.own_values` reads them in an empty environment."""
    written = without_comments(text)
    counts = Counter(_ASSIGNED.findall(written))
    read = {w for rest in _READ.findall(written) for w in re.findall(r"\w+", rest)}
    once = {n for n, c in counts.items() if c == 1 and n not in read}
    top = [(line.first, line.words) for line in lines]
    return own_values(top, text.splitlines(), {}, once)


def _without_development_switch(
    path: Path,
    lines: list[_Line],
    environment: frozenset[str],
    unset: _Branches,
    defaulted: set[str] | None = None,
    decided: set[int] | None = None,
) -> list[_Line]:
    """`lines` without an `if TEST; then VAR="--reload ..."; fi` block (no `elif` or `else`,
    only assignments) whose test reads a variable no file here sets (`FLASK_DEBUG`, neither
    the script's nor its environment's): the script runs without it unless a deployment
    sets the variable, so the server judged is the production one, the switch off (a note
    says so). Such a switch under a test the files decide is kept or dropped by the test.
    So is any such block of assignments whose test only names no file sets decide, and
    decide false with them unset (`unset`): `if [ -n "${OTEL_SERVICE_NAME}" ]; then
    RUN_COMMAND="... --config observability.conf.py"; fi` runs only where a deployment sets
    the name, which no file here does. A test on the script's own `defaulted` names
    (`DEV=${DEV:-false}`, no file here setting DEV) is decided by their defaults: `if [[
    "$DEV" == "true" ]]; then cmd+=( --reload ); fi` is left out, its append with it. Such a
    block its test so decides true is kept, and its `if` line's `id` added to `decided`."""
    own = (defaulted or set()) - environment
    assigned = {w.partition("=")[0] for line in lines for w in line.words if _ASSIGNMENT.match(w)}
    dropped: set[int] = set()
    index = 0
    while index < len(lines):
        if lines[index].words[:1] != ["if"]:
            index += 1
            continue
        end, tested, body = _assignment_block(lines, index)
        if end < len(lines) and body and tested and not tested - own & (assigned | environment):
            switch = any(_DEVELOPMENT_SWITCH.search(w) for b in body for w in b.words)
            names = {f"${n}" for n in tested} <= set(unset.known)
            test = unset._test(lines, index) if names else None
            off = test is False
            if test is True and decided is not None:
                decided.add(id(lines[index]))
            if off if tested & own else switch or off:
                dropped.update(range(index, end + 1))
                what = "a development switch is set" if switch else "the branch runs"
                how = "set otherwise than the script's default" if tested & own else "set"
                note(
                    "server-chosen",
                    Location(path, lines[index].first),
                    f"{what} only when {', '.join(sorted(tested))} is {how}, which no file "
                    "here does: read without it, as the server runs in production",
                )
        index = end if end > index + 1 else index + 1
    return [line for i, line in enumerate(lines) if i not in dropped]


def _assignment_block(lines: list[_Line], index: int) -> tuple[int, set[str], list[_Line]]:
    """For the `if` at `lines[index]`: the index of the line that ends its first branch,
    the names its test expands, and that branch's lines when it is an `if ... fi` (no `elif`
    or `else`) of assignments only (none otherwise)."""
    end = index + 1
    while end < len(lines) and lines[end].words[:1] not in (["fi"], ["if"], ["elif"], ["else"]):
        end += 1
    block = lines[index:end]
    then = next((i for i, line in enumerate(block) if line.words[:1] == ["then"]), len(block))
    body = [line for line in block[then + 1 :] if line.words]
    if then < len(block) and block[then].words[1:]:  # `then VAR=...` on one line
        body.insert(0, replace(block[then], words=block[then].words[1:]))
    test = " ".join(w for line in block[:then] for w in line.words)
    tested = set(re.findall(r"\$\{?([A-Za-z_]\w*)", test))
    closed = end < len(lines) and lines[end].words[:1] == ["fi"]
    if not closed or not all(_assigns(w) for b in body for w in b.words):
        body = []
    return end, tested, body


def _assigns(word: str) -> bool:
    """`word` assigns a variable (`OPTS=...`) or an array's elements (`cmd[@]+=--reload`)."""
    return bool(_ASSIGNMENT.match(word) or _ARRAY_WORD.match(word))


def _changed_directory(current: str | None, args: list[Word], env: Mapping[str, str]) -> str | None:
    """The working directory after `cd ARGS` from `current` (None: the one the script
    started in): a folder written out or set in a variable, absolute or below a known one,
    or the script's own folder in the image (`cd "$(dirname "$0")"`), or a folder relative to
    where it started (`cd fec`, kept relative); None when not known (`cd "$APP_DIR"` with the
    variable unset, `cd -`, `cd` alone, above where it started)."""
    # (`` cd `dirname $0` `` is one word to the shell, however the line was split here.)
    own = own_folder(args[0].at.file, " ".join(a.text for a in args)) if args else None
    if own is not None:
        return own
    if len(args) != 1 or not args[0].text or args[0].text.startswith(("-", "~")):
        return None
    folder: str | None = args[0].text
    if folder is not None and ("$" in folder or "`" in folder):
        folder = expand_shell(folder, env)
    if not folder or "$" in folder or "`" in folder:
        return None
    if folder.startswith("/"):
        return posixpath.normpath(folder)
    # From where the script started (None): a folder below it (`cd fec` in a Procfile's
    # bin/run.sh, run from the app's root), found as that relative path.
    moved = posixpath.normpath(posixpath.join(current or "", folder))
    return None if moved.startswith("..") or (current is None and moved == ".") else moved


#: Where `files_made_by_loops` collects what the passes of loops make in each script read.
_COLLECTED: contextvars.ContextVar[list[runtime_files.Made] | None] = contextvars.ContextVar(
    "servertune_check_scripts_collected", default=None
)


def files_made_by_loops(
    path: Path,
    words: list[Word],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    find_config: FindConfig,
) -> list[runtime_files.Made]:
    """The files the passes of loops over words make as a container running `words` (an
    image's command) starts, read as `run_words` reads it (an nginx template an entrypoint
    renders with envsubst once per pass), whether or not it starts a server check reads."""
    token = _COLLECTED.set([])
    try:
        with collect_notes():
            run_words(path, words, env, env_at, find_config=find_config)
    except (CheckInputError, NothingToCheck, NotFollowed):
        pass
    finally:
        made = _COLLECTED.get() or []
        _COLLECTED.reset(token)
    return list(dict.fromkeys(made))


def _sourced_functions(
    path: Path, lines: list[_Line], find_config: FindConfig | None, env: Mapping[str, str]
) -> dict[str, Path]:
    """The functions of the files the script sources (`source utils.sh`, `. ./lib.sh`) that
    are here, by name, each file's own: what a line calling one makes is its body's."""
    if find_config is None:
        return {}
    found: dict[str, Path] = {}
    for line in lines:
        words = [w for w in line.words if w not in _KEYWORDS]
        if len(words) < 2 or words[0] not in _SOURCING:
            continue
        sourced = _find_sourced(Word(words[1], Location(path, line.first)), env, find_config)
        if sourced is None or sourced.file.resolve() == path.resolve():
            continue
        try:
            defined = _logical_lines(sourced.file, sourced.text)
        except CheckInputError:
            continue
        for one in defined:
            head = _function_head(one.words)
            if head is not None:
                found.setdefault(head[0], sourced.file)
    return found


class _Making:
    """The files a script makes before its server line (`runtime_files`), and its
    `find_config` that finds them: an s6 service's init services' too."""

    def __init__(
        self, path: Path, physical: list[str], given: bool, find_config: FindConfig | None
    ) -> None:
        self.path, self.physical, self.given = path, physical, given
        self.base = find_config
        self.made: list[runtime_files.Made] = []
        self.folders: set[str] = set()
        self.spans: set[tuple[int, int, int]] = set()
        #: The functions of the files the script sources, by name (`source utils.sh`).
        self.sourced: dict[str, Path] = {}
        #: What lines of a loop over words made, once per pass (`_unrolled`).
        self.looped: list[runtime_files.Made] = []
        #: The folder a `cd DIR` line before the server moved to (None: not known).
        self.directory: str | None = None
        if find_config is not None:
            for before in runtime_files.s6_predecessors(path):
                self.made += _made_by_script(before, self.listing)

    def listing(self, folder: str) -> list[str]:
        """The files under `folder` of the image that copies the script (asked only by a
        `find ... -exec ln` line, which is rare: the image's COPYs are walked then)."""
        found = runtime_files.image_listing(self.path)
        return found(folder) if found is not None else []

    def step(self, line: _Line, environment: Mapping[str, str]) -> None:
        """The files `line` makes (its physical lines read once: a line of several commands
        is one span), with the script's variables there; a call of a function of a file the
        script sources (`self.sourced`) makes what its body makes."""
        if line.words[:1] == ["cd"]:
            args = [Word(w, Location(self.path, line.first)) for w in line.words[1:]]
            self.directory = _changed_directory(self.directory, args, environment)
        key = (line.first, line.last, line.iteration)
        if self.base is None or key in self.spans:
            return
        self.spans.add(key)
        known = _own_variables(environment)
        if not self.given:  # this machine's environment is not the container's
            known = {k: v for k, v in known.items() if os.environ.get(k) != v}
        called = [w for w in line.words if w not in _KEYWORDS][:1]
        if called and called[0] in self.sourced:
            call = line.words[line.words.index(called[0]) :]
            self.made += _made_by_script(
                self.sourced[called[0]], self.listing, env=known, call=call, looped=self.looped
            )
            return
        text = _line_text(line, self.physical)
        if not _MAKING.search(text):
            return
        made = runtime_files.made_by(self.path, text, line.first, known, self.folders, self.listing)
        self.made += made
        if line.iteration:
            self.looped += made

    def collect(self) -> None:
        """What the loops' passes made, for `files_made_by_loops` when it is collecting."""
        collected = _COLLECTED.get()
        if collected is not None:
            collected.extend(self.looped)

    def find_config(self) -> FindConfig | None:
        found = self.base
        if found is not None and self.made:
            found = runtime_files.finding(self.made, found)
        if found is not None and self.directory is not None:
            # `cd "$(dirname "$0")"` then `exec ./run_web.sh`: relative to where it moved.
            found = in_directory(self.directory, found)
        return found


#: A line that may make a file (`runtime_files.made_by` reads it).
_MAKING = re.compile(r"\b(?:cp|ln|mv|envsubst|j2|echo|printf|find|mkdir|cat|sed|tr)\b")


def _made_by_script(
    script: Path,
    listing: runtime_files.ListFiles | None,
    *,
    env: Mapping[str, str] | None = None,
    call: Sequence[str] = (),
    looped: list[runtime_files.Made] | None = None,
) -> list[runtime_files.Made]:
    """The files another script that runs first (an s6 init service) makes, its lines read
    in order with its own variables; with `call`, the function of `script` (a file sourced)
    that call runs, with `env` the caller's variables, its loops over words unrolled (what
    their passes make also added to `looped`)."""
    from servertune.check.source import read_text

    try:
        text = read_text(script)
    except (CheckInputError, OSError):
        return []
    if call:
        text = f"{text}\n{shlex.join(call)}\n"
    physical = text.splitlines()
    made: list[runtime_files.Made] = []
    folders: set[str] = set()
    variables: dict[str, str] = dict(env or {})
    try:
        lines = _logical_lines(script, text)
    except CheckInputError:
        return []
    if call:
        lines = _unrolled(_inline_functions(lines, uncalled=False))
    for line in lines:
        _assignments(line, variables)
        _eval_assignments(line, variables, physical)
        text = _line_text(line, physical)
        if _MAKING.search(text):
            one = runtime_files.made_by(
                script, text, line.first, _own_variables(variables), folders, listing
            )
            made += one
            if line.iteration and looped is not None:
                looped += one
    return list(dict.fromkeys(made))


def _per_worker(
    path: Path,
    command: ServerCommand,
    hole: int,
    arms: list[tuple[_Line, list[str]]],
    environment: Mapping[str, str],
) -> AppServer:
    """A per-worker script: one single-worker server per `case` arm, each on its socket."""
    argvs = []
    for arm_line, arm in arms:
        at = Location(path, arm_line.first)
        argvs.append([*command.args[:hole], *(Word(a, at) for a in arm), *command.args[hole + 1 :]])
    for argv in argvs:
        for word in argv:
            if "$" in word.text or "`" in word.text:
                raise CheckInputError(
                    f"{word.at}: {word.text!r} needs the shell to expand it; check reads "
                    "the script, never runs it: write the value"
                )
    return asgi_server(
        path,
        command.server,
        argvs,
        dict(environment),
        {},
        command.program.at,
        [Location(path, a.first) for a, _ in arms],
    )


def _handed_over(
    path: Path,
    lines: list[_Line],
    physical: list[str],
    environment: dict[str, str],
    env_at: Mapping[str, Location] | None,
    arguments: list[Word] | None,
    find_config: FindConfig | None,
    passing: _Line | None = None,
    known: Collection[int] = (),
) -> AppServer:
    """The server of a script with no server line of its own: the one a process manager it
    runs starts, or its arguments' (`exec "$@"`, `passing` when known); NothingToCheck (or
    NotFollowed) otherwise. `known`: the lines whose program was known where they ran."""
    mark = met_so_far()
    if find_config is not None:
        managed = _managed(path, lines, physical, environment, env_at, find_config)
        if managed is not None:
            return managed
        from servertune.check.unit import unit_started

        unit = unit_started(
            path, [_words(line, physical, path) for line in lines], environment, find_config
        )
        if unit is not None:
            return unit
    if passing is None:
        passing = next((line for line in lines if _runs_arguments(line.words, environment)), None)
    if passing is not None and arguments:
        # An entrypoint that ends in `exec "$@"`: what runs is its arguments.
        found_app = run_words(path, arguments, environment, env_at, find_config=find_config)
        if found_app is not None:
            step = Location(path, passing.first)
            return replace(found_app, launched_by=(step, *found_app.launched_by))
    if find_config is not None:
        handed = _runs_script(path, lines, physical, environment, env_at, find_config, arguments)
        if handed is None:
            handed = _sourced_function(path, lines, environment, env_at, find_config)
        if handed is not None:
            return handed
    if passing is not None:
        # An entrypoint: what it starts is its caller's command (the image's CMD), read
        # when the Dockerfile or compose file that runs it is checked; unless another of its
        # branches runs what is not here (quay's `supervisord -c` of a rendered file): then
        # what it starts is not known, and "no server command line" would be false.
        met = met_since(mark)
        if met is not None:
            raise met
        _foreground_development(path, lines, physical)
        raise NothingToCheck(
            f'{path}: ends in `exec "$@"`: it starts whatever command it is given (an '
            "image's CMD, read with the Dockerfile or compose file that runs it); "
            f"{_NO_SERVER}"
        )
    _not_followed(path, lines, environment, known)
    launched = nothing_started(
        [
            _evaluated(_expand_arrays(_words(line, physical, path), environment), environment)
            for line in lines
        ],
        find_config,
    )
    if launched is not None:
        raise launched
    raise NothingToCheck(f"{path}: {_NO_SERVER}")


def _foreground_development(path: Path, lines: list[_Line], physical: list[str]) -> None:
    """A development-launch note for each line that runs a framework's development server in
    the foreground (`python manage.py runserver 0.0.0.0:8000` before `exec "$@"`): it serves
    until stopped, so the container's server is that one, and the command after it never
    runs while it does."""
    for line in lines:
        words = _after_keywords(_words(line, physical, path))
        what = development_server(words) if words and not line.background else None
        if what is not None:
            note(
                "development-launch",
                Location(path, line.first),
                f"{path}:{line.first} -> {what}, run in the foreground: a development launch "
                "(reloads on code changes), not sized",
            )


#: Shell keywords a command may follow on its line (`then exec ./serve.sh`, `else ./run`).
_KEYWORDS = frozenset({"then", "else", "do", "{", "!"})
#: A script path that names a script even when it is not here (`./webserver.sh`, `run.sh`,
#: `bin/serve.bash`): `/usr/sbin/nginx` is a program of the image, not a missing script.
_NAMED_SCRIPT = re.compile(r"\A\.{1,2}/\S+\Z|\A\S+\.(sh|bash)\Z")
#: The scripts being read, outermost first: a script that runs one of them again (`a.sh`
#: runs `b.sh` runs `a.sh`) is not read a second time. Each is keyed by `_following_key`.
_FOLLOWING: contextvars.ContextVar[frozenset[Path | tuple[Path, str]]] = contextvars.ContextVar(
    "servertune_check_scripts_following", default=frozenset()
)


def _following_key(file: Path, text: str) -> Path | tuple[Path, str]:
    """What `_FOLLOWING` holds for a script: its file, but for a text a Dockerfile writes
    into the image (a heredoc, `RUN echo ... > /entrypoint.sh`, a well-known base image's
    declared /start.sh: `base_images`) the file and that text, since one Dockerfile holds
    several such scripts and one may run another (openpredict's RUN-written /entrypoint.sh
    runs the base's /start.sh)."""
    return (file.resolve(), text) if is_dockerfile(file) else file.resolve()


def _runs_as_script(found: ConfigFile) -> bool:
    """Whether a file a line runs by its path is read as a script: one by its suffix or `#!`,
    a Python one, or a text the Dockerfile writes at that path (`RUN echo ... >
    /entrypoint.sh`, a base image's declared /start.sh), which the line runs as a command."""
    return (
        looks_like_script(found.file, found.text)
        or looks_like_python(found.file, found.text)
        or is_dockerfile(found.file)
    )


def _runs_script(
    path: Path,
    lines: list[_Line],
    physical: list[str],
    env: Mapping[str, str],
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    arguments: list[Word] | None = None,
) -> AppServer | None:
    """The server a script this one runs by its path starts (`exec ./webserver.sh`,
    `./checks.sh && exec bin/serve.sh`), with this script's line first in its chain; None when
    the scripts it runs start none. NotFollowed when it hands the process over (`exec`) to a
    script that is not in the files read: what that starts is not known. A `"$@"` it passes
    on is this script's `arguments` (after its `shift`s), when they are known."""
    missing: tuple[_Line, str] | None = None
    following = _FOLLOWING.get() | {path.resolve()}
    for line in lines:
        # `exec "${SERVER_CMD[@]}"` after `SERVER_CMD=(./run-gunicorn.sh "$@")`, set in a
        # function the script calls: the array's words (IBM/mcp-context-forge).
        words = _expand_arrays(_words(line, physical, path), env)
        while words and words[0].text in _KEYWORDS:
            words = words[1:]
        execs = bool(words) and words[0].text == "exec"
        command = words[1:] if execs else words
        executed = _exec_block(_unwrapped(command), env, env_at, find_config)
        if executed is not None:
            return replace(
                executed, launched_by=(Location(path, line.first), *executed.launched_by)
            )
        rest = _interpreted_script(command)
        if rest and rest[0].text.startswith("$") and rest[0].text not in _ALL_ARGUMENTS:
            # `$APP_SCRIPTS_DIR/run_bash "${@:2}"`: a script of a folder set at run time.
            named = _expanded_path(rest[0], env)
            rest = [Word(named, rest[0].at), *rest[1:]] if named is not None else rest
        elif rest and "$" in rest[0].text:
            # `/container/commands/$command` after `command="$1"`: the script of a command
            # folder a known value names (agdsn/pycroft's entrypoint), only when every
            # variable in it is known: its folder is written out, no guess stands for it.
            named = expand_known(rest[0].text, env)
            named = None if "$" in named or "`" in named else named
            rest = [Word(named, rest[0].at), *rest[1:]] if named is not None else rest
        if not rest or not _SCRIPT_PATH.match(rest[0].text):
            continue
        found = find_config(rest[0].text, rest[0].at)
        if found is None:
            # (A Python program not here is left to the launcher's own words: `python
            # manage.py runserver 0.0.0.0:8000` says more than "not in the files read".)
            if execs and missing is None and rest is command and _NAMED_SCRIPT.match(rest[0].text):
                missing = (line, rest[0].text)
            continue
        if _following_key(found.file, found.text) in following or not _runs_as_script(found):
            continue
        token = _FOLLOWING.set(following)
        try:
            app = _script_server(
                found, _passed(rest[1:], arguments), env, env_at, find_config, rest[0].text
            )
        except CheckInputError:  # refused on its own: said when it is read
            continue
        finally:
            _FOLLOWING.reset(token)
        if app is not None:
            step = Location(path, line.first)
            if app.without_exec is None and not execs and app.command_line:
                # `./serve.sh` run as a child: this shell stays in front of the server even
                # when the script it runs execs it, so this line is the one to `exec`.
                app = replace(app, without_exec=_child_line(line, lines, physical, path))
            return replace(app, launched_by=(step, *app.launched_by))
    if missing is not None and not any(_runs_arguments(line.words, env) for line in lines):
        line, script = missing
        raise NotFollowed(
            f"{path}:{line.first}: not followed: runs {script}, a script not in the files "
            "read, so the server it starts is not known"
        )
    return None


def _exec_block(
    words: list[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int = 0,
) -> AppServer | None:
    """`consul-template -config app.hcl` (or a wrapper of it): the server the command of the
    config's `exec` block starts, that block's line first in its chain; None when `words`
    give no such config, or its command starts no server."""
    execs = exec_command(words, find_config) if words and depth <= 4 else None
    if execs is None:
        return None
    at = execs[0].at
    # The config names its templates' renderings by their destinations (`consul_template`).
    find = rendering(words, find_config)
    app = run_words(at.file, execs, env, env_at, find_config=find, depth=depth + 1)
    return None if app is None else replace(app, launched_by=(at, *app.launched_by))


def _passed(words: list[Word], arguments: list[Word] | None) -> list[Word]:
    """`words` with a `"$@"` (or a slice of it, `"${@:2}"`) among them replaced by the
    script's `arguments` (what its caller gave it, after its `shift`s), when they are known."""
    if arguments is None:
        return words
    words = _argument_slices(words, arguments)  # `"${@:2}"`: from the second on
    return [w for word in words for w in (arguments if word.text in _ALL_ARGUMENTS else [word])]


_ALL_ARGUMENTS = frozenset({"$@", "${@}"})


#: A Python script run by its interpreter: `python -u /app/main.py`, `python3 main.py`.
_PYTHON_SCRIPT = re.compile(r"\A\S+\.py\Z")


def _interpreted_script(words: list[Word]) -> list[Word]:
    """`python [options] /app/main.py ARGS` or `bash [options] start.bash ARGS` as the
    script and its arguments (`/app/main.py ARGS`), as the interpreter runs it; other words
    (`bash -c STRING`, a server) as they are."""
    if words and program_name(words[0].text) in SHELLS - {"busybox"}:
        return _shell_operand(words)
    if not words or not program_name(words[0].text).startswith("python"):
        return words
    rest = words[1:]
    while rest and rest[0].text.startswith("-") and rest[0].text not in ("-m", "-c"):
        rest = rest[1:]
    if rest and _PYTHON_SCRIPT.match(rest[0].text):
        # A bare `main.py` is in the working directory, not on the PATH.
        first = rest[0] if "/" in rest[0].text else Word(f"./{rest[0].text}", rest[0].at)
        return [first, *rest[1:]]
    return words


def _shell_operand(words: list[Word]) -> list[Word]:
    """`/bin/bash entrypoint_portal.bash ARGS`: the script a shell runs from a file, and its
    arguments, as `./entrypoint_portal.bash ARGS` is followed (a bare name is in the working
    directory: a shell reads a script operand without searching the PATH); the words as they
    are for a command string (`-c`), standard input (`-s`) or no operand."""
    rest = words[1:]
    while rest and rest[0].text.startswith(("-", "+")) and rest[0].text != "--":
        option = rest[0].text
        if not option.startswith("--") and ("c" in option or "s" in option):
            return words
        rest = rest[2:] if option in ("-o", "+o", "-O", "+O") else rest[1:]
    rest = rest[1:] if rest and rest[0].text == "--" else rest
    if not rest:
        return words
    if "$" in rest[0].text:
        # `/bin/bash "$GUNICORN_START_PATH"`: the script a variable names, expanded as an
        # `exec "$VAR"` is by the caller (publichealthengland's dashboard API entrypoint).
        return rest
    first = rest[0] if "/" in rest[0].text else Word(f"./{rest[0].text}", rest[0].at)
    return [first, *rest[1:]]


#: `source FILE` / `. FILE`: the shell runs FILE in this shell, its functions defined here (a
#: command string's `sh -c ". bin/startup.sh"`, sweepai/sweep: followed as `sh FILE` is).
_SOURCING = frozenset({"source", "."})


#: The file name a sourced path ends in after its last expansion: `lib.sh` of
#: `"$DIR/lib.sh"`, `functions` of `"$(cd "$(dirname "$0")" && pwd)/functions"`.
_AFTER_EXPANSION = re.compile(r"\$[^/]*(?:/[^/]*\))*/(?P<rest>[^$`()\s]+)\Z")


def _find_sourced(word: Word, env: Mapping[str, str], find_config: FindConfig) -> ConfigFile | None:
    """The file a `source WORD` line reads (`_expanded_path`: an image's `ENV APP_HOME`
    expanded, `"$DIR/functions"` in the script's own folder)."""
    wanted = _expanded_path(word, env)
    return None if wanted is None else find_config(wanted, word.at)


def _expanded_path(word: Word, env: Mapping[str, str]) -> str | None:
    """A file path as written in a script, its variables known here expanded; when a folder
    in it is known only at run time (`"$DIR/lib.sh"`, `$(dirname "$0")/run_bash`), the file
    of that name in the script's own folder (`./name` beside it, or where the image that
    runs it put it), as the scripts and libraries a script runs by such a path are kept
    together; None when the file's own name is not written out."""
    wanted = expand_known(word.text, env)
    if "$" not in wanted and "`" not in wanted:
        return wanted
    after = _AFTER_EXPANSION.search(wanted)
    if after is None:
        return None
    # In an image, the script's folder is where the image put it (the file must be there).
    held = HELD_AT.get()
    where = held(word.at.file) if held is not None else None
    folder = posixpath.dirname(where) if where and where.startswith("/") else "."
    return posixpath.join(folder, after["rest"])


def _sourced_function(
    path: Path,
    lines: list[_Line],
    env: Mapping[str, str],
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
) -> AppServer | None:
    """The server a function of a sourced file starts where this script calls it (`source
    utils.sh` ... `start_uwsgi`): the sourced file read as run up to that call, the calling
    line first in the chain; None when no such call starts a server check reads."""
    following = _FOLLOWING.get() | {path.resolve()}
    sourced: list[tuple[ConfigFile, set[str]]] = []
    for line in lines:
        words = _after_keywords([Word(w, Location(path, line.first)) for w in line.words])
        if len(words) < 2 or words[0].text not in _SOURCING:
            continue
        found = _find_sourced(words[1], env, find_config)
        if found is None or _following_key(found.file, found.text) in following:
            continue
        defined = {
            head[0]
            for one in _logical_lines(found.file, found.text)
            if (head := _function_head(one.words)) is not None
        }
        if defined:
            sourced.append((found, defined))
    for line in lines:
        called = list(line.words)
        while called and called[0] in _KEYWORDS:
            called = called[1:]
        for found, defined in sourced:
            if not called or called[0] not in defined:
                continue
            token = _FOLLOWING.set(following)
            try:
                app = read_script(
                    found.file,
                    f"{found.text}\n{shlex.join(called)}\n",
                    dict(env),
                    find_config=find_config,
                    env_at=env_at,
                    uncalled=False,
                )
            except CheckInputError:  # starts none, or refused on its own: said when read
                continue
            finally:
                _FOLLOWING.reset(token)
            return replace(app, launched_by=(Location(path, line.first), *app.launched_by))
    return None


def _child_line(
    line: _Line, lines: list[_Line], physical: list[str], path: Path
) -> Setting[str] | None:
    """The line, as written, when the shell runs what it names as a child it waits for (no
    `exec`, not in the background, no `trap` to pass signals on, not execline, which
    chain-loads); None otherwise."""
    if line.background or _EXECLINE.match(physical[0] if physical else ""):
        return None
    if any(other.words[:1] == ["trap"] for other in lines):
        return None
    # The simple command alone, as the shell splits it (`./checks.sh && ./serve.sh` is two).
    words = list(line.words)
    while words and words[0] in _KEYWORDS:
        words = words[1:]
    return Setting(" ".join(map(_as_written, words))[:2000], Location(path, line.first))


def _as_written(word: str) -> str:
    """`word` quoted for a line shown as the script's: a word with an expansion in double
    quotes, which keep it expanding (`"$GUNICORN_START_PATH"`, never `'$GUNICORN_START_PATH'`,
    the literal text a fix copied from it would run); any other as `shlex.quote` does."""
    if "$" in word and not any(c in word for c in '"\\`') and shlex.quote(word) != word:
        return f'"{word}"'
    return shlex.quote(word)


#: A function definition's head: `name() {`, `name () {`, `function name {`, `function name() {`.
_FUNCTION = re.compile(r"\A(?:function\s+)?(?P<name>[A-Za-z_][\w-]*)\s*(?:\(\))?\s*\Z")
#: A function's head and its body's brace written as one word: `run_server(){`.
_GLUED_HEAD = re.compile(r"\A[A-Za-z_][\w-]*\(\)\{\Z")


def _function_head(words: list[str]) -> tuple[str, int] | None:
    """The name a line defines a function by, and where its body starts on the line (after
    its `{` or `(`); None for any other line."""
    for opener in ("{", "("):
        if opener in words[1:4]:
            index = words.index(opener)
            head = " ".join(words[:index])
            found = _FUNCTION.match(head)
            if found is not None and ("()" in head or words[0] == "function"):
                return found["name"], index + 1
    return None


#: A line that runs the script's arguments as a command: `$@`, `"$@"`, `${@}`, `$*`.
_RUNS_ARGUMENTS = re.compile(r'\A"?\$(?:[@*]|\{[@*]\})"?\Z')


def _function_by_arguments(lines: list[_Line], arguments: list[Word] | None) -> list[_Line]:
    """`lines` with each line that runs the arguments (`$@`) written as the call it makes
    when the first argument names a function of the script (`ExecStart=/usr/local/bin/helper
    run` with `run() { gunicorn ...; }`): the function's body then runs there, as a line that
    calls it by name does (`_inline_functions`), also when another line calls it too."""
    if not arguments or not re.fullmatch(r"[A-Za-z_][\w-]*", arguments[0].text):
        return lines
    name = arguments[0].text
    defined = any(
        (_function_head(line.words) or ("",))[0] == name
        or (line.words and line.words[0] == f"{name}(){{")
        for line in lines
    )
    if not defined:
        return lines
    words = [a.text for a in arguments]
    return [
        replace(line, words=words)
        if len(line.words) == 1 and _RUNS_ARGUMENTS.match(line.words[0])
        else line
        for line in lines
    ]


#: The fewest lines function calls may add to a script as their bodies are inlined.
_INLINED_LINES = 10_000


def _inline_functions(lines: list[_Line], *, uncalled: bool = True) -> list[_Line]:
    """The lines in the order they run: a function's body where a line calls it by name
    (`server` after `server() { exec gunicorn ...; }`), not where it is defined; a function
    no line calls (run by a name built at run time, `"cmd_$1"`) is read where it is written,
    unless not `uncalled` (a sourced file's functions, of which only the called one runs)."""
    # `name(){` written without a space is one word: the name's `()` and the body's `{`.
    lines = [
        replace(line, words=[line.words[0][:-1], "{", *line.words[1:]])
        if line.words and _GLUED_HEAD.match(line.words[0])
        else line
        for line in lines
    ]
    bodies: dict[str, list[_Line]] = {}
    outside: list[tuple[_Line, str | None]] = []
    index = 0
    while index < len(lines):
        head = _function_head(lines[index].words)
        if head is None:
            outside.append((lines[index], None))
            index += 1
            continue
        name, start = head
        first = lines[index]
        body = [replace(first, words=first.words[start:])] if first.words[start:] else []
        closer = "}" if "{" in first.words[:start] else ")"
        level, index = 1, index + 1
        while index < len(lines) and level:
            words = lines[index].words
            level += words.count("{") - words.count("}") if closer == "}" else 0
            if words == [closer] and (closer == ")" or level == 0):
                level = 0
            else:
                body.append(lines[index])
            index += 1
        bodies[name] = body
        outside.append((first, name))
    every = [line for line, _ in outside] + [line for body in bodies.values() for line in body]
    called = {line.words[0] for line in every if line.words and line.words[0] in bodies}

    # Lines inlined at most: a function calling others many times over must not multiply
    # the script past what a reader reads (hostile input).
    budget = [max(_INLINED_LINES, 10 * len(lines))]

    def run(line: _Line, depth: int) -> list[_Line]:
        name = line.words[0] if line.words else ""
        if name not in called or depth > 4 or budget[0] <= 0:  # (recursion: read once)
            return [line]
        budget[0] -= len(bodies[name])
        body = [_with_arguments(b, line.words[1:]) for b in bodies[name]]
        return [inner for body_line in body for inner in run(body_line, depth + 1)]

    ordered: list[_Line] = []
    for line, defined in outside:
        if defined is None:
            ordered.extend(run(line, 0))
        elif defined not in called and uncalled:
            ordered.extend(replace(b, uncalled_in=line.first) for b in bodies[defined])
    return ordered


#: A function's positional parameter in its body: `$1`, `${2}`.
_POSITIONAL = re.compile(r"\$(?:\{([1-9])\}|([1-9]))")


def _with_arguments(line: _Line, arguments: list[str]) -> _Line:
    """A function's body line as a call with `arguments` runs it: `$1`, `${2}` are the
    call's words (an unset one empty). Unchanged for a call with no arguments (the script's
    own `$1` may be meant, as read before) or with arguments only the running shell knows
    (`"$@"`, a command substitution)."""
    if not arguments or any(re.search(r"\$[@*#(]|\$\{[@*#]|`", a) for a in arguments):
        return line

    def one(match: re.Match[str]) -> str:
        index = int(match[1] or match[2])
        return arguments[index - 1] if index <= len(arguments) else ""

    words = [_POSITIONAL.sub(one, w) for w in line.words]
    return replace(line, words=words, arguments=tuple(arguments))


def _line_text(line: _Line, physical: Sequence[str]) -> str:
    """The line as written (for `runtime_files.made_by`, which reads its redirections), its
    function's positional parameters replaced by the call's arguments."""
    text = "\n".join(physical[line.first - 1 : line.last])
    if not line.arguments:
        return text
    arguments = line.arguments

    def one(match: re.Match[str]) -> str:
        index = int(match[1] or match[2])
        return shlex.quote(arguments[index - 1]) if index <= len(arguments) else ""

    return _POSITIONAL.sub(one, text)


#: How many words a `for` loop is unrolled over, and the lines it may add at most.
_LOOP_WORDS = 16
_LOOP_LINES = 2_000


def _unrolled(lines: list[_Line]) -> list[_Line]:
    """The lines in the order they run when a `for NAME in WORD...; do ... done` loop is over
    literal words: its body once per word, after `NAME=WORD` (an assignment line of the
    loop's own line), each pass numbered (`_Line.iteration`). A loop over anything else
    (`$LIST`, a glob, a command's output) is read once, as written."""
    out: list[_Line] = []
    index = 0
    budget = _LOOP_LINES
    while index < len(lines):
        line = lines[index]
        words = line.words
        end = _loop_end(lines, index) if words[:1] == ["for"] else None
        literal = (
            end is not None
            and len(words) >= 4
            and words[2] == "in"
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", words[1]) is not None
            and len(words) - 3 <= _LOOP_WORDS
            and all(re.fullmatch(r"[\w.:/@+,=-]+", w) for w in words[3:])
        )
        if end is None or not literal:
            out.append(line)
            index += 1
            continue
        body = _unrolled(lines[index + 1 : end])
        passes = words[3:]
        if budget < len(body) * len(passes):
            out.extend(lines[index : end + 1])
            index = end + 1
            continue
        budget -= len(body) * len(passes)
        for number, word in enumerate(passes, start=1):
            out.append(replace(line, words=[f"{words[1]}={word}"], iteration=number))
            out += [replace(b, iteration=b.iteration * 100 + number) for b in body]
        index = end + 1
    return out


def _loop_end(lines: list[_Line], start: int) -> int | None:
    """The index of the `done` that closes the loop opened at `lines[start]`; None when the
    body is not read as lines of its own (the loop ends on its line, or never)."""
    level = 0
    for index in range(start, len(lines)):
        head = lines[index].words[0] if lines[index].words else ""
        if head in ("for", "while", "until"):
            level += 1
        elif head == "done":
            level -= 1
            if level == 0:
                return index if index > start + 1 and lines[start + 1].words[:1] == ["do"] else None
    return None


#: `eval`'s own escapes: `\$` is a literal dollar for eval's second expansion.
_EVAL_DOLLAR = "\x00"


def _eval_assignments(line: _Line, env: dict[str, str], physical: Sequence[str]) -> None:
    r"""`eval export A=\$${NAME}_B` / `eval "A=\${${NAME}_B}"`: indirection, the variable
    whose name is built from NAME's value (`$DASHBOARD_B` when NAME is DASHBOARD), assigned
    as a plain assignment line would be. A name assigned from what only the running shell
    knows (a command substitution, a name not set here) is forgotten, never guessed."""
    words = list(line.words)
    while words and words[0] in _KEYWORDS:
        words = words[1:]
    if len(words) < 2 or words[0] != "eval":
        return
    text = " ".join(words[1:])
    assigned = re.findall(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)=", text)
    raw = "\n".join(physical[line.first - 1 : line.last])
    expanded: str | None = None
    if "$(" not in text and "`" not in text:
        quoted = text.replace("\\$", _EVAL_DOLLAR)  # `"A=\${...}"`: the quotes kept `\`
        if "\\$" in raw:  # `A=\$${NAME}_B` unquoted: the split already dropped the `\`
            quoted = quoted.replace("$$", _EVAL_DOLLAR + "$")
        expanded = expand_shell(quoted, env)
    if expanded is None:
        for name in assigned:
            env.pop(name, None)
        return
    try:
        split = shlex.split(expanded.replace(_EVAL_DOLLAR, "$"))
    except ValueError:
        return
    _assignments(replace(line, words=split), env)


def _fixed_where_run(
    env: Mapping[str, str] | None,
    fixed: Mapping[str, str],
    logical: list[_Line],
    kept: list[_Line],
    text: str,
) -> dict[str, str]:
    """The environment's variables (`env`) that the script assigns only in lines that do
    not run (`kept` are those that do: a `test)` arm's `export MODE=testing` when the
    arguments choose another arm) or only from their own value (`MODE=${MODE:-prod}`), so
    they keep the environment's value where a `case` or test reads them; none when the
    script sources a file, reads into names or loops over them (what it sets is then not
    all in its assignments). Seen in emfoursolutions/trakbridge."""
    if not env or any(line.words[:1] and line.words[0] in _SOURCING for line in logical):
        return {}
    text = without_comments(text)
    if _DYNAMIC.search(text):
        return {}
    # Names set with no `NAME=` word: a loop's, `read`'s, `getopts`', `printf -v`'s.
    otherwise = {n for found in _ASSIGNED_OTHERWISE.findall(text) for n in found[:5] if n}
    otherwise.update(w for rest in _READ.findall(text) for w in re.findall(r"\w+", rest))
    running = {id(line) for line in kept}
    settable = {
        n for n in env if n not in fixed and n not in otherwise and re.fullmatch(r"[A-Za-z_]\w*", n)
    }
    for line in logical:
        words = line.words
        if words[:1] and words[0] in _DECLARING_WORDS:
            words = [w for w in words[1:] if not w.startswith("-")]
        for word in words:
            name = word.partition("=")[0].removesuffix("+")
            if "=" not in word or name not in settable:
                continue
            own = _OWN_DEFAULT.match(word) is not None and "+=" not in word
            if id(line) in running and not own:
                settable.discard(name)
    read = set(re.findall(r"\$\{?([A-Za-z_]\w*)", text))
    return {n: env[n] for n in settable if n in read}


def _fixed_variables(
    text: str,
    lines: list[_Line],
    env: Mapping[str, str] | None,
    find_config: FindConfig | None,
) -> tuple[dict[str, str], frozenset[int], dict[str, str]]:
    """The variables of the environment the script is started with (an image's ENV, a
    compose service's `environment`) that neither it nor a file it sources assigns, so a test
    on them is decided (`if [ "$MODULE_NAME" = 'dashboard' ]` in the image that sets
    MODULE_NAME=nginx); none when the script is read alone (check's own environment decides
    nothing). With them, the lines that source a file not here: once one runs, what the
    variables hold is not known. Last, the names the script reads that nothing sets, each
    "": unset where it runs when the container's whole environment is read
    (`ENVIRONMENT_COMPLETE`, then among the first), else only assumed so (`_Branches`)."""
    if env is None:
        return {}, frozenset(), {}
    texts = [text]
    unknown: set[int] = set()
    activated = False  # a virtualenv's `bin/activate` sourced: it sets VIRTUAL_ENV
    for line in lines:
        if len(line.words) >= 2 and line.words[0] in _SOURCING:
            found = find_config(line.words[1]) if find_config is not None else None
            if found is not None:
                texts.append(found.text)
            elif _ACTIVATE.search(line.words[1]):
                activated = True
            else:
                unknown.add(line.first)
    # Without comments: a usage line (`#   GUNICORN_DEV_MODE=true ./run-gunicorn.sh`) sets
    # nothing, so `GUNICORN_DEV_MODE=${GUNICORN_DEV_MODE:-false}` is still set once
    # (IBM/mcp-context-forge).
    written = without_comments("\n".join(texts))
    # The names the texts assign (`NAME=`, `NAME+=`) or `read`, found once: an image's and
    # a compose file's environment may hold a hundred names.
    assigned = set(_ASSIGNED.findall(written))
    assigned.update(w for rest in _READ.findall(written) for w in re.findall(r"\w+", rest))
    fixed = {
        name: value
        for name, value in env.items()
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name not in assigned
    }
    # The script's own names set once from the environment with its default (`w=${W:-1}`).
    counts = Counter(_ASSIGNED.findall(written))
    read = {w for rest in _READ.findall(written) for w in re.findall(r"\w+", rest)}
    once = {n for n, c in counts.items() if c == 1 and n not in read}
    top = [(line.first, line.words) for line in lines]
    fixed.update(own_values(top, text.splitlines(), env, once))
    sets = assigned | ({"VIRTUAL_ENV"} if activated else set())
    unset = dict.fromkeys(_unset(written, sets, env), "")
    if unknown or _DYNAMIC.search(written):
        # A file not here, or a name made at run time (`eval "$k=$v"`), may set anything:
        # what a script this one runs is handed is not all known either.
        ENVIRONMENT_COMPLETE.set(False)
    elif ENVIRONMENT_COMPLETE.get():
        return {**fixed, **unset}, frozenset(unknown), {}
    return fixed, frozenset(unknown), unset


#: A Python virtual environment's `bin/activate` (`source "$DIR/.venv/bin/activate"`): not a
#: file here, but a known one, which sets only its own names (`VIRTUAL_ENV`, `PATH`, `PS1`),
#: never the script's (IBM/mcp-context-forge's run-gunicorn.sh).
_ACTIVATE = re.compile(r"(?:\A|/)bin/activate[\"']?\Z")
#: What may set a variable whose name is not written out: `eval`, a name made of an
#: expansion (`export "$k=$v"`, `declare "$k"=...`, `printf -v "$k"`, `read "$k"`).
_DYNAMIC = re.compile(
    r"\beval\b|\b(?:export|declare|typeset|local|readonly|printf)\s+(?:-\w+\s+)*[\"']?\$"
)
#: A name the shell assigns without `NAME=`: a loop's (`for NAME in`, `select NAME`), `getopts
#: ... NAME`, `${NAME:=word}`, `printf -v NAME`, `mapfile` / `readarray NAME`, `export NAME`.
_ASSIGNED_OTHERWISE = re.compile(
    r"\b(?:for|select)\s+(\w+)|\bgetopts\s+\S+\s+(\w+)|\$\{(\w+):?=|\bprintf\s+-v\s+(\w+)"
    r"|\b(?:mapfile|readarray)\b[^\n]*?\s(\w+)\s*$|\b(?:export|declare|typeset|local|readonly)((?:\s+-?\w+)+)",
    re.M,
)
#: Names the shell or Docker set in every container (`HOSTNAME`, `HOME`, `PATH`) or the shell
#: keeps for itself (`PWD`, `RANDOM`, `BASH_*`): set where the script runs, though no file
#: read sets them.
_SET_BY_THE_SHELL = frozenset(
    [
        "HOME",
        "HOSTNAME",
        "PATH",
        "PWD",
        "OLDPWD",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "UID",
        "EUID",
        "PPID",
        "RANDOM",
        "SECONDS",
        "LINENO",
        "IFS",
        "SHLVL",
        "OSTYPE",
        "HOSTTYPE",
        "MACHTYPE",
        "OPTARG",
        "OPTIND",
        "OPTERR",
        "REPLY",
        "PIPESTATUS",
        "FUNCNAME",
        "GROUPS",
        "DIRSTACK",
        "PS1",
        "PS2",
        "PS4",
        "HISTFILE",
        "COLUMNS",
        "LINES",
    ]
)


def _unset(written: str, assigned: set[str], env: Mapping[str, str]) -> set[str]:
    """The names `written` (a script and the files it sources) expands that nothing sets:
    not it, not the container's environment `env` (which is all of it), not the shell."""
    named = set(re.findall(r"\$\{?([A-Za-z_]\w*)", written))
    otherwise = {
        name
        for found in _ASSIGNED_OTHERWISE.findall(written)
        for part in found
        for name in re.findall(r"(?<![-\w])[A-Za-z_]\w*", part)
    }
    given = {key.partition("[")[0] for key in env}  # `NAME[~]`: a caller's partial value
    return {
        name
        for name in named - assigned - otherwise - given
        if name not in _SET_BY_THE_SHELL and not name.startswith("BASH")
    }


#: A name a script assigns (`NAME=value`, `NAME+=value`), not one it expands (`$NAME=`).
_ASSIGNED = re.compile(r"(?<![\w$])(\w+)\+?=")
#: What follows `read` on its line: the names it reads into.
_READ = re.compile(r"\bread\b([^\n]*)")


#: The words that are the script's first argument in a test: `"$1"`, and `"${1:-}"` /
#: `"${1-}"`, its guard under `set -u` (empty when there is none; here it is known).
_FIRST_WORDS = ("$1", "${1}", "${1:-}", "${1-}")


#: The words that are all the script's arguments in a test (`[[ -n "$*" ]]`: any given).
_ALL_WORDS = ("$*", "${*}", "$@", "${@}")


def _all_arguments(arguments: list[Word] | None) -> str | None:
    """All the script's arguments as one word (`"$*"`) when each is known, as for
    `_first_argument`: "" when it is known there are none, so `if [[ -n "$*" ]]; then "$@";
    elif [[ "$DEV_SERVER" = "true" ]]` is decided by the image's variable (the ENV of the
    stage a compose `build.target` names: City-of-Helsinki/linkedevents)."""
    first = _first_argument(arguments)
    if first is None or not arguments:
        return first
    if any("$" in word.text for word in arguments):
        return None
    return " ".join(word.text for word in arguments)


def _first_argument(arguments: list[Word] | None) -> str | None:
    """The script's first argument when it is known: a word its caller wrote (not an image's
    default CMD, which a deployment's command replaces; not a `"$@"` passed on by a caller
    whose own are not known), or "" when it is known there is none (a compose service with no
    `command` whose image sets its ENTRYPOINT and no CMD: `*)` arms and usage exits)."""
    if arguments and not is_dockerfile(arguments[0].at.file) and "$" not in arguments[0].text:
        return arguments[0].text
    if arguments is not None and not arguments and COMMAND_COMPLETE.get():
        return ""
    return None


def _selected(
    lines: list[_Line],
    arguments: list[Word] | None,
    physical: Sequence[str] = (),
    fixed: Mapping[str, str] | None = None,
    unknown: frozenset[int] = frozenset(),
    environment_names: frozenset[str] = frozenset(),
    assuming: tuple[Mapping[str, str], dict[int, _Line]] | None = None,
    files: _FileTests | None = None,
    decided: set[int] | None = None,
) -> list[_Line]:
    """The lines that run when the script's first argument is known (an image's CMD after
    its ENTRYPOINT script, a compose `command:`): in a `case "$1" in` block, only the arm
    whose pattern matches it (`dev_server)` is not `server)`), and in an `if`/`elif` chain
    that tests "$1" against words (`if [ "$1" == "uvicorn" ]; then ... elif [ "$1" ==
    "gunicorn" ]`), only the branch it selects; every line otherwise. An image's own default
    CMD selects nothing: a deployment's command replaces it (peeringdb's `CMD ["runserver"]`
    image is run as `uwsgi` in production), so every arm is read. A test on a `fixed`
    variable (`[ "$MODULE_NAME" = 'nginx' ]`) is decided by its value. A name the script sets
    to its first argument (`SERVICE=$1` then `case ${SERVICE} in`; `MODE=${MODE:=$1}` when
    the environment (`environment_names`) does not set MODE) is that argument too. A test
    only `assuming`'s names (set by no file, not known to be unset) decide is decided with
    them unset, and each line of the branch so taken is recorded with its head. A file test
    (`[ -f /opt/gunicorn_conf.py ]`) is true where `files` finds that path in the image.
    `decided` gathers (by `id`) the `if` lines whose every test read is decided."""
    unset, assumed_at = assuming or ({}, {})
    known = _as_words(fixed or {})
    first = _first_argument(arguments)
    if first is not None:
        known.update(dict.fromkeys(_FIRST_WORDS, first))
    every = _all_arguments(arguments)
    if every is not None:
        known.update(dict.fromkeys(_ALL_WORDS, every))
    if not known and not unset and (files is None or files.find is None):
        return lines
    kept: list[_Line] = []
    depth = 0  # `case` blocks open
    chosen: list[_Case] = []  # the decided `case` blocks being read, innermost last
    running = True
    branches = _Branches(known, physical, unknown, _as_words(unset), files)
    aliases = _FirstArgument(known, first, environment_names)
    furthest = list(itertools.accumulate((line.first for line in lines), max))
    for index, line in enumerate(lines):
        words = line.words
        if not branches.step(lines, index):
            continue
        if running and not chosen:
            aliases.step(words)
        if words[:1] == ["case"] and words[-1:] == ["in"]:
            depth += 1
            compared = _case_word(words, aliases, first, known, branches, nested=bool(chosen))
            if running and compared is not None and (compared[1] == "first" or not branches.past):
                chosen.append(_Case(depth, compared[0], assumed=compared[1] == "unset"))
                if chosen[-1].assumed:  # read as an `if` only the unset names decide is
                    branches.settled.add(id(line))
                running = False
                continue
        elif words[:1] == ["esac"] and depth:
            depth -= 1
            if chosen and depth + 1 == chosen[-1].depth:
                chosen.pop()
                running = True
                continue
        elif chosen and depth == chosen[-1].depth and words and _CASE_PATTERN.match(words[0]):
            running = chosen[-1].arm(line)
        if running:
            kept.append(line)
            if (head := _assumed_head(branches, chosen)) is not None:
                assumed_at[id(line)] = head
            # A branch a known word took (an `if` or the chosen `case` arm) that ends the
            # script: nothing after it runs. Not a function's body placed at its call (its
            # lines come before the call's), whose call may be conditional (`|| usage`).
            top = chosen[-1].depth if chosen else 0
            taken = depth == top and (bool(chosen) or branches.decided())
            inline = index > 0 and line.first < furthest[index - 1]
            if taken and not inline and _ends_script(line, physical):
                break
    if decided is not None:
        decided.update(branches.settled)
    return kept


def _case_on_first(words: list[str], aliases: _FirstArgument, first: str | None) -> str | None:
    """The word a `case WORD in` line compares when WORD is the script's first argument
    (`"$1"`, a name set to it, `"${1:-api}"`: the default word when none is given); None
    when it compares something else, or the first argument is not known."""
    if first is None or len(words) != 3:
        return None
    defaulted = _FIRST_OR_DEFAULT.match(words[1])
    if defaulted is not None:
        return defaulted[1] if first == "" else first
    return first if words[1] in aliases.words() else None


@dataclass
class _Case:
    """A `case` block whose word is known, being read: its depth, the word, and whether an
    arm matched it (the shell runs the first such arm only)."""

    depth: int
    value: str
    matched: bool = False
    #: The word is a variable no file sets, taken as unset (""): the arm taken is assumed.
    assumed: bool = False
    head: _Line | None = None  # the arm so taken

    def arm(self, line: _Line) -> bool:
        """Whether the arm `line` starts (`prod|staging)`) runs: the first whose patterns
        match the value does."""
        patterns = line.words[0].lstrip("(").removesuffix(")").split("|")
        runs = not self.matched and any(fnmatch.fnmatchcase(self.value, p) for p in patterns)
        self.matched = self.matched or runs
        self.head = line if runs and self.assumed else None
        return runs


def _assumed_head(branches: _Branches, chosen: list[_Case]) -> _Line | None:
    """The head of the innermost branch or arm around the line being read that taking the
    variables no file sets as unset chose, if any."""
    heads = [case.head for case in chosen if case.head is not None]
    return heads[-1] if heads else branches.assumed()


def _case_word(
    words: list[str],
    aliases: _FirstArgument,
    first: str | None,
    known: Mapping[str, str],
    branches: _Branches,
    *,
    nested: bool,
) -> tuple[str, str] | None:
    """(the word a `case WORD in` line compares, whose it is: "first", "fixed" or "unset"):
    the first argument's outside a decided `case` (`_case_on_first`), else a fixed
    variable's (`_case_on_fixed`), else "" for a variable nothing sets when `branches`
    takes those as unset, as it does for an `if` on one (the `*)` arm runs, or none);
    None when none is known."""
    compared = _case_on_first(words, aliases, first) if not nested else None
    if compared is not None:
        return compared, "first"
    fixed = _case_on_fixed(words, known)
    if fixed is not None:
        return fixed, "fixed"
    unset = _case_on_fixed(words, branches.unset)
    return (unset, "unset") if unset is not None else None


def _case_on_fixed(words: list[str], known: Mapping[str, str]) -> str | None:
    """The value a `case "$NAME" in` line compares when NAME is a variable of the environment
    the script is started with that it does not set otherwise (an image's `ENV MODE=prod`,
    a compose service's `environment`: `fixed`), as an `if` test on it is decided; None
    when the word is another. `case "${ROLE:-web}" in` compares ROLE's value, or `web` when
    it is empty, as a test on that word does (ietf-tools/mailarchive: a Deployment setting
    `CONTAINER_ROLE: celery` runs the `celery)` arm). Seen in emfoursolutions/trakbridge
    (`case "$FLASK_ENV"` in a function `main` calls)."""
    if len(words) != 3 or words[1] in _FIRST_WORDS or words[1] in _ALL_WORDS:
        return None
    return _known_value(words[1], known)


#: A `case` on the first argument with a default word: `${1:-api}` (`${1-api}` too).
_FIRST_OR_DEFAULT = re.compile(r"\A\$\{1:?-([^}$]*)\}\Z")


def _as_words(values: Mapping[str, str]) -> dict[str, str]:
    """Each variable's value by the words that expand it: `$NAME` and `${NAME}`."""
    return {w: v for name, v in values.items() for w in (f"${name}", f"${{{name}}}")}


#: An assignment of the script's first argument to a name: `SERVICE=$1`, `MODE="${1}"`,
#: `MODE=${1:-web}`, or `MODE=${MODE:=$1}` (the environment's MODE first).
_FIRST_ARGUMENT = re.compile(
    r"\A(?P<name>[A-Za-z_]\w*)=(?:\$1|\$\{1\}|\$\{1:?[-=](?P<default>[^}$]*)\}"
    r"|\$\{(?P<own>(?P=name)):?[-=]\$(?:1|\{1\})\})\Z"
)
#: `MODE=${MODE:=registry}`: MODE keeps a value it already has (the argument, not empty).
_OWN_DEFAULT = re.compile(r"\A(?P<name>[A-Za-z_]\w*)=\$\{(?P=name):?[-=][^}$]*\}\Z")


def _rebinds(line: _Line, by_default: list[_Line] | None) -> bool:
    """Whether the `set -- WORDS` at `line` is the one "$@" holds after it: every arm of a
    `case` (or branch of an `if`) is read when no file gives the script's arguments, and each
    arm's `set -- daphne ...` / `set -- celery ...` is an alternative, not the next value; with
    the image's own CMD as the arguments (`CMD ["api"]`), the arms it does not select do not
    rebind them (ResearchHub/researchhub-backend's `case "${1:-api}" in api) set -- daphne`)."""
    return by_default is None or any(line is kept for kept in by_default)


_DECLARING_WORDS = frozenset({"export", "readonly", "local", "declare", "typeset"})


class _FirstArgument:
    """The names the script has set to its first argument so far, as `$NAME` words with its
    value in `known` (so a `case`, or an `if` test, on them is decided like one on "$1")."""

    def __init__(
        self, known: dict[str, str], first: str | None, environment: frozenset[str]
    ) -> None:
        self.known, self.first, self.environment = known, first, environment
        self.names: set[str] = set()
        self.moved = False  # after `shift` or `set --`, "$1" is another word

    def words(self) -> set[str]:
        return {"$1", "${1}"} | {w for n in self.names for w in (f"${n}", f"${{{n}}}")}

    def step(self, words: list[str]) -> None:
        if words[:1] == ["shift"] or _sets_positional(words):
            self.moved = True  # `set -- a b`, not `set -euo pipefail`
        if words[:1] and words[0] in _DECLARING_WORDS:
            words = [w for w in words[1:] if not w.startswith("-")]
        if len(words) != 1 or "=" not in words[0] or self.first is None:
            return
        name = words[0].partition("=")[0]
        found = _FIRST_ARGUMENT.match(words[0])
        if found is not None and not self.moved and not (found["own"] and name in self.environment):
            # No argument at all (""): `${1:-api}` is its default word.
            value = found["default"] if self.first == "" and found["default"] else self.first
            self.names.add(name)
            self.known.update({f"${name}": value, f"${{{name}}}": value})
        elif name in self.names and not _OWN_DEFAULT.match(words[0]):
            self.names.discard(name)  # set to something else
            self.known.pop(f"${name}", None)
            self.known.pop(f"${{{name}}}", None)


@dataclass
class _Chain:
    """An `if` ... `fi` being read: whether the lines around it run, whether its tests are
    all known (each compares "$1" with a word), and whether a branch was taken; whether a
    test was decided only by taking the variables no file sets as unset, and then the
    head of the branch taken."""

    outer: bool
    known: bool
    taken: bool
    assumed: bool = False
    head: _Line | None = None
    start: _Line | None = None
    undecided: bool = False  # a test of it the files do not decide


class _Branches:
    """The `if`/`elif`/`else` branches that run when the words of `known` ("$1", "$NAME")
    have their values: a test that compares one with a word (`[ "$1" == "uvicorn" ]`, `[[ $1
    = web ]]`, `[ -z "$1" ]`, joined by `&&`, `||`, `!`) is decided; one that only the words of
    `unset` decide (names no file sets, "" each) is decided so, as assumed; any other test
    leaves its chain read branch after branch, as before. After a `shift` or `set --`, "$1"
    is another word: nothing more is decided."""

    def __init__(
        self,
        known: Mapping[str, str],
        physical: Sequence[str],
        unknown: frozenset[int] = frozenset(),
        unset: Mapping[str, str] | None = None,
        files: _FileTests | None = None,
    ) -> None:
        self.known = known
        self.files = files or _FileTests(None)
        self.unset = unset or {}
        self.physical = physical
        #: The lines that source a file not here: once one runs, only "$1" is known.
        self.unknown = unknown
        self.past = False
        self.chains: list[_Chain] = []
        self.on = True
        self.moved = False
        self.settled: set[int] = set()  # `id` of each `if` line whose tests were all decided

    def decided(self) -> bool:
        """The line being read is in an `if` branch, and every `if` around it is decided."""
        return self.on and bool(self.chains) and all(chain.known for chain in self.chains)

    def assumed(self) -> _Line | None:
        """The head of the innermost branch around the line being read that an assumed
        test took, if any."""
        heads = [chain.head for chain in self.chains if chain.head is not None]
        return heads[-1] if self.on and heads else None

    def step(self, lines: list[_Line], index: int) -> bool:
        """Whether `lines[index]` runs, the chains updated by it."""
        words = lines[index].words
        head = words[0] if words else ""
        if head == "shift" or _sets_positional(words):
            self.moved = True
        if head in _SOURCING and self.on and lines[index].first in self.unknown:
            self.past = True  # a file not here runs in this shell: it may set anything
        if head == "if":
            outer = self.on
            self.chains.append(_Chain(outer, False, False, start=lines[index]))
            self._branch(lines, index)
            return outer
        if not self.chains or head not in ("elif", "else", "fi"):
            return self.on
        chain = self.chains[-1]
        if head == "fi":
            self.chains.pop()
            if not chain.undecided:
                self.settled.add(id(chain.start))
            self.on = chain.outer
            return self.on
        if not chain.known:
            self.on = chain.outer
        elif head == "else":
            self.on = chain.outer and not chain.taken
            chain.head = lines[index] if self.on and chain.assumed else None
        elif chain.taken:
            self.on = False
            chain.head = None
        else:
            self._branch(lines, index)
        return self.on

    def _branch(self, lines: list[_Line], index: int) -> None:
        """The innermost chain moved to the `if`/`elif` at `lines[index]`: its test decided
        by the known words, else by them and the unset ones (as assumed)."""
        chain = self.chains[-1]
        test = self._test(lines, index)
        if test is None and self.unset:
            test = self._test(lines, index, self.unset)
            chain.assumed = chain.assumed or test is not None
        chain.known = test is not None
        chain.undecided = chain.undecided or test is None
        chain.taken = test is True
        chain.head = lines[index] if test and chain.assumed else None
        self.on = chain.outer and test is not False

    def _test(
        self, lines: list[_Line], index: int, unset: Mapping[str, str] | None = None
    ) -> bool | None:
        """The value of the test from `lines[index]` (`if`/`elif`) to its `then`: tests that
        compare a known word with words (`shell_values.condition_value`: joined by `&&`, `||`,
        `!`, in three-valued logic); None when the files do not decide it."""
        past = self.past
        known = {
            k: v
            for k, v in {**(unset or {}), **self.known}.items()
            if (not self.moved if k in _FIRST_WORDS or k in _ALL_WORDS else not past)
        }
        if (not known and self.files.find is None) or not self.physical:
            return None
        end = next(
            (i for i in range(index + 1, len(lines)) if lines[i].words[:1] == ["then"]), None
        )
        if end is None:
            return None
        start, last = lines[index].first, lines[end - 1].last
        # The condition as written (its `&&` / `||` are no part of the lines' words).
        text = without_comments("\n".join(self.physical[start - 1 : last]))
        text = text.replace("\\\n", " ").replace("\n", " ")
        # `if TEST;` with its `then` on the next line: the `;` ends the test, as `; then` does.
        words = _condition_words(re.sub(r";\s*(?:then\b.*)?\Z", "", text.rstrip(), flags=re.S))
        # Only as the lines read it: a function's body at its call has the call's `$1`.
        spanned = [w for i in range(index, end) for w in lines[i].words[int(i == index) :]]
        if words is None or _without_lists(words) != _without_lists(spanned):
            return None

        def comparison(words: list[str]) -> bool | None:
            found = _argument_test(words, known)
            found = numeric_test(words, known) if found is None else found
            return self.files.test(words, known) if found is None else found

        return condition_value(words, comparison)


@dataclass
class _FileTests:
    """`[ -f PATH ]` (also `-e`, `-r`, `-s`) on a path the image has: a file the tree holds
    where the script runs (COPY/ADD into the image, the script's own folder) makes the test
    true; a path not found is not known to be missing (a base image or a volume may hold
    it), so the test is undecided."""

    find: FindConfig | None

    def test(self, words: list[str], known: Mapping[str, str]) -> bool | None:
        found = test_operands(words)
        if found is None or self.find is None or len(found[1]) != 2:
            return None
        flag, operand = found[1]
        if flag not in ("-f", "-e", "-r", "-s"):
            return None
        path = _known_value(operand, known) if "$" in operand else operand
        if not path or any(c in path for c in "$`*?["):
            return None
        return True if self.find(path) is not None else None


def _without_lists(words: list[str]) -> list[str]:
    return [w for w in words if w not in ("&&", "||")]


def _condition_words(text: str) -> list[str] | None:
    """The words of an `if`/`elif` condition after its keyword, with `&&`, `||`, `;`, `|`
    as words of their own, as the shell splits them; None when it cannot be split."""
    text, substituted = _substitutions(text) if "$(" in text else (text, {})
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = [_restored(w, substituted) for w in lexer]
    except ValueError:
        return None
    heads = [
        i
        for i, w in enumerate(words)
        if w in ("if", "elif") and (not i or words[i - 1] in (";", "then", "else", "do"))
    ]
    return words[heads[-1] + 1 :] if heads else None


def _sets_positional(words: Sequence[str]) -> bool:
    """`set -- a b` or `set a b` replaces the script's arguments; `set -euo pipefail` and
    `set +x` only set options."""
    return words[:1] == ["set"] and (
        "--" in words or any(not w.startswith(("-", "+")) for w in words[1:2])
    )


def _argument_test(words: list[str], known: Mapping[str, str]) -> bool | None:
    """`[ "$1" == "word" ]` (also `=`, `!=`, `[[ ]]`, `test`, `-z "$1"`, `-n "$1"`) with the
    words of `known` ("$1", "$NAME") at their values, as the shell's quotes leave them; None
    for any other test."""
    found = test_operands(words)
    if found is None:
        return None
    closing, inner = found
    if len(inner) == 1:  # `[ "$X" ]`: true when the word is not empty
        value = _known_value(inner[0], known)
        return None if value is None else value != ""
    if len(inner) == 2 and inner[0] in ("-z", "-n"):
        value = _known_value(inner[1], known)
        return None if value is None else (value == "") == (inner[0] == "-z")
    if len(inner) != 3 or inner[1] not in ("=", "==", "!="):
        return None
    left, op, right = inner
    if _known_value(right, known) is not None and _known_value(left, known) is None:
        left, right = right, left
    value = _known_value(left, known)
    if value is None or "$" in right or "`" in right:
        return None
    if closing == "]]" and any(c in right for c in "*?["):
        return None  # `[[ $1 == web* ]]` matches a pattern
    return (value == right) == (op != "!=")


#: `${NAME:-word}` / `${NAME-word}`: NAME's value, or the word when it is unset (or empty).
_DEFAULTED = re.compile(r"\A\$\{(?P<name>[A-Za-z_]\w*)(?P<colon>:?)-(?P<word>[^}$`]*)\}\Z")


def _ends_script(line: _Line, physical: Sequence[str]) -> bool:
    """`exit`, or `exec PROGRAM` (which replaces the shell; `exec 2>&1` only redirects), as a
    command of its own: not after `||` or `&&` (`alembic upgrade head || exit 1`)."""
    words = line.words
    text = physical[line.first - 1] if 0 < line.first <= len(physical) else ""
    if not text.lstrip().startswith(tuple(words[:1])) or "||" in text or "&&" in text:
        return False
    if words[:1] == ["exit"]:
        return True
    return words[:1] == ["exec"] and len(words) > 1 and not re.match(r"\d*[<>&]", words[1])


def _known_value(word: str, known: Mapping[str, str]) -> str | None:
    """The value of a test's operand when `known` gives it: "$1", "$NAME", and
    `"${PI_INIT_ONLY:-false}"` with PI_INIT_ONLY known (the container sets it), which is its
    value, or the default word when the value is empty and `:-` says so; None otherwise
    (unset here is not known to be unset where it runs)."""
    if word in known:
        return known[word]
    found = _DEFAULTED.match(word)
    if found is None or f"${found['name']}" not in known:
        return None
    value = known[f"${found['name']}"]
    return found["word"] if found["colon"] and not value else value


#: A `case` arm's pattern before its command on the same line (`web) exec gunicorn ...`).
_CASE_PATTERN = re.compile(r"\A[^()\s]+\)\Z")


def _after_keywords(words: list[Word]) -> list[Word]:
    """The simple command after the shell's keywords on its line (`then`, `else`, `{`) and a
    `case` arm's pattern: `web) exec gunicorn ... ;;` runs gunicorn."""
    start = 0
    while start < len(words) - 1 and (
        words[start].text in _KEYWORDS or (start == 0 and _CASE_PATTERN.match(words[0].text))
    ):
        start += 1
    return words[start:]


def _daemon_program(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """`start-stop-daemon --start --exec $DAEMON -- ...`: the program named by the script's
    variable, expanded from its value here (which server it is decides whether the line is
    read); the words after `--` are the server's, expanded by its own reading."""
    if not any(program_name(w.text) == "start-stop-daemon" for w in words[:2]):
        return words
    return [
        replace(word, text=expand_known(word.text, env))
        if index and words[index - 1].text in _DAEMON_PROGRAM and "$" in word.text
        else word
        for index, word in enumerate(words)
    ]


def _command_variable(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """`CMD="gunicorn --workers 3 app"` then `exec $CMD`: the unquoted variable in the
    command's place, split into words as the shell splits it, from its value known here; also
    behind a process wrapper that runs it (`exec gosu "$UID" $CMD`, `su-exec app $CMD`)."""
    first = len(words) - len(_unwrapped(words))
    if len(words) <= first or not _LONE_EXPANSION.match(words[first].text):
        return words
    value = expand_shell(words[first].text, env)
    if not value or not value.strip():
        return words  # empty: dropped as the shell drops it, by `_without_empty_prefix`
    # A command substitution in it (`--bind :$(_get_env_var "PORT")`) stays in the one field
    # that holds it: its output is one word known only when it runs.
    protected, substituted = _substitutions(value) if "$(" in value else (value, {})
    try:
        split = [_restored(w, substituted) for w in shlex.split(protected)]
    except ValueError:
        return words
    at = words[first].at
    return [*words[:first], *(Word(w, at) for w in split), *words[first + 1 :]]


def _positional(
    words: list[Word], before: list[Word] | None, env: Mapping[str, str], text: str = ""
) -> list[Word] | None:
    """The script's arguments after `set -- WORDS` (`"$@"` from then on), each expanded from
    the variables known at that line; `"$@"` among them is the arguments before (not known
    when those are not). An unquoted `$SSL_ARGS` (not `"$SSL_ARGS"` in the line's `text`)
    is split into fields as the shell splits it (none when empty); a value known only in
    part keeps its unknown fields as written, said unresolved by the server's reader."""
    arguments: list[Word] = []
    for word in words:
        if word.text in ("$@", "$*"):
            if before is None:
                return None
            arguments.extend(before)
            continue
        value = expand_shell(word.text, env)
        if _LONE_EXPANSION.match(word.text) and f'"{word.text}"' not in text:
            fields = value.split() if value is not None else None
            name = re.sub(r"[${}]|:?-.*", "", word.text)
            why = unresolved_by_branches(name, env) if fields is None else None
            if why is not None:
                # Options the branches set apart (`SSL_ARGS=""`, or the TLS flags when a test
                # the files do not decide passes): left out, as an unknown `$VAR` on a
                # server's own line is, never handed on as the literal `$SSL_ARGS`.
                note(
                    "unresolved-variable",
                    word.at,
                    f"{word.at}: {word.text!r}: a value {why}; the server was read without it",
                )
                continue
            if fields is None:
                fields = [w.text for w in _known_fields([word, word], env)[1:]]
            arguments.extend(Word(field, word.at) for field in fields)
            continue
        arguments.append(Word(value or word.text, word.at))
    return arguments


def _argument_values(line: _Line, arguments: list[Word] | None) -> _Line:
    """An assignment line with the script's known arguments in place of `$1`, `${2}`
    (`APP="$1"` before `shift`, with the image's ENTRYPOINT arguments given)."""
    if line.arguments or not arguments or not all(_ASSIGNMENT.match(w) for w in line.words):
        return line
    if any(re.search(r"\$[@*#(]|\$\{[@*#]|`", a.text) for a in arguments):
        return line
    texts = [a.text for a in arguments]

    def one(match: re.Match[str]) -> str:
        index = int(match[1] or match[2])
        return texts[index - 1] if index <= len(texts) else match[0]

    return replace(line, words=[_POSITIONAL.sub(one, w) for w in line.words])


class _ArgumentsByBranch:
    """The script's arguments at each `if` whose branches are all read (no file decides its
    test): each `elif` / `else` starts again from them, as the shell runs one branch only,
    so two `set -- uvicorn ...` in two branches are two alternatives, not one `"$@"` inside
    the other."""

    def __init__(self) -> None:
        self.at_if: list[list[Word] | None] = []

    def step(self, line: _Line, arguments: list[Word] | None) -> list[Word] | None:
        head = line.words[:1]
        if head == ["if"]:
            self.at_if.append(arguments)
        elif head in (["elif"], ["else"]) and self.at_if:
            return self.at_if[-1]
        elif head == ["fi"] and self.at_if:
            self.at_if.pop()
        return arguments


def _runs_arguments(words: list[str], env: Mapping[str, str] | None = None) -> bool:
    """The line runs the script's arguments: `exec "$@"`, also behind a process wrapper that
    runs the command after it (`exec gosu app "$@"`, `exec tini -- "$@"`), or a variable the
    script set to them and nothing else (`cmd="$@"` then `exec $cmd`, as wait-for-it.sh and
    the wait-for-postgres.sh of Docker's documentation do)."""
    rest = [w for w in words if w != "exec"]
    while rest and program_name(rest[0]) in WRAPPERS:
        takes = WRAPPERS[program_name(rest[0])]
        rest = rest[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
        rest = rest[takes:]
    if rest in (["$@"], ["$*"]) or _command_string_runs_arguments(rest):
        return True
    variable = _VARIABLE_PROGRAM.match(rest[0]) if len(rest) == 1 else None
    name = rest[0].strip("${}") if variable is not None else ""
    return env is not None and bool(name) and f"{name}[$@]" in env


def _command_string_runs_arguments(words: list[str]) -> bool:
    """`su -p app -c "exec $*"`, `sh -c "$*"`, `bash -c 'exec "$@"'`: a shell (as the user
    `su` switches to) runs a command string that is only the script's arguments, so the
    script starts whatever command it is given, as `exec "$@"` does."""
    if not words or "-c" not in words[1:] or words.index("-c") + 1 >= len(words):
        return False
    if program_name(words[0]) != "su" and program_name(words[0]) not in SHELLS:
        return False
    try:
        string = shlex.split(words[words.index("-c") + 1])
    except ValueError:
        return False
    return [w for w in string if w != "exec"] in (["$@"], ["$*"])


def _evaluated(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """`eval "$cmd"`: the words the shell runs after expanding and splitting its arguments
    again, from the script's own variables (`cmd="exec gunicorn ..."` set above it); the
    words as written when the value is not known here."""
    if len(words) < 2 or words[0].text != "eval":
        return words
    text = expand_shell(" ".join(w.text for w in words[1:]), env)
    if text is None:
        return words
    try:
        split = shlex.split(text, comments=True)
    except ValueError:
        return words
    return [Word(w, words[0].at) for w in split]


#: `$(eval echo "$args")`, `$(eval echo $@)`: the words a variable (or the script's own
#: arguments) holds, expanded and split once more by `eval`.
_EVAL_ECHO = re.compile(
    r'\A\$\(\s*eval\s+echo\s+"?\$(?:\{(?P<braced>[\w@*]+)\}|(?P<plain>[\w@*]+))"?\s*\)\Z'
)


def _echoed_arguments(
    words: list[Word], arguments: list[Word] | None, env: Mapping[str, str]
) -> list[Word]:
    """`args="$@"` then `uvicorn app $(eval echo "$args")`: the script's arguments (an image's
    `CMD ["--workers ${WORKERS} --host ${HOST}"]`), each expanded from the variables known
    here (the image's ENV) and split into words, as eval does; `"$@"` when the arguments are
    known only to the caller, so the server's defaults are never read as the values."""
    out: list[Word] = []
    for word in words:
        found = _EVAL_ECHO.match(word.text)
        name = (found["braced"] or found["plain"]) if found is not None else ""
        if not name or (name not in ("@", "*") and f"{name}[$@]" not in env):
            out.append(word)
            continue
        if arguments is None:
            out.append(Word("$@", word.at))
            continue
        for argument in arguments:
            try:
                split = shlex.split(expand_known(argument.text, env))
            except ValueError:
                split = [argument.text]
            out.extend(Word(w, argument.at) for w in split)
    return out


_EXECLINE = re.compile(r"#!\S*\bexeclineb\b")


def _managed(
    path: Path,
    lines: list[_Line],
    physical: list[str],
    env: Mapping[str, str],
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
) -> AppServer | None:
    """The server a process manager the script runs starts (`exec supervisord -c FILE`,
    `exec honcho -f Procfile start`), with the script's line first in its chain; None when no
    line runs one whose config is here."""
    for line in lines:
        words = _words(line, physical, path)
        names = {program_name(w.text) for w in words}
        service = _service_started(words)
        if service is None and not names & (_MANAGERS | _CONFIG_RUNNERS | SUPERVISORS):
            continue
        # `-c "$SUPERVISORD_CONF"`: the script's own variables name the file.
        words = [Word(expand_shell(w.text, env) or w.text, w.at) for w in words]
        try:
            app = run_words(path, words, env, env_at, find_config=find_config, depth=1)
        except CheckInputError:  # its config is refused: said when it is read on its own
            continue
        if app is not None:
            step = Location(path, line.first)
            if (
                app.manager_without_exec is None
                and names & _MANAGERS
                and service is None  # the init script daemonizes it: `exec` is no fix
                and "exec" not in _after_keyword_words(line)
            ):
                # `supervisord -c FILE` as the shell's child: the shell stays in front of it.
                app = replace(app, manager_without_exec=_child_line(line, lines, physical, path))
            if app.launched_by[:1] == (step,):  # a Procfile runner names the line itself
                return app
            return replace(app, launched_by=(step, *app.launched_by))
    return None


def _past_keywords(line: _Line) -> _Line:
    """The line from its simple command on: `then PORT=8000` and `web) CMD="..."` assign as
    a line of their own does (`shell_paths` then tells which branch may have run)."""
    words, start = line.words, 0
    while start < len(words) - 1 and (
        words[start] in _KEYWORDS or (start == 0 and _CASE_PATTERN.match(words[0]))
    ):
        start += 1
    return replace(line, words=words[start:]) if start else line


def _after_keyword_words(line: _Line) -> list[str]:
    """The line's first word after the shell keywords it follows (`then exec x`: `exec`)."""
    words = list(line.words)
    while words and words[0] in _KEYWORDS:
        words = words[1:]
    return words[:1]


def follow_words(
    file: Path, words: Sequence[Word], env: Mapping[str, str], find_config: FindConfig
) -> AppServer | None:
    """`run_words` as the Procfile and supervisord readers follow an entry that runs a
    script (`commands.FollowWords`)."""
    return run_words(file, words, env, {}, find_config=find_config)


#: `${NAME:word}` whose word starts with a letter: bash reads it as `${NAME:offset}`, an
#: arithmetic offset (`info` is the variable info, 0 when unset), not a default.
_SUBSTRING = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z_][^}]*)\}")


def _substrings(command: ServerCommand) -> tuple[Setting[str], ...]:
    """Each `${NAME:word}` in the server's words, as written, where it is written."""
    return tuple(
        Setting(m[0], word.at)
        for word in (command.program, *command.args)
        for m in _SUBSTRING.finditer(word.text)
    )


#: A program word that is a variable: `exec "$APP_SERVER" "$@"`, `$CMD --port 80`.
#: Commands whose words are a test's operands (`[[ -n $X ]]`, `[ "$1" = web ]`, `test`).
_CONDITIONS = frozenset({"[[", "[", "test", "if", "elif", "while", "until"})
_VARIABLE_PROGRAM = re.compile(r"\A\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\Z")


def _not_followed(
    path: Path, lines: list[_Line], env: Mapping[str, str], known: Collection[int] = ()
) -> None:
    """NotFollowed when a line runs a program named by a variable the files read do not set:
    the server it starts is not known, which is not the same as starting none. A line in
    `known` (by `id`) ran its program known where it ran (`local bin=...; "$bin" &` in a
    branch), whatever the end of the script leaves the name."""
    for line in lines:
        words = line.words[1:] if line.words[:1] == ["exec"] else line.words
        while words[:1] and words[0] in _KEYWORDS:
            words = words[1:]
        if words[:1] and words[0] in _CONDITIONS:
            continue  # `[[ -z $service || ... ]]`: operands of a test, not a program
        array = _ARRAY_EXPANSION.match(words[0]) if words else None
        if array is not None and f"{array['name']}[@]" not in env:
            raise NotFollowed(
                f"{path}:{line.first}: not followed: runs {words[0]}, an array whose elements "
                "no file read sets all (one is known only where it runs), so the server it "
                "starts is not known"
            )
        if _runs_arguments(words, env):
            continue  # `cmd="$@"; exec $cmd`: the caller's arguments, not an unknown program
        if words and _VARIABLE_PROGRAM.match(words[0]) and not expand_shell(words[0], env):
            why = unresolved_by_branches(words[0].strip("${}"), env)
            if why is not None and id(line) in known:
                continue
            if why is not None:
                raise NotFollowed(
                    f"{path}:{line.first}: not followed: runs {words[0]}, a program named by a "
                    f"variable {why}, so the server it starts is not known"
                )
            raise NotFollowed(
                f"{path}:{line.first}: not followed: runs {words[0]}, a program named by a "
                "variable no file read sets, so the server it starts is not known"
            )


def _without_exec(
    line: _Line, lines: list[_Line], command: ServerCommand, physical: list[str]
) -> Setting[str] | None:
    """The server's line when the shell runs it as a child (no `exec` before it), so the
    shell stays the container's PID 1; None when it `exec`s, or when the script handles
    signals itself (a `trap`)."""
    written = [
        index
        for index, word in enumerate(line.words)
        if word == command.program.text
        or _ARRAY_EXPANSION.match(word)
        or _LONE_EXPANSION.match(word)
    ]
    # (The program may come out of an array or a variable: `exec "${SERVER[@]}"`, `exec $CMD`.)
    program = written[0] if written else 0
    if "exec" in line.words[:program]:
        return None
    if command.program.text not in line.words and line.words[:1] == ["exec"]:
        # Inside a `-c` string (`exec su app -c "exec gunicorn ..."`): each program execs the
        # next, so the server ends up as the container's PID 1.
        inner = next((w for w in line.words if command.program.text in w.split()), "")
        if re.match(r"\s*exec\s", inner):
            return None
    if any(other.words[:1] == ["trap"] for other in lines):
        return None  # the script forwards signals itself
    words = line.words
    if line.background or _daemonized(words):
        # Backgrounded or daemonized beside another foreground process (`exec nginx`): a
        # container of two processes, whose fix is not `exec` on this line.
        return None
    text = " ".join(physical[line.first - 1 : line.last]).strip()
    text = re.sub(r"\s*\\\s+", " ", text)  # continuation lines joined
    # Whole: the fix is this line with `exec`, never cut mid-quote (a message shortens it).
    return Setting(text[:2000], Location(command.program.at.file, line.first))


def _daemonized(words: Sequence[str]) -> bool:
    """The server detaches from the shell that starts it: gunicorn's `-D` / `--daemon`,
    uWSGI's `--daemonize FILE` / `--daemonize2 FILE` (its master forks away and the command
    returns: no child of the shell to pass SIGTERM to)."""
    return any(
        w in ("-D", "--daemon") or w.partition("=")[0] in ("--daemonize", "--daemonize2")
        for w in words
    )


#: The LSB header of a SysV init script (`/etc/init.d/NAME`), whose `start` leaves a daemon
#: behind and returns, not a container's PID 1.
_INIT_INFO = "### BEGIN INIT INFO"


def _backgrounded(
    line: _Line,
    lines: list[_Line],
    command: ServerCommand,
    physical: list[str],
    daemon: bool = False,
) -> Setting[str] | None:
    """The server's line when the script starts it in the background (`&`) or daemonized (by
    its flags, or by its config: `daemon`) and has no `trap` to pass SIGTERM on; None
    otherwise."""
    words = line.words
    if not (line.background or daemon or _daemonized(words)):
        return None
    if any(other.words[:1] == ["trap"] for other in lines):
        return None  # the script forwards signals itself
    if any(text.strip() == _INIT_INFO for text in physical):
        return None  # a SysV init script starts a daemon and returns: init stops it by its PID
    return _line_setting(line, command, physical)


def _line_setting(line: _Line, command: ServerCommand, physical: list[str]) -> Setting[str]:
    """The server's line as written, continuation lines joined."""
    text = " ".join(physical[line.first - 1 : line.last]).strip()
    text = re.sub(r"\s*\\\s+", " ", text)
    return Setting(text[:2000], Location(command.program.at.file, line.first))


def _detached(line: _Line, lines: list[_Line], daemon: bool = False) -> bool:
    """The server's line daemonizes it (not `&`; by its flags, or by its config: `daemon`) and
    is the script's last command: the server detaches from a script that then ends
    (SEED-platform's `uwsgi ... --daemonize LOG`)."""
    return (
        not line.background
        and (daemon or _daemonized(line.words))
        and all(other.first <= line.first for other in lines if other.words)
    )


#: A word that runs a script by its path (`/start`, `./run`, `bin/boot.sh`, `scripts/serve`: a
#: command name with a slash is never looked up on the PATH, POSIX "Command Search and
#: Execution"), not a program on the PATH (`gunicorn`, `python`): when the script is here, it
#: decides what runs.
_SCRIPT_PATH = re.compile(r"\A\.{0,2}/\S+\Z|\A[\w.-]+/\S+\Z|\A\S+\.(sh|bash)\Z")


def _here_script(
    file: Path,
    script: ConfigFile,
    words: list[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """The server a script found here starts, the rest of `words` its "$@"; past a waiting
    script (`wait-for-it.sh db:5432 -t 30 -- /entrypoint.sh`, which runs the command after
    `--` once its dependency answers), that command's."""
    app = _script_server(script, words[1:], env, env_at, find_config, words[0].text)
    separator = next((i for i, w in enumerate(words) if w.text == "--"), 0)
    if app is not None or not separator:
        return app
    return run_words(
        file, words[separator + 1 :], env, env_at, find_config=find_config, depth=depth + 1
    )


def run_words(
    file: Path,
    words: Sequence[Word],
    env: Mapping[str, str] | None = None,
    env_at: Mapping[str, Location] | None = None,
    *,
    find_config: FindConfig | None = None,
    depth: int = 0,
) -> AppServer | None:
    """The server that `words` start, however directly: a server command line, or a shell
    script it runs (`bash /app/start`, `/start.sh`, an entrypoint ending in `exec "$@"`) when
    `find_config` finds the script. None when nothing here starts a server. Run by a wrapper
    that restarts it on code changes (`watchmedo auto-restart -- /start.sh`), it reloads."""
    app = _run_words(file, words, env, env_at, find_config=find_config, depth=depth)
    init = _init(words) if depth == 0 else None
    if app is not None and init is not None and app.init is None:
        app = replace(app, init=init)
    reloader = reloading_wrapper(words)
    if app is not None and app.reloads is None and reloader is not None:
        app = replace(app, reloads=Setting(True, reloader.at))
    return app


#: Inits an image runs as PID 1 in front of its command: each forwards the stop signal to
#: its child (dumb-init, and tini with -g, to the child's process group) and exits with it.
_INITS = frozenset({"tini", "docker-init", "dumb-init", "catatonit"})


def _init(words: Sequence[Word]) -> Setting[str] | None:
    """The init the container's command starts with (`/sbin/tini -s --`), its options as
    written; None when it starts with none."""
    if not words or program_name(words[0].text) not in _INITS:
        return None
    options = [w.text for w in words[1:]]
    end = next((i for i, w in enumerate(options) if not w.startswith("-") or w == "--"), None)
    shown = [program_name(words[0].text), *options[: end if end is not None else len(options)]]
    return Setting(" ".join(shown), words[0].at)


def _side_by_side(
    file: Path,
    words: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """`monofy setup && /start.sh ||| worker`: the server a command it runs side by side starts."""
    for child in monofy_children(_unwrapped(list(words))) or []:
        app = run_words(file, child, env, env_at, find_config=find_config, depth=depth + 1)
        if app is not None:
            return app
    return None


def _run_words(
    file: Path,
    words: Sequence[Word],
    env: Mapping[str, str] | None = None,
    env_at: Mapping[str, Location] | None = None,
    *,
    find_config: FindConfig | None = None,
    depth: int = 0,
) -> AppServer | None:
    """`run_words`, the wrapper's reloading aside."""
    words = list(words)
    if find_config is not None:
        # A config rendered from a Jinja template where the container starts.
        find_config = with_templates(find_config)
    if find_config is not None and depth <= 4:
        decided, app = _launcher_here(file, words, env, env_at, find_config, depth)
        if decided:
            return app
    found = server_command(words)
    if found is not None:
        shell = bool(words) and program_name(words[0].text) in SHELLS
        return read_command(
            file, found, env, env_at, shell=shell or depth > 0, find_config=find_config
        )
    # No command of the string starts a server as written (`then exec /start.sh`).
    compound = _compound_string(file, words, env, env_at, find_config) if depth <= 4 else None
    if compound is not None:
        return compound
    if not words or find_config is None or depth > 4:
        return None
    # A runner whose config names the server (`supervisord -c FILE`, `pserve FILE`).
    named = _supervisord_config(words, env, find_config) or pserve_served(words, env, find_config)
    if named is not None:
        return named
    managed = _procfile_manager(words, env, env_at, find_config, depth)
    if managed is not None:
        return managed
    side = _side_by_side(file, words, env, env_at, find_config, depth)
    if side is not None:
        return side
    rest = words
    # A process wrapper before the script (`tini -- /opt/app/boot.sh`, `gosu app /start`):
    # the script is what it runs.
    while rest and program_name(rest[0].text) in WRAPPERS:
        rest = wrapped(rest, program_name(rest[0].text))  # `nice -n 5 /start.sh`
    if rest and program_name(rest[0].text) in SHELLS:
        rest = rest[1:]
        while rest and rest[0].text.startswith("-"):
            command_string = "c" in rest[0].text and len(rest) >= 2
            rest = rest[1:]
            if command_string:
                return _command_string(file, rest[0], rest[1:], env, env_at, find_config, depth)
    elif len(rest) >= 2 and rest[0].text in _SOURCING:  # `sh -c ". bin/startup.sh"`
        rest = rest[1:]
    elif len(rest) >= 2 and program_name(rest[0].text).startswith("python"):
        # `python3 -u launch.py`: the interpreter runs the launcher script after its options.
        rest = rest[1:]
        while rest and rest[0].text.startswith("-") and rest[0].text not in ("-m", "-c"):
            rest = rest[1:]
        if not rest or not rest[0].text.endswith(".py"):
            return None
    if not rest:
        return None
    if not _SCRIPT_PATH.match(rest[0].text) or _installed_script(rest[0], find_config):
        # `/app/.venv/bin/shop`: what pip or uv installs for the console script `shop`.
        entry = console_script(program_name(rest[0].text), find_config, rest[0].at)
        if entry is not None:
            return _console_server(entry, rest[1:], env, env_at, find_config)
    recipe = _runner_recipe(rest, env or {}, find_config)
    if recipe is not None:
        return _made_server(recipe, env, env_at, find_config, depth)
    script = find_config(rest[0].text, rest[0].at)
    if script is None:
        after = _after_waiting(rest)
        if after is None:  # `consul-template -config app.hcl`: its `exec` block's command
            return _exec_block(rest, env, env_at, find_config, depth)
        return run_words(file, after, env, env_at, find_config=find_config, depth=depth + 1)
    return _script_server(script, rest[1:], env, env_at, find_config, rest[0].text)


def _runner_recipe(
    words: Sequence[Word], env: Mapping[str, str], find_config: FindConfig
) -> Recipe | None:
    """The lines a task runner's command line runs: `make TARGET`, `just RECIPE`, `tox -e NAME`."""
    return (
        make_recipe(words, dict(env), find_config)
        or just_recipe(words, env, find_config)
        or tox_recipe(words, find_config)
    )


def _known_program(words: list[Word], env: Mapping[str, str]) -> list[Word]:
    """A command of a command string with its program's variables known here expanded, as
    the shell expands them (`exec ${APP_DIR}/docker/init.bash` under the image's `ENV
    APP_DIR=/srv/app`), so the script is found where the image's COPY put it; as written when
    one of them is known only when it runs."""
    first = len(words) - len(_unwrapped(words))  # past `exec`, `gosu app`
    if first >= len(words) or "$" not in words[first].text:
        return words
    expanded = expand_shell(words[first].text, env)
    if not expanded:
        return words
    return [*words[:first], Word(expanded, words[first].at), *words[first + 1 :]]


def _installed_script(program: Word, find_config: FindConfig) -> bool:
    """Whether `program` is a path in a `bin/` folder (a virtualenv's, `/usr/local/bin/`)
    that no file here is: the script an installer writes for a console script."""
    head, _, name = program.text.rpartition("/")
    return (
        (head == "bin" or head.endswith("/bin"))
        and bool(name)
        and find_config(program.text, program.at) is None
    )


def _command_string(
    file: Path,
    script: Word,
    positional: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """`sh -c "uv run app --port $PORT"`: the server of the string's first command that
    starts one, in order; a leading `$CMD_PREFIX` the image's `ENV` makes empty is dropped, as
    in a script (`CMD $CMD_PREFIX gunicorn ...` with `ENV CMD_PREFIX=""`), and a command held
    in a variable (`ENV GUNICORN gunicorn --bind :8080 ...` then `CMD exec $GUNICORN`) is split
    into the words it holds, as the shell splits an unquoted expansion."""
    directory: str | None = None  # where a `cd DIR &&` before the command moved
    for command in shell_commands(script, positional):
        words = _without_empty_prefix(_command_variable(command, env or {}), env or {})
        words = _known_program(words, env or {})
        if words[:1] and words[0].text == "cd":
            # `cd /app/src && python3 ./gunicorn_run.py`: its relative paths are found there.
            directory = _changed_directory(directory, words[1:], env or {})
            continue
        find = find_config if directory is None else in_directory(directory, find_config)
        app = run_words(file, words, env, env_at, find_config=find, depth=depth + 1)
        if app is not None:
            return app
    return None


def _made_server(
    recipe: Recipe,
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """The server a line of a make target's or a just recipe's lines starts (each line its
    own `/bin/sh -c`, with what the runner exports), that line first in its chain; None when
    none does."""
    if recipe.exported:
        env = {**(env or {}), **dict(recipe.exported)}
    for line in recipe.lines:
        shell = [Word("/bin/sh", line.at), Word("-c", line.at), line]
        app = run_words(
            recipe.source.file, shell, env, env_at, find_config=find_config, depth=depth + 1
        )
        if app is not None:
            return replace(app, launched_by=(line.at, *app.launched_by))
    return None


#: A wait-for wrapper's name (`wait-for-it.sh`, `wait-for`, `docker-wait.sh`, `wait_for_db`).
_WAITER = re.compile(r"wait", re.I)


def _after_waiting(words: Sequence[Word]) -> list[Word] | None:
    """The command a wait-for wrapper that is not among the files runs once its hosts answer:
    the words after its `--` (`wait-for-it.sh db:5432 -- ./start.sh`, the usage wait-for-it,
    wait-for and dockerize document), or that `watchmedo auto-restart` runs; None for any
    other command."""
    texts = [w.text for w in words]
    # watchdog's `watchmedo auto-restart -p '*.py' -- python3 run.py` (the usage its docs
    # show) likewise runs, and restarts, the command after its `--`.
    restarts = program_name(texts[0]) == "watchmedo" and texts[1:2] == ["auto-restart"]
    if not (restarts or _WAITER.search(program_name(texts[0]))) or "--" not in texts[1:]:
        return None
    after = list(words[texts.index("--", 1) + 1 :])
    return after or None


def _launcher_here(
    file: Path,
    words: list[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> tuple[bool, AppServer | None]:
    """(True, its server) when a script here decides what `words` run; (False, None) when
    none does and `words` are read on."""
    inner = _unwrapped(words)
    decided, app = supervised(inner, env, env_at)  # `exec runsvdir /etc/service`
    if decided:
        return True, app
    if len(words) >= 2 and inner and _SCRIPT_PATH.match(inner[0].text):
        # A launcher script here (`/start.sh gunicorn app:app`, ENTRYPOINT + CMD) decides what
        # runs: read it with the rest as its "$@", not guessed to be a thin `exec "$@"` one.
        # (Only a path is looked up: `gunicorn app:app` is no file of the image's.) Past a
        # process wrapper too (`tini -- /entrypoint.py gunicorn`: `gunicorn` is the script's
        # argument, not a gunicorn started with no options).
        here = find_config(inner[0].text, inner[0].at)
        if here is not None:
            return True, _here_script(file, here, inner, env, env_at, find_config, depth)
    # `sh -c "/entrypoint.sh $0 $@" gunicorn ...` (a shell-form ENTRYPOINT and its CMD): a
    # script here that the string runs decides what runs, as for a script run alone.
    app = _shell_script(file, words, env, env_at, find_config, depth)
    return app is not None, app


def _unwrapped(words: list[Word]) -> list[Word]:
    """`words` past the process wrappers before the program (`tini --`, `gosu app`)."""
    rest = words
    while rest and program_name(rest[0].text) in WRAPPERS:
        rest = wrapped(rest, program_name(rest[0].text))
    return rest


def _shell_script(
    file: Path,
    words: list[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """The server of `sh -c SCRIPT ARG0 ...` when a command of SCRIPT, before any that is a
    server command line itself, runs a script found here; None otherwise (then the commands
    are read as before)."""
    if len(words) < 3 or program_name(words[0].text) not in SHELLS:
        return None
    option = words[1].text
    if not option.startswith("-") or "c" not in option:
        return None
    for command in shell_commands(words[2], words[3:]):
        script = _SCRIPT_PATH.match(command[0].text) and program_name(command[0].text) not in SHELLS
        if script and find_config(command[0].text, command[0].at) is not None:
            app = run_words(file, command, env, env_at, find_config=find_config, depth=depth + 1)
            if app is not None:
                return app
        elif server_command(command) is not None:
            return None
    return None


def _compound_string(
    file: Path,
    words: list[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig | None,
) -> AppServer | None:
    """The server of `sh -c 'if [ "$X" = yes ]; then exec /start.sh; else exit 0; fi' [ARG0
    ...]` (a supervisord program's, a compose command's), a string holding the shell's
    compound commands: read as a script is, at its own lines of `file`, its tests decided
    and its branches followed as a script's, the words after `$0` its "$@"; None when it
    holds none, or starts no server so read (then its commands are read one by one). Read
    only when no simple command of the string starts a server as written: those are read as
    before (`while ! nc -z db 5432; do sleep 1; done; uwsgi ...`)."""
    rest = _unwrapped(words)
    if len(rest) < 3 or program_name(rest[0].text) not in SHELLS:
        return None
    if not rest[1].text.startswith("-") or "c" not in rest[1].text:
        return None
    try:
        compound = any(c[0].text in _COMPOUND for c in shell_commands(rest[2]))
    except CheckInputError:
        return None  # said where the string is read one command at a time
    if not compound:
        return None
    text = "\n" * (rest[2].at.line - 1) + rest[2].text
    try:
        return read_script(file, text, dict(env or {}), rest[4:], find_config, env_at)
    except NotFollowed as why:
        remember(why)
    except CheckInputError as error:
        if _NO_SERVER not in str(error):
            raise
    return None


#: The words that open the shell's compound commands, which a command string read one simple
#: command at a time would lose (`then exec gunicorn` is no command line of gunicorn).
_COMPOUND = frozenset({"if", "case", "for", "while", "until"})


def _console_server(
    entry: ConsoleScript,
    arguments: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
) -> AppServer | None:
    """The server a project's console script starts (`lnbits --port $LNBITS_PORT`), read from
    the function its packaging names, the command's words bound to that function's options;
    its declaration is a link of the chain."""
    environment = dict(env or {})
    argv = [expand_shell(w.text, environment) or w.text for w in arguments]
    module = entry.module
    launch = python_launch(module.file, module.text, environment, entry.function, argv)
    found = server_command(launch.words) if launch is not None else None
    if launch is None or found is None:
        return None
    if launch.in_process:
        environment = {k: v for k, v in environment.items() if not k.startswith("UVICORN_")}
    app = read_command(
        module.file, found, environment, env_at, find_config=find_config, unknown=launch.unknown
    )
    app = _python_child(app, module, launch)
    return replace(app, launched_by=(entry.declared_at, *app.launched_by))


def _python_child(app: AppServer, script: ConfigFile, launch: PythonLaunch) -> AppServer:
    """The app with the launcher's line when Python runs the server as its child
    (`os.system`, `subprocess.run`): Python stays the process signalled, as a shell without
    `exec` does. The launcher is named as the step holding the command line, unless it is a
    gunicorn `BaseApplication`, whose options dict is the server's config."""
    if not launch.loads_config:
        app = replace(app, launcher=script.file)
    child = child_launch(script.file, script.text, launch)
    if child is None:
        return app
    line, fix = child
    return replace(app, without_exec=line, without_exec_fix=fix)


def _script_server(
    script: ConfigFile,
    arguments: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    run_by: str | None = None,
) -> AppServer | None:
    """The server a script found here starts, `arguments` as its "$@" and `run_by` its "$0"
    (the path its caller ran it by); None when it starts none check reads (migrations, a
    worker), or when it is already being read further out: a script that runs itself again
    through other files (a supervisord program running the script that starts that
    supervisord) is read once, not until the stack runs out."""
    key = _following_key(script.file, script.text)
    if key in _FOLLOWING.get():
        return None
    token = _FOLLOWING.set(_FOLLOWING.get() | {key})
    invoked = INVOKED_AS.set((script.file, run_by) if run_by is not None else None)
    try:
        return _script_server_once(script, arguments, env, env_at, find_config)
    finally:
        INVOKED_AS.reset(invoked)
        _FOLLOWING.reset(token)


def _script_server_once(
    script: ConfigFile,
    arguments: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
) -> AppServer | None:
    """`_script_server` of a script not already being read."""
    if looks_like_python(script.file, script.text):
        # Its `sys.argv`: the words after it, unless they are only an image's default CMD,
        # which a deployment's command replaces (as for a shell script's `case "$1"`).
        given = list(arguments) if arguments and not is_dockerfile(arguments[0].at.file) else None
        if not arguments and COMMAND_COMPLETE.get():
            given = []  # a compose `entrypoint` with no `command`: run with no arguments
        try:
            launch = python_launch(script.file, script.text, dict(env or {}), arguments=given)
        except NotFollowed as why:
            remember(why)  # said for the file that runs it, if that starts no server at all
            return None
        found = server_command(launch.words) if launch is not None else None
        if launch is None or found is None:
            return None
        environment = {
            k: v
            for k, v in (env or {}).items()
            if not (launch.in_process and k.startswith("UVICORN_"))
        }
        app = read_command(
            script.file,
            found,
            environment,
            env_at,
            shell=launch.shell,
            find_config=find_config,
            unknown=launch.unknown,
        )
        return _python_child(app, script, launch)
    try:
        return read_script(
            script.file,
            script.text,
            dict(env or {}),
            arguments=list(arguments),
            find_config=find_config,
            env_at=env_at,
        )
    except NotFollowed as why:
        remember(why)  # said for the file that runs it, if that starts no server at all
        return None
    except CheckInputError as error:
        if _NO_SERVER in str(error):  # the message's own constant, not words of it
            return None
        raise


def read_python_launcher(path: Path, text: str, env: Mapping[str, str] | None) -> AppServer:
    """The server a Python launcher given on its own starts (`servertune check start.py`), as
    when an image runs it: its command line read by the server's parser, and the launcher's
    `os.system` line when the server is its child."""
    app = _script_server(ConfigFile(text, path), [], env, None, beside(path))
    if app is None:
        raise NothingToCheck(f"{path}: read as a Python launcher; it starts no server check reads")
    return app


def _supervisord_config(
    words: Sequence[Word], env: Mapping[str, str] | None, find_config: FindConfig
) -> AppServer | None:
    """`supervisord -c FILE` (behind any wrapper: hypothesis's `init-env supervisord -c
    conf/supervisord.conf`): the first server its programs start, carrying the others
    (`together`), when FILE is here (its
    `%(ENV_X)s` read from `env`, the environment it is started in, unless the values known
    make its programs unreadable: then read without them)."""
    started = _supervisord_file(words, find_config)
    if started is None:
        return None
    config, named = started
    if config is not None and config.file.resolve() in _FOLLOWING.get():
        return None  # a program of this supervisord runs it again: read once, further out
    if config is None:
        # A config rendered where it runs (quay's supervisord.conf from a .jnj) or the
        # image's own: the programs it starts are not known, which is not "no server".
        if named is not None:
            remember(
                NotFollowed(
                    f"{named.at}: not followed: runs supervisord -c {named.text}, a file not "
                    "in the files read, so the programs it starts are not known"
                )
            )
        return None
    token = _FOLLOWING.set(_FOLLOWING.get() | {config.file.resolve()})
    try:
        return _supervised(config, env, find_config)
    finally:
        _FOLLOWING.reset(token)


def _supervisord_file(
    words: Sequence[Word], find_config: FindConfig
) -> tuple[ConfigFile | None, Word | None] | None:
    """The config the supervisord `words` start reads (None when it is not here) and the word
    naming it (None for a default path); None when the words start no supervisord or one
    whose default config is not here."""
    service = _service_started(words)
    if service is not None:
        # The init script passes its packaged config (Debian's /etc/init.d/supervisor:
        # `-c /etc/supervisor/supervisord.conf`; Red Hat's unit: /etc/supervisord.conf).
        found = (find_config(wanted, service.at) for wanted in _PACKAGED_CONFIGS)
        config = next((c for c in found if c is not None), None)
        return None if config is None else (config, None)
    names = [program_name(w.text) for w in words]
    if "supervisord" not in names:
        return None
    at = names.index("supervisord")
    named, _ = config_argument(list(words[at + 1 :]), ("-c", "--configuration"))
    if named is not None:
        return find_config(named.text, named.at), named
    if _unwrapped(list(words))[:1] != [words[at]]:
        return None  # an argument (`mkdir -p /app/run/supervisord`), not the program run
    config = _default_supervisord_config(words[at], find_config)
    return None if config is None else (config, None)  # else the image's own default


#: Where the distributions' supervisor package has its init script read the config.
_PACKAGED_CONFIGS = ("/etc/supervisor/supervisord.conf", "/etc/supervisord.conf")
#: The names supervisor's service is installed under (Debian: supervisor; Red Hat: supervisord).
_SUPERVISOR_SERVICES = frozenset({"supervisor", "supervisord"})


def _service_started(words: Sequence[Word]) -> Word | None:
    """The word naming supervisor's service when `words` start it through its init script
    (`service supervisor start`, `/etc/init.d/supervisor start`, `invoke-rc.d supervisord
    restart`: uclapi/uclapi's run.sh), None otherwise."""
    for index, word in enumerate(words[:-1]):
        action = words[index + 1].text
        if (
            word.text.startswith("/etc/init.d/")
            and program_name(word.text) in _SUPERVISOR_SERVICES
            and action in ("start", "restart")
        ):
            return word
        if (
            program_name(word.text) in ("service", "invoke-rc.d")
            and action in _SUPERVISOR_SERVICES
            and index + 2 < len(words)
            and words[index + 2].text in ("start", "restart")
        ):
            return words[index + 1]
    return None


def _supervisord_search_path(program: str) -> tuple[str, ...]:
    """Where supervisord looks for its config when started with no `-c`, in order
    (supervisord's docs, "Configuration File": ../etc/supervisord.conf and ../supervisord.conf
    relative to the executable, supervisord.conf and etc/supervisord.conf in the working
    directory, /etc/supervisord.conf, /etc/supervisor/supervisord.conf). A bare `supervisord`
    is taken from /usr/local/bin or /usr/bin, where pip and the distributions install it."""
    executables: tuple[str, ...] = ("/usr/local/bin", "/usr/bin")
    if program.startswith("/"):
        executables = (posixpath.dirname(program),)
    beside_executable = tuple(
        posixpath.normpath(posixpath.join(folder, tail))
        for folder in executables
        for tail in ("../etc/supervisord.conf", "../supervisord.conf")
    )
    return (
        *beside_executable,
        "supervisord.conf",
        "etc/supervisord.conf",
        "/etc/supervisord.conf",
        "/etc/supervisor/supervisord.conf",
    )


def _default_supervisord_config(program: Word, find_config: FindConfig) -> ConfigFile | None:
    """The first file of supervisord's search path (`_supervisord_search_path`) found here
    (`COPY supervisord.conf /etc/supervisor/supervisord.conf` in the image running it:
    ansible/ansible-ai-connect-service's `supervisord -n`); None when none is."""
    for wanted in _supervisord_search_path(program.text):
        config = find_config(wanted, program.at)
        if config is not None:
            return config
    return None


def _supervised(
    config: ConfigFile, env: Mapping[str, str] | None, find_config: FindConfig
) -> AppServer | None:
    """`_supervisord_config`'s reading of a config found here and not already being read."""
    if env:
        with collect_notes() as said:
            try:
                apps, fronts = read_programs(
                    config.file,
                    config.text,
                    env,
                    find_config=find_config,
                    follow=follow_words,
                    started=True,
                )
            except (NotFollowed, NothingToCheck, CheckInputError):
                apps = ()  # values half known (a script's branches): read without them
        if apps:
            for one in said:
                note(one.kind, one.at, one.message)
            return with_others(apps, fronts)
    try:
        apps, fronts = read_programs(
            config.file, config.text, find_config=find_config, follow=follow_words, started=True
        )
    except NotFollowed as why:
        remember(why)  # its programs run scripts not here: not known, which is not "no server"
        return None
    except NothingToCheck:
        return None
    return with_others(apps, fronts)


#: How long each Procfile runner waits, once it stops its processes, before SIGKILL:
#: honcho's KILL_WAIT (5 s, not a setting: honcho/manager.py), foreman's `-t` (5 s default).
PROCFILE_RUNNER_WAIT_S = 5.0
#: The Procfile runners: the option that names the Procfile, and the one that sets the wait.
_PROCFILE_RUNNERS = {"honcho": None, "foreman": ("-t", "--timeout")}
#: Process managers a script hands the container to: supervisord, and the Procfile runners,
#: which signal each entry's process group (`os.killpg`), so a server under a shell of its own
#: still gets SIGTERM.
_MANAGERS = frozenset({"supervisord", *_PROCFILE_RUNNERS})
#: Runners a script starts a server through, whose config names the server: `pserve FILE`
#: runs FILE's `[server:main]` (`paste.pserve_served`).
_CONFIG_RUNNERS = frozenset({"pserve"})


def _procfile_manager(
    words: Sequence[Word],
    env: Mapping[str, str] | None,
    env_at: Mapping[str, Location] | None,
    find_config: FindConfig,
    depth: int,
) -> AppServer | None:
    """`honcho -f /app/Procfile start` (or foreman's): the first server its Procfile's
    processes start, when the Procfile is here. The runner signals each entry's process
    group, then SIGKILLs what still runs 5 s after the first process exits: with two
    processes or more that is the server's stop wait."""
    names = [program_name(w.text) for w in words]
    runner = next((n for n in _PROCFILE_RUNNERS if n in names), None)
    if runner is None or depth > 4:
        return None
    args = list(words[names.index(runner) + 1 :])
    texts = [w.text for w in args]
    if "start" not in texts:
        return None
    named, _ = config_argument(args, ("-f", "--procfile"))
    procfile = find_config(named.text if named is not None else "Procfile", words[0].at)
    if procfile is None:
        return None
    chosen = _chosen_processes(texts[texts.index("start") + 1 :])
    processes = _runner_processes(runner, procfile, chosen)
    wait: Setting[float] | None = None
    options = _PROCFILE_RUNNERS[runner]
    if len(processes) > 1:
        timeout, _ = config_argument(args, options) if options else (None, None)
        value = float(timeout.text) if timeout is not None and timeout.text.isdigit() else None
        at = timeout.at if timeout is not None and value is not None else words[0].at
        wait = Setting(value or PROCFILE_RUNNER_WAIT_S, at, default=value is None)
    base = _runner_port(runner, args, env or {})
    apps: list[AppServer] = []
    for index, line, command in processes:
        port = {"PORT": str(base + _RUNNER_PORT_STEP * index)}
        for simple in shell_commands(Word(command, line.at)):
            app = run_words(
                procfile.file,
                simple,
                {**(env or {}), **port},
                {**(env_at or {}), "PORT": words[0].at},
                find_config=find_config,
                depth=depth + 1,
            )
            if app is None:
                continue
            apps.append(
                replace(
                    app,
                    group_signalled=line,
                    stop_wait=wait if wait is not None else app.stop_wait,
                    stop_wait_name=_runner_wait_name(runner)
                    if wait is not None
                    else app.stop_wait_name,
                    stop_wait_fix=_runner_wait_fix(runner)
                    if wait is not None
                    else app.stop_wait_fix,
                    launched_by=(words[0].at, line.at, *app.launched_by),
                )
            )
            break
    return with_others(apps) if apps else None


#: The PORT honcho and foreman give each process they start: the base port (5000 unless set)
#: for the first process type, 100 more for each next one (honcho's `environ.expand_processes`,
#: `port += 100` per type; foreman's `Engine#port_for`, `base_port + index * 100`; its man page
#: on `-p`: "the base port"). Web 5000, worker 5100, clock 5200.
_RUNNER_BASE_PORT = 5000
_RUNNER_PORT_STEP = 100


def _runner_processes(
    runner: str, procfile: ConfigFile, chosen: Sequence[str]
) -> list[tuple[int, Setting[str], str]]:
    """The processes `start` runs (the `chosen` ones, else all), each with its place in the
    port blocks and its line and command: honcho numbers the processes it starts, in the order
    they are named (`command_start`); foreman every process of the Procfile, in its order
    (`Engine#port_for`)."""
    entries: list[tuple[str, Setting[str], str]] = []
    for number, raw in enumerate(procfile.text.splitlines(), start=procfile.first_line):
        found = re.match(r"\A([A-Za-z0-9_-]+):\s*(.*)\Z", raw.strip())
        if found is not None:
            entries.append(
                (found[1], Setting(raw.strip(), Location(procfile.file, number)), found[2])
            )
    if runner == "honcho" and chosen:
        named = [e for name in chosen for e in entries if e[0] == name]
        return [(i, line, command) for i, (_, line, command) in enumerate(named)]
    return [
        (i, line, command)
        for i, (name, line, command) in enumerate(entries)
        if not chosen or name in chosen
    ]


def _runner_port(runner: str, args: Sequence[Word], env: Mapping[str, str]) -> int:
    """The base port of a Procfile runner's `start`: its `-p`/`--port`, or PORT from the
    environment (honcho takes PORT first, foreman `-p` first), else 5000."""
    option, _ = config_argument(list(args), ("-p", "--port"))
    given = [option.text if option is not None else "", env.get("PORT", "")]
    if runner == "honcho":
        given.reverse()
    return next((int(v) for v in given if v.isdigit()), _RUNNER_BASE_PORT)


#: honcho's and foreman's `start` options that take a value (`-f Procfile`, `-t 60`).
_RUNNER_VALUE_OPTIONS = frozenset(
    {"-e", "--env", "-d", "--app-root", "--root", "-f", "--procfile", "-p", "--port",
     "-c", "--concurrency", "-m", "--formation", "-q", "--quiet", "-t", "--timeout"}
)  # fmt: skip


def _chosen_processes(after_start: list[str]) -> list[str]:
    """The process names `start` is given (`honcho start web`), its options and their values
    left out; [] for every process of the Procfile."""
    chosen: list[str] = []
    skip = False
    for text in after_start:
        if skip:
            skip = False
        elif text in _RUNNER_VALUE_OPTIONS:
            skip = True
        elif not text.startswith("-"):
            chosen.append(text)
    return chosen


def _runner_wait_name(runner: str) -> str:
    return "honcho's KILL_WAIT" if runner == "honcho" else "foreman's -t timeout"


def _runner_wait_fix(runner: str) -> str:
    """How the runner's wait is raised, in its own words ({} is the seconds wanted)."""
    if runner == "honcho":
        return (
            "honcho has no setting for it (KILL_WAIT is 5 s): run the server as the container's "
            "own process (`exec` it, one process per container), or under foreman `start -t {}`"
        )
    return "foreman start -t {}"
