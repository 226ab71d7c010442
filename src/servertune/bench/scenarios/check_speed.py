"""`servertune check` speed: a 50-file nginx tree joined by includes, checked in well under 1 s;
a 300-file repository walked (`check .`) and checked in under 5 s. The repository is shaped like
the public ones (`build_repository`: twenty projects whose Dockerfiles, entrypoints, compose
files, Kubernetes manifests, Procfiles and nginx sites name each other), so a cost that grows
with the square of the tree's size shows here as it does on a real one.

The tree is what a host with many sites looks like: an nginx.conf that includes `mime.types`,
`conf.d/*.conf` and `sites-enabled/*`, each site with an upstream, a server, locations and an
`include` of shared proxy settings, plus one gunicorn config the sites point at (read from its
syntax tree, never run, and handed to gunicorn's own `Config`; timed too, separately). Each
measurement is a full `check_files()`: reading, parsing, linking and every rule.

`--corpus DIR` also times one `check` of a whole corpus of deployment files: the files each
`DIR/<project>/expected.json` names (the layout of servertune's own test corpus), or, without
any, every file under DIR (hidden ones left out). Its target is `CORPUS_TARGET_S`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run

__all__ = [
    "CORPUS_TARGET_S",
    "NGINX_FILES",
    "REPOSITORY_FILES",
    "REPOSITORY_TARGET_S",
    "SIZES",
    "TARGET_S",
    "CheckSpeed",
    "CheckSpeedSizes",
    "build_repository",
    "build_tree",
    "corpus_files",
]

#: The issue's tree size and target.
NGINX_FILES = 50
TARGET_S = 1.0
#: The configurations timed: the nginx tree alone, then with a gunicorn config beside it.
TREE = "nginx tree"
TREE_AND_GUNICORN = "nginx tree + gunicorn.conf.py"
#: A whole corpus of deployment files (30+ real projects' files: gunicorn configs, Dockerfiles,
#: compose files, Procfiles, scripts, manifests) in one `check`: the target a pre-commit hook
#: or CI step over a repository's deployment files can live with.
CORPUS_TARGET_S = 5.0
CORPUS = "corpus"


@dataclass(frozen=True)
class CheckSpeedSizes:
    """Timed `check` runs per configuration (each one a repeat), and the files of the
    generated repository (the quick run's is smaller, for the tests: the target is the full
    run's)."""

    repeats: int
    repository_files: int


def build_tree(root: Path, files: int = NGINX_FILES) -> Path:
    """Write an nginx tree of `files` files (main + mime.types + proxy snippet + sites); return main."""
    (root / "conf.d").mkdir(parents=True)
    (root / "sites-enabled").mkdir()
    (root / "snippets").mkdir()
    (root / "mime.types").write_text("types {\n    text/html html;\n    text/css css;\n}\n")
    (root / "snippets" / "proxy.conf").write_text(
        'proxy_http_version 1.1;\nproxy_set_header Connection "";\n'
        "proxy_set_header Host $host;\nproxy_read_timeout 60s;\n"
    )
    (root / "conf.d" / "common.conf").write_text(
        "keepalive_timeout 75s;\nclient_max_body_size 10m;\nserver_tokens off;\n"
    )
    sites = files - 4
    for n in range(sites):
        (root / "sites-enabled" / f"site{n:02d}.conf").write_text(
            f"upstream app{n} {{\n    server 127.0.0.1:{9000 + n};\n    keepalive 8;\n"
            "    keepalive_timeout 60s;\n}\n\n"
            f"server {{\n    listen 80;\n    server_name site{n}.example.com;\n\n"
            "    location /static/ {\n        alias /srv/static/;\n    }\n\n"
            f"    location / {{\n        include snippets/proxy.conf;\n        proxy_pass http://app{n};\n    }}\n}}\n"
        )
    main = root / "nginx.conf"
    main.write_text(
        "worker_processes 2;\nevents {\n    worker_connections 1024;\n}\n\n"
        "http {\n    include mime.types;\n    include conf.d/*.conf;\n"
        "    include sites-enabled/*;\n}\n"
    )
    return main


#: A repository walked as `servertune check .` walks it: this many files, in projects shaped
#: like the public ones of check's corpora (each a Dockerfile that copies an entrypoint and
#: the server's config, compose files that build it and put nginx in front, Kubernetes
#: manifests that run the image, a Procfile, a supervisord config, env files, packaging, and
#: source and docs the walk passes over), each file naming the others, so that every lookup
#: that goes across the tree costs what it costs on a real repository. The target a pre-commit
#: hook or CI step over a whole repository can live with.
REPOSITORY_FILES = 300
REPOSITORY_TARGET_S = 5.0
REPOSITORY = "repository"
#: The files of one project of the generated repository (`build_repository`).
PROJECT_FILES = 15

SIZES = QuickFull(
    quick=CheckSpeedSizes(repeats=3, repository_files=5 * PROJECT_FILES),
    full=CheckSpeedSizes(repeats=20, repository_files=REPOSITORY_FILES),
)


def build_repository(root: Path, files: int = REPOSITORY_FILES) -> Path:
    """Write a repository of `files` files (a multiple of PROJECT_FILES): projects of
    PROJECT_FILES files each, one server per project (gunicorn, uWSGI every third, uvicorn
    every fifth) started by an entrypoint a Dockerfile copies, behind nginx."""
    for n in range(files // PROJECT_FILES):
        _write_project(root / "projects" / f"p{n:02d}", n)
    return root


def _write_project(project: Path, n: int) -> None:
    """One project of `build_repository`: twelve deployment files and three others."""
    server = "uvicorn" if n % 5 == 4 else "uwsgi" if n % 3 == 2 else "gunicorn"
    port = 8000 + n
    for folder in ("docker/nginx", "k8s", "app"):
        (project / folder).mkdir(parents=True, exist_ok=True)
    config = {
        "gunicorn": ("gunicorn.conf.py", "/etc/gunicorn/gunicorn.conf.py"),
        "uwsgi": ("uwsgi.ini", "/etc/uwsgi/uwsgi.ini"),
        "uvicorn": ("logging.ini", "/etc/app/logging.ini"),
    }[server]
    start = {
        "gunicorn": f"exec gunicorn -c {config[1]} app.wsgi:application",
        "uwsgi": f"exec uwsgi --ini {config[1]}",
        "uvicorn": (
            f'exec uvicorn app.asgi:application --host 0.0.0.0 --port "${{PORT:-{port}}}" '
            f"--workers 2 --log-config {config[1]} --timeout-keep-alive 5"
        ),
    }[server]
    _write_image(project, server, port, config, start)
    _write_platforms(project, n, port)
    _write_others(project, n, server, config[0])


def _write_image(
    project: Path, server: str, port: int, config: tuple[str, str], start: str
) -> None:
    """The Dockerfile, the entrypoint it copies and the server config it copies."""
    (project / "Dockerfile").write_text(
        "FROM python:3.12-slim AS build\nWORKDIR /build\nCOPY pyproject.toml .\n"
        "RUN pip wheel --wheel-dir /wheels .\n\n"
        f"FROM python:3.12-slim\nENV APP_HOME=/srv/app PORT={port} PYTHONUNBUFFERED=1\n"
        "WORKDIR /srv/app\nCOPY --from=build /wheels /wheels\n"
        "RUN pip install --no-cache-dir /wheels/*\n"
        "COPY docker/entrypoint.sh /entrypoint.sh\n"
        f"COPY docker/{config[0]} {config[1]}\n"
        "COPY docker/supervisord.conf /etc/supervisor/conf.d/worker.conf\n"
        f"COPY . /srv/app\nEXPOSE {port}\nSTOPSIGNAL SIGTERM\n"
        'ENTRYPOINT ["/entrypoint.sh"]\nCMD ["web"]\n'
    )
    (project / "docker" / "entrypoint.sh").write_text(
        '#!/bin/sh\nset -e\ncd "$APP_HOME"\ncase "$1" in\n  web)\n'
        f"    python manage.py migrate --noinput\n    {start}\n    ;;\n"
        "  worker)\n    exec supervisord -n -c /etc/supervisor/conf.d/worker.conf\n    ;;\n"
        '  *)\n    exec "$@"\n    ;;\nesac\n'
    )
    (project / "docker" / config[0]).write_text(
        {
            "gunicorn": (
                "import multiprocessing\nimport os\n\n"
                f"bind = '0.0.0.0:' + os.environ.get('PORT', '{port}')\n"
                "workers = int(os.environ.get('WEB_CONCURRENCY', multiprocessing.cpu_count() * 2 + 1))\n"
                "threads = 2\ntimeout = 60\nkeepalive = 5\ngraceful_timeout = 30\n"
                "accesslog = '-'\n"
            ),
            "uwsgi": (
                f"[uwsgi]\nmodule = app.wsgi:application\nhttp-socket = :{port}\n"
                "master = true\nprocesses = %(%k * 2)\nthreads = 2\nharakiri = 60\n"
                "vacuum = true\ndie-on-term = true\nbuffer-size = 32768\n"
            ),
            "uvicorn": (
                "[loggers]\nkeys=root\n\n[handlers]\nkeys=console\n\n"
                "[formatters]\nkeys=plain\n\n[logger_root]\nlevel=INFO\nhandlers=console\n\n"
                "[handler_console]\nclass=StreamHandler\nformatter=plain\nargs=(sys.stdout,)\n\n"
                "[formatter_plain]\nformat=%(levelname)s %(message)s\n"
            ),
        }[server]
    )


def _write_platforms(project: Path, n: int, port: int) -> None:
    """What runs the image: supervisord, compose with nginx in front, Kubernetes."""
    (project / "docker" / "supervisord.conf").write_text(
        "[supervisord]\nnodaemon=true\n\n[program:worker]\n"
        "command=celery -A app worker --concurrency 2\nstopwaitsecs=60\n\n"
        "[program:beat]\ncommand=celery -A app beat\n"
    )
    (project / "docker" / "nginx" / "default.conf").write_text(
        f"upstream app {{\n    server web:{port};\n    keepalive 16;\n}}\n\n"
        "server {\n    listen 80;\n    client_max_body_size 20m;\n\n"
        "    location /static/ {\n        alias /srv/app/static/;\n    }\n\n"
        "    location / {\n        proxy_pass http://app;\n        proxy_http_version 1.1;\n"
        '        proxy_set_header Connection "";\n        proxy_set_header Host $host;\n'
        "        proxy_read_timeout 30s;\n    }\n}\n"
    )
    (project / "docker-compose.yml").write_text(
        f"services:\n  web:\n    build: .\n    image: example/p{n:02d}:latest\n"
        "    command: web\n    env_file: .env\n    environment:\n"
        f"      PORT: '{port}'\n    deploy:\n      resources:\n        limits:\n"
        "          cpus: '2'\n    stop_grace_period: 30s\n"
        "  worker:\n    build: .\n    command: worker\n    env_file: .env\n"
        "  nginx:\n    image: nginx:1.27\n    ports:\n      - '80:80'\n    volumes:\n"
        "      - ./docker/nginx/default.conf:/etc/nginx/conf.d/default.conf:ro\n"
        "    depends_on:\n      - web\n  db:\n    image: postgres:16\n"
    )
    (project / "docker-compose.prod.yml").write_text(
        "services:\n  web:\n    environment:\n      WEB_CONCURRENCY: '4'\n"
        "    deploy:\n      replicas: 2\n"
    )
    (project / "k8s" / "deployment.yaml").write_text(
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: p{n:02d}-web\nspec:\n"
        f"  replicas: 2\n  selector:\n    matchLabels:\n      app: p{n:02d}-web\n"
        f"  template:\n    metadata:\n      labels:\n        app: p{n:02d}-web\n    spec:\n"
        "      terminationGracePeriodSeconds: 30\n      containers:\n        - name: web\n"
        f"          image: example/p{n:02d}:latest\n          args: [web]\n"
        f"          env:\n            - name: PORT\n              value: '{port}'\n"
        f"          ports:\n            - containerPort: {port}\n"
        "          resources:\n            limits:\n              cpu: '1'\n"
        "              memory: 512Mi\n---\n"
        f"apiVersion: v1\nkind: Service\nmetadata:\n  name: p{n:02d}-web\nspec:\n"
        f"  selector:\n    app: p{n:02d}-web\n  ports:\n    - port: 80\n"
        f"      targetPort: {port}\n"
    )
    (project / "k8s" / "ingress.yaml").write_text(
        f"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: p{n:02d}\n"
        "  annotations:\n    nginx.ingress.kubernetes.io/proxy-read-timeout: '30'\n"
        f"spec:\n  rules:\n    - host: p{n:02d}.example.com\n      http:\n        paths:\n"
        "          - path: /\n            pathType: Prefix\n            backend:\n"
        f"              service:\n                name: p{n:02d}-web\n"
        "                port:\n                  number: 80\n"
    )


def _write_others(project: Path, n: int, server: str, config: str) -> None:
    """The env file, the Procfile, the packaging, and the source and docs the walk skips."""
    (project / ".env").write_text(
        f"DATABASE_URL=postgres://app:app@db:5432/p{n:02d}\nWEB_CONCURRENCY=3\nDEBUG=0\n"
    )
    (project / "Procfile").write_text(
        "release: python manage.py migrate --noinput\n"
        + {
            "gunicorn": f"web: gunicorn -c docker/{config} app.wsgi:application\n",
            "uwsgi": f"web: uwsgi --ini docker/{config}\n",
            "uvicorn": "web: uvicorn app.asgi:application --host 0.0.0.0 --port $PORT\n",
        }[server]
        + "worker: celery -A app worker\n"
    )
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "p{n:02d}"\nversion = "1.0"\n'
        'dependencies = ["django>=5", "celery>=5"]\n\n'
        f'[project.scripts]\np{n:02d}-admin = "app.cli:main"\n'
    )
    module = "asgi" if server == "uvicorn" else "wsgi"
    (project / "app" / f"{module}.py").write_text(
        f"from django.core.{module} import get_{module}_application\n\n"
        f"application = get_{module}_application()\n"
    )
    (project / "app" / "cli.py").write_text("def main() -> None:\n    print('admin')\n")
    (project / "README.md").write_text(f"# p{n:02d}\n\nA service of the repository.\n")


def corpus_files(directory: Path) -> list[Path]:
    """The files a corpus directory holds for `check`: those each `<project>/expected.json`
    names (its `files`), else every file under it but hidden ones. BenchInputError when there
    is none."""
    import json

    from servertune.bench.harness.report import BenchInputError

    if not directory.is_dir():
        raise BenchInputError(f"--corpus: {directory}: not a directory")
    files: list[Path] = []
    for expected in sorted(directory.glob("*/expected.json")):
        try:
            named = json.loads(expected.read_text())["files"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise BenchInputError(f"--corpus: {expected}: no readable `files`: {error}") from None
        files.extend(expected.parent / name for name in named)
    if not files:
        files = sorted(
            p
            for p in directory.rglob("*")
            if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        )
    if not files:
        raise BenchInputError(f"--corpus: {directory}: no files")
    return files


class CheckSpeed(BaseScenario[CheckSpeedSizes]):
    """Median and worst time of `check` on the nginx tree alone, and with a gunicorn config."""

    name = "check-speed"
    needs = ("crossplane",)
    sizes = SIZES

    def setup(self, run: Run[CheckSpeedSizes]) -> None:
        """Write the tree and the gunicorn config; one untimed run imports the parsers."""
        from servertune.check import check_files
        from servertune.machine import Machine

        root = run.stack.dir / "check-speed"
        main = build_tree(root / "nginx")
        gunicorn = root / "gunicorn.conf.py"
        gunicorn.write_text('bind = "127.0.0.1:9000"\nworkers = 2\nkeepalive = 65\n')
        self.paths = {TREE: [main], TREE_AND_GUNICORN: [main, gunicorn]}
        # The repository is walked in each timed run (discovery is part of the cost).
        self.repository = build_repository(root / "repository", run.size.repository_files)
        self.paths[REPOSITORY] = []
        self.machine = Machine(cores=2)
        check_files([main], machine=self.machine)
        corpus = run.options.extra.get("corpus")
        if corpus is not None:
            from servertune.bench.harness.report import BenchInputError
            from servertune.check import CheckInputError

            self.paths[CORPUS] = corpus_files(Path(corpus))
            try:  # untimed: a corpus check cannot read is said before any timing
                check_files(self.paths[CORPUS], machine=self.machine, env={})
            except CheckInputError as error:
                raise BenchInputError(f"--corpus: {error}") from None

    def configs(self, run: Run[CheckSpeedSizes]) -> Sequence[str]:
        """The tree alone, then with the gunicorn config (then the corpus, when given)."""
        return list(self.paths)

    def measure(
        self, run: Run[CheckSpeedSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One full `check_files()`: reading, parsing, linking and every rule."""
        from servertune.check import check_files

        # The corpus is read as written: its files' environment, not this shell's.
        env: dict[str, str] | None = {} if config == CORPUS else None
        started = time.perf_counter()
        if config == REPOSITORY:
            from servertune.check.discover import discover

            walk = discover(self.repository)
            result = check_files(list(walk.files), machine=self.machine, discovered=[walk])
        else:
            result = check_files(self.paths[config], machine=self.machine, env=env)
        seconds = time.perf_counter() - started
        return {
            "config": config,
            "files": len(result.files),
            "findings": len(result.findings),
            "seconds": seconds,
        }

    def summarize(self, run: Run[CheckSpeedSizes], results: Results) -> Report:
        """Median and worst seconds per configuration; the target on the tree alone."""
        rows: list[dict[str, Any]] = []
        for config in self.paths:
            samples = results.rows(config)
            rows.append(
                {
                    "config": config,
                    "files": samples[-1]["files"],
                    "findings": samples[-1]["findings"],
                    "runs": len(samples),
                    "median_s": round(results.median_of(config, "seconds"), 4),
                    "max_s": round(max(s["seconds"] for s in samples), 4),
                }
            )
        tree = rows[0]
        targets = [
            Target(
                f"median seconds, {tree['files']}-file nginx tree", tree["median_s"], "<", TARGET_S
            )
        ]
        (walked,) = [row for row in rows if row["config"] == REPOSITORY]
        walked["config"] = f"repository walked ({run.size.repository_files} files, `check .`)"
        targets.append(
            Target(
                f"worst seconds, a {run.size.repository_files}-file repository walked and checked",
                walked["max_s"],
                "<",
                REPOSITORY_TARGET_S,
            )
        )
        if CORPUS in self.paths:
            corpus = rows[-1]
            corpus["config"] = f"corpus ({len(self.paths[CORPUS])} files checked)"
            targets.append(
                Target(
                    f"worst seconds, the corpus's {len(self.paths[CORPUS])} files in one check",
                    corpus["max_s"],
                    "<",
                    CORPUS_TARGET_S,
                )
            )
        return Report(
            scenario=self.name,
            runs=rows,
            targets=targets,
            notes=[
                (
                    "one process, warm (one untimed run first imports crossplane); "
                    "the gunicorn config is read from its syntax tree for two CPU counts, never "
                    "run; the configurations alternate"
                )
            ],
        )
