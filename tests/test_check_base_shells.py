"""Issue 44: a shell-form CMD is judged by the /bin/sh of the image's base. bash (Fedora, RHEL
and UBI, CentOS, Rocky, Alma, Amazon Linux, Azure Linux) execs a lone command, so the server is
PID 1, and so does BusyBox ash 1.28 on (Alpine 3.8 on), even a list's last command; dash
(Debian, Ubuntu) keeps the shell as its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine

MACHINE = Machine(cores=2, somaxconn=4096)

_DOCKERFILE = """FROM {base}
WORKDIR /app
COPY . /app
ENV APP_PORT=8000
CMD {cmd}
"""


def _shell_form(directory: Path, base: str, cmd: str) -> list[Finding]:
    path = directory / "Dockerfile"
    path.write_text(_DOCKERFILE.format(base=base, cmd=cmd))
    report = check_files([path], machine=MACHINE, env={})
    return [f for f in report.findings if f.rule == "shell-form-command"]


@pytest.mark.parametrize(
    "base",
    [
        "mcr.microsoft.com/azurelinux/base/python:3.12",
        "registry.access.redhat.com/ubi9/python-311:latest",
        "quay.io/centos/centos:stream9",
        "fedora:40",
        "public.ecr.aws/amazonlinux/amazonlinux:2023",
        "rockylinux:9",
    ],
)
def test_a_lone_shell_form_command_on_a_bash_base_is_pid_1(tmp_path: Path, base: str) -> None:
    """`CMD uvicorn ... --port ${APP_PORT}` on a base whose /bin/sh is bash is no finding: bash
    execs the one simple command, uvicorn is PID 1 and gets SIGTERM (seen on
    microsoft/planetary-computer-apis, FROM mcr.microsoft.com/azurelinux/base/python)."""
    assert (
        _shell_form(tmp_path, base, "uvicorn app.main:app --host 0.0.0.0 --port ${APP_PORT}") == []
    )


def test_a_list_on_a_bash_base_still_keeps_the_shell(tmp_path: Path) -> None:
    """`CMD gunicorn app:app || exit 1` on a bash base stays a finding: bash keeps the shell
    for the list, gunicorn is its child."""
    (finding,) = _shell_form(tmp_path, "fedora:40", "gunicorn app:app || exit 1")
    assert "bash, in the base image fedora:40" in finding.message


@pytest.mark.parametrize(
    ("base", "said"),
    [
        ("python:3.12-slim-bookworm", "dash, in the Debian-based base image"),
        ("python:3.12", "dash, in the Debian-based base image"),
        ("ubuntu:24.04", "dash, in the Debian-based base image"),
        ("python:3.6-alpine3.7", "BusyBox ash before 1.28, in the Alpine-based base image"),
    ],
)
def test_a_dash_or_ash_base_is_the_finding_and_says_which_shell(
    tmp_path: Path, base: str, said: str
) -> None:
    """On Debian and Ubuntu bases, and Alpine before 3.8 (BusyBox 1.27), the shell stays
    PID 1: the finding names the shell and the base it comes from."""
    (finding,) = _shell_form(tmp_path, base, "gunicorn app:app")
    assert f"/bin/sh ({said} {base})" in finding.message


@pytest.mark.parametrize(
    ("cmd", "raised"),
    [
        ("gunicorn --workers 3 --bind 0.0.0.0:8000 app:app", False),
        ("flask db upgrade && gunicorn --bind 0.0.0.0:8000 app:app", False),
        ("gunicorn --bind 0.0.0.0:8000 app:app | tee /tmp/log", True),
    ],
)
def test_busybox_ash_execs_a_lone_command_and_a_lists_last(
    tmp_path: Path, cmd: str, raised: bool
) -> None:
    """On an Alpine base /bin/sh is BusyBox ash, which since 1.28 execs the last command of its
    `-c` string (shell/ash.c: `evalstring(minusc, EV_EXIT)`, and `evalcommand` does not fork
    under EV_EXIT with no trap set), a list's last command too: gunicorn is PID 1 and no
    shell-form-command is raised. A pipeline's commands are forked, so that stays the finding (seen on scieloorg/opac_5, FROM python:3.11.0-alpine)."""
    assert bool(_shell_form(tmp_path, "python:3.11.0-alpine", cmd)) is raised


@pytest.mark.parametrize("base", ["$BASE_IMAGE", "example/devops:python-3.12"])
def test_an_unknown_base_is_the_finding_with_its_assumption_stated(
    tmp_path: Path, base: str
) -> None:
    """A base from an ARG or an owner's image whose name says no distribution keeps the finding,
    and the message says it assumes dash or ash and that a bash /bin/sh would exec the command
    (seen on materialsproject/emmet, FROM materialsproject/devops)."""
    text = f"ARG BASE_IMAGE\n{_DOCKERFILE}" if base.startswith("$") else _DOCKERFILE
    path = tmp_path / "Dockerfile"
    path.write_text(text.format(base=base, cmd="gunicorn app:app"))
    report = check_files([path], machine=MACHINE, env={})
    (finding,) = [f for f in report.findings if f.rule == "shell-form-command"]
    assert "assumed dash or ash" in finding.message
    assert "a lone command is exec'd" in finding.message


def test_the_base_of_a_base_built_here_decides(tmp_path: Path) -> None:
    """An image FROM a stage of its own Dockerfile takes /bin/sh from the stage's external base:
    `FROM fedora:40 AS base` then `FROM base` runs bash."""
    path = tmp_path / "Dockerfile"
    path.write_text(
        "FROM fedora:40 AS base\nRUN dnf -y install python3\n"
        "FROM base\nWORKDIR /app\nCMD gunicorn app:app\n"
    )
    report = check_files([path], machine=MACHINE, env={})
    assert [f for f in report.findings if f.rule == "shell-form-command"] == []


@pytest.mark.parametrize(
    ("reference", "sh"),
    [
        ("nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", "dash"),
        ("nvidia/cuda:12.4.1-runtime-ubi8", "bash"),
        ("ghcr.io/astral-sh/uv:python3.12-bookworm-slim", "dash"),
        ("mcr.microsoft.com/cbl-mariner/base/python:3", "bash"),
        ("nginx:alpine", "ash"),
        ("example/app:latest", None),
    ],
)
def test_the_shell_is_read_from_the_images_name_and_tag(reference: str, sh: str | None) -> None:
    """A distribution named in the tag (`-ubuntu22.04`, `-ubi8`, `-bookworm`) or the path
    (`azurelinux/`, `cbl-mariner/`) says the shell; an owner's image that names none says
    nothing."""
    from servertune.check.base_shells import image_sh

    assert image_sh(reference) == sh


@pytest.mark.parametrize(("base", "raised"), [("python:3.11-alpine", False), ("python:3.11", True)])
def test_a_compose_sh_c_list_on_an_alpine_image_ends_in_the_server(
    tmp_path: Path, base: str, raised: bool
) -> None:
    """A compose `command: sh -c "flask db upgrade && gunicorn ..."` on an image built FROM an
    Alpine base runs BusyBox ash, which execs the list's last command: gunicorn is PID 1 and no
    entrypoint-without-exec is raised; on a Debian base dash keeps gunicorn as its child."""
    from tests.folder_support import check_folder, write

    root = write(
        tmp_path,
        {
            "Dockerfile": f'FROM {base}\nWORKDIR /app\nCOPY . /app\nCMD ["gunicorn", "app:app"]\n',
            "compose.yml": "services:\n  web:\n    build: .\n"
            '    command: sh -c "flask db upgrade && gunicorn --bind 0.0.0.0:8000 app:app"\n',
        },
    )
    rules = [f.rule for f in check_folder(root).findings]
    assert ("entrypoint-without-exec" in rules) is raised


@pytest.mark.parametrize(
    ("base", "cmd", "raised"),
    [
        ("python:3.11", "flask upgrade && gunicorn --bind 0.0.0.0:8000 app:app", True),
        ("python:3.11", "python manage.py migrate; gunicorn app:app", True),
        ("python:3.11", "flask upgrade && exec gunicorn app:app", False),
        ("python:3.11-alpine", "flask upgrade && gunicorn app:app", False),
        ("fedora:40", "flask upgrade && gunicorn app:app", False),
        ("example/devops:python-3.12", "flask upgrade && gunicorn app:app", False),
        ("node:20", "flask upgrade && gunicorn app:app", True),
        ("base-web", "manage.py migrate && uwsgi --ini api.ini", False),
        ("docker.io/library/python:3.12", "flask upgrade && gunicorn app:app", True),
    ],
)
def test_dash_keeps_the_shell_for_a_lists_last_command(
    tmp_path: Path, base: str, cmd: str, raised: bool
) -> None:
    """`CMD flask upgrade && gunicorn ...` on a Debian base (seen in
    uwcirg/isacc-messaging-service, FROM python:3.11): dash forks every command of its `-c`
    list, the last too, so dash stays PID 1 and gunicorn never gets SIGTERM: the finding.
    `exec` before the server hands it PID 1; BusyBox ash execs a list's last command; bash's
    forking of it depends on its version, and an unknown base's /bin/sh is not known: no
    finding there for a server only in a list's last command. A name with no owner that is no
    Debian-based Official Image (`base-web`, an image another file builds and tags; seen in
    ministryofjustice/money-to-prisoners-api) is such an unknown base."""
    assert bool(_shell_form(tmp_path, base, cmd)) is raised


@pytest.mark.parametrize(
    ("cmd", "fixed"),
    [
        (
            "cd backend && PYTHONPATH=. uvicorn app:app --port 8001",
            "CMD cd backend && PYTHONPATH=. exec uvicorn app:app --port 8001",
        ),
        (
            "APP_ENV=prod gunicorn -b :$PORT app:app",
            "CMD APP_ENV=prod exec gunicorn -b :$PORT app:app",
        ),
    ],
)
def test_the_exec_of_a_shell_form_fix_goes_after_the_commands_assignments(
    tmp_path: Path, cmd: str, fixed: str
) -> None:
    """`CMD cd backend && PYTHONPATH=. uvicorn ...` is fixed as `... && PYTHONPATH=. exec
    uvicorn ...`: `exec PYTHONPATH=. uvicorn` would ask the shell for a program named
    `PYTHONPATH=.` (seen in bytedance/deer-flow's backend/Dockerfile); the assignment before
    `exec` still reaches the server."""
    (finding,) = _shell_form(tmp_path, "python:3.12-slim", cmd)
    assert finding.fix == fixed
