"""A folder walk never dies on one file: a file that fails to parse is its own `error:` line
(exit 2, as linters do) and every other file is still read and reported (#44). A Python config
under a template suffix (`gunicorn.py.j2`) is a template, read as what it renders to or
skipped with the template note, never parsed as Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.folder_support import write

PROCFILE = {"Procfile": "web: gunicorn --workers 3 --bind 0.0.0.0:8000 app:app\n"}


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    """`servertune check ROOT` as a user runs it on a repository."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", "check", str(root), "--cores", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_jinja_gunicorn_config_template_does_not_end_the_walk(tmp_path: Path) -> None:
    """An ansible role's `templates/gunicorn.py.j2` whose `{% if %}` wraps a setting is a
    template read for what it renders to, not a Python syntax error: the walk reports the
    Procfile's launch and the template's own settings, and exits 0 (seen in
    WikiWatershed/model-my-watershed, where exit 2 and an empty report hid the whole repo)."""
    write(
        tmp_path,
        {
            **PROCFILE,
            "roles/app/templates/gunicorn.py.j2": (
                'bind = "127.0.0.1:8000"\n{% if debug %}\nloglevel = "debug"\n{% endif %}\n'
            ),
        },
    )
    result = _check(tmp_path)
    assert "Python syntax error" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert "Procfile:1 -> gunicorn 3 x 1" in result.stdout, result.stdout
    assert "gunicorn.py.j2" in result.stdout


def test_a_broken_template_is_skipped_and_the_report_still_printed(tmp_path: Path) -> None:
    """A `gunicorn.py.j2` whose rendered text is still not Python is named as a file no reader
    takes, and the rest of the walk is reported; no file's failure leaves stdout empty."""
    write(tmp_path, {**PROCFILE, "templates/gunicorn.py.j2": 'bind = "{{ bind }}"\nworkers = (\n'})
    result = _check(tmp_path)
    assert "Procfile:1 -> gunicorn 3 x 1" in result.stdout, (result.stdout, result.stderr)


#: One broken file of each kind a walk reads, each beside a Procfile that reads fine.
BROKEN = {
    "deploy/gunicorn.conf.py": 'bind = "0.0.0.0:8000"\nworkers = (\n',
    "uwsgi.ini": "[uwsgi]\nmodule = app:app\nprocesses = many\nhttp-socket = :9000\n",
    "docker-compose.yml": "services:\n  web:\n    image: app\n    command: [gunicorn\n",
    "deploy/k8s/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nspec: [\n",
    "nginx/nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n",
    "supervisord.conf": "[program:web]\ncommand=gunicorn app:app\n[program:web\n",
    "deploy/app.service": "[Service]\nExecStart=/usr/bin/gunicorn 'app:app\n",
    "Caddyfile": ":80 {\n  reverse_proxy 127.0.0.1:8000\n",
    "haproxy.cfg": "frontend web\n  bind :80\n  default_backend app\n  timeout client\n",
    "Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "app:app"\n',
    "start.sh": "#!/bin/sh\nexec gunicorn --workers 'two app:app\n",
}


def test_every_reader_failure_in_a_walk_is_that_files_error_only(tmp_path: Path) -> None:
    """Each reader fed a broken file inside one folder walk: no traceback, every failure at
    most one `error:` line naming its file, and the Procfile's launch still reported."""
    write(tmp_path, {**PROCFILE, **BROKEN})
    result = _check(tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Procfile:1 -> gunicorn 3 x 1" in result.stdout, (result.stdout, result.stderr)
    for line in result.stderr.splitlines():
        assert line.startswith("error: "), line
        assert any(name.rpartition("/")[2] in line for name in BROKEN), line
