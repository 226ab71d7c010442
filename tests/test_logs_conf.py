"""`--log-conf nginx.conf`: the log_format is looked for where nginx would find it (the files
`include` names) and, when the config uses several, the one the log's lines are written in
(issue 47: it ignored `include`, took the first of two formats, then suggested the flag the
user had already given)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs.choose import choose_format
from servertune.logs.errors import LogConfError

SHORT = '$remote_addr [$time_local] "$request" $status $upstream_response_time'
TIMED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" $request_time'
)


def _log(path: Path, requests: int = 60) -> Path:
    """A log written with TIMED: one request a second, 20 ms each."""
    lines = [
        f'10.0.0.1 - - [26/Nov/2026:13:{40 + i // 60:02d}:{i % 60:02d} +0000] "GET /items/{i} '
        f'HTTP/1.1" 200 12 "-" "curl/8" 0.020'
        for i in range(requests)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _conf(tmp_path: Path) -> Path:
    """An nginx.conf using two formats: SHORT for one server, TIMED (defined in an included
    file) for the app's server, whose log is the one read."""
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "formats.conf").write_text(f"log_format timed '{TIMED}';\n")
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        "events {}\nhttp {\n"
        f"  log_format short '{SHORT}';\n"
        "  include conf.d/*.conf;\n"
        "  server { listen 8080; access_log /var/log/nginx/static.log short; }\n"
        "  server { listen 8081; access_log /var/log/nginx/app.log timed; }\n"
        "}\n"
    )
    return conf


def test_a_log_format_defined_in_an_included_file_is_found(tmp_path: Path) -> None:
    """`nginx:timed` names a format only an included file defines."""
    fmt = choose_format("nginx:timed", _conf(tmp_path), _log(tmp_path / "app.log"))
    assert fmt.pattern.match((tmp_path / "app.log").read_text().splitlines()[0])


def test_of_two_formats_the_one_the_log_is_written_in_is_chosen(tmp_path: Path) -> None:
    """No name given: the config's two formats are tried on the log's first lines."""
    log = _log(tmp_path / "app.log")
    fmt = choose_format(None, _conf(tmp_path), log)
    assert fmt.pattern.match(log.read_text().splitlines()[0])


def test_measure_reads_the_log_through_its_config_with_no_hint(tmp_path: Path) -> None:
    """`measure --log app.log --log-conf nginx.conf` reads every line and suggests no flag."""
    log = _log(tmp_path / "app.log")
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(log), "--log-conf", str(_conf(tmp_path))]
    )
    assert result.exit_code == 0, result.output
    assert "--log-conf" not in result.output
    assert "60: 60 requests, 0 unparsable" in result.output
    assert "timed by $request_time" in result.output


def test_an_include_outside_the_configs_folder_is_not_read(tmp_path: Path) -> None:
    """An include that leaves the config's folder is passed over, never opened."""
    inner = tmp_path / "etc"
    inner.mkdir()
    (tmp_path / "outside.conf").write_text(f"log_format timed '{TIMED}';\n")
    conf = inner / "nginx.conf"
    conf.write_text("http {\n  include ../outside.conf;\n  access_log app.log timed;\n}\n")
    with pytest.raises(LogConfError, match="defines no log_format 'timed'"):
        choose_format(None, conf, _log(tmp_path / "app.log"))
