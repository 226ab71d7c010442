"""`front-port-mismatch`: a compose service's `ports:` publishes container ports, and when the
one server its container runs binds none of them (both sides literal and fully known), every
request to the published port finds no listener. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

_DOCKERFILE = (
    "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "80"]\n'
)


def _mismatches(root: Path) -> list[tuple[str, int]]:
    result = check_folder(root)
    return [(f.at.file.name, f.at.line) for f in result.findings if f.rule == "front-port-mismatch"]


def test_published_port_no_bind_matches_is_a_warning(tmp_path: Path) -> None:
    """compose publishes `8000:8000` for a service whose image's uvicorn listens on `--port 80`
    (seen in phospho-app/phospho): the published container port 8000 reaches nothing, said
    once at the `ports:` entry; the long syntax's `target` is read the same way."""
    for ports in ('      - "8000:8000"\n', "      - target: 8000\n        published: 8000\n"):
        root = write(
            tmp_path / str(len(ports)),
            {
                "docker-compose.yml": (
                    f"services:\n  backend:\n    build: .\n    ports:\n{ports}    restart: always\n"
                ),
                "Dockerfile": _DOCKERFILE,
            },
        )
        assert _mismatches(root) == [("docker-compose.yml", 5)]


def test_matching_or_unknown_ports_say_nothing(tmp_path: Path) -> None:
    """No finding when a published port is one the server binds (`8000:80`), when a port is a
    variable (`8000:${PORT}`), when the server's port is left to the container
    (`--port $PORT`), or when a script starting it may start another listener
    (`nginx &` beside uvicorn: the published port is nginx's)."""
    cases = {
        "match": ('      - "8000:80"\n', _DOCKERFILE, None),
        "variable": ('      - "8000:${PORT}"\n', _DOCKERFILE, None),
        "env": ('      - "8080:8080"\n', _DOCKERFILE.replace('"80"', '"$PORT"'), None),
        "script": (
            '      - "80:80"\n',
            'FROM python:3.12-slim\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n',
            "#!/bin/sh\nnginx &\nexec uvicorn app.main:app --host 0.0.0.0 --port 8000\n",
        ),
    }
    for name, (ports, dockerfile, script) in cases.items():
        files = {
            "docker-compose.yml": f"services:\n  backend:\n    build: .\n    ports:\n{ports}",
            "Dockerfile": dockerfile,
        }
        if script is not None:
            files["start.sh"] = script
        root = write(tmp_path / name, files)
        assert _mismatches(root) == [], name


def test_development_stack_is_not_judged(tmp_path: Path) -> None:
    """A development launch (uvicorn with `--reload` in a compose `command`) publishing a port
    it does not bind is a developer's run, not a deployment's: nothing is said."""
    root = write(
        tmp_path / "repo",
        {
            "docker-compose.yml": (
                "services:\n  backend:\n    build: .\n    ports:\n      - 8000:8000\n"
                "    command: uvicorn app.main:app --reload --host 0.0.0.0 --port 80\n"
            ),
            "Dockerfile": _DOCKERFILE,
        },
    )
    assert _mismatches(root) == []


def _front_stack(tmp_path: Path, name: str, proxy_pass: str, command: str) -> Path:
    """A compose stack of an nginx service mounting site.conf and a service `sam` whose
    uvicorn runs `command`."""
    return write(
        tmp_path / name,
        {
            "docker-compose.yml": (
                "services:\n  nginx:\n    image: nginx\n    volumes:\n"
                "      - ./site.conf:/etc/nginx/conf.d/site.conf\n    ports:\n      - 80:80\n"
                f"  sam:\n    build: .\n    command: {command}\n"
            ),
            "site.conf": (
                "server {\n  listen 80;\n  location / {\n"
                f"    proxy_pass {proxy_pass};\n  }}\n}}\n"
            ),
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /app\n",
        },
    )


def test_front_passing_to_a_service_at_a_port_it_does_not_bind(tmp_path: Path) -> None:
    """nginx's `proxy_pass http://sam;` (port 80, the scheme's default) to the compose service
    sam whose uvicorn listens on 8000 (seen in JaneliaSciComp/SAM_service): the name reaches
    the container, the port nothing in it, said at the pass; `http://sam:8000` is joined and
    says nothing, nor does a port left to the container (`--port $PORT`)."""
    serve = "uvicorn app:app --host 0.0.0.0 --port 8000"
    root = _front_stack(tmp_path, "miss", "http://sam", serve)
    assert _mismatches(root) == [("site.conf", 4)]
    assert _mismatches(_front_stack(tmp_path, "hit", "http://sam:8000", serve)) == []
    unknown = "uvicorn app:app --host 0.0.0.0 --port $PORT"
    assert _mismatches(_front_stack(tmp_path, "var", "http://sam", unknown)) == []


_DAPHNE_UNIT = (
    "[Service]\nType=simple\nWorkingDirectory=/srv/app\n"
    "ExecStart=/srv/app/env/bin/daphne -b 0.0.0.0 -p 8001 app.asgi:application\n"
    "[Install]\nWantedBy=multi-user.target\n"
)
_SOCKET_NGINX = (
    "server {\n    listen 80;\n    location /ws/ {\n"
    "        proxy_pass http://unix:/run/daphne.sock;\n    }\n}\n"
)


def test_pass_to_a_socket_the_named_server_never_binds(tmp_path: Path) -> None:
    """nginx's `/ws/` passes to `unix:/run/daphne.sock` while the host's daphne, the server
    that socket file is named for, binds TCP 0.0.0.0:8001 only (seen in
    TikhonP/heytelepat-server): the file is never made, said once at the pass, naming both
    sides."""
    root = write(tmp_path / "repo", {"daphne.service": _DAPHNE_UNIT, "nginx.conf": _SOCKET_NGINX})
    result = check_folder(root)
    found = [f for f in result.findings if f.rule == "front-port-mismatch"]
    assert [(f.at.file.name, f.at.line) for f in found] == [("nginx.conf", 4)]
    assert "/run/daphne.sock" in found[0].message
    assert "0.0.0.0:8001" in found[0].message
    caddy = "example.com {\n    reverse_proxy unix//run/daphne.sock\n}\n"
    root = write(tmp_path / "caddy", {"daphne.service": _DAPHNE_UNIT, "Caddyfile": caddy})
    assert _mismatches(root) == [("Caddyfile", 2)]


def test_socket_pass_with_unknown_or_unnamed_server_says_nothing(tmp_path: Path) -> None:
    """No finding when the server's bind is a variable (`-b $HOST -p $PORT`: it may be the
    socket), when another server's bind is in a config not read (gunicorn's `-c` outside the
    repository: it may bind that file), when no server is named for the socket file
    (`/run/app.sock` beside daphne), or when the server does bind that file."""
    cases = {
        "variable": _DAPHNE_UNIT.replace("-b 0.0.0.0 -p 8001", "-b $HOST -p $PORT"),
        "unnamed": _DAPHNE_UNIT,
        "bound": _DAPHNE_UNIT.replace("-b 0.0.0.0 -p 8001", "-u /run/daphne.sock"),
        "unread": _DAPHNE_UNIT,
    }
    for name, unit in cases.items():
        nginx = _SOCKET_NGINX.replace("daphne.sock", "app.sock") if name == "unnamed" else None
        files = {"daphne.service": unit, "nginx.conf": nginx or _SOCKET_NGINX}
        if name == "unread":
            files["web.service"] = _DAPHNE_UNIT.replace(
                "daphne -b 0.0.0.0 -p 8001 app.asgi:application",
                "gunicorn -c /etc/app/gunicorn.conf.py app.wsgi",
            )
        assert _mismatches(write(tmp_path / name, files)) == [], name


def test_pass_to_a_port_the_named_server_binds_as_a_socket(tmp_path: Path) -> None:
    """The reverse: nginx's `upstream daphne` passes to 127.0.0.1:8001 while the host's
    daphne, the server that upstream is named for, binds the unix socket /run/daphne.sock
    only: nothing listens on the port, said once at the upstream's server line. Nothing when
    the upstream is named for no server read (`upstream backend`)."""
    unit = _DAPHNE_UNIT.replace("-b 0.0.0.0 -p 8001", "-u /run/daphne.sock")
    nginx = (
        "upstream daphne {\n    server 127.0.0.1:8001;\n}\nserver {\n    listen 80;\n"
        "    location / {\n        proxy_pass http://daphne;\n    }\n}\n"
    )
    root = write(tmp_path / "repo", {"daphne.service": unit, "nginx.conf": nginx})
    assert _mismatches(root) == [("nginx.conf", 2)]
    other = nginx.replace("daphne", "backend")
    root = write(tmp_path / "other", {"daphne.service": unit, "nginx.conf": other})
    assert _mismatches(root) == []


_WEB = (
    "  web:\n    build: .\n    command: gunicorn app:app --bind 0.0.0.0:8000\n    restart: always\n"
)


def test_caddy_traefik_haproxy_fronts_are_compared_too(tmp_path: Path) -> None:
    """Caddy's `reverse_proxy web:9000`, HAProxy's `server s1 web:9000`, a Traefik file
    provider's `url: http://web:9000` and a Traefik label `loadbalancer.server.port=9000` send requests to compose service web at 9000, where its
    gunicorn binds 8000 alone: said once at the front's line, as for nginx."""
    dockerfile = "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n"
    fronts = {
        "caddy": (
            {"Caddyfile": "example.com {\n    reverse_proxy web:9000\n}\n"},
            (
                "  caddy:\n    image: caddy:2\n    ports:\n      - 80:80\n    volumes:\n"
                "      - ./Caddyfile:/etc/caddy/Caddyfile\n"
            ),
            ("Caddyfile", 2),
        ),
        "traefik-file": (
            {
                "traefik/dynamic.yml": (
                    "http:\n  services:\n    web:\n      loadBalancer:\n        servers:\n"
                    "          - url: http://web:9000\n"
                )
            },
            (
                "  traefik:\n    image: traefik:v3.0\n"
                "    command: --providers.file.filename=/etc/traefik/dynamic.yml\n"
                "    ports:\n      - 80:80\n    volumes:\n"
                "      - ./traefik/dynamic.yml:/etc/traefik/dynamic.yml\n"
            ),
            ("dynamic.yml", 6),
        ),
        "haproxy": (
            {
                "haproxy.cfg": (
                    "defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n"
                    "    timeout server 30s\nfrontend f\n    bind :80\n    default_backend b\n"
                    "backend b\n    server s1 web:9000\n"
                )
            },
            (
                "  lb:\n    image: haproxy:2.9\n    ports:\n      - 80:80\n    volumes:\n"
                "      - ./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro\n"
            ),
            ("haproxy.cfg", 10),
        ),
    }
    got, wanted = {}, {"traefik": [("docker-compose.yml", 9)]}
    for name, (files, service, where) in fronts.items():
        wanted[name] = [where]
        compose = f"services:\n{_WEB}{service}"
        root = write(
            tmp_path / name, {"docker-compose.yml": compose, "Dockerfile": dockerfile, **files}
        )
        got[name] = _mismatches(root)
    labels = (
        "    labels:\n      - traefik.enable=true\n"
        "      - traefik.http.routers.web.rule=Host(`example.com`)\n"
        "      - traefik.http.services.web.loadbalancer.server.port=9000\n"
    )
    traefik = (
        "  traefik:\n    image: traefik:v3.0\n    command: --providers.docker=true\n"
        "    ports:\n      - 80:80\n"
    )
    root = write(
        tmp_path / "traefik",
        {"docker-compose.yml": f"services:\n{_WEB}{labels}{traefik}", "Dockerfile": dockerfile},
    )
    got["traefik"] = _mismatches(root)
    assert got == wanted
