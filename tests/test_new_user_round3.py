"""What a new user hit in round 3 (issue 33): tracebacks, nonsense accepted silently, API misuse.
Each case is one `error:` line (or servertune's own TypeError/ValueError naming the argument)."""

from __future__ import annotations

import math
import subprocess
import sys
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
