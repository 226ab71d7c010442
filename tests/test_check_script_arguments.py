"""A script's arguments are the words of the command that runs it (a compose `command`, passed
on through `"$@"` after a `shift`): a test on them (`if [ "${1:-}" == "--dev" ]`, under `set
-euo pipefail`) picks the branch that runs, so a dev service is not drawn as the production
server. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

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
