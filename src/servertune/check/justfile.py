"""A server started by `just RECIPE`: the recipe's lines, read as just runs them.

just (https://just.systems/man/en/) reads the `justfile` (any case, or `.justfile`) of its
working directory, or the one `-f FILE` names. `just prod-api` runs the recipe's dependencies
first (`prod-api-up: db-migrate prod-api`), then each indented line of its body in its own
`sh -c` (a recipe whose body starts with `#!` is one script, run by that interpreter), then
the dependencies after `&&`. Before a line runs, just fills its `{{expression}}`s from the
justfile's variables (`name := "value"`, `env("NAME", "default")`), the recipe's parameters
(`serve port="8000":`, given on the command line after the recipe's name) and the command
line's `NAME=value`; `{{{{` is a literal `{{`. The `{{ }}` are just's own, not a Jinja
template's: a justfile is never skipped as a template. A leading `@` (quiet) or `-` (errors
ignored) is just's, not the shell's. `export NAME := value` (every variable with `set
export`, a `$name` parameter) and the `.env` file `set dotenv-load` loads are the recipe's
environment. An expression not known here (a backtick's output, an unset variable without
default) is left for the shell as an unset `${NAME}`. Nothing here runs just.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from servertune.check.commands import (
    ConfigFile,
    FindConfig,
    FollowWords,
    Word,
    beside,
    program_name,
)
from servertune.check.makefile import Recipe
from servertune.check.model import (
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Location,
    NothingToCheck,
)

__all__ = ["dotenv_loads", "just_recipe", "looks_like_justfile", "read_justfile"]

#: The names just looks for, in any case (`Justfile`, `JUSTFILE`), and a module's suffix.
_NAMES = ("justfile", ".justfile")
_ASSIGNMENT = re.compile(
    r"\A(?P<export>export\s+)?(?P<name>[A-Za-z_][\w-]*)\s*:=\s*(?P<value>.*)\Z"
)
_SETTING = re.compile(r"\Aset\s+(?P<name>[\w-]+)\s*(?::=\s*(?P<value>.*))?\Z")
_ALIAS = re.compile(r"\Aalias\s+(?P<name>[\w-]+)\s*:=\s*(?P<target>[\w-]+)\s*\Z")
_NAME = re.compile(r"\A(?P<quiet>@?)(?P<name>[A-Za-z_][\w-]*)")
_PARAMETER = re.compile(
    r"(?P<variadic>[+*]?)(?P<exported>\$?)(?P<name>[A-Za-z_][\w-]*)"
    r"(?:=(?P<default>\"(?:[^\"\\]|\\.)*\"|'[^']*'|\([^)]*\)|\S+))?"
)
_TOKEN = re.compile(
    r"\s*(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:[^\"\\]|\\.)*\"|'[^']*'|`[^`]*`"
    r"|[A-Za-z_][\w-]*|==|!=|=~|&&|\|\||[()+/,{}])"
)
_INTERPOLATION = re.compile(r"\{\{(?P<expression>.*?)\}\}")
#: just's options that take a value (`-f FILE`, `-d DIR`, `--set NAME VALUE` takes two).
_VALUED = frozenset(
    {
        "-f",
        "--justfile",
        "-d",
        "--working-directory",
        "--dotenv-filename",
        "--dotenv-path",
        "-E",
        "--shell",
        "--shell-arg",
        "--color",
        "--chooser",
        "--command-color",
        "--list-heading",
        "--list-prefix",
    }
)
#: Interpreters whose script a shebang recipe's body is, read as a shell script here.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})


@dataclass(frozen=True)
class _Parameter:
    name: str
    default: str | None
    variadic: bool
    exported: bool


@dataclass(frozen=True)
class _Recipe:
    name: str
    parameters: tuple[_Parameter, ...]
    before: tuple[tuple[str, tuple[str, ...]], ...]  # dependencies: (name, argument expressions)
    after: tuple[tuple[str, tuple[str, ...]], ...]  # those after `&&`
    body: tuple[tuple[int, str], ...]  # (line number, text), continuation lines joined
    script: bool  # a shebang recipe (or `[script]`): one script, not one shell per line


@dataclass
class _Justfile:
    source: ConfigFile
    recipes: dict[str, _Recipe] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)  # name -> expression
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> recipe
    exported: set[str] = field(default_factory=set)
    settings: dict[str, str] = field(default_factory=dict)


def looks_like_justfile(path: Path, text: str) -> bool:
    """`justfile` in any case, `.justfile`, or a module's `NAME.just`."""
    del text
    return path.name.lower() in _NAMES or path.suffix == ".just"


def _parse(source: ConfigFile) -> _Justfile:
    justfile = _Justfile(source)
    lines = source.text.splitlines()
    body: list[tuple[int, str]] | None = None  # the lines of the recipe being read
    heads: dict[str, tuple[_Recipe, list[tuple[int, str]]]] = {}
    script_attribute = False
    index = 0
    while index < len(lines):
        number, line = source.first_line + index, lines[index]
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = line[:-1] + " " + lines[index].lstrip()
        index += 1
        if line[:1] in (" ", "\t"):
            if body is not None and (line.strip() or body):
                body.append((number, line.strip()))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        body = None
        if stripped.startswith("["):
            script_attribute = script_attribute or stripped[1:].startswith("script")
            continue
        recipe = _top_level(justfile, stripped, script_attribute)
        script_attribute = False
        if recipe is not None:
            body = []
            heads[recipe.name] = (recipe, body)
            justfile.order.append(recipe.name)
    for name, (recipe, lines_read) in heads.items():
        while lines_read and not lines_read[-1][1]:
            lines_read.pop()
        shebang = bool(lines_read) and lines_read[0][1].startswith("#!")
        justfile.recipes[name] = replace(
            recipe, body=tuple(lines_read), script=recipe.script or shebang
        )
    for alias, target in justfile.aliases.items():
        if target in justfile.recipes:
            justfile.recipes.setdefault(alias, justfile.recipes[target])
    return justfile


def _top_level(justfile: _Justfile, line: str, script: bool) -> _Recipe | None:
    """A line outside recipes: a setting, an alias, a variable, or a recipe's head (returned)."""
    if (setting := _SETTING.match(line)) is not None:
        justfile.settings[setting["name"]] = (setting["value"] or "true").strip()
        return None
    if (alias := _ALIAS.match(line)) is not None:
        justfile.aliases[alias["name"]] = alias["target"]
        return None
    if (assignment := _ASSIGNMENT.match(line)) is not None:
        justfile.variables[assignment["name"]] = assignment["value"].split(" #", 1)[0]
        if assignment["export"]:
            justfile.exported.add(assignment["name"])
        return None
    if line.split(None, 1)[0] in ("import", "import?", "mod", "mod?", "unexport"):
        return None
    return _head(line, script)


def _head(line: str, script: bool) -> _Recipe | None:
    """`[@]name [parameters]: [dependencies] [&& dependencies]`; None for another line."""
    name = _NAME.match(line)
    if name is None:
        return None
    rest = line[name.end() :]
    colon = _top_colon(rest)
    if colon is None:
        return None
    parameters = tuple(
        _Parameter(m["name"], m["default"], bool(m["variadic"]), bool(m["exported"]))
        for m in _PARAMETER.finditer(rest[:colon])
    )
    dependencies = rest[colon + 1 :].split(" #", 1)[0]
    before, _, after = dependencies.partition("&&")
    return _Recipe(name["name"], parameters, _calls(before), _calls(after), (), script)


def _top_colon(text: str) -> int | None:
    """The index of the `:` ending a recipe's head (not one in a quoted default, not `:=`)."""
    quote = ""
    depth = 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == ":" and depth == 0:
            return None if text[index + 1 : index + 2] == "=" else index
    return None


def _calls(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`a (b "x" y) c` -> (a, ()), (b, ('"x"', 'y')), (c, ())."""
    calls: list[tuple[str, tuple[str, ...]]] = []
    for match in re.finditer(r"\(([^()]*)\)|([\w-]+)", text):
        if match[2] is not None:
            calls.append((match[2], ()))
            continue
        tokens = [t.strip() for t in _TOKEN.findall(match[1])]
        if tokens:
            calls.append((tokens[0], tuple(tokens[1:])))
    return tuple(calls)


class _Values:
    """The justfile's expressions evaluated for one run: its variables, the command line's
    overrides, and the environment (with the dotenv file's variables under it)."""

    def __init__(
        self, justfile: _Justfile, env: Mapping[str, str], overrides: Mapping[str, str]
    ) -> None:
        self.justfile = justfile
        self.env = env
        self.overrides = overrides
        self.known: dict[str, str] = dict(overrides)

    def variable(self, name: str, depth: int = 0) -> str:
        if name not in self.known:
            expression = self.justfile.variables.get(name)
            if expression is None or depth > 8:
                return "${" + _shell_name(name) + "}"
            self.known[name] = self.evaluate(expression, {}, depth + 1)
        return self.known[name]

    def evaluate(self, expression: str, scope: Mapping[str, str], depth: int = 0) -> str:
        tokens = [t.strip() for t in _TOKEN.findall(expression)]
        if not tokens or tokens[0] == "if" or "||" in tokens or "&&" in tokens:
            return "${" + _shell_name(_first_name(tokens)) + "}"  # a conditional: not known
        value, _ = self._sum(tokens, 0, scope, depth)
        return value

    def _sum(
        self, tokens: list[str], index: int, scope: Mapping[str, str], depth: int
    ) -> tuple[str, int]:
        value, index = self._term(tokens, index, scope, depth)
        while index < len(tokens) and tokens[index] in ("+", "/"):
            operator = tokens[index]
            right, index = self._term(tokens, index + 1, scope, depth)
            value = value + right if operator == "+" else value.rstrip("/") + "/" + right
        return value, index

    def _term(
        self, tokens: list[str], index: int, scope: Mapping[str, str], depth: int
    ) -> tuple[str, int]:
        if index >= len(tokens):
            return "", index
        token = tokens[index]
        if token == "(":
            value, index = self._sum(tokens, index + 1, scope, depth)
            return value, index + 1
        if token[:1] in "\"'":
            return _string(token), index + 1
        if token.startswith("`"):
            return "${just_backtick}", index + 1  # a command's output: known when it runs
        if tokens[index + 1 : index + 2] == ["("]:
            arguments: list[str] = []
            index += 2
            while index < len(tokens) and tokens[index] != ")":
                if tokens[index] == ",":
                    index += 1
                    continue
                argument, index = self._sum(tokens, index, scope, depth)
                arguments.append(argument)
            return self._function(token, arguments), index + 1
        if token in scope:
            return scope[token], index + 1
        return self.variable(token, depth), index + 1

    def _function(self, name: str, arguments: Sequence[str]) -> str:
        if name in ("env", "env_var", "env_var_or_default") and arguments:
            if arguments[0] in self.env:
                return self.env[arguments[0]]
            return arguments[1] if len(arguments) > 1 else "${" + arguments[0] + "}"
        if name in ("justfile_directory", "invocation_directory", "source_directory"):
            return "."  # a recipe runs in the justfile's folder
        if name in ("trim", "lowercase", "uppercase") and arguments:
            value = arguments[0]
            return value.strip() if name == "trim" else value
        return "${" + _shell_name(name) + "}"

    def line(self, text: str, scope: Mapping[str, str]) -> str:
        """A recipe line as just hands it to the shell: its `{{ }}` filled in."""
        marker = "\0"
        text = text.replace("{{{{", marker)
        text = _INTERPOLATION.sub(lambda m: self.evaluate(m["expression"], scope), text)
        return text.replace(marker, "{{")


def _shell_name(name: str) -> str:
    return re.sub(r"\W", "_", name) or "just_value"


def _first_name(tokens: Sequence[str]) -> str:
    return next((t for t in tokens if re.match(r"[A-Za-z_]", t) and t != "if"), "just_value")


def _string(token: str) -> str:
    """A just string literal's value: `'...'` raw, `"..."` with its escapes."""
    if token.startswith(("'''", '"""')):
        body, quote = token[3:-3], token[0]
    else:
        body, quote = token[1:-1], token[0]
    if quote == "'":
        return body
    escapes = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m[1], "\\" + m[1]), body)


def _dotenv_file(justfile: _Justfile, find_config: FindConfig) -> ConfigFile | None:
    """The env file `set dotenv-load` (or a dotenv file's name or path) makes just load."""
    settings = justfile.settings
    wanted = ("dotenv-load", "dotenv-filename", "dotenv-path", "dotenv-required")
    if not any(s in settings and settings[s] != "false" for s in wanted):
        return None
    name = _string(settings.get("dotenv-path", settings.get("dotenv-filename", '".env"')))
    return find_config(name, Location(justfile.source.file))


def dotenv_loads(path: Path, text: str) -> tuple[Path, ...]:
    """The env file beside the justfile that it loads (`set dotenv-load`), if there is one."""
    found = _dotenv_file(_parse(ConfigFile(text, path)), beside(path))
    return () if found is None else (found.file,)


def _dotenv(justfile: _Justfile, find_config: FindConfig) -> dict[str, str]:
    """The variables of the env file the justfile loads."""
    found = _dotenv_file(justfile, find_config)
    if found is None:
        return {}
    import io

    from dotenv.parser import parse_stream

    return {
        b.key: b.value
        for b in parse_stream(io.StringIO(found.text))
        if b.key is not None and b.value is not None and not b.error
    }


@dataclass
class _Run:
    """One `just` invocation's lines, recipe after recipe, each dependency once."""

    justfile: _Justfile
    values: _Values
    lines: list[Word] = field(default_factory=list)
    exported: dict[str, str] = field(default_factory=dict)
    done: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)

    def recipe(self, name: str, arguments: Sequence[str], depth: int = 0) -> None:
        recipe = self.justfile.recipes.get(name)
        if recipe is None or (name, tuple(arguments)) in self.done or depth > 8:
            return
        self.done.add((name, tuple(arguments)))
        scope = self.scope(recipe, arguments)
        for dependency, expressions in recipe.before:
            given = [self.values.evaluate(e, scope) for e in expressions]
            self.recipe(dependency, given, depth + 1)
        self.lines.extend(_body(self.justfile, recipe, self.values, scope))
        for dependency, expressions in recipe.after:
            given = [self.values.evaluate(e, scope) for e in expressions]
            self.recipe(dependency, given, depth + 1)

    def scope(self, recipe: _Recipe, arguments: Sequence[str]) -> dict[str, str]:
        scope: dict[str, str] = {}
        given = list(arguments)
        for parameter in recipe.parameters:
            if parameter.variadic:
                value = " ".join(given) if given else None
                given = []
            else:
                value = given.pop(0) if given else None
            if value is None:
                value = (
                    self.values.evaluate(parameter.default, scope)
                    if parameter.default is not None
                    else "${" + _shell_name(parameter.name) + "}"
                )
            scope[parameter.name] = value
            if parameter.exported or "export" in self.justfile.settings:
                self.exported[parameter.name] = value
        return scope


def _body(
    justfile: _Justfile, recipe: _Recipe, values: _Values, scope: Mapping[str, str]
) -> list[Word]:
    """The recipe's lines as the shell gets them: one per line, or the shebang recipe's whole
    script as one (run here as a shell script when its interpreter is a shell; another
    interpreter's script is not read)."""
    file = justfile.source.file
    if not recipe.body:
        return []
    if recipe.script:
        first = recipe.body[0][1]
        lines = recipe.body
        if first.startswith("#!"):
            words = first[2:].split()
            interpreter = words[1] if words[:1] and program_name(words[0]) == "env" else words[0]
            if program_name(interpreter) not in _SHELLS:
                return []
            lines = lines[1:]
        if not lines:
            return []
        text = "\n".join(values.line(t, scope) for _, t in lines)
        return [Word(text, Location(file, lines[0][0]))]
    return [
        Word(values.line(text.lstrip("@-").lstrip(), scope), Location(file, number))
        for number, text in recipe.body
        if text and not text.startswith("#")
    ]


def _exported(justfile: _Justfile, values: _Values) -> dict[str, str]:
    names = justfile.variables if "export" in justfile.settings else justfile.exported
    return {name: values.variable(name) for name in names}


def just_recipe(
    words: Sequence[Word], env: Mapping[str, str], find_config: FindConfig
) -> Recipe | None:
    """The lines `just [options] [NAME=value...] [RECIPE [ARGUMENTS...]]...` runs, from the
    justfile `find_config` finds (`-f FILE`, else `justfile` / `.justfile` in the working
    directory or `-d DIR`); None when they are not a just command line or no justfile is
    among the files. No recipe named runs the justfile's first."""
    if not words or program_name(words[0].text) != "just":
        return None
    file, directory, overrides, rest = None, "", {}, list(words[1:])
    positional: list[str] = []
    while rest:
        word = rest.pop(0).text
        if word == "--set" and len(rest) >= 2:
            overrides[rest.pop(0).text] = rest.pop(0).text
        elif word in _VALUED and rest:
            value = rest.pop(0).text
            if word in ("-f", "--justfile"):
                file = value
            elif word in ("-d", "--working-directory"):
                directory = value.rstrip("/") + "/"
        elif word in ("-c", "--command", "-l", "--list", "--show", "-s", "--evaluate"):
            return None  # not a recipe run
        elif word.startswith("-"):
            continue
        elif "=" in word and not positional and re.match(r"[A-Za-z_][\w-]*=", word):
            name, _, value = word.partition("=")
            overrides[name] = value
        else:
            positional.append(word)
    names = [file] if file else [directory + n for n in ("justfile", "Justfile", ".justfile")]
    found = next((f for n in names if (f := find_config(n, words[0].at)) is not None), None)
    if found is None:
        return None
    justfile = _parse(found)
    values = _Values(justfile, {**_dotenv(justfile, find_config), **env}, overrides)
    run = _Run(justfile, values)
    _invoke(run, positional or justfile.order[:1])
    if not run.lines:
        return None
    exported = {**_exported(justfile, values), **run.exported}
    return Recipe(found, tuple(run.lines), tuple(exported.items()))


def _invoke(run: _Run, positional: Sequence[str]) -> None:
    """Each recipe the command line names, with the arguments after it its parameters take."""
    rest = list(positional)
    while rest:
        name = rest.pop(0)
        recipe = run.justfile.recipes.get(name)
        if recipe is None:
            return  # a recipe not in this justfile: just refuses the whole command line
        wanted = len(recipe.parameters)
        if any(p.variadic for p in recipe.parameters):
            wanted = len(rest)
        arguments, rest = rest[:wanted], rest[wanted:]
        run.recipe(name, arguments)


def read_justfile(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    follow: FollowWords | None = None,
) -> tuple[AppServer, ...]:
    """The app servers the justfile's recipes start, each read alone (its own lines, not its
    dependencies': a recipe that only runs others starts what they start, read with them),
    the recipe's line first in the server's chain; NothingToCheck when none starts one."""
    justfile = _parse(ConfigFile(text, path))
    find_config = beside(path)
    values = _Values(justfile, {**_dotenv(justfile, find_config), **(env or {})}, {})
    apps: list[AppServer] = []
    for name in justfile.order:
        recipe = justfile.recipes[name]
        run = _Run(justfile, values)
        scope = run.scope(recipe, ())
        environment = {**values.env, **_exported(justfile, values), **run.exported}
        for line in _body(justfile, recipe, values, scope):
            shell = [Word("/bin/sh", line.at), Word("-c", line.at), line]
            try:
                app = follow(path, shell, environment, find_config) if follow else None
            except CheckInputError:
                app = None  # a line that runs a file here that is not a script
            if app is not None:
                apps.append(replace(app, launched_by=(line.at, *app.launched_by)))
                break
    if not apps:
        raise NothingToCheck(
            f"{path}: no recipe starts a server check reads ({SERVERS_READ}): nothing to check"
        )
    return tuple(apps)
