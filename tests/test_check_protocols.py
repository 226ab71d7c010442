"""nginx's `uwsgi_pass` reaching a uWSGI that listens with HTTP (`http` router,
`http-socket`) is a warning at the pass: a real uWSGI's HTTP router answers HTTP and closes a
uwsgi-protocol request unanswered (what nginx reports as 502). A `socket` (uwsgi protocol) is
not flagged. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import check_folder, write
from tests.support import accepts, free_ports, http_get, running, tool, wait_for

_SITE = (
    "server {\n    listen 80;\n    location / {\n        include uwsgi_params;\n"
    "        uwsgi_pass 127.0.0.1:8080;\n    }\n}\n"
)


def _rule(root: Path) -> list[str]:
    return [
        f"{f.at.file.relative_to(root).as_posix()}:{f.at.line}"
        for f in check_folder(root).findings
        if f.rule == "uwsgi-pass-to-http-socket"
    ]


@pytest.mark.parametrize("option", ["http", "http-socket"])
def test_uwsgi_pass_to_an_http_socket_is_a_warning_at_the_pass(tmp_path: Path, option: str) -> None:
    """contrib/nginx.conf's `uwsgi_pass 127.0.0.1:8080` joins contrib/uwsgi.ini's
    `http = :8080`: one warning, at the pass."""
    root = write(
        tmp_path,
        {
            "contrib/nginx.conf": _SITE,
            "contrib/uwsgi.ini": f"[uwsgi]\n{option} = :8080\nmaster = true\nmodule = app\n",
        },
    )
    assert _rule(root) == ["contrib/nginx.conf:5"]


def test_uwsgi_pass_to_a_uwsgi_socket_is_not_flagged(tmp_path: Path) -> None:
    """`socket = :8080` speaks the uwsgi protocol uwsgi_pass sends: nothing to say."""
    root = write(
        tmp_path,
        {
            "contrib/nginx.conf": _SITE,
            "contrib/uwsgi.ini": "[uwsgi]\nsocket = :8080\nmaster = true\nmodule = app\n",
        },
    )
    assert _rule(root) == []


def test_nginx_uwsgi_pass_to_a_real_uwsgi_http_router_fails(tmp_path: Path) -> None:
    """A real uWSGI with `http = ADDR` answers an HTTP GET with the app's body, while a real
    nginx's `uwsgi_pass ADDR` to it fails: the router never answers the uwsgi-protocol
    request (it closes it, 502, or waits for an HTTP header end that never comes, 504 after
    uwsgi_read_timeout, here 1 s): the finding's premise, not a guess."""
    (tmp_path / "app.py").write_text(
        "def application(env, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'text/plain')])\n"
        "    return [b'ok']\n"
    )
    app_port, nginx_port = free_ports(2)
    app, front = f"127.0.0.1:{app_port}", f"127.0.0.1:{nginx_port}"
    (tmp_path / "nginx.conf").write_text(
        "pid nginx.pid;\nerror_log error.log warn;\nevents {}\nhttp {\n  access_log off;\n"
        "  client_body_temp_path body; proxy_temp_path proxy; fastcgi_temp_path fcgi;\n"
        "  uwsgi_temp_path uwsgi; scgi_temp_path scgi;\n"
        f"  server {{ listen {front}; location / {{ uwsgi_read_timeout 1s; uwsgi_pass {app}; }} }}\n"
        "}\n"
    )
    uwsgi = [tool("uwsgi"), "--http", app, "--wsgi-file", "app.py", "--master", "--processes", "1"]
    nginx = [tool("nginx"), "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
             "-g", "daemon off;"]  # fmt: skip
    with running(uwsgi, tmp_path), running(nginx, tmp_path):
        wait_for(lambda: accepts(app) and accepts(front), what="uWSGI and nginx")
        assert http_get(app).endswith(b"ok")
        status = http_get(front).split(b"\r\n", 1)[0]
        assert status in (b"HTTP/1.1 502 Bad Gateway", b"HTTP/1.1 504 Gateway Time-out")


def test_a_location_whose_last_pass_is_proxy_pass_speaks_http_not_uwsgi(tmp_path: Path) -> None:
    """A location holding `uwsgi_pass` and then `proxy_pass http://` to the same uWSGI
    `http-socket` (as seen in Cloud-CV/Fabrik): each pass sets the location's one content
    handler and nginx keeps the last one read, so the location speaks HTTP to an HTTP socket:
    no warning; with the two the other way round the uwsgi_pass wins and is warned at."""
    site = (
        "server {\n    listen 80;\n    location / {\n        include uwsgi_params;\n"
        "        {first}\n        {last}\n    }\n}\n"
    )
    uwsgi = "uwsgi_pass 127.0.0.1:8080;"
    proxy = "proxy_pass http://127.0.0.1:8080;"
    ini = "[uwsgi]\nhttp-socket = :8080\nmaster = true\nmodule = app\n"
    root = write(
        tmp_path / "http-last",
        {"nginx.conf": site.replace("{first}", uwsgi).replace("{last}", proxy), "uwsgi.ini": ini},
    )
    assert _rule(root) == []
    other = write(
        tmp_path / "uwsgi-last",
        {"nginx.conf": site.replace("{first}", proxy).replace("{last}", uwsgi), "uwsgi.ini": ini},
    )
    assert _rule(other) == ["nginx.conf:6"]
