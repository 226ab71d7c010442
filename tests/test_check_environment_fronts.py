"""A repository that keeps each deployment environment's files in a folder of its name
(`deploy/supervisor/production/`, `deploy/nginx/test/`): a front of one environment is never
joined to the server another environment's files start, even on the same address (they run on
other machines); and a front whose upstream is other machines' literal addresses is joined by
port to the server its own environment's files start there (the production site in front of
the production app hosts). Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write


def _program(config: str) -> str:
    return (
        "[program:app]\n"
        f"command=/srv/app/venv/bin/gunicorn -c /srv/app/deploy/{config} app:app\n"
        "directory=/srv/app\n"
        "stopwaitsecs=60\n"
    )


_CONFIG = 'bind = "0.0.0.0:5050"\nworkers = 4\n'
_REMOTE = (
    "upstream app_hosts {\n"
    "    server 10.0.3.11:5050 max_fails=3;\n"
    "    server 10.0.3.12:5050 max_fails=3;\n"
    "}\n"
    "server {\n"
    "    listen 80;\n"
    "    location / {\n"
    "        proxy_pass http://app_hosts;\n"
    "    }\n"
    "}\n"
)
_LOCAL = (
    "upstream app_local {\n"
    "    server localhost:5050;\n"
    "}\n"
    "server {\n"
    "    listen 80;\n"
    "    location / {\n"
    "        proxy_pass http://app_local;\n"
    "    }\n"
    "}\n"
)


def _fronts(root: Path) -> dict[str, list[str]]:
    """Each launch's first file -> its fronts as file:line."""
    result = check_folder(root)
    return {
        launch.chain[0].file.relative_to(root).as_posix(): sorted(
            {f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts}
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_each_environments_front_is_joined_to_that_environments_server(tmp_path: Path) -> None:
    """supervisord's production program and test program both run gunicorn on 0.0.0.0:5050;
    the test site passes to localhost:5050 (the test host runs both), the production site to
    an upstream of the app hosts' addresses 10.0.3.x:5050. The test gunicorn is behind the test
    site only; the production gunicorn is behind the production site, joined by its environment
    folder and port (it runs on those hosts), never behind the test site (seen in DOAJ/doaj's
    deploy/nginx/production/doaj and deploy/supervisor/production/doaj.conf)."""
    root = write(
        tmp_path,
        {
            "deploy/supervisor/production/app.conf": _program("gunicorn_production.py"),
            "deploy/supervisor/test/app.conf": _program("gunicorn_test.py"),
            "deploy/gunicorn_production.py": _CONFIG,
            "deploy/gunicorn_test.py": _CONFIG,
            "deploy/nginx/production/app": _REMOTE,
            "deploy/nginx/test/app": _LOCAL,
        },
    )
    assert _fronts(root) == {
        "deploy/supervisor/production/app.conf": ["deploy/nginx/production/app:8"],
        "deploy/supervisor/test/app.conf": ["deploy/nginx/test/app:7"],
    }


def test_remote_hosts_without_an_environment_folder_stay_unknown(tmp_path: Path) -> None:
    """The same production site and program kept in folders that name no environment: the
    remote addresses reach nothing read (which machines run the program is not said), as
    before."""
    root = write(
        tmp_path,
        {
            "deploy/supervisor/app.conf": _program("gunicorn_production.py"),
            "deploy/gunicorn_production.py": _CONFIG,
            "deploy/nginx/app": _REMOTE,
        },
    )
    assert _fronts(root) == {"deploy/supervisor/app.conf": []}
