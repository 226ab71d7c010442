"""A console script that is a group of commands (click's `@click.group()` with
`@cli.command()` subcommands, a `typer.Typer()` with `@app.command()`): which of its
functions the command line runs.

click runs the group's function and then the one subcommand its arguments name; every other
command of the group is only declared. Read as written, each command's body would look like
the launch (`agent-memory task-worker` read as the `api` command's `uvicorn.run`), so the
command is chosen here from the words, as click chooses it: the first word that is not an
option (nor an option's value) names a command of the group, by its declared name or its
function's name with `_` as `-` (click 8). A command group may hold groups (`@cli.group()`),
chosen the same way down to a command. No word naming a command runs none of them.

argparse's subcommands are chosen the same way: each `sub.add_parser("serve")` whose
`set_defaults(func=serve)` names a function of the module is a command running that function
(the dispatch argparse's docs show, `args.func(args)`); the first word that is not an option
nor an option's value names it. A parser whose function is not named so (a dispatch on
`args.command`) leaves the script read as written.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Chosen", "chosen_command"]

#: The suffixes click 8.2 drops from a function's name to name its command
#: (`def init_command` is `init`).
_SUFFIXES = ("_command", "_cmd", "_group", "_grp")


@dataclass(frozen=True)
class Chosen:
    """The command a group's command line runs: the function (None when it names none), the
    words after its name (its own options), the commands of the group not run, and the word
    where a command was expected but not known here (`$CMD`), if any."""

    function: str | None
    argv: list[str]
    skipped: frozenset[str] = field(default_factory=frozenset)
    unknown: str | None = None


def _declared(decorator: ast.expr) -> tuple[str, str, str | None] | None:
    """(group, "command" or "group", declared name) of `@cli.command("name")`, or None."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    if not (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.attr in ("command", "group")
    ):
        return None
    name: str | None = None
    if call is not None:
        given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "name")]
        if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
            name = given[0].value
    return target.value.id, target.attr, name


def _names(function: str, declared: str | None) -> set[str]:
    if declared is not None:
        return {declared}
    names = {function, function.replace("_", "-")}
    for suffix in _SUFFIXES:
        if function.endswith(suffix) and len(function) > len(suffix):
            names.add(function.removesuffix(suffix).replace("_", "-"))
    return names


def _is_group(tree: ast.Module, entry: str) -> bool:
    """Whether the console script's object is a group: a function under `@click.group()`
    (or `@x.group()`), or a name bound to `typer.Typer(...)` / `click.Group(...)`."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry:
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Attribute) and target.attr == "group":
                    return True
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            bound = [t.id for t in node.targets if isinstance(t, ast.Name)]
            made = ast.unparse(node.value.func)
            if entry in bound and made.split(".")[-1] in ("Typer", "Group"):
                return True
    return False


def _argparse_commands(tree: ast.Module) -> dict[str, str | None]:
    """Each argparse subcommand the module declares (`sub.add_parser("serve")`), with the
    module's function its `set_defaults(func=...)` names, or None when none is named."""
    functions = {
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    parsers: dict[str, str] = {}  # the name a parser is bound to -> its command
    commands: dict[str, str | None] = {}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = _parser_name(node.value)
            for target in node.targets:
                if name is not None and isinstance(target, ast.Name):
                    parsers[target.id] = name
    for call in calls:
        name = _parser_name(call)
        if name is not None:
            commands.setdefault(name, None)
    for call in calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "set_defaults"):
            continue
        owner = func.value
        name = parsers.get(owner.id) if isinstance(owner, ast.Name) else None
        name = _parser_name(owner) if isinstance(owner, ast.Call) else name
        named = [k.value.id for k in call.keywords if isinstance(k.value, ast.Name)]
        handler = next((n for n in named if n in functions), None)
        if name is not None and handler is not None:
            commands[name] = handler
    return commands


def _parser_name(call: ast.Call) -> str | None:
    """ "serve" of `sub.add_parser("serve", ...)`; None for any other call."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "add_parser" and call.args):
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _argparse_chosen(tree: ast.Module, argv: Sequence[str]) -> Chosen | None:
    """The argparse subcommand `argv` runs (`Chosen.function` None when the word names none
    of them); None when the module has no subcommand whose function it names."""
    commands = _argparse_commands(tree)
    named = {name: f for name, f in commands.items() if f is not None}
    if not named:
        return None
    words = list(argv)
    index = _command_word(words, dict.fromkeys(commands, ""))
    every = frozenset(named.values())
    if index < len(words) and words[index] in commands:
        function = commands[words[index]]
        if function is None:
            return None  # dispatched by its name in code: read as written
        return Chosen(function, words[index + 1 :], every - {function})
    unknown = words[index] if index < len(words) and "$" in words[index] else None
    return Chosen(None, [], every, unknown)


def chosen_command(tree: ast.Module, entry: str | None, argv: Sequence[str]) -> Chosen | None:
    """The command the words `argv` run when `entry` is a group of commands; None when it
    is not one (a plain function: every word is its own)."""
    if entry is None:
        return None
    if not _is_group(tree, entry):
        return _argparse_chosen(tree, argv)
    commands: dict[str, dict[str, str]] = {}
    groups: set[str] = set()
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            declared = _declared(decorator)
            if declared is None:
                continue
            parent, kind, name = declared
            for each in _names(node.name, name):
                commands.setdefault(parent, {})[each] = node.name
            if kind == "group":
                groups.add(node.name)
    every = {f for table in commands.values() for f in table.values()}
    typer_single = len(set(commands.get(entry, {}).values())) == 1
    current, words, path = entry, list(argv), set[str]()
    while current == entry or current in groups:
        table = commands.get(current, {})
        index = _command_word(words, table)
        if index < len(words) and words[index] in table:
            current, words = table[words[index]], words[index + 1 :]
            path.add(current)
            continue
        if current == entry and typer_single and not _is_click_group(tree, entry):
            # typer runs an app of one command without its name.
            (only,) = set(table.values())
            return Chosen(only, words, frozenset(every - {only}))
        unknown = words[index] if index < len(words) and "$" in words[index] else None
        return Chosen(None, [], frozenset(every - path), unknown)
    return Chosen(current, words, frozenset(every - path))


def _command_word(words: Sequence[str], table: dict[str, str]) -> int:
    """The index of the word naming a command of `table`, or of the first word that cannot be
    an option or an option's value (len(words) when there is none)."""
    previous = ""
    for index, word in enumerate(words):
        if word in table:
            return index
        if not word.startswith("-") and not (previous.startswith("-") and "=" not in previous):
            return index
        previous = word
    return len(words)


def _is_click_group(tree: ast.Module, entry: str) -> bool:
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry
        for node in tree.body
    )
