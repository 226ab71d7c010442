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
    "server {\n  listen 443 ssl;\n  location / {\n    proxy_pass http://localhost:8000;\n  }\n}\n"
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


_WEB = (
    'FROM node:20-alpine AS development\nWORKDIR /app\nCMD ["pnpm", "run", "server"]\n\n'
    "FROM node:20-alpine AS build-stage\nWORKDIR /app\nRUN pnpm build\n\n"
    "FROM nginx:alpine AS production\nCOPY --from=build-stage /app/dist /usr/share/nginx/html\n"
    "COPY ./docker/nginx/default.conf /etc/nginx/conf.d/default.conf\n"
    'CMD ["nginx", "-g", "daemon off;"]\n'
)
_API = (
    "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["uvicorn", "server.main:app", "--host", "0.0.0.0", "--port", "5050"]\n'
)


def _stack(target: str) -> str:
    return (
        "services:\n  api:\n    build:\n      context: .\n      dockerfile: docker/api.Dockerfile\n"
        "  web:\n    build:\n      context: .\n      dockerfile: docker/web.Dockerfile\n"
        f"      target: {target}\n"
    )


def test_a_front_is_joined_only_in_the_stack_whose_build_target_copies_it(
    tmp_path: Path,
) -> None:
    """The web Dockerfile's `production` stage copies nginx's site (`proxy_pass
    http://api:5050`); the production compose file builds that stage, the dev compose file
    builds its `development` stage, which holds no nginx (as seen in xerrors/Yuxi-Know): the
    site fronts the production file's api only, not the dev file's same-named api."""
    root = write(
        tmp_path / "know",
        {
            "docker-compose.yml": _stack("development"),
            "docker-compose.prod.yml": _stack("production"),
            "docker/api.Dockerfile": _API,
            "docker/web.Dockerfile": _WEB,
            "docker/nginx/default.conf": "server {\n  listen 80;\n  location /api/ {\n"
            "    proxy_pass http://api:5050/api/;\n  }\n}\n",
        },
    )
    result = check(root)
    found = {
        (
            launch.app.container.at.file.name if launch.app.container else "",
            tuple(at.file.name for at in launch.fronts),
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert found == {("docker-compose.prod.yml", ("default.conf",)), ("docker-compose.yml", ())}
