"""`servertune measure` reports the memory a worker holds once warm and how it grows per request:
a leaking app grows by what it keeps, a steady one by nothing; both reach the workload file."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from servertune.measure import measure_app
from servertune.measure.result import RSS_GROWTH_NOISE_KB, memory_figures
from servertune.workload_file import load_workload

#: What the leaking app keeps per request: far above the allocator's arena steps.
LEAK_KB = 256


def _leaking_app() -> Callable[..., Iterable[bytes]]:
    kept: list[bytearray] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        # bytearray(n) is written (zeroed) memory: resident, not just reserved.
        kept.append(bytearray(b"x" * (LEAK_KB * 1024)))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app


def _steady_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def test_a_leaking_app_grows_by_what_it_keeps(tmp_path: Path) -> None:
    """256 KiB kept per request: the growth per request is about 256 KiB, written to the file
    `gen --workload` reads, and the warm size is this process's RSS after warm-up.

    Measured in a fresh interpreter: in a test process that freed memory earlier, the leak
    reuses pages already resident and RSS grows by less than it keeps (seen: 128 KiB)."""
    path = tmp_path / "workload.toml"
    code = (
        "import json, sys\n"
        "from servertune.measure import measure_app\n"
        "from tests.test_measure_memory import _leaking_app\n"
        "m = measure_app('leak:app', app=_leaking_app(), requests=40, warmup=2)\n"
        "open(sys.argv[1], 'w', encoding='utf-8').write(m.to_toml())\n"
        "print(json.dumps({'memory': m.memory, 'table': m.table()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["memory"] is not None
    warm_mb, growth = result["memory"]
    assert warm_mb >= 1
    assert 0.8 * LEAK_KB <= growth <= 1.3 * LEAK_KB
    workload = load_workload(path)
    assert workload.memory_per_worker_mb == warm_mb
    assert workload.memory_growth_kb_per_request == round(growth, 3)
    assert "memory_growth_kb_per_request" in result["table"]


def test_a_steady_app_grows_by_nothing() -> None:
    """An app that keeps nothing: growth 0 (the allocator's steps are under the noise floor)."""
    m = measure_app("steady:app", app=_steady_app, requests=200, warmup=2)
    assert m.memory is not None
    assert m.memory[1] == 0.0
    assert "not counted" in m.table()


def test_growth_under_an_arena_is_noise() -> None:
    """Under RSS_GROWTH_NOISE_KB over the run is no growth; at or above it, it is spread over
    the requests; the warm size rounds up to whole MiB; unknown RSS is no figure."""
    assert memory_figures(10 * 1024, 10 * 1024 + RSS_GROWTH_NOISE_KB - 1, 10) == (10, 0.0)
    assert memory_figures(10 * 1024 + 1, 10 * 1024 + 4097, 4) == (11, 1024.0)
    assert memory_figures(None, 1, 1) is None
    assert memory_figures(1024, 0, 5) == (1, 0.0)  # shrinking is not growth
