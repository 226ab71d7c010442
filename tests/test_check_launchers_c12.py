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


def test_a_program_given_an_app_is_a_launcher_not_followed(tmp_path: Path) -> None:
    """nationalarchives/ds-frontend: `CMD ["tna-wsgi", "main:app"]`, a base image's wrapper of
    a server, names the app as servers do (`module:attr`): a not-followed "looks like a
    launcher" note, never a file that starts no server."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM python:3.12\nCMD ["tna-wsgi", "main:app"]\n')
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert result.apps == ()
    kinds = [(n.kind, n.message) for n in result.notes]
    assert [k for k, _ in kinds] == ["not-followed"], kinds
    assert "looks like a launcher" in kinds[0][1]
    assert "main:app" in kinds[0][1]


def test_an_image_tag_or_a_host_port_is_no_app(tmp_path: Path) -> None:
    """`module:attr` is an app only when both sides are names: a worker given a host's port
    (`db:5432`) still starts no server."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM python:3.12\nCMD ["poller", "db:5432"]\n')
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert [n.kind for n in result.notes] == ["starts-no-server"]


def test_a_serve_subcommand_after_options_is_a_launcher_not_followed(tmp_path: Path) -> None:
    """CentOS/duffy: `ExecStart=/opt/duffy-virtualenv/bin/duffy -c /etc/duffy.yaml serve`, a
    console script whose `serve` subcommand starts uvicorn in its own code, after an option
    and its value: not followed (a launcher), never "starts no server"; its `worker`
    subcommand is still a unit that starts none."""
    unit = tmp_path / "app.service"
    unit.write_text(
        "[Service]\nExecStart=/opt/duffy-virtualenv/bin/duffy -c /etc/duffy.yaml serve\n"
    )
    result = check_files([unit], machine=MACHINE, env={})
    kinds = [(n.kind, n.message) for n in result.notes]
    assert [k for k, _ in kinds] == ["not-followed"], kinds
    assert "its subcommand 'serve' starts a server" in kinds[0][1]
    worker = tmp_path / "worker.service"
    worker.write_text(
        "[Service]\nExecStart=/opt/duffy-virtualenv/bin/duffy -c /etc/duffy.yaml worker -B\n"
    )
    result = check_files([worker], machine=MACHINE, env={})
    assert [n.kind for n in result.notes] == ["starts-no-server"]


def test_a_hypercorn_file_config_is_read_as_hypercorn(tmp_path: Path) -> None:
    """arquivo/memorial: `CMD ["hypercorn", "--config", "file:/app/hypercorn_config.py", ...]`
    names a Python Hypercorn config; its literal assignments are Hypercorn's settings (bind,
    workers), read without running it, and the file is never also a gunicorn launch."""
    (tmp_path / "hypercorn_config.py").write_text(
        'import os\nbind = ["0.0.0.0:8000"]\nworkers = int(os.environ.get("WORKERS", 4))\n'
        "graceful_timeout = 20\n"
    )
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
        'CMD ["hypercorn", "--config", "file:/app/hypercorn_config.py", "app:app"]\n'
    )
    result = check_files([dockerfile, tmp_path / "hypercorn_config.py"], machine=MACHINE, env={})
    assert result.errors == ()
    assert [(a.kind, a.workers.value) for a in result.apps] == [("hypercorn", 4)]
    app = result.apps[0]
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert app.graceful_timeout is not None
    assert app.graceful_timeout.value == 20
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_a_hypercorn_python_module_config_and_an_unknown_value(tmp_path: Path) -> None:
    """`hypercorn -c python:deploy.hypercorn app:app` names deploy/hypercorn.py; a setting it
    computes by running code (`workers = compute()`) is unknown, never Hypercorn's default."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "hypercorn.py").write_text(
        'from deploy.sizing import compute\nbind = "0.0.0.0:9000"\nworkers = compute()\n'
    )
    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\nexec hypercorn -c python:deploy.hypercorn app:app\n")
    result = check_files([script], machine=MACHINE, env={})
    assert result.errors == ()
    assert [a.kind for a in result.apps] == ["hypercorn"]
    assert [s.value for s in result.apps[0].sockets] == ["0.0.0.0:9000"]
    assert result.apps[0].workers.default  # not a value read: what `compute()` gives is unknown
    unresolved = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert [(n.at.file.name, n.at.line) for n in unresolved] == [("hypercorn.py", 3)]


def test_a_hypercorn_toml_bind_with_a_variable_is_no_address(tmp_path: Path) -> None:
    """front-matter/rogue-scholar-api: `hypercorn.toml` holds `bind = "0.0.0.0:$PORT"`, which
    Hypercorn never expands (TOML is no shell): no address is made of it (it was shown as
    `[0.0.0.0:$PORT]:8000`), and an unresolved-variable note says why."""
    config = tmp_path / "hypercorn.toml"
    config.write_text('accesslog = "-"\nbind = "0.0.0.0:$PORT"\n')
    result = check_files([config], machine=MACHINE, env={})
    assert result.errors == ()
    assert [a.sockets for a in result.apps] == [()]
    notes = [(n.kind, n.at.line) for n in result.notes]
    assert notes == [("unresolved-variable", 2)]


def test_a_container_image_or_a_task_queue_is_no_app(tmp_path: Path) -> None:
    """`docker run myapp:latest` (an image's tag) and `arq app.worker:Settings` (a task
    queue's worker, named as apps are) are not launchers of a server: still no server."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\ndocker run myapp:latest\n")
    assert [n.kind for n in check_files([script], machine=MACHINE, env={}).notes] == [
        "starts-no-server"
    ]
    script.write_text("#!/bin/sh\nexec arq app.worker:Settings\n")
    assert [n.kind for n in check_files([script], machine=MACHINE, env={}).notes] == [
        "starts-no-server"
    ]


def test_a_serve_subcommand_after_a_variable_of_options_is_a_launcher(tmp_path: Path) -> None:
    """CentOS/duffy's ansible unit: `ExecStart=/opt/venv/bin/duffy $DUFFY_OPTS serve
    $DUFFY_APP_OPTS`, the options in a variable the host's EnvironmentFile sets: the lone
    variable before `serve` is options (or nothing), so `serve` is still the subcommand and the
    line is not followed (a launcher), never "starts no server"; its `worker` subcommand after
    the same variable still starts none."""
    unit = tmp_path / "app.service"
    unit.write_text("[Service]\nExecStart=/opt/venv/bin/duffy $DUFFY_OPTS serve $DUFFY_APP_OPTS\n")
    result = check_files([unit], machine=MACHINE, env={})
    kinds = [(n.kind, n.message) for n in result.notes if n.kind != "unresolved-variable"]
    assert [k for k, _ in kinds] == ["not-followed"], kinds
    assert "its subcommand 'serve' starts a server" in kinds[0][1]
    other = tmp_path / "other.service"
    other.write_text("[Service]\nExecStart=/opt/venv/bin/duffy $DUFFY_OPTS worker -B\n")
    result = check_files([other], machine=MACHINE, env={})
    assert [n.kind for n in result.notes if n.kind != "unresolved-variable"] == ["starts-no-server"]
