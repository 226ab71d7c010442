"""`static`: nginx serves URL prefixes from directories (alias, long cache), the app never sees them."""

from __future__ import annotations

import http.client
import shutil
import tempfile
from pathlib import Path

import pytest

from servertune.bench.harness.supervision import Stack
from servertune.render import render_nginx
from servertune.sizing import plan_for
from servertune.workload import Workload, WorkloadError
from servertune.workload_file import load_workload
from tests.support import free_ports, nginx_check, tool


def _workload(static: str, listen_port: int = 8000, base_port: int = 8001) -> Workload:
    return Workload(
        cores=2, app="app:app", static=static, listen_port=listen_port, base_port=base_port,
        listen_host="127.0.0.1",
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["uwsgi", "gunicorn"])
def test_static_prefixes_pass_nginx_t_and_serve_files_with_long_cache(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """A file under each prefix comes from its directory with a far Cache-Control; nginx -t ok."""
    # nginx's workers run as an unprivileged user: the files must be readable by others (pytest's
    # own temporary root is private to its user).
    public = Path(tempfile.mkdtemp(prefix="servertune-static-"))
    public.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(public, ignore_errors=True))
    assets, media = public / "assets", public / "media"
    assets.mkdir(mode=0o755)
    media.mkdir(mode=0o755)
    (assets / "app.css").write_text("body{}")
    (media / "a.txt").write_text("media file")
    listen, base = free_ports(2)
    plan = plan_for(_workload(f"/static/={assets},/media/up/={media}", listen, base))
    text = render_nginx(plan, backend)  # type: ignore[arg-type]
    assert f"alias {assets}/;" in text
    conf = tmp_path / "nginx.conf"
    conf.write_text(text)
    for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
        (tmp_path / temp).mkdir()
    checked = nginx_check(conf)
    assert checked.returncode == 0, checked.stderr
    argv = [tool("nginx"), "-p", f"{tmp_path}/", "-c", str(conf), "-e", str(tmp_path / "e.log"),
            "-g", "daemon off;"]  # fmt: skip
    with Stack("test-static") as stack:
        stack.start("nginx", "nginx", argv, ports=[listen])
        for path, body in (("/static/app.css", b"body{}"), ("/media/up/a.txt", b"media file")):
            connection = http.client.HTTPConnection("127.0.0.1", listen, timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            assert response.status == 200
            assert response.read() == body
            max_age = int(response.headers["Cache-Control"].split("max-age=")[1])
            assert max_age >= 365 * 24 * 3600
            connection.close()


def test_no_static_renders_no_location() -> None:
    """Without `static`, the nginx config has only the app's location."""
    text = render_nginx(plan_for(Workload(cores=2, app="app:app")))
    assert "alias" not in text
    assert text.count("location") == 1


@pytest.mark.parametrize(
    "value",
    [
        "/static=/srv/static",  # prefix must end in /
        "/static/=relative/dir",
        "/static/=/srv/../etc",
        "/static/=/srv/a b",
        "/static/=/srv/x;}",
        "/s/=/a,/s/=/b",  # a prefix twice
        '/static/=/srv/"q',
        "/=/srv/static",  # the app's own root
    ],
)
def test_hostile_static_values_are_one_line_errors(value: str) -> None:
    """Nothing but /prefix/=/dir pairs of plain path characters reaches nginx."""
    with pytest.raises(WorkloadError, match=r"^static: must be /prefix/=/absolute/dir"):
        load_workload(None, {"static": value})


def test_static_from_a_workload_file(tmp_path: Path) -> None:
    """`static = "..."` in a workload TOML reaches the rendered nginx."""
    file = tmp_path / "w.toml"
    file.write_text('[workload]\ncores = 2\napp = "app:app"\nstatic = "/static/=/srv/app/static"\n')
    text = render_nginx(plan_for(load_workload(file)))
    assert "location /static/ {" in text
    assert "alias /srv/app/static/;" in text
