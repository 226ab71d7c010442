"""Issue 44 §3: a launch that runs a development reloader (`uvicorn --reload`, `gunicorn
--reload`, `flask run`, `manage.py runserver`) is a development launch: the launch graph says
so and no worker or thread count of it is sized; the same reloader as the only launch of a
production image (its final stage's command) is one warning."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import describe, launches
from servertune.machine import Machine
from tests.folder_support import check_folder, write

BASE = "FROM python:3.12 AS base\nCOPY . /app\nWORKDIR /app\n"
PRODUCTION = 'FROM base AS prod\nCMD ["gunicorn", "-w", "2", "-b", "0.0.0.0:8000", "app:app"]\n'


def test_reloaders_of_a_dev_compose_file_are_development_launches_not_sized(
    tmp_path: Path,
) -> None:
    """In a compose dev file, `uvicorn --reload` and `gunicorn --reload -w 9` are shown as
    development launches with no worker count and draw no sizing advice (no workers-over-cores
    for the 9 on 2 cores); `flask run` and `python manage.py runserver` are shown in the launch graph as
    development launches, not dropped silently; the production image draws no warning."""
    write(
        tmp_path,
        {
            "Dockerfile": BASE + PRODUCTION,
            "docker-compose.dev.yml": "services:\n"
            "  api:\n    build: .\n    command: uvicorn main:app --reload --host 0.0.0.0\n"
            "  web:\n    build: .\n    command: gunicorn --reload -w 9 -b :8001 wsgi:app\n"
            "  flaskapp:\n    build: .\n    command: flask run --host 0.0.0.0\n"
            "  django:\n    build: .\n    command: python manage.py runserver 0.0.0.0:8002\n",
        },
    )
    walk = discover(tmp_path)
    two = Machine(cores=2, cores_source="--cores", somaxconn=4096)
    result = check_files(list(walk.files), machine=two, discovered=[walk], root=tmp_path)
    lines = [describe(one) for one in launches(result.apps, result.links)]
    development = [line for line in lines if "a development launch" in line]
    assert len(development) == 2
    assert all("not sized" in line and " x " not in line for line in development)
    dev_at = {f.at.line for f in result.findings if f.at.file.name == "docker-compose.dev.yml"}
    assert not dev_at
    shown = [n.message for n in result.notes if n.kind == "development-launch"]
    assert [m.split(" (")[0] for m in shown] == [
        "compose service flaskapp",
        "compose service django",
    ]
    assert "Flask's development server" in shown[0]
    assert "Django's development server" in shown[1]
    assert not [f for f in result.findings if f.rule == "reloader-in-production"]


def test_a_reloader_as_a_production_images_only_launch_is_one_warning(tmp_path: Path) -> None:
    """The Dockerfile's final stage runs `uvicorn --reload` and nothing else runs the image:
    one reloader-in-production warning at the `--reload` line saying it runs one process and
    watches the files; the same CMD in a `dev` stage a compose service builds is not one."""
    reload = 'CMD ["uvicorn", "main:app", "--reload", "--host", "0.0.0.0"]\n'
    write(tmp_path / "prod", {"Dockerfile": BASE + "FROM base AS final\n" + reload})
    (warning,) = [
        f for f in check_folder(tmp_path / "prod").findings if f.rule == "reloader-in-production"
    ]
    assert (warning.at.file.name, warning.at.line, warning.severity.name) == (
        "Dockerfile",
        5,
        "warning",
    )
    assert "runs one process" in warning.message
    assert "watches the files" in warning.message
    write(
        tmp_path / "dev",
        {
            "Dockerfile": BASE + "FROM base AS dev\n" + reload + PRODUCTION,
            "compose.yaml": "services:\n  api:\n    build:\n      context: .\n      target: dev\n",
        },
    )
    assert not [
        f for f in check_folder(tmp_path / "dev").findings if f.rule == "reloader-in-production"
    ]
