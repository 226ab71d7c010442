"""Issue 44 (corpus 9a): a framework's development server (`flask run`, `manage.py runserver`)
started where a deployment runs it, on the evidence `reloader-in-production` reads (an image's
own command no container here replaces, a compose file named for production), is a warning
citing Flask's and Django's own docs; a development file (a dev compose file, `Dockerfile.dev`,
a devcontainer) or an image beside another launch that serves in production never draws it."""

from __future__ import annotations

from pathlib import Path

from servertune.check.audit import CheckResult
from tests.folder_support import check_folder, write

RULE = "development-server-in-production"
RUNSERVER = (
    'FROM python:3.12\nCOPY . /app\nWORKDIR /app\nCMD ["python", "manage.py", "runserver"]\n'
)


def _found(result: CheckResult) -> list[tuple[str, int]]:
    """Where the rule's findings are: (file name, line)."""
    return [(f.at.file.name, f.at.line) for f in result.findings if f.rule == RULE]


def test_an_image_whose_own_command_is_runserver_is_warned(tmp_path: Path) -> None:
    """An image (seen in hackforla/peopledepot's `Dockerfile-aws`) whose CMD is `python
    manage.py runserver`, with no other launch here, draws one warning at the CMD line quoting
    Django's docs; the same image named `Dockerfile.dev`, or under `.devcontainer/`, draws
    none, nor does it beside a Procfile whose `web` runs gunicorn (seen in MTES-MCT/sparte,
    deployed through its Procfile): there it is the developer's image."""
    result = check_folder(write(tmp_path / "aws", {"Dockerfile-aws": RUNSERVER}))
    assert _found(result) == [("Dockerfile-aws", 4)]
    (finding,) = [f for f in result.findings if f.rule == RULE]
    assert finding.severity.name == "warning"
    assert "DO NOT USE THIS SERVER IN A PRODUCTION SETTING" in finding.backing
    dev = check_folder(write(tmp_path / "dev", {"Dockerfile.dev": RUNSERVER}))
    assert _found(dev) == []
    box = check_folder(write(tmp_path / "box", {".devcontainer/Dockerfile": RUNSERVER}))
    assert _found(box) == []
    procfile = {"Dockerfile": RUNSERVER, "Procfile": "web: gunicorn config.wsgi -w 2\n"}
    assert _found(check_folder(write(tmp_path / "beside", procfile))) == []


def test_a_production_compose_file_running_flask_run_is_warned(tmp_path: Path) -> None:
    """A compose file named for production whose service runs `flask run` draws the warning
    at the command's line; the same service in `docker-compose.dev.yml` draws none."""
    compose = "services:\n  web:\n    image: python:3.12\n    command: flask run --host 0.0.0.0\n"
    result = check_folder(write(tmp_path / "prod", {"docker-compose.prod.yml": compose}))
    assert _found(result) == [("docker-compose.prod.yml", 4)]
    dev = check_folder(write(tmp_path / "dev", {"docker-compose.dev.yml": compose}))
    assert _found(dev) == []
