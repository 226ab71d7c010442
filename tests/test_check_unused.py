"""Issue 44: a server config that no launch of a walked repository names (a uWSGI ini or a
hypercorn.toml nothing starts, beside an image that runs another server) is no launch of its
own: the launch graph says "unused: no launch here names it" in text, JSON and SARIF alike,
and servertune's sizing advice is not put on it. A config something names that check did not
follow (an env variable, a bare gunicorn's default `./gunicorn.conf.py`) is "not followed",
and a config in a folder with no launch at all keeps today's launch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servertune.check.output import format_json, format_sarif, format_text
from tests.folder_support import check_folder, write

_DOCKERFILE = (
    'FROM python:3.12-slim\nCOPY . /app\nCMD ["hypercorn", "-b", "0.0.0.0:5200", "api:app"]\n'
)

# Five processes on one socket without thunder-lock: servertune's thunder-lock advice.
_INI = "[uwsgi]\nhttp-socket = :8080\nmodule = app:app\nprocesses = 5\nmaster = true\n"

_UNUSED = "unused: no launch here names it"


def _launches(text: str) -> list[dict[str, Any]]:
    launches: list[dict[str, Any]] = json.loads(text)["launches"]
    return launches


def test_a_config_no_launch_names_is_said_unused_everywhere(tmp_path: Path) -> None:
    """An image running hypercorn and a uwsgi.ini nothing here names (seen on
    arquivo/memorial's uwsgi.ini and front-matter/rogue-scholar-api's hypercorn.toml): the
    graph's line for the ini says it is unused instead of sizing it, JSON's and SARIF's launch
    says the same in `unused`, and no thunder-lock advice is put on a server nothing runs."""
    root = write(tmp_path, {"Dockerfile": _DOCKERFILE, "uwsgi.ini": _INI})
    result = check_folder(root)
    text = format_text(result)
    assert f"uwsgi.ini:1 -> uwsgi: {_UNUSED}" in text
    assert "uwsgi 5 x 1" not in text
    by_server = {one["server"]: one for one in _launches(format_json(result))}
    assert by_server["uwsgi"]["unused"] == _UNUSED
    assert by_server["hypercorn"]["unused"] is None
    sarif = json.loads(format_sarif(result))["runs"][0]["properties"]
    assert {one["server"]: one["unused"] for one in sarif["launches"]}["uwsgi"] == _UNUSED
    assert not [
        f for f in result.findings if f.at.file.name == "uwsgi.ini" and f.rule == "thunder-lock"
    ]


def test_a_lone_config_keeps_its_launch_and_advice(tmp_path: Path) -> None:
    """The same uwsgi.ini in a folder with no launch file at all is what the user pointed
    check at: a launch of its own, sized, with its thunder-lock advice."""
    root = write(tmp_path, {"uwsgi.ini": _INI})
    result = check_folder(root)
    assert "uwsgi 5 x 1" in format_text(result)
    assert [one["unused"] for one in _launches(format_json(result))] == [None]
    assert any(f.rule == "thunder-lock" for f in result.findings)


def test_a_config_an_env_file_names_is_not_followed_not_unused(tmp_path: Path) -> None:
    """A uwsgi.ini named by `UWSGI_INI=/app/uwsgi.ini` in an env file, beside an image that
    runs hypercorn: something may start it through that variable, so it is "not followed",
    naming the line, never "unused"."""
    files = {"Dockerfile": _DOCKERFILE, "uwsgi.ini": _INI, ".env": "UWSGI_INI=/app/uwsgi.ini\n"}
    result = check_folder(write(tmp_path, files))
    unused = {one["server"]: one["unused"] for one in _launches(format_json(result))}["uwsgi"]
    assert unused.startswith("not followed: ")
    assert ".env:1 names it" in unused


def test_a_gunicorn_conf_a_bare_gunicorn_may_read_is_not_followed(tmp_path: Path) -> None:
    """A gunicorn.conf.py beside an image whose `gunicorn app:app` (no -c) runs in a working
    directory check did not place it in: a bare gunicorn reads ./gunicorn.conf.py, so it is
    "not followed", never "unused"."""
    files = {
        "Dockerfile": 'FROM python:3.12-slim\nWORKDIR /srv\nCOPY app.py /srv/\nCMD ["gunicorn", "app:app"]\n',
        "deploy/gunicorn.conf.py": "workers = 3\nbind = '0.0.0.0:8000'\n",
    }
    result = check_folder(write(tmp_path, files))
    said = [one["unused"] for one in _launches(format_json(result)) if one["config"]]
    assert all(s is None or s.startswith("not followed: ") for s in said)
    text = format_text(result)
    assert "Dockerfile:4 runs gunicorn without -c" in text
    assert _UNUSED not in text
