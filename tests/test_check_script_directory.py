"""A script that moves to its own folder (`cd "$(dirname "$0")"`, `` cd `dirname $0` ``,
`cd "${0%/*}"`) runs a relative path from there: `exec ./run_web.sh` is the script beside it in
the image, whatever the image's WORKDIR. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

_DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /app
COPY . /app
ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["web"]
"""

_RUN_WEB = "#!/bin/sh\nexec gunicorn --bind 0.0.0.0:8000 --workers 2 app.wsgi\n"


@pytest.mark.parametrize(
    "cd",
    ['cd "$(dirname "$0")"', "cd $(dirname $0)", "cd `dirname $0`", 'cd "${0%/*}"'],
)
def test_relative_script_after_cd_to_the_scripts_own_folder_is_followed(
    tmp_path: Path, cd: str
) -> None:
    """The entrypoint (/app/docker/entrypoint.sh) moves to /app/docker, then `exec
    ./run_web.sh` runs /app/docker/run_web.sh: the chain reaches its gunicorn from the image,
    not only when the scripts are read on their own."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _DOCKERFILE,
            "docker/entrypoint.sh": f"#!/bin/sh\nset -e\n{cd}\nexec ./run_web.sh\n",
            "docker/run_web.sh": _RUN_WEB,
            "compose.yaml": "services:\n  web:\n    build: .\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (
            ["compose.yaml:2", "Dockerfile:4", "docker/entrypoint.sh:4", "docker/run_web.sh:2"],
            "gunicorn",
            2,
        )
    ]
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_relative_script_after_cd_to_the_scripts_parent_is_looked_up_there(
    tmp_path: Path,
) -> None:
    """`cd "$(dirname "$0")"` then `cd ..` is the folder above the script's: `exec
    ./docker/run_web.sh` runs /app/docker/run_web.sh from /app."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _DOCKERFILE.replace("WORKDIR /app", "WORKDIR /srv"),
            "docker/entrypoint.sh": (
                '#!/bin/sh\ncd "$(dirname "$0")"\ncd ..\nexec ./docker/run_web.sh\n'
            ),
            "docker/run_web.sh": _RUN_WEB,
            "compose.yaml": "services:\n  web:\n    build: .\n",
        },
    )
    assert chains(check_folder(root), root) == [
        (
            ["compose.yaml:2", "Dockerfile:4", "docker/entrypoint.sh:4", "docker/run_web.sh:2"],
            "gunicorn",
            2,
        )
    ]
