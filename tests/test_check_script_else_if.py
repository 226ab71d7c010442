"""An `if` nested in an `else` on the same line (`else if [ "$1" = "serve" ]; then ... fi`,
closed by its own `fi`) is read as that nested `if`: the branch the arguments choose runs, as
with `elif` or an `if` on the line after `else`. Seen in MonochromeCMS/monochrome-api, whose
entrypoint serves gunicorn for the image's CMD `serve` and runs the dev compose `command:`
(uvicorn) through `exec "$@"`. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_ENTRYPOINT = """\
#!/bin/bash
if [ "$1" = "create_admin" ]; then
  python ./create_admin.py
else if [ "$1" = "serve" ]; then
    gunicorn -w 4 -k uvicorn.workers.UvicornWorker -b 0.0.0.0:3000 api.main:app
else
  exec "$@"
fi
fi
"""


def test_else_if_follows_the_branch_the_compose_command_chooses(tmp_path: Path) -> None:
    """The image's CMD `serve` takes the nested `if`'s gunicorn branch; the compose service's
    `command: uvicorn ...` is neither `create_admin` nor `serve`, so the nested `else` runs it
    (`exec "$@"`): uvicorn, not gunicorn, for that service."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\n"
                'ENTRYPOINT ["/app/docker/entrypoint.sh"]\nCMD ["serve"]\n'
            ),
            "docker/entrypoint.sh": _ENTRYPOINT,
            "compose.yaml": (
                "services:\n  api:\n    build: .\n"
                '    command: "uvicorn api.main:app --host 0.0.0.0 --port 3000"\n'
            ),
        },
    )
    assert sorted((c, s) for c, s, _ in chains(check_folder(root), root)) == [
        (["Dockerfile:4", "docker/entrypoint.sh:5"], "gunicorn"),
        (["compose.yaml:2", "Dockerfile:4", "docker/entrypoint.sh:7"], "uvicorn"),
    ]
