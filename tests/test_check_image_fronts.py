"""A front whose upstream address nginx computes where it runs (a `set_by_lua_block` reading
the environment, a `map`) is joined by the image it runs in: the one image that copies the
config by name or folder starts exactly one app server, which is the one that nginx reaches
in that container, with a `joined-by-name` note saying so. An envsubst template's `${NAME}`
that no file sets stays unknown. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

_SITE = """events {}
http {
    server {
        listen 80;
        location / {
            set_by_lua_block $app_host { return os.getenv('LISTEN_HOST') or '127.0.0.1' }
            set_by_lua_block $app_port { return os.getenv('LISTEN_PORT') or '8080' }
            proxy_pass http://$app_host:$app_port;
        }
        location /files/ {
            proxy_pass ${FILES_ADDR};
        }
    }
}
"""


def test_a_pass_nginx_computes_joins_the_one_server_its_image_starts(tmp_path: Path) -> None:
    """openresty and gunicorn in one image (`COPY config/root /`, as meeb/tubesync's s6-overlay
    image): `proxy_pass http://$app_host:$app_port` from two `set_by_lua_block`s is joined to
    that image's gunicorn with a joined-by-name note; the `${FILES_ADDR}` template pass, set
    by no file, joins nothing."""
    root = write(
        tmp_path,
        {
            "config/root/etc/nginx/nginx.conf": _SITE,
            "config/root/run.sh": (
                "#!/bin/sh\nopenresty -c /etc/nginx/nginx.conf\n"
                "exec gunicorn --bind 127.0.0.1:8080 app:app\n"
            ),
            "Dockerfile": (
                'FROM python:3.12\nRUN pip install gunicorn\nCOPY config/root /\nCMD ["/run.sh"]\n'
            ),
        },
    )
    result = check_folder(root)
    assert [
        (k.passing.at.file.relative_to(root).as_posix(), k.passing.at.line) for k in result.links
    ] == [("config/root/etc/nginx/nginx.conf", 8)]
    assert [n.kind for n in result.notes if "joined by image" in n.message] == ["joined-by-name"]
