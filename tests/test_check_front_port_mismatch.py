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
