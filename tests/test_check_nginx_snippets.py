"""An nginx snippet a site includes, read on its own: a file of `location` blocks, or of a
location's own lines (`proxy_pass` with its headers), with no `server` or `http` block, passes
where the site that includes it passes, so its pass joins the app server it reaches, as a
site's does. The including site is often not readable here (a Jinja template, a script that
writes it). Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write


def _fronts(root: Path) -> list[list[str]]:
    """Each launch's fronts as file:line."""
    result = check_folder(root)
    return [
        [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_a_file_of_location_blocks_fronts_the_server_its_pass_reaches(tmp_path: Path) -> None:
    """`location /admin/ { proxy_pass http://127.0.0.1:10222/; }` alone in a file (a
    server-level snippet, as mail-in-a-box's conf/nginx-primaryonly.conf) is the front of the
    gunicorn a script starts on 127.0.0.1:10222."""
    root = write(
        tmp_path,
        {
            "conf/site-admin.conf": (
                "location /admin/ {\n    proxy_pass http://127.0.0.1:10222/;\n"
                "    proxy_set_header Host $host;\n}\n"
            ),
            "setup/start.sh": "#!/bin/sh\nexec gunicorn -b 127.0.0.1:10222 -w 1 wsgi:app\n",
        },
    )
    assert _fronts(root) == [["conf/site-admin.conf:2"]]


def test_a_file_of_a_locations_own_lines_fronts_the_server_on_its_socket(
    tmp_path: Path,
) -> None:
    """A file holding only a location's lines (`proxy_set_header ...; proxy_pass
    http://unix:/run/app.sock;`, included by a templated site, as tournesol's
    gunicorn_proxy.conf) is the front of the gunicorn bound to that socket."""
    root = write(
        tmp_path,
        {
            "deploy/app_proxy.conf": (
                "proxy_set_header Host $host;\nproxy_redirect off;\n"
                "proxy_pass http://unix:/run/app.sock;\n"
            ),
            "deploy/run.sh": "#!/bin/sh\nexec gunicorn --bind unix:/run/app.sock -w 2 app:app\n",
        },
    )
    assert _fronts(root) == [["deploy/app_proxy.conf:3"]]


def test_a_snippet_a_site_read_here_includes_passes_under_that_sites_settings(
    tmp_path: Path,
) -> None:
    """Where the site that includes the snippet is read (an image copies both), the pass is
    joined once, as the site passes it, with the site's `proxy_read_timeout 300s`: the
    snippet is not also judged alone with nginx's 60 s default; a snippet no config read here
    includes is joined alone beside it."""
    root = write(
        tmp_path,
        {
            "deploy/site.conf": (
                "server {\n    listen 80;\n    proxy_read_timeout 300s;\n    location / {\n"
                "        include /etc/nginx/snippets/app_proxy.conf;\n    }\n}\n"
            ),
            "deploy/app_proxy.conf": (
                "proxy_set_header Host $host;\nproxy_pass http://127.0.0.1:8000;\n"
            ),
            "Dockerfile": (
                "FROM python:3.12\nRUN pip install gunicorn\n"
                "COPY deploy/site.conf /etc/nginx/conf.d/site.conf\n"
                "COPY deploy/app_proxy.conf /etc/nginx/snippets/app_proxy.conf\n"
                'COPY deploy/run.sh /run.sh\nCMD ["/run.sh"]\n'
            ),
            "deploy/run.sh": (
                "#!/bin/sh\nnginx\nexec gunicorn --bind 127.0.0.1:8000 --timeout 200 app:app\n"
            ),
            "admin/admin_proxy.conf": "location /admin/ {\n    proxy_pass http://127.0.0.1:9000;\n}\n",
            "admin/start.sh": "#!/bin/sh\nexec gunicorn -b 127.0.0.1:9000 admin:app\n",
        },
    )
    result = check_folder(root)
    assert sorted(
        (k.passing.at.file.relative_to(root).as_posix(), k.passing.read_timeout.value)
        for k in result.links
    ) == [("admin/admin_proxy.conf", 60.0), ("deploy/app_proxy.conf", 300.0)]
    assert [f.rule for f in result.findings if f.rule == "app-timeout-over-read-timeout"] == []
