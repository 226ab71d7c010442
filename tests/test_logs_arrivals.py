"""`bench app --replay` plays a log's own arrival times: read to the millisecond where the log
has them (bursts kept), spread within the second where it has not, bounded, scaled by pace."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import LogError, build_format
from servertune.logs.arrivals import busiest_seconds, read_arrivals

#: nginx with sub-second stamps ($msec) and the app's time.
MSEC = '$msec "$request" $status $request_time'
GUNICORN = '%(h)s %(t)s "%(r)s" %(s)s %(D)s'
#: 2026-11-26 13:00:00 UTC.
T0 = 1_795_698_000


def burst_log(tmp_path: Path, seconds: int = 10, burst: int = 20, name: str = "bursts.log") -> Path:
    """Every second, `burst` requests 5 ms apart (the whole burst within 100 ms), written a
    little out of order (nginx logs a request when it ends)."""
    lines = [
        f'{T0 + s}.{5 * i:03d} "GET /r/{i} HTTP/1.1" 200 0.004\n'
        for s in range(seconds)
        for i in range(burst)
    ]
    rng = random.Random(5)
    for _ in range(len(lines) // 4):  # swap neighbours: out of order by a few ms
        k = rng.randrange(len(lines) - 1)
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    log = tmp_path / name
    log.write_text("".join(lines))
    return log


def _gaps(offsets: tuple[float, ...]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(offsets)]


def test_the_logs_inter_arrival_times_are_reproduced_and_scaled(tmp_path: Path) -> None:
    """Bursts of 20 within 100 ms every second: 19 gaps of 5 ms a burst and 905 ms between
    bursts as logged (sorted back into order); at 2 x and 4 x every gap divided by the pace,
    the mean rate multiplied by it, the bursts kept."""
    arrivals = read_arrivals([burst_log(tmp_path)], build_format("nginx", MSEC), T0, 10)
    assert arrivals.subsecond
    assert len(arrivals.offsets) == 200
    assert arrivals.mean_rps == 20.0
    assert arrivals.per_second() == (20,) * 10
    for pace in (1.0, 2.0, 4.0):
        gaps = sorted(_gaps(arrivals.schedule(pace)))
        assert gaps[:190] == pytest.approx([0.005 / pace] * 190, abs=1e-9)
        assert gaps[190:] == pytest.approx([0.905 / pace] * 9, abs=1e-9)
        played = arrivals.schedule(pace)
        assert len(played) / (arrivals.seconds / pace) == 20.0 * pace
    assert "10 s of bursts.log from 2026-11-26 13:00:00 UTC: 200 requests, mean 20.0 req/s" in (
        arrivals.describe()
    )
    assert "arrival times as logged (sub-second stamps)" in arrivals.describe()
    # The window holds only its own seconds; the head is its first seconds.
    two = read_arrivals([burst_log(tmp_path)], build_format("nginx", MSEC), T0 + 3, 2)
    assert len(two.offsets) == 40
    assert two.offsets[0] == pytest.approx(0.0)
    assert arrivals.head(2).offsets == arrivals.offsets[:40]
    assert arrivals.head(99) is arrivals


def test_whole_second_stamps_keep_their_counts_spread_within_each_second(tmp_path: Path) -> None:
    counts = {0: 3, 1: 0, 2: 12, 3: 5}
    lines = [
        f'127.0.0.1 [26/Nov/2026:13:00:{s:02d} +0000] "GET /x HTTP/1.1" 200 1000\n'
        for s, n in counts.items()
        for _ in range(n)
    ]
    log = tmp_path / "whole.log"
    log.write_text("".join(lines))
    arrivals = read_arrivals([log], build_format("gunicorn", GUNICORN), T0, 4)
    assert not arrivals.subsecond
    assert arrivals.per_second() == (3, 0, 12, 5)
    assert list(arrivals.offsets) == sorted(arrivals.offsets)
    assert "the log's stamps are whole seconds: each second's requests spread at random" in (
        arrivals.describe()
    )
    # The same spread every time: every layout and every run get the same arrivals.
    again = read_arrivals([log], build_format("gunicorn", GUNICORN), T0, 4)
    assert again.offsets == arrivals.offsets


def test_memory_is_bounded_by_the_cap_and_the_window_cut_is_said(tmp_path: Path) -> None:
    arrivals = read_arrivals([burst_log(tmp_path)], build_format("nginx", MSEC), T0, 10, limit=50)
    assert len(arrivals.offsets) == 50
    assert arrivals.left_out == 150
    # Cut where the kept arrivals end, so its mean rate stays near the log's.
    assert arrivals.seconds == 3
    assert "150 later arrivals of the window left out (at most 100,000 kept)" in (
        arrivals.describe()
    )


def test_the_busiest_seconds_are_the_first_densest_run() -> None:
    assert busiest_seconds((1, 5, 5, 1, 9, 1), 2) == 1
    assert busiest_seconds((1, 5, 5, 1, 9, 1), 3) == 2
    assert busiest_seconds((4, 4), 10) == 0


def test_too_few_or_one_second_of_arrivals_is_a_log_error(tmp_path: Path) -> None:
    fmt = build_format("nginx", MSEC)
    one = tmp_path / "one.log"
    one.write_text(f'{T0}.000 "GET / HTTP/1.1" 200 0.004\n')
    with pytest.raises(LogError, match=r"one.log: 1 timed request in its busiest 10 s"):
        read_arrivals([one], fmt, T0, 10)
    same = tmp_path / "same.log"
    same.write_text('127.0.0.1 [26/Nov/2026:13:00:00 +0000] "GET / HTTP/1.1" 200 9\n' * 30)
    with pytest.raises(LogError, match="all 30 requests are stamped within the same second"):
        read_arrivals([same], build_format("gunicorn", GUNICORN), T0, 10)
    # Sub-second stamps within one second still carry their gaps.
    burst = read_arrivals([burst_log(tmp_path, seconds=1)], fmt, T0, 1)
    assert len(burst.offsets) == 20


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f'{T0}.000 "GET / HTTP/1.1" 200 0.004\n', "1 timed request in its busiest"),
        (
            '127.0.0.1 [26/Nov/2026:13:00:00 +0000] "GET / HTTP/1.1" 200 0.01\n' * 30,
            "stamped within the same second",
        ),
        ("\xff\xfe\x00garbage\n" * 20, "none of its 20 lines matches the nginx format"),
    ],
)
def test_bench_app_replay_of_a_log_with_no_pattern_is_one_error_line(
    tmp_path: Path, text: str, message: str
) -> None:
    """One line, all in one second, or no request read (a binary, non-UTF-8 file): exit 2, one
    `error: --replay:` line naming the file and why, before any server starts."""
    log = tmp_path / "bad.log"
    log.write_bytes(text.encode("latin-1"))
    fmt = (
        'nginx:$remote_addr [$time_local] "$request" $status $request_time'
        if "[" in text
        else f"nginx:{MSEC}"
    )
    result = CliRunner().invoke(
        cli, ["bench", "app", "m:app", "--replay", str(log), "--replay-format", fmt, "--quick"]
    )
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --replay: "), result.output
    assert "bad.log" in result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output
