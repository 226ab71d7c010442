"""Manifests modelled on public projects' own: check reads each (exit 0 or 1, never 2) and finds
exactly the findings written down in tests/corpus/expected.json before the first run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.cli import app
from servertune.sizing import Machine

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, list[list[object]]] = json.loads((CORPUS / "expected.json").read_text())
#: A machine with many cores: a container's findings must come from its own limits.
MACHINE = Machine(cores=64, somaxconn=4096)


def test_every_corpus_file_has_expectations() -> None:
    files = {
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in ("expected.json", "README.md")
    }
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_findings(name: str) -> None:
    result = check_files([CORPUS / name], machine=MACHINE)
    found = sorted([f.rule, f.at.line] for f in result.findings)
    assert found == sorted(EXPECTED[name])


def test_the_corpus_never_exits_2() -> None:
    paths = [str(CORPUS / name) for name in sorted(EXPECTED)]
    result = CliRunner().invoke(app, ["check", *paths])
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
