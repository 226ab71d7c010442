"""uWSGI's option values read as uWSGI 2.0 reads them: there is no comment after a value, so
`harakiri = 600 ; kill after 10 minutes` is the number C's `atoi` takes from it (600), and a
flag is on unless its value is exactly false, off, no or 0 (`master = false ; not yet` is on).
Both were checked against uWSGI 2.0.30 (`--show-config`, the workers and master it spawned)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.sizing import Machine
from tests.support import accepts, free_ports, http_get, running, tool, wait_for

MACHINE = Machine(cores=4, cores_source="--cores", somaxconn=4096)


def _read(tmp_path: Path, lines: str) -> tuple[int, int, int | None, bool | None]:
    ini = tmp_path / "uwsgi.ini"
    ini.write_text("[uwsgi]\nmodule = app:application\nhttp-socket = :8000\n" + lines)
    result = check_files([ini], machine=MACHINE, env={})
    assert not result.errors
    (app,) = result.apps
    harakiri = app.request_timeout.value if app.request_timeout is not None else None
    stops = app.die_on_term.value if app.die_on_term is not None else None
    return app.workers.value, app.threads.value, harakiri, stops


def test_a_number_followed_by_an_inline_comment_is_its_leading_number(tmp_path: Path) -> None:
    """`processes = 3 # three` and `harakiri = 600 ; forcefully kill ...` are 3 and 600, as
    uWSGI's atoi reads them; the file is read, never refused for the comment."""
    workers, threads, harakiri, _ = _read(
        tmp_path,
        "processes = 3 # three\nthreads = 2\n"
        "harakiri = 600                       ; forcefully kill workers after 600 seconds\n",
    )
    assert (workers, threads, harakiri) == (3, 2, 600)


@pytest.mark.parametrize(
    ("value", "on"),
    [
        ("true                   ; Shutdown when receiving SIGTERM", True),
        ("false ; not yet", True),  # the whole text is the value: not "false"
        ("2", True),
        ("", True),
        ("FALSE", False),
        ("off", False),
        ("no", False),
        ("0", False),
    ],
)
def test_a_flag_is_on_unless_its_value_is_false_off_no_or_0(
    tmp_path: Path, value: str, on: bool
) -> None:
    """`die-on-term = VALUE`: on for any value but false, off, no or 0 (uWSGI's
    `uwsgi_opt_true`), so SIGTERM is read as the immediate stop exactly when uWSGI has it."""
    *_, stops = _read(tmp_path, f"master = true\ndie-on-term = {value}\n")
    assert stops is on


def test_a_socket_whose_port_the_environment_here_does_not_set_is_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`http-socket = :$(PORT)` (Heroku sets PORT): uWSGI expands the unset name to nothing,
    so the address is not known here: no socket listed (never `0.0.0.0:`, a port of nothing)
    and an unresolved-variable note at its line."""
    monkeypatch.delenv("PORT", raising=False)
    ini = tmp_path / "uwsgi.ini"
    ini.write_text("[uwsgi]\nhttp-socket = :$(PORT)\nmodule = wsgi\nprocesses = 4\n")
    result = check_files([ini], machine=MACHINE, env={})
    (app,) = result.apps
    assert app.sockets == ()
    assert any(
        n.kind == "unresolved-variable" and n.at.line == 2 and "$(PORT)" in n.message
        for n in result.notes
    )


def test_a_number_uwsgi_cuts_at_its_first_non_digit_is_a_warning_at_its_line(
    tmp_path: Path,
) -> None:
    """Issue 44 §2: `processes = 1e3`, `harakiri = 2.5` and `listen = 1_024` read as uWSGI reads
    them (1, 2, 1) and each is a `number-cut-short` warning at its line saying "uWSGI reads 1e3
    as 1", whose fix is the whole number; a plain `threads = 4` is not."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\nprocesses = 1e3\n"
        "harakiri = 2.5\nlisten = 1_024\nthreads = 4\n"
    )
    result = check_files([ini], machine=MACHINE, env={})
    (app,) = result.apps
    assert (app.workers.value, app.backlog.value) == (1, 1)
    cut = [f for f in result.findings if f.rule == "number-cut-short"]
    assert [(f.at.line, f.severity.name) for f in cut] == [
        (4, "warning"),
        (5, "warning"),
        (6, "warning"),
    ]
    assert cut[0].message.startswith("uWSGI reads 1e3 as 1:")
    assert cut[0].fix.startswith("processes = 1000")
    assert cut[1].fix.startswith("harakiri = 2 or 3")


def test_the_real_uwsgi_runs_one_worker_for_processes_1e3(tmp_path: Path) -> None:
    """The premise on the real uWSGI 2.0: `processes = 1e3` spawns one worker and `listen =
    1e2` is a backlog of 1 (its own startup lines say so)."""
    (port,) = free_ports(1)
    (tmp_path / "app.py").write_text(
        "def application(environ, start_response):\n"
        "    start_response('200 OK', [])\n    return [b'ok']\n"
    )
    (tmp_path / "uwsgi.ini").write_text(
        f"[uwsgi]\nhttp-socket = 127.0.0.1:{port}\nwsgi-file = app.py\nmaster = true\n"
        "processes = 1e3\nlisten = 1e2\n"
    )
    address = f"127.0.0.1:{port}"
    with running([tool("uwsgi"), "--ini", "uwsgi.ini"], tmp_path):
        wait_for(lambda: accepts(address), what="uwsgi")
        assert http_get(address).endswith(b"ok")
        (log,) = tmp_path.glob("uwsgi-*.log")
        wait_for(lambda: "spawned uWSGI worker 1 " in log.read_text(), what="worker 1")
        text = log.read_text()
    assert "spawned uWSGI worker 1 " in text
    assert "spawned uWSGI worker 2 " not in text
    assert "listen backlog is limited to 1 connections" in text


def test_a_comment_after_a_value_that_changes_it_is_a_warning_at_its_line(
    tmp_path: Path,
) -> None:
    """uWSGI's ini keeps a comment written after a value as part of it (core/ini.c). Where
    that changes what runs it is an `uwsgi-inline-comment` warning at the line: `chdir = /srv
    # the app` is a folder named with the comment, `master = false # later` is on. A number
    or a flag written on before the comment (`processes = 1  # Number of ...`, seen in
    Sage-Bionetworks/schematic's uwsgi.ini; `vacuum = true # clean`) reads as meant: none."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\n"
        "processes = 1  # Number of processes\nvacuum = true # clean\n"
        "chdir = /srv  # the app\nmaster = false # later\n"
        "hook-pre-app = exec:echo a ; echo b\n"
    )
    result = check_files([ini], machine=MACHINE, env={})
    found = {f.at.line: f for f in result.findings if f.rule == "uwsgi-inline-comment"}
    assert sorted(found) == [6, 7]
    assert "`chdir` is `/srv  # the app`, the comment included" in found[6].message
    assert found[6].fix.startswith("chdir = /srv   ")
    assert "so `master` is on" in found[7].message


def test_a_comment_after_the_value_uwsgi_falls_back_to_is_no_finding(tmp_path: Path) -> None:
    """`cheaper-algo = spare # ...` names no algorithm uWSGI knows, and uWSGI falls back to
    spare ("unable to find requested cheaper algorithm, falling back to spare", seen with
    uWSGI 2.0): the algorithm meant runs, so no finding (seen in
    learningequality/kolibri-server's uwsgi.ini); `cheaper-algo = busyness # ...` falls back
    to spare too, not the algorithm meant: a warning."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\nmaster = true\n"
        "processes = 4\ncheaper = 1\ncheaper-algo = spare # the default\n"
    )
    result = check_files([ini], machine=MACHINE, env={})
    assert not [f for f in result.findings if f.rule == "uwsgi-inline-comment"]
    ini.write_text(ini.read_text().replace("spare # the default", "busyness # load-based"))
    result = check_files([ini], machine=MACHINE, env={})
    assert [f.at.line for f in result.findings if f.rule == "uwsgi-inline-comment"] == [7]
