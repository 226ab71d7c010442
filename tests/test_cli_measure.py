"""The thin `measure` and `advise` commands: options reach the library, output reaches the user."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune import measure
from servertune.cli import app
from servertune.workload_file import read_workload_file

#: The repository root: the test apps import as `tests.measure_apps`.
HERE = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_measure_writes_a_workload_gen_reads(tmp_path: Path) -> None:
    """`measure --out` writes a TOML that `gen --workload` turns into a uWSGI config for the app."""
    out = tmp_path / "workload.toml"
    result = runner.invoke(
        app, ["measure", "tests.measure_apps:pure_cpu", "--app-dir", str(HERE), "--requests", "3",
              "--warmup", "0", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cpu_ms" in result.output
    gen = runner.invoke(app, ["gen", "uwsgi", "--workload", str(out)])
    assert gen.exit_code == 0, gen.output
    assert "module = tests.measure_apps:pure_cpu" in gen.output


def test_measure_bad_input_exits_2() -> None:
    """A malformed header or an app that cannot be imported is one error line and exit code 2."""
    bad_header = runner.invoke(app, ["measure", "tests.measure_apps:pure_cpu", "-H", "nocolon"])
    assert bad_header.exit_code == 2
    missing = runner.invoke(app, ["measure", "no_such_module_here:app", "--app-dir", str(HERE)])
    assert missing.exit_code == 2
    assert "cannot import" in missing.output


def test_measure_help_states_the_library_defaults() -> None:
    """The defaults `--help` quotes are the library's constants (the CLI does not import them)."""
    text = runner.invoke(app, ["measure", "--help"], env={"COLUMNS": "200"}).output
    assert f"default {measure.DEFAULT_REQUESTS})" in text
    assert f"default {measure.DEFAULT_WARMUP})" in text
    assert f"default {measure.DEFAULT_MAX_SECONDS:g})" in text


def test_advise_reads_the_measured_file_and_cites_it(tmp_path: Path) -> None:
    """`advise --workload` on a measured file recommends a model and cites the measured spread."""
    out = tmp_path / "workload.toml"
    runner.invoke(
        app, ["measure", "tests.measure_apps:pure_sleep", "--app-dir", str(HERE), "--requests", "3",
              "--out", str(out)],
    )  # fmt: skip
    result = runner.invoke(app, ["advise", "--workload", str(out), "--cores", "2"])
    assert result.exit_code == 0, result.output
    assert "recommended: asyncio" in result.output  # 20 ms of pure waiting: 1000s in flight
    assert "3 requests of GET /" in result.output
    as_json = runner.invoke(app, ["advise", "--workload", str(out), "--json"])
    assert json.loads(as_json.stdout)["recommended"]


def test_advise_rejects_a_file_that_is_not_a_parallel_report(tmp_path: Path) -> None:
    """--parallel must be a `bench parallel --json` report: anything else is exit code 2."""
    other = tmp_path / "other.json"
    other.write_text('{"scenario": "hol"}')
    result = runner.invoke(app, ["advise", "--parallel", str(other)])
    assert result.exit_code == 2
    assert "bench parallel" in result.output


def test_measure_refuses_a_path_with_control_characters(tmp_path: Path) -> None:
    """A --path carrying a newline (it would reach the workload file) is bad input: exit 2, one line."""
    out = tmp_path / "w.toml"
    result = runner.invoke(
        app, ["measure", "tests.measure_apps:pure_cpu", "--app-dir", str(HERE),
              "--path", "/x\n[workload]\ncores = 64 #", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --path: ")
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_every_path_is_measured_and_mixed_on_httpbin(tmp_path: Path) -> None:
    """httpbin from PyPI, /delay/0.05 and /get: both measured, the mix's service time between them."""
    out = tmp_path / "w.toml"
    result = runner.invoke(
        app, ["measure", "httpbin:app", "--path", "/delay/0.05", "--path", "/get=3",
              "--requests", "5", "--warmup", "1", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "/delay/0.05" in result.stdout
    assert "/get" in result.stdout
    written = read_workload_file(out)
    assert written.measured is not None
    slow, fast = written.measured.paths
    assert (slow.path, slow.weight, fast.path, fast.weight) == ("/delay/0.05", 1.0, "/get", 3.0)
    assert slow.service_time_ms.p50 >= 50  # httpbin sleeps 50 ms
    assert fast.service_time_ms.p50 < slow.service_time_ms.p50
    mixed = written.values["service_time_ms"]
    assert fast.service_time_ms.p50 < mixed < slow.service_time_ms.p50
    # Weights count: /get is three quarters of the traffic, so the mix sits near it; each
    # path counts by its mean (Little's law's), not its median.
    assert slow.service_time_ms.mean is not None
    assert fast.service_time_ms.mean is not None
    assert mixed == pytest.approx(
        (slow.service_time_ms.mean + 3 * fast.service_time_ms.mean) / 4, abs=0.02
    )
    # CPU per request is a mean over the mix, each path by its share.
    assert slow.cpu_ms is not None
    assert fast.cpu_ms is not None
    assert slow.cpu_ms.mean is not None
    assert fast.cpu_ms.mean is not None
    assert written.values["cpu_ms"] == pytest.approx(
        (slow.cpu_ms.mean + 3 * fast.cpu_ms.mean) / 4, abs=0.002
    )
    gen = runner.invoke(app, ["gen", "uwsgi", "--workload", str(out), "--cores", "2"])
    assert gen.exit_code == 0, gen.output
    assert "module = httpbin:app" in gen.stdout


def test_out_is_checked_before_measuring(tmp_path: Path) -> None:
    """An --out that cannot be written fails at once (before the app is even imported)."""
    for target in ("/proc/x.toml", str(tmp_path / "missing" / "w.toml")):
        result = runner.invoke(app, ["measure", "no_such_module_here:app", "--out", target])
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: --out: cannot write {target}: ")
        assert result.stderr.count("\n") == 1


def test_app_that_raises_is_exit_1_and_one_line(tmp_path: Path) -> None:
    """An app whose requests raise: exit 1, one `error:` line with type, message and file:line; no file."""
    out = tmp_path / "w.toml"
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "measure", "tests.measure_apps:raises",
         "--app-dir", str(HERE), "--out", str(out)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    assert re.fullmatch(
        r"error: GET /: the app raised ZeroDivisionError: division by zero at "
        r"tests/measure_apps\.py:\d+ in raises\n",
        result.stderr,
    )
    assert not out.exists()


def test_app_that_fails_to_import_is_exit_2_and_one_line(tmp_path: Path) -> None:
    """A module that raises on import: exit 2, one line naming APP and what it raised."""
    (tmp_path / "crashy.py").write_text("raise RuntimeError('no settings')\n")
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "measure", "crashy:app", "--app-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "error: APP: importing 'crashy' raised RuntimeError: no settings at crashy.py:1 in <module>\n"
    )


@pytest.mark.parametrize(
    "repeated",
    [["--method", "GET", "--method", "POST"], ["--requests", "2", "--requests", "3"],
     ["--out", "a.toml", "--out", "b.toml"]],
)  # fmt: skip
def test_a_single_valued_option_given_twice_is_refused(repeated: list[str]) -> None:
    """click would keep the last value without a word: measure refuses instead, exit 2, one line."""
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "measure", "tests.measure_apps:pure_cpu", *repeated],
        capture_output=True, text=True, timeout=60, check=False, cwd=HERE,
    )  # fmt: skip
    assert result.returncode == 2
    assert (
        result.stderr
        == f"error: Invalid value for '{repeated[0]}': given more than once; give it once\n"
    )


@pytest.mark.parametrize(
    ("name", "called"),
    [("exits", "called sys.exit(5)"), ("interrupts", "raised KeyboardInterrupt"),
     ("hard_exits", "called os._exit(0)")],
)  # fmt: skip
def test_app_that_ends_the_process_is_reported_in_one_line(name: str, called: str) -> None:
    """sys.exit, KeyboardInterrupt or os._exit inside a request: exit 1 and one line saying so."""
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "measure", f"tests.measure_apps:{name}",
         "--app-dir", str(HERE), "--requests", "2", "--warmup", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    assert re.fullmatch(
        rf"error: GET /: the app {re.escape(called)} at tests/measure_apps\.py:\d+ in {name}\n",
        result.stderr,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["tests.measure_apps:pure_cpu", "--interface", "asgi"],
         "error: --interface: pure_cpu is not an ASGI app"),
        (["tests.measure_apps:pure_cpu", "--app-dir", "/nonexistent"],
         "error: --app-dir: no such directory: /nonexistent"),
        (["tests.measure_apps:pure_cpu", "-H", "X-A: b\r\nX-B: c"],
         "error: --header: must not contain CR, LF or control characters"),
    ],
)  # fmt: skip
def test_measure_misuse_is_one_line_naming_the_flag(args: list[str], expected: str) -> None:
    """A WSGI app forced to ASGI, a missing --app-dir, a header with CR/LF: exit 2, the flag named."""
    app_dir = [] if "--app-dir" in args else ["--app-dir", str(HERE)]
    result = runner.invoke(app, ["measure", *args, *app_dir, "--requests", "2", "--warmup", "0"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(expected), result.output
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output
