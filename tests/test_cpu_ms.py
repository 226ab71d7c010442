"""`measure`'s CPU per request in milliseconds against what a real server spends per request.

Each app is measured in process (a quick run), then served by a real server (one uvicorn, or
one gunicorn sync worker) while wrk drives it for two seconds; the server's CPU per answered
request comes from /proc, as `bench app` takes it. What the plan counts for the server (the
measured `cpu_ms`, plus the ASGI server's own declared cost for an ASGI app) must be within
20 % of it: the quantity capacity depends on, which a share of the service time written with
two decimals could not hold (0.3 ms of 51 ms).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from servertune.bench.harness.ports import free_port
from servertune.bench.harness.stats import group_cpu_seconds
from servertune.measure.driver import measure_mix
from servertune.measure.target import WeightedPath
from servertune.sizing.defaults import ASGI_SERVER_MS_PER_REQUEST, WSGI_SERVER_MS_PER_REQUEST
from servertune.workload import Workload

HERE = Path(__file__).resolve().parent
TOLERANCE = 0.2
#: For a route that only awaits, all the CPU is sub-millisecond (0.06-0.09 ms of the app's, 0.14
#: of uvicorn's own declared cost): the server's share moves with the core's speed and with what
#: else runs (0.14-0.16 ms a request in all on a quiet machine, 0.17-0.21 beside the rest of the
#: suite), so the plan's 0.20-0.23 ms is 1.0-1.45 x what one uvicorn spends, and at 40 % one run
#: in four failed on a quiet machine (on the code of the last session too). 60 %
#: still fails what a share of the service time implied (0.02 of 20 ms: 0.4 ms of the app's,
#: 0.54 ms planned: 3.6 x).
TOLERANCE_SUB_MS = 0.6
WRK_SECONDS = 2

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk")


def _server(argv: list[str], port: int, cwd: Path = HERE, path: str = "/cpu") -> Iterator[int]:
    proc = subprocess.Popen(
        argv, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2):
                    break
            except OSError as error:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read() if proc.stderr else "") from error
                time.sleep(0.1)  # polling a server that is starting, bounded by the deadline
        yield proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def _server_ms_per_request(
    argv: list[str], port: int, path: str, connections: int, cwd: Path = HERE
) -> float:
    """CPU ms per answered request of the server's process group under wrk."""
    for pid in _server(argv, port, cwd, path):
        url = f"http://127.0.0.1:{port}{path}"
        subprocess.run(["wrk", "-t1", "-c2", "-d1s", url], check=True, capture_output=True)
        before = group_cpu_seconds(pid)
        done = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{WRK_SECONDS}s", url],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        spent = group_cpu_seconds(pid) - before
        match = re.search(r"(\d+) requests in", done.stdout)
        assert match is not None, done.stdout
        assert "Non-2xx" not in done.stdout, done.stdout
        assert "Socket errors" not in done.stdout, done.stdout
        return 1000 * spent / int(match[1])
    raise AssertionError("the server did not start")


def _measured(spec: str, path: str) -> Workload:
    mix = measure_mix(spec, [WeightedPath(path)], requests=10, app_dir=str(HERE))
    return Workload(**{k: v for k, v in mix.workload_values().items() if k != "app"})


@pytest.mark.parametrize(
    ("path", "connections", "tolerance"),
    [("/io", 64, TOLERANCE_SUB_MS), ("/cpu", 4, TOLERANCE)],
    ids=["awaiting-io", "cpu-bound"],
)
def test_asgi_cpu_ms_matches_what_one_uvicorn_spends(
    path: str, connections: int, tolerance: float
) -> None:
    """An ASGI app's measured cpu_ms plus uvicorn's own declared cost is within 20 % of the CPU
    one uvicorn process spends per request under load (40 % where it is all sub-millisecond)."""
    w = _measured("cpu_ms_apps:app", path)
    assert w.cpu_ms is not None
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "cpu_ms_apps:app", "--port", str(port),
            "--log-level", "warning", "--no-access-log"]  # fmt: skip
    served = _server_ms_per_request(argv, port, path, connections)
    planned = w.cpu_ms + ASGI_SERVER_MS_PER_REQUEST
    assert abs(planned / served - 1) <= tolerance, (w.cpu_ms, planned, served)


def test_wsgi_cpu_ms_matches_what_one_gunicorn_worker_spends() -> None:
    """A WSGI app's measured cpu_ms plus the WSGI server's own declared cost (what the plan's
    CPU ceiling counts) is within 20 % of the CPU one gunicorn sync worker (and its arbiter)
    spends per request. The app's cpu_ms alone was 0.80-0.88 x: the worker's accept, parsing
    and close are not the app's."""
    w = _measured("cpu_ms_apps:wsgi", "/cpu")
    assert w.cpu_ms is not None
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "cpu_ms_apps:wsgi", "-b", f"127.0.0.1:{port}",
            "-w", "1", "--log-level", "warning"]  # fmt: skip
    served = _server_ms_per_request(argv, port, "/cpu", 2)
    planned = w.cpu_ms + WSGI_SERVER_MS_PER_REQUEST
    assert abs(planned / served - 1) <= TOLERANCE, (w.cpu_ms, planned, served)


#: A Django project of one async view that awaits 5 ms: Django's ASGI handler runs each
#: request's signals in two threads it starts for the request, so the GIL changes hands within
#: every request.
DJANGO_FILES = {
    "djproj/__init__.py": "",
    "djproj/settings.py": (
        'SECRET_KEY = "test-only"\nDEBUG = False\nALLOWED_HOSTS = ["*"]\n'
        'ROOT_URLCONF = "djproj.urls"\nINSTALLED_APPS = []\nDATABASES = {}\nUSE_TZ = True\n'
        'MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]\n'
    ),
    "djproj/urls.py": (
        "import asyncio\nfrom django.http import JsonResponse\nfrom django.urls import path\n\n\n"
        "async def io(request):\n    await asyncio.sleep(0.005)\n"
        '    return JsonResponse({"ok": True})\n\n\nurlpatterns = [path("io", io)]\n'
    ),
    "djproj/asgi.py": (
        "import os\nfrom django.core.asgi import get_asgi_application\n\n"
        'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "djproj.settings")\n'
        "application = get_asgi_application()\n"
    ),
}


def test_a_django_view_s_cpu_ms_matches_one_uvicorn_on_one_core(tmp_path: Path) -> None:
    """A Django async view's cpu_ms plus uvicorn's own cost is within 60 % of the CPU one uvicorn
    spends per request on one core, as each process of a saturated server runs (all of it is
    sub-millisecond; 20 % where it is not). `measure`
    sweeps on one core too: alone on two, the view's threads took the GIL across cores, and
    both the in-process figure and one unpinned uvicorn's cost rose by a third."""
    pytest.importorskip("django")
    for name, text in DJANGO_FILES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    out = tmp_path / "workload.toml"
    # In a process of its own: Django's settings are once per process.
    subprocess.run(
        [sys.executable, "-m", "servertune", "measure", "djproj.asgi:application", "--path",
         "/io", "--requests", "10", "--app-dir", str(tmp_path), "--out", str(out)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    cpu_ms = float(re.findall(r"^cpu_ms = ([0-9.]+)$", out.read_text(), re.M)[0])
    port = free_port()
    core = max(os.sched_getaffinity(0))
    argv = ["taskset", "-c", str(core), sys.executable, "-m", "uvicorn",
            "djproj.asgi:application", "--port", str(port), "--log-level", "warning",
            "--no-access-log"]  # fmt: skip
    served = _server_ms_per_request(argv, port, "/io", 32, cwd=tmp_path)
    planned = cpu_ms + ASGI_SERVER_MS_PER_REQUEST
    # Sub-millisecond in all, like the awaiting FastAPI route: uvicorn's own share moves with
    # what else runs (0.63-0.78 ms a request in all, pinned, alone and beside the suite).
    assert abs(planned / served - 1) <= TOLERANCE_SUB_MS, (cpu_ms, planned, served)
