"""OpenShift source-to-image: `.s2i/environment` is read as the starter it is under the s2i
Python builder (its run script execs APP_SCRIPT, else `python APP_FILE`, else gunicorn on
APP_MODULE), so the script it names is followed from it, not found alone."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write


def test_app_script_is_the_container_command_and_its_server_is_followed(tmp_path: Path) -> None:
    """`APP_SCRIPT=./run.sh` in `.s2i/environment` makes the builder exec run.sh, so the
    uvicorn run.sh starts is a launch whose chain begins at the environment line (seen in
    fedora-infra/webhook-to-fedora-messaging and CMSTrackerDPG/certifier)."""
    write(
        tmp_path,
        {
            ".s2i/environment": "ENABLE_PIPENV=true\nAPP_SCRIPT=./run.sh\n",
            "run.sh": "#!/bin/sh\nexec uvicorn app:app --host 0.0.0.0 --port 8080\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [([".s2i/environment:2", "run.sh:2"], "uvicorn", 1)]


def test_app_module_runs_the_builders_gunicorn_on_8080(tmp_path: Path) -> None:
    """Without APP_SCRIPT / APP_FILE files, APP_MODULE is served by the builder's own
    `gunicorn MODULE --bind=0.0.0.0:8080`, workers from WEB_CONCURRENCY."""
    write(tmp_path, {".s2i/environment": "APP_MODULE=shop.wsgi\nWEB_CONCURRENCY=3\n"})
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [([".s2i/environment:1"], "gunicorn", 3)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]


def test_a_missing_app_script_is_not_followed(tmp_path: Path) -> None:
    """APP_SCRIPT naming a file that is not here is a not-followed note, not a silent pass."""
    write(tmp_path, {".s2i/environment": "APP_SCRIPT=start.sh\n"})
    result = check_folder(tmp_path)
    assert not result.apps
    assert [(n.kind, n.at.file.name) for n in result.notes] == [("not-followed", "environment")]
