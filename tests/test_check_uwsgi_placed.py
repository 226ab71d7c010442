"""uWSGI's `%d` (the folder of the ini) is the folder the file is deployed in: read in place
with no launch saying where (a COPY, a unit), an address written from it is not known, never
this checkout's path on the machine running check."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write


def test_socket_from_percent_d_is_unknown_when_the_file_is_read_in_place(
    tmp_path: Path,
) -> None:
    """`socket = %d../app.sock` in a deploy/uwsgi.ini no launch here places (seen in
    Coleridge-Initiative-org/dfadmin) is left out with an `unresolved-variable` note at its
    line; no socket names the checkout's folder."""
    write(
        tmp_path,
        {"deploy/uwsgi.ini": "[uwsgi]\nsocket = %d../app.sock\nmaster = true\nprocesses = 4\n"},
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == []
    assert [(n.kind, n.at.line) for n in result.notes if n.at.file.name == "uwsgi.ini"] == [
        ("unresolved-variable", 2)
    ]


def test_socket_with_dot_dot_joins_the_front_at_the_resolved_path(tmp_path: Path) -> None:
    """An image that adds the checkout at /webapp/ and runs supervisord, whose program runs
    `uwsgi --ini /webapp/deploy/uwsgi.ini`, places the ini,
    so its `socket = %d../app.sock` binds /webapp/app.sock (the kernel resolves `..`): it is
    shown as that path and joins nginx's `server unix:/webapp/app.sock` (seen in
    Coleridge-Initiative-org/dfadmin, where it was shown and matched as written,
    `/webapp/deploy/../app.sock`, and joined no front)."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11\nADD . /webapp/\n"
            "RUN cp /webapp/deploy/supervisor-app.conf /etc/supervisor/conf.d/\n"
            'CMD ["supervisord", "-n"]\n',
            "deploy/uwsgi.ini": "[uwsgi]\nsocket = %d../app.sock\nmaster = true\nprocesses = 4\n"
            "module = site.wsgi:application\n",
            "deploy/supervisor-app.conf": "[program:app-uwsgi]\n"
            "command = /usr/local/bin/uwsgi --ini /webapp/deploy/uwsgi.ini\n",
            "deploy/nginx-app.conf": "upstream django {\n    server unix:/webapp/app.sock;\n}\n"
            "server {\n    listen 80;\n    location / {\n        uwsgi_pass django;\n"
            "        include /etc/nginx/uwsgi_params;\n    }\n}\n",
        },
    )
    result = check_folder(tmp_path)
    assert [s.value for a in result.apps for s in a.sockets] == ["unix:/webapp/app.sock"]
    assert [k.nginx.file.name for k in result.links] == ["nginx-app.conf"]
