"""How a command line reaches its server through a shell: a `cd DIR;` before the server in a
`sh -c` string, a script run by an interpreter from another script, a lone server command in
an exec-form `sh -c`. Each fixture is a small repository written here; the public project
where the pattern was seen is named in the test's docstring."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

#: An image copying the whole build context into its WORKDIR /app.
APP_IMAGE = "FROM python:3.12\nWORKDIR /app\nCOPY ./ .\n"

#: A gunicorn config in a sub-folder of the app, binding all interfaces on 8080.
SUB_CONFIG = 'bind = "0.0.0.0:8080"\nworkers = 3\n'


@pytest.mark.parametrize("separator", [";", " &&"])
def test_cd_in_a_command_string_finds_the_relative_config_there(
    tmp_path: Path, separator: str
) -> None:
    """`bash -c "cd /app/sub; gunicorn -c gunicorn.py wsgi:app"` (or `cd /app/sub &&`): the
    shell moves to /app/sub before gunicorn reads `-c gunicorn.py`, so the config is the
    image's /app/sub/gunicorn.py, the build context's sub/gunicorn.py, and its bind and
    workers are the server's (elixir-cloud-aai/proTES's docker-compose.yaml)."""
    compose = (
        "services:\n  web:\n    build: .\n"
        f'    command: bash -c "cd /app/sub{separator} gunicorn -c gunicorn.py wsgi:app"\n'
    )
    root = write(
        tmp_path,
        {"Dockerfile": APP_IMAGE, "sub/gunicorn.py": SUB_CONFIG, "compose.yaml": compose},
    )
    result = check_folder(root)
    assert chains(result, root) == [(["compose.yaml:2", "sub/gunicorn.py:1"], "gunicorn", 3)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]


@pytest.mark.parametrize(
    "runner", ["/bin/bash portal.bash", "bash -e portal.bash", "sh portal.bash"]
)
def test_a_script_run_by_a_shell_from_a_script_is_followed(tmp_path: Path, runner: str) -> None:
    """An entrypoint whose line `/bin/bash portal.bash` (or `bash -e portal.bash`, `sh
    portal.bash`) runs another script of the image is followed into it as `./portal.bash`
    is: the shell reads its script operand from the working directory, so the gunicorn that
    script starts is the image's launch (4dn-dcic/fourfront's production entrypoint.bash)."""
    dockerfile = (
        "FROM python:3.12\nWORKDIR /srv\nCOPY entrypoint.sh portal.bash ./\n"
        'ENTRYPOINT ["/srv/entrypoint.sh"]\n'
    )
    entrypoint = f'#!/bin/bash\necho "starting"\n{runner}\n'
    portal = "#!/bin/bash\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n"
    root = write(
        tmp_path, {"Dockerfile": dockerfile, "entrypoint.sh": entrypoint, "portal.bash": portal}
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:4", "entrypoint.sh:3", "portal.bash:2"], "gunicorn", 3)
    ]


@pytest.mark.parametrize(
    ("base", "program", "raised"),
    [
        ("ubuntu:24.04", "sh", True),
        ("python:3.12-alpine", "/bin/sh", False),
        ("ubuntu:24.04", "bash", False),
        ("fedora:40", "sh", False),
    ],
)
def test_an_exec_form_shell_string_is_judged_as_the_shell_form(
    tmp_path: Path, base: str, program: str, raised: bool
) -> None:
    """`CMD ["sh", "-c", "gunicorn ..."]` is the shell form written out: dash (Debian's and
    Ubuntu's /bin/sh) keeps the lone command as its child, so the shell is PID 1 and
    `shell-form-command` is raised at the CMD, its fix the exec form of the string; bash,
    an image whose /bin/sh is bash, or Alpine's BusyBox ash execs it, and nothing is raised
    (carbonplan/offsets-db-api's Dockerfile)."""
    dockerfile = f'FROM {base}\nCMD ["{program}", "-c", "gunicorn -w 3 -b 0.0.0.0:8000 app:app"]\n'
    root = write(tmp_path, {"Dockerfile": dockerfile})
    result = check_folder(root)
    found = [f for f in result.findings if f.rule == "shell-form-command"]
    assert [(f.at.line, f.fix) for f in found] == (
        [(2, 'CMD ["gunicorn", "-w", "3", "-b", "0.0.0.0:8000", "app:app"]')] if raised else []
    )


def test_a_compose_service_running_the_image_exec_form_shell_string_is_judged(
    tmp_path: Path,
) -> None:
    """A compose service that builds the image and sets no command runs the image's `CMD
    ["sh", "-c", "uvicorn ..."]`: judged there as the shell form of the string, dash PID 1
    on a Debian base (openai/chatgpt-retrieval-plugin's Dockerfile, run by its compose)."""
    dockerfile = (
        'FROM python:3.10\nCMD ["sh", "-c", "uvicorn main:app --host 0.0.0.0 --port ${PORT:-80}"]\n'
    )
    compose = "services:\n  api:\n    build: .\n"
    root = write(tmp_path, {"Dockerfile": dockerfile, "compose.yaml": compose})
    result = check_folder(root)
    found = [f for f in result.findings if f.rule == "shell-form-command"]
    assert [(f.at.line, f.fix) for f in found] == [
        (2, "CMD exec uvicorn main:app --host 0.0.0.0 --port ${PORT:-80}")
    ]


@pytest.mark.parametrize(
    "command",
    [
        "./manage.py pyuwsgi",
        "python manage.py pyuwsgi",
        "pyuwsgi",
        "python -m pyuwsgi",
    ],
)
def test_pyuwsgi_is_uwsgi_with_its_options(tmp_path: Path, command: str) -> None:
    """`pyuwsgi` (the pyuwsgi wheel: uWSGI as a Python extension), `python -m pyuwsgi` and
    django-pyuwsgi's `manage.py pyuwsgi` run uWSGI with the options after them: the image
    starts uWSGI with 4 processes on :8000 (bartTC/dpaste's Dockerfile)."""
    dockerfile = (
        "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
        f'CMD ["sh", "-c", "exec {command} --http=:8000 --processes 4 --module app.wsgi"]\n'
    )
    root = write(tmp_path, {"Dockerfile": dockerfile, "manage.py": "import django\n"})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4"], "uwsgi", 4)]
