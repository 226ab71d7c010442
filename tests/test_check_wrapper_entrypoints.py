"""Entrypoints that start the server through their own arguments: `set -- SERVER ...` in the
`case` arm the image's CMD selects, then `exec "$@"`; wrappers that hand their arguments to
another program (`su -c "exec $*"`); supervisors that start every service of a folder
(`runsvdir DIR`). Each fixture is a small repository written here; the public project named
is where the pattern was seen."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DISPATCH = """#!/bin/sh
set -eu

case "${1:-api}" in
  api)
    set -- daphne \\
      --bind 0.0.0.0 \\
      --port 8000 \\
      shop.asgi:application
    ;;
  worker)
    set -- celery --app shop worker --loglevel INFO
    ;;
esac

exec "$@"
"""


def test_set_in_the_arm_the_cmd_selects_is_what_exec_runs(tmp_path: Path) -> None:
    """`case "${1:-api}" in api) set -- daphne ...;; worker) set -- celery ...;; esac; exec
    "$@"` under `CMD ["api"]`: the `api` arm's `set --` rebinds the arguments, the `worker`
    arm's does not (it is another run's), so the image runs daphne on 0.0.0.0:8000. Seen in
    ResearchHub/researchhub-backend."""
    root = write(
        tmp_path,
        {
            "docker/entrypoint.sh": DISPATCH,
            "Dockerfile": "FROM python:3.13-slim\nWORKDIR /app\nCOPY . .\n"
            "COPY docker/entrypoint.sh /usr/local/bin/entrypoint\n"
            'ENTRYPOINT ["/usr/local/bin/entrypoint"]\nCMD ["api"]\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:5", "docker/entrypoint.sh:6"], "daphne", 1)]
    assert [s.value for s in result.apps[0].sockets] == ["0.0.0.0:8000"]
