"""`check` on launchers corpus 12 met (issue 44): framework CLIs that run uvicorn, programs
that look like a server's launcher, Hypercorn's Python configs, and server configs no launch
names.

Every fixture is written for the test; the public project where the pattern was seen is
named in the test's docstring.
"""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.sizing import Machine

MACHINE = Machine(cores=4, cores_source="--cores")


def test_litestar_run_is_uvicorn_with_its_options(tmp_path: Path) -> None:
    """numerique-gouv/ami-fc-proxy: a Procfile runs a script whose last line is `uv run
    litestar run -p ${PORT} -H ...`; Litestar's `run` starts uvicorn, so the launch is uvicorn
    with `-p`/`-H`/`-W` read as its `--port`/`--host`/`--workers` (and `--app` before `run`
    naming the app), never a file that starts no server."""
    (tmp_path / "Procfile").write_text("web: bash bin/start.sh\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "start.sh").write_text(
        '#!/bin/bash\nPORT="${PORT:-8000}"\nuv run litestar run -p ${PORT} -H 0.0.0.0 -W 3\n'
    )
    result = check_files([tmp_path / "Procfile"], machine=MACHINE, env={})
    assert result.errors == ()
    assert [(a.kind, a.workers.value) for a in result.apps] == [("uvicorn", 3)]
    assert [s.value for s in result.apps[0].sockets] == ["0.0.0.0:8000"]
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.12\nCMD ["litestar", "--app", "app:app", "run", "--port", "9000",'
        ' "--host", "0.0.0.0"]\n'
    )
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert [(a.kind, [s.value for s in a.sockets]) for a in result.apps] == [
        ("uvicorn", ["0.0.0.0:9000"])
    ]


def test_litestar_other_subcommands_start_no_uvicorn(tmp_path: Path) -> None:
    """`litestar database upgrade` (a migration) is no launch of uvicorn: only `run` serves."""
    script = tmp_path / "migrate.sh"
    script.write_text("#!/bin/sh\nlitestar --app app:app database upgrade\n")
    result = check_files([script], machine=MACHINE, env={})
    assert result.apps == ()


def test_a_manifest_running_litestar_run_is_uvicorn(tmp_path: Path) -> None:
    """A Kubernetes container's `command: [litestar, run, ...]` is uvicorn, as `fastapi run` is."""
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: api\n          image: api\n"
        '          command: ["litestar", "run", "--host", "0.0.0.0", "--web-concurrency", "2"]\n'
    )
    result = check_files([manifest], machine=MACHINE, env={})
    assert result.errors == ()
    assert [(a.kind, a.workers.value) for a in result.apps] == [("uvicorn", 2)]
