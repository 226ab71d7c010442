"""Reading access logs: each format's fields, `a, b : c` upstream times, gzip, rotated sets,
stdin, hostile bytes, the timing hint, and `measure --log`'s one-line errors."""

from __future__ import annotations

import gzip
import re
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import LogFormat, LogFormatError, build_format, detect_format, read_traffic
from servertune.logs.formats.base import QUOTED_REQUEST_LINE, REQUEST_LINE
from servertune.logs.formats.nginx import formats_in_conf, upstream_ms
from servertune.logs.reader import CHUNK_BYTES, MAX_LINE_BYTES, rotation_order
from servertune.logs.routes import MAX_ROUTES, OTHER, template, template_block, template_lines
from servertune.logs.traffic import FAST_RETRY_CHUNKS, PROGRESS_BYTES, SHOWN_BAD_LINES

TIMED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" $request_length $request_time $upstream_response_time'
)


def _nginx_line(second: int, path: str, status: int, upstream: str, request_time: str = "") -> str:
    return (
        f'10.0.0.1 - - [26/Nov/2026:13:{second // 60:02d}:{second % 60:02d} +0000] "GET {path} '
        f'HTTP/1.1" {status} 12 "-" "Mozilla/5.0 (X11; \\x22quoted\\x22)" 230 '
        f"{request_time or upstream.split(',')[0]} {upstream}\n"
    )


def test_nginx_upstream_times_sum_retries_and_redirects() -> None:
    """`a, b : c` is every upstream tried (retries, internal redirects); `-` counts nothing."""
    assert upstream_ms("0.012") == pytest.approx(12)
    assert upstream_ms("0.010, 0.020 : 0.005") == pytest.approx(35)
    assert upstream_ms("-, 0.020") == pytest.approx(20)
    assert upstream_ms("-") is None


def test_nginx_log_format_columns_routes_and_statuses(tmp_path: Path) -> None:
    """A custom log_format: every field read, ids collapsed, a retry's times summed."""
    log = tmp_path / "access.log"
    log.write_text(
        _nginx_line(0, "/users/17/orders?page=2", 200, "0.020")
        + _nginx_line(0, "/users/8812/orders", 200, "0.010, 0.030")
        + _nginx_line(1, "/a/123e4567-e89b-12d3-a456-426614174000", 504, "60.001")
        + _nginx_line(3, "/", 499, "-", request_time="5.000")
    )
    traffic = read_traffic([log], build_format("nginx", TIMED))
    assert (traffic.lines, traffic.requests, traffic.timed, traffic.unparsable) == (4, 4, 3, 0)
    # The 499 nginx answered itself (upstream `-`) is a request of its route, not a timed one.
    assert sorted(traffic.routes) == ["/", "/a/{uuid}", "/users/{id}/orders"]
    assert (traffic.routes["/"].requests, traffic.routes["/"].count) == (1, 0)
    assert traffic.routes["/users/{id}/orders"].total_ms == pytest.approx(60)
    assert traffic.statuses == {"200": 2, "504": 1, "499": 1}
    assert traffic.span_s == 4
    assert traffic.peak_rps == 2
    assert traffic.arrival_quantile(0.5) == pytest.approx(1, abs=0.02)  # 2, 1, 0, 1
    assert traffic.max_length == 230
    assert traffic.format.service_field == "$upstream_response_time"
    rows = {code: meaning for code, _, meaning in traffic.status_rows()}
    assert "proxy_read_timeout" in rows["504"]
    assert "before nginx answered" in rows["499"]


def test_request_time_is_read_when_there_is_no_upstream_time(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text('1.2.3.4 [26/Nov/2026:13:00:00 +0100] "POST /x HTTP/1.1" 201 0.250\n')
    fmt = build_format("nginx", '$remote_addr [$time_local] "$request" $status $request_time')
    traffic = read_traffic([log], fmt)
    assert traffic.quantile(0.5) == pytest.approx(250, rel=0.01)
    assert traffic.format.service_field == "$request_time"


def test_a_log_without_timing_is_read_for_rate_routes_and_statuses(tmp_path: Path) -> None:
    """nginx `combined` has no time: the rate, routes and statuses are read, the timing is marked
    missing with the directive that adds it (printed once), and the workload file holds the peak
    rate only, saying the timing is missing."""
    log = tmp_path / "access.log"
    log.write_text(
        "".join(
            f'1.2.3.4 - - [26/Nov/2026:13:00:0{i // 2} +0000] "GET /users/{i} HTTP/1.1" '
            f'{404 if i == 3 else 200} 5 "-" "curl/8.0"\n'
            for i in range(6)
        )
    )
    traffic = read_traffic([log], detect_format(log))
    assert traffic.requests == 6
    assert traffic.routes["/users/{id}"].requests == 6
    assert traffic.workload_values() == {"peak_rps": 2.0}
    result = CliRunner().invoke(cli, ["measure", "--log", str(log), "--out", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    # nginx `combined` and gunicorn's default write alike: both fixes are named, once.
    assert result.output.count("add $upstream_response_time") == 1
    assert "service time   not in this log: nginx: add $upstream_response_time" in result.output
    assert " / gunicorn: add %(D)s" in result.output
    assert "  /users/{id}                                       6 100.0%" in result.output
    assert "  404          1  16.67%" in result.output
    written = (tmp_path / "w").read_text()
    assert "# service_time_ms, slow calls, request_tail_ms: timing missing" in written
    assert "[workload]\npeak_rps = 2.0\n" in written


def test_nginx_conf_gives_the_format_its_access_log_uses(tmp_path: Path) -> None:
    conf = (
        "http {\n  log_format main escape=json '$remote_addr [$time_local] '\n"
        "      '\"$request\" $status $upstream_response_time';  # two strings, joined\n"
        "  access_log /var/log/nginx/access.log main buffer=32k;\n}\n"
    )
    formats, used = formats_in_conf(conf)
    assert (
        formats["main"] == '$remote_addr [$time_local] "$request" $status $upstream_response_time'
    )
    assert used == ["main"]
    (tmp_path / "nginx.conf").write_text(conf)
    log = tmp_path / "access.log"
    log.write_text('::1 [26/Nov/2026:13:00:00 +0000] "GET /p HTTP/2.0" 200 0.004\n')
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(log), "--log-conf", str(tmp_path / "nginx.conf")]
    )
    assert result.exit_code == 0, result.output
    assert "p50 4.0 ms" in result.output


def test_gunicorn_timing_atoms(tmp_path: Path) -> None:
    """%(D)s is microseconds, %(M)s milliseconds, %(L)s decimal seconds."""
    for atom, text in (("D", "12500"), ("M", "12"), ("L", "0.012500")):
        log = tmp_path / f"{atom}.log"
        log.write_text(f'127.0.0.1 [26/Nov/2026:13:00:00 +0000] "GET /x HTTP/1.1" 200 {text}\n')
        fmt = build_format("gunicorn", f'%(h)s %(t)s "%(r)s" %(s)s %({atom})s')
        assert fmt.service_field == f"%({atom})s"
        assert read_traffic([log], fmt).quantile(0.5) == pytest.approx(12.25, rel=0.03)


HAPROXY = (
    "Nov 26 13:00:00 lb haproxy[14389]: 10.0.1.2:33317 [26/Nov/2026:13:00:00.655] http-in "
    "static/srv1 10/0/30/{tr}/{ta} {status} 2750 - - {term} 1/1/1/1/0 0/0 {{1wt.eu}} {{}} "
    '"GET /index.html HTTP/1.1"\n'
)


def test_haproxy_timers_and_termination_state(tmp_path: Path) -> None:
    """Tr is the server's time; -1 (no answer) is not a time; `sH` 504s are counted."""
    log = tmp_path / "haproxy.log"
    log.write_text(
        HAPROXY.format(tr=69, ta=109, status=200, term="----")
        + HAPROXY.format(tr=-1, ta=30001, status=504, term="sH--")
    )
    traffic = read_traffic([log], detect_format(log))
    assert traffic.format.name == "haproxy"
    assert (traffic.requests, traffic.timed) == (2, 1)
    assert traffic.quantile(0.5) == pytest.approx(69, rel=0.01)
    assert traffic.terminations == {"-- 200": 1, "sH 504": 1}


def test_haproxys_own_event_lines_are_neither_requests_nor_unparsable(tmp_path: Path) -> None:
    """HAProxy writes its proxy and server events into the same log as the requests (raw or
    behind syslog's prefix): they are counted apart and named in the report, not unparsable."""
    log = tmp_path / "haproxy.log"
    log.write_text(
        HAPROXY.format(tr=69, ta=109, status=200, term="----")
        + "Proxy servertune_lb stopped (cumulated conns: FE: 747, BE: 0).\n"
        + "Nov 26 13:00:01 lb haproxy[14389]: Server be/app1 is DOWN, reason: Layer4 "
        'connection problem, info: "Connection refused", check duration: 0ms.\n'
        + "Nov 26 13:00:02 lb haproxy[14389]: Proxy fe started.\n"
        + "this is not HAProxy\n"
    )
    traffic = read_traffic([log], build_format("haproxy"))
    assert (traffic.requests, traffic.events, traffic.unparsable) == (1, 3, 1)
    assert [bad.text for bad in traffic.bad_lines] == ["this is not HAProxy"]
    result = CliRunner().invoke(cli, ["measure", "--log", str(log), "--log-format", "haproxy"])
    assert "1 requests, 1 unparsable, 0 blank, 3 of haproxy's own events" in result.output


ALB = (
    "https 2026-11-26T13:00:00.186641Z app/my-lb/50dc6c495c0c9188 192.168.131.39:2817 "
    '10.0.0.1:80 0.000 {target} 0.000 {status} {status} 34 366 "GET '
    'https://www.example.com:443/api/{id}?x=1 HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 '
    "TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc "
    '"Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2026-11-26T13:00:00.186641Z "forward" '
    '"-" "-" "10.0.0.1:80" "200" "-" "-"\n'
)


def test_alb_target_processing_time_and_url_paths(tmp_path: Path) -> None:
    log = tmp_path / "alb.log"
    log.write_text(
        ALB.format(target="0.048", status=200, id=7) + ALB.format(target="-1", status=504, id=8)
    )
    traffic = read_traffic([log], detect_format(log))
    assert traffic.format.name == "alb"
    assert list(traffic.routes) == ["/api/{id}"]
    assert traffic.quantile(0.5) == pytest.approx(48, rel=0.01)
    assert traffic.statuses == {"200": 1, "504": 1}


def test_uwsgi_request_log_msecs_and_micros(tmp_path: Path) -> None:
    line = (
        "[pid: 4711|app: 0|req: 3/9] 127.0.0.1 () {{34 vars in 604 bytes}} "
        "[Thu Nov 26 13:00:00 2026] GET /items/5 => generated 3 bytes in {t} "
        "(HTTP/1.1 200) 2 headers in 79 bytes (1 switches on core 0)\n"
    )
    log = tmp_path / "uwsgi.log"
    log.write_text(
        "*** Starting uWSGI ***\n" + line.format(t="42 msecs") + line.format(t="8000 micros")
    )
    traffic = read_traffic([log], detect_format(log))
    assert (traffic.format.name, traffic.requests, traffic.unparsable) == ("uwsgi", 2, 1)
    assert sorted([traffic.quantile(0), traffic.quantile(1)]) == pytest.approx([8, 42], rel=0.01)


def test_gzip_rotated_sets_and_stdin(tmp_path: Path) -> None:
    """access.log.2.gz, access.log.1, access.log: read oldest first, whatever order given."""
    (tmp_path / "access.log").write_text(_nginx_line(20, "/c", 200, "0.003"))
    (tmp_path / "access.log.1").write_text(_nginx_line(10, "/b", 200, "0.002"))
    with gzip.open(tmp_path / "access.log.2.gz", "wt") as handle:
        handle.write(_nginx_line(0, "/a", 200, "0.001"))
    given = [tmp_path / n for n in ("access.log", "access.log.2.gz", "access.log.1")]
    ordered = rotation_order(given)
    assert [p.name for p in ordered] == ["access.log.2.gz", "access.log.1", "access.log"]
    traffic = read_traffic(given, build_format("nginx", TIMED))
    assert (traffic.requests, traffic.span_s) == (3, 21)
    stdin = (tmp_path / "access.log.1").read_bytes()
    result = CliRunner().invoke(
        cli, ["measure", "--log", "-", "--log-format", f"nginx:{TIMED}"], input=stdin
    )
    assert result.exit_code == 0, result.output
    assert "stdin" in result.output
    assert "p50 2.0 ms" in result.output


def test_hostile_bytes_huge_lines_and_corrupt_gzip(tmp_path: Path) -> None:
    """Binary, non-UTF-8 and over-long lines are counted and shown escaped, never a traceback."""
    log = tmp_path / "access.log"
    good = _nginx_line(0, "/ok", 200, "0.010").encode()
    bad = [
        b"\x00\x01\xff\xfe binary\n",
        b"GET /\xc3\x28 broken utf-8\n",
        b"x" * (MAX_LINE_BYTES - 100) + b"\n",  # long, under the limit: read, does not match
        b"y" * (CHUNK_BYTES + MAX_LINE_BYTES * 2) + b"\n",  # past a block: skipped unread
    ]
    log.write_bytes(good + b"".join(bad) + b"\n" + good * 3 + b"tail without newline")
    traffic = read_traffic([log], build_format("nginx", TIMED))
    assert (traffic.lines, traffic.requests, traffic.unparsable, traffic.blank) == (10, 4, 5, 1)
    shown = [str(b) for b in traffic.bad_lines]
    assert len(shown) == SHOWN_BAD_LINES
    assert all(s.isascii() and s.isprintable() and len(s) < 400 for s in shown)
    assert any(s.endswith(":5: '(longer than 64 KiB)'") for s in shown), shown
    assert any(s.endswith(":10: 'tail without newline'") for s in shown), shown
    (tmp_path / "bad.gz").write_bytes(gzip.compress(good * 100)[:-30])
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(tmp_path / "bad.gz"), "--log-format", f"nginx:{TIMED}"]
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: --log: ")
    assert result.output.count("\n") == 1
    for bad_input, message in (
        ([str(tmp_path / "missing.log")], "cannot read"),
        (["/dev/null"], "not a regular file"),
        ([str(tmp_path / "empty.log")], "is empty"),
    ):
        (tmp_path / "empty.log").write_text("")
        out = CliRunner().invoke(cli, ["measure", "--log", *bad_input, "--log-format", "nginx"])
        assert out.exit_code == 2, out.output
        assert message in out.output


def test_a_line_cut_short_never_takes_the_next_line_with_it(tmp_path: Path) -> None:
    """The reader's fast pattern may match across a newline; a chunk where it does (a line cut
    after its path, then good lines) is matched again with the strict pattern, so the lines
    around the cut one are read as they are, and the cut one is counted and shown."""
    log = tmp_path / "access.log"
    log.write_text("/users/1 200 0.010\n/cut/9\n/users/2 200 0.020\n/a/b 404 0.030\n")
    fmt = build_format("nginx", "$uri $status $request_time")
    # The fast pattern alone does take the next line into the cut one's match:
    fast = fmt.scanner(["path", "status"], strict=False).findall(log.read_bytes())
    assert fast[1] == (b"/cut/9\n/users/2", b"200")
    traffic = read_traffic([log], fmt)
    assert (traffic.lines, traffic.requests, traffic.unparsable) == (4, 3, 1)
    assert sorted(traffic.routes) == ["/a/b", "/users/{id}"]
    assert traffic.routes["/users/{id}"].count == 2
    assert traffic.routes["/users/{id}"].total_ms == pytest.approx(30)
    assert traffic.statuses == {"200": 2, "404": 1}
    assert [b.line for b in traffic.bad_lines] == [2]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab \r", max_size=12), min_size=1, max_size=30),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(0, 400), max_size=8),
)
def test_chunks_are_the_lines_whole_wherever_the_blocks_are_cut(
    lines: list[str], crlf: bool, cuts: list[int]
) -> None:
    """However a log's bytes arrive in blocks (a line, a `\r\n`, cut anywhere), the chunks
    hold its lines whole, in order, `\r\n` made `\n`, each numbered from the first."""
    from servertune.logs.reader import _chunks

    text = ("\r\n" if crlf else "\n").join(lines).encode()
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    blocks = [text[a:b] for a, b in pairwise(bounds)]
    got = list(_chunks(iter(blocks), "x"))
    expected = text.replace(b"\r\n", b"\n")
    if expected and not expected.endswith(b"\n"):
        expected += b"\n"
    assert b"".join(c.data for c in got) == expected
    assert [c.lines for c in got] == [c.data.count(b"\n") for c in got]
    assert [c.first_line for c in got] == [
        1 + sum(c.lines for c in got[:i]) for i in range(len(got))
    ]


def test_progress_is_called_each_mib_whatever_the_chunk_size(tmp_path: Path) -> None:
    """`measure --log` advances "MiB read" once a call: a call per MiB, not per (smaller) chunk."""
    log = tmp_path / "access.log"
    line = _nginx_line(0, "/x", 200, "0.010")
    log.write_text(line * (3 * PROGRESS_BYTES // len(line) + 10))
    calls: list[int] = []
    read_traffic([log], build_format("nginx", TIMED), on_chunk=calls.append)
    assert CHUNK_BYTES < PROGRESS_BYTES
    assert len(calls) >= 2
    assert log.stat().st_size - PROGRESS_BYTES < sum(calls) <= log.stat().st_size
    assert all(PROGRESS_BYTES <= n < PROGRESS_BYTES + 2 * CHUNK_BYTES for n in calls)


def test_unparsable_and_blank_lines_all_through_a_log_are_all_counted(tmp_path: Path) -> None:
    """A bad line in every chunk: the fast pattern is mostly set aside (`FAST_RETRY_CHUNKS`),
    and every good, blank and bad line is still counted, over many chunks."""
    log = tmp_path / "access.log"
    lines, good, blank = [], 0, 0
    for n in range(100_000):
        if n % 300 == 7:
            lines.append("/cut/9\n")
        elif n % 700 == 3:
            lines.append("\n")
            blank += 1
        else:
            lines.append(f"/users/{n} 200 0.010\n")
            good += 1
    log.write_text("".join(lines))
    assert log.stat().st_size > 3 * FAST_RETRY_CHUNKS * CHUNK_BYTES
    traffic = read_traffic([log], build_format("nginx", "$uri $status $request_time"))
    assert (traffic.lines, traffic.requests, traffic.blank) == (100_000, good, blank)
    assert traffic.unparsable == 100_000 - good - blank
    assert dict(traffic.routes).keys() == {"/users/{id}"}
    assert [b.line for b in traffic.bad_lines] == [8, 308, 608, 908, 1208]


def test_a_time_of_the_right_width_that_is_no_time_is_an_unparsable_line(tmp_path: Path) -> None:
    """The fast pattern reads `$time_local` by its 26 characters; a line whose 26 are no time
    (the strict pattern rejects it) is still unparsable, in whichever chunk it falls, and the
    good lines around it are all read."""
    fmt = build_format("nginx", TIMED)
    assert fmt.time_check is not None
    assert b".{26}" in fmt.scanner(["ts"], strict=False).pattern
    good = _nginx_line(5, "/users/7", 200, "0.010")
    bad = good.replace("26/Nov/2026:13:00:05 +0000", "26/Nov/2026:13:00:05 +00x0")
    assert len(bad) == len(good)
    lines = [bad if n % 1000 == 999 else good for n in range(5000)]
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    traffic = read_traffic([log], fmt)
    assert (traffic.lines, traffic.requests, traffic.unparsable) == (5000, 4995, 5)
    assert [b.line for b in traffic.bad_lines] == [1000, 2000, 3000, 4000, 5000]
    assert traffic.statuses == {"200": 4995}


def test_the_scanner_captures_only_the_columns_asked_for() -> None:
    """`$request` fills method and path; asked for path only, method's group is not captured."""
    fmt = build_format("nginx", TIMED)
    assert {"method", "path", "status"} <= set(fmt.pattern.groupindex)
    for strict in (True, False):
        scan = fmt.scanner(["path", "status"], strict=strict)
        assert set(scan.groupindex) == {"path", "status"}
        line = _nginx_line(0, "/x?y=1", 200, "0.010").encode()
        assert scan.findall(line) == [(b"/x", b"200")]


#: Formats whose `$request` is quoted and whose time lists end the line or a quote: where the
#: reader's patterns never give back a request's method and path, or a list of upstream times.
_KEPT_FORMATS = (
    TIMED,
    f"{TIMED} $upstream_connect_time",
    '"$request" "$upstream_response_time" $status',
    '"$request" $upstream_response_time $upstream_connect_time',
)
#: A request line's pieces, with the characters that split one where a pattern could give
#: some back (a space, `?`, a quote); and a list of upstream times, well or badly formed.
_REQUESTS = st.tuples(
    st.sampled_from(["GET", "PROPFIND", "", "get", "G" * 21]),
    st.sampled_from([" ", "", "  "]),
    st.text(alphabet='/ab1?= "', max_size=10),
    st.text(alphabet=' ?"HTP/1.x', max_size=10),
).map("".join)
_TIME_LISTS = st.lists(st.sampled_from(["0.012", "-", "1", ""]), min_size=1, max_size=3).flatmap(
    lambda items: st.sampled_from([", ", " : ", ",", " "]).map(lambda s: s.join(items))
)


@settings(max_examples=500, deadline=None)
@given(
    fmt_text=st.sampled_from(_KEPT_FORMATS),
    request=_REQUESTS,
    upstream=_TIME_LISTS,
    connect=_TIME_LISTS,
)
def test_the_kept_request_and_time_list_match_as_the_general_patterns(
    fmt_text: str, request: str, upstream: str, connect: str
) -> None:
    """nginx's `?+` request and `*+` time list (base.py `QUOTED_REQUEST_LINE`, nginx.py
    `_TIMES_KEPT`) match every line as the patterns that may give back do: the same lines, the
    same columns."""
    from servertune.logs.formats import nginx

    fmt = build_format("nginx", fmt_text)
    assert QUOTED_REQUEST_LINE in fmt.pattern.pattern
    line = (
        fmt_text.replace("$remote_addr", "10.0.0.1")
        .replace("$remote_user", "-")
        .replace("$time_local", "26/Nov/2026:13:00:05 +0000")
        .replace("$request_length", "230")
        .replace("$request_time", "0.010")
        .replace("$request", request)
        .replace("$status", "200")
        .replace("$body_bytes_sent", "12")
        .replace("$http_referer", "-")
        .replace("$http_user_agent", "curl/8")
        .replace("$upstream_response_time", upstream)
        .replace("$upstream_connect_time", connect)
    )
    _match_as_the_general_pattern(fmt, line, (nginx._TIMES_KEPT, nginx._TIMES))


#: gunicorn's and HAProxy's lines around a quoted request (`<request>`); HAProxy's also cut
#: before the closing quote, as it logs a request line it truncated.
_HAPROXY_HEAD = HAPROXY.format(tr=5, ta=9, status=200, term="----").split('"')[0]
_OTHER_REQUESTS = (
    ("gunicorn", None, '10.0.0.1 - - [26/Nov/2026:13:00:05 +0000] "<request>" 200 12 "-" "ua"'),
    (
        "gunicorn",
        '%(h)s %(t)s "%(r)s" %(s)s %(D)s',
        '1.2.3.4 [26/Nov/2026:13:00:05 +0000] "<request>" 200 9',
    ),
    ("haproxy", None, _HAPROXY_HEAD + '"<request>"'),
    ("haproxy", None, _HAPROXY_HEAD + '"<request>'),
    # No syslog prefix; a prefix whose first `[...]` reads as a time the rest does not follow.
    ("haproxy", None, _HAPROXY_HEAD.split(": ", 1)[1] + '"<request>"'),
    (
        "haproxy",
        None,
        "x[1] [26/Nov/2026:13:00:00] b " + _HAPROXY_HEAD.split(": ", 1)[1] + '"<request>"',
    ),
)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(_OTHER_REQUESTS), request=_REQUESTS)
def test_gunicorn_and_haproxy_requests_match_as_the_general_pattern(
    case: tuple[str, str | None, str], request: str
) -> None:
    """gunicorn's quoted `%(r)s` and HAProxy's request are read with the same `?+` pattern as
    nginx's (and HAProxy's line up to its time a `[` at a time), and match every line as the
    general patterns do."""
    from servertune.logs.formats import haproxy

    name, spec, template = case
    fmt = build_format(name, spec)
    assert QUOTED_REQUEST_LINE in fmt.pattern.pattern
    # HAProxy's line up to its time, read a `[` at a time, against the lazy scan it replaces.
    kept = [(haproxy._UP_TO_TIME, r"^[^\n]*?\[")] if name == "haproxy" else []
    line = template.replace("<request>", request)
    assert fmt.pattern.match(line) is not None or '"' in request or "\n" in request
    _match_as_the_general_pattern(fmt, line, *kept)


def _match_as_the_general_pattern(fmt: LogFormat, line: str, *kept: tuple[str, str]) -> None:
    """`fmt`'s pattern and its scanner match `line` as the pattern with `REQUEST_LINE` (and
    each `kept` piece's general form) in place of `QUOTED_REQUEST_LINE` does."""
    general_text = fmt.pattern.pattern.replace(QUOTED_REQUEST_LINE, REQUEST_LINE)
    for piece, general_piece in kept:
        general_text = general_text.replace(piece, general_piece)
    general = re.compile(general_text, re.MULTILINE)
    for pattern, other in ((fmt.pattern, general), (fmt.scanner(["path", "service"]), None)):
        if other is None:  # the reader's own scanner, over bytes, against the general one
            other = re.compile(general.pattern.encode(), re.MULTILINE)
            text: str | bytes = line.encode()
        else:
            text = line
        ours, theirs = pattern.match(text), other.match(text)  # type: ignore[arg-type]
        assert (ours is None) == (theirs is None), line
        if ours is not None and theirs is not None:
            assert [ours.group(g) for g in pattern.groupindex] == [
                theirs.group(g) for g in pattern.groupindex
            ], line


@pytest.mark.parametrize(
    "negated", [r"[^ ?\"\n]", r"[^\ \n]", r"[^/ \"\n]", r"[^\]\\x]", "[^é;]", r"[^\ ]", r"[^\n]"]
)
def test_the_scanners_byte_sets_match_the_bytes_the_negated_sets_do(negated: str) -> None:
    """`LogFormat.scanner` writes a negated set of two or more bytes as the ranges of the bytes
    it matches (a bitmap the regex engine reads at once): every byte matched as before."""
    from servertune.logs.formats.base import _NEGATED_SET, _as_bitmap

    written = _NEGATED_SET.sub(_as_bitmap, negated)
    before = re.compile(negated.encode())
    after = re.compile(written.encode())
    for byte in (bytes((b,)) for b in range(256)):
        assert bool(before.fullmatch(byte)) == bool(after.fullmatch(byte)), (written, byte)
    one_byte = negated in (r"[^\ ]", r"[^\n]")  # a tight loop in the engine: kept as it is
    assert (written == negated) == one_byte


def test_format_option_errors_are_one_line(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("x\n")
    for args, message in (
        (["--log-format", "apache"], "--log-format: must be one of nginx, gunicorn"),
        (["--log-format", "nginx:no variables"], "--log-format: an nginx log_format names"),
        (["--log-format", "haproxy:%x"], "--log-format: haproxy: only"),
        ([], "not one of the default formats"),
    ):
        result = CliRunner().invoke(cli, ["measure", "--log", str(log), *args])
        assert result.exit_code == 2, result.output
        assert message in result.output, result.output
        assert result.output.count("\n") == 1, result.output
    for args, message in (
        (["--log-conf", str(tmp_path / "none.conf")], "error: --log-conf: cannot read"),
        (["--log-format", "nginx:x", "--log-conf", str(log)], "error: --log-conf: "),
        (["--path", "/x"], "error: --path: measures an app; --log reads a log instead"),
    ):
        result = CliRunner().invoke(cli, ["measure", "--log", str(log), *args])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(message), result.output
    both = CliRunner().invoke(cli, ["measure", "m:app", "--log", str(log)])
    assert both.exit_code == 2
    assert "not both" in both.output
    with pytest.raises(LogFormatError):
        build_format("nginx", "$a\n$b")


def test_routes_collapse_ids_and_are_bounded() -> None:
    assert template("/users/8812/orders/3f2b9a0c1d2e3f4a5b6c7d8e9f") == "/users/{id}/orders/{hash}"
    assert template("/items/42.json?x=1") == "/items/{id}.json"
    assert template("/s/abcDEF1234567890ghijKL") == "/s/{token}"
    assert template("/static/site.css") == "/static/site.css"


_SEGMENTS = st.sampled_from(
    [
        "api", "items", "12", "0", "12345678901234567890123", "0123456789abcdef",
        "0123456789ABCDEF0123456789", "3f2b9a0c-1d2e-3f4a-5b6c-7d8e9f001122",
        "3f2b9a0c-1d2e-3f4a-5b6c-7d8e9f001122abc", "12345678-1234-1234-1234-123456789012",
        "abcDEF1234567890ghijKL", "abcdefabcdef12345678==", "aaaaaaaaaaaaaaaaaaaaaaaa",
        "deadbeefdeadbeef-x", "v1.json", "42.json", "x?y=1", "a_b-c", "{id}",
    ]
)  # fmt: skip


@given(st.lists(st.lists(_SEGMENTS | st.text("0123456789abcdefXYZ-_=.", max_size=40), max_size=6),
                max_size=20))  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_template_block_is_template_lines(paths: list[list[str]]) -> None:
    """The reader's templating of a block of paths as bytes names every path's route exactly
    as `template_lines` does over text: one rule, two spellings."""
    block = "\n".join("/" + "/".join(segments) for segments in paths)
    assert template_block(block.encode()).decode() == template_lines(block)


def test_distinct_routes_past_the_bound_share_one_row(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_text(
        "".join(
            _nginx_line(0, f"/page-{chr(97 + i % 26)}{i}x", 200, "0.001")
            for i in range(MAX_ROUTES + 50)
        )
    )
    traffic = read_traffic([log], build_format("nginx", TIMED))
    assert len(traffic.routes) == MAX_ROUTES + 1
    assert traffic.routes[OTHER].count == 50


def test_static_files_past_the_route_bound_are_still_left_out_by_their_own_kind(
    tmp_path: Path,
) -> None:
    """Static files and probes are told by their own route, even where the route table is
    full and they share OTHER's row: every one is left out of the app's load, by its kind."""
    log = tmp_path / "access.log"
    app = [_nginx_line(1, f"/page-{chr(97 + i % 26)}{i}x", 200, "0.001") for i in range(MAX_ROUTES)]
    static = [
        _nginx_line(2, f"/assets/site-{chr(97 + i % 26)}{i}.css", 200, "0.001") for i in range(30)
    ]
    probes = [_nginx_line(3, "/healthz", 200, "0.001")] * 10
    log.write_text("".join(app + static + probes))
    traffic = read_traffic([log], build_format("nginx", TIMED))
    assert traffic.left_out == {"static files": 30, "health checks": 10}
    assert traffic.app_requests == MAX_ROUTES
    assert traffic.routes[OTHER].requests == 30 + 10


def test_slow_calls_become_the_workloads_slow_call_fields(tmp_path: Path) -> None:
    """10 % of requests at 5 s beside 90 % at 20 ms: slow_call_ratio 0.1, and slow_call_ms the
    4.98 s a slow call adds to a 20 ms request (both means), p99.9 5 s the tail."""
    log = tmp_path / "access.log"
    log.write_text(
        "".join(
            _nginx_line(i % 60, "/x", 200, "5.000" if i % 10 == 0 else "0.020") for i in range(1000)
        )
    )
    traffic = read_traffic([log], build_format("nginx", TIMED))
    values = traffic.workload_values()
    assert values["service_time_ms"] == pytest.approx(20, rel=0.01)
    assert values["slow_call_ratio"] == pytest.approx(0.1, abs=0.002)
    assert values["slow_call_ms"] == pytest.approx(4980, rel=0.01)
    assert values["request_tail_ms"] == pytest.approx(5000, rel=0.01)
    assert traffic.slow_time_share() == pytest.approx(500 / 518, rel=0.02)
    text = traffic.to_toml()
    assert "slow calls' mean 5,000.0 ms less the others' mean, of 1,000 requests timed by " in text
    (tmp_path / "w.toml").write_text(text)
    explained = CliRunner().invoke(cli, ["explain", "--workload", str(tmp_path / "w.toml")])
    assert explained.exit_code == 0, explained.output
    assert "\nsources:\n  service_time_ms = 20.0: mean of the " in explained.output


def test_the_timed_nginx_format_bench_app_keeps_is_told_without_a_flag(tmp_path: Path) -> None:
    """`bench app --keep-log` writes nginx's `timed` format (combined + the timing): `measure
    --log` on it needs no --log-format, and reads the app's time from $upstream_response_time."""
    from servertune.logs.formats.nginx import TIMED

    line = (
        '127.0.0.1 - - [29/Nov/2026:03:00:{s:02d} +0000] "GET /io HTTP/1.1" 200 12 "-" "wrk" '
        "80 0.052 0.051 0.000"
    )
    log = tmp_path / "kept.access.log"
    log.write_text("".join(line.format(s=s) + "\n" for s in range(50)), encoding="utf-8")
    fmt = detect_format(log)
    assert fmt.name == "nginx"
    assert fmt.pattern.match(line.format(s=0))
    assert fmt.pattern.pattern == build_format("nginx", TIMED).pattern.pattern
