"""The shape of `servertune.check`: every rule registered once, no import circle, no long function.

A rule module's function that `@check_rule` made a rule but `RULES` does not list would never
run, and a second rule with an id already listed would silently replace the first: both are
caught here, not by a missing finding in some later report.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import servertune.check
import servertune.check.rules
from servertune.check.rules import RULES, Rule

CHECK = Path(servertune.check.__file__).parent
LONGEST_FUNCTION = 80


def _modules() -> dict[str, Path]:
    """Every module of servertune.check by dotted name, packages by their __init__.py."""
    found = {}
    for path in sorted(CHECK.rglob("*.py")):
        parts = ("servertune", *path.relative_to(CHECK.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `name` imports anywhere in its file (module level, inside a
    function, under TYPE_CHECKING), `from package import module` included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            imported.add(base)
            imported.update(f"{base}.{alias.name}" for alias in node.names)
    return (imported & known) - {name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in `graph`, as the modules around it; None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_every_rule_a_rule_module_defines_is_registered_once() -> None:
    """Each `Rule` at the top level of a rules/ module is in RULES, under its own id."""
    defined: list[Rule] = []
    for info in pkgutil.iter_modules(servertune.check.rules.__path__):
        module = importlib.import_module(f"servertune.check.rules.{info.name}")
        defined += [v for v in vars(module).values() if isinstance(v, Rule)]
    assert len({r.id for r in defined}) == len(defined), "two rules share an id"
    assert sorted(r.id for r in defined) == sorted(RULES)
    assert all(RULES[r.id] is r for r in defined)


def test_no_import_circle_inside_check() -> None:
    """No module of servertune.check imports, even inside a function, one that imports it."""
    modules = _modules()
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_circle_finder_finds_a_circle() -> None:
    """The detector above is not vacuous: a -> b -> c -> a is a circle, a -> b -> c is not."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


@pytest.mark.parametrize("path", sorted(CHECK.rglob("*.py")), ids=lambda p: p.name)
def test_no_function_in_check_is_over_80_lines(path: Path) -> None:
    """Each function of servertune.check fits on a screen: a longer one is split by meaning."""
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION
    ]
    assert not long, long
