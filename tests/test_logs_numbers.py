"""The numbers a log's report prints, on the logs where they were off: small logs, exact rates, a
log given twice, impossible times, a timeout's share (issue 47's log items)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import LogError, build_format, read_traffic
from servertune.logs.report import format_traffic

FORMAT = '[$time_local] "$request" $status $request_time'
NGINX = build_format("nginx", FORMAT)


def _line(
    second: int, path: str, seconds: float, status: int = 200, day: str = "26/Nov/2026"
) -> str:
    clock = f"{13 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return f'[{day}:{clock} +0000] "GET {path} HTTP/1.1" {status} {seconds:.3f}\n'


def _write(tmp_path: Path, lines: list[str], name: str = "access.log") -> Path:
    log = tmp_path / name
    log.write_text("".join(lines))
    return log


@pytest.mark.parametrize(("slow", "total"), [(1, 10), (5, 100), (3, 8)])
def test_the_slow_call_share_counts_every_slow_call(tmp_path: Path, slow: int, total: int) -> None:
    """1 slow of 10 is 10 % (it printed 0.00 %, (slow - 1) / (n - 1)), 5 of 100 5 %, 3 of 8
    37.5 %; the workload gets that slow_call_ratio."""
    lines = [_line(i, "/x", 2.0 if i < slow else 0.010) for i in range(total)]
    traffic = read_traffic([_write(tmp_path, lines)], NGINX)
    assert traffic.slow_share == pytest.approx(slow / total)
    assert traffic.workload_values()["slow_call_ratio"] == pytest.approx(slow / total)
    assert f"slow calls     {slow / total:.2%} of requests" in format_traffic(traffic)


def test_percentiles_of_a_small_log_reach_its_largest_value(tmp_path: Path) -> None:
    """Six requests, one of 48 ms: p99 and p99.9 are 48 ms (they printed 2.0 ms beside a 9 ms
    mean); no percentile is above the largest value, and the largest is at least the mean."""
    times = [0.001, 0.002, 0.002, 0.002, 0.002, 0.048]
    traffic = read_traffic(
        [_write(tmp_path, [_line(i, "/a", t) for i, t in enumerate(times)])], NGINX
    )
    assert traffic.quantile(0.99) == pytest.approx(48)
    assert traffic.quantile(0.999) == pytest.approx(48)
    assert traffic.quantile(0.5) == pytest.approx(2, rel=0.01)
    for q in (0.0, 0.5, 0.9, 0.99, 0.999, 1.0):
        assert traffic.quantile(q) <= 48
    assert traffic.quantile(1.0) >= traffic.mean_ms
    assert "p99 48.0 ms, p99.9 48.0 ms; mean 9.5 ms" in format_traffic(traffic)


def test_a_two_value_log_with_a_large_mean_shows_the_large_value_as_its_tail(
    tmp_path: Path,
) -> None:
    """Two requests, 50 ms and 1.35 s: mean 700 ms, and the p99.9 is 1.35 s, not 49.9 ms."""
    lines = [_line(0, "/a", 0.050), _line(1, "/a", 1.350)]
    traffic = read_traffic([_write(tmp_path, lines)], NGINX)
    assert traffic.mean_ms == pytest.approx(700)
    assert traffic.quantile(0.999) == pytest.approx(1350)


def test_exactly_ten_requests_every_second_read_as_ten(tmp_path: Path) -> None:
    """10 a second for a minute: median, p95 and peak 10 (the median printed 10.1)."""
    lines = [_line(i // 10, "/a", 0.010) for i in range(600)]
    traffic = read_traffic([_write(tmp_path, lines)], NGINX)
    assert (traffic.arrival_quantile(0.5), traffic.arrival_quantile(0.95)) == (10.0, 10.0)
    assert "arrivals/s     median 10.0, p95 10.0, peak 10 (mean 10.00)" in format_traffic(traffic)


def test_arrival_percentiles_count_idle_seconds_exactly(tmp_path: Path) -> None:
    """3 busy seconds of 7 and 7 idle: the median is 0, the p95 and peak 7."""
    lines = [_line(s, "/a", 0.01) for s in (0, 4, 9) for _ in range(7)]
    traffic = read_traffic([_write(tmp_path, lines)], NGINX)
    assert traffic.span_s == 10
    assert (traffic.arrival_quantile(0.5), traffic.arrival_quantile(0.95)) == (0.0, 7.0)


def test_the_same_log_given_twice_is_read_once_with_a_caution(tmp_path: Path) -> None:
    """`--log a --log a` (or a copy of a, or a link to it): read once, the peak and the count
    as one log shows them, and the report says which was left out."""
    lines = [_line(i // 10, "/a", 0.010) for i in range(600)]
    log = _write(tmp_path, lines)
    copy = _write(tmp_path, lines, "copy.log")
    link = tmp_path / "link.log"
    link.symlink_to(log)
    traffic = read_traffic([log, log, copy, link], NGINX)
    assert (traffic.requests, traffic.peak_rps) == (600, 10)
    assert len(traffic.notes) == 3
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(log), "--log", str(log), "--log-format", f"nginx:{FORMAT}"]
    )
    assert result.exit_code == 0, result.output
    assert "600 requests" in result.output
    assert f"caution        {log} is the same log as {log} (the same file): read once" in (
        result.output
    )


@pytest.mark.parametrize(
    ("stamp", "reason"),
    [
        ("31/Feb/2026:13:00:00 +0000", "2026-02-31 is not a date"),
        ("26/Nov/2026:25:61:61 +0000", "25:61:61 is not a time of day"),
        ("26/Nov/2026:13:00:00 +9999", "+9999 is not a zone"),
        ("26/Nov/9999:13:00:00 +0000", "year 9999 is not between 1990 and 2100"),
    ],
)
def test_an_impossible_time_is_refused_at_its_line(tmp_path: Path, stamp: str, reason: str) -> None:
    """31 Feb (which became 3 March), 25:61:61, a +9999 zone, the year 9999 (a span of
    253,402,300,800 s): one error line naming file:line, exit 2, no workload written."""
    lines = [_line(i, "/a", 0.01) for i in range(5)]
    lines.insert(3, f'[{stamp}] "GET /a HTTP/1.1" 200 0.010\n')
    log = _write(tmp_path, lines)
    with pytest.raises(LogError, match=rf"{log}:4: not a time: .*{re.escape(reason)}"):
        read_traffic([log], NGINX)
    out = tmp_path / "w.toml"
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(log), "--log-format", f"nginx:{FORMAT}", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"error: --log: {log}:4: not a time: ")
    assert "Traceback" not in result.output
    assert not out.exists()


def test_a_tiny_log_writes_a_workload_with_a_caution(tmp_path: Path) -> None:
    """Three lines: the report and the workload file both say how little they saw."""
    log = _write(tmp_path, [_line(i, "/a", 0.01) for i in range(3)])
    out = tmp_path / "w.toml"
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(log), "--log-format", f"nginx:{FORMAT}", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (
        "caution        only 3 timed requests (a p99.9 needs 1,000) over only 3 s (a busiest "
        in (result.output)
    )
    assert "# caution: only 3 timed requests (a p99.9 needs 1,000) over only 3 s" in out.read_text()


def test_a_long_log_has_no_caution(tmp_path: Path) -> None:
    """Two thousand requests over two minutes: no caution line."""
    traffic = read_traffic(
        [_write(tmp_path, [_line(i // 16, "/a", 0.01) for i in range(2000)])], NGINX
    )
    assert traffic.cautions() == []


def test_a_span_past_what_one_read_covers_is_refused_at_the_line(tmp_path: Path) -> None:
    """Two valid times 109 years apart (1990 and 2099): refused at the later line, not a
    workload over 3.4 billion seconds; the same from stdin names stdin."""
    lines = [_line(0, "/a", 0.01, day="26/Nov/1990"), _line(0, "/a", 0.01, day="26/Nov/2099")]
    log = _write(tmp_path, lines)
    with pytest.raises(LogError, match=rf"{log}:2: .* days from the log's time 1990-11-26"):
        read_traffic([log], NGINX)
    result = CliRunner().invoke(
        cli, ["measure", "--log", "-", "--log-format", f"nginx:{FORMAT}"], input="".join(lines)
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: --log: stdin: ")
    assert result.output.count("\n") == 1
