"""nginx templates an image COPYs into /etc/nginx/templates/: the official image (and
nginx-unprivileged, the same entrypoint) renders each `*.template` there into /etc/nginx/conf.d/
with envsubst when the container starts, with the container's environment (the image's `ENV`,
then the service's `environment`). The rendered pass reaches the server it names, and an
`include /etc/nginx/conf.d/*.conf` reads the rendered files. Each repository is written in the
test."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

_APP = (
    "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["gunicorn", "--bind", "0.0.0.0:8080", "--workers", "3", "app.wsgi"]\n'
)


def _fronts(root: Path) -> dict[str, list[str]]:
    """Each launch's container (else its first file) -> its fronts as file:line."""
    result = check_folder(root)
    found: dict[str, list[str]] = {}
    for launch in launches(result.apps, result.links, result.balancer_links):
        box = launch.app.container
        key = box.name if box is not None else launch.chain[0].file.relative_to(root).as_posix()
        found[key] = [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
    return found


def test_copied_template_is_rendered_with_the_image_env_and_reaches_its_server(
    tmp_path: Path,
) -> None:
    """`COPY site.conf.template /etc/nginx/templates/default.conf.template` with `ENV
    BACKEND_URL=http://api.:8080` in the nginx image: `proxy_pass ${BACKEND_URL}/api/;` is
    rendered with the image's ENV and reaches service `api` (a trailing-dot name is the same
    name); the service sets nothing itself."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "web/Dockerfile": (
                "FROM nginx:stable\nENV BACKEND_URL=http://api.:8080\n"
                "COPY web/site.conf.template /etc/nginx/templates/default.conf.template\n"
            ),
            "web/site.conf.template": (
                "server {\n    listen 80;\n    location /api/ {\n"
                "        proxy_pass ${BACKEND_URL}/api/;\n    }\n}\n"
            ),
            "compose.yaml": (
                "services:\n  api:\n    build: .\n"
                "  web:\n    build:\n      context: .\n      dockerfile: web/Dockerfile\n"
                "    ports: ['80:80']\n"
            ),
        },
    )
    assert _fronts(root) == {"api": ["web/site.conf.template:4"]}


def test_service_environment_wins_over_the_image_env_in_a_copied_template(
    tmp_path: Path,
) -> None:
    """The service's `environment` is the container's value over the image's `ENV`
    (`UPSTREAM=127.0.0.1:8080` in the image, `web:8080` in compose): the rendered upstream
    is the service's, which reaches service `web`."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "nginx/Dockerfile": (
                "FROM nginx:1.27\nENV UPSTREAM=127.0.0.1:8080\n"
                "COPY nginx.conf /etc/nginx/nginx.conf\n"
                "COPY *.conf.template /etc/nginx/templates/\n"
            ),
            "nginx/nginx.conf": (
                "events {}\nhttp {\n    server {\n        listen 8080;\n"
                "        location / {\n            proxy_pass http://upstream_app;\n"
                "        }\n    }\n    include /etc/nginx/conf.d/*.conf;\n}\n"
            ),
            "nginx/upstream.conf.template": "upstream upstream_app {\n    server $UPSTREAM;\n}\n",
            "compose.yaml": (
                "services:\n  web:\n    build: .\n"
                "  nginx:\n    build: nginx\n    environment:\n      - UPSTREAM=web:8080\n"
                "    ports: ['8000:8080']\n"
            ),
        },
    )
    assert _fronts(root) == {"web": ["nginx/nginx.conf:6"]}


def test_mounted_template_renders_an_environment_value_with_a_default(tmp_path: Path) -> None:
    """A template bind-mounted into /etc/nginx/templates/ whose `proxy_pass $BACKEND;` takes
    the service's `BACKEND: http://${BACKEND_HOST:-api:8080}` (seen in ansible/eda-server):
    with no `.env` setting BACKEND_HOST compose gives the default, so the rendered pass is
    `http://api:8080` and reaches service `api`; a value of the deployment's shell alone
    (`${OTHER}`) stays unknown."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "nginx/default.conf.template": (
                "server {\n    listen 80;\n    location /api/ {\n"
                "        proxy_pass $BACKEND;\n        proxy_set_header X-Other $OTHER;\n"
                "    }\n}\n"
            ),
            "compose.yaml": (
                "x-env: &env\n  BACKEND: http://${BACKEND_HOST:-api:8080}\n  OTHER: ${OTHER}\n"
                "services:\n  api:\n    build: .\n    environment: *env\n"
                "  ui:\n    image: nginx:1.27\n    environment: *env\n    ports: ['443:80']\n"
                "    volumes:\n"
                "      - ./nginx/default.conf.template:/etc/nginx/templates/default.conf.template\n"
            ),
        },
    )
    assert _fronts(root) == {"api": ["nginx/default.conf.template:4"]}


@pytest.mark.parametrize(
    ("name", "mode", "joined"),
    [
        ("10-backend.envsh", 0o755, True),
        ("10-backend.envsh", 0o644, False),  # the entrypoint ignores it: not executable
        ("30-backend.envsh", 0o755, False),  # sourced after 20-envsubst-on-templates.sh
    ],
)
def test_an_envsh_the_image_sources_first_feeds_its_templates(
    tmp_path: Path, name: str, mode: int, joined: bool
) -> None:
    """The official nginx image's entrypoint sources each executable `*.envsh` of
    /docker-entrypoint.d/ in `sort -V` order, and 20-envsubst-on-templates.sh renders the
    templates with what those before it exported (nginxinc/docker-nginx's
    docker-entrypoint.sh; its own 15-local-resolvers.envsh works so): a copied
    `10-backend.envsh` exporting `BACKEND_URL="${BACKEND_URL:-http://api:8080}"` makes the
    template's `proxy_pass ${BACKEND_URL}/api/;` reach service `api`; without its executable
    bit, or named to sort after the renderer, it does not."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "web/Dockerfile": (
                "FROM nginx:1.27\n"
                "COPY site.conf.template /etc/nginx/templates/default.conf.template\n"
                f"COPY backend.envsh /docker-entrypoint.d/{name}\n"
            ),
            "web/site.conf.template": (
                "server {\n    listen 80;\n    location /api/ {\n"
                "        proxy_pass ${BACKEND_URL}/api/;\n    }\n}\n"
            ),
            "web/backend.envsh": (
                '#!/bin/sh\nexport BACKEND_URL="${BACKEND_URL:-http://api:8080}"\n'
            ),
            "compose.yaml": (
                "services:\n  api:\n    build: .\n  web:\n    build: web\n    ports: ['80:80']\n"
            ),
        },
    )
    (root / "web/backend.envsh").chmod(mode)
    assert _fronts(root) == {"api": ["web/site.conf.template:4"] if joined else []}


_OWN_ENTRYPOINT = """#!/bin/sh
export APP_PORT=${APP_PORT:-5000}
/docker-entrypoint.d/20-envsubst-on-templates.sh >/dev/null
exec "$@"
"""


@pytest.mark.parametrize("renders", [True, False])
def test_an_images_own_entrypoint_exports_feed_the_templates_it_renders(
    tmp_path: Path, renders: bool
) -> None:
    """An image built `FROM nginx` whose own /docker-entrypoint.sh exports
    `APP_PORT=${APP_PORT:-5000}` and then runs 20-envsubst-on-templates.sh (as seen with
    rommapp/romm), its final stage `FROM scratch` taking the first stage's whole filesystem
    (`COPY --from=production / /`): the template the first stage copies is in the image, is
    rendered with that export, and its `server 127.0.0.1:${APP_PORT};` reaches the gunicorn
    the image's /init starts on 0.0.0.0:5000, no compose file needed. A script that exports
    and never renders feeds the templates nothing known here."""
    entrypoint = (
        _OWN_ENTRYPOINT
        if renders
        else _OWN_ENTRYPOINT.replace("/docker-entrypoint.d/20-envsubst-on-templates.sh", "true")
    )
    root = write(
        tmp_path,
        {
            "docker/Dockerfile": (
                "FROM nginx:1.27-alpine AS production\n"
                "COPY ./docker/init/* /\n"
                "COPY ./docker/nginx/templates/ /etc/nginx/templates/\n"
                "FROM scratch AS slim\nCOPY --from=production / /\n"
                'ENTRYPOINT ["/docker-entrypoint.sh"]\nCMD ["/init"]\n'
            ),
            "docker/init/docker-entrypoint.sh": entrypoint,
            "docker/init/init": (
                "#!/bin/sh\nnginx -g 'daemon off;' &\n"
                'exec gunicorn --bind=0.0.0.0:"${APP_PORT:-5000}" app:app\n'
            ),
            "docker/nginx/templates/default.conf.template": (
                "upstream app_server {\n    server 127.0.0.1:${APP_PORT};\n}\n"
                "server {\n    listen 8080;\n    location / {\n"
                "        proxy_pass http://app_server;\n    }\n}\n"
            ),
        },
    )
    fronts = ["docker/nginx/templates/default.conf.template:7"] if renders else []
    assert _fronts(root) == {"docker/Dockerfile": fronts}
