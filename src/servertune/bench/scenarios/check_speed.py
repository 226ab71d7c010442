"""`servertune check` speed: a 50-file nginx tree joined by includes, checked in well under 1 s;
a 300-file repository walked (`check .`) and checked in under 5 s.

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
    """Timed `check` runs per configuration (each one a repeat)."""

    repeats: int


SIZES = QuickFull(quick=CheckSpeedSizes(repeats=3), full=CheckSpeedSizes(repeats=20))


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


#: A repository walked as `servertune check .` walks it: this many files, half of them the
#: deployment files of its services (Dockerfile, entrypoint, gunicorn config, nginx site,
#: compose file), half source and docs the walk passes over. The target a pre-commit hook or CI
#: step over a whole repository can live with.
REPOSITORY_FILES = 300
REPOSITORY_TARGET_S = 5.0
REPOSITORY = "repository"


def build_repository(root: Path, files: int = REPOSITORY_FILES) -> Path:
    """Write a repository of `files` files: services of 10 files each (Dockerfile, entrypoint
    without `exec`, gunicorn config, nginx site, compose file, and five of source and docs)."""
    for n in range(files // 10):
        service = root / "services" / f"svc{n:02d}"
        (service / "docker").mkdir(parents=True)
        (service / "Dockerfile").write_text(
            "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
            'ENTRYPOINT ["/app/docker/entrypoint.sh"]\n'
        )
        (service / "docker" / "entrypoint.sh").write_text(
            "#!/bin/sh\nset -e\npython manage.py migrate\n"
            "gunicorn -c /app/gunicorn.conf.py app.wsgi:application\n"
        )
        (service / "gunicorn.conf.py").write_text(
            f"import multiprocessing\nbind = '0.0.0.0:{8000 + n}'\n"
            "workers = multiprocessing.cpu_count() * 2 + 1\ntimeout = 60\n"
        )
        (service / "docker" / "nginx.conf").write_text(
            f"server {{\n    listen 80;\n    location / {{\n        proxy_pass http://web:{8000 + n};\n"
            "        proxy_read_timeout 30s;\n    }\n}\n"
        )
        (service / "compose.yaml").write_text(
            "services:\n  web:\n    build: .\n    deploy:\n      resources:\n"
            "        limits:\n          cpus: '2'\n"
        )
        for name in ("app.py", "models.py", "views.py", "README.md", "requirements.txt"):
            (service / name).write_text("# source, not a deployment file\n")
    return root


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
        self.repository = build_repository(root / "repository")
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
        walked["config"] = f"repository walked ({REPOSITORY_FILES} files, `check .`)"
        targets.append(
            Target(
                f"worst seconds, a {REPOSITORY_FILES}-file repository walked and checked",
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
