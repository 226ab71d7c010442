"""Issue 44: a server config, supervisord file or front that no launch of a repository starts,
while other launches there are followed from a starter (an image's command), is a leftover or
another setup's: its faults are notes saying "nothing in these files starts it". A config given
alone, a folder with no launch at all, and a file named on the command line keep their
warnings."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding, Severity
from tests.folder_support import MACHINE, check_folder, write

_DOCKERFILE = 'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "--workers", "2", "app:app"]\n'

_SUPERVISORD = """[supervisord]
nodaemon=true

[program:uwsgi]
command=/usr/bin/uwsgi --socket=/tmp/app.sock --chdir=/srv/site --module=wsgi:application
"""

_INI = "[uwsgi]\nsocket = /tmp/app.sock\nprocesses = 4\nmaster = true\nharakiri = 3600\n"

_NGINX = """events {}
http {
    server {
        listen 80;
        location / { include uwsgi_params; uwsgi_pass unix:/tmp/app.sock; }
    }
}
"""


_RELOADS = "uwsgi-sigterm-reloads"


def _at(findings: tuple[Finding, ...], name: str) -> list[Finding]:
    return [f for f in findings if f.at.file.name == name and f.severity > Severity.advice]


def test_a_supervisord_file_nothing_runs_beside_an_image_launch_is_a_note(
    tmp_path: Path,
) -> None:
    """An image whose CMD runs gunicorn, and a docker/supervisord.conf for uWSGI that no
    Dockerfile, compose file or script runs (seen on staffanm/ferenda's
    docker/ferenda/supervisord.conf while its image runs gunicorn): the conf's
    uwsgi-sigterm-reloads is info, saying nothing in these files starts it (and
    one-process-one-thread, a note anywhere, stays one). The same conf in a folder with no
    launch (a folder of configs), or given by name beside the Dockerfile, keeps its warning:
    check judges a config given alone."""
    root = write(
        tmp_path / "tree", {"Dockerfile": _DOCKERFILE, "docker/supervisord.conf": _SUPERVISORD}
    )
    found = _at(check_folder(root).findings, "supervisord.conf")
    assert {f.rule for f in found} >= {"one-process-one-thread", "uwsgi-sigterm-reloads"}
    assert all(f.severity is Severity.info for f in found)
    # (one-process-one-thread is a note wherever it is: only a warning is lowered and says why)
    lowered = [f for f in found if f.rule != "one-process-one-thread"]
    assert lowered
    assert all("nothing in these files starts it" in f.message for f in lowered)

    alone = write(tmp_path / "alone", {"docker/supervisord.conf": _SUPERVISORD})
    found = _at(check_folder(alone).findings, "supervisord.conf")
    assert {f.rule: f.severity for f in found}["uwsgi-sigterm-reloads"] is Severity.warning

    paths = [root / "Dockerfile", root / "docker" / "supervisord.conf"]
    result = check_files(paths, machine=MACHINE, env={}, root=root)
    given = {f.rule: f.severity for f in _at(result.findings, "supervisord.conf")}
    assert given["uwsgi-sigterm-reloads"] is Severity.warning


def test_a_front_joined_to_a_config_nothing_starts_is_a_note(tmp_path: Path) -> None:
    """An nginx `uwsgi_pass` to the socket of a uWSGI ini no launch starts (`harakiri =
    3600` against nginx's default 60 s read timeout), beside an image that runs gunicorn
    (seen on staffanm/ferenda's tools/nginx-staging.conf and tools/nginx-uwsgi.ini): the
    front's app-timeout-over-read-timeout is info, naming the ini nothing starts."""
    root = write(
        tmp_path,
        {"Dockerfile": _DOCKERFILE, "tools/uwsgi.ini": _INI, "tools/nginx.conf": _NGINX},
    )
    (found,) = [
        f
        for f in check_folder(root).findings
        if f.rule == "app-timeout-over-read-timeout" and f.at.file.name == "nginx.conf"
    ]
    assert found.severity is Severity.info
    assert "nothing in these files starts it" in found.message
    assert "uwsgi.ini" in found.message


def test_a_supervisord_file_an_unfollowed_image_may_run_keeps_its_warnings(
    tmp_path: Path,
) -> None:
    """An image whose CMD runs supervisord with a config that is not here (the package's
    /etc/supervisor/supervisord.conf, which includes conf.d/), in a folder holding
    docker/supervisord.conf, may start that file's programs (seen on redimp/otterwiki): its
    faults stay warnings while another launch (a second image's gunicorn) is followed; a conf
    outside that image's folder (tools/) is still one nothing starts."""
    files = {
        "docker/Dockerfile": (
            "FROM python:3.12-slim\nCOPY docker/supervisord.conf /etc/supervisor/conf.d/\n"
            'CMD ["/usr/bin/supervisord", "-c", "/etc/supervisor/supervisord.conf"]\n'
        ),
        "docker/supervisord.conf": _SUPERVISORD,
        "tools/supervisord.conf": _SUPERVISORD,
        "web/Dockerfile": _DOCKERFILE,
    }
    root = write(tmp_path, files)
    result = check_folder(root)
    found = [f for f in _at(result.findings, "supervisord.conf") if f.rule == _RELOADS]
    kept = {f.severity for f in found if f.at.file.parent.name == "docker"}
    assert kept == {Severity.warning}
    left = {f.severity for f in found if f.at.file.parent.name == "tools"}
    assert left == {Severity.info}
