"""Which of several nginx configs that pass to the same server is its front: the one a
Dockerfile (or a compose service, or a manifest) puts into the proxy's config path, not a
sibling variant nothing deploys (a maintenance page's config beside the site's); and a
placeholder a start script substitutes (`%X%`) leaves the deployed config readable and joined.
Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.audit import CheckResult
from servertune.check.graph import launches
from tests.folder_support import check_folder, write

_APP = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY start.sh .\nCMD ["./start.sh"]\n'
_START = "#!/bin/sh\nexec gunicorn app.wsgi --workers 4 --bind 0.0.0.0:8000\n"
_PROXY = (
    "FROM nginx:1.25-alpine\n"
    "COPY nginx/default.conf /etc/nginx/conf.d/default.conf\n"
    "COPY nginx/start.sh /start.sh\n"
    'CMD ["/start.sh"]\n'
)
_PROXY_START = (
    "#!/bin/sh\n"
    'sed -i /etc/nginx/conf.d/default.conf -e "s/%REPORT_URL%/$REPORT_URL/"\n'
    "exec nginx -g 'daemon off;'\n"
)


def _site(extra: str) -> str:
    return (
        "server {\n"
        "    listen 8080;\n"
        "    location / {\n"
        "        proxy_pass http://127.0.0.1:8000;\n"
        "    }\n"
        f"{extra}"
        "}\n"
    )


_REPORTS = "    location /reports/ {\n        proxy_pass %REPORT_URL%;\n    }\n"
_MAINTENANCE = "    location /maintenance.html {\n        root /usr/share/nginx/html;\n    }\n"


def _fronts(root: Path) -> list[list[str]]:
    """Each launch's fronts as file:line."""
    return _launch_fronts(root, check_folder(root))


def _launch_fronts(root: Path, result: CheckResult) -> list[list[str]]:
    return [
        [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_the_config_the_proxy_image_copies_is_the_front_not_its_maintenance_sibling(
    tmp_path: Path,
) -> None:
    """A proxy image (`FROM nginx`, starting no app server) COPYs `nginx/default.conf` into
    conf.d, and its start script seds a `%REPORT_URL%` placeholder in it; the app's image runs
    gunicorn on 0.0.0.0:8000, and no compose file says the two run in separate containers
    (a Kubernetes pod, an ECS task: one loopback). `nginx/default-maintenance.conf`, the
    same site with a maintenance page, is copied by nothing. The gunicorn is behind
    default.conf, the config the image deploys, and not behind the maintenance variant
    (seen in akvo/akvo-rsr: Dockerfile-nginx and nginx/default-maintenance.conf); a
    coverage note says why the variant is not joined."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "start.sh": _START,
            "Dockerfile-nginx": _PROXY,
            "nginx/start.sh": _PROXY_START,
            "nginx/default.conf": _site(_REPORTS),
            "nginx/default-maintenance.conf": _site(_MAINTENANCE + _REPORTS),
        },
    )
    result = check_folder(root)
    assert _launch_fronts(root, result) == [["nginx/default.conf:4"]]
    assert [
        (n.kind, n.at.file.name) for n in result.notes if "variant kept beside" in n.message
    ] == [("not-followed", "default-maintenance.conf")]


def test_a_loose_variant_beside_no_deployed_config_is_still_joined_by_address(
    tmp_path: Path,
) -> None:
    """Two configs of one folder that nothing copies or mounts (a host's nginx, examples)
    both pass to the server on its address: both stay its fronts, as before; only a sibling
    of a config the files deploy gives way to it."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "start.sh": _START,
            "nginx/default.conf": _site(""),
            "nginx/default-maintenance.conf": _site(_MAINTENANCE),
        },
    )
    assert _fronts(root) == [["nginx/default-maintenance.conf:4", "nginx/default.conf:4"]]
