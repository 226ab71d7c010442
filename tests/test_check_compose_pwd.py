"""`${PWD}` in a compose file is the folder `docker compose` runs in, normally the compose
file's own, never the folder check happens to run in: the result of a check does not depend on
where it runs. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.audit import CheckResult
from servertune.check.chain import Stacks
from servertune.check.compose import services_of
from servertune.check.graph import launches
from servertune.check.model import Location
from tests.folder_support import chains, check_folder, write


def test_pwd_in_a_build_context_is_the_compose_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`context: ${PWD}/../` in dockerize/compose.yaml is the repository root, also when check
    runs in another folder: the image's `ADD dockerize/uwsgi.conf /uwsgi.conf` is the
    config `uwsgi --ini /uwsgi.conf` reads (4 processes), and no build context is outside."""
    root = write(
        tmp_path / "repo",
        {
            "dockerize/compose.yaml": (
                "services:\n  web:\n    build:\n      context: ${PWD}/../\n"
                "      dockerfile: dockerize/Dockerfile\n"
                "    command: uwsgi --ini /uwsgi.conf\n"
            ),
            "dockerize/Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /home/web\nADD dockerize/uwsgi.conf /uwsgi.conf\n"
                'CMD ["uwsgi", "--ini", "/uwsgi.conf"]\n'
            ),
            "dockerize/uwsgi.conf": (
                "[uwsgi]\nsocket = 0.0.0.0:8080\nmaster = true\nprocesses = 4\nmodule = app.wsgi\n"
            ),
        },
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PWD", str(elsewhere))
    result = check_folder(root)
    assert ("uwsgi", 4) in [(kind, workers) for _, kind, workers in chains(result, root)]
    assert not [n for n in result.notes if n.kind in ("outside-tree", "config-not-found")]


def test_pwd_in_a_mount_is_the_compose_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`${PWD}/nginx/site.conf:/etc/nginx/conf.d/default.conf` mounts the repository's
    nginx/site.conf into the nginx service (which places that front in this project), also
    when check runs with another `PWD`."""
    root = write(
        tmp_path / "repo",
        {
            "compose.yaml": (
                "services:\n  web:\n    build: .\n"
                "  nginx:\n    image: nginx:1.27\n    volumes:\n"
                "      - ${PWD}/nginx/site.conf:/etc/nginx/conf.d/default.conf:ro\n"
            ),
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
                'CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "3", "app.wsgi"]\n'
            ),
            "nginx/site.conf": (
                "server {\n    listen 80;\n    location / {\n"
                "        proxy_pass http://web:8000;\n    }\n}\n"
            ),
        },
    )
    monkeypatch.setenv("PWD", str(tmp_path))
    mounted = next(s for s in _stacks_of(root).services if s.name == "nginx").mounts
    assert mounted == (root / "nginx" / "site.conf",)


def _stacks_of(root: Path) -> Stacks:
    """The compose services of the repository's compose.yaml, as linking reads them."""
    path = root / "compose.yaml"
    return Stacks(services_of(path, path.read_text()))


def test_a_pwd_mount_of_the_checkout_is_the_same_files_as_the_image_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$PWD:/app` over an image that has `COPY . /app` mounts the checkout itself: with check
    run in the repository (`check .`), the script the image's ENTRYPOINT runs is bin/run.sh by
    either road, not once as bin/run.sh and once under its absolute path, so the launch is
    listed once and its finding said once (seen in Kinto/kinto-dist)."""
    root = write(
        tmp_path / "repo",
        {
            "docker-compose.yml": (
                "services:\n  web:\n    build:\n      context: .\n"
                "    volumes:\n      - $PWD:/app\n    command: serve\n"
            ),
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n"
                'ENTRYPOINT ["/bin/bash", "/app/bin/run.sh"]\nCMD ["serve"]\n'
            ),
            "bin/run.sh": (
                "#!/bin/bash\ncase $1 in\n  serve)\n    uwsgi --http :8888 --ini app.ini\n    ;;\n"
                '  *)\n    exec "$@"\n    ;;\nesac\n'
            ),
            "app.ini": "[uwsgi]\nmaster = true\nprocesses = 4\nmodule = app.wsgi\ndie-on-term = true\n",
        },
    )
    monkeypatch.chdir(root)
    monkeypatch.setenv("PWD", str(root))
    result = check_folder(Path("."))
    paths = {str(at.file) for launch in chains_of(result) for at in launch}
    assert paths
    assert not [p for p in paths if Path(p).is_absolute()]
    said = [(f.rule, str(f.at.file)) for f in result.findings]
    assert ("entrypoint-without-exec", "bin/run.sh") in said
    assert len(said) == len(set(said))


def chains_of(result: CheckResult) -> list[tuple[Location, ...]]:
    """The chain of each launch, as the library lists them."""
    return [launch.chain for launch in launches(result.apps, result.links, result.balancer_links)]
