"""The shell forms and wrappers a launch goes through, read as the shell and supervisord run
them: `set -- ...` then `"$@"`, a `case` arm or an `if` on one line with its command, a
function's `local` variable, a command held in a variable (`exec $CMD`), the interpreter's own
options before `python -m uvicorn`, and supervisord's `[include]` globs (an absolute one
through the image that copies the config). Fixture: tests/data/repos/shell-forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "shell-forms"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


@pytest.mark.parametrize(
    ("script", "server", "workers", "threads"),
    [
        ("set-command.sh", "gunicorn", 3, 1),
        ("set-arguments.sh", "gunicorn", 4, 1),
        ("case-one-line.sh", "gunicorn", 3, 1),
        ("if-one-line.sh", "gunicorn", 2, 1),
        ("function-local.sh", "gunicorn", 5, 1),
        ("command-variable.sh", "gunicorn", 3, 2),
        ("python-options.sh", "uvicorn", 2, 1),
    ],
)
def test_shell_form_starts_the_server_with_its_options(
    script: str, server: str, workers: int, threads: int
) -> None:
    """Each script's one server, with the options its form passes, and no `exec` fault: every
    one of them execs the server."""
    result = check_files([ROOT / script], machine=MACHINE, env={})
    (app,) = result.apps
    assert (app.kind, app.workers.value, app.threads.value) == (server, workers, threads)
    assert not [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert not [n for n in result.notes if n.kind in ("starts-no-server", "not-followed")]


def test_positional_parameters_set_by_the_script_keep_their_lines() -> None:
    """`set -- --workers "$WORKERS" --timeout 40` then `exec gunicorn "$@" ...`: the
    script's variable expanded, each option at the `set --` line."""
    (app,) = check_files([ROOT / "set-arguments.sh"], machine=MACHINE, env={}).apps
    assert app.request_timeout is not None
    assert (app.request_timeout.value, app.request_timeout.at.line) == (40, 3)
    assert app.workers.at.line == 3


def test_supervisord_include_glob_through_the_image_is_in_the_chain() -> None:
    """`COPY conf/ /etc/app/` and `[include] files = /etc/app/conf.d/*.conf`: the included
    conf/conf.d/web.conf's program is the image's gunicorn, its chain the Dockerfile, the
    include line and the program's line; the worker's file adds no server."""
    root = ROOT / "supervisord-include"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [(at.file.relative_to(root).as_posix(), at.line) for at in launch.chain] == [
        ("Dockerfile", 3),
        ("conf/supervisord.conf", 5),
        ("conf/conf.d/web.conf", 2),
    ]
    assert launch.app.workers.value == 3
    assert not [
        n for n in result.notes if n.kind == "starts-no-server" and "Dockerfile" in str(n.at.file)
    ]
