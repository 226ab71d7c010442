"""Manifests modelled on public projects' own: check reads each (exit 0 or 1, never 2) and finds
exactly the findings written down in tests/corpus/expected.json before the first run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import CheckInputError, check_files
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


#: Files whose containers start a server check does not read (`mlflow server`): read alone they
#: are "nothing to check" (exit 2), never a clean report; beside the others they add no finding.
NOTHING_TO_CHECK = frozenset({"mlflow/mlflow.yaml"})


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_findings(name: str) -> None:
    if name in NOTHING_TO_CHECK:
        with pytest.raises(CheckInputError, match="starts no app server .*: nothing to check"):
            check_files([CORPUS / name], machine=MACHINE)
        result = check_files([CORPUS / name, CORPUS / "fastapi-k8s/app.yaml"], machine=MACHINE)
        assert [f for f in result.findings if f.at.file == CORPUS / name] == []
        return
    result = check_files([CORPUS / name], machine=MACHINE)
    found = sorted([f.rule, f.at.line] for f in result.findings)
    assert found == sorted(EXPECTED[name])


def test_the_corpus_never_exits_2() -> None:
    paths = [str(CORPUS / name) for name in sorted(EXPECTED)]
    result = CliRunner().invoke(app, ["check", *paths])
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
