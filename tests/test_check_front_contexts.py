"""Fronts joined through what nginx, gunicorn and Caddy really do with the files, as seen on
held-out public projects (each repository is made up here; the project is named only where
the pattern was seen)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servertune.check.output import format_json
from tests.folder_support import check_folder, write


def _launches(root: Path) -> list[dict[str, Any]]:
    launches: list[dict[str, Any]] = json.loads(format_json(check_folder(root)))["launches"]
    return launches


def _fronts(launch: dict[str, Any], root: Path) -> list[str]:
    return sorted(
        f"{Path(f['file']).relative_to(root).as_posix()}:{f['line']}"
        if Path(f["file"]).is_absolute()
        else f"{f['file']}:{f['line']}"
        for f in launch["fronts"]
    )


_SPLIT_COMPOSE = """\
services:
  nginx:
    image: nginx:alpine
    volumes:
      - ./nginx/conf.d:/etc/nginx/conf.d:ro
    ports: ["80:80"]
  app:
    build: .
"""


def test_an_upstream_in_a_sibling_conf_d_file_serves_the_pass_of_another(tmp_path: Path) -> None:
    """A compose nginx mounts nginx/conf.d, whose upstream.conf defines `upstream django {
    server app:8000; }` and whose site.conf does `uwsgi_pass django;` (seen in
    certego/BuffaLogs): nginx includes conf.d/*.conf by one glob, one http context, so the
    uWSGI the app service starts on :8000 is behind site.conf's pass."""
    root = write(
        tmp_path,
        {
            "docker-compose.yml": _SPLIT_COMPOSE,
            "Dockerfile": 'FROM python:3.12\nCMD ["uwsgi", "--socket", ":8000", "--module", "app.wsgi"]\n',
            "nginx/conf.d/upstream.conf": "upstream django {\n    server app:8000;\n}\n",
            "nginx/conf.d/site.conf": (
                "server {\n    listen 80;\n    location / {\n"
                "        uwsgi_pass django;\n        include uwsgi_params;\n    }\n}\n"
            ),
        },
    )
    (launch,) = _launches(root)
    assert launch["server"] == "uwsgi"
    assert _fronts(launch, root) == ["nginx/conf.d/site.conf:4"]
    # Two sibling files both defining `upstream django` are alternatives (nginx refuses a
    # duplicate upstream in one context): the pass is joined to neither.
    (root / "nginx/conf.d/other.conf").write_text((root / "nginx/conf.d/upstream.conf").read_text())
    (launch,) = _launches(root)
    assert launch["fronts"] == []


def test_uwsgi_pass_reaches_a_gunicorn_set_to_speak_the_uwsgi_protocol(tmp_path: Path) -> None:
    """gunicorn 25+ speaks uWSGI's binary protocol with `protocol = "uwsgi"` in its config
    (gunicorn.org/uwsgi; seen in intelowlproject/GreedyBear): nginx's `uwsgi_pass` to its bind
    joins it, with no protocol-mismatch finding; an HTTP `proxy_pass` to the same bind does
    not (that gunicorn no longer answers HTTP)."""
    root = write(
        tmp_path,
        {
            "Procfile": "web: gunicorn app.wsgi -c gunicorn.conf.py\n",
            "gunicorn.conf.py": 'bind = "127.0.0.1:8000"\nworkers = 3\nprotocol = "uwsgi"\n',
            "nginx/site.conf": (
                "server {\n    listen 80;\n    location / {\n"
                "        uwsgi_pass 127.0.0.1:8000;\n        include uwsgi_params;\n    }\n"
                "    location /h/ {\n        proxy_pass http://127.0.0.1:8000;\n    }\n}\n"
            ),
        },
    )
    result = json.loads(format_json(check_folder(root)))
    (launch,) = result["launches"]
    assert launch["server"] == "gunicorn"
    assert _fronts(launch, root) == ["nginx/site.conf:4"]
    assert not [f for f in result["findings"] if "protocol" in f["rule"]]


def test_a_pass_to_a_map_of_a_constant_source_is_its_default(tmp_path: Path) -> None:
    """`map "" $backend { default http://app:8000; }` then `proxy_pass $backend;` (seen in
    IBM/mcp-context-forge): the map's source is the same string on every request, so the
    variable is always its default, and the compose nginx is the front of the gunicorn the app
    service starts on :8000."""
    root = write(
        tmp_path,
        {
            "docker-compose.yml": (
                "services:\n  nginx:\n    image: nginx:alpine\n    volumes:\n"
                "      - ./nginx.conf:/etc/nginx/nginx.conf:ro\n  app:\n    build: .\n"
            ),
            "Dockerfile": (
                'FROM python:3.12\nCMD ["gunicorn", "app.wsgi", "--bind", "0.0.0.0:8000"]\n'
            ),
            "nginx.conf": (
                "events {}\nhttp {\n"
                '    map "" $backend {\n        default http://app:8000;\n    }\n'
                "    server {\n        listen 80;\n"
                "        location / {\n            proxy_pass $backend;\n        }\n"
                "    }\n}\n"
            ),
        },
    )
    (launch,) = _launches(root)
    assert launch["server"] == "gunicorn"
    assert _fronts(launch, root) == ["nginx.conf:9"]


def test_a_build_target_stage_that_starts_a_server_is_a_launch(tmp_path: Path) -> None:
    """A Dockerfile whose `github_app` stage (FROM base, built FROM by no other stage) runs
    gunicorn, and whose last stage `cli` runs a command-line tool (seen in Codium-ai/pr-agent):
    the stage is what `docker build --target github_app` builds, so its gunicorn is a launch
    at its CMD, with a note naming the stage; a `test` stage running pytest is none."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12 AS base\nWORKDIR /app\nCOPY . .\n"
                "FROM base AS github_app\n"
                'CMD ["gunicorn", "-c", "gunicorn_config.py", "app.main:app"]\n'
                'FROM base AS test\nCMD ["pytest"]\n'
                'FROM base AS cli\nENTRYPOINT ["python", "tool.py"]\n'
            ),
            "gunicorn_config.py": 'bind = "0.0.0.0:3000"\nworkers = 2\n',
            "tool.py": "print('hello')\n",
        },
    )
    result = json.loads(format_json(check_folder(root)))
    (launch,) = result["launches"]
    assert launch["server"] == "gunicorn"
    assert launch["sockets"] == ["0.0.0.0:3000"]
    assert (Path(launch["chain"][0]["file"]).name, launch["chain"][0]["line"]) == ("Dockerfile", 5)
    assert any("--target github_app" in c["message"] and c["line"] == 5 for c in result["coverage"])


def test_a_loopback_pass_joins_the_one_server_of_its_image_whose_port_is_computed(
    tmp_path: Path,
) -> None:
    """An image copies nginx.conf (`proxy_pass http://127.0.0.1:8090`) and runs start.py,
    whose `uvicorn.run(port=Env.port)` the program computes (seen in OpenBMB/XAgent): that
    uvicorn is the only server of the container nginx passes to on its loopback, so it is the
    front, with a `joined-by-name` note saying the server's socket is computed."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.11\nRUN apt-get install -y nginx\nWORKDIR /app\n"
                "COPY nginx/nginx.conf /etc/nginx/nginx.conf\nCOPY . /app\n"
                'ENTRYPOINT ["python", "start.py"]\n'
            ),
            "start.py": (
                "import uvicorn\nfrom app.envs import Env\n\n"
                'if __name__ == "__main__":\n'
                '    uvicorn.run("app.main:app", host=Env.host, port=Env.port)\n'
            ),
            "app/__init__.py": "",
            "app/envs.py": "import os\n\nclass Env:\n    host = os.getenv('H')\n    port = int(os.getenv('P'))\n",
            "nginx/nginx.conf": (
                "events {}\nhttp {\n    server {\n        listen 5173;\n"
                "        location /api {\n            proxy_pass http://127.0.0.1:8090;\n"
                "        }\n    }\n}\n"
            ),
        },
    )
    result = json.loads(format_json(check_folder(root)))
    (launch,) = result["launches"]
    assert launch["server"] == "uvicorn"
    assert launch["sockets"] == []
    assert _fronts(launch, root) == ["nginx/nginx.conf:6"]
    assert any(
        c["kind"] == "joined-by-name" and "socket is computed" in c["message"]
        for c in result["coverage"]
    )
    # A config passing to a second loopback port (a log viewer on :23020, as meeb/tubesync's
    # image runs beside gunicorn) says the container runs other servers: none is joined.
    conf = root / "nginx/nginx.conf"
    conf.write_text(
        conf.read_text().replace(
            "        location /api {",
            "        location /logs {\n            proxy_pass http://127.0.0.1:23020;\n"
            "        }\n        location /api {",
        )
    )
    (launch,) = _launches(root)
    assert launch["fronts"] == []


def test_a_pass_to_a_service_whose_bind_is_computed_joins_at_the_one_exposed_port(
    tmp_path: Path,
) -> None:
    """nginx's `proxy_pass http://app:4444` to the compose service `app`, whose gunicorn binds
    an address its config computes (`bind = f"{settings.host}:{settings.port}"`, seen in
    IBM/mcp-context-forge) in an image that `EXPOSE`s 4444 alone: the front is joined, with a
    `joined-by-name` note saying the server's bind is not known here. A pass to another port of
    the same host (a sidecar's, 8787) is not joined to it, nor is any pass when the image
    exposes two ports: unknown, never guessed."""
    conf = (
        "events {}\nhttp {\n    server {\n        listen 80;\n"
        "        location / {\n            proxy_pass http://app:4444;\n        }\n"
        "        location /mcp {\n            proxy_pass http://app:8787;\n        }\n"
        "    }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "docker-compose.yml": (
                "services:\n  nginx:\n    image: nginx:alpine\n    volumes:\n"
                "      - ./nginx.conf:/etc/nginx/nginx.conf:ro\n  app:\n    build: .\n"
            ),
            "Dockerfile": (
                "FROM python:3.12\nWORKDIR /app\nCOPY . .\nEXPOSE 4444\n"
                'CMD ["gunicorn", "-c", "gunicorn.config.py", "app.main:app"]\n'
            ),
            "gunicorn.config.py": (
                "from app.config import settings\n"
                'bind = f"{settings.host}:{settings.port}"\nworkers = 2\n'
            ),
            "nginx.conf": conf,
        },
    )
    result = json.loads(format_json(check_folder(root)))
    (launch,) = result["launches"]
    assert launch["server"] == "gunicorn"
    assert _fronts(launch, root) == ["nginx.conf:6"]
    assert any(
        n["kind"] == "joined-by-name" and "bind is not known here" in n["message"]
        for n in result["coverage"]
    )
    (root / "Dockerfile").write_text((root / "Dockerfile").read_text().replace("4444", "4444 9000"))
    (launch,) = _launches(root)
    assert launch["fronts"] == []
