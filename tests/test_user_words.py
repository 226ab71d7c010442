"""What a user reads names no internal bookkeeping: no issue numbers, no "development machine", no lock paths.

Covers docs/ (except CHANGELOG.md, which the maintainers edit), README.md, every command's
`--help`, and the package's sources (docstrings and comments alike) and templates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from servertune.cli import app

from .support import REPO

#: Words that mean something only to the people who built servertune.
INTERNAL = re.compile(
    r"\bissues? ?#?\d+|development machine|/tmp/servertune-bench\.lock|servertune-bench\.lock",
    re.IGNORECASE,
)


def _user_files() -> list[Path]:
    docs = [p for p in (REPO / "docs").rglob("*") if p.is_file() and p.suffix in {".md", ".py"}]
    sources = [*(REPO / "src" / "servertune").rglob("*.py"), *(REPO / "templates").iterdir()]
    return sorted(p for p in [REPO / "README.md", *docs, *sources] if p.name != "CHANGELOG.md")


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, command in getattr(group, "commands", {}).items():
        found += _commands(command, (*path, name))
    return found


def _internal_words(text: str) -> list[str]:
    return [m.group(0) for m in INTERNAL.finditer(text)]


def test_the_pattern_catches_what_it_is_meant_to() -> None:
    """The meta-test can fail: each kind of internal word is found, ordinary prose is not."""
    caught = "Targets (issue #3); issue 10; the 2-core development machine; flock /tmp/servertune-bench.lock"
    assert len(_internal_words(caught)) == 4
    assert _internal_words("report an issue on GitHub; a 2-core AMD EPYC machine") == []


@pytest.mark.parametrize("path", _user_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_user_facing_file_has_no_internal_words(path: Path) -> None:
    """Docs, README, docstrings, comments and templates speak to users, not to the tracker."""
    assert _internal_words(path.read_text(errors="replace")) == []


def test_every_commands_help_has_no_internal_words() -> None:
    """`servertune [COMMAND ...] --help` for every command and sub-command."""
    runner = CliRunner()
    commands = _commands(typer.main.get_command(app))
    assert len(commands) > 5
    for path in commands:
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, (path, result.output)
        assert _internal_words(result.output) == [], path
