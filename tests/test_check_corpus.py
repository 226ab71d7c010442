"""Deployment files modelled on public projects' own: check reads each (exit 0 or 1, never 2)
and finds exactly the findings written down before the first run.

Layout: `tests/corpus/<project>/<file>` beside `tests/corpus/<project>/expected.json`, which
names each file `check` is given (`files`: its findings as `[rule, "file:line"]`, paths relative
to the project, and optionally `env_file` / `rss_mb` as `check --env-file` / `--rss-mb` take
them, and `with`: files checked together with it) and the files that are only read through
another (`support`: env files, an entrypoint script, a Dockerfile a compose file builds);
`sources` cites, per file, the original it was written from (repository, commit and path).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.envfile import read_env_file
from servertune.cli import app
from servertune.sizing import Machine

CORPUS = Path(__file__).parent / "corpus"
PROJECTS: dict[str, dict[str, Any]] = {
    path.parent.name: json.loads(path.read_text())
    for path in sorted(CORPUS.glob("*/expected.json"))
}
CASES = [(project, name) for project, spec in PROJECTS.items() for name in spec["files"]]
#: A machine with many cores: a container's findings must come from its own limits.
MACHINE = Machine(cores=64, somaxconn=4096)


def test_every_corpus_file_is_checked_or_support() -> None:
    """No file sits in the corpus without an expectation (or a reason to be there)."""
    for project, spec in PROJECTS.items():
        root = CORPUS / project
        present = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} - {
            "expected.json"
        }
        assert present == set(spec["files"]) | set(spec.get("support", [])), project


def test_the_corpus_is_large_enough() -> None:
    """At least 30 checked files, of which at least 18 are deployment files (Dockerfiles,
    compose files, Procfiles, entrypoint scripts, env files) besides Kubernetes manifests."""
    assert len(CASES) >= 30
    files = [p for p in CORPUS.rglob("*") if p.is_file() and p.name != "expected.json"]
    deploy = [p for p in files if p.suffix not in (".md",) and "apiVersion:" not in p.read_text()]
    assert len(deploy) >= 18


def test_every_source_is_cited_at_a_commit() -> None:
    """A cited original names its repository, a full commit and a path, and the file it was
    written from is one of the project's corpus files."""
    for project, spec in PROJECTS.items():
        for name, url in spec.get("sources", {}).items():
            assert name in set(spec["files"]) | set(spec.get("support", [])), (project, name)
            assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+", url)


@pytest.mark.parametrize(("project", "name"), CASES, ids=[f"{p}/{n}" for p, n in CASES])
def test_corpus_file_findings(project: str, name: str) -> None:
    """Exactly the findings written down for the file, each at its file:line."""
    root = CORPUS / project
    spec = PROJECTS[project]["files"][name]
    env: dict[str, str] = {}
    if "env_file" in spec:
        env, _ = read_env_file(root / spec["env_file"])
    if spec.get("nothing_to_check"):
        # Its containers start a server check does not read (`mlflow server`): alone it is a
        # coverage note saying so (exit 0), never an error; beside another file, no finding.
        alone = check_files([root / name], machine=MACHINE, env=env)
        assert (alone.findings, alone.errors) == ((), ())
        assert [n.kind for n in alone.notes] == ["starts-no-server"]
        other = CORPUS / "fastapi-k8s" / "app.yaml"
        result = check_files([root / name, other], machine=MACHINE, env=env)
        assert [f for f in result.findings if f.at.file == root / name] == spec["findings"] == []
        return
    # `with`: files checked together with it (an nginx site and the app server behind it).
    together = [root / other for other in spec.get("with", [])]
    # The project's folder is its repository: the tree check reads (folder mode's root).
    result = check_files(
        [root / name, *together], machine=MACHINE, env=env, rss_mb=spec.get("rss_mb"), root=root
    )
    assert result.errors == ()
    # Findings and coverage notes (`unresolved-variable`, `config-not-found`), each at its line.
    found = sorted(
        [rule, f"{Path(at.file).resolve().relative_to(root.resolve())}:{at.line}"]
        for rule, at in [(f.rule, f.at) for f in result.findings]
        + [(n.kind, n.at) for n in result.notes if n.kind != "starts-no-server"]
    )
    assert found == sorted(spec["findings"])


def test_check_writes_nothing_into_the_corpus() -> None:
    """Reading a gunicorn config (gunicorn imports it) leaves no __pycache__ beside it."""
    check_files([CORPUS / "heroku-getting-started" / "gunicorn.conf.py"], machine=MACHINE, env={})
    assert not list(CORPUS.rglob("__pycache__"))


def test_the_corpus_never_exits_2() -> None:
    """Every corpus file through the CLI at once: findings or none, never an error."""
    paths = [str(CORPUS / project / name) for project, name in CASES]
    result = CliRunner().invoke(app, ["check", *paths, "--cores", "64"])
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
