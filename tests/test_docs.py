"""Docs cannot drift: the reference page is regenerated from the model, and every shown `servertune` command is rerun.

After a reviewed change of output, refresh the pages on purpose with
`SERVERTUNE_REGEN_DOCS=1 python -m pytest tests/test_docs.py`, then read `git diff docs`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from servertune.reference import workload_reference

from .support import REPO

DOCS = REPO / "docs"
REGENERATE = os.environ.get("SERVERTUNE_REGEN_DOCS") == "1"
#: Commands whose output depends on time or that write or serve: shown as run, not re-checked.
NOT_RECHECKED = ("--out", "bench", "measure")


def _examples() -> list[tuple[str, str, str]]:
    """(page, command, expected output) for every `$ servertune ...` line in a console block."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
            command, output = None, []
            for line in [*block.splitlines(), "$ "]:
                if line.startswith("$ "):
                    if (
                        command
                        and command.startswith("servertune ")
                        and not any(n in command for n in NOT_RECHECKED)
                    ):
                        found.append((str(page.relative_to(REPO)), command, "\n".join(output)))
                    command, output = line[2:], []
                else:
                    output.append(line)
    return found


EXAMPLES = _examples()


def test_reference_page_is_generated_from_the_model() -> None:
    """docs/reference.md equals `python -m servertune.reference` (regenerate it after changing a field)."""
    assert (DOCS / "reference.md").read_text() == workload_reference()


def test_docs_show_servertune_commands() -> None:
    """The docs do show commands (a parser that finds none would make the next test vacuous)."""
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize(
    ("page", "command", "expected"), EXAMPLES, ids=[f"{p}:{c[:40]}" for p, c, _ in EXAMPLES]
)
def test_shown_command_prints_shown_output(
    page: str, command: str, expected: str, tmp_path: Path
) -> None:
    """Running the command prints exactly what the page shows (stdout then stderr)."""
    argv = [sys.executable, "-m", "servertune", *shlex.split(command)[1:]]
    # `check` reads the config files shown beside the page, by paths relative to it.
    cwd = (REPO / page).parent if argv[3:4] == ["check"] else tmp_path
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "COLUMNS": "100"},
    )  # fmt: skip
    actual = (result.stdout + result.stderr).rstrip("\n")
    if REGENERATE and actual != expected.rstrip("\n"):
        path = REPO / page
        shown = f"$ {command}\n{expected}".rstrip("\n")
        assert path.read_text().count(shown) == 1, f"cannot locate the example in {page}"
        path.write_text(path.read_text().replace(shown, f"$ {command}\n{actual}"))
        return
    assert actual == expected.rstrip("\n"), page


def test_relative_links_in_docs_resolve() -> None:
    """Every relative link in README.md and docs/ points at a file that exists."""
    broken = []
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if (
                not target.startswith(("http://", "https://", "mailto:"))
                and not (page.parent / target).exists()
            ):
                broken.append(f"{page.relative_to(REPO)} -> {target}")
    assert broken == []
