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
