"""A front no container, image or unit here runs (a host's nginx) reaches a compose service's
server through the port it publishes, but not when the front sits in a folder of developer
tools: that is a sample for a server run by hand. Each repository here is written by the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

_SITE = (
    "server {\n  listen 443 ssl;\n  location / {\n    proxy_pass http://localhost:8000;\n"
    "  }\n}\n"
)
_COMPOSE = (
    "services:\n  app:\n    image: acme/search:latest\n    ports:\n      - 8000:8000\n"
    "    command: sh -c 'python manage.py migrate && daphne -b 0.0.0.0 -p 8000 "
    "search.asgi:application'\n"
)


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def _fronts(root: Path) -> set[tuple[str, ...]]:
    result = check(root)
    return {
        tuple(at.file.name for at in launch.fronts)
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_a_developer_tools_nginx_does_not_front_the_compose_server(tmp_path: Path) -> None:
    """`DevUtils/nginx/nginx.conf` passes to `localhost:8000`, which the root compose file's
    daphne publishes, but nothing mounts, copies or starts that nginx and its folder is named
    for developer tools (as seen in swirlai/swirl-search): the launch has no front, rather
    than a false one."""
    root = write(
        tmp_path / "search",
        {"docker-compose.yaml": _COMPOSE, "DevUtils/nginx/nginx.conf": _SITE},
    )
    assert _fronts(root) == {()}


def test_a_deploy_folders_host_nginx_still_fronts_the_published_port(tmp_path: Path) -> None:
    """The same host site under `deploy/nginx/`, beside `deploy/app/docker-compose.yml`
    publishing 8000 (Syslifters/sysreptor's layout), is the deployment's front: joined."""
    root = write(
        tmp_path / "search",
        {"deploy/app/docker-compose.yml": _COMPOSE, "deploy/nginx/site.nginx": _SITE},
    )
    assert _fronts(root) == {("site.nginx",)}
