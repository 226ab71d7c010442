"""Which app servers a front's local address (127.0.0.1, localhost, 0.0.0.0) reaches: only
those in the front's own network namespace, that is the containers whose image holds the front
or that mount it, never a server of another image listening on the same port. A front no image
and no service holds (a loose example config) is joined by address, as before. Each repository
is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import check_folder, fronts, write


def _image(conf: str, target: str) -> str:
    """An image that runs nginx and uWSGI side by side, nginx reading `conf`."""
    return (
        "FROM python:3.12-slim\n"
        "WORKDIR /app\n"
        "RUN pip install uwsgi\n"
        "COPY docker/uwsgi.ini .\n"
        f"COPY docker/{conf} {target}\n"
        "COPY docker/run.sh .\n"
        'CMD ["./run.sh"]\n'
    )


_RUN = "#!/bin/sh\nnginx\nexec uwsgi --ini /app/uwsgi.ini\n"
_UWSGI = "[uwsgi]\nsocket = 0.0.0.0:8080\nmaster = true\nprocesses = 2\nmodule = app:app\n"


def _site(target: str) -> str:
    return (
        "server {\n    listen 80;\n    location / {\n        include uwsgi_params;\n"
        f"        uwsgi_pass {target};\n    }}\n}}\n"
    )


def test_local_address_reaches_only_the_server_of_the_image_holding_the_front(
    tmp_path: Path,
) -> None:
    """Two images each COPY their own nginx config (`uwsgi_pass 0.0.0.0:8080` /
    `127.0.0.1:8080`) beside the same uWSGI: each service's uWSGI is behind its own image's
    config only; the other image's nginx cannot reach it through its own loopback."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _image("debian.conf", "/etc/nginx/sites-enabled/default"),
            "Dockerfile-alpine": _image("alpine.conf", "/etc/nginx/http.d/default.conf"),
            "docker/debian.conf": _site("0.0.0.0:8080"),
            "docker/alpine.conf": _site("127.0.0.1:8080"),
            "docker/uwsgi.ini": _UWSGI,
            "docker/run.sh": _RUN,
            "compose.yaml": (
                "services:\n"
                "  debian:\n    build: .\n    ports: ['80:80']\n"
                "  alpine:\n    build:\n      context: .\n      dockerfile: Dockerfile-alpine\n"
                "    ports: ['81:80']\n"
            ),
        },
    )
    assert fronts(root) == {
        "debian": ["docker/debian.conf:5"],
        "alpine": ["docker/alpine.conf:5"],
    }


def test_local_address_of_a_mounted_front_reaches_the_server_of_that_service(
    tmp_path: Path,
) -> None:
    """A service mounting its nginx config beside a uWSGI it runs is that config's namespace:
    its server is joined; a second service (another image, the same port) is not."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY docker/uwsgi.ini docker/run.sh ./\n"
                'CMD ["./run.sh"]\n'
            ),
            "worker/Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY uwsgi.ini .\n"
                'CMD ["uwsgi", "--ini", "/app/uwsgi.ini"]\n'
            ),
            "worker/uwsgi.ini": _UWSGI,
            "docker/site.conf": _site("127.0.0.1:8080"),
            "docker/uwsgi.ini": _UWSGI,
            "docker/run.sh": _RUN,
            "compose.yaml": (
                "services:\n"
                "  web:\n    build: .\n"
                "    volumes: ['./docker/site.conf:/etc/nginx/conf.d/default.conf:ro']\n"
                "  worker:\n    build: worker\n"
            ),
        },
    )
    assert fronts(root) == {"web": ["docker/site.conf:5"], "worker": []}


def test_local_address_of_a_loose_front_is_joined_by_address(tmp_path: Path) -> None:
    """An example config no image copies and no service mounts (a host's nginx, say) is
    joined to the server on its address, as before: nothing says where it runs."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY docker/uwsgi.ini .\n"
                'CMD ["uwsgi", "--ini", "/app/uwsgi.ini"]\n'
            ),
            "docker/uwsgi.ini": _UWSGI,
            "contrib/nginx.conf": _site("127.0.0.1:8080"),
            "compose.yaml": "services:\n  web:\n    build: .\n    ports: ['8080:8080']\n",
        },
    )
    assert fronts(root) == {"web": ["contrib/nginx.conf:5"]}


def test_local_address_of_a_front_on_the_host_network_reaches_published_servers(
    tmp_path: Path,
) -> None:
    """An nginx service on the host's network (`network_mode: host`) reaches a container's
    published port through its loopback: its config is joined to that server."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY docker/uwsgi.ini .\n"
                'CMD ["uwsgi", "--ini", "/app/uwsgi.ini"]\n'
            ),
            "docker/uwsgi.ini": _UWSGI,
            "nginx/site.conf": _site("127.0.0.1:8080"),
            "compose.yaml": (
                "services:\n"
                "  web:\n    build: .\n    ports: ['127.0.0.1:8080:8080']\n"
                "  nginx:\n    image: nginx:1.27\n    network_mode: host\n"
                "    volumes: ['./nginx:/etc/nginx/conf.d:ro']\n"
            ),
        },
    )
    assert fronts(root) == {"web": ["nginx/site.conf:5"]}


def _host_site_and_app(ports: str) -> dict[str, str]:
    """A debian package's nginx site passing to 127.0.0.1:8000 beside a compose service whose
    gunicorn binds 0.0.0.0:8000 in its container, published as `ports` says."""
    return {
        "debian/etc/nginx/sites-available/app.conf": (
            "server {\n    listen 80;\n    location / {\n"
            "        proxy_pass http://127.0.0.1:8000;\n    }\n}\n"
        ),
        "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY app.py .\n",
        "app.py": "app = None\n",
        "compose.yaml": (
            "services:\n  api:\n    build: .\n"
            "    command: gunicorn -w 2 -b 0.0.0.0:8000 app:app\n" + ports
        ),
    }


def test_a_host_front_reaches_a_compose_server_only_through_a_published_port(
    tmp_path: Path,
) -> None:
    """A host's nginx (a debian/ site no container runs) passing to 127.0.0.1:8000 cannot
    reach a compose service's port 8000 that `ports:` does not publish: no join (seen in
    ooni/backend, api/debian nginx and the compose api)."""
    root = write(tmp_path, _host_site_and_app("    ports: ['9000:8000']\n"))
    assert fronts(root) == {"api": []}


@pytest.mark.parametrize(
    "ports",
    [
        "    ports: ['127.0.0.1:8000:8000']\n",
        "    ports:\n      - target: 8000\n        published: 8000\n",
    ],
)
def test_a_host_front_reaches_a_compose_server_through_its_published_port(
    tmp_path: Path, ports: str
) -> None:
    """The same host nginx reaches the service once `ports:` publishes 8000 on the host's
    loopback (short or long syntax): joined."""
    root = write(tmp_path, _host_site_and_app(ports))
    assert fronts(root) == {"api": ["debian/etc/nginx/sites-available/app.conf:4"]}


def test_a_host_front_joins_the_host_server_on_its_loopback_not_a_published_container(
    tmp_path: Path,
) -> None:
    """The host nginx passing to 127.0.0.1:8000 beside a systemd unit of the same package
    whose gunicorn binds 127.0.0.1:8000 on the host: the host's server is the one there, so
    the front joins it and not the compose service publishing 8000 too, a deployment of
    another kind (seen in ooni/backend: api/debian's nginx site and ooni-api.service beside
    api/docker-compose.yml)."""
    files = _host_site_and_app("    ports: ['8000:8000']\n")
    files["debian/app.service"] = (
        "[Service]\nExecStart=/usr/bin/gunicorn -w 3 -b 127.0.0.1:8000 app:app\n"
    )
    root = write(tmp_path, files)
    assert fronts(root) == {
        "api": [],
        "debian/app.service": ["debian/etc/nginx/sites-available/app.conf:4"],
    }


def test_a_proxy_images_front_is_not_the_app_image_that_copies_the_whole_checkout(
    tmp_path: Path,
) -> None:
    """compose.yaml runs `frontend` from docker/nginx/Dockerfile, which copies `conf.d/*`
    (`upstream { server localhost:5000; }`), and `web` from the root Dockerfile, which copies
    the whole checkout (`COPY . /app`, the nginx folder too) and runs uWSGI on :5000, as
    seen with rero/rero-ils: the front runs in the nginx image that copies it by name, whose
    loopback is its own, so it reaches no uWSGI of the web container."""
    site = (
        "upstream ui { server localhost:5000; }\n"
        "server {\n  listen 80;\n  location / {\n    proxy_pass http://ui;\n  }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "compose.yaml": "services:\n  frontend:\n    build: docker/nginx\n"
            "  web:\n    build: .\n    command: uwsgi --http 0.0.0.0:5000 --module app:app\n",
            "docker/nginx/Dockerfile": "FROM nginx:1.27\nCOPY conf.d/* /etc/nginx/conf.d/\n",
            "docker/nginx/conf.d/default.conf": site,
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        },
    )
    assert check_folder(root).links == ()


def test_a_host_balancer_joins_the_host_server_on_its_loopback_not_a_published_container(
    tmp_path: Path,
) -> None:
    """A host's Caddyfile (`reverse_proxy 127.0.0.1:8000`), the systemd unit that runs uvicorn
    on 127.0.0.1:8000 and a compose service publishing `8000:8000` for its own uvicorn, as
    seen with hotosm/raw-data-api: the host's balancer and the host's server are one
    deployment, as for a host's nginx, so the Caddyfile fronts the unit's server only."""
    root = write(
        tmp_path,
        {
            "infra/Caddyfile": "api.example.net {\n  reverse_proxy 127.0.0.1:8000\n}\n",
            "infra/api.service": "[Service]\nExecStart=/opt/venv/bin/uvicorn api.main:app "
            "--host 127.0.0.1 --port 8000\n\n[Install]\nWantedBy=multi-user.target\n",
            "docker-compose.yml": "services:\n  api:\n    build: .\n"
            "    command: uvicorn api.main:app --host 0.0.0.0 --port 8000\n"
            "    ports:\n      - 8000:8000\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY api /app/api\n",
        },
    )
    result = check_folder(root)
    assert sorted(
        (k.app.launched_by[0].file if k.app.launched_by else k.app.file)
        .relative_to(root)
        .as_posix()
        for k in result.balancer_links
        if k.app is not None
    ) == ["infra/api.service"]


def test_a_front_an_app_service_carries_in_its_project_mount_is_the_proxy_images(
    tmp_path: Path,
) -> None:
    """compose.yaml's `web` mounts the whole project (`.:/app`, the nginx folder too) and runs
    gunicorn on 0.0.0.0:6543; the nginx image copies `nginx/production.conf`
    (`upstream { server 127.0.0.1:6543; }`, the sidecar of a deployed task) while the
    compose `nginx` service runs `nginx/docker.conf` passing to `web:6543`, as seen with
    IGVF-DACC/igvfd: the project mount carries the production config as it carries every
    file, and the image copying it by name is where it runs, so it is no front of the
    compose `web`, whose one front is docker.conf."""
    production = (
        "events {}\nhttp {\n  upstream app { server 127.0.0.1:6543; }\n"
        "  server {\n    listen 80;\n    location / { proxy_pass http://app; }\n  }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "compose.yaml": "services:\n  web:\n    build: .\n    volumes: ['.:/app']\n"
            "    command: gunicorn -b 0.0.0.0:6543 -w 2 app:app\n"
            "  nginx:\n    build:\n      context: .\n      dockerfile: nginx/Dockerfile\n"
            "    volumes: ['./nginx/docker.conf:/etc/nginx/nginx.conf']\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
            "nginx/Dockerfile": "FROM nginx:1.27\nCOPY nginx/production.conf /etc/nginx/nginx.conf\n",
            "nginx/production.conf": production,
            "nginx/docker.conf": production.replace("127.0.0.1:6543", "web:6543"),
        },
    )
    assert fronts(root) == {"web": ["nginx/docker.conf:6"]}
