"""House rules checked over the whole package: every knob is used, public names are pinned, imports stay light,
no function is long and no modules import each other in a circle."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import servertune
from servertune.sizing import Plan
from servertune.workload import Workload

from .support import REPO

SOURCES = "\n".join(
    p.read_text()
    for p in [*(REPO / "src" / "servertune").rglob("*.py"), *(REPO / "templates").iterdir()]
)
TEMPLATES = {p.name: p.read_text() for p in (REPO / "templates").iterdir()}
#: The renderers: the only code between a Plan and a template.
RENDERERS = "\n".join(p.read_text() for p in (REPO / "src" / "servertune" / "targets").glob("*.py"))


@pytest.mark.parametrize("name", list(Workload.model_fields))
def test_every_workload_field_is_used_by_a_rule_or_template(name: str) -> None:
    """No dead knobs: each field is read by the sizing rules, a renderer or a template (`w.NAME`)."""
    assert re.search(rf"\bw(orkload)?\.{name}\b", SOURCES), f"{name} is declared but never used"


def test_exported_members_are_pinned() -> None:
    """The top-level package exports exactly its version: everything else lives in named modules."""
    assert servertune.__all__ == ["__version__"]


def test_importing_servertune_stays_light() -> None:
    """`import servertune` and the CLI (every command's module) import no HTTP client, no server
    and no benchmark code."""
    code = (
        "import sys, servertune, servertune.cli\n"
        "servertune.cli.app\n"
        "heavy = {'requests', 'httpx', 'httpx2', 'urllib3', 'niquests', 'gunicorn', 'uvicorn',"
        " 'asgiref',"
        " 'matplotlib', 'servertune.bench', 'servertune.http'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_every_template_is_used() -> None:
    """Each template under templates/ is rendered or included by some renderer."""
    render_source = SOURCES
    for template in (REPO / "templates").iterdir():
        assert f'"{template.name}"' in render_source, template.name


def test_readme_test_command_is_what_ci_runs() -> None:
    """`.ci/run` ends by running the README's test command verbatim."""
    readme = (REPO / "README.md").read_text()
    # The set-up and test commands are the blocks without a `$ ` prompt; the others show a
    # command with its output (rerun by tests/test_docs.py).
    commands = [
        c for c in re.findall(r"```console\n(.+?)\n```", readme, re.S) if not c.startswith("$ ")
    ]
    assert commands == [
        "python -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]'",
        "python -m pytest",
    ], commands
    ci_lines = [
        line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip()
    ]
    assert ci_lines[-1] == commands[1]
    assert Path(REPO / ".ci" / "run").stat().st_mode & 0o111


def test_the_tests_and_their_children_write_bytecode() -> None:
    """The suite's interpreters write bytecode whatever the caller set (tests/conftest.py): under
    PYTHONDONTWRITEBYTECODE each child compiled servertune's sources again and each parallel
    worker recompiled every test module (about 25 s of CPU in test_check_cli.py and
    test_check_reading.py alone)."""
    assert not sys.dont_write_bytecode
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert child.stdout.strip() == "False"


@pytest.mark.parametrize("name", Plan.derived_names())
def test_every_derived_number_reaches_a_config_or_is_explain_only(name: str) -> None:
    """A derived number is printed by a template (or handed to one by a renderer), or declared
    explain_only; an explain_only number never appears in a config."""
    used = re.search(rf"\bplan\.{name}\b", "\n".join([*TEMPLATES.values(), RENDERERS]))
    if Plan.explain_only(name):
        assert not used, f"{name} is declared explain_only but a template prints it"
    else:
        assert used, (
            f"{name} is derived but no template prints it: declare it explain_only or use it"
        )


def _expressions(template: str) -> list[str]:
    """The Jinja expressions and statements of a template, string literals removed."""
    found = re.findall(r"\{\{(.*?)\}\}|\{%-?(.*?)-?%\}", template, re.S)
    return [re.sub(r"\"[^\"]*\"|'[^']*'", "", a or b) for a, b in found]


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_no_template_does_arithmetic(template: str) -> None:
    """Every number a config prints was computed by a rule: templates hold no + - * / // % ."""
    for expression in _expressions(TEMPLATES[template]):
        assert not re.search(r"[-+*/%]", expression), (
            f"{template}: arithmetic in {{{{{expression}}}}}"
        )


def test_the_arithmetic_detector_catches_arithmetic() -> None:
    """The detector above is not vacuous: it sees `a + 1` and `x * 2` and ignores '-' in strings."""
    exprs = _expressions('{{ plan.a + 1 }} {% if x * 2 %} {{ "a-b" }}')
    assert [bool(re.search(r"[-+*/%]", e)) for e in exprs] == [True, True, False]


# --- Short functions, layered modules ------------------------------------------------------------

SRC = REPO / "src"
#: The longest a function in src/ may be, decorators to last line: past it, split it by meaning.
MAX_FUNCTION_LINES = 80


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """Every function and method under `tree`, nested ones too, by qualified name."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from _functions(node, f"{name}.")
        else:
            yield from _functions(node, prefix)


def long_functions(src: Path, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """`path::qualified.name` -> lines, for each function under `src` longer than `limit`."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        for name, node in _functions(ast.parse(path.read_text())):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > limit:
                found[f"{path.relative_to(src).as_posix()}::{name}"] = lines
    return found


def import_graph(src: Path, package: str = "servertune") -> dict[str, set[str]]:
    """Module -> the package's modules it imports (names relative to `package`), from every
    import statement in it: module level, inside functions, under TYPE_CHECKING alike.

    `from a import b` is an edge to module `a.b` when that is a module, else to `a` (a name in
    it, or in its `__init__`); importing a module does not count as importing its parents."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in (src / package).rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    here = here[: len(here) - node.level + 1]
                    base = ".".join([*here, *([node.module] if node.module else [])])
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        imported.add(f"{base}.{alias.name}")
                    elif base in modules:
                        imported.add(base)
        imported.discard(name)
        graph[name.removeprefix(package + ".") if name != package else name] = {
            m.removeprefix(package + ".") for m in imported
        }
    return graph


def import_circles(graph: Mapping[str, set[str]]) -> dict[frozenset[str], list[str]]:
    """Each set of modules importing one another (a strongly connected set, Tarjan's), with one
    cycle through it to show, e.g. ['a', 'b', 'a']: a knot of several loops is reported once."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    knots: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            knot = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                knot.add(member)
                if member == node:
                    break
            if len(knot) > 1:
                knots.append(knot)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return {frozenset(knot): _cycle_through(graph, knot) for knot in knots}


def _cycle_through(graph: Mapping[str, set[str]], knot: set[str]) -> list[str]:
    """The shortest cycle from the knot's first module back to itself, inside the knot."""
    start = min(knot)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node] & knot):
                if other == start:
                    return [*paths[node], start]
                if other not in paths:
                    paths[other] = [*paths[node], other]
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle in {sorted(knot)}")  # a knot always has one


def test_no_function_in_src_is_over_80_lines() -> None:
    """No function in src/ is over 80 lines: a longer one does several things, so it is split
    into functions named for them (decorators to last line counted)."""
    found = long_functions(SRC)
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines: {found}"


def test_no_import_circle_between_src_modules() -> None:
    """No two modules of servertune import each other, directly or round a longer circle, at
    module level or inside a function: the modules form layers, each importing only below it."""
    found = import_circles(import_graph(SRC))
    assert not found, f"import circles: {[' -> '.join(cycle) for cycle in found.values()]}"


def test_the_layer_checks_see_circles_and_long_functions(tmp_path: Path) -> None:
    """The two checks above are not vacuous: on a package made for it, they find a circle closed
    by an import inside a function, one made by a relative import, and a 81-line function."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def thing():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("import pkg.a\n")  # imports into the circle, not part of it
    (package / "sub" / "__init__.py").write_text("from . import d\n")
    (package / "sub" / "d.py").write_text("from .. import sub\n")
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    (package / "long.py").write_text(f"@staticmethod\ndef f():\n{body}\ndef g():\n    pass\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["c"] == {"a"}
    assert import_circles(graph) == {
        frozenset({"a", "b"}): ["a", "b", "a"],
        frozenset({"sub", "sub.d"}): ["sub", "sub.d", "sub"],
    }
    assert long_functions(tmp_path) == {"pkg/long.py::f": 81}
