"""What a new user hit in round 3 (issue 33): tracebacks, nonsense accepted silently, API misuse.
Each case is one `error:` line (or servertune's own TypeError/ValueError naming the argument)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from servertune.http import session

REPO = Path(__file__).resolve().parents[1]


def servertune(*argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`python -m servertune ARGV...`, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", *argv],
        capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
    )  # fmt: skip


def assert_one_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, one `error:` line with every word, no traceback."""
    assert result.returncode == 2, result
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["inf", "nan", "1e-300", "1e308", "0.05"])
def test_measure_max_seconds_out_of_range_is_one_line_with_the_range(value: str) -> None:
    """inf raised OverflowError in setitimer; nan and 1e-300 got the wrong reason."""
    result = servertune("measure", "tests.measure_apps:pure_cpu", "--max-seconds", value)
    assert_one_error(result, "--max-seconds", "from 0.1 to 86400")


def test_bench_ssl_context_without_certifi_names_the_extra() -> None:
    """A bare install: one line naming certifi and the extra that brings it, no traceback."""
    code = (
        "import sys; sys.modules['certifi'] = None; "
        "sys.argv = ['servertune', 'bench', 'ssl-context', '--quick']; "
        "from servertune.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert_one_error(result, "bench ssl-context needs", "certifi", "servertune[requests")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"server_idle_timeout": "5"}, TypeError, "server_idle_timeout: must be a number"),
        ({"server_idle_timeout": True}, TypeError, "server_idle_timeout: must be a number"),
        ({"server_idle_timeout": math.inf}, ValueError, "server_idle_timeout: must be from 0.1"),
        ({"server_idle_timeout": math.nan}, ValueError, "server_idle_timeout: must be from 0.1"),
        ({"server_idle_timeout": 1e-300}, ValueError, "server_idle_timeout: must be from 0.1"),
        ({"ssl_context": "yes"}, TypeError, "ssl_context: must be an ssl.SSLContext"),
        ({"retries": -1}, TypeError, "retries: must be True or False"),
        ({"pool_maxsize": 2.5}, TypeError, "pool_maxsize: must be an int"),
        ({"pool_maxsize": 10**9}, ValueError, "pool_maxsize: must be from 1"),
        ({"server": 5}, TypeError, "server: must be a server name"),
        ({"no_such_option": 1}, TypeError, "no_such_option: not an option of the requests client"),
    ],
)
def test_session_misuse_is_servertunes_own_error_naming_the_argument(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    """Wrong types, out-of-range timeouts and unknown keywords never reach the client library."""
    with pytest.raises(error) as raised:
        session("requests", **kwargs)
    assert str(raised.value).startswith(words)
    # Raised by servertune itself: the last frame is servertune.http, not requests or urllib3.
    frames = [frame.filename for frame in _frames(raised.value)]
    assert "/servertune/http/" in frames[-1], frames[-1]


def _frames(error: BaseException) -> list[Any]:
    import traceback

    return list(traceback.extract_tb(error.__traceback__))


def test_cached_method_refuses_a_generator_function() -> None:
    """A cached generator is exhausted after one use ([1], then []): refused like a coroutine."""
    from servertune.cache import cached_method, shared_method_cache

    def numbers(self: object) -> Iterator[int]:
        yield 1

    async def agen(self: object) -> AsyncIterator[int]:
        yield 1

    def plain() -> Iterator[int]:
        yield 1

    for func in (numbers, agen):
        with pytest.raises(TypeError, match="cannot cache the generator function"):
            cached_method(func)
    with pytest.raises(TypeError, match="cannot cache the generator function"):
        shared_method_cache(staticmethod(plain))


# --- accepted silently, and wrong --------------------------------------------------------------


@pytest.mark.parametrize("name", ["*", "*example.com", "w*.example.com", "www.*.example.com", "*."])
def test_server_name_nginx_refuses_is_refused(name: str) -> None:
    """nginx -t says `server name "*" is invalid`: the flag is refused by nginx's own rules."""
    assert_one_error(servertune("gen", "nginx", "--server-name", name), "--server-name", "wildcard")


@pytest.mark.parametrize(
    "name", ["*.example.com", "www.example.*", ".example.com", "example.com", "_"]
)
def test_server_name_forms_nginx_takes_pass_nginx_t(name: str, tmp_path: Path) -> None:
    """Every wildcard form servertune accepts is one the real nginx accepts."""
    from .support import nginx_check

    result = servertune("gen", "nginx", "--server-name", name, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (tmp_path / "run").mkdir()
    checked = nginx_check(tmp_path / "nginx-uwsgi.conf")
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("app", ["class:def", "mysite.import:application", "app:None"])
def test_app_made_of_keywords_is_refused(app: str) -> None:
    """`class:def` matches the identifier pattern, yet no import can name it."""
    assert_one_error(servertune("gen", "uwsgi", "--app", app), "--app", "Python identifiers")


def test_loop_blocking_fraction_below_the_default_cpu_fraction_is_said() -> None:
    """--loop-blocking-fraction 0 outranked by the default cpu_fraction: a warning says so."""
    result = servertune("plan", "--interface", "asgi", "--loop-blocking-fraction", "0")
    assert result.returncode == 0, result.stderr
    assert (
        "warning: loop_blocking_fraction 0 is below cpu_fraction 0.5 (the default" in result.stderr
    )
    given = servertune(
        "plan", "--interface", "asgi", "--loop-blocking-fraction", "0", "--cpu-fraction", "0.1"
    )
    assert "loop_blocking_fraction" not in given.stderr, given.stderr


@pytest.mark.parametrize(
    ("argv", "flag", "filename"),
    [
        (["gen", "uwsgi", "--server-name", "example.com"], "--server-name", "uwsgi.ini"),
        (["gen", "gunicorn", "--sync-views"], "--sync-views", "gunicorn.conf.py"),
        (["gen", "gunicorn", "--loop-blocking-fraction", "0.2"], "--loop-blocking-fraction", "gunicorn.conf.py"),
        (["gen", "gunicorn", "--gunicorn-asgi-worker", "native"], "--gunicorn-asgi-worker", "gunicorn.conf.py"),
        (["gen", "kubernetes", "--k8s-layout", "gateway", "--ingress-class", "traefik"], "--ingress-class", "kubernetes.yaml"),
    ],
)  # fmt: skip
def test_an_option_the_target_does_not_use_is_noted(
    argv: list[str], flag: str, filename: str
) -> None:
    """One `note:` line names the option and the file it changes nothing in; the file is written."""
    result = servertune(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout
    assert f"note: {flag} changes nothing in {filename}" in result.stderr, result.stderr


def test_an_option_the_target_uses_is_not_noted() -> None:
    """--server-name changes nginx's file; --cores at this machine's own count changes nothing new."""
    result = servertune(
        "gen", "nginx", "--server-name", "example.com", "--cores", str(os.cpu_count())
    )
    assert result.returncode == 0, result.stderr
    assert "note:" not in result.stderr, result.stderr


def test_service_time_below_ten_microseconds_is_refused() -> None:
    """1e-300 ms made a 2,000,000 req/s ceiling and max-requests 600,000,000, without a word."""
    assert_one_error(
        servertune("plan", "--service-time-ms", "1e-300"), "--service-time-ms", "from 0.01"
    )


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("cores = 4.0\n", "cores"),
        ("max_body_mb = 10.0\n", "max_body_mb"),
        ('sync_views = "yes"\ninterface = "asgi"\n', "sync_views"),
        ("sync_views = 1\n", "sync_views"),
        ("bind_host = 2130706433\n", "bind_host"),
        ("server_name = 5\n", "server_name"),
        ('upstream = ["10.0.0.1:80", 5]\n', "upstream"),
    ],
)
def test_a_workload_file_is_as_strict_as_the_flags(text: str, field: str, tmp_path: Path) -> None:
    """`--cores 4.0` is refused: so is `cores = 4.0` in a file (and lax bool/str/int coercions)."""
    path = tmp_path / "w.toml"
    path.write_text(text)
    assert_one_error(servertune("plan", "--workload", str(path)), f"{field} (--workload {path})")


def test_a_min_max_conflict_in_a_file_names_the_file(tmp_path: Path) -> None:
    """Reported against the file's field, not `--max-replicas` that the user never gave."""
    path = tmp_path / "w.toml"
    path.write_text("min_replicas = 10\nmax_replicas = 3\n")
    result = servertune("gen", "kubernetes", "--workload", str(path))
    assert_one_error(result, f"max_replicas (--workload {path}): 3 is below min_replicas 10")
    assert "--max-replicas" not in result.stderr
    flagged = servertune("gen", "kubernetes", "--workload", str(path), "--max-replicas", "4")
    assert_one_error(flagged, "max_replicas (--max-replicas): 4 is below min_replicas 10")


def test_explain_to_a_pipe_has_one_width_whatever_columns_says() -> None:
    """The docs showed explain squeezed by the docs test's COLUMNS=100: piped, it is 120 wide."""
    from servertune.explain import PIPED_WIDTH

    def explain(columns: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "servertune", "explain", "--cores", "2"],
            capture_output=True, text=True, timeout=60, check=True,
            env={**os.environ, "COLUMNS": columns},
        ).stdout  # fmt: skip

    narrow, wide = explain("60"), explain("300")
    assert narrow == wide
    rows = narrow.splitlines()[2:]
    assert max(len(line) for line in rows) <= PIPED_WIDTH
    assert max(len(line) for line in rows) > PIPED_WIDTH - 10  # reasons do use the width


@pytest.mark.parametrize("client", ["httpx", "urllib3"])
def test_an_unknown_keyword_is_named_for_every_client(client: str) -> None:
    """Not the library's own error from inside (urllib3's PoolManager took it until a request)."""
    with pytest.raises(TypeError, match=f"^no_such_option: not an option of the {client} client"):
        session(client, no_such_option=1)  # type: ignore[call-overload]
