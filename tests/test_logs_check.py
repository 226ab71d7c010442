"""`check --log`: the findings only traffic shows, from an access log beside nginx and gunicorn
configs (timeouts hit by the tail, 499s, queueing at the peak, bodies near the limit)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.traffic import TRAFFIC_RULES
from servertune.cli import app as cli
from servertune.logs import build_format, read_traffic
from servertune.machine import Machine

FORMAT = '$remote_addr [$time_local] "$request" $status $request_length $upstream_response_time'


def _configs(tmp_path: Path) -> list[Path]:
    nginx = tmp_path / "nginx.conf"
    nginx.write_text(
        "events {}\nhttp {\n"
        f"    log_format timed '{FORMAT}';\n"
        "    access_log access.log timed;\n"
        "    client_max_body_size 1m;\n"
        "    server {\n        listen 80;\n"
        "        location / {\n            proxy_pass http://127.0.0.1:8000;\n"
        "            proxy_read_timeout 5s;\n        }\n    }\n}\n"
    )
    gunicorn = tmp_path / "gunicorn.conf.py"
    gunicorn.write_text('bind = "127.0.0.1:8000"\nworkers = 2\nthreads = 1\ntimeout = 4\n')
    return [nginx, gunicorn]


def _log(tmp_path: Path, *, busy: bool) -> Path:
    """60 s at 20 requests a second; busy: 1 s requests, a 6 s tail, 499s and a 900 KiB body."""
    lines = []
    for i in range(1200):
        second = i // 20
        status, length = 200, 300
        took = "0.010"
        if busy:
            took = "6.000" if i % 500 == 0 else "1.000"
            status = 499 if i % 100 == 1 else 200
            length = 900 * 1024 if i == 7 else 300
        lines.append(
            f"10.0.0.{i % 250} [26/Nov/2026:13:{second // 60:02d}:{second % 60:02d} +0000] "
            f'"POST /upload/{i} HTTP/1.1" {status} {length} {took}\n'
        )
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    return log


def test_busy_log_shows_each_traffic_finding(tmp_path: Path) -> None:
    """The nginx.conf given names the log_format; every traffic rule fires, at its line."""
    files = _configs(tmp_path)
    log = _log(tmp_path, busy=True)
    result = CliRunner().invoke(
        cli, ["check", "--log", str(log), "--format", "json", "--cores", "2", *map(str, files)]
    )
    assert result.exit_code == 1, result.output
    findings = {f["rule"]: f for f in json.loads(result.output)["findings"]}
    assert set(TRAFFIC_RULES) <= set(findings)
    tail = [
        f for f in json.loads(result.output)["findings"] if f["rule"] == "traffic-tail-over-timeout"
    ]
    assert {(Path(f["file"]).name, f["line"]) for f in tail} == {
        ("nginx.conf", 10),
        ("gunicorn.conf.py", 4),
    }
    assert "p99.9 of the 1,200 requests" in tail[0]["message"]
    assert (
        "12 of 1,200 requests (1.00%) ended 499" in findings["traffic-clients-gave-up"]["message"]
    )
    assert "20 requests of" in findings["traffic-queueing"]["message"]
    assert findings["traffic-body-near-limit"]["line"] == 5


def test_quiet_log_adds_no_finding_and_no_log_runs_as_before(tmp_path: Path) -> None:
    files = _configs(tmp_path)
    traffic = read_traffic([_log(tmp_path, busy=False)], build_format("nginx", FORMAT))
    machine = Machine(cores=2)
    with_log = check_files(files, machine=machine, traffic=traffic)
    without = check_files(files, machine=machine)
    assert with_log.findings == without.findings
    assert not any(f.rule.startswith("traffic-") for f in with_log.findings)


def test_check_log_errors_are_one_line(tmp_path: Path) -> None:
    files = [str(p) for p in _configs(tmp_path)]
    (tmp_path / "junk.log").write_text("not a log line\n")
    for args, message in (
        (["--log", str(tmp_path / "missing.log")], "error: --log: cannot read"),
        (["--log", str(tmp_path / "junk.log")], "error: --log: "),
        (["--log-format", "nginx"], "error: --log-format: goes with --log"),
        (["--log", str(tmp_path / "junk.log"), "--log-format", "iis"], "error: --log-format:"),
    ):
        result = CliRunner().invoke(cli, ["check", *args, *files])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(message), result.output
        assert result.output.count("\n") == 1, result.output


def test_a_timeout_finding_states_the_share_of_requests_the_log_shows_past_it(
    tmp_path: Path,
) -> None:
    """One request in ten takes 6 s under a 5 s proxy_read_timeout: the finding says 10.00 %
    (120 of 1,200), not "about one request in a thousand (or more)"."""
    files = _configs(tmp_path)
    lines = [
        f"10.0.0.1 [26/Nov/2026:13:{i // 20 // 60:02d}:{i // 20 % 60:02d} +0000] "
        f'"GET /report/{i} HTTP/1.1" 200 300 {"6.000" if i % 10 == 0 else "0.010"}\n'
        for i in range(1200)
    ]
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    result = CliRunner().invoke(
        cli, ["check", "--log", str(log), "--format", "json", "--cores", "2", *map(str, files)]
    )
    tail = [
        f for f in json.loads(result.output)["findings"] if f["rule"] == "traffic-tail-over-timeout"
    ]
    nginx = next(f for f in tail if Path(f["file"]).name == "nginx.conf")
    assert (
        "10.00% (120 of 1,200) of the log's requests took that long or longer" in (nginx["message"])
    )
    assert "one request in a thousand" not in nginx["message"]
