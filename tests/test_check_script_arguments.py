"""A script's arguments are the words of the command that runs it (a compose `command`, passed
on through `"$@"` after a `shift`): a test on them (`if [ "${1:-}" == "--dev" ]`, under `set
-euo pipefail`) picks the branch that runs, and a `case` on a name the script sets to its first
argument (`SERVICE=$1`) picks its arm, so a dev or worker service is not drawn as the
production server. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import chains, check_folder, write

_ENTRYPOINT = """\
#!/bin/bash
set -euo pipefail
case "$1" in
  web)
    shift
    exec /app/bin/run_web.sh "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
"""

_RUN_WEB = """\
#!/bin/bash
set -euo pipefail
if [ "${1:-}" == "--dev" ]; then
    exec python manage.py runserver 0.0.0.0:8000
else
    exec gunicorn --workers 4 --bind 0.0.0.0:8000 app.wsgi
fi
"""


def test_arguments_passed_on_after_shift_pick_the_branch_of_the_next_script(
    tmp_path: Path,
) -> None:
    """`command: ["web", "--dev"]` runs entrypoint.sh's `web)` arm, which shifts and passes
    `--dev` on to run_web.sh: its `if [ "${1:-}" == "--dev" ]` branch runs (runserver), so
    the devweb service starts no gunicorn; `command: ["web"]` takes the else branch."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY bin/ /app/bin/\n"
                'ENTRYPOINT ["/app/bin/entrypoint.sh"]\nCMD ["web"]\n'
            ),
            "bin/entrypoint.sh": _ENTRYPOINT,
            "bin/run_web.sh": _RUN_WEB,
            "compose.yaml": (
                'services:\n  web:\n    build: .\n    command: ["web"]\n'
                '  devweb:\n    build: .\n    command: ["web", "--dev"]\n'
            ),
        },
    )
    result = check_folder(root)
    started = {
        launch.app.container.name: launch.app.kind
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    }
    assert started == {"web": "gunicorn"}


#: An entrypoint that keeps its first argument in a name before it dispatches on that name.
_DISPATCH = """\
#!/bin/bash
set -euo pipefail
if [ -z "$*" ]; then
    echo "usage: entrypoint.sh SERVICE"
    exit 1
fi
{assignment}
shift
case ${{SERVICE}} in
processor)  ## the queue's worker
    exec /app/bin/processor.sh "$@"
    ;;
webapp)
    exec /app/bin/webapp.sh "$@"
    ;;
*)
    echo "Unknown service ${{SERVICE}}"
    exit 1
esac
"""


def _dispatching(root: Path, assignment: str, environment: str = "") -> list[str]:
    write(
        root,
        {
            "Dockerfile": 'FROM python:3.12-slim\nCOPY . /app\nENTRYPOINT ["/app/bin/entrypoint.sh"]\n',
            "bin/entrypoint.sh": _DISPATCH.format(assignment=assignment),
            "bin/processor.sh": "#!/bin/sh\nexec python -m worker\n",
            "bin/webapp.sh": "#!/bin/sh\nexec gunicorn -b 0.0.0.0:8000 app:app\n",
            "compose.yaml": "services:\n"
            f'  webapp:\n    build: .\n    command: ["webapp"]\n{environment}'
            f'  processor:\n    build: .\n    command: ["processor"]\n{environment}',
        },
    )
    return [chain[0] for chain, _, _ in chains(check_folder(root), root)]


def test_a_case_on_a_name_set_to_the_first_argument_runs_the_commands_arm(
    tmp_path: Path,
) -> None:
    """`SERVICE=$1; shift; case ${SERVICE} in`: each compose service's command picks its arm,
    so only the `webapp` service starts gunicorn; `processor` runs its worker, never the
    webapp's server."""
    assert _dispatching(tmp_path, "SERVICE=$1") == ["compose.yaml:2"]


def test_a_name_defaulting_to_the_first_argument_is_it_unless_the_environment_sets_it(
    tmp_path: Path,
) -> None:
    """`SERVICE=${SERVICE:=$1}` is the argument when the container's environment does not set
    SERVICE; when the service sets it, which arm runs is its value's (not known to be the
    argument), so every arm is read as before."""
    assert _dispatching(tmp_path / "a", "SERVICE=${SERVICE:=$1}") == ["compose.yaml:2"]
    both = _dispatching(
        tmp_path / "b", "SERVICE=${SERVICE:=$1}", "    environment:\n      SERVICE: webapp\n"
    )
    assert both == ["compose.yaml:2", "compose.yaml:7"]


def test_a_service_passing_no_argument_to_an_entrypoint_that_dispatches_starts_nothing(
    tmp_path: Path,
) -> None:
    """The image sets its ENTRYPOINT, a script dispatching on `$1`, and no CMD; a compose
    service with no `command` runs it with no argument at all, so the `*)` arm prints its
    usage and exits: only the service that passes `webapp` starts gunicorn (the one passing
    nothing had been drawn into the webapp arm)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY entrypoint.sh /app/entrypoint.sh\n"
                'ENTRYPOINT ["/app/entrypoint.sh"]\n'
            ),
            "entrypoint.sh": (
                '#!/bin/bash\nset -euo pipefail\nSERVICE="${1:-}"\ncase "$SERVICE" in\n'
                "webapp)\n    exec gunicorn -b 0.0.0.0:8000 app:app\n    ;;\n"
                '*)\n    echo "usage: entrypoint.sh SERVICE"\n    exit 1\n    ;;\nesac\n'
            ),
            "compose.yaml": (
                "services:\n  app:\n    build: .\n    image: local/app\n"
                '  web:\n    image: local/app\n    command: ["webapp"]\n'
            ),
        },
    )
    started = [chain[0] for chain, _, _ in chains(check_folder(root), root)]
    assert started == ["compose.yaml:5"]


def test_a_service_passing_no_argument_takes_the_first_argument_s_default(
    tmp_path: Path,
) -> None:
    """`DEPLOYMENT=${1:-api}` in a script the image's ENTRYPOINT runs with no CMD: a compose
    service with no `command` gives it no argument, so DEPLOYMENT is `api` and its branch
    starts gunicorn; the service passing `celery` runs the worker."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY start.sh /app/start.sh\n"
                'ENTRYPOINT ["sh", "/app/start.sh"]\n'
            ),
            "start.sh": (
                '#!/bin/sh\nexport DEPLOYMENT=${1:-api}\nif [ "$DEPLOYMENT" = "api" ]\nthen\n'
                "    gunicorn -b 0.0.0.0:8080 app:app\nfi\n"
                'if [ "$DEPLOYMENT" = "celery" ]\nthen\n    celery -A app worker\nfi\n'
            ),
            "compose.yaml": (
                "services:\n  web:\n    build: .\n    image: local/app\n"
                '  worker:\n    image: local/app\n    command: ["celery"]\n'
            ),
        },
    )
    started = [chain[0] for chain, _, _ in chains(check_folder(root), root)]
    assert started == ["compose.yaml:2"]


#: An entrypoint that keeps its arguments in a variable and lets `eval echo` expand them.
_EVAL_ARGUMENTS = """\
#!/bin/bash
set -e
args="$@"
if [[ $args =~ ^uvicorn.* ]]; then
    exec $(eval echo "$args")
else
    exec uvicorn app.main:app $(eval echo "$args")
fi
"""


def test_arguments_kept_in_a_variable_reach_the_server_through_eval_echo(tmp_path: Path) -> None:
    """`args="$@"` then `uvicorn app $(eval echo "$args")`: the image's one-word CMD is
    expanded from its ENV and split as eval does, so uvicorn is read with 3 workers on
    0.0.0.0:8000 and keep-alive 30, once, not with its defaults (1 on 127.0.0.1:8000)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY bin/entrypoint.sh /entrypoint.sh\n"
                "ENV APP_HOST=0.0.0.0\nENV APP_WORKERS=3\n"
                'ENTRYPOINT ["/entrypoint.sh"]\n'
                'CMD ["--workers ${APP_WORKERS} --host ${APP_HOST} --port 8000 '
                '--reload --timeout-keep-alive 30"]\n'
            ),
            "bin/entrypoint.sh": _EVAL_ARGUMENTS,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:5", "bin/entrypoint.sh:7"], "uvicorn", 3)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert app.keepalive is not None
    assert app.keepalive.value == 30
    assert not [n for n in result.notes if n.kind == "unresolved-variable"]


_MODES = """\
#!/bin/bash
set -e
if [ "${INIT_ONLY:-false}" = "true" ]; then
    python3 /app/migrate.py
    exit 0
fi
if [ "${CRON_MODE:-false}" = "true" ]; then
    exec python3 /app/cron-runner.py
fi
exec python3 -m gunicorn --workers 4 --bind 0.0.0.0:8080 app.wsgi
"""


def test_a_branch_the_service_environment_takes_and_that_ends_the_script_starts_nothing(
    tmp_path: Path,
) -> None:
    """Three services of one image, told apart by `environment`: `INIT_ONLY: "true"` takes the
    `if [ "${INIT_ONLY:-false}" = "true" ]` branch, which exits; `CRON_MODE: "true"` execs
    the cron runner; only the service setting neither runs the gunicorn after them."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\n"
                'ENTRYPOINT ["/entrypoint.sh"]\n'
            ),
            "entrypoint.sh": _MODES,
            "compose.yaml": (
                "services:\n"
                '  init:\n    build: .\n    environment:\n      INIT_ONLY: "true"\n'
                "  web:\n    build: .\n"
                '  cron:\n    build: .\n    environment:\n      CRON_MODE: "true"\n'
            ),
        },
    )
    result = check_folder(root)
    started = [
        launch.app.container.name
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    ]
    assert started == ["web"]


def test_an_exit_in_a_function_called_on_a_condition_does_not_end_the_script(
    tmp_path: Path,
) -> None:
    """`usage() { ...; exit 1; }` called as `[ $# -lt 1 ] && usage`: its `exit` runs only when
    the test holds, so the `start)` arm the CMD picks still starts granian."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY run.sh /app/run.sh\nWORKDIR /app\n"
                'ENTRYPOINT ["./run.sh"]\nCMD ["start"]\n'
            ),
            "run.sh": (
                "#!/usr/bin/env bash\nusage() {\n  echo usage\n  exit 1\n}\n"
                "[ $# -lt 1 ] && usage\ncase $1 in\n  start)\n    shift\n"
                '    exec granian server:app --interface wsgi "$@"\n    ;;\n'
                '  *)\n    exec "$@"\n    ;;\nesac\n'
            ),
            "compose.yaml": "services:\n  web:\n    build: .\n    command: start\n",
        },
    )
    result = check_folder(root)
    assert [kind for _, kind, _ in chains(result, root)] == ["granian"]


def test_an_exit_in_a_function_called_inside_the_taken_branch_does_not_end_the_script(
    tmp_path: Path,
) -> None:
    """`die() { echo "$*"; exit 1; }` called as `migrate || die "failed"` inside the
    `if [ "$1" = "gunicorn" ]` branch the compose command takes: the exit runs only when the
    migration fails, so `exec "$@"` after the branch still starts gunicorn."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\n"
                'ENTRYPOINT ["/entrypoint.sh"]\n'
            ),
            "entrypoint.sh": (
                '#!/bin/bash\nset -e\ndie() {\n    echo >&2 "$*"\n    exit 1\n}\n'
                'if [ "$1" = "gunicorn" ]; then\n'
                '    python manage.py migrate || die "failed to migrate"\nfi\nexec "$@"\n'
            ),
            "compose.yaml": (
                "services:\n  web:\n    build: .\n    command: gunicorn -w 3 app.wsgi\n"
            ),
        },
    )
    assert [kind for _, kind, _ in chains(check_folder(root), root)] == ["gunicorn"]


def test_arguments_no_file_passes_on_leave_the_settings_unknown_not_defaults(
    tmp_path: Path,
) -> None:
    """bin/start.sh runs `/usr/bin/uwsgi --http :8000 --module app.wsgi "$@"` and nothing here
    runs the script: its caller's arguments may set `--processes`, `--threads`, `--ini` or
    `--die-on-term`, so no finding judges uWSGI's defaults (one-process-one-thread,
    uwsgi-sigterm-reloads) and no config-not-found note names `"$@"`; the same line without
    `"$@"` is judged as before. (Seen in arXiv/arxiv-browse's bin/start_browse.sh.)"""
    line = "#!/bin/bash\nset -e\n/usr/bin/uwsgi --http :8000 --module app.wsgi{}\n"
    root = write(
        tmp_path,
        {"bin/start.sh": line.format(' "$@"'), "bin/plain.sh": line.format("")},
    )
    result = check_folder(root)
    judged = {
        (f.at.file.name, f.rule) for f in result.findings if f.rule.startswith(("one-", "uwsgi-"))
    }
    assert judged == {("plain.sh", "one-process-one-thread"), ("plain.sh", "uwsgi-sigterm-reloads")}
    assert "config-not-found" not in {n.kind for n in result.notes}
    assert "config-not-found" not in {f.rule for f in result.findings}


_STAGED = """\
FROM python:3.12 AS appbase
WORKDIR /app
COPY . .
ENTRYPOINT ["/app/docker/entrypoint.sh"]

FROM appbase AS development
ENV DEV_SERVER=true

FROM appbase AS production
EXPOSE 8000
"""

_ANY_ARGUMENTS_FIRST = """\
#!/bin/bash
if [[ -n "$*" ]]; then
    "$@"
elif [[ "$DEV_SERVER" = "true" ]]; then
    exec gunicorn --reload -b 0.0.0.0:8000 app.wsgi
else
    exec uwsgi --ini uwsgi.ini
fi
"""


def test_no_arguments_at_all_decide_a_test_on_all_of_them(tmp_path: Path) -> None:
    """A compose service with no `command`, built with `target: development` from an image
    whose ENTRYPOINT script and no CMD: the script gets no arguments, so `[[ -n "$*" ]]` is
    false and the `elif` on the stage's `ENV DEV_SERVER=true` runs the development server;
    uWSGI's `else` is the production image's own launch only, not the service's (seen in
    City-of-Helsinki/linkedevents)."""
    write(
        tmp_path,
        {
            "docker/Dockerfile": _STAGED,
            "docker/entrypoint.sh": _ANY_ARGUMENTS_FIRST,
            "uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nmaster = true\nprocesses = 4\n",
            "compose.yaml": "services:\n  django:\n    build:\n      context: .\n"
            "      dockerfile: docker/Dockerfile\n      target: development\n",
        },
    )
    result = check_folder(tmp_path)
    found = sorted((chain[0].split(":")[0], kind) for chain, kind, _ in chains(result, tmp_path))
    assert found == [("compose.yaml", "gunicorn"), ("docker/Dockerfile", "uwsgi")]
