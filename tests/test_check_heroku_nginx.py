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
