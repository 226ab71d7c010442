"""An nginx config holding a placeholder (`server __BACKEND__:6666;`) that the front image's
start script fills with `sed -i` before nginx starts: the placeholder is read as the sed's
replacement, rendered with the container's environment, and so joins the server it names.
Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import fronts, write

_START = """#!/bin/sh
sed -i "s|__BACKEND__|${BACKEND_HOST}|" \\
  /etc/nginx/nginx.conf
exec nginx
"""


@pytest.mark.parametrize("target", ["/etc/nginx/nginx.conf", "/var/www/index.htm"])
def test_a_placeholder_the_start_script_seds_joins_the_server_it_names(
    tmp_path: Path, target: str
) -> None:
    """The client image copies nginx.conf.docker to /etc/nginx/nginx.conf and its CMD script
    runs `sed -i "s|__BACKEND__|${BACKEND_HOST}|" /etc/nginx/nginx.conf` (a continued line)
    before `exec nginx`, the compose service setting BACKEND_HOST=api (as seen with
    szurubooru/szurubooru): `server __BACKEND__:6666;` is read as `api:6666` and fronts the
    api service's gunicorn. A sed on another file fills nothing in the config."""
    root = write(
        tmp_path,
        {
            "docker-compose.yml": (
                "services:\n  api:\n    build: ./api\n"
                "  web:\n    build: ./web\n    environment:\n      BACKEND_HOST: api\n"
                "    ports:\n      - '80:80'\n"
            ),
            "api/Dockerfile": (
                "FROM python:3.12-slim\nCOPY . /app\n"
                'CMD ["gunicorn", "--bind", "0.0.0.0:6666", "--workers", "3", "app:app"]\n'
            ),
            "web/Dockerfile": (
                "FROM nginx:alpine\nCOPY start.sh /\n"
                "COPY nginx.conf.docker /etc/nginx/nginx.conf\n"
                'CMD ["/start.sh"]\n'
            ),
            "web/start.sh": _START.replace("/etc/nginx/nginx.conf", target),
            "web/nginx.conf.docker": (
                "events {}\nhttp {\n  upstream backend {\n    server __BACKEND__:6666;\n  }\n"
                "  server {\n    listen 80;\n    location / {\n"
                "      proxy_pass http://backend;\n    }\n  }\n}\n"
            ),
        },
    )
    joined = target == "/etc/nginx/nginx.conf"
    assert fronts(root) == {"api": ["web/nginx.conf.docker:9"] if joined else []}
