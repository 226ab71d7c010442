"""The Heroku nginx buildpack's `config/nginx.conf.erb` (heroku-buildpack-nginx, proxy mode): an
ERB template of nginx's config, rendered where the dyno starts. It is read as the nginx it
renders to, each ERB tag an unknown value said in an `unresolved-variable` note, and the front
it is joins the server the Procfile entry `bin/start-nginx CMD` starts, through the socket or
port nginx passes to. Seen in mitodl/open-discussions (Procfile `web: bin/start-nginx ...
uwsgi uwsgi.ini`); each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

_ERB = """daemon off;
worker_processes <%= ENV['NGINX_WORKERS'] || 4 %>;
events { worker_connections 1024; }
http {
    <% if ENV['FORCE_SSL'] %>
    server_tokens off;
    <% else %>
    server_tokens on;
    <% end %>
    server {
        listen <%= ENV["PORT"] %>;
        location / {
            uwsgi_pass unix:/tmp/nginx.socket;
            uwsgi_read_timeout 30s;
        }
    }
}
"""


def _fronts(root: Path) -> dict[str, list[str]]:
    """Each launch's first file -> its fronts' files."""
    result = check_folder(root)
    return {
        launch.chain[0].file.relative_to(root).as_posix(): [
            at.file.relative_to(root).as_posix() for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_erb_config_fronts_the_uwsgi_its_procfile_entry_starts(tmp_path: Path) -> None:
    """`web: bin/start-nginx uwsgi uwsgi.ini` with uwsgi on `socket = /tmp/nginx.socket` and
    config/nginx.conf.erb passing `uwsgi_pass unix:/tmp/nginx.socket`: the ERB config is read
    as nginx (not skipped as a template, no error), and is the front of that uwsgi; each ERB
    tag is an `unresolved-variable` note at its line, naming the tag. The same text in a Chef
    cookbook's `templates/` is rendered by Chef with values of its own: a skipped template."""
    root = write(
        tmp_path,
        {
            "Procfile": "web: bin/start-nginx uwsgi uwsgi.ini\n",
            "uwsgi.ini": "[uwsgi]\nsocket = /tmp/nginx.socket\nprocesses = 2\n"
            "module = app.wsgi\nhook-accepting1 = exec:touch /tmp/app-initialized\n",
            "config/nginx.conf.erb": _ERB,
            "cookbook/templates/nginx.conf.erb": _ERB,
        },
    )
    result = check_folder(root)
    assert not result.errors
    assert _fronts(root) == {"Procfile": ["config/nginx.conf.erb"]}
    tags = {
        (n.at.line, n.message.split(": ")[0])
        for n in result.notes
        if n.kind == "unresolved-variable" and n.at.file.name == "nginx.conf.erb"
    }
    assert tags == {
        (2, "<%= ENV['NGINX_WORKERS'] || 4 %>"),
        (5, "<% if ENV['FORCE_SSL'] %>"),
        (7, "<% else %>"),
        (9, "<% end %>"),
        (11, '<%= ENV["PORT"] %>'),
    }
    skipped = [n.at.file.relative_to(root).as_posix() for n in result.notes if n.kind == "template"]
    assert skipped == ["cookbook/templates/nginx.conf.erb"]


def test_erb_config_fronts_gunicorn_on_the_socket_not_an_image_on_the_same_path(
    tmp_path: Path,
) -> None:
    """`web: bin/start-nginx-debug gunicorn -b unix:/tmp/nginx.socket app:app` behind the ERB
    config's upstream `server unix:/tmp/nginx.socket` (the buildpack's default config's):
    joined. A Dockerfile whose CMD binds
    the same socket path runs in a container no buildpack nginx runs in: not joined to it."""
    root = write(
        tmp_path,
        {
            "Procfile": "web: bin/start-nginx-debug gunicorn -b unix:/tmp/nginx.socket app:app\n",
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["gunicorn", "-b", "unix:/tmp/nginx.socket", "app:app"]\n',
            "config/nginx.conf.erb": "daemon off;\nevents {}\nhttp {\n"
            "    upstream app_server { server unix:/tmp/nginx.socket fail_timeout=0; }\n"
            '    server {\n        listen <%= ENV["PORT"] %>;\n'
            "        location / { proxy_pass http://app_server; }\n    }\n}\n",
        },
    )
    assert _fronts(root) == {"Procfile": ["config/nginx.conf.erb"], "Dockerfile": []}


def test_erb_arms_that_do_not_read_as_nginx_leave_the_file_unread_with_a_note(
    tmp_path: Path,
) -> None:
    """An ERB condition whose arms each open a block that one `}` closes is not nginx when both
    arms are read: the file is left unread with one coverage note, never an error (exit 2)."""
    root = write(
        tmp_path,
        {
            "Procfile": "web: bin/start-nginx gunicorn -b unix:/tmp/nginx.socket app:app\n",
            "config/nginx.conf.erb": "events {}\nhttp {\n<% if ENV['A'] %>\nserver {\n"
            "<% else %>\nserver { listen 80;\n<% end %>\n}\n}\n",
        },
    )
    result = check_folder(root)
    assert not result.errors
    (said,) = [n for n in result.notes if n.at.file.name == "nginx.conf.erb"]
    assert "buildpack's ERB template" in said.message
    assert "not read" in said.message


_ERB_BACKEND = """daemon off;
events { worker_connections 1024; }
http {
    server {
        listen <%= ENV["PORT"] %>;
        location / { proxy_pass http://<%= ENV["NGINX_BACKEND"] || "127.0.0.1:8000" %>; }
        location /api { proxy_pass http://<%= ENV.fetch("API_BACKEND", "127.0.0.1:9000") %>; }
    }
}
"""
_NGINX_SERVICE = """services:
  nginx:
    image: nginx:1.27
    environment:
      PORT: 8063
      NGINX_BACKEND: "web:8000"
      API_BACKEND: "api:9000"
    volumes:
      - ./config:/etc/nginx/templates
      - ./config/postgres:/docker-entrypoint-initdb.d
"""
_APP_SERVICES = """  web:
    image: acme/web
    command: gunicorn -w 4 -b 0.0.0.0:8000 app:app
  api:
    image: acme/api
    command: uvicorn --host 0.0.0.0 --port 9000 api:app
"""


def test_erb_env_tags_are_filled_by_the_compose_service_that_renders_it(tmp_path: Path) -> None:
    """config/nginx.conf.erb rendered by a compose `nginx` service that mounts its folder at
    /etc/nginx/templates (an entrypoint script runs `erb` on it, as seen in mitodl/mit-learn):
    `<%= ENV["NGINX_BACKEND"] || "..." %>` and `<%= ENV.fetch("API_BACKEND", "...") %>` are
    the variables that service's `environment` sets, as envsubst's `${X}`, so the front is
    joined to the `web` and `api` services they name; another service's single mount from
    the same folder (`./config/postgres`) does not leave it out."""
    root = write(
        tmp_path,
        {
            "config/nginx.conf.erb": _ERB_BACKEND,
            "compose.yaml": _NGINX_SERVICE + _APP_SERVICES,
        },
    )
    result = check_folder(root)
    joined = {
        launch.app.kind: [at.line for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert joined == {"gunicorn": [6], "uvicorn": [7]}


def test_a_front_in_an_included_compose_file_joins_the_including_projects_services(
    tmp_path: Path,
) -> None:
    """compose.yaml `include:`s compose.services.yaml (Compose 2.20+, as seen in
    mitodl/mit-learn), whose nginx passes to `web:8000`: the included file's services and the
    including file's are one project, so `web` of compose.yaml answers to that host name."""
    root = write(
        tmp_path,
        {
            "config/nginx.conf.erb": _ERB_BACKEND,
            "compose.services.yaml": _NGINX_SERVICE,
            "compose.yaml": "include:\n  - path: compose.services.yaml\nservices:\n"
            + _APP_SERVICES,
        },
    )
    result = check_folder(root)
    joined = {
        launch.app.kind: [at.line for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert joined == {"gunicorn": [6], "uvicorn": [7]}
