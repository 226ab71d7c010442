"""A front whose compose service runs a published image (`image:`, no `build:`) is joined to
the launch its pass reaches once the repository's own files say which Dockerfile builds that
name: here a deploy script's `docker build -t NAME -f FILE` line. Each repository here is
written by the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: The deploy folder: a private registry's images with no owner, built by its script.
DEPLOY = {
    "deploy/api.Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["uvicorn", "shop.main:app", "--host", "0.0.0.0", "--port", "8000", "--workers", "4"]\n',
    "deploy/admin.Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["gunicorn", "-b", "0.0.0.0:8000", "shop.admin:app"]\n',
    "deploy/nginx.Dockerfile": "FROM nginx:alpine\nADD deploy/nginx.conf /etc/nginx/nginx.conf\n",
    "deploy/nginx.conf": "events {}\nhttp {\n  upstream backend { server backend:8000; }\n"
    "  server { listen 80; location / { proxy_pass http://backend; } }\n}\n",
    "deploy/docker-compose-cloud.yml": "services:\n  backend:\n"
    '    image: "shopregistry.azurecr.io/shop-api"\n    expose:\n      - "8000"\n'
    '  nginx:\n    image: "shopregistry.azurecr.io/shop-nginx"\n'
    '    ports:\n      - "80:80"\n',
    "deploy/deploy.sh": "#!/bin/sh\nREGISTRY=shopregistry\n"
    "docker buildx build -t $REGISTRY.azurecr.io/shop-api -f deploy/api.Dockerfile .\n"
    "docker buildx build -t $REGISTRY.azurecr.io/shop-nginx -f deploy/nginx.Dockerfile .\n"
    "docker buildx build -t $REGISTRY.azurecr.io/shop-admin -f deploy/admin.Dockerfile .\n",
}


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def test_a_deploy_scripts_build_line_names_the_dockerfile_of_a_private_registrys_image(
    tmp_path: Path,
) -> None:
    """A compose file runs `shopregistry.azurecr.io/shop-api` and `.../shop-nginx`, names
    with a registry host and no owner, and a deploy script builds each with `docker buildx
    build -t $REGISTRY.azurecr.io/shop-api -f deploy/api.Dockerfile .` (as seen in
    cohere-ai/cohere-toolkit's azure_compose_deploy): the backend service runs api.Dockerfile's
    uvicorn, and the nginx service's image holds nginx.conf, whose `backend:8000` reaches it,
    not the admin image's gunicorn on the same port that no service here runs."""
    root = write(tmp_path / "shop", DEPLOY)
    result = check(root)
    found = {
        (
            launch.app.container.name if launch.app.container else "",
            tuple(f"{at.file.name}:{at.line}" for at in launch.fronts),
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert found == {("backend", ("nginx.conf:4",)), ("", ())}
