"""House rules checked over the whole package: every knob is used, public names are pinned, imports stay light."""

from __future__ import annotations

import re
import subprocess
import sys
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
    commands = re.findall(r"```console\n(.+?)\n```", readme, re.S)
    assert len(commands) == 3, commands
    ci_lines = [
        line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip()
    ]
    assert ci_lines[-1] == commands[2]
    assert Path(REPO / ".ci" / "run").stat().st_mode & 0o111


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
