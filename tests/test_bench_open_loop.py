"""The open-loop client's schedules: Poisson arrivals at each step's rate within the step, each
sent to a path by weight, against a real nginx on 127.0.0.1."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from servertune.bench.harness.open_loop import (
    _arrival_times,
    run_arrivals,
    run_open_loop,
    run_schedule,
)
from tests.support import accepts, free_ports, running, tool, wait_for


def test_arrivals_follow_each_steps_rate() -> None:
    """Counts per step within 5 standard deviations of a Poisson count (sqrt of its mean)."""
    steps = ((1.0, 2000.0), (0.5, 0.0), (1.0, 500.0), (0.25, 4000.0))
    times = list(_arrival_times(steps, random.Random(7)))
    assert times == sorted(times)
    edges = [0.0, 1.0, 1.5, 2.5, 2.75]
    for (seconds, rate), low, high in zip(steps, edges, edges[1:], strict=False):
        n = sum(1 for t in times if low <= t < high)
        mean = seconds * rate
        assert abs(n - mean) <= 5 * math.sqrt(mean), (low, n, mean)
    assert times[-1] < 2.75


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[str]:
    """nginx answering every path with the path itself."""
    (port,) = free_ports(1)
    (tmp_path / "nginx.conf").write_text(
        "pid nginx.pid;\nerror_log error.log warn;\nevents { worker_connections 512; }\n"
        "http {\n  access_log off;\n"
        "  client_body_temp_path body; proxy_temp_path proxy; fastcgi_temp_path fcgi;\n"
        "  uwsgi_temp_path uwsgi; scgi_temp_path scgi;\n"
        f'  server {{ listen 127.0.0.1:{port}; location / {{ return 200 "$uri"; }} }}\n'
        "}\n"
    )
    argv = [tool("nginx"), "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
            "-g", "daemon off;"]  # fmt: skip
    with running(argv, tmp_path):
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), what="nginx")
        yield f"http://127.0.0.1:{port}"


def test_a_schedule_sends_every_path_by_weight(nginx: str) -> None:
    result = run_schedule(
        nginx + "/ignored", [("/a", 3.0), ("/b", 1.0)], [(0.5, 400.0), (0.3, 0.0), (0.5, 200.0)],
        timeout_s=2.0, seed=1,
    )  # fmt: skip
    assert result.duration_s == pytest.approx(1.3)
    assert result.rate == pytest.approx((200 + 100) / 1.3)
    assert abs(result.sent - 300) <= 5 * math.sqrt(300)
    assert result.ok == result.sent
    assert result.errors == result.timeouts == result.refused_503 == 0
    bodies = {body: n for body, n, _ in result.by_body()}
    assert set(bodies) == {"/a", "/b"}
    share = bodies["/a"] / result.ok
    assert abs(share - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / result.ok), share


def test_a_constant_rate_is_one_step_on_the_urls_path(nginx: str) -> None:
    result = run_open_loop(nginx + "/c?x=1", rate=200.0, duration_s=0.5, seed=3)
    assert result.ok == result.sent > 50
    assert {body for body, _, _ in result.by_body()} == {"/c"}
    assert result.rate == 200.0


@pytest.mark.parametrize(
    ("paths", "steps", "message"),
    [
        ([], [(1.0, 1.0)], "paths"),
        ([("/a", 0.0)], [(1.0, 1.0)], "paths"),
        ([("/a", 1.0)], [], "steps"),
        ([("/a", 1.0)], [(1.0, -1.0)], "steps"),
        ([("/a", 1.0)], [(0.0, 1.0)], "steps"),
        ([("/a", 1.0)], [(1.0, math.inf)], "steps"),
        ([("/a", 1.0)], [(1.0, 0.0)], "positive rate"),
    ],
)
def test_a_bad_schedule_is_refused(
    paths: list[tuple[str, float]], steps: list[tuple[float, float]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        run_schedule("http://127.0.0.1:9", paths, steps)


def test_the_client_is_calibrated_against_a_real_nginx(tmp_path: Path) -> None:
    """Its CPU per request is read from its own process time while nginx answers every GET;
    nginx is stopped after and its port free; the ceiling is CLIENT_CPU_SHARE of the cores."""
    from servertune.bench.harness.open_loop_ceiling import (
        CALIBRATION_RPS,
        CALIBRATION_S,
        CLIENT_CPU_SHARE,
        calibrate_client,
    )
    from servertune.bench.harness.ports import listening_ports
    from servertune.bench.harness.supervision import Stack

    with Stack("test-calibration") as stack:
        ceiling = calibrate_client(stack, tmp_path / "cal", cores=2)
        (server,) = stack.servers
        assert server.stopped
        assert not set(server.ports) & listening_ports()
    mean = CALIBRATION_RPS * CALIBRATION_S
    assert abs(ceiling.sent - mean) <= 5 * math.sqrt(mean)
    assert ceiling.answered == ceiling.sent
    # A Python client cannot send a GET for less than a microsecond of CPU, nor spend a whole
    # second on each.
    assert 0.001 < ceiling.cpu_ms_per_request < 1000
    assert ceiling.rps == pytest.approx(CLIENT_CPU_SHARE * 2 * 1000 / ceiling.cpu_ms_per_request)
    assert f"{ceiling.cpu_ms_per_request:.3f} ms of CPU per request" in ceiling.said()


@pytest.mark.parametrize("backlog", [0, 1024])
def test_timeouts_say_whether_the_request_was_ever_written(backlog: int) -> None:
    """A listener that never accepts: with room in its accept queue every connection opens and
    every GET is written, then times out waiting for the answer; with a queue of one most
    connections never open, and those requests time out unsent (the client's side)."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(backlog)
        port = listener.getsockname()[1]
        result = run_open_loop(
            f"http://127.0.0.1:{port}/", rate=200.0, duration_s=0.2, timeout_s=0.5, seed=2
        )
    assert result.sent > 10
    assert result.timeouts == result.sent
    assert result.metrics()["timeouts_unsent"] == result.timeouts_unsent
    if backlog:
        assert result.timeouts_unsent == 0
    else:
        assert 0 < result.timeouts_unsent < result.sent


#: How late the client may write a request beside the rest of the suite on 2 cores (a
#: descheduled moment, not a schedule kept wrongly): the bursts' 905 ms pauses and 95 ms spans
#: stay apart at every pace.
SCHEDULING_SLACK_S = 0.06
#: How many times a pace is played when the client's own send lag passed the slack.
DESCHEDULED_TRIES = 3


def test_given_arrival_times_are_sent_as_scheduled_bursts_kept(nginx: str) -> None:
    """A log's bursts (20 requests within 100 ms, every second) played against a real nginx at
    1, 2 and 4 x their pace: the requests are written when scheduled (the bursts' 5 ms gaps and
    the quiet between them seen on the wire), every one answered, in the played time."""
    burst = [s + 0.005 * i for s in range(3) for i in range(20)]
    for pace in (1.0, 2.0, 4.0):
        offsets = [at / pace for at in burst]
        for _ in range(DESCHEDULED_TRIES):
            started = time.perf_counter()
            result = run_arrivals(
                nginx, [("/a", 1.0)], offsets, duration_s=3.0 / pace, timeout_s=2.0, seed=1
            )
            took = time.perf_counter() - started
            # A client descheduled past the slack (its own lag says so) measured the machine,
            # not the schedule: that pace is played again.
            if max(result.ok_send_lag_ms, default=0.0) / 1000 < SCHEDULING_SLACK_S:
                break
        assert result.sent == result.ok == 60
        assert result.rate == pytest.approx(20.0 * pace)
        assert sorted(result.ok_offsets_s) == pytest.approx(offsets)
        written = sorted(
            at + lag / 1000
            for at, lag in zip(result.ok_offsets_s, result.ok_send_lag_ms, strict=True)
        )
        gaps = [b - a for a, b in itertools.pairwise(written)]
        quiet = [g for g in gaps if g > 0.5 / pace]
        assert len(quiet) == 2, gaps  # the two pauses between the three bursts, nothing else
        for g in quiet:
            assert g == pytest.approx(0.905 / pace, abs=SCHEDULING_SLACK_S)
        # Each burst spans its 95 ms / pace, give or take the client's own lag.
        for k in range(3):
            span = written[20 * k + 19] - written[20 * k]
            assert span == pytest.approx(0.095 / pace, abs=SCHEDULING_SLACK_S), (pace, k)
        assert took < 3.0 / pace + 1.0


def test_given_arrivals_end_by_their_timeout_when_nothing_answers() -> None:
    """A listener that never accepts: the run still ends by itself, at the last arrival plus the
    client's timeout, every request counted as a timeout."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        port = listener.getsockname()[1]
        started = time.perf_counter()
        result = run_arrivals(
            f"http://127.0.0.1:{port}", [("/", 1.0)], [0.0, 0.01, 0.2], duration_s=0.3,
            timeout_s=0.5,
        )  # fmt: skip
        took = time.perf_counter() - started
    assert result.sent == result.timeouts == 3
    assert took < 0.2 + 0.5 + 1.0


@pytest.mark.parametrize(
    ("offsets", "duration", "message"),
    [([], 1.0, "offsets"), ([0.5, 0.1], 1.0, "ascending"), ([1.5], 1.0, "offsets"),
     ([0.1], 0.0, "duration_s")],
)  # fmt: skip
def test_bad_arrival_times_are_refused(offsets: list[float], duration: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_arrivals("http://127.0.0.1:9", [("/a", 1.0)], offsets, duration_s=duration)


def test_chunked_answers_are_read_and_their_connection_kept(tmp_path: Path) -> None:
    """An app that sets no Content-Length (Django without CommonMiddleware) is answered chunked
    by a real gunicorn: every arrival is answered, none waits for the connection to close."""
    import sys

    (tmp_path / "chunky.py").write_text(
        "def app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'text/plain')])\n"
        "    return [b'chunky ', environ['PATH_INFO'].encode(), b' ' * 100]\n"
    )
    (port,) = free_ports(1)
    argv = [sys.executable, "-m", "gunicorn", "--chdir", str(tmp_path), "-w", "1", "-k",
            "gthread", "--threads", "4", "-b", f"127.0.0.1:{port}", "chunky:app"]  # fmt: skip
    with running(argv, tmp_path):
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), what="gunicorn")
        result = run_arrivals(
            f"http://127.0.0.1:{port}", [("/c", 1.0)], [0.01 * i for i in range(20)],
            duration_s=0.3, timeout_s=2.0,
        )  # fmt: skip
    assert result.ok == result.sent == 20, result
    assert result.timeouts == 0
    assert {body for body, _, _ in result.by_body()} == {"chunky /c"}


def test_a_calibration_disturbed_once_is_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second of other work that leaves nginx answering half the calibration's GETs is not
    the client's ceiling: the calibration is taken again (up to CALIBRATION_TRIES), and fails
    only when every try does."""
    from servertune.bench.harness import open_loop
    from servertune.bench.harness.open_loop import OpenLoopResult
    from servertune.bench.harness.open_loop_ceiling import CALIBRATION_TRIES, calibrate_client
    from servertune.bench.harness.supervision import Stack

    answered = iter([925, 1987, 1987])

    def run(url: str, **_: object) -> OpenLoopResult:
        ok = next(answered)
        return OpenLoopResult(2000.0, 1.0, 1987, ok, 0, 0, 1987 - ok)

    monkeypatch.setattr(open_loop, "run_open_loop", run)
    with Stack("test-calibration-again") as stack:
        assert calibrate_client(stack, tmp_path / "cal", cores=2).answered == 1987
    answered = iter([925] * CALIBRATION_TRIES)
    with Stack("test-calibration-fails") as stack, pytest.raises(RuntimeError, match="925 of 1987"):
        calibrate_client(stack, tmp_path / "cal2", cores=2)
