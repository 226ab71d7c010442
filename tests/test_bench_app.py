"""`servertune bench app --quick` on real third-party apps from PyPI, and on apps that fail.

httpbin's Flask app (with /delay/0.05 and /get mixed) and a project made by
`django-admin startproject` (its admin login page: templates, sessions, CSRF) are served by
every candidate behind the same generated nginx; the tests check the table's shape, that no
process or port is left behind, that errors are counted (a candidate broken on purpose), and
that an app that cannot be imported, raises, answers 500 or never answers is one `error:` line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.report import BenchInputError
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.app import (
    NAIVE,
    OURS,
    parse_path,
    split_connections,
    verdict_of,
    wrk_lua,
)
from servertune.cli import app

pytest.importorskip("httpbin", reason="the dev extra installs httpbin")
pytest.importorskip("django", reason="the dev extra installs django")

#: A gunicorn config that answers 500 to every other request once a worker has served a few:
#: it passes the readiness checks, then its errors must show in the table.
BROKEN_CONF = textwrap.dedent(
    """
    workers = 2

    def pre_request(worker, req):
        worker.servertune_seen = getattr(worker, "servertune_seen", 0) + 1
        if worker.servertune_seen > 10 and worker.servertune_seen % 2:
            raise RuntimeError("broken on purpose")
    """
)


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
def httpbin_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], Path]:
    """One quick run on httpbin with the broken gunicorn config as --against."""
    tmp = tmp_path_factory.mktemp("httpbin")
    broken = tmp / "broken.conf.py"
    broken.write_text(BROKEN_CONF)
    result, report = _run(
        ["httpbin:app", "--path", "/delay/0.05", "--path", "/get", "--against", str(broken),
         "--plot", str(tmp / "plot.png")],
        tmp,
    )  # fmt: skip
    return result.stdout, report, tmp


def test_httpbin_table_has_every_candidate_with_its_numbers(
    httpbin_run: tuple[str, dict[str, Any], Path],
) -> None:
    """One row per candidate at 2 x cores, with req/s, p50, p99, errors and the ratio."""
    stdout, report, tmp = httpbin_run
    cores = report["machine"]["cores"]
    configs = [run["config"] for run in report["runs"]]
    assert configs == [*NAIVE, "against-broken-conf", *OURS]
    for run in report["runs"]:
        assert run["concurrency"] == 2 * cores
        for key in ("rps", "p50_ms", "p99_ms", "errors", "x_best_naive", "rps_low", "rps_high"):
            assert run[key] is not None, (run["config"], key)
        assert run["repeats"][0]["repeat"] == 0
    assert "x_best_naive" in stdout
    assert "servertune-uwsgi" in stdout
    assert any(note.startswith(f"c={2 * cores}: ") for note in report["notes"])
    assert (tmp / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_httpbin_errors_are_counted_not_hidden(
    httpbin_run: tuple[str, dict[str, Any], Path],
) -> None:
    """The broken candidate's 500s show as errors; the real servers answer without any."""
    _, report, _ = httpbin_run
    rows = {run["config"]: run for run in report["runs"]}
    broken = rows["against-broken-conf"]
    assert broken["errors"] > 0
    assert broken["non_2xx"] > 0
    assert broken["errors"] == broken["non_2xx"] + broken["socket_errors"]
    for name in OURS:
        assert rows[name]["errors"] == 0, name


def test_httpbin_leaves_no_process_and_no_port(
    httpbin_run: tuple[str, dict[str, Any], Path],
) -> None:
    """Every server of every candidate was stopped, its group is empty and its ports free."""
    _assert_nothing_left(httpbin_run[1])


def test_django_admin_login_page_under_every_candidate(tmp_path: Path) -> None:
    """A `django-admin startproject` project's admin login page, served by every candidate."""
    project = tmp_path / "site"
    project.mkdir()
    admin = Path(sys.executable).parent / "django-admin"
    subprocess.run([str(admin), "startproject", "mysite", str(project)], check=True)
    manage = [sys.executable, str(project / "manage.py"), "migrate", "-v0"]
    subprocess.run(manage, check=True, cwd=project)
    _, report = _run(
        ["mysite.wsgi:application", "--chdir", str(project), "--path", "/admin/login/"], tmp_path
    )
    assert [run["config"] for run in report["runs"]] == [*NAIVE, *OURS]
    assert all(run["rps"] > 0 and run["errors"] == 0 for run in report["runs"])
    assert report["versions"]["mysite"]
    _assert_nothing_left(report)


BAD_APPS = {
    "raises_at_import": "raise RuntimeError('broken at import')\n",
    "answers_500": textwrap.dedent(
        """
        def app(environ, start_response):
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return [b""]
        """
    ),
    "never_answers": textwrap.dedent(
        """
        import time

        def app(environ, start_response):
            time.sleep(3600)
        """
    ),
}


@pytest.mark.parametrize(
    ("module", "code", "words"),
    [
        ("no_such_module", 2, "APP: cannot import"),
        ("raises_at_import", 1, "broken at import"),
        ("answers_500", 1, "candidate gunicorn-default: GET / answered HTTP 500"),
        ("never_answers", 1, "did not answer GET /"),
    ],
)
def test_a_failing_app_is_one_error_line_and_nothing_is_left(
    tmp_path: Path, module: str, code: int, words: str
) -> None:
    """Cannot import (exit 2), raises, answers 500, never answers (exit 1): one line, no leftovers."""
    if module in BAD_APPS:
        (tmp_path / f"{module}.py").write_text(BAD_APPS[module])
    result = CliRunner().invoke(
        app, ["bench", "app", f"{module}:app", "--chdir", str(tmp_path), "--quick", "--no-progress"]
    )
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert words in result.stderr
    assert "Traceback" not in result.output
    assert _running_in(tmp_path) == []


def _running_in(directory: Path) -> list[int]:
    """Live processes whose working directory is `directory` (uWSGI and gunicorn chdir there
    to import the app) or one of bench app's own stack directories."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = str((entry / "cwd").readlink())
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd.startswith(str(directory)) or "/servertune-app-" in cwd):
            found.append(int(entry.name))
    return found


def test_bench_app_flags_are_refused_elsewhere_and_validated() -> None:
    """--path on another scenario, a path with a space, a bad weight: exit 2, one line."""
    runner = CliRunner()
    other = runner.invoke(app, ["bench", "hol", "--path", "/x", "--quick"])
    assert other.exit_code == 2
    assert other.stderr.startswith("error: --path: only `servertune bench app` takes it")
    spaced = runner.invoke(app, ["bench", "app", "httpbin:app", "--path", "/a b"])
    assert spaced.exit_code == 2
    assert spaced.stderr.startswith("error: --path: ")
    missing = runner.invoke(app, ["bench", "app"])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: APP: ")


def test_paths_weights_and_their_load_scripts() -> None:
    """`/x=3` weighs 3; a query keeps its `=`; the Lua script and the connection split follow."""
    assert parse_path("/get") == ("/get", 1.0)
    assert parse_path("/get=3") == ("/get", 3.0)
    assert parse_path("/search?q=a") == ("/search?q=a", 1.0)
    assert parse_path("/search?q=5=2") == ("/search?q=5", 2.0)
    for bad in ("get", '/a"b', "/a\\b", "/x=0"):
        with pytest.raises(BenchInputError):
            parse_path(bad)
    lua = wrk_lua((("/a", 3.0), ("/b", 1.0)))
    assert '{0.750000, "/a"}' in lua
    assert '{1.000000, "/b"}' in lua
    assert split_connections((("/a", 3.0), ("/b", 1.0)), 8) == [6, 2]
    assert split_connections((("/a", 100.0), ("/b", 1.0)), 2) == [1, 1]


def test_verdict_needs_the_spreads_apart() -> None:
    """Overlapping req/s ranges read "no clear difference"; separate ones name the faster."""
    ours = {"rps_low": 95.0, "rps_high": 105.0}
    assert verdict_of(ours, {"rps_low": 100.0, "rps_high": 110.0}) == "no clear difference"
    assert verdict_of(ours, {"rps_low": 50.0, "rps_high": 60.0}) == "servertune faster"
    assert verdict_of(ours, {"rps_low": 120.0, "rps_high": 130.0}) == "naive faster"
