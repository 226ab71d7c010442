"""`servertune check` speed: a 50-file nginx tree joined by includes, checked in well under 1 s.

The tree is what a host with many sites looks like: an nginx.conf that includes `mime.types`,
`conf.d/*.conf` and `sites-enabled/*`, each site with an upstream, a server, locations and an
`include` of shared proxy settings, plus one gunicorn config the sites point at (gunicorn's
loader runs in a child interpreter, the slowest part; it is timed too, separately). Each
measurement is a full `check_files()`: reading, parsing, linking and every rule.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["NGINX_FILES", "TARGET_S", "build_tree", "run"]

#: The issue's tree size and target.
NGINX_FILES = 50
TARGET_S = 1.0
FULL_RUNS = 20
QUICK_RUNS = 3


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


def _time(paths: list[Path], runs: int) -> tuple[list[float], int, int]:
    from servertune.check import check_files
    from servertune.machine import Machine

    times: list[float] = []
    files = findings = 0
    for _ in range(runs):
        started = time.perf_counter()
        result = check_files(paths, machine=Machine(cores=2))
        times.append(time.perf_counter() - started)
        files, findings = len(result.files), len(result.findings)
    return times, files, findings


def run(options: BenchOptions) -> Report:
    """Median and worst time of `check` on the nginx tree alone, and with a gunicorn config."""
    runs = QUICK_RUNS if options.quick else FULL_RUNS
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="servertune-check-speed-") as tmp:
        main = build_tree(Path(tmp) / "nginx")
        gunicorn = Path(tmp) / "gunicorn.conf.py"
        gunicorn.write_text('bind = "127.0.0.1:9000"\nworkers = 2\nkeepalive = 65\n')
        for label, paths in (
            ("nginx tree", [main]),
            ("nginx tree + gunicorn.conf.py", [main, gunicorn]),
        ):
            if options.progress:
                print(f"check-speed: {label}, {runs} runs", file=sys.stderr)
            times, files, findings = _time(paths, runs)
            rows.append(
                {
                    "config": label,
                    "files": files,
                    "findings": findings,
                    "runs": runs,
                    "median_s": round(statistics.median(times), 4),
                    "max_s": round(max(times), 4),
                }
            )
    tree = rows[0]
    return Report(
        scenario="check-speed",
        runs=rows,
        targets=[
            Target(
                f"median seconds, {tree['files']}-file nginx tree", tree["median_s"], "<", TARGET_S
            )
        ],
        notes=[
            (
                "one process, warm (the first run imports crossplane); the gunicorn config costs "
                "a child interpreter that imports gunicorn three times (as is, CPU count 3, 61)"
            )
        ],
    )
