"""Issue 45.4: what real files showed check passing ("no findings") that loses requests: a
`${VAR:word}` taken for a default, and one uWSGI process with one thread. Each rule is shown
on a fixture written here, and its premise on the real shell or the real uWSGI."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine
from tests.support import accepts, free_ports, http_get, running, tool, wait_for

MACHINE = Machine(cores=2, somaxconn=4096)


def _findings(directory: Path, files: dict[str, str]) -> list[Finding]:
    paths = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text)
        paths.append(path)
    return list(check_files(paths, machine=MACHINE, env={}).findings)


def _rules(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


START = "#!/bin/bash\nexec gunicorn --log-level ${LOG_LEVEL:info} -w 2 -b :8000 app:app\n"


def test_a_substring_expansion_taken_for_a_default_is_one_finding(tmp_path: Path) -> None:
    """`${LOG_LEVEL:info}` in the command line: one finding at its line, fixed as the default
    `${LOG_LEVEL:-info}` it was meant to be; `${LOG_LEVEL:-info}` draws nothing."""
    (finding,) = _rules(_findings(tmp_path, {"start.sh": START}), "substring-not-default")
    assert (finding.at.line, finding.fix) == (2, "${LOG_LEVEL:-info}")
    assert "gnu.org/software/bash/manual" in finding.backing
    fixed = START.replace("${LOG_LEVEL:info}", "${LOG_LEVEL:-info}")
    assert not _rules(_findings(tmp_path, {"start.sh": fixed}), "substring-not-default")


def test_the_shells_read_a_colon_word_as_a_substring_not_a_default() -> None:
    """The premise on the real shells: bash gives the empty string for an unset variable (a
    substring from offset 0), dash refuses the script with `Bad substitution`."""
    bash = subprocess.run(
        ["bash", "-c", 'printf "[%s]" "${LOG_LEVEL:info}"'],
        capture_output=True, text=True, check=False, env={},
    )  # fmt: skip
    assert (bash.returncode, bash.stdout) == (0, "[]")
    dash = subprocess.run(
        ["dash", "-c", 'printf "[%s]" "${LOG_LEVEL:info}"'],
        capture_output=True, text=True, check=False, env={},
    )  # fmt: skip
    assert dash.returncode != 0
    assert "Bad substitution" in dash.stderr


INI = "# Licence: MIT, line 1\n\n[uwsgi]\nhttp-socket = :8000\nmodule = app\ndie-on-term = true\n"


IMAGE = 'FROM python:3.12-slim\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'


def test_one_uwsgi_process_with_one_thread_is_found_at_its_section(tmp_path: Path) -> None:
    """An image running uWSGI with its defaults (1 process, 1 thread): one finding at the
    command line that starts it (flags), or at the `[uwsgi]` line of an ini a Procfile's
    command names (not the licence comment on line 1), fixed with the plan's processes and
    threads in that file's words."""
    files = {"Dockerfile": IMAGE, "uwsgi.ini": INI}
    (finding,) = _rules(_findings(tmp_path, files), "one-process-one-thread")
    assert (finding.at.file.name, finding.at.line) == ("Dockerfile", 3)
    assert finding.fix.startswith("--processes 2 and --threads ")
    assert "uwsgi-docs.readthedocs.io" in finding.backing
    written = INI.replace("die-on-term", "processes = 1\ndie-on-term")
    (finding,) = _rules(
        _findings(tmp_path, {"Dockerfile": IMAGE, "uwsgi.ini": written}), "one-process-one-thread"
    )
    assert (finding.at.file.name, finding.at.line) == ("uwsgi.ini", 6)
    assert finding.fix.startswith("processes = 2 and threads = ")


def test_more_processes_threads_an_async_engine_or_the_images_env_are_not_one_at_a_time(
    tmp_path: Path,
) -> None:
    """`processes = 2`, `threads = 4`, `gevent = 100`, or the image's `ENV UWSGI_PROCESSES`:
    more than one request at once; an ini read alone, whose image may set UWSGI_PROCESSES, is
    not judged."""
    for extra in ("processes = 2\n", "threads = 4\n", "gevent = 100\n"):
        findings = _findings(tmp_path, {"Dockerfile": IMAGE, "uwsgi.ini": INI + extra})
        assert not _rules(findings, "one-process-one-thread"), extra
    image = IMAGE.replace("COPY", "ENV UWSGI_PROCESSES=16 UWSGI_CHEAPER=2\nCOPY")
    findings = _findings(tmp_path, {"Dockerfile": image, "uwsgi.ini": INI})
    assert not _rules(findings, "one-process-one-thread")
    (tmp_path / "Dockerfile").unlink()
    assert not _rules(_findings(tmp_path, {"uwsgi.ini": INI}), "one-process-one-thread")


def test_processes_written_with_a_value_known_where_it_runs_are_not_judged(
    tmp_path: Path,
) -> None:
    """`processes = ${UWSGI_PROCESSES}` and `threads = ${UWSGI_THREADS}` left unrendered (an
    envsubst template the files give no values for) are read with uWSGI's default 1, which is
    not what runs: no one-process-one-thread finding, only the unresolved-variable notes."""
    templated = INI.replace(
        "die-on-term", "processes = ${UWSGI_PROCESSES}\nthreads = ${UWSGI_THREADS}\ndie-on-term"
    )
    findings = _findings(tmp_path, {"Dockerfile": IMAGE, "uwsgi.ini": templated})
    assert not _rules(findings, "one-process-one-thread")
    one = INI.replace("die-on-term", "threads = ${UWSGI_THREADS}\ndie-on-term")
    findings = _findings(tmp_path, {"Dockerfile": IMAGE, "uwsgi.ini": one})
    assert not _rules(findings, "one-process-one-thread")


APP = """\
import os

def application(environ, start_response):
    if environ["PATH_INFO"] == "/slow":
        open(os.environ["ENTERED"], "w").close()  # the test's barrier: /slow holds the process
        with open(os.environ["RELEASE"]) as fifo:  # blocks until the test writes
            fifo.read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
"""


def test_uwsgi_with_its_defaults_holds_a_request_behind_a_slow_one(tmp_path: Path) -> None:
    """The premise on the real uWSGI: with no `processes` or `threads`, a quick request sent
    while a slow one runs is answered only once the slow one ends."""
    (port,) = free_ports(1)
    entered = tmp_path / "entered"
    fifo = tmp_path / "release"
    os.mkfifo(fifo)
    (tmp_path / "app.py").write_text(APP)
    address = f"127.0.0.1:{port}"
    argv = [tool("uwsgi"), "--http-socket", address, "--wsgi-file", "app.py", "--die-on-term"]
    with running(argv, tmp_path, {"RELEASE": str(fifo), "ENTERED": str(entered)}):
        wait_for(lambda: accepts(address), what="uwsgi")
        slow = threading.Thread(target=http_get, args=(address, "/slow"))
        slow.start()
        wait_for(entered.exists, what="/slow inside the app")
        # /slow holds the process: a /quick connection is accepted by the kernel and waits.
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as quick:
            quick.sendall(b"GET /quick HTTP/1.0\r\nHost: t\r\n\r\n")
            held = False
            try:
                quick.recv(1)
            except TimeoutError:
                held = True  # nothing in a second: the one process is busy with /slow
            with open(fifo, "w") as release:  # the slow request may now end
                release.write("go")
            slow.join(timeout=10)
            quick.settimeout(10)
            answer = quick.recv(4096)
        assert held
        assert answer.startswith((b"HTTP/1.0 200", b"HTTP/1.1 200"))


BACKEND = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: default-http-backend}
spec:
  selector: {matchLabels: {app: default-http-backend}}
  template:
    metadata: {labels: {app: default-http-backend}}
    spec:
      containers:
        - name: default-http-backend
          image: gcr.io/google_containers/defaultbackend:1.0
          resources: {limits: {cpu: 10m, memory: 20Mi}}
"""


def test_ingress_nginx_default_backend_does_not_run_the_apps_image(tmp_path: Path) -> None:
    """ingress-nginx's default-http-backend (no command) is not the app's Dockerfile: its 10m
    CPU limit is not held against the app's gunicorn (a wrong link seen in a public project)."""
    image = 'FROM python:3.12-slim\nCMD ["gunicorn", "-w", "4", "-b", ":8000", "app:app"]\n'
    findings = _findings(tmp_path, {"backend.yaml": BACKEND, "Dockerfile": image})
    assert "workers-over-cpu-limit" not in {f.rule for f in findings}
    places = {loc.file.name for f in findings for loc in (f.at, *f.related)}
    assert "backend.yaml" not in places
