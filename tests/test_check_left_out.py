"""A front config the compose stack leaves out stays unlinked for the right reason: the nginx
service mounts its siblings one by one, and no image copies it by name, folder or wildcard.
The app image's `COPY . /app` holds every file of the repository (the build context is inside
the checked tree here) and deploys none of them as nginx's. Fixture:
tests/data/repos/chain-whole-context."""

from __future__ import annotations

import shutil
from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "chain-whole-context"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def _fronts(result: CheckResult, root: Path) -> list[list[str]]:
    return [
        [at.file.relative_to(root).as_posix() for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_config_the_stack_does_not_mount_is_no_front_though_copy_dot_holds_it() -> None:
    """nginx mounts http.conf and locations.conf; test_server.conf, beside them, is held by
    the app image only through `COPY . /app`: the app is behind the mounted locations, and
    the test server's 5 s timeout is judged against nothing."""
    result = _folder(ROOT)
    assert _fronts(result, ROOT) == [["configuration/nginx/locations.conf"]]
    assert not [f for f in result.findings if f.at.file.name == "test_server.conf"]


def test_config_an_image_copies_by_its_folder_is_still_a_candidate(tmp_path: Path) -> None:
    """The counterpart: an image that copies the nginx folder by name deploys its files, so
    test_server.conf is not left out (the host name then reaches the app through it too)."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT, root)
    dockerfile = root / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text().replace(
            "COPY . /app\n", "COPY . /app\nCOPY configuration/nginx/ /etc/nginx/conf.d/\n"
        )
    )
    result = _folder(root)
    fronts = {front for chain in _fronts(result, root) for front in chain}
    assert "configuration/nginx/test_server.conf" in fronts


def _unrun_proxy(tmp_path: Path, proxy_service: str) -> Path:
    """A cookiecutter-style stack: production.yml builds compose/production/django/Dockerfile
    (gunicorn on 5000) and, with `proxy_service`, the nginx image of the folder beside it,
    which COPYs the nginx.conf passing to `django:5000` with a 5 s read timeout."""
    files = {
        "production.yml": "services:\n  django:\n    build:\n      context: .\n"
        "      dockerfile: ./compose/production/django/Dockerfile\n"
        "    command: gunicorn -b 0.0.0.0:5000 -w 2 app.wsgi\n" + proxy_service,
        "compose/production/django/Dockerfile": "FROM python:3.12\nCOPY . /app\n",
        "compose/production/nginx/Dockerfile": "FROM nginx:1.27\n"
        "COPY ./compose/production/nginx/nginx.conf /etc/nginx/conf.d/default.conf\n",
        "compose/production/nginx/nginx.conf": "server {\n  listen 80;\n  location / {\n"
        "    proxy_pass http://django:5000;\n    proxy_read_timeout 5s;\n  }\n}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_front_whose_image_nothing_builds_or_runs_joins_no_launch(tmp_path: Path) -> None:
    """The stack builds the django Dockerfile but not the nginx one beside it (its service
    was removed from production.yml): the nginx config runs nowhere these files say, so it
    is no front of django's gunicorn, and a `not-followed` note on it says why. Seen in
    Living-with-machines/lwmdb (a Traefik Dockerfile left from cookiecutter-django)."""
    root = _unrun_proxy(tmp_path, "")
    result = _folder(root)
    assert _fronts(result, root) == [[]]
    assert [
        n
        for n in result.notes
        if n.kind == "not-followed" and n.at.file.name == "nginx.conf" and "no compose" in n.message
    ]


def test_a_front_whose_image_the_stack_builds_joins_its_launch(tmp_path: Path) -> None:
    """The counterpart: with a service building the nginx Dockerfile, its config fronts
    django's gunicorn."""
    proxy = "  nginx:\n    build:\n      context: .\n"
    proxy += "      dockerfile: ./compose/production/nginx/Dockerfile\n"
    root = _unrun_proxy(tmp_path, proxy)
    result = _folder(root)
    assert _fronts(result, root) == [["compose/production/nginx/nginx.conf"]]


def test_a_front_whose_image_a_service_named_for_its_folder_pulls_joins_its_launch(
    tmp_path: Path,
) -> None:
    """A service that builds nothing here and is named for the proxy's folder (`nginx-proxy`
    for nginx/, running `image: example/nginx-proxy`) may run the image that folder's
    Dockerfile builds: whether it does is not in the files, so the front is not ruled out
    and fronts django's gunicorn. Seen in superdesk/superdesk (`superdesk-client` for
    client/)."""
    root = _unrun_proxy(tmp_path, "  nginx-proxy:\n    image: example/nginx-proxy:latest\n")
    result = _folder(root)
    assert _fronts(result, root) == [["compose/production/nginx/nginx.conf"]]


def test_a_stack_in_a_sibling_folder_does_not_rule_out_a_front(tmp_path: Path) -> None:
    """The compose file that builds the Dockerfiles beside the proxy's folder sits in one of
    those folders (backend/docker-compose.yml, the backend's own development stack), not
    above the proxy: it says nothing of where the proxy's image runs, so the proxy is not
    ruled out and fronts the backend's server. Seen in flathub-infra/website, whose nginx/
    image a cluster runs."""
    files = {
        "backend/docker-compose.yml": "services:\n  backend:\n    build: .\n",
        "backend/Dockerfile": 'FROM python:3.12\nCOPY . /app\nCMD ["gunicorn", "-b", '
        '"0.0.0.0:8000", "app:app"]\n',
        "frontend/Dockerfile": "FROM node:22\nCOPY . /app\n",
        "nginx/Dockerfile": "FROM nginx:1.27\nCOPY nginx.conf /etc/nginx/conf.d/default.conf\n",
        "nginx/nginx.conf": "server {\n  listen 80;\n  location / {\n"
        "    proxy_pass http://backend.site.svc.cluster.local:8000;\n  }\n}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = _folder(tmp_path)
    assert not [n for n in result.notes if "not joined to a launch" in n.message]


def _unplaced_template(tmp_path: Path, proxy_service: str) -> Path:
    """A dev/ stack building every service here (the core's uWSGI on 3000, a UI image that
    copies ui/nginx/ from its own build context) beside dev/nginx/templates/site.conf.template
    passing to `core:3000`, which no image copies and no service mounts; the root compose
    file runs the same services from their images, `proxy_service` added to dev's."""
    files = {
        "docker-compose.yml": "services:\n  core:\n    image: example/core:1\n"
        "  ui:\n    image: example/ui:1\n",
        "dev/docker-compose.yml": "services:\n  core:\n    image: example/core:1\n"
        "    build: ../core\n  ui:\n    image: example/ui:1\n    build:\n"
        "      context: ../ui\n      dockerfile: Dockerfile\n"
        "  db:\n    build: ../db\n" + proxy_service,
        "core/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
        'CMD ["uwsgi", "--http-socket", "0.0.0.0:3000", "--module", "app:app"]\n',
        "ui/Dockerfile": "FROM nginx:1.27\nCOPY nginx/ /etc/nginx/\n",
        "ui/nginx/nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n"
        "    location / { root /usr/share/nginx/html; }\n  }\n}\n",
        "dev/nginx/templates/site.conf.template": "upstream core { server core:3000; }\n"
        "server {\n  listen 80;\n  location / {\n    proxy_pass http://core/;\n"
        "    proxy_read_timeout 5s;\n  }\n}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_front_no_container_holds_joins_no_launch_of_a_stack_building_every_image(
    tmp_path: Path,
) -> None:
    """No image copies the template and no service mounts it, and every service of the dev/
    stack around it builds an image here (the db's Dockerfile not read, its context ../db
    outside the template's folder): no container runs it, so it fronts neither stack's uWSGI,
    and a `not-followed` note on it says why. Seen in exadel-inc/CompreFace
    (`dev/nginx/templates/nginx.conf.template`)."""
    root = _unplaced_template(tmp_path, "")
    result = _folder(root)
    assert _fronts(result, root) == [[], []]
    assert [
        n
        for n in result.notes
        if n.kind == "not-followed" and n.at.file.name == "site.conf.template"
    ]


def test_a_front_no_container_holds_may_run_in_a_pulled_proxy(tmp_path: Path) -> None:
    """The counterpart: a dev/ service running a pulled image (`image: nginx`, which a
    `configs:` entry or a custom build elsewhere may fill) may run the template, so it is not
    ruled out and fronts the core's uWSGI as before."""
    root = _unplaced_template(tmp_path, "  proxy:\n    image: example/proxy:1\n")
    result = _folder(root)
    fronts = {front for chain in _fronts(result, root) for front in chain}
    assert fronts == {"dev/nginx/templates/site.conf.template"}
