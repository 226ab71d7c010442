"""Servers a front's local address reaches in several setups of one repository: the front is
joined to the server whose files sit nearest it in the folders, not to every server on the
same socket path or loopback port; servers equally near are all kept. Each repository is
written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

_SITE = (
    "events {}\nhttp {\n  server {\n    listen 80;\n    location / {\n"
    "      include /etc/nginx/uwsgi_params;\n      uwsgi_pass unix:///tmp/app.sock;\n"
    "    }\n  }\n}\n"
)
_PROGRAM = "[program:app]\ncommand=uwsgi --socket /tmp/app.sock --module app:app{more}\n"
_INI = "[uwsgi]\nmodule = app:app\nsocket = /tmp/app.sock\nprocesses = 4\nharakiri = 3600\n"


def _joins(root: Path) -> list[tuple[str, str]]:
    result = check_folder(root)
    return sorted(
        (
            link.nginx.file.relative_to(root).as_posix(),
            (link.app.launched_by[0].file if link.app.launched_by else link.app.file)
            .relative_to(root)
            .as_posix(),
        )
        for link in result.links
    )


def test_a_front_joins_the_server_of_its_own_setup_not_anothers_on_the_same_socket(
    tmp_path: Path,
) -> None:
    """A container's setup (`docker/app/nginx.conf` with `docker/app/supervisord.conf`) and a
    host's (`tools/nginx.conf` with `tools/uwsgi.ini`) both on `unix:/tmp/app.sock` (as seen
    with staffanm/ferenda's legacy layouts): each front is joined to its own folder's server
    only, so the host ini's harakiri 3600 is no finding on the container's nginx. Two servers
    of one folder (a second ini beside `tools/uwsgi.ini`) are equally near its front: nothing
    in the folders tells them apart, so that front is joined to both."""
    root = write(
        tmp_path,
        {
            "docker/app/nginx.conf": _SITE,
            "docker/app/supervisord.conf": _PROGRAM.format(more=" --processes 2"),
            "tools/nginx.conf": _SITE,
            "tools/uwsgi.ini": _INI,
            "tools/uwsgi-other.ini": _INI,
        },
    )
    assert _joins(root) == [
        ("docker/app/nginx.conf", "docker/app/supervisord.conf"),
        ("tools/nginx.conf", "tools/uwsgi-other.ini"),
        ("tools/nginx.conf", "tools/uwsgi.ini"),
    ]
    result = check_folder(root)
    assert [
        f.at.file.relative_to(root).as_posix()
        for f in result.findings
        if f.rule == "app-timeout-over-read-timeout"
    ] == ["tools/nginx.conf"]
