"""gunicorn's native asgi worker: read from the installed gunicorn's own worker registry, chosen
for `gen gunicorn-asgi` when it is there (uvicorn's worker otherwise, with the reason in
`explain`), started for real behind nginx, and read back by `check` as an ASGI server."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.deployments import deploy_asgi
from servertune.bench.harness.supervision import Stack
from servertune.check import read_config
from servertune.check.model import AppServer
from servertune.cli import app
from servertune.machine import Machine, read_gunicorn_asgi_worker
from servertune.render import render_target
from servertune.sizing import PlanError, make_plan
from servertune.workload import Workload

from .test_asgi_servers import HOLD_MS, LOOP_HEAVY, _burst, _get, _placed

#: A fresh interpreter's reading of the machine fact.
READ_FACT = (
    "from servertune.machine import read_gunicorn_asgi_worker\nprint(read_gunicorn_asgi_worker())"
)
NATIVE = LOOP_HEAVY.model_copy(update={"gunicorn_asgi_worker": "native"})


def _machine(has_native: bool | None) -> Machine:
    return Machine(cores=2, gunicorn_asgi_worker=has_native)


def _without_gunicorn(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter where `import gunicorn` fails, as where it is not installed."""
    prelude = "import sys\nsys.modules['gunicorn'] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code, *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_machine_reads_the_native_worker_from_gunicorns_registry() -> None:
    """The installed gunicorn (>= 25.1, the project's floor) registers `asgi`, so the fact is
    True, and `Machine.read()` carries it."""
    from gunicorn.workers import SUPPORTED_WORKERS  # type: ignore[import-untyped]

    assert SUPPORTED_WORKERS["asgi"] == "gunicorn.workers.gasgi.ASGIWorker"
    assert read_gunicorn_asgi_worker() is True
    assert Machine.read().gunicorn_asgi_worker is True


def test_no_gunicorn_means_no_native_worker() -> None:
    """Where gunicorn cannot be imported the fact is False, not an error."""
    done = _without_gunicorn(READ_FACT)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_a_gunicorn_without_the_asgi_worker_has_no_native_worker(tmp_path: Path) -> None:
    """A gunicorn whose registry lacks `asgi` (as before 24.0) gives False: the registry is read,
    not the version number."""
    workers = tmp_path / "gunicorn" / "workers"
    workers.mkdir(parents=True)
    (tmp_path / "gunicorn" / "__init__.py").write_text("version_info = (23, 0, 0)\n")
    (workers / "__init__.py").write_text(
        "SUPPORTED_WORKERS = {'sync': 'gunicorn.workers.sync.SyncWorker'}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", READ_FACT],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


@pytest.mark.parametrize(
    ("asked", "has_native", "worker", "said"),
    [
        ("auto", True, "asgi", "'auto', and the installed gunicorn has it"),
        ("auto", False, "uvicorn_worker.UvicornWorker", "has no native asgi worker"),
        ("auto", None, "uvicorn_worker.UvicornWorker", "was not read"),
        ("uvicorn", True, "uvicorn_worker.UvicornWorker", "'uvicorn' as asked"),
        ("native", True, "asgi", "'native' as asked (the installed gunicorn has it)"),
        ("native", None, "asgi", "it needs gunicorn >= 25.1"),
    ],
)
def test_the_worker_class_follows_the_choice_and_the_installed_gunicorn(
    asked: str, has_native: bool | None, worker: str, said: str
) -> None:
    """'auto' takes the native worker only where gunicorn has it; a choice given is kept; the
    reason says which and why."""
    workload = LOOP_HEAVY.model_copy(update={"gunicorn_asgi_worker": asked})
    plan = make_plan(workload, _machine(has_native))
    assert plan.gunicorn_asgi_worker == worker
    assert said in plan.reasons["gunicorn_asgi_worker"]
    rendered = render_target("gunicorn-asgi", plan)
    # The header's measured numbers are uvicorn's worker's: a native file says so.
    of_uvicorn = "# Those numbers are of uvicorn's worker;"
    if worker == "asgi":
        assert 'worker_class = "asgi"\n' in rendered
        assert "uvicorn_worker" not in rendered
        assert of_uvicorn in rendered
    else:
        assert "from uvicorn_worker import UvicornWorker\n" in rendered
        assert "worker_class = ServertuneUvicornWorker\n" in rendered
        assert of_uvicorn not in rendered


def test_a_wsgi_app_has_no_gunicorn_asgi_worker() -> None:
    plan = make_plan(Workload(cores=2), _machine(True))
    assert plan.gunicorn_asgi_worker is None
    assert plan.reasons["gunicorn_asgi_worker"] == "interface is 'wsgi': no ASGI server"


def test_native_asked_where_gunicorn_lacks_it_is_a_plan_error() -> None:
    with pytest.raises(PlanError, match=r"^gunicorn_asgi_worker: 'native', but the gunicorn"):
        make_plan(NATIVE, _machine(False))


def test_cli_native_without_the_worker_is_one_error_line() -> None:
    """`gen gunicorn-asgi --gunicorn-asgi-worker native` where gunicorn has no asgi worker: one
    `error:` line naming the field and its flag, exit 2, nothing on stdout."""
    done = _without_gunicorn(
        "from servertune.cli import main\nsys.argv[0] = 'servertune'\nmain()",
        "gen", "gunicorn-asgi", "--interface", "asgi", "--cores", "2", "--app", "main:app",
        "--gunicorn-asgi-worker", "native",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "error: gunicorn_asgi_worker (--gunicorn-asgi-worker): 'native', but the gunicorn "
        "installed here has no 'asgi' worker"
    )


def test_cli_flag_and_explain_row() -> None:
    """The flag reaches the plan, and `explain` shows the worker class with its reason (this
    machine's gunicorn has the native worker, so 'auto' takes it)."""
    runner = CliRunner()
    base = ["--interface", "asgi", "--cores", "2", "--app", "main:app"]
    explained = runner.invoke(app, ["explain", *base])
    assert explained.exit_code == 0, explained.output
    row = next(line for line in explained.stdout.splitlines() if "gunicorn_asgi_worker" in line)
    assert " asgi " in row, row
    assert "'auto'" in row, row
    forced = runner.invoke(
        app, ["gen", "gunicorn-asgi", *base, "--gunicorn-asgi-worker", "uvicorn"]
    )
    assert forced.exit_code == 0, forced.output
    assert "worker_class = ServertuneUvicornWorker" in forced.stdout
    bad = runner.invoke(app, ["gen", "gunicorn-asgi", *base, "--gunicorn-asgi-worker", "uvloop"])
    assert bad.exit_code == 2
    assert "gunicorn_asgi_worker" in bad.stderr


def _server_header(port: int) -> str:
    """The Server header of the app server itself (nginx drops it from proxied answers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        response.read()
        return response.getheader("Server") or ""
    finally:
        connection.close()


def test_native_worker_serves_behind_nginx_and_nginx_admits_only_the_plan() -> None:
    """gunicorn-asgi.conf.py with the native worker, started by gunicorn behind nginx-asgi.conf:
    the app answers, gunicorn's own asgi worker serves it, and a burst of admission_limit + 6
    slow requests gets exactly admission_limit 200s and a 503 for the rest (the native worker
    has no connection limit of its own: nginx's admission is the one)."""
    with Stack(label="test-gunicorn-native") as stack:
        plan = _placed(stack, NATIVE)
        assert plan.gunicorn_asgi_worker == "asgi"
        deployment = deploy_asgi(
            stack, "gunicorn-native", plan, "gunicorn-asgi",
            env={"SERVERTUNE_BENCH_AWAIT_MS": str(HOLD_MS), "SERVERTUNE_BENCH_BLOCK_MS": "0"},
        )  # fmt: skip
        assert 'worker_class = "asgi"' in deployment.files["gunicorn-asgi.conf.py"]
        assert _server_header(plan.shared_socket.port or 0) == "gunicorn/asgi"
        burst = plan.admission_limit + 6
        statuses = _burst(plan.workload.listen_port, burst)
        shown = " ".join(map(str, statuses))
        assert statuses.count(200) == plan.admission_limit, shown
        assert statuses.count(503) == len(statuses) - plan.admission_limit >= 5, shown


def test_native_per_worker_instances_serve_behind_nginx_least_conn() -> None:
    """gunicorn-asgi-per-worker.conf.py with the native worker: one instance per socket, each
    gunicorn's asgi worker, answering through nginx-asgi-per-worker.conf."""
    with Stack(label="test-gunicorn-native-pw") as stack:
        plan = _placed(stack, NATIVE)
        deployment = deploy_asgi(
            stack, "gunicorn-native-pw", plan, "gunicorn-asgi", per_worker=True,
            env={"SERVERTUNE_BENCH_AWAIT_MS": "0"},
        )  # fmt: skip
        assert len(deployment.app_servers) == plan.processes
        assert 'worker_class = "asgi"' in deployment.files["gunicorn-asgi-per-worker.conf.py"]
        assert {_server_header(s.port or 0) for s in plan.sockets} == {"gunicorn/asgi"}
        status, body = _get(plan.workload.listen_port)
        assert (status, body[:4]) == (200, "pid ")


@pytest.mark.parametrize("target", ["gunicorn-asgi", "gunicorn-asgi-per-worker"])
def test_check_reads_the_native_config_as_an_asgi_server(target: str, tmp_path: Path) -> None:
    """`check` loads servertune's native-worker files with gunicorn and sees an ASGI server."""
    path = tmp_path / f"{target}.conf.py"
    path.write_text(render_target(target, make_plan(NATIVE)))
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert config.interface == "asgi"
    assert config.worker_class is not None
    assert config.worker_class.value == "asgi"


@pytest.mark.parametrize(
    "procfile",
    [
        "web: gunicorn -k asgi -w 3 main:app\n",
        "web: gunicorn --worker-class=asgi -w 3 main:app\n",
        "web: gunicorn -k gunicorn.workers.gasgi.ASGIWorker -w 3 main:app\n",
    ],
)
def test_check_reads_a_command_line_with_the_native_worker_as_asgi(
    procfile: str, tmp_path: Path
) -> None:
    """A command line naming the native worker (`-k asgi`, its long flag, its class path) is an
    ASGI server, as uvicorn's worker is; a gthread one stays WSGI."""
    path = tmp_path / "Procfile"
    path.write_text(procfile)
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert (config.interface, config.workers.value) == ("asgi", 3)
    path.write_text("web: gunicorn -k gthread -w 3 main:app\n")
    wsgi = read_config(path)
    assert isinstance(wsgi, AppServer)
    assert wsgi.interface == "wsgi"


def test_check_reads_a_subclass_of_the_native_worker_as_asgi(tmp_path: Path) -> None:
    """A worker class deriving from gunicorn's ASGIWorker is known for one by its ancestry."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(
        textwrap.dedent(
            """\
            from gunicorn.workers.gasgi import ASGIWorker


            class Tuned(ASGIWorker):
                pass


            worker_class = Tuned
            workers = 2
            """
        )
    )
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert config.interface == "asgi"
