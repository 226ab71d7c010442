"""Issue 44: findings graded as a maintainer would send them. The same fault at several lines
of one file is one finding, fixed once where the lines inherit it; a uWSGI left at one process
and one thread is a sizing choice (a note naming the variables that set it); a development
reloader in a production launch is a note, unless it defeats the workers the launch asks for."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding, Severity
from servertune.check.settings import CheckSettings
from servertune.check.suppress import suppress
from servertune.machine import Machine

MACHINE = Machine(cores=2, somaxconn=4096)

_SUPERVISORD = """[program:web]
command=gunicorn --workers 2 --bind 127.0.0.1:8000 --timeout 300 app:app
"""

_LOCATION = "    location %s {\n        proxy_pass http://127.0.0.1:8000;\n    }\n"

_NGINX = "server {\n    listen 80;\n%s}\n"


def _reported(directory: Path, files: dict[str, str]) -> list[Finding]:
    """The findings as the CLI reports them (after the ignores and the folds)."""
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    paths = [directory / name for name in files]
    result = check_files(paths, machine=MACHINE, env={}, root=directory)
    return list(suppress(result, CheckSettings()).findings)


def _of(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


def test_the_same_fault_at_several_lines_of_one_file_is_one_finding(tmp_path: Path) -> None:
    """Three nginx locations passing to one sync gunicorn with `--timeout 300`, none writing
    proxy_read_timeout (nor their server block): one app-timeout-over-read-timeout finding at
    the first location's proxy_pass line, naming the other lines ("also at :7, :10"), with the
    fix written once in the server block they share (seen on akvo/akvo-rsr's
    nginx/default.conf, 5 locations). One location alone keeps its plain fix."""
    locations = "".join(_LOCATION % path for path in ("/", "/api", "/admin"))
    files = {"supervisord.conf": _SUPERVISORD, "nginx.conf": _NGINX % locations}
    (finding,) = _of(_reported(tmp_path / "three", files), "app-timeout-over-read-timeout")
    assert (finding.at.file.name, finding.at.line) == ("nginx.conf", 4)
    assert "(also at :7, :10: the same fault at other lines of this file)" in finding.message
    assert finding.fix.startswith("proxy_read_timeout 305s;")
    assert "`server` block" in finding.fix
    assert {(at.file.name, at.line) for at in finding.related} >= {
        ("nginx.conf", 7),
        ("nginx.conf", 10),
    }
    alone = {"supervisord.conf": _SUPERVISORD, "nginx.conf": _NGINX % (_LOCATION % "/")}
    (one,) = _of(_reported(tmp_path / "one", alone), "app-timeout-over-read-timeout")
    assert one.fix == "proxy_read_timeout 305s;"
    assert "also at" not in one.message


_UWSGI_IMAGE = 'FROM python:3.12-slim\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
_UWSGI_INI = "[uwsgi]\nhttp-socket = :8000\nmodule = app\ndie-on-term = true\n"


def test_one_uwsgi_process_with_one_thread_is_a_note_naming_its_variables(
    tmp_path: Path,
) -> None:
    """An image running uWSGI at its defaults (one process, one thread) is a sizing choice a
    small self-hosted app may make on purpose (seen on redimp/otterwiki): a note, not a
    warning, whose message names UWSGI_PROCESSES and UWSGI_THREADS, the environment variables
    uWSGI reads as its options, which set it without an edit of the file."""
    files = {"Dockerfile": _UWSGI_IMAGE, "uwsgi.ini": _UWSGI_INI}
    (note,) = _of(_reported(tmp_path, files), "one-process-one-thread")
    assert note.severity is Severity.info
    assert "UWSGI_PROCESSES" in note.message
    assert "UWSGI_THREADS" in note.message


_IMAGE = "FROM python:3.12\nCOPY . /app\nWORKDIR /app\nCMD %s\n"


def test_a_reloader_in_production_is_a_note_unless_it_defeats_the_workers(
    tmp_path: Path,
) -> None:
    """A production image whose only launch runs the development reloader costs a file
    watcher and loses no request: a note (`gunicorn --reload`, seen on
    okfn-brasil/serenata-de-amor; `uvicorn --reload` with no --workers, seen on
    cohere-ai/cohere-toolkit). `uvicorn --reload --workers 4` (granian's likewise) serves in
    one process, not the four the launch asks for: a warning that says so."""
    commands = {
        "gunicorn": '["gunicorn", "--reload", "-w", "2", "-b", "0.0.0.0:8000", "app:app"]',
        "uvicorn": '["uvicorn", "main:app", "--reload", "--host", "0.0.0.0"]',
        "workers": '["uvicorn", "main:app", "--reload", "--workers", "4", "--host", "0.0.0.0"]',
        "granian": '["granian", "--interface", "asgi", "--reload", "--workers", "4", "main:app"]',
    }
    graded = {}
    for name, command in commands.items():
        findings = _reported(tmp_path / name, {"Dockerfile": _IMAGE % command})
        (finding,) = _of(findings, "reloader-in-production")
        graded[name] = finding
    assert graded["gunicorn"].severity is Severity.info
    assert graded["uvicorn"].severity is Severity.info
    for name in ("workers", "granian"):
        assert graded[name].severity is Severity.warning, name
        assert "--workers = 4 is written" in graded[name].message
