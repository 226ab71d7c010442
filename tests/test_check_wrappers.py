"""Issue 44: wrappers and supervisors that run the server check reads. A wrapper whose
documented syntax puts the command after its own options and `--` (watchdog's `watchmedo
auto-restart`) runs that command; monofy runs every `|||`-separated command side by side after
its `&&` pre-commands; a supervisord [include] folder copied into an image holds the programs."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import describe, launches
from tests.folder_support import chains, check_folder, write


def test_watchmedo_auto_restart_runs_the_command_after_its_options_as_a_development_launch(
    tmp_path: Path,
) -> None:
    """`watchmedo auto-restart --directory=/app -p '*.py' --recursive -- SCRIPT ARGS` runs the
    script after `--` (seen in roboflow/inference's Dockerfile.onnx.cpu.dev), and the same
    wrapper before a server's own command line runs that server: each is a launch, shown as a
    development launch (watchmedo restarts it on every code change), not "starts no server"."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY start.sh /usr/local/bin/start.sh\n"
            "ENTRYPOINT watchmedo auto-restart --directory=/app -p '*.py' --recursive "
            "-- /usr/local/bin/start.sh main:app\n",
            "start.sh": '#!/bin/sh\nexec uvicorn "$1" --host 0.0.0.0 --port 9001\n',
            "api/Dockerfile": "FROM python:3.12\n"
            'CMD ["watchmedo", "auto-restart", "-d", "/app", "--signal", "SIGTERM", "--",'
            ' "gunicorn", "-w", "3", "-b", "0.0.0.0:8000", "app:app"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
    found = sorted((c[0][0], c[1]) for c in chains(result, tmp_path))
    assert found == [("Dockerfile:4", "uvicorn"), ("api/Dockerfile:2", "gunicorn")]
    lines = [describe(one) for one in launches(result.apps, result.links)]
    assert len(lines) == 2
    assert all("a development launch" in line for line in lines)
