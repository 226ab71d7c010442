"""Well-known third-party base images whose own CMD starts the Python server.

A Dockerfile `FROM tiangolo/uvicorn-gunicorn-fastapi` that only COPYs the app and sets ENV
runs the base image's `CMD ["/start.sh"]`, a script the repository does not hold. Each
family's documented launch is declared here once, as data read from the images' own sources:
the command the image runs, its WORKDIR and ENV, and the text of the start script reduced to
the line that starts the server, with the defaults the script picks from the files the image
holds (a repository's `./app/gunicorn_conf.py` COPYed to `/app/gunicorn_conf.py` becomes the
`-c` config). The Dockerfile reader builds the base image from this (`dockerfile.read_image`),
so the image's own ENV, a compose `environment:` and a compose `command: ... && /start.sh`
apply to it as to any base image a Dockerfile of the run builds. An image not listed here
keeps what check says of an unknown base.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["BaseLaunch", "known_base"]

#: Holds(path): whether the image built FROM the base holds the file at that container path.
Holds = Callable[[str], bool]


@dataclass(frozen=True)
class BaseLaunch:
    """What a base image family runs when the image built FROM it sets no ENTRYPOINT or CMD."""

    #: The family, as named in a launch's chain ("tiangolo/uvicorn-gunicorn").
    family: str
    #: The image's CMD, exec form.
    cmd: tuple[str, ...]
    workdir: str
    env: Mapping[str, str]
    #: Container path -> its text given what the image holds (the start script).
    files: Mapping[str, Callable[[Holds], str]]


def _first_held(holds: Holds, candidates: tuple[str, ...], default: str) -> str:
    return next((c for c in candidates if holds(c)), default)


def _gunicorn_start(worker: str) -> Callable[[Holds], str]:
    """start.sh of tiangolo's gunicorn images: the app module is app.main when /app/app/main.py
    is held, else main; the config is /app/gunicorn_conf.py, else /app/app/gunicorn_conf.py,
    else the image's own /gunicorn_conf.py; GUNICORN_CONF, MODULE_NAME, VARIABLE_NAME,
    APP_MODULE and WORKER_CLASS override them. (The sourced /app/prestart.sh starts no server.)"""

    def text(holds: Holds) -> str:
        module = "app.main" if holds("/app/app/main.py") else "main"
        conf = _first_held(
            holds, ("/app/gunicorn_conf.py", "/app/app/gunicorn_conf.py"), "/gunicorn_conf.py"
        )
        # The image's own /gunicorn_conf.py binds BIND, else HOST:PORT (0.0.0.0:80), and runs
        # WEB_CONCURRENCY workers, else a count from the cores it runs on: known only there.
        own = conf == "/gunicorn_conf.py"
        bind = ' -b "${BIND:-${HOST:-0.0.0.0}:${PORT:-80}}" -w "$WEB_CONCURRENCY"' if own else ""
        return (
            f'exec gunicorn -k "${{WORKER_CLASS:-{worker}}}" -c "${{GUNICORN_CONF:-{conf}}}"{bind}'
            f' "${{APP_MODULE:-${{MODULE_NAME:-{module}}}:${{VARIABLE_NAME:-app}}}}"\n'
        )

    return text


#: The uwsgi-nginx images' own /etc/uwsgi/uwsgi.ini, option by option, in its order
#: (github.com/tiangolo/uwsgi-nginx-docker docker-images/uwsgi.ini, COPYed to /etc/uwsgi/ by
#: docker-images/python3.12.dockerfile): the socket its nginx passes to and the hook that makes
#: SIGTERM drain the workers.
_UWSGI_IMAGE_INI = (
    ("socket", "/tmp/uwsgi.sock"),
    ("chown-socket", "nginx:nginx"),
    ("chmod-socket", "664"),
    ("hook-master-start", "unix_signal:15 gracefully_kill_them_all"),
    ("need-app", "true"),
    ("die-on-term", "true"),
    ("show-config", "true"),
)


def _uwsgi_start(holds: Holds) -> str:
    """start.sh of tiangolo's uwsgi-nginx images execs supervisord, whose uwsgi program runs
    `uwsgi --ini /etc/uwsgi/uwsgi.ini`, the image's own ini, written here as the options it
    holds (one line, at the FROM). uWSGI reads its UWSGI_* variables first, in the
    environment's order, and its command line after them (measured with uWSGI 2.0: UWSGI_INI
    naming an ini of `processes = 1` then UWSGI_PROCESSES=3 spawns 3 workers, the reverse
    order 1, and `--ini` on the command line overrides both). So the ini UWSGI_INI names
    (/app/uwsgi.ini by the image's ENV, the file the repository COPYs there) is read first,
    the image's UWSGI_CHEAPER and UWSGI_PROCESSES after it override its `cheaper` and
    `processes`, and the image's own ini comes last."""
    del holds
    flags = " ".join(f"--{name} '{value}'" for name, value in _UWSGI_IMAGE_INI)
    return f"exec uwsgi {flags}\n"


#: The families, each with the file of its source the facts come from.
_REGISTRY: tuple[tuple[re.Pattern[str], BaseLaunch], ...] = (
    # github.com/tiangolo/uvicorn-gunicorn-docker docker-images/python3.11.dockerfile
    # (CMD ["/start.sh"], WORKDIR /app/, ENV PYTHONPATH=/app) and docker-images/start.sh
    # (exec gunicorn -k "$WORKER_CLASS" -c "$GUNICORN_CONF" "$APP_MODULE"); the -fastapi and
    # -starlette images are built FROM it and add only packages (their repositories'
    # docker-images/*.dockerfile). ghcr.io/vincentsarago/uvicorn-gunicorn is a copy of it:
    # github.com/vincentsarago/containers uvicorn-gunicorn/Dockerfile and start.sh ("Original
    # code from https://github.com/tiangolo/uvicorn-gunicorn-docker", the same lines).
    (
        re.compile(
            r"tiangolo/uvicorn-gunicorn(?:-fastapi|-starlette)?"
            r"|ghcr\.io/vincentsarago/uvicorn-gunicorn"
        ),
        BaseLaunch(
            "tiangolo/uvicorn-gunicorn",
            ("/start.sh",),
            "/app",
            {"PYTHONPATH": "/app"},
            {"/start.sh": _gunicorn_start("uvicorn.workers.UvicornWorker")},
        ),
    ),
    # github.com/tiangolo/meinheld-gunicorn-docker docker-images/python3.9.dockerfile
    # (ENTRYPOINT ["/entrypoint.sh"], which sets APP_MODULE and GUNICORN_CONF as above and
    # execs its arguments; CMD ["/start.sh"]) and docker-images/start.sh
    # (exec gunicorn -k egg:meinheld#gunicorn_worker -c "$GUNICORN_CONF" "$APP_MODULE").
    (
        re.compile(r"tiangolo/meinheld-gunicorn(?:-flask)?"),
        BaseLaunch(
            "tiangolo/meinheld-gunicorn",
            ("/start.sh",),
            "/app",
            {"PYTHONPATH": "/app"},
            {"/start.sh": _gunicorn_start("egg:meinheld#gunicorn_worker")},
        ),
    ),
    # github.com/tiangolo/uwsgi-nginx-docker docker-images/python3.12.dockerfile (ENV
    # UWSGI_INI /app/uwsgi.ini, UWSGI_CHEAPER 2, UWSGI_PROCESSES 16, NGINX_MAX_UPLOAD 0,
    # NGINX_WORKER_PROCESSES 1, LISTEN_PORT 80 in that order, COPY uwsgi.ini /etc/uwsgi/,
    # CMD ["/start.sh"], WORKDIR /app),
    # docker-images/start.sh (exec /usr/bin/supervisord) and supervisord-debian.conf
    # ([program:uwsgi] command=/usr/local/bin/uwsgi --ini /etc/uwsgi/uwsgi.ini); the -flask
    # image (tiangolo/uwsgi-nginx-flask-docker) is built FROM it.
    (
        re.compile(r"tiangolo/uwsgi-nginx(?:-flask)?"),
        BaseLaunch(
            "tiangolo/uwsgi-nginx",
            ("/start.sh",),
            "/app",
            {
                "UWSGI_INI": "/app/uwsgi.ini",
                "UWSGI_CHEAPER": "2",
                "UWSGI_PROCESSES": "16",
                "NGINX_MAX_UPLOAD": "0",
                "NGINX_WORKER_PROCESSES": "1",
                "LISTEN_PORT": "80",
            },
            {"/start.sh": _uwsgi_start},
        ),
    ),
)

#: A registry host and Docker Hub's own names in front of the image's path.
_HUB = r"(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)/)?"
#: Each family's whole reference: the registry host, the path, a tag or a digest.
_REFERENCES = tuple(
    (re.compile(f"{_HUB}(?:{pattern.pattern})" + r"(?:[:@][\w.@:-]*)?"), launch)
    for pattern, launch in _REGISTRY
)


def known_base(reference: str) -> BaseLaunch | None:
    """The family of the image a FROM names (`tiangolo/uvicorn-gunicorn-fastapi:python3.11`,
    `docker.io/tiangolo/uwsgi-nginx-flask@sha256:...`); None for any other image."""
    return next(
        (launch for whole, launch in _REFERENCES if whole.fullmatch(reference.lower())), None
    )
