"""A server's command line written in bash arrays is read as bash expands it: `ARGS=(...)`
(over several lines, with comments), `ARGS+=(...)`, `declare -a`, then `"${ARGS[@]}"` or
`${ARGS[*]}`, each element one word (quoted spaces kept) at the line that writes it. An array
holding a value only the running script knows is "not followed", never "starts no server".
Fixture: tests/data/repos/shell-arrays."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.machine import Machine
from tests.folder_support import chains, check_folder, write

ROOT = Path(__file__).parent / "data" / "repos" / "shell-arrays"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _check(name: str) -> CheckResult:
    return check_files([ROOT / name], machine=MACHINE, env={})


def test_gunicorn_flags_in_an_array_are_its_options_at_their_lines() -> None:
    """`GUNICORN_ARGS=(` one option a line `)`, grown by `+=`, passed as
    `"${GUNICORN_ARGS[@]}"`: workers from the script's variable at the element's line, the
    later `+=` read, the quoted log format one word (gunicorn accepts the line)."""
    (app,) = _check("gunicorn-args.sh").apps
    assert app.kind == "gunicorn"
    assert (app.workers.value, app.workers.at.line) == (3, 6)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert app.request_timeout is not None
    assert (app.request_timeout.value, app.request_timeout.at.line) == (45, 12)


def test_server_program_inside_the_array_is_the_server_and_exec_is_seen() -> None:
    """`declare -a SERVER=(uvicorn ...)` + `SERVER+=(--workers 2)`, then
    `exec "${SERVER[@]}" --timeout-keep-alive 20`: uvicorn with all of it, and the `exec`
    before the array makes the server the script's process (no entrypoint-without-exec)."""
    result = _check("server-in-array.sh")
    (app,) = result.apps
    assert app.kind == "uvicorn"
    assert app.workers.value == 2
    assert [s.value for s in app.sockets] == ["0.0.0.0:9000"]
    assert not [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]


def test_star_expansion_without_exec_is_the_servers_options_and_the_shell_stays() -> None:
    """`gunicorn ${OPTS[*]} shop.wsgi` without `exec`: 5 workers and 2 threads, and the shell
    stays the server's parent, said at that line."""
    result = _check("star-no-exec.sh")
    (app,) = result.apps
    assert (app.workers.value, app.threads.value) == (5, 2)
    (child,) = [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert child.at.line == 3


def test_array_with_a_value_known_only_when_it_runs_is_not_followed() -> None:
    """`ARGS=(gunicorn --workers "$WEB_CONCURRENCY" ...)` with the variable set nowhere, run
    by `exec "${ARGS[@]}"`: not followed, at that line; never "starts no server"."""
    result = _check("unknown-element.sh")
    assert not result.apps
    assert [(n.kind, n.at.line) for n in result.notes] == [("not-followed", 3)]
    assert "an array" in result.notes[0].message


def test_array_element_gets_the_images_environment() -> None:
    """The same script run by an image whose `ENV WEB_CONCURRENCY=6` sets the element: the
    array is known, and its gunicorn has 6 workers."""
    result = check_files(
        [ROOT / "unknown-element.sh"], machine=MACHINE, env={"WEB_CONCURRENCY": "6"}
    )
    (app,) = result.apps
    assert app.workers.value == 6


def test_a_script_run_through_an_array_set_in_a_function_is_followed(tmp_path: Path) -> None:
    """An image's entrypoint whose function sets `SERVER_CMD=(./run-gunicorn.sh "$@")`, called,
    then `exec "${SERVER_CMD[@]}"`: the script in the array is followed to its gunicorn (seen
    in IBM/mcp-context-forge's docker-entrypoint.sh), never "starts no server"."""
    root = write(
        tmp_path / "repo",
        {
            "Dockerfile": 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["./entry.sh"]\n',
            "entry.sh": (
                "#!/usr/bin/env bash\nset -euo pipefail\nbuild_server_command() {\n"
                '    SERVER_CMD=(./run-gunicorn.sh "$@")\n}\nbuild_server_command "$@"\n'
                'exec "${SERVER_CMD[@]}"\n'
            ),
            "run-gunicorn.sh": "#!/usr/bin/env bash\nexec gunicorn -w 4 -b 0.0.0.0:4444 app:app\n",
        },
    )
    result = check_folder(root)
    assert (["Dockerfile:4", "entry.sh:7", "run-gunicorn.sh:2"], "gunicorn", 4) in chains(
        result, root
    )
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
