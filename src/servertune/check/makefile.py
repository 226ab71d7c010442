"""A server started by `make TARGET`: the target's recipe, read as make runs it.

An image's `ENTRYPOINT ["make", "prodserver"]` runs the Makefile of its working directory (or
the one `-f FILE` / `-C DIR` names). make runs the target's prerequisites first, then each line
of its recipe (the tab-indented lines under `TARGET:`) in its own `/bin/sh -c` (GNU make's
manual, "Recipe Execution"), after expanding the make variables in it: `$(NAME)` and `${NAME}`
from the Makefile's assignments (a target-specific `TARGET: NAME := 3` first), then the
environment; `$$` is a `$` the shell sees; a `NAME=value` on make's command line overrides
the Makefile's. A recipe line that starts a server is the launch; one a variable not known
here completes is read as the shell would be, the unknown left as written. Nothing here runs
make: the Makefile is read, never executed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from servertune.check.commands import ConfigFile, FindConfig, Word, program_name
from servertune.check.model import Location

__all__ = ["Recipe", "make_recipe"]

#: A rule's head: `target [target...]: [prerequisites]` (not `:=`, a variable's assignment).
_RULE = re.compile(r"\A(?P<targets>[^:=#\t][^:=#]*?)\s*::?(?!=)\s*(?P<rest>.*)\Z")
#: A variable's assignment: `NAME = v`, `NAME := v`, `NAME ::= v`, `NAME ?= v`, `NAME += v`.
_ASSIGNMENT = re.compile(
    r"\A(?:export\s+|override\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\s*(?P<op>::?=|\?=|\+=|=)\s*(?P<value>.*)\Z"
)
#: A make variable's reference: `$(NAME)`, `${NAME}` (functions, `$(shell ...)`, are not).
_REFERENCE = re.compile(r"\$[({](?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[)}]")
#: A variable given on make's command line (`make run PORT=9000`), which overrides the
#: Makefile's assignments of it (GNU make's manual, "Overriding Variables").
_COMMAND_LINE = re.compile(r"\A(?P<name>[A-Za-z_][A-Za-z0-9_.-]*):?=(?P<value>.*)\Z")
#: make's options that take a value (`-f FILE`, `-C DIR`, `-j N`, `-o FILE`, `-W FILE`...).
_VALUED = frozenset({"-f", "--file", "--makefile", "-C", "--directory", "-j", "-l", "-o", "-W"})


@dataclass(frozen=True)
class Recipe:
    """The lines a task runner runs for a target (`make TARGET`, `just RECIPE`), each in its
    own `/bin/sh -c`, with the line it is written on, the runner's own variables expanded; and
    the variables the runner exports to them (a justfile's `export NAME := value`)."""

    source: ConfigFile
    lines: tuple[Word, ...]
    exported: tuple[tuple[str, str], ...] = ()


def make_recipe(
    words: Sequence[Word], env: Mapping[str, str], find_config: FindConfig
) -> Recipe | None:
    """The recipe of the target `words` (`make [options] TARGET`) run, from the Makefile
    `find_config` finds; None when they are not a make command line, name no target (make's
    default goal is not read here) or the Makefile is not among the files."""
    if not words or program_name(words[0].text) not in ("make", "gmake"):
        return None
    makefile_name, directory, targets = "Makefile", "", []
    given: dict[str, str] = {}  # `make run PORT=9000`: over the Makefile's own assignments
    rest = list(words[1:])
    while rest:
        word = rest.pop(0).text
        if word in _VALUED and rest:
            value = rest.pop(0).text
            if word in ("-f", "--file", "--makefile"):
                makefile_name = value
            elif word in ("-C", "--directory"):
                directory = value.rstrip("/") + "/"
        elif (assigned := _COMMAND_LINE.match(word)) is not None:
            given[assigned["name"]] = assigned["value"]
        elif word.startswith("-"):
            continue
        else:
            targets.append(word)
    if len(targets) != 1:
        return None
    found = find_config(directory + makefile_name, words[0].at)
    if found is None:
        return None
    return _recipe(found, targets[0], env, given)


def _recipe(
    makefile: ConfigFile, target: str, env: Mapping[str, str], given: Mapping[str, str]
) -> Recipe | None:
    variables: dict[str, str] = {}
    own: dict[str, str] = {}
    recipe: list[tuple[int, str]] = []
    current: list[str] | None = None
    lines = makefile.text.splitlines()
    index = 0
    while index < len(lines):
        number, line = makefile.first_line + index, lines[index]
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = line[:-1] + " " + lines[index].lstrip()
        index += 1
        if line.startswith("\t"):
            if current is not None and target in current:
                recipe.append((number, line[1:]))
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped:
            continue
        rule = _RULE.match(stripped)
        assignment = _ASSIGNMENT.match(stripped)
        if rule is not None and (
            assignment is None or rule.end("targets") < assignment.start("op")
        ):
            current = rule["targets"].split()
            specific = _ASSIGNMENT.match(rule["rest"])
            if specific is not None and target in current:
                _assign(own, specific, env)  # `target: NAME := value`
                current = None  # a target-specific variable's line has no recipe
            continue
        current = None
        if assignment is not None:
            _assign(variables, assignment, env)
    if not recipe:
        return None
    scope = {**variables, **own, **given}
    return Recipe(
        makefile,
        tuple(Word(_expanded(text, scope, env), Location(makefile.file, n)) for n, text in recipe),
    )


def _assign(scope: dict[str, str], found: re.Match[str], env: Mapping[str, str]) -> None:
    name, op, value = found["name"], found["op"], found["value"].strip()
    if op == "?=" and (name in scope or name in env):
        return
    if op == "+=":
        scope[name] = f"{scope.get(name, '')} {value}".strip()
    else:
        scope[name] = value


def _expanded(text: str, scope: Mapping[str, str], env: Mapping[str, str]) -> str:
    """A recipe line as make hands it to the shell: its variables' values (the Makefile's,
    then the environment's; one set nowhere here is left for the shell, `${NAME}`), a leading
    `@`, `-` or `+` dropped, `$$` the shell's `$`."""
    text = text.lstrip().lstrip("@-+").lstrip()
    marker = "\0"
    text = text.replace("$$", marker)
    for _ in range(8):  # a value that names another variable, a few levels deep

        def one(match: re.Match[str]) -> str:
            name = match["name"]
            if name in scope:
                return scope[name].replace("$$", marker)
            return env[name] if name in env else "${" + name + "}"

        expanded = _REFERENCE.sub(one, text)
        if expanded == text:
            break
        text = expanded
    return text.replace(marker, "$")
