"""`servertune bench app --quick` on an ASGI app: a FastAPI app (Django's ASGI entry point is
benched beside its WSGI one in test_bench_app.py).

The FastAPI app (docs/recipes/bench-your-fastapi-app/main.py) awaits a local delay server on
/io, does Python work on /cpu and reads the body on /echo; the run adds a Procfile line as
`--against` and writes the HTML report, which headless Chromium opens: it must render with no
console message and no failed load, and its screenshot is kept as an artifact. The input
checks (--concurrency, --interface, --against) are one `error:` line each.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.html_report import render_html
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.report import BenchInputError, Report
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.app import default_levels, parse_concurrency
from servertune.bench.scenarios.app_asgi import (
    LAYOUTS,
    layouts_for,
    overload_repeats_note,
    read_user_command,
)
from servertune.cli import app

from .support import REPO

RECIPE = REPO / "docs" / "recipes" / "bench-your-fastapi-app"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]  # fmt: skip


#: One candidate per server kind of each side (the suite's time is bounded; the full run in the
#: recipe runs every layout): granian, gunicorn's uvicorn worker, the user's Procfile (uvicorn
#: --workers), and servertune's per-worker uvicorn and gunicorn-asgi. The Django run in
#: test_bench_app.py has the copied `uvicorn --workers (2 x cores) + 1`.
ONLY = (
    "granian-default", "gunicorn-uvicorn-2n+1", "against-Procfile",
    "servertune-uvicorn-per-worker", "servertune-gunicorn-asgi",
)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(args: list[str], tmp: Path) -> tuple[Any, dict[str, Any]]:
    out = tmp / "report.json"
    result = CliRunner().invoke(
        app, ["bench", "app", *args, "--quick", "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    return result, json.loads(out.read_text())


def _assert_nothing_left(report: dict[str, Any]) -> None:
    ports = {port for server in report["servers"] for port in server["ports"]}
    assert ports
    assert not ports & listening_ports()
    for server in report["servers"]:
        assert server["stopped"], server["name"]
        assert group_members(server["pgid"]) == [], server["name"]


@pytest.fixture(scope="module")
def fastapi_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    """One quick run of the recipe's FastAPI app on its three paths, with a Procfile line as
    --against, the delay server it awaits started here (and stopped after)."""
    tmp = tmp_path_factory.mktemp("fastapi")
    project = tmp / "project"
    project.mkdir()
    shutil.copy(RECIPE / "main.py", project / "main.py")
    port = _free_port()
    delay = subprocess.Popen(
        [sys.executable, str(RECIPE / "delay_server.py"), str(port), "50"],
        stdout=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        assert delay.stdout is not None
        assert b"delay server" in delay.stdout.readline()
        (project / "Procfile").write_text(
            "release: python -c pass\nweb: uvicorn main:app --workers 2 --port $PORT\n"
        )
        os.environ["UPSTREAM_URL"] = f"http://127.0.0.1:{port}/"
        _, report = _run(
            ["main:app", "--chdir", str(project), "--path", "/io=2", "--path", "/cpu",
             "--path", "/echo", "--against", str(project / "Procfile"),
             "--only", ",".join(ONLY), "--report", str(tmp / "report.html")],
            tmp,
        )  # fmt: skip
        yield report, tmp
    finally:
        os.environ.pop("UPSTREAM_URL", None)
        os.killpg(delay.pid, signal.SIGKILL)
        delay.wait()


def test_fastapi_every_layout_at_every_load(fastapi_run: tuple[dict[str, Any], Path]) -> None:
    """The copied layouts, the Procfile's command and servertune's layouts chosen are measured
    unloaded, at 2 x cores connections and under overload, in table order; 503s counted apart."""
    report, _ = fastapi_run
    order = [layout.name for layout in LAYOUTS if not layout.ours]
    order += ["against-Procfile", *(layout.name for layout in LAYOUTS if layout.ours)]
    expected = [name for name in order if name in ONLY]
    copied = [n for n in expected if not n.startswith("servertune")]
    ours = [n for n in expected if n.startswith("servertune")]
    cores = report["machine"]["cores"]
    for load in ("unloaded", "closed", "overload"):
        rows = [r for r in report["runs"] if r["load"] == load]
        assert [r["config"] for r in rows] == expected, load
    for row in report["runs"]:
        assert {"refused_503", "errors", "shed"} <= row.keys()
        if row["load"] == "overload" and row["config"] in copied:
            # An unbounded queue under overload may answer nothing within the client's timeout
            # on a busy machine: every request sent is then counted as an error (timeout), not lost.
            assert row["requests"] > 0, row["config"]
            assert row["rps"] > 0 or row["errors"] == row["requests"], row["config"]
        else:
            assert row["rps"] > 0, (row["config"], row["load"])
        if (
            row["load"] != "closed" and row["rps"] > 0
        ):  # the client's own lag is a part of each admitted latency
            assert 0 <= row["send_lag_p99_ms"] <= row["p99_ms"], row
    closed = [r for r in report["runs"] if r["load"] == "closed"]
    assert {r["concurrency"] for r in closed} == {2 * cores}
    over = {r["config"]: r for r in report["runs"] if r["load"] == "overload"}
    # Only servertune's layouts sit behind an admission limit: only they shed.
    assert all(over[name]["refused_503"] == 0 for name in copied)
    assert any(over[name]["refused_503"] > 0 for name in ours)
    assert report["versions"]["fastapi"]
    assert "uvicorn_worker.UvicornWorker" in report["commands"]["gunicorn-uvicorn-2n+1"]
    assert "--workers 2" in report["commands"]["against-Procfile"]
    assert report["commands"]["servertune-uvicorn-per-worker"].startswith(
        "servertune gen uvicorn-per-worker --cores"
    )
    assert any(note.startswith("verdict overload: ") for note in report["notes"])
    (per_repeat,) = [n for n in report["notes"] if "at overload / unloaded p99 per repeat: " in n]
    assert per_repeat.startswith("servertune-")
    assert [t["op"] for t in report["targets"]] == [">=", "<=", "=="]
    _assert_nothing_left(report)


def test_html_report_renders_in_chromium(fastapi_run: tuple[dict[str, Any], Path]) -> None:
    """Headless Chromium opens the report with no console message and no failed load; the
    screenshot (a phone's width) is kept next to it."""
    _, tmp = fastapi_run
    page = tmp / "report.html"
    text = page.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for remote in ("https://", "<script", "<link", "url("):
        assert remote not in text
    assert text.index("Verdict") < text.index("<table") < text.index("<svg")
    shot = tmp / "report.png"
    done = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chromium'}",
         "--window-size=412,2400", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    log = done.stderr
    assert done.returncode == 0, log
    assert "CONSOLE" not in log, log
    assert "net::ERR" not in log, log
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


def test_html_escapes_every_value() -> None:
    """App paths, commands and notes are user input: none of it becomes markup."""
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    report = Report(
        scenario="app",
        runs=[{"config": hostile, "load": "closed", "concurrency": 4, "rps": 1.0, "p99_ms": 2.0}],
        notes=[f"verdict c=4: {hostile}"],
        versions={hostile: hostile},
        commands={hostile: hostile},
    )
    page = render_html(report, command=hostile)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;" in page


@pytest.mark.parametrize(
    ("flag", "value", "reason"),
    [
        ("--concurrency", "0", "must be at least 1"),
        ("--concurrency", "-8", "must be at least 1"),
        ("--concurrency", "8,x", "is not a whole number"),
        ("--concurrency", "8.5", "is not a whole number"),
        ("--concurrency", "8,8", "is given twice"),
        ("--concurrency", "99999999999999999999", "more than 1000"),
        ("--concurrency", "", "is not a whole number"),
        ("--interface", "rsgi", "must be wsgi or asgi"),
        ("--only", ",", "name at least two candidates"),
    ],
)
def test_bad_levels_are_one_error_line(flag: str, value: str, reason: str) -> None:
    result = CliRunner().invoke(app, ["bench", "app", "main:app", flag, value, "--quick"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {flag}: "), result.output
    assert reason in lines[0]


def test_concurrency_is_sorted_and_default_levels_double_past_the_ceiling() -> None:
    assert parse_concurrency("128, 8,32") == (8, 32, 128)
    assert default_levels(2, 40) == [2, 4, 8, 16, 32, 64]
    assert default_levels(4, 4) == [4, 8]


def test_against_reads_procfiles_and_scripts(tmp_path: Path) -> None:
    """The command line is read with the server's own CLI; what cannot be benched is refused."""
    procfile = tmp_path / "Procfile"
    procfile.write_text("web: granian --interface asgi main:app --workers 3 --port ${PORT}\n")
    command = read_user_command(procfile, port=8000)
    assert (command.server, command.workers) == ("granian", 3)
    assert command.argv("127.0.0.1", 9)[-4:] == ["--host", "127.0.0.1", "--port", "9"]
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\nexec uvicorn main:app --uds /tmp/x.sock\n")
    with pytest.raises(BenchInputError, match="--uds binds a socket of its own"):
        read_user_command(script, port=8000)
    script.write_text("#!/bin/sh\nexec uvicorn main:app --workers nope\n")
    with pytest.raises(BenchInputError, match="uvicorn refuses its command line"):
        read_user_command(script, port=8000)
    bad = tmp_path / "Procfile.dev"
    bad.write_text("worker: celery\nclock: beat\n")
    with pytest.raises(BenchInputError, match="none named `web`"):
        read_user_command(bad, port=8000)


def test_layout_list_is_data() -> None:
    """servertune's four layouts, and the copied ones with their workers on 2 cores."""
    ours = [layout.name for layout in LAYOUTS if layout.ours]
    assert ours == [
        "servertune-uvicorn-per-worker", "servertune-uvicorn", "servertune-granian",
        "servertune-gunicorn-asgi",
    ]  # fmt: skip
    copied = [layout for layout in layouts_for(2) if not layout.ours]
    assert [(layout.name, layout.workers(2)) for layout in copied] == [  # type: ignore[misc]
        ("uvicorn-1-worker", 1), ("uvicorn-2n+1", 5), ("fastapi-run-4", 4),
        ("granian-default", 1), ("gunicorn-uvicorn-2n+1", 5),
    ]  # fmt: skip


def test_overload_target_is_shown_per_repeat_with_what_shared_the_cores() -> None:
    """Each repeat's overload p99 / unloaded p99, next to its load generator lag and other work."""
    # The default (adaptive) run measures the baseline in every round its layout runs, the
    # overload level only while its verdict is open: repeats pair by number, not by position.
    calm = {"repeats": [{"p99_ms": 50.0, "repeat": 0}, {"p99_ms": 55.0, "repeat": 1},
                        {"p99_ms": 60.0, "repeat": 2}]}  # fmt: skip
    over = {
        "repeats": [
            {"p99_ms": 100.0, "rps": 700.0, "send_lag_p99_ms": 3.0, "other_cpu_cores": 0.1,
             "repeat": 0},
            {"p99_ms": 420.0, "rps": 480.0, "send_lag_p99_ms": 226.0, "other_cpu_cores": 1.2,
             "repeat": 2},
        ]
    }  # fmt: skip
    note = overload_repeats_note("servertune-x", calm, over)
    assert note.startswith("servertune-x: admitted p99 at overload / unloaded p99 per repeat: ")
    assert (
        "2.00x (700 req/s admitted, the load generator's send lag p99 3.0 ms, other work 0.1 cores)"
        in note
    )
    assert "; 7.00x (480 req/s admitted, the load generator's send lag p99 226.0 ms" in note
