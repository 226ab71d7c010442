"""Real logs' quirks: several hosts over the same hours, a rotated set, lines out of order, a
$request_time that holds a slow upload, static files and health checks (issue 46, item 5; the
upstream-time lists, ALB and HAProxy -1s and gunicorn's %(L)s/%(M)s/%(D)s are in test_logs.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from servertune.logs import build_format, read_traffic
from servertune.logs.report import format_traffic

FORMAT = '[$time_local] "$request" $status $request_time'
NGINX = build_format("nginx", FORMAT)
BOTH = build_format(
    "nginx", '[$time_local] "$request" $status $request_time $upstream_response_time'
)


def _line(second: int, path: str, seconds: float) -> str:
    clock = f"{13 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return f'[26/Nov/2026:{clock} +0000] "GET {path} HTTP/1.1" 200 {seconds:.3f}\n'


def test_logs_of_several_hosts_over_the_same_hours_add_their_rates(tmp_path: Path) -> None:
    """Two hosts, each 1 request a second for four hours (past the reader's flush of seconds):
    2 a second in every second, not the second host's lines dropped as late."""
    hosts = []
    for name in ("web-1.log", "web-2.log"):
        log = tmp_path / name
        log.write_text("".join(_line(s, "/a", 0.010) for s in range(4 * 3600)))
        hosts.append(log)
    # Not the same bytes (that is one log given twice): the second host answers /b.
    hosts[1].write_text("".join(_line(s, "/b", 0.020) for s in range(4 * 3600)))
    traffic = read_traffic(hosts, NGINX)
    assert (traffic.requests, traffic.span_s, traffic.peak_rps) == (28_800, 14_400, 2)
    assert traffic.mean_rps == 2
    assert traffic.arrival_quantile(0.01) == traffic.arrival_quantile(0.5) == 2


def test_a_rotated_set_of_one_host_joins_its_spans(tmp_path: Path) -> None:
    """access.log.1 (the first two hours) and access.log (the next two): one span of four hours
    at 1 a second, whatever order they are named in."""
    (tmp_path / "access.log.1").write_text("".join(_line(s, "/a", 0.01) for s in range(7200)))
    (tmp_path / "access.log").write_text("".join(_line(s, "/a", 0.01) for s in range(7200, 14400)))
    traffic = read_traffic([tmp_path / "access.log", tmp_path / "access.log.1"], NGINX)
    assert (traffic.requests, traffic.span_s, traffic.peak_rps, traffic.mean_rps) == (
        14_400,
        14_400,
        1,
        1,
    )


def test_lines_out_of_order_by_seconds_count_in_their_own_second(tmp_path: Path) -> None:
    """nginx logs a request when it ends: lines shuffled by up to 20 s read as the sorted log
    (the same seconds, peak, busiest window)."""
    lines = [_line(i // 7 if i % 50 else 30, "/a", 0.01) for i in range(1400)]
    rnd = random.Random(4)
    shuffled = sorted(lines, key=lambda line: lines.index(line) / 7 + rnd.uniform(-20, 20))
    assert shuffled != lines
    (tmp_path / "sorted.log").write_text("".join(lines))
    (tmp_path / "shuffled.log").write_text("".join(shuffled))
    ordered = read_traffic([tmp_path / "sorted.log"], NGINX)
    mixed = read_traffic([tmp_path / "shuffled.log"], NGINX)
    assert (mixed.span_s, mixed.peak_rps, mixed.peak_second) == (
        ordered.span_s,
        ordered.peak_rps,
        ordered.peak_second,
    )
    assert mixed.arrivals == ordered.arrivals
    assert (mixed.busiest, mixed.busiest_start) == (ordered.busiest, ordered.busiest_start)


def test_the_apps_time_is_read_not_a_slow_clients_upload(tmp_path: Path) -> None:
    """$request_time 5 s (a slow client's upload) beside $upstream_response_time 10 ms: the
    app's 10 ms is the service time."""
    log = tmp_path / "access.log"
    log.write_text(
        '[26/Nov/2026:13:00:00 +0000] "POST /upload HTTP/1.1" 201 5.000 0.010\n'
        '[26/Nov/2026:13:00:01 +0000] "POST /upload HTTP/1.1" 201 0.012 0.010\n'
    )
    traffic = read_traffic([log], BOTH)
    assert traffic.format.service_field == "$upstream_response_time"
    assert traffic.quantile(1.0) == pytest.approx(10, rel=0.01)


def test_static_files_and_health_checks_are_named_and_left_out_of_the_apps_load(
    tmp_path: Path,
) -> None:
    """A log of mostly static files (through nginx, $request_time 1 ms) and health checks: the
    report names both, and the workload's service time and rate are the app's requests'."""
    lines = []
    for i in range(3000):
        second = i // 10
        if i % 10 < 7:
            lines.append(_line(second, f"/static/css/site-{i % 3}.css", 0.001))
        elif i % 10 == 7:
            lines.append(_line(second, "/healthz", 0.001))
        else:
            lines.append(_line(second, f"/api/items/{i}", 0.100))
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    traffic = read_traffic([log], NGINX)
    assert traffic.left_out == {"static files": 2100, "health checks": 300}
    assert traffic.app_requests == 600
    assert traffic.mean_rps == pytest.approx(2)
    assert traffic.peak_rps == 2
    values = traffic.workload_values()
    assert values["service_time_ms"] == pytest.approx(100)
    report = format_traffic(traffic)
    assert "left out     2,100 requests for static files (70.0%), not the app's load: " in report
    assert "/static/css/site-0.css x700" in report
    assert "left out     300 requests for health checks (10.0%), not the app's load: /healthz" in (
        report
    )
    assert "  /api/items/{id}                                 600 100.0%" in report
