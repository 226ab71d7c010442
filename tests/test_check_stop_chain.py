"""Issue 45.3: the stop and signal chain. A graceful timeout works only if SIGTERM reaches the
server: each link that drops it is one finding at the line to change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine
from tests.support import wait_for

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


def test_a_shell_form_cmd_is_one_finding_at_its_line_with_the_exec_form(tmp_path: Path) -> None:
    """`CMD gunicorn ...`: /bin/sh is PID 1; the fix is the exec form of the same words."""
    image = "FROM python:3.12-slim\nRUN pip install gunicorn\nCMD gunicorn -w 2 -b :8000 app:app\n"
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command")
    assert finding.at.line == 3
    assert finding.fix == 'CMD ["gunicorn", "-w", "2", "-b", ":8000", "app:app"]'
    assert "docs.docker.com/reference/build-checks/json-args-recommended" in finding.backing


def test_a_shell_form_cmd_that_expands_a_variable_is_fixed_with_exec(tmp_path: Path) -> None:
    """`$PORT` needs the shell: the fix keeps it and hands PID 1 over with `exec`."""
    image = "FROM python:3.12-slim\nCMD gunicorn -w 2 -b 0.0.0.0:$PORT app:app\n"
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command")
    assert finding.fix == "CMD exec gunicorn -w 2 -b 0.0.0.0:$PORT app:app"


def test_exec_form_exec_first_and_bash_with_one_command_are_not_flagged(tmp_path: Path) -> None:
    """The signal arrives: exec form, `exec` in the shell form, or a bash SHELL running one
    simple command (bash execs it)."""
    for image in (
        'FROM python:3.12-slim\nCMD ["gunicorn", "-w", "2", "app:app"]\n',
        "FROM python:3.12-slim\nCMD exec gunicorn -w 2 app:app\n",
        'FROM python:3.12-slim\nSHELL ["/bin/bash", "-c"]\nCMD gunicorn -w 2 app:app\n',
    ):
        assert not _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command"), image


def test_a_compose_service_running_the_images_shell_form_is_flagged_once(tmp_path: Path) -> None:
    """compose builds the image and runs its CMD: one finding, at the Dockerfile's line; a
    compose `command:` string runs no shell and is not flagged."""
    image = "FROM python:3.12-slim\nCMD gunicorn -w 2 -b :8000 app:app\n"
    compose = "services:\n  web:\n    build: .\n"
    findings = _findings(tmp_path, {"compose.yaml": compose, "Dockerfile": image})
    (finding,) = _rules(findings, "shell-form-command")
    assert (finding.at.file.name, finding.at.line) == ("Dockerfile", 2)
    own = compose + "    command: gunicorn -w 2 -b :8000 app:app\n"
    (tmp_path / "compose.yaml").write_text(own)  # the Dockerfile stays beside it, its build
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE, env={})
    assert [a.kind for a in result.apps] == ["gunicorn"]
    assert not _rules(list(result.findings), "shell-form-command")


def test_dash_as_sh_keeps_itself_between_the_signal_and_the_server() -> None:
    """The premise, on dash (Debian's /bin/sh, so python:3.x-slim's): `dash -c 'python ...'`
    (one command) leaves dash as the parent, so docker stop's SIGTERM to PID 1 is the shell's,
    not the server's. bash, for contrast, execs a lone command."""
    child = (
        "import os, sys; sys.stdout.write(json.dumps([os.getpid(), os.getppid()]) + '\\n'); "
        "sys.stdout.flush(); sys.stdin.read()"
    )
    for shell, execs in (("dash", False), ("bash", True)):
        command = f'{sys.executable} -c "import json; {child}"'
        process = subprocess.Popen(
            [shell, "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None
        assert process.stdin is not None
        pid, parent = json.loads(process.stdout.readline())
        assert (pid == process.pid) == execs, shell
        if not execs:
            assert parent == process.pid  # the shell is the server's parent, not the server
        process.stdin.close()
        process.wait(timeout=10)


def test_supervisord_stopwaitsecs_below_the_graceful_timeout(tmp_path: Path) -> None:
    """`stopwaitsecs = 5` under gunicorn's 30 s graceful timeout: one finding at that line,
    the fix a wait past it, backed by supervisord's docs and gunicorn's own."""
    conf = "[program:web]\ncommand=gunicorn -w 2 app:app\nstopwaitsecs = 5\n"
    (finding,) = _rules(_findings(tmp_path, {"supervisord.conf": conf}), "stop-wait-below-graceful")
    assert finding.at.line == 3
    assert finding.fix == "stopwaitsecs = 35"
    assert "supervisord.org" in finding.backing
    assert "graceful-timeout" in finding.backing


def test_supervisord_defaults_on_both_sides_are_not_a_finding(tmp_path: Path) -> None:
    """supervisord's 10 s and gunicorn's 30 s both left at their defaults: nobody chose a
    shutdown time; a graceful timeout someone set (60 s) under the default 10 s is one."""
    conf = "[program:web]\ncommand=gunicorn -w 2 app:app\n"
    assert not _findings(tmp_path, {"supervisord.conf": conf})
    chosen = "[program:web]\ncommand=gunicorn -w 2 --threads 4 --graceful-timeout 60 app:app\n"
    (finding,) = _rules(
        _findings(tmp_path, {"supervisord.conf": chosen}), "stop-wait-below-graceful"
    )
    assert "graceful timeout 60 s" in finding.message  # gthread: timeout is a heartbeat
    assert finding.fix == "stopwaitsecs = 65"


def test_a_quick_shutdown_signal_for_gunicorn_is_one_finding(tmp_path: Path) -> None:
    """supervisord `stopsignal=QUIT` or a Dockerfile `STOPSIGNAL SIGINT` in front of gunicorn:
    its quick shutdown; one finding at the signal's line (not a second about the wait)."""
    conf = "[program:web]\ncommand=gunicorn --graceful-timeout 60 app:app\nstopsignal=QUIT\n"
    findings = _findings(tmp_path, {"supervisord.conf": conf})
    assert [(f.rule, f.at.line, f.fix) for f in findings] == [
        ("stop-signal-quick-shutdown", 3, "stopsignal = TERM")
    ]
    image = 'FROM python:3.12-slim\nSTOPSIGNAL SIGINT\nCMD ["gunicorn", "app:app"]\n'
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "stop-signal-quick-shutdown")
    assert (finding.at.line, finding.fix) == (2, "STOPSIGNAL SIGTERM")
    assert "docs.gunicorn.org/en/stable/signals.html" in finding.backing


def test_uvicorn_stopped_with_sigint_is_graceful(tmp_path: Path) -> None:
    """uvicorn shuts down gracefully on SIGINT as on SIGTERM: nothing to say."""
    image = 'FROM python:3.12-slim\nSTOPSIGNAL SIGINT\nCMD ["uvicorn", "app:app"]\n'
    assert not _rules(_findings(tmp_path, {"Dockerfile": image}), "stop-signal-quick-shutdown")


def test_a_backgrounded_server_without_trap_is_one_finding(tmp_path: Path) -> None:
    """`gunicorn ... &` then `nginx -g 'daemon off;'`, no trap: one finding at the gunicorn
    line (not "add exec", which is no fix for a backgrounded line); with a trap, none."""
    script = "#!/bin/bash\ngunicorn app.wsgi -w 2 -b :8000 &\nnginx -g 'daemon off;'\n"
    findings = _findings(tmp_path, {"entrypoint.sh": script})
    (finding,) = _rules(findings, "background-server-without-trap")
    assert finding.at.line == 2
    assert finding.fix.startswith("gunicorn app.wsgi -w 2 -b :8000 & APP_PID=$!")
    assert not _rules(findings, "entrypoint-without-exec")
    daemon = "#!/bin/sh\ngunicorn app.wsgi -w 2 --daemon\nexec nginx -g 'daemon off;'\n"
    (finding,) = _rules(
        _findings(tmp_path, {"entrypoint.sh": daemon}), "background-server-without-trap"
    )
    assert "--daemon" not in finding.fix  # `$!` must be the server's own pid
    trapped = script.replace("#!/bin/bash\n", "#!/bin/bash\ntrap 'kill -TERM $APP_PID' TERM\n")
    assert not _findings(tmp_path, {"entrypoint.sh": trapped})


CHILD = (
    "import os, signal, sys\n"
    "def stop(*_):\n"
    "    open(os.environ['GOT'], 'w').close()\n"
    "    sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, stop)\n"
    "print(os.getpid(), flush=True)\n"
    "while True:\n"  # not stdin: bash gives a background job /dev/null
    "    signal.pause()\n"
)


def test_sigterm_to_a_shell_does_not_reach_its_background_server_without_a_trap(
    tmp_path: Path,
) -> None:
    """The premise on the real bash: SIGTERM to a script waiting on a backgrounded child ends
    the script and leaves the child running, never signalled; with a trap that passes it on
    (`kill -TERM $(jobs -p)`: the job exists once the child printed, whatever bash ran since)
    the child gets it."""
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    for trap, reaches in (("", False), ("trap 'kill -TERM $(jobs -p)' TERM; ", True)):
        got = tmp_path / f"got-{reaches}"
        shell = subprocess.Popen(
            ["bash", "-c", f"{trap}{sys.executable} {child} & P=$!; wait $P"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "GOT": str(got)},
        )
        assert shell.stdout is not None
        assert shell.stdin is not None
        pid = int(shell.stdout.readline())  # printed once the child's handler is installed
        shell.send_signal(signal.SIGTERM)
        shell.wait(timeout=10)
        if reaches:
            wait_for(got.exists, timeout=10, what="the child's SIGTERM handler")
        else:
            os.kill(pid, 0)  # still running: SIGTERM never reached it
            assert not got.exists()
            os.kill(pid, signal.SIGKILL)
        shell.stdin.close()


def test_the_exec_fix_keeps_the_assignments_before_exec_and_runs_in_sh(tmp_path: Path) -> None:
    """`KEY=v PORT=8080 uvicorn ...` without `exec`: the fix puts `exec` after the assignments
    (`exec KEY=v uvicorn` would ask the shell for a program named `KEY=v`); the real sh runs the
    fixed line, passing the variables to the command it becomes."""
    script = '#!/bin/sh\nWEBUI_KEY="s e" PORT=8080 uvicorn main:app --port 8080\n'
    image = 'FROM python:3.12-slim\nCOPY start.sh /start.sh\nENTRYPOINT ["/start.sh"]\n'
    findings = _findings(tmp_path, {"Dockerfile": image, "start.sh": script})
    (finding,) = _rules(findings, "entrypoint-without-exec")
    assert finding.fix == 'WEBUI_KEY="s e" PORT=8080 exec uvicorn main:app --port 8080'
    ran = subprocess.run(
        ["sh", "-c", finding.fix.replace("uvicorn main:app --port 8080", "env")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "WEBUI_KEY=s e\n" in ran.stdout
    assert "PORT=8080\n" in ran.stdout
