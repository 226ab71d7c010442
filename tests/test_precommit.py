"""The pre-commit hook manifest: valid by pre-commit's own schema, selecting the files check
reads by name and no others, and running a command that reads them (exit 0 or 1, never 2)."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest
from typer.testing import CliRunner

from servertune.cli import app

ROOT = Path(__file__).parent.parent
(HOOK,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

SELECTED = [
    "Dockerfile",
    "docker/Dockerfile",
    "Dockerfile.prod",
    "web.dockerfile",
    "Procfile",
    "compose.yaml",
    "docker-compose.yml",
    "deploy/docker-compose.production.yml",
    "gunicorn.conf.py",
    "config/gunicorn_conf.py",
    "uwsgi.ini",
    "deploy/mysite_uwsgi.ini",
    "nginx.conf",
    "etc/nginx-site.conf",
    "haproxy.cfg",
]
LEFT_OUT = [
    "app.py",
    "settings.py",
    "README.md",
    "k8s/deployment.yaml",  # a manifest's name tells nothing: users add theirs with `files:`
    "Dockerfile/notes.txt",
    "setup.cfg",
    "requirements.txt",
    ".dockerignore",
]


def test_the_manifest_is_valid_for_pre_commit() -> None:
    """pre-commit's own loader accepts it, with the fields its docs describe for a hook."""
    assert HOOK["id"] == "servertune-check"
    assert HOOK["language"] == "python"
    assert HOOK["pass_filenames"] is True


def test_the_hook_runs_the_installed_command_with_the_check_extra() -> None:
    """The entry is servertune's console script, and the extra it installs exists."""
    command, *words = shlex.split(HOOK["entry"])
    assert command in PYPROJECT["project"]["scripts"]
    assert words == ["check"]
    extras = [re.fullmatch(r"\.\[(\w+)\]", d) for d in HOOK["additional_dependencies"]]
    assert [m.group(1) for m in extras if m] == ["check"]
    assert "check" in PYPROJECT["project"]["optional-dependencies"]


@pytest.mark.parametrize("name", SELECTED)
def test_the_files_pattern_selects_what_check_reads(name: str) -> None:
    assert re.search(HOOK["files"], name)


@pytest.mark.parametrize("name", LEFT_OUT)
def test_the_files_pattern_leaves_other_files_alone(name: str) -> None:
    assert not re.search(HOOK["files"], name)


def test_the_hook_on_the_corpus_finds_without_failing() -> None:
    """Every corpus file the pattern selects, in one call as pre-commit makes it: findings or
    none (exit 0 or 1), never an unreadable file."""
    corpus = ROOT / "tests" / "corpus"
    files = sorted(
        str(p.relative_to(ROOT)) for p in corpus.rglob("*") if re.search(HOOK["files"], str(p))
    )
    assert len(files) >= 10
    result = CliRunner().invoke(app, ["check", "--cores", "64", *HOOK["args"], *files])
    assert result.exit_code in (0, 1), result.output
