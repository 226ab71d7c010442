"""Issue 45.3: the stop and signal chain. A graceful timeout works only if SIGTERM reaches the
server: each link that drops it is one finding at the line to change."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine
from tests.support import BIN, accepts, free_port, http_get, running, wait_for

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


def test_a_shell_form_entrypoint_running_the_launch_script_is_one_finding(
    tmp_path: Path,
) -> None:
    """`ENTRYPOINT /docker-entrypoint.sh $0 $@` (shell form, so `/bin/sh -c` is PID 1) runs
    the script that execs gunicorn: gunicorn is still the shell's child, so SIGTERM never
    reaches it; the fix hands PID 1 over with `exec`. In exec form, no finding."""
    script = "#!/bin/sh\nset -e\nexec gunicorn -w 2 -b 0.0.0.0:8000 app:app\n"
    image = (
        "FROM python:3.12-slim\nCOPY docker-entrypoint.sh /docker-entrypoint.sh\n"
        "ENTRYPOINT /docker-entrypoint.sh $0 $@\n"
    )
    files = {"Dockerfile": image, "docker-entrypoint.sh": script}
    (finding,) = _rules(_findings(tmp_path, files), "shell-form-command")
    assert finding.at.line == 3
    assert finding.fix == "ENTRYPOINT exec /docker-entrypoint.sh $0 $@"
    exec_form = image.replace(
        "ENTRYPOINT /docker-entrypoint.sh $0 $@", 'ENTRYPOINT ["/docker-entrypoint.sh"]'
    )
    files = {"Dockerfile": exec_form, "docker-entrypoint.sh": script}
    assert _rules(_findings(tmp_path, files), "shell-form-command") == []


def test_a_shell_form_list_keeps_its_shell_and_execs_its_last_command(tmp_path: Path) -> None:
    """`CMD a &&` continued on the server's line: exec form would hand `&&` to the first
    program, so the fix keeps the shell and puts `exec` before the last command."""
    image = (
        "FROM python:3.12-slim\nCMD poetry run alembic upgrade head && \\\n"
        "    poetry run uvicorn --host=0.0.0.0 app.main:app\n"
    )
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command")
    assert finding.fix == (
        "CMD poetry run alembic upgrade head && exec poetry run uvicorn --host=0.0.0.0 app.main:app"
    )


def test_a_shell_form_cmd_over_continued_lines_is_fixed_without_the_continuations(
    tmp_path: Path,
) -> None:
    """`CMD gunicorn \\` over three lines: Docker's parser removes each escaped newline before
    the shell sees the text, so the exec-form fix holds the command's words only, never a
    "\\n" argument, and the message quotes the command as the shell runs it."""
    image = (
        "FROM python:3.12-slim\nCMD gunicorn \\\n    --log-file - \\\n    app.wsgi:application\n"
    )
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command")
    assert finding.at.line == 2
    assert finding.fix == 'CMD ["gunicorn", "--log-file", "-", "app.wsgi:application"]'
    assert "/bin/sh -c 'gunicorn --log-file - app.wsgi:application'" in finding.message


def test_an_empty_env_prefix_before_a_shell_form_server_is_dropped_as_sh_drops_it(
    tmp_path: Path,
) -> None:
    """`ENV CMD_PREFIX=""` then `CMD $CMD_PREFIX gunicorn ...` (a hook for ddtrace-run): the
    unquoted empty expansion disappears in field splitting, so the image starts gunicorn (it
    was "starts no server") as the shell's child: one finding, fixed with `exec`."""
    image = (
        'FROM python:3.12-slim\nENV PORT=8000 \\\n    CMD_PREFIX=""\n'
        "CMD $CMD_PREFIX gunicorn \\\n    --workers 3 \\\n    app.wsgi:application\n"
    )
    path = tmp_path / "Dockerfile"
    path.write_text(image)
    result = check_files([path], machine=MACHINE, env={})
    (app,) = result.apps
    assert (app.kind, app.workers.value) == ("gunicorn", 3)
    (finding,) = _rules(list(result.findings), "shell-form-command")
    assert finding.fix == "CMD exec $CMD_PREFIX gunicorn --workers 3 app.wsgi:application"


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


GUNICORN_SCRIPT = "#!/bin/bash\npython manage.py migrate\ngunicorn app.wsgi --timeout 30\n"


def test_a_script_a_procfile_runs_needs_no_exec(tmp_path: Path) -> None:
    """`web: bash start.sh` (Heroku, honcho, foreman): the runner signals the script's whole
    group, so gunicorn as the shell's child still gets SIGTERM: no `entrypoint-without-exec`,
    read alone or with the Procfile. The same script with nothing here starting it is said as
    `info` (as an entrypoint, the shell would be PID 1)."""
    (tmp_path / ".git").mkdir()  # a repository: the tree check reads
    files = {"Procfile": "release: python manage.py migrate\nweb: bash start.sh\n"}
    files["start.sh"] = GUNICORN_SCRIPT
    assert not _rules(_findings(tmp_path, files), "entrypoint-without-exec")
    alone = check_files([tmp_path / "start.sh"], machine=MACHINE, env={})
    assert not _rules(list(alone.findings), "entrypoint-without-exec")
    (app,) = alone.apps
    assert app.group_signalled is not None
    assert (app.group_signalled.at.file.name, app.group_signalled.at.line) == ("Procfile", 2)
    (tmp_path / "Procfile").write_text("web: bash other.sh\n")
    (finding,) = _rules(
        _findings(tmp_path, {"start.sh": GUNICORN_SCRIPT}), "entrypoint-without-exec-unlaunched"
    )
    assert finding.fix == "exec gunicorn app.wsgi --timeout 30"


def test_a_procfile_naming_the_images_copy_of_the_script_is_found_above_it(tmp_path: Path) -> None:
    """The repository's Procfile runs `/app/bin/run_web.sh` (honcho in the image, which
    `COPY . /app`): the script `bin/run_web.sh`, read on its own, is that process."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "Procfile").write_text("web: /app/bin/run_web.sh\nworker: /app/bin/worker.sh\n")
    script = tmp_path / "bin" / "run_web.sh"
    script.write_text(GUNICORN_SCRIPT)
    result = check_files([script], machine=MACHINE, env={})
    assert not _rules(list(result.findings), "entrypoint-without-exec")
    (app,) = result.apps
    assert app.group_signalled is not None
    assert app.group_signalled.value == "web: /app/bin/run_web.sh"


def test_a_process_group_signal_reaches_the_server_under_a_shell_without_exec() -> None:
    """The premise, on the real bash: a script in its own session (honcho's `start_new_session`,
    a dyno) running the server as its child, stopped with killpg(SIGTERM) as honcho and
    foreman stop it: the server itself gets SIGTERM (it answers 143 by its own handler)."""
    server = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda *_: (print('TERM', flush=True), sys.exit(0)))\n"
        "print(os.getpid(), flush=True)\n"
        "sys.stdin.read()\n"
    )
    shell = subprocess.Popen(
        ["bash", "-c", f"{sys.executable} -c \"$SERVER\"; echo after"],
        env={**os.environ, "SERVER": server},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert shell.stdout is not None
    try:
        pid = int(shell.stdout.readline())
        assert pid != shell.pid  # bash did not exec it: the server is the shell's child
        os.killpg(shell.pid, signal.SIGTERM)
        assert shell.stdout.readline() == "TERM\n"  # the server's own handler ran
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait(timeout=10)


def test_a_pipeline_is_never_fixed_with_exec_before_it(tmp_path: Path) -> None:
    """`gunicorn ... 2>&1 | tee LOG` under bash as PID 1: the fix drops the pipe and execs
    gunicorn, or sends the shell's output through `tee` first; never `exec gunicorn ... |`,
    which would exec in the pipeline's subshell. The whole command, never cut."""
    line = "gunicorn app.wsgi --bind 0.0.0.0:8001 --log-level info 2>&1 | tee /logs/gunicorn.log"
    script = f"#!/bin/bash\n{line}\n"
    image = 'FROM python:3.12-slim\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n'
    findings = _findings(tmp_path, {"Dockerfile": image, "start.sh": script})
    (finding,) = _rules(findings, "entrypoint-without-exec")
    server = "exec gunicorn app.wsgi --bind 0.0.0.0:8001 --log-level info"
    assert finding.fix.startswith(f"{server}   (without `| tee /logs/gunicorn.log`")
    assert f"exec > >(tee /logs/gunicorn.log) 2>&1   then   {server}" in finding.fix
    assert f"{server} |" not in finding.fix
    assert f"{server} 2>&1 |" not in finding.fix


def test_the_bash_alternative_for_a_pipeline_makes_the_server_pid_1_of_the_shell(
    tmp_path: Path,
) -> None:
    """`exec > >(tee LOG) 2>&1` then `exec SERVER`, run in the real bash: the server is the
    process the shell was (what `docker stop` signals), and its output still reaches LOG."""
    log = tmp_path / "server.log"
    fixed = (
        f"exec > >(tee {log}) 2>&1\n"
        f"exec {sys.executable} -c 'import os; print(os.getpid(), flush=True)'\n"
    )
    shell = subprocess.Popen(["bash", "-c", fixed], stdout=subprocess.PIPE, text=True)
    out, _ = shell.communicate(timeout=10)
    assert int(out.split()[0]) == shell.pid
    wait_for(lambda: log.exists() and log.read_text().strip() == str(shell.pid))


def test_a_reloading_development_server_draws_no_stop_chain_fault(tmp_path: Path) -> None:
    """`CMD gunicorn ... --reload` (a local-development image: gunicorn restarts on every code
    change) in shell form: no deploy's requests to drain, so no `shell-form-command`; the same
    image without `--reload` is flagged."""
    image = "FROM python:3.12-slim\nCMD gunicorn proj.wsgi --log-file - -b 0.0.0.0:8000 --reload\n"
    assert not _rules(_findings(tmp_path, {"Dockerfile": image}), "shell-form-command")
    production = image.replace(" --reload", "")
    assert _rules(_findings(tmp_path, {"Dockerfile": production}), "shell-form-command")


def _honcho_image(tmp_path: Path, procfile: str) -> list[Path]:
    """An image whose entrypoint dispatches `web` to honcho running the repository's
    Procfile, whose `web` entry is a script starting gunicorn as the shell's child."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "bin").mkdir(exist_ok=True)
    files = {
        "Dockerfile": (
            "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n"
            'ENTRYPOINT ["/bin/bash", "/app/bin/entrypoint.sh"]\nCMD ["web"]\n'
        ),
        "bin/entrypoint.sh": (
            "#!/bin/bash\nSERVICE=$1\nshift\ncase ${SERVICE} in\nweb)\n"
            "    exec honcho -f /app/Procfile --no-prefix start\n    ;;\nesac\n"
        ),
        "Procfile": procfile,
        "bin/run_web.sh": (
            "#!/bin/bash\ngunicorn --graceful-timeout 900 --timeout 900 -b 0.0.0.0:8000 app.wsgi\n"
        ),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [tmp_path / name for name in files]


def test_honcho_as_pid_1_says_its_five_seconds_not_a_missing_exec(tmp_path: Path) -> None:
    """entrypoint -> `exec honcho -f /app/Procfile start` -> `web: /app/bin/run_web.sh` ->
    gunicorn without exec: honcho killpg's the entry, so no `entrypoint-without-exec`; with a
    second process, honcho SIGKILLs what still runs 5 s after the first exits, below the
    900 s graceful timeout: one `stop-wait-below-graceful` whose fix says honcho has no knob."""
    paths = _honcho_image(tmp_path, "web: /app/bin/run_web.sh\nworker: /app/bin/worker.sh\n")
    result = check_files(paths, machine=MACHINE, env={})
    (app,) = result.apps
    assert app.group_signalled is not None
    assert app.group_signalled.value == "web: /app/bin/run_web.sh"
    assert not _rules(list(result.findings), "entrypoint-without-exec")
    (finding,) = _rules(list(result.findings), "stop-wait-below-graceful")
    assert finding.message.startswith("honcho's KILL_WAIT 5 s")
    assert (finding.at.file.name, finding.at.line) == ("entrypoint.sh", 6)
    assert "honcho has no setting for it" in finding.fix


def test_honcho_running_one_process_waits_for_it(tmp_path: Path) -> None:
    """A Procfile of one process: honcho's 5 s only start once a process has exited, so it
    waits for gunicorn's own drain; no stop-wait finding, and still no missing exec."""
    result = check_files(
        _honcho_image(tmp_path, "web: /app/bin/run_web.sh\n"), machine=MACHINE, env={}
    )
    assert [a.kind for a in result.apps] == ["gunicorn"]
    rules = {f.rule for f in result.findings}
    assert not rules & {"stop-wait-below-graceful", "entrypoint-without-exec"}


def test_a_scripts_colon_default_assignments_are_its_variables(tmp_path: Path) -> None:
    """`: "${GUNICORN_GRACEFUL_TIMEOUT:=900}"` sets the variable when the environment leaves it
    unset (the shell's assign-default expansion), so the server's flags read 900; a value the
    environment gives wins."""
    script = (
        '#!/bin/bash\n: "${PORT:=8000}"\n: "${GRACEFUL:=900}"\n'
        'exec gunicorn --graceful-timeout "${GRACEFUL}" -b 0.0.0.0:"${PORT}" app.wsgi\n'
    )
    path = tmp_path / "run_web.sh"
    path.write_text(script)
    (app,) = check_files([path], machine=MACHINE, env={}).apps
    assert app.graceful_timeout is not None
    assert (app.graceful_timeout.value, [s.value for s in app.sockets]) == (900.0, ["0.0.0.0:8000"])
    (given,) = check_files([path], machine=MACHINE, env={"GRACEFUL": "60"}).apps
    assert given.graceful_timeout is not None
    assert given.graceful_timeout.value == 60.0


_SLOW_APP = """\
import pathlib, time
def application(environ, start_response):
    pathlib.Path("started").touch()
    time.sleep(1.5)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"done"]
"""


def _stopped_mid_request(tmp_path: Path, extra: str) -> bytes:
    """What a request in flight gets from a real uWSGI whose master is sent SIGTERM."""
    (tmp_path / "app.py").write_text(_SLOW_APP)
    (tmp_path / "started").unlink(missing_ok=True)
    port = free_port()
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        f"[uwsgi]\nhttp-socket = 127.0.0.1:{port}\nwsgi-file = app.py\nmaster = true\n"
        f"processes = 1\n{extra}"
    )
    answer: list[bytes] = []

    def ask() -> None:
        try:
            answer.append(http_get(f"127.0.0.1:{port}"))
        except OSError:
            answer.append(b"")

    with running([str(BIN / "uwsgi"), "--ini", str(ini)], cwd=tmp_path) as master:
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), what="uwsgi")
        client = threading.Thread(target=ask)
        client.start()
        wait_for(lambda: (tmp_path / "started").exists(), what="the request")
        os.kill(master.pid, signal.SIGTERM)
        client.join(timeout=20)
        master.wait(timeout=20)
    return answer[0]


def test_the_uwsgi_fix_drains_the_request_in_flight_where_die_on_term_alone_cuts_it(
    tmp_path: Path,
) -> None:
    """The fix uwsgi-sigterm-reloads writes, run in the real uWSGI 2.0: SIGTERM mid-request
    with die-on-term alone kills the worker (nothing answered); with the fix's hook as well the
    request is answered 200 before uWSGI exits."""
    image = 'FROM python:3.12\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
    ini = "[uwsgi]\nmodule = app\nhttp-socket = :8000\nprocesses = 2\n"
    (finding,) = _rules(
        _findings(tmp_path, {"Dockerfile": image, "uwsgi.ini": ini}), "uwsgi-sigterm-reloads"
    )
    fixed = "".join(line.strip() + "\n" for line in finding.fix.split("   and   "))
    assert b" 200 " not in _stopped_mid_request(tmp_path, "die-on-term = true\n")
    assert b" 200 " in _stopped_mid_request(tmp_path, fixed)


def test_die_on_term_without_the_graceful_hook_is_one_finding_at_its_line(tmp_path: Path) -> None:
    """`die-on-term = true` alone in a container's uWSGI: SIGTERM kills the workers mid-request
    (the test above runs it): one finding at that line whose fix is the hook; with the hook,
    or an image stopping it with another signal, none."""
    image = 'FROM python:3.12\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
    ini = "[uwsgi]\nmodule = app\nhttp-socket = :8000\nprocesses = 2\ndie-on-term = true\n"
    files = {"Dockerfile": image, "uwsgi.ini": ini}
    (finding,) = _rules(_findings(tmp_path, files), "uwsgi-sigterm-cuts-requests")
    assert (finding.at.file.name, finding.at.line) == ("uwsgi.ini", 5)
    assert finding.fix.startswith("hook-master-start = unix_signal:15 gracefully_kill_them_all")
    hooked = ini + "hook-master-start = unix_signal:15 gracefully_kill_them_all\n"
    assert not _rules(
        _findings(tmp_path, {"Dockerfile": image, "uwsgi.ini": hooked}),
        "uwsgi-sigterm-cuts-requests",
    )
    alone = check_files([tmp_path / "uwsgi.ini"], machine=MACHINE, env={})
    assert not _rules(list(alone.findings), "uwsgi-sigterm-cuts-requests")


def test_foreman_waits_its_t_timeout_and_is_fixed_with_it(tmp_path: Path) -> None:
    """`exec foreman start -f /app/Procfile -t 60`: foreman's wait is its `-t` (5 s unless
    given), held against gunicorn's 900 s graceful timeout, and fixed with `-t`, and with
    the container's stop timeout past it (an image's: Docker's 10 s would still end first)."""
    paths = _honcho_image(tmp_path, "web: /app/bin/run_web.sh\nworker: /app/bin/worker.sh\n")
    entry = tmp_path / "bin" / "entrypoint.sh"
    entry.write_text(
        entry.read_text().replace(
            "honcho -f /app/Procfile --no-prefix start", "foreman start -f /app/Procfile -t 60"
        )
    )
    (finding,) = _rules(
        list(check_files(paths, machine=MACHINE, env={}).findings), "stop-wait-below-graceful"
    )
    assert finding.message.startswith("foreman's -t timeout 60 s is below gunicorn's")
    assert finding.fix.startswith("foreman start -t 905   and with it the container's stop")
    assert "`docker stop -t 910`" in finding.fix
    assert "ddollar.github.io/foreman" in finding.backing


def test_an_entrypoint_made_by_ln_s_is_followed_and_its_stopsignal_decides(
    tmp_path: Path,
) -> None:
    """`RUN ln -s app/entrypoint.sh /entrypoint` then `ENTRYPOINT ["/entrypoint"]`: the link is
    followed to the script (relative to the link's folder), so the image's `STOPSIGNAL SIGINT`
    is what uWSGI gets: not a SIGTERM finding, but SIGINT's immediate stop, at its line."""
    image = (
        "FROM python:3.12-slim\n"
        "WORKDIR /app\n"
        "COPY entrypoint.sh uwsgi.ini ./\n"
        "RUN chmod +x entrypoint.sh && ln -sf app/entrypoint.sh /entrypoint\n"
        'ENTRYPOINT ["/entrypoint"]\n'
        "STOPSIGNAL SIGINT\n"
    )
    script = "#!/bin/bash\nexec uwsgi --ini uwsgi.ini\n"
    ini = "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\ndie-on-term = true\n"
    files = {"Dockerfile": image, "entrypoint.sh": script, "uwsgi.ini": ini}
    findings = _findings(tmp_path, files)
    assert not _rules(findings, "uwsgi-sigterm-cuts-requests")
    (finding,) = _rules(findings, "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line) == ("Dockerfile", 6)
    # die-on-term is already set: the fix adds the hook only.
    assert finding.fix == (
        "STOPSIGNAL SIGTERM   and in uWSGI's config: hook-master-start = unix_signal:15 "
        "gracefully_kill_them_all"
    )
    # No die-on-term in the config: the fix adds both lines (SIGTERM alone would reload).
    plain = {**files, "uwsgi.ini": ini.replace("die-on-term = true\n", "")}
    (finding,) = _rules(_findings(tmp_path, plain), "stop-signal-quick-shutdown")
    assert finding.fix.endswith(
        "config: die-on-term = true   and   hook-master-start = "
        "unix_signal:15 gracefully_kill_them_all"
    )
    # Without the link, /entrypoint is not the script: nothing says what SIGINT does to it.
    unlinked = image.replace(" && ln -sf app/entrypoint.sh /entrypoint", "")
    findings = _findings(tmp_path, {**files, "Dockerfile": unlinked})
    assert not _rules(findings, "stop-signal-quick-shutdown")


def test_a_dev_compose_reload_does_not_hide_the_images_own_stop_fault(tmp_path: Path) -> None:
    """A dev compose service adds `--reload` to the image's command through its environment;
    the image's own run (its CMD, what a rollout of the published image stops) is still
    checked: the backgrounded gunicorn without a trap is one finding, in the group as alone."""
    image = (
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
        'ENV GUNICORN_CMD_ARGS="--workers 2"\nCMD ["bash", "run.sh"]\n'
    )
    script = "#!/bin/bash\nnginx &\ngunicorn app.wsgi -b :8001 $EXTRA_ARGS &\nwait -n\n"
    compose = (
        "services:\n  web:\n    build: .\n    environment:\n"
        '      EXTRA_ARGS: "--reload"\n    ports: ["8000:8000"]\n'
    )
    files = {"Dockerfile": image, "run.sh": script}
    alone = _rules(_findings(tmp_path, {"run.sh": script}), "background-server-without-trap")
    group = _rules(
        _findings(tmp_path, {**files, "docker-compose.yml": compose}),
        "background-server-without-trap",
    )
    assert [(f.at.file.name, f.at.line) for f in alone] == [("run.sh", 3)]
    assert [(f.at.file.name, f.at.line) for f in group] == [("run.sh", 3)]


def test_uwsgi_sigterm_reloads_sits_in_the_config_and_waits_for_the_exec(tmp_path: Path) -> None:
    """uWSGI with a config file (`uwsgi.conf`, any suffix) and no die-on-term, started by a
    script without `exec`: the finding sits at the config's first line (where its fix goes,
    in the config's words), not on `processes`, and says it applies once the script passes
    SIGTERM on, naming that line (the script's own finding)."""
    image = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["bash", "start.sh"]\n'
    script = "#!/bin/bash\nuwsgi --ini /app/uwsgi.conf\n"
    conf = "[uwsgi]\nmodule = app:application\nmaster = true\nprocesses = 4\nhttp-socket = :80\n"
    files = {"Dockerfile": image, "start.sh": script, "uwsgi.conf": conf}
    findings = _findings(tmp_path, files)
    (finding,) = _rules(findings, "uwsgi-sigterm-reloads")
    assert (finding.at.file.name, finding.at.line) == ("uwsgi.conf", 1)
    assert finding.message.startswith(f"once the script ({tmp_path / 'start.sh'}:2) passes")
    assert finding.fix.startswith("die-on-term = true   and   hook-master-start")
    assert _rules(findings, "entrypoint-without-exec")
    execs = script.replace("\nuwsgi", "\nexec uwsgi")
    (finding,) = _rules(_findings(tmp_path, {**files, "start.sh": execs}), "uwsgi-sigterm-reloads")
    assert finding.message.startswith("uWSGI started by a command line is stopped with SIGTERM")


def test_a_compose_grace_fix_is_not_offered_alone_when_honcho_kills_first(tmp_path: Path) -> None:
    """honcho (5 s KILL_WAIT) runs gunicorn inside a compose service whose stop_grace_period
    is the default 10 s: raising the grace alone cannot help, so there is no
    grace-period-below-shutdown finding; the honcho finding's fix carries the grace with it."""
    image = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["bash", "/app/run.sh"]\n'
    files = {
        "Dockerfile": image,
        "run.sh": "#!/bin/bash\nexec honcho -f /app/Procfile start\n",
        "Procfile": "web: gunicorn --graceful-timeout 60 -b :8000 app:app\nworker: python w.py\n",
        "docker-compose.yml": "services:\n  web:\n    build: .\n",
    }
    findings = _findings(tmp_path, files)
    assert not _rules(findings, "grace-period-below-shutdown")
    (finding,) = _rules(findings, "stop-wait-below-graceful")
    assert finding.fix.endswith(
        f"`start -t 35`   and with it stop_grace_period: 40s ({tmp_path / 'docker-compose.yml'}:2)"
    )
    # Without honcho, the compose grace is what bounds the drain: its own finding.
    alone = {**files, "run.sh": "#!/bin/bash\nexec gunicorn --graceful-timeout 60 app:app\n"}
    (grace,) = _rules(_findings(tmp_path, alone), "grace-period-below-shutdown")
    assert grace.fix == "stop_grace_period: 65s"
    assert "on every stop or redeploy docker kills" in grace.message


def test_run_ln_s_links_resolve_as_the_kernel_reads_them(tmp_path: Path) -> None:
    """`ln -s` in a RUN: a relative target is relative to the link's folder, a link written
    onto a folder every image has is made inside it; the image finds the linked file."""
    from servertune.check.dockerfile import read_image

    (tmp_path / "start.sh").write_text("#!/bin/sh\nexec gunicorn app:app\n")
    text = (
        "FROM python:3.12\nWORKDIR /app\nCOPY start.sh .\n"
        "RUN ln -sf /app/start.sh /usr/local/bin && ln -s ../conf /etc/app"
        " ; ln -s app/start.sh /entrypoint\n"
    )
    image = read_image(tmp_path / "Dockerfile", text)
    assert dict(image.links) == {
        "/usr/local/bin/start.sh": "/app/start.sh",
        "/etc/app": "/conf",
        "/entrypoint": "/app/start.sh",
    }
    for name in ("/entrypoint", "start.sh", "/usr/local/bin/start.sh"):
        found = image.find(name)
        assert found is not None, name
        assert found.file == tmp_path / "start.sh"


def test_a_compose_service_is_stopped_with_its_stop_signal_or_its_images(tmp_path: Path) -> None:
    """A compose service built from an image with `STOPSIGNAL SIGINT` is stopped with SIGINT
    (gunicorn's quick shutdown, at the STOPSIGNAL line); the service's own `stop_signal`
    wins over the image's, and its fix is in compose's words."""
    image = 'FROM python:3.12-slim\nSTOPSIGNAL SIGINT\nCMD ["gunicorn", "app:app"]\n'
    compose = "services:\n  web:\n    build: .\n"
    files = {"Dockerfile": image, "compose.yaml": compose}
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line, finding.fix) == (
        "Dockerfile",
        2,
        "STOPSIGNAL SIGTERM",
    )
    files["compose.yaml"] = compose + "    stop_signal: SIGQUIT\n"
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line, finding.fix) == (
        "compose.yaml",
        4,
        "stop_signal: SIGTERM",
    )
    assert finding.message.startswith("SIGQUIT stops gunicorn")
    files["compose.yaml"] = compose + "    stop_signal: SIGTERM\n"
    assert not _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")


def test_a_variable_in_an_exec_form_cmd_reaches_the_server_as_written(tmp_path: Path) -> None:
    """`CMD ["gunicorn", ..., "--workers", "${GUNICORN_WORKERS:-4}"]`: no shell expands it, so
    gunicorn gets the text (an error at that line); the same in shell form expands and is
    none."""
    image = (
        'FROM python:3.12-slim\nCMD ["gunicorn", "shop.wsgi", "--bind", "0.0.0.0:8000", \\\n'
        '     "--workers", "${GUNICORN_WORKERS:-4}"]\n'
    )
    (finding,) = _rules(_findings(tmp_path, {"Dockerfile": image}), "exec-form-not-expanded")
    assert (finding.at.line, finding.severity.name) == (3, "error")
    shell = "FROM python:3.12-slim\nCMD exec gunicorn shop.wsgi --workers ${GUNICORN_WORKERS:-4}\n"
    assert not _rules(_findings(tmp_path, {"Dockerfile": shell}), "exec-form-not-expanded")


def test_a_shell_form_running_a_process_manager_names_it_as_the_shells_child(
    tmp_path: Path,
) -> None:
    """`CMD envsubst ... && /usr/bin/supervisord -c /etc/sv.conf`: the shell's child is
    supervisord, which runs gunicorn; the message names both, and the fix execs supervisord.
    (`/usr/bin/envsubst` is written with its path, as the image it comes from writes it.)"""
    files = {
        "Dockerfile": "FROM python:3.12-slim\nCOPY sv.conf /etc/sv.conf\n"
        "CMD /usr/bin/envsubst < /etc/t > /etc/o && /usr/bin/supervisord -c /etc/sv.conf\n",
        "sv.conf": "[supervisord]\nnodaemon=true\n[program:web]\ncommand=gunicorn app:app\n",
    }
    (finding,) = _rules(_findings(tmp_path, files), "shell-form-command")
    assert "PID 1 with supervisord (which runs gunicorn) as its child" in finding.message
    assert finding.fix.endswith("&& exec /usr/bin/supervisord -c /etc/sv.conf")


def test_the_exec_fix_of_a_list_goes_before_its_last_command(tmp_path: Path) -> None:
    """`mwdb configure --quiet basic && /app/.venv/bin/gunicorn` as the script's server line:
    the fix execs gunicorn, the list's last command (`exec` first would exec the configure
    step and never start gunicorn); a `;` or `&&` inside quotes or `$(...)` is no list."""
    script = (
        "#!/bin/sh\necho 'a; b && c'\n"
        "mwdb configure --quiet basic && /app/.venv/bin/gunicorn -w 2 app:app\n"
    )
    image = 'FROM python:3.12-slim\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n'
    findings = _findings(tmp_path, {"Dockerfile": image, "start.sh": script})
    (finding,) = _rules(findings, "entrypoint-without-exec")
    assert finding.fix == (
        "mwdb configure --quiet basic && exec /app/.venv/bin/gunicorn -w 2 app:app"
    )
    # A list inside a command substitution is the substitution's: the line is one command.
    script = "#!/bin/sh\nuv run uvicorn app:app --workers $(nproc --all || echo 4)\n"
    findings = _findings(tmp_path, {"Dockerfile": image, "start.sh": script})
    (finding,) = _rules(findings, "entrypoint-without-exec")
    assert finding.fix == "exec uv run uvicorn app:app --workers $(nproc --all || echo 4)"


def test_an_unlaunched_script_in_a_walked_folder_is_said_only_when_an_image_copies_it(
    tmp_path: Path,
) -> None:
    """In a folder walk, `bin/start.sh` runs uWSGI without `exec` and nothing here starts
    it: while the repository's only Dockerfile copies other files (its CMD runs gunicorn), no
    container here could run the script and no entrypoint-without-exec-unlaunched is said
    (as seen in arXiv/arxiv-browse bin/start_browse.sh, a host launcher); once the Dockerfile
    copies `bin/`, a container may run it and the info is said."""
    from tests.folder_support import check_folder, write

    image = (
        "FROM python:3.12\nWORKDIR /app\nCOPY app.py /app/\n"
        'CMD ["gunicorn", "-b", ":8080", "app:app"]\n'
    )
    files = {
        "Dockerfile": image,
        "app.py": "app = None\n",
        "bin/start.sh": '#!/bin/bash\nset -e\n/usr/bin/uwsgi --http :8000 -w app "$@"\n',
    }
    rule = "entrypoint-without-exec-unlaunched"
    host = check_folder(write(tmp_path / "host", files))
    assert not _rules(list(host.findings), rule)
    files["Dockerfile"] = image.replace(
        "COPY app.py /app/\n", "COPY app.py /app/\nCOPY bin /app/bin\n"
    )
    copied = check_folder(write(tmp_path / "copied", files))
    assert [f.at.line for f in _rules(list(copied.findings), rule)] == [3]


def test_uwsgi_systemd_kill_signal_sigquit_is_advice_unless_die_on_term_swaps_it(
    tmp_path: Path,
) -> None:
    """A systemd unit running uWSGI with `KillSignal=SIGQUIT` (uWSGI's own systemd recipe,
    seen in a-plus's doc/apache2/*.service): with no die-on-term, SIGQUIT is uWSGI's
    documented immediate stop, so the finding is advice naming the graceful way, not a
    warning. With `die-on-term` in the ini, uWSGI swaps SIGTERM and SIGQUIT: SIGQUIT then
    brutally reloads instead of stopping, a warning naming the die-on-term line."""
    from servertune.check.model import Severity

    unit = (
        "[Unit]\nDescription=app\n\n[Service]\n"
        "ExecStart=/srv/venv/bin/uwsgi --ini /srv/app/uwsgi.ini\n"
        "KillSignal=SIGQUIT\nType=notify\n\n[Install]\nWantedBy=multi-user.target\n"
    )
    ini = "[uwsgi]\nmodule = app:application\nmaster = true\nsocket = :3031\n"
    files = {"app.service": unit, "uwsgi.ini": ini}
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line) == ("app.service", 6)
    assert finding.severity == Severity.advice
    assert "uWSGI's own systemd unit uses it" in finding.message
    swapped = {**files, "uwsgi.ini": ini + "die-on-term = true\n"}
    (finding,) = _rules(_findings(tmp_path, swapped), "stop-signal-quick-shutdown")
    assert finding.severity == Severity.warning
    assert finding.message.startswith("SIGQUIT does not stop this uWSGI: die-on-term (")
    assert "uwsgi.ini:5" in finding.message


def test_a_script_nothing_here_starts_is_advice_not_a_fault(tmp_path: Path) -> None:
    """A start script an image copies but no file here starts, running gunicorn without
    `exec` (a host's hand-run start script or an orphan, as muckrock's
    compose/production/django/start and PatrowlManager's start-server.sh were judged): the
    line and its `exec` fix are said as advice, not as an info fault."""
    from servertune.check.model import Severity
    from tests.folder_support import check_folder, write

    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n",
            "start.sh": "#!/bin/bash\ncd /app\ngunicorn -w 2 -b :8000 app:app\n",
        },
    )
    result = check_folder(root)
    (finding,) = [f for f in result.findings if f.rule == "entrypoint-without-exec-unlaunched"]
    assert (finding.at.file.name, finding.at.line) == ("start.sh", 3)
    assert finding.severity == Severity.advice
    assert finding.fix.startswith("exec gunicorn")


def test_a_stop_finding_in_the_compose_file_production_replaces_is_advice(
    tmp_path: Path,
) -> None:
    """`docker-compose.yml` beside a `docker-compose.prod.yml` that runs alone (its own
    `build`): the base file is the developers' stack, so its service's `sh -c` without exec
    is advice naming the production file (seen in xerrors/Yuxi-Know's sandbox-provisioner).
    When the prod file only completes the base (an overlay with no `build`), the base's
    services run in production too, and the warning stays."""
    from servertune.check.model import Severity
    from tests.folder_support import check_folder, write

    image = "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    dev = (
        "services:\n  api:\n    build: .\n"
        '    command: sh -c "pip install -e . ; uvicorn app:app --port 8002"\n'
    )
    prod = 'services:\n  api:\n    build: .\n    command: ["uvicorn", "app:app"]\n'
    files = {"Dockerfile": image, "docker-compose.yml": dev, "docker-compose.prod.yml": prod}
    result = check_folder(write(tmp_path / "a", files))
    (finding,) = [
        f
        for f in result.findings
        if f.rule == "entrypoint-without-exec" and f.at.file.name == "docker-compose.yml"
    ]
    assert finding.severity == Severity.advice
    assert "docker-compose.prod.yml beside docker-compose.yml" in finding.message
    overlay = "services:\n  api:\n    environment:\n      MODE: prod\n"
    files = {**files, "docker-compose.prod.yml": overlay}
    result = check_folder(write(tmp_path / "b", files))
    (finding,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert finding.severity == Severity.warning
