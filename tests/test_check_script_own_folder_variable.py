"""A script that keeps its own folder in a variable (`DIR="$(dirname "${BASH_SOURCE[0]}")"`,
`$(cd "$(dirname "$0")" && pwd)`) and names its server's config from it (`-c
"$DIR/gunicorn.conf.py"`) reads the config beside it: the folder is where the image holds the
script, else the folder of the path its caller ran it by (`$0`). Seen in GSA/catalog.data.gov
(ckan/setup/server_start.sh, run from a Cloud Foundry manifest and from a compose entrypoint).
Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

_CONFIG = "workers = 5\n"

_FORMS = [
    'DIR="$(dirname "${BASH_SOURCE[0]}")"',
    'DIR="$(dirname "$0")"',
    'DIR="$(cd "$(dirname "$0")" && pwd)"',
    "DIR=$(dirname $BASH_SOURCE)",
]


def _start(assignment: str) -> str:
    return f'#!/bin/bash\n{assignment}\nexec gunicorn -c "$DIR/web.conf.py" app.wsgi\n'


@pytest.mark.parametrize("assignment", _FORMS)
def test_config_named_from_the_scripts_own_folder_is_read_in_the_image(
    tmp_path: Path, assignment: str
) -> None:
    """The image's entrypoint runs /app/setup/start.sh, which names
    /app/setup/web.conf.py through its own folder: its 5 workers are the server's."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                'FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /app\nCMD ["/app/setup/entry.sh"]\n'
            ),
            "setup/entry.sh": "#!/bin/sh\nexec /app/setup/start.sh\n",
            "setup/start.sh": _start(assignment),
            "setup/web.conf.py": _CONFIG,
            "compose.yaml": "services:\n  web:\n    build: .\n",
        },
    )
    assert [(s, w) for _, s, w in chains(check_folder(root), root)] == [("gunicorn", 5)]


@pytest.mark.parametrize("assignment", _FORMS)
def test_config_named_from_the_scripts_own_folder_follows_the_path_it_was_run_by(
    tmp_path: Path, assignment: str
) -> None:
    """A Procfile's `web: ./deploy/start.sh` runs the script as `./deploy/start.sh`: its own
    folder is deploy/ below the app's root, and deploy/web.conf.py its config."""
    root = write(
        tmp_path,
        {
            "Procfile": "web: ./deploy/start.sh\n",
            "deploy/start.sh": _start(assignment),
            "deploy/web.conf.py": _CONFIG,
        },
    )
    assert [(s, w) for _, s, w in chains(check_folder(root), root)] == [("gunicorn", 5)]
