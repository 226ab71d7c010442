"""An installer script that copies a repository file into place and fills its placeholders
with `sed -i` on the copy: the unit's and the front's placeholders are read as what the
installer writes, so two placeholders it maps to the same variable are one socket, and a
front's `$PORT` the launcher seds in is the port it starts the server on. Each repository
is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.graph import launches
from tests.folder_support import check_folder, write


def _fronts(root: Path) -> dict[str, list[str]]:
    """Each launch's first chain file (and server) -> its fronts as file:line."""
    result = check_folder(root)
    found: dict[str, list[str]] = {}
    for launch in launches(result.apps, result.links, result.balancer_links):
        key = f"{launch.chain[0].file.relative_to(root).as_posix()} {launch.app.kind}"
        found[key] = [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
    return found


_UNIT = """[Unit]
Description=platform

[Service]
User=www-data
WorkingDirectory=#BASE_DIR#
ExecStart=/usr/bin/gunicorn -w 4 -b unix:#BASE_DIR#/app.sock run:app

[Install]
WantedBy=multi-user.target
"""

_NGINX = """server {
    listen 80;
    server_name NGINX_HOST;
    location / {
        proxy_pass http://unix:NGINX_DIR/app.sock;
    }
}
"""

_INSTALL = """#!/bin/bash
dir=$( cd "$( dirname "${BASH_SOURCE[0]}" )" && pwd )
root_dir=$( cd "${dir}"/../ && pwd)
cp "${dir}/platform.service" /etc/systemd/system/platform.service
sed -i "s|#BASE_DIR#|${root_dir}|g" /etc/systemd/system/platform.service
cp "${dir}/nginx.conf" /etc/nginx/sites-available/platform
sed -i "s/NGINX_HOST/${server_name}/g" /etc/nginx/sites-available/platform
sed -i "s#NGINX_DIR#$OTHER#g" /etc/nginx/sites-available/platform
"""


@pytest.mark.parametrize("same", [True, False])
def test_placeholders_an_installer_seds_to_one_variable_are_one_socket(
    tmp_path: Path, same: bool
) -> None:
    """The unit binds `unix:#BASE_DIR#/app.sock`, the nginx site passes to
    `unix:NGINX_DIR/app.sock`, and install.sh copies both into place and seds `#BASE_DIR#` and
    `NGINX_DIR` to `${root_dir}` and `$root_dir` (as seen with CCExtractor/sample-platform):
    the same socket, so the site fronts the unit's gunicorn. Mapped to another variable, the
    two paths are not known to be one and nothing is joined."""
    install = _INSTALL.replace("$OTHER", "$root_dir" if same else "$nginx_dir")
    root = write(
        tmp_path,
        {
            "install/install.sh": install,
            "install/platform.service": _UNIT,
            "install/nginx.conf": _NGINX,
        },
    )
    fronts = ["install/nginx.conf:5"] if same else []
    assert _fronts(root) == {"install/platform.service gunicorn": fronts}


_SERVICES = """#!/bin/sh
_get_env_var() {
    dotenv -f .env get "$1"
}

setup() {
    NGINX_CONF="$NGINX_DIR/nginx.conf"
    GUNICORN_PORT="$(_get_env_var "GUNICORN_PORT")" || return "$?"
    DAPHNE_PORT="$(_get_env_var "DAPHNE_PORT")" || return "$?"
    GUNICORN_COMMAND="gunicorn --bind :$GUNICORN_PORT -w 2 site.wsgi:application"
    DAPHNE_COMMAND="daphne -b 0.0.0.0 -p $DAPHNE_PORT site.asgi:application"
}

nginx_setup() {
    cp "$TRADITIONAL_DIR/templates/nginx.conf" "$NGINX_CONF"
    sed -i "s/\\$GUNICORN_PORT/$GUNICORN_PORT/g" "$NGINX_CONF"
    sed -i "s/\\$DAPHNE_PORT/$DAPHNE_PORT/g" "$NGINX_CONF"
}

setup
nginx_setup
$GUNICORN_COMMAND >> gunicorn.log 2>&1 &
$DAPHNE_COMMAND >> daphne.log 2>&1 &
nginx -c "$NGINX_CONF" -g 'daemon off;'
"""

_TEMPLATE = """events {}
http {
    upstream rest {
        server 127.0.0.1:$GUNICORN_PORT;
    }
    upstream websocket {
        server 127.0.0.1:$DAPHNE_PORT;
    }
    server {
        listen 80;
        location /api/ {
            proxy_pass http://rest;
        }
        location /ws/ {
            proxy_pass http://websocket;
        }
    }
}
"""


@pytest.mark.parametrize("same", [True, False])
def test_a_port_from_a_command_substitution_the_launcher_seds_into_its_front_joins(
    tmp_path: Path, same: bool
) -> None:
    """The launcher sets `GUNICORN_PORT="$(_get_env_var "GUNICORN_PORT")"` and starts
    `gunicorn --bind :$GUNICORN_PORT` from a command variable; it copies templates/nginx.conf
    and seds `$GUNICORN_PORT` in it to `$GUNICORN_PORT` (as seen with RoboSats/robosats'
    traditional-services): the port is one word known only when it runs, the same in both
    files, so the template fronts gunicorn; and daphne's `-p $DAPHNE_PORT` (every address)
    likewise. Daphne's `$DAPHNE_PORT` sed'ed to another variable is not joined."""
    services = _SERVICES if same else _SERVICES.replace("/$DAPHNE_PORT/g", "/$PORT_OF_DAPHNE/g")
    root = write(
        tmp_path,
        {
            "scripts/traditional/services": services,
            "scripts/traditional/templates/nginx.conf": _TEMPLATE,
        },
    )
    assert _fronts(root) == {
        "scripts/traditional/services gunicorn": ["scripts/traditional/templates/nginx.conf:12"],
        "scripts/traditional/services daphne": (
            ["scripts/traditional/templates/nginx.conf:15"] if same else []
        ),
    }
