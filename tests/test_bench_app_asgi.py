"""`servertune bench app --quick` on an ASGI app: a FastAPI app (Django's ASGI entry point is
benched beside its WSGI one in test_bench_app.py).

The FastAPI app (docs/recipes/bench-your-fastapi-app/main.py) awaits a local delay server on
/io, does Python work on /cpu and reads the body on /echo; the run adds a Procfile line as
`--against` and writes the HTML report, which headless Chromium opens: it must render with no
console message and no failed load, and its screenshot is kept as an artifact. The input
checks (--concurrency, --interface, --against) are one `error:` line each.
"""

from __future__ import annotations

import html
import json
import os
import re
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
from servertune.bench.harness.report import BenchInputError, Report, Target
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.app import default_levels, parse_concurrency
from servertune.bench.scenarios.app_asgi import (
    LAYOUTS,
    layouts_for,
    overload_repeats_note,
    read_user_command,
)
from servertune.cli import app

from .support import REPO, assert_reproduce_section

RECIPE = REPO / "docs" / "recipes" / "bench-your-fastapi-app"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]  # fmt: skip


#: One candidate per server kind of each side (the suite's time is bounded; the full run in the
#: recipe runs every layout): granian, gunicorn's uvicorn worker, the user's Procfile (uvicorn
#: --workers), and servertune's per-worker uvicorn behind nginx and behind HAProxy in nginx's
#: place, and gunicorn-asgi. The Django run in test_bench_app.py has the copied `uvicorn
#: --workers (2 x cores) + 1`.
ONLY = (
    "granian-default", "gunicorn-uvicorn-2n+1", "against-Procfile",
    "servertune-uvicorn-haproxy", "servertune-uvicorn-per-worker", "servertune-gunicorn-asgi",
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
             "--only", ",".join(ONLY), "--concurrency", "2,8",
             "--report", str(tmp / "report.html")],
            tmp,
        )  # fmt: skip
        yield report, tmp
    finally:
        os.environ.pop("UPSTREAM_URL", None)
        os.killpg(delay.pid, signal.SIGKILL)
        delay.wait()


def test_fastapi_every_layout_at_every_load(fastapi_run: tuple[dict[str, Any], Path]) -> None:
    """The copied layouts, the Procfile's command and servertune's layouts chosen are measured
    unloaded, at each --concurrency level and under overload, in table order; 503s counted
    apart; the report names the app's own stack (FastAPI's), not every framework installed."""
    report, _ = fastapi_run
    order = [layout.name for layout in LAYOUTS if not layout.ours]
    order += ["against-Procfile", *(layout.name for layout in LAYOUTS if layout.ours)]
    expected = [name for name in order if name in ONLY]
    copied = [n for n in expected if not n.startswith("servertune")]
    ours = [n for n in expected if n.startswith("servertune")]
    cores = report["machine"]["cores"]
    for load in ("unloaded", "closed", "overload"):
        rows = [r for r in report["runs"] if r["load"] == load]
        per_level = 2 if load == "closed" else 1  # rows go level by level, table order in each
        assert [r["config"] for r in rows] == expected * per_level, load
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
    assert {r["concurrency"] for r in closed} == {2, 8}
    assert cores
    over = {r["config"]: r for r in report["runs"] if r["load"] == "overload"}
    # Only servertune's layouts sit behind an admission limit: only they shed.
    assert all(over[name]["refused_503"] == 0 for name in copied)
    assert any(over[name]["refused_503"] > 0 for name in ours)
    assert report["versions"]["fastapi"]
    assert report["versions"]["starlette"]
    assert "django" not in report["versions"]  # installed here (the Django tests), not this app's
    assert {"uvicorn", "granian", "gunicorn", "uvicorn-worker"} <= report["versions"].keys()
    # The headline's data: one verdict per load level compared (unloaded names no winner).
    # Overload has none when the open-loop client, calibrated on these cores, cannot send
    # 1.5 x the plan's capacity (a busy CI run): its verdict line then says so, with the rate.
    (overload_said,) = [n for n in report["notes"] if n.startswith("verdict overload: ")]
    measurable = "overload not measurable here" not in overload_said
    if not measurable:
        assert "the open-loop client sends at most" in overload_said
    levels = ["c=2", "c=8", *(["overload"] if measurable else [])]
    assert [v["level"] for v in report["verdicts"]] == levels
    assert all(v["winner"] in ("servertune", "copied", None) for v in report["verdicts"])
    assert any(n.startswith("adaptive run: ") for n in report["notes"])
    assert report["elapsed_s"] > 0
    assert "uvicorn_worker.UvicornWorker" in report["commands"]["gunicorn-uvicorn-2n+1"]
    assert "--workers 2" in report["commands"]["against-Procfile"]
    assert report["commands"]["servertune-uvicorn-per-worker"].startswith(
        "servertune gen uvicorn-per-worker --cores"
    )
    # HAProxy in nginx's place, started from `gen haproxy-asgi-per-worker`, really in front.
    assert (
        " && servertune gen haproxy-asgi-per-worker --cores"
        in (report["commands"]["servertune-uvicorn-haproxy"])
    )
    assert "haproxy" in {server["kind"] for server in report["servers"]}
    assert any(note.startswith("verdict overload: ") for note in report["notes"])
    (per_repeat,) = [n for n in report["notes"] if "at overload / unloaded p99 per repeat: " in n]
    assert per_repeat.startswith("servertune-")
    assert [t["op"] for t in report["targets"]][:3] == [">=", "<=", "=="]
    # Then one capacity target per servertune row: the plan's capacity for its server against
    # the saturation that server reached without admission (its copied layout in the run, else
    # the row's own), with a note splitting the CPU per answered request.
    # (A target that is not measurable may quote the plan's capacity in its reason, as
    # "1.00 x the plan's capacity (7874 req/s)": only a name that starts with it counts.)
    capacity = [
        t for t in report["targets"] if re.match(r"[\w.+-]+: the plan's capacity \(", t["name"])
    ]
    assert sorted(t["name"].split(":")[0] for t in capacity) == sorted(ours)
    capacity_notes = [n for n in report["notes"] if n.startswith("capacity servertune-")]
    assert len(capacity_notes) == len(ours)
    assert all("per answered request: app servers " in n for n in capacity_notes)
    # The open-loop client was calibrated, and no open-loop level offered more than it sends.
    closed_verdicts = [v for v in report["verdicts"] if v["level"].startswith("c=")]
    assert all(v["p99_verdict"] in P99_VERDICTS for v in closed_verdicts)
    for verdict in closed_verdicts:  # each side's p99 inside its own repeats' range
        for p99, (low, high) in zip(verdict["p99_ms"], verdict["p99_ranges"], strict=True):
            assert low <= p99 <= high, verdict
    (client,) = [n for n in report["notes"] if n.startswith("the open-loop client used ")]
    assert "overload" in client
    _assert_nothing_left(report)


#: Injected into a copy of the report (the report itself has no script): measures, once laid
#: out, the page's width against the window's, each table wrapper's, and every text of every
#: chart against its chart's box, and writes it into the parent page's DOM, which --dump-dom
#: prints. The copy is the `srcdoc` of an iframe exactly as wide as the phone or desktop window
#: (headless Chromium's own window is at least 500 px wide); a srcdoc frame shares its parent's
#: origin, so it may write there.
MEASURE = """<script>
(() => {
  const out = {inner: window.innerWidth, page: document.documentElement.scrollWidth,
               wraps: [], charts: []};
  for (const w of document.querySelectorAll(".wrap")) out.wraps.push([w.scrollWidth, w.clientWidth]);
  for (const svg of document.querySelectorAll("svg.chart")) {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")];
    const outside = texts.filter(t => {
      const r = t.getBoundingClientRect();
      return r.left < box.left - 1 || r.right > box.right + 1 ||
             r.top < box.top - 1 || r.bottom > box.bottom + 1;
    }).map(t => t.textContent);
    out.charts.push({name: svg.getAttribute("aria-label"), width: box.width,
                     texts: texts.map(t => t.textContent), outside});
  }
  const pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  parent.document.body.appendChild(pre);
})();
</script>"""


def _chromium(tmp: Path, page: Path, width: int, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"chromium-{width}-{len(extra)}"
    return subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
         f"--window-size={width},2400", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_fastapi_report_reproduces_every_candidate_that_ran(
    fastapi_run: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    """Every candidate of the run (the copied ones, the Procfile's, servertune's behind nginx
    and behind HAProxy) is in the Reproduce section with a line to paste and its files; the
    local app (main:app) is never said to be "not installed"."""
    report, tmp = fastapi_run
    assert set(report["commands"]) == set(ONLY)
    assert_reproduce_section(report, (tmp / "report.html").read_text(), tmp_path)
    assert "haproxy.cfg" in report["files"]["servertune-uvicorn-haproxy"]
    assert "main" not in report["versions"]


def test_html_report_renders_in_chromium(fastapi_run: tuple[dict[str, Any], Path]) -> None:
    """Headless Chromium opens the report with no console message and no failed load; the
    screenshot (a phone's width) is kept next to it."""
    _, tmp = fastapi_run
    page = tmp / "report.html"
    text = page.read_text()
    # What a <pre> shows is text, not a load: the Reproduce section's nginx.conf `proxy_pass http://`.
    markup = re.sub(r"<pre>.*?</pre>", "", text, flags=re.S)
    for remote in ("https://", "http://", "<script", "<link", "<img", "@import"):
        assert remote not in markup.replace('"http://www.w3.org/', '"'), remote
    assert "url(" not in text.replace("url(#", "")  # only the charts' own clip paths
    assert text.index("Verdict") < text.index("<svg") < text.index('<table class="results"')
    shot = tmp / "report.png"
    done = _chromium(tmp, page, 390, f"--screenshot={shot}")
    log = done.stderr
    assert done.returncode == 0, log
    assert "CONSOLE" not in log, log
    assert "net::ERR" not in log, log
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


@pytest.mark.parametrize("width", [1280, 390])
def test_html_report_fits_the_window(fastapi_run: tuple[dict[str, Any], Path], width: int) -> None:
    """At a desktop's 1280 px and a phone's 390 px: no horizontal overflow of the page (at 1280
    none in any table either), and every text of every chart (axis labels, ticks, legend)
    inside its chart's box, measured by Chromium's own layout."""
    _, tmp = fastapi_run
    measured_page = tmp / f"measure-{width}.html"
    text = (tmp / "report.html").read_text()
    framed = html.escape(text.replace("</body>", MEASURE + "</body>"), quote=True)
    measured_page.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        f'<iframe style="border:0;width:{width}px;height:2400px" srcdoc="{framed}"></iframe>'
        "</body></html>"
    )
    done = _chromium(tmp, measured_page, width + 100, "--dump-dom")
    assert done.returncode == 0, done.stderr
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    out = json.loads(html.unescape(found.group(1)))
    assert out["inner"] == width
    assert out["page"] <= width, out
    if width >= 1280:
        assert all(scroll <= client for scroll, client in out["wraps"]), out["wraps"]
    # Closed-loop req/s and p99, and the overload chart.
    assert len(out["charts"]) == 3, [c["name"] for c in out["charts"]]
    for chart in out["charts"]:
        assert chart["outside"] == [], chart
        assert chart["width"] <= width
    labels = {t for chart in out["charts"] for t in chart["texts"]}
    assert {"connections (closed loop)", "req/s (successful answers)", "p99 latency (ms)"} <= labels


def test_html_escapes_every_value() -> None:
    """App paths, layout names, commands, notes and versions are user input: none of it
    becomes markup, in the text or in the charts."""
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    runs: list[dict[str, Any]] = [
        {"config": name, "load": "closed", "concurrency": c, "rps": rps, "rps_low": rps * 0.9,
         "rps_high": rps * 1.1, "p99_ms": 2.0}
        for name, rps in ((hostile, 10.0), ("servertune-x", 20.0)) for c in (2, 8)
    ]  # fmt: skip
    runs += [
        {"config": name, "load": "overload", "concurrency": None, "rps": 5.0, "good_rps": 4.0,
         "offered_rps": 40.0, "refused_503": 3, "errors": 1, "requests": 40, "p99_ms": 3.0}
        for name in (hostile, "servertune-x")
    ]  # fmt: skip
    verdict = {
        "level": hostile, "metric": hostile, "ours": "servertune-x", "ours_value": 20.0,
        "ours_range": [19.0, 21.0], "copied": hostile, "copied_value": 10.0,
        "copied_range": [9.0, 11.0], "ratio": 2.0, "winner": "servertune", "repeats": 2,
        "offered_rps": None, "p99_ms": [2.0, 2.0],
    }  # fmt: skip
    report = Report(
        scenario="app",
        runs=runs,
        notes=[f"verdict c=4: {hostile}", hostile],
        versions={hostile: hostile},
        commands={hostile: hostile},
        verdicts=[verdict],
        targets=[Target(hostile, 1.0, ">=", 1.0)],
    )
    page = render_html(report, command=hostile)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;" in page
    assert page.count("<svg") == 3  # the hostile name reached the charts, escaped


def test_report_without_matplotlib_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    """--report draws its charts with matplotlib: without it, one line naming the `plot` extra
    before anything runs, and no file."""
    code = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'matplotlib' else real(n, *a)\n"
        "from servertune.cli import main\n"
        "sys.argv = ['servertune', 'bench', 'app', 'main:app', '--report', sys.argv[1]]\n"
        "main()\n"
    )
    out = tmp_path / "r.html"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert lines == ["error: --report needs matplotlib: pip install 'servertune[plot]'"], lines
    assert not out.exists()


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


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["app", "main:app", "--thorough", "--quick"], "--thorough: not with --quick"),
        (["balance", "--thorough"], "--thorough: scenario balance has one full run already"),
    ],
)
def test_thorough_is_refused_where_it_means_nothing(args: list[str], reason: str) -> None:
    """--thorough is bench app's every-measurement run: with --quick, or for a scenario whose
    full run is already every measurement, it is one error line."""
    result = CliRunner().invoke(app, ["bench", *args])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"error: {reason}"], result.output


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
    """servertune's six layouts (HAProxy in nginx's place first), and the copied ones with their
    workers on 2 cores."""
    ours = [(layout.name, layout.front) for layout in LAYOUTS if layout.ours]
    assert ours == [
        ("servertune-uvicorn-haproxy", "haproxy"), ("servertune-granian-haproxy", "haproxy"),
        ("servertune-uvicorn-per-worker", "nginx"), ("servertune-uvicorn", "nginx"),
        ("servertune-granian", "nginx"), ("servertune-gunicorn-asgi", "nginx"),
    ]  # fmt: skip
    # HAProxy takes nginx's place only in front of one server per socket.
    assert all(layout.per_worker for layout in LAYOUTS if layout.front == "haproxy")
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


def test_open_loop_rates_stay_within_what_the_client_sends() -> None:
    """Overload is 4 x the plan's capacity unless the calibrated client sends less: then capped
    there, and named not measurable once the cap falls below 1.5 x the capacity."""
    from servertune.bench.scenarios.app.levels import (
        MIN_OVERLOAD_FACTOR,
        OVERLOAD_FACTOR,
        open_loop_rates,
        overload_unmeasurable,
    )

    assert open_loop_rates(1000.0) == {"unloaded": 100.0, "overload": 1000.0 * OVERLOAD_FACTOR}
    assert open_loop_rates(1000.0, 10_000.0) == open_loop_rates(1000.0)
    assert open_loop_rates(1000.0, 2500.0)["overload"] == 2500.0
    assert overload_unmeasurable(1000.0, None) is None
    assert overload_unmeasurable(1000.0, MIN_OVERLOAD_FACTOR * 1000.0) is None
    why = overload_unmeasurable(6545.0, 5000.0)
    assert why is not None
    assert why.startswith("not measurable here: the open-loop client sends at most 5000 req/s")
    assert "0.76 x the plan's capacity (6545 req/s)" in why


def test_a_client_lag_past_the_unloaded_p99_makes_overload_unmeasurable() -> None:
    """The admitted p99 is judged only where the client's own send lag stayed within the
    layout's unloaded p99: the /fast run's 980 ms lag against 4.12 ms is the client's tail."""
    from servertune.bench.scenarios.app.verdicts import client_lag_unmeasurable

    assert client_lag_unmeasurable({"send_lag_p99_ms": 3.0}, 50.0) is None
    assert client_lag_unmeasurable({"send_lag_p99_ms": None}, 50.0) is None
    why = client_lag_unmeasurable({"send_lag_p99_ms": 980.0}, 4.12)
    assert why is not None
    assert "send lag p99 980 ms exceeds the unloaded p99 4.12 ms" in why


def test_the_client_note_says_what_its_ceiling_did_to_overload() -> None:
    """Offered as asked, capped at the client's ceiling, or not an overload at all."""
    from servertune.bench.harness.open_loop_ceiling import ClientCeiling
    from servertune.bench.scenarios.app.notes import client_note

    # 0.1 ms per request on 2 cores: 5000 req/s within a quarter of them.
    client = ClientCeiling(cpu_ms_per_request=0.1, cores=2, sent=2000, answered=2000)
    assert client.rps == pytest.approx(5000.0)
    assert client_note(client, 600.0).endswith("overload offered as asked (2400 req/s)")
    assert "overload offered 5000 req/s, capped at that ceiling (2.50 x the plan's" in (
        client_note(client, 2000.0)
    )
    assert "overload not measurable here: the open-loop client sends at most 5000" in (
        client_note(client, 6545.0)
    )


#: What a closed level's p99 comparison may say.
P99_VERDICTS = ("servertune lower", "copied lower", "within noise")


def test_p99s_differ_only_when_their_widened_ranges_are_apart() -> None:
    """The /fast run's 15.4 ms against 3.26 ms at 8 connections was one stall in one of two
    1 s loads (27.8 and 3.0 ms): ranges that overlap are 'within noise', whatever the ratio."""
    from servertune.bench.scenarios.app.verdicts import P99_NOISE_BAND, p99_spread, p99_verdict

    def row(*p99s: float) -> dict[str, float]:
        low, high = p99_spread(list(p99s))
        return {"p99_ms_low": low, "p99_ms_high": high}

    assert p99_verdict(row(27.8, 3.0), row(3.2, 3.3)) == "within noise"
    assert p99_verdict(row(3.0, 3.4), row(12.0, 14.0)) == "servertune lower"
    assert p99_verdict(row(12.0, 14.0), row(3.0, 3.4)) == "copied lower"
    # One load each: apart only beyond the band's reach on both sides.
    edge = (1 + P99_NOISE_BAND) / (1 - P99_NOISE_BAND)
    assert p99_verdict(row(10.0), row(10.0 * edge * 0.99)) == "within noise"
    assert p99_verdict(row(10.0), row(10.0 * edge * 1.01)) == "servertune lower"
    # A row with no 2xx in any repeat has no p99 spread: no verdict, on either side.
    assert p99_verdict(row(10.0), {}) is None
    assert p99_verdict({}, row(10.0)) is None


def test_the_headline_says_when_overload_was_not_measurable() -> None:
    """An overload the client could not send is neither a win nor a tie: the headline says why."""
    from servertune.bench.harness.html_report import headline
    from servertune.bench.harness.report import Report
    from servertune.bench.scenarios.app.levels import overload_unmeasurable

    why = overload_unmeasurable(6545.0, 5000.0)
    tie = {"level": "c=8", "winner": None, "ours": "servertune-granian", "ratio": 1.0}
    report = Report(scenario="app", runs=[], verdicts=[tie])
    report.notes = [f"verdict overload: overload {why}: best servertune servertune-granian ..."]
    lines = headline(report)
    assert lines[-1] == f"Overload: {why}."
    assert "No clear difference at: c=8." in lines


def test_overload_targets_are_not_measured_where_the_client_could_not_overload() -> None:
    """The /fast case: the calibrated client sends less than 1.5 x the plan's capacity, so the
    three overload targets carry the reason and no value (neither met nor missed); with a
    client that can, a send lag past the unloaded p99 still leaves the p99 and errors unjudged."""
    from types import SimpleNamespace

    from servertune.bench.harness.open_loop_ceiling import ClientCeiling
    from servertune.bench.harness.report import Report
    from servertune.bench.scenarios.app.scenario import AppBench

    bench = object.__new__(AppBench)
    bench.plan = SimpleNamespace(asgi_capacity_rps=6545.0)
    bench.workload = SimpleNamespace(cpu_fraction=0.96)
    row = {"good_rps": 6000.0, "p99_ms": 9.8, "errors": 0, "send_lag_p99_ms": 2.0}
    by_load = {name: {"overload": dict(row), "unloaded": {"p99_ms": 2.6}} for name in "ab"}
    bench.client = ClientCeiling(cpu_ms_per_request=0.084, cores=2, sent=2000, answered=2000)
    report = Report(scenario="app", runs=[])
    bench._overload_targets(report, "a", "b", by_load)
    assert [t.met for t in report.targets] == [None, None, None]
    assert all("not measurable here: the open-loop client sends at most" in t.name
               for t in report.targets)  # fmt: skip
    bench.client = ClientCeiling(cpu_ms_per_request=0.01, cores=2, sent=2000, answered=2000)
    report = Report(scenario="app", runs=[])
    by_load["a"]["overload"]["send_lag_p99_ms"] = 40.0
    bench._overload_targets(report, "a", "b", by_load)
    assert [t.met for t in report.targets] == [True, None, None]
    assert "send lag p99 40 ms exceeds the unloaded p99 2.6 ms" in report.targets[1].name
    by_load["a"]["overload"]["send_lag_p99_ms"] = 1.0
    report = Report(scenario="app", runs=[])
    bench._overload_targets(report, "a", "b", by_load)
    assert [t.met for t in report.targets] == [True, False, True]  # 9.8 / 2.6 = 3.8 > 2


def _closed(concurrency: int, rps: float, refused: int = 0, **cpu: float) -> dict[str, Any]:
    row: dict[str, Any] = {"concurrency": concurrency, "rps": rps, "refused_503": refused,
                           "requests": 1000 + refused}  # fmt: skip
    row.update(cpu)
    return row


def test_saturation_is_the_best_closed_level_once_the_top_level_sheds_or_stops_growing() -> None:
    """A row has saturated where its highest level shed or its req/s grew under 1.25 x while the
    connections doubled; its best req/s is then set against the plan's capacity for its server
    (+-20 %). A row still growing is only a floor: its target is not judged."""
    from types import SimpleNamespace

    from servertune.bench.scenarios.app.capacity import (
        planned_rps,
        saturation,
        saturation_target,
    )

    plan = SimpleNamespace(asgi_capacity_rps=900.0, granian_capacity_rps=1100.0)
    assert planned_rps(plan, "granian") == 1100.0
    assert planned_rps(plan, "uvicorn") == planned_rps(plan, "gunicorn-asgi") == 900.0
    flat = saturation("a", "uvicorn", 900.0, [_closed(32, 1000.0), _closed(8, 500.0),
                                               _closed(128, 1100.0)])  # fmt: skip
    assert (flat.measured_rps, flat.concurrency) == (1100.0, 128)
    assert flat.saturated is not None
    assert "1.10 x from c=32 to c=128" in flat.saturated
    target = saturation_target(flat)
    assert target.value == round(abs(900 / 1100 - 1), 3)
    assert target.met is True
    shed = saturation("b", "granian", 1100.0, [_closed(32, 600.0), _closed(128, 450.0, 9000)])
    assert (shed.measured_rps, shed.concurrency) == (600.0, 32)
    assert shed.saturated is not None
    assert shed.saturated.startswith("shed 9000 (503) at c=128")
    assert saturation_target(shed).met is False  # 1100 / 600 = 1.83
    # With the unloaded p50 known: 600 req/s x 56 ms = 34 of 32 connections in flight at c=32,
    # so c=32 was bound by its connections and c=128 shed past admission: only a floor.
    between = saturation("b", "granian", 1100.0, [_closed(32, 600.0), _closed(128, 450.0, 9000)],
                         56.0)  # fmt: skip
    assert between.saturated is None
    assert between.floor is not None
    assert "c=32 kept its connections in flight" in between.floor
    assert saturation_target(between).met is None
    assert "kept its connections in flight" in saturation_target(between).name
    # 400 req/s x 56 ms = 22 of 32 in flight: c=32 already queued, so the shed counts.
    queued_then_shed = saturation(
        "b", "granian", 1100.0, [_closed(32, 400.0), _closed(128, 350.0, 9000)], 56.0
    )
    assert queued_then_shed.saturated is not None
    assert queued_then_shed.saturated.startswith("shed 9000 (503) at c=128")
    # Still growing, but 128 connections at 1300 req/s and 56 ms unloaded: 73 in flight, so
    # the rest waited for a loop (the 50 ms /io app at 128 connections).
    queued = saturation("q", "uvicorn", 1800.0, [_closed(32, 580.0), _closed(128, 1300.0)], 56.0)
    assert queued.saturated is not None
    assert "1300 req/s x the unloaded p50 56 ms = 73 in flight" in queued.saturated
    assert saturation("q", "uvicorn", 1800.0, [_closed(32, 580.0)], 56.0).saturated is None
    growing = saturation("c", "uvicorn", 900.0, [_closed(8, 200.0), _closed(32, 700.0)])
    assert growing.saturated is None
    target = saturation_target(growing)
    assert target.value is None
    assert target.met is None
    assert "not saturated at the highest level" in target.name


def test_the_capacity_note_splits_the_cpu_per_answered_request() -> None:
    """The note's CPU figures are per answered request (503s cost the app nothing), and the
    req/s they give on the cores other work left is said beside the plan's ratio."""
    from servertune.bench.scenarios.app.capacity import saturation, saturation_note

    row = _closed(128, 500.0, 3000, app_cpu_ms_per_req=0.25, proxy_cpu_ms_per_req=0.1,
                  load_cpu_ms_per_req=0.025)  # fmt: skip
    row["repeats"] = [{"other_cpu_cores": 0.4}, {"other_cpu_cores": 0.6}]
    sat = saturation("servertune-x", "uvicorn", 800.0, [_closed(32, 400.0), row])
    note = saturation_note(sat, 2, "wrk", "HAProxy")
    assert note.startswith("capacity servertune-x: the plan's 800 req/s (uvicorn's) against 500 ")
    assert "= 1.60 x;" in note
    # 4000 sent, 1000 answered: 4 x each figure per answered request.
    assert "app servers 1.000 ms, HAProxy 0.400 ms, wrk 0.100 ms of CPU" in note
    assert "other work took 0.50 of the 2 cores; (2 - 0.50) cores / 1.500 ms = 1000 req/s" in note
    assert "other work) would serve 2 / 1.400 ms = 1429 req/s" in note
