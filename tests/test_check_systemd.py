"""systemd service units: what `ExecStart=` starts, and systemd's own stop (`KillSignal=`,
SIGTERM by default; `TimeoutStopSec=`, 90 s by default) held against the server's graceful
shutdown. Each test writes the unit of one pattern seen on hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.model import CheckInputError, Finding, Severity
from servertune.check.systemd import read_systemd
from servertune.machine import Machine

MACHINE = Machine(cores=2, somaxconn=4096)

GUNICORN_UNIT = """\
[Unit]
Description=gunicorn daemon
After=network.target

[Service]
User=www-data
Environment="DJANGO_SETTINGS_MODULE=proj.settings" WEB_CONCURRENCY=3
ExecStart=/srv/venv/bin/gunicorn --timeout 120 --graceful-timeout 120 \\
    --bind 127.0.0.1:8000 proj.wsgi
TimeoutStopSec=30
KillSignal=SIGTERM

[Install]
WantedBy=multi-user.target
"""


def _findings(tmp_path: Path, name: str, text: str) -> list[Finding]:
    """The faults check finds in the one file (the sizing advice aside)."""
    path = tmp_path / name
    path.write_text(text)
    found = check_files([path], machine=MACHINE, env={}).findings
    return [f for f in found if f.severity > Severity.advice]


def test_execstart_is_read_as_the_servers_command_line_with_the_units_environment(
    tmp_path: Path,
) -> None:
    """`ExecStart=` (continued over two lines) is gunicorn's command line; `Environment=`
    is its environment (WEB_CONCURRENCY=3 is the worker count gunicorn reads)."""
    path = tmp_path / "gunicorn.service"
    path.write_text(GUNICORN_UNIT)
    app = read_systemd(path, GUNICORN_UNIT, {})
    assert (app.kind, app.workers.value) == ("gunicorn", 3)
    assert [s.value for s in app.sockets] == ["127.0.0.1:8000"]
    assert app.stop_wait is not None
    assert (app.stop_wait.value, app.stop_wait.at.line) == (30.0, 10)


def test_a_comment_line_inside_a_continued_execstart_is_dropped(tmp_path: Path) -> None:
    """A `#` or `;` line between the lines of a continued `ExecStart=` is a comment systemd
    drops (systemd.syntax(7)), not a line that fails the unit: the command reads on, and the
    next key keeps its line (seen in tournesol-app/tournesol's ansible role units)."""
    text = GUNICORN_UNIT.replace(
        "--timeout 120 --graceful-timeout 120 \\\n",
        "--timeout 120 --graceful-timeout 120 \\\n    # where the site listens\n; and why\n",
    )
    path = tmp_path / "gunicorn.service"
    path.write_text(text)
    app = read_systemd(path, text, {})
    assert [s.value for s in app.sockets] == ["127.0.0.1:8000"]
    assert app.stop_wait is not None
    assert app.stop_wait.at.line == 12


def test_timeoutstopsec_below_the_graceful_timeout_is_one_finding_at_its_line(
    tmp_path: Path,
) -> None:
    """TimeoutStopSec=30 under `--graceful-timeout 120`: systemd SIGKILLs gunicorn 30 s after
    SIGTERM, cutting requests it was allowed to finish: one finding at line 10, fixed in the
    unit's words, backed by systemd's own page."""
    (finding,) = [
        f
        for f in _findings(tmp_path, "gunicorn.service", GUNICORN_UNIT)
        if f.rule == "stop-wait-below-graceful"
    ]
    assert (finding.at.file.name, finding.at.line) == ("gunicorn.service", 10)
    assert finding.message.startswith("TimeoutStopSec 30 s is below gunicorn's")
    assert finding.fix == "TimeoutStopSec=125"
    assert "freedesktop.org/software/systemd/man" in finding.backing
    assert "supervisord" not in finding.backing


def test_systemds_default_wait_covers_gunicorns_default_graceful_timeout(tmp_path: Path) -> None:
    """No TimeoutStopSec= (systemd waits 90 s) and gunicorn's 30 s: nothing to say; `5min`
    written as a span in minutes covers 120 s too."""
    plain = GUNICORN_UNIT.replace("--timeout 120 --graceful-timeout 120 ", "")
    plain = plain.replace("TimeoutStopSec=30\n", "")
    assert not _findings(tmp_path, "gunicorn.service", plain)
    minutes = GUNICORN_UNIT.replace("TimeoutStopSec=30", "TimeoutStopSec=5min")
    assert not _findings(tmp_path, "gunicorn.service", minutes)


def test_killsignal_sigquit_is_gunicorns_quick_shutdown(tmp_path: Path) -> None:
    """KillSignal=SIGQUIT stops gunicorn without waiting for its requests: one finding at
    that line, fixed with KillSignal=SIGTERM."""
    unit = GUNICORN_UNIT.replace("KillSignal=SIGTERM", "KillSignal=SIGQUIT")
    (finding,) = [
        f
        for f in _findings(tmp_path, "gunicorn.service", unit)
        if f.rule == "stop-signal-quick-shutdown"
    ]
    assert (finding.at.line, finding.fix) == (11, "KillSignal=SIGTERM")


def test_uwsgi_under_systemd_reloads_on_sigterm_unless_killsignal_stops_it(tmp_path: Path) -> None:
    """uWSGI 2.0 started by a unit with the default KillSignal (SIGTERM) reloads instead of
    stopping: one finding; KillSignal=SIGQUIT (uWSGI's systemd recipe) stops it: none."""
    unit = "[Service]\nExecStart=/usr/bin/uwsgi --http-socket :8000 --module app --processes 2\n"
    found = _findings(tmp_path, "app.service", unit)
    assert [f.rule for f in found if f.rule == "uwsgi-sigterm-reloads"] == ["uwsgi-sigterm-reloads"]
    quits = _findings(tmp_path, "app.service", unit + "KillSignal=SIGQUIT\n")
    assert not [f for f in quits if f.rule == "uwsgi-sigterm-reloads"]


def test_a_malformed_time_span_is_one_error_naming_its_line(tmp_path: Path) -> None:
    """`TimeoutStopSec=soon` is refused with the file, the line and the key."""
    path = tmp_path / "gunicorn.service"
    text = GUNICORN_UNIT.replace("TimeoutStopSec=30", "TimeoutStopSec=soon")
    path.write_text(text)
    with pytest.raises(CheckInputError) as refused:
        read_systemd(path, text, {})
    assert str(refused.value).startswith(f"{path}:10: TimeoutStopSec='soon' is not a time span")


def test_a_unit_that_starts_no_server_is_nothing_to_check(tmp_path: Path) -> None:
    """A worker's unit (celery) starts no server check reads: nothing to check, no error."""
    path = tmp_path / "worker.service"
    path.write_text("[Service]\nExecStart=/srv/venv/bin/celery -A proj worker\n")
    result = check_files([path], machine=MACHINE, env={})
    assert not result.apps
    assert not result.findings


def test_an_environment_file_not_here_is_a_note_and_the_unit_is_still_read(
    tmp_path: Path,
) -> None:
    """`EnvironmentFile=-/etc/default/shop` is the host's own file: one `env-file-not-found`
    note at its line; the unit's server is read without it."""
    path = tmp_path / "gunicorn.service"
    path.write_text(
        GUNICORN_UNIT.replace(
            "User=www-data\n", "User=www-data\nEnvironmentFile=-/etc/default/shop\n"
        )
    )
    result = check_files([path], machine=MACHINE, env={})
    assert [a.workers.value for a in result.apps] == [3]
    (missing,) = [n for n in result.notes if n.kind == "env-file-not-found"]
    assert missing.at.line == 7
    assert "/etc/default/shop" in missing.message
