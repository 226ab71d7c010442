"""Hostile input to the deployment-file readers (Dockerfile, compose, Procfile, HAProxy, env
files): each is one `error:` line naming the file and the reason, exit 2, nothing on stdout,
no traceback. Kubernetes manifests have theirs in test_check_kubernetes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.cli import app
from servertune.sizing import Machine

#: Ten MiB: five times the 2 MiB a config file may be.
TEN_MB = 10 * 1024 * 1024


def _bomb(head: str) -> str:
    """A billion laughs: each level nine aliases of the one before."""
    return (
        head
        + "x0: &x0 [lol]\n"
        + "".join(f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 9)}]\n" for i in range(1, 14))
    )


COMPOSE = "services:\n  web:\n    image: example/web:1\n    command: gunicorn -w 2 app:app\n"
DOCKERFILE = 'FROM python:3.12\nCMD ["gunicorn", "-w", "2", "app:app"]\n'
PROCFILE = "web: gunicorn -w 2 app:app\n"
HAPROXY = "defaults\n    mode http\nbackend app\n    server s1 127.0.0.1:8000\n"

#: (file name, content, the reason the one line must give, extra `check` arguments).
CASES: dict[str, tuple[str, str | bytes, str, tuple[str, ...]]] = {
    "dockerfile-10mb": ("Dockerfile", DOCKERFILE + "# pad\n" * (TEN_MB // 6), "larger than", ()),
    "dockerfile-binary": ("Dockerfile", DOCKERFILE.encode() + b"\0\x7fELF", "binary file", ()),
    "compose-alias-bomb": ("compose.yaml", _bomb(COMPOSE), "YAML aliases", ()),
    "compose-deep-anchors": (
        "compose.yaml",
        COMPOSE + "x-deep: &deep " + "[" * 200 + "]" * 200 + "\n",
        "nested deeper than",
        (),
    ),
    "compose-10mb": ("compose.yaml", COMPOSE + "# pad\n" * (TEN_MB // 6), "larger than", ()),
    "compose-binary": ("compose.yaml", COMPOSE.encode() + b"\0\x01", "binary file", ()),
    "procfile-10mb": ("Procfile", PROCFILE + "# pad\n" * (TEN_MB // 6), "larger than", ()),
    "procfile-binary": ("Procfile", PROCFILE.encode() + b"\0\xff", "binary file", ()),
    "procfile-not-utf8": ("Procfile", PROCFILE.encode() + b"# caf\xe9\n", "not UTF-8", ()),
    "procfile-open-quote": ("Procfile", 'web: gunicorn "app:app\n', "unclosed quote", ()),
    "procfile-bad-flag": ("Procfile", "web: gunicorn -w many app:app\n", "invalid int", ()),
    "haproxy-10mb": ("haproxy.cfg", HAPROXY + "# pad\n" * (TEN_MB // 6), "larger than", ()),
    "haproxy-binary": ("haproxy.cfg", HAPROXY.encode() + b"\0\x01", "binary file", ()),
    "haproxy-unset-variable": (
        "haproxy.cfg",
        HAPROXY + '    timeout server "${NOPE}"\n',
        "NOPE",
        (),
    ),
    "env-file-10mb": ("app.env", "WORKERS=2\n" * (TEN_MB // 10), "larger than", ("env",)),
    "env-file-binary": ("app.env", b"WORKERS=2\n\0\x01", "binary file", ("env",)),
    "env-file-not-utf8": ("app.env", b"WORKERS=\xe9\n", "not UTF-8", ("env",)),
    "env-file-malformed": ("app.env", 'WORKERS="2\n', "not a KEY=value line", ("env",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_deployment_files_are_one_error_line(case: str, tmp_path: Path) -> None:
    """Too big, binary, not UTF-8, an alias bomb or nesting past the bound, a required
    variable that is unset, a quote left open, a flag the server refuses."""
    name, content, reason, extra = CASES[case]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    args = ["check", str(path)]
    if extra == ("env",):  # the env file is what is hostile: a Procfile that reads it
        (tmp_path / "Procfile").write_text("web: gunicorn -w $WORKERS app:app\n")
        args = ["check", str(tmp_path / "Procfile"), "--env-file", str(path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == "", result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}"), lines[0]
    assert reason in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_a_dockerfile_heredoc_is_read_as_the_builder_reads_it(tmp_path: Path) -> None:
    """`RUN <<EOF ... EOF` is BuildKit syntax, not hostile: its body (here a line that looks like
    a CMD) is the script's, never an instruction, and the real CMD is the one checked."""
    path = tmp_path / "Dockerfile"
    path.write_text(
        "# syntax=docker/dockerfile:1\n"
        "FROM python:3.12\n"
        "RUN <<EOF\n"
        "pip install gunicorn\n"
        'CMD ["gunicorn", "-w", "64", "decoy:app"]\n'
        "EOF\n"
        'CMD ["gunicorn", "-w", "2", "app:app"]\n'
    )
    result = check_files([path], machine=Machine(cores=2, somaxconn=4096))
    (server,) = result.apps
    assert (server.workers.value, server.workers.at.line) == (2, 7)


def test_a_required_variable_in_a_procfile_is_left_to_the_platform(tmp_path: Path) -> None:
    """`${WORKERS:?need it}`: sh keeps the braces' words together; unset here, it is the
    platform's to set (named, not guessed), never handed to gunicorn half-split."""
    path = tmp_path / "Procfile"
    path.write_text("web: gunicorn -w ${WORKERS:?need it} app:app\n")
    result = check_files([path], machine=Machine(cores=2, somaxconn=4096))
    (finding,) = [n for n in result.notes if "WORKERS" in n.message]
    assert finding.rule == "unresolved-variable"
    assert "${WORKERS:?need it}" in finding.message
