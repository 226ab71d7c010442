"""Paths a script builds from its own location, read from the repository's checkout: the
folder of `$(cd $(dirname $0) || exit 1; pwd)` is the script's, `$(realpath "${DIR}/..")` the
folder above it, so the config the server is given there is the repository's file (seen in
Slicer/slicer_download's bin/start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.script_folder import real_path
from tests.folder_support import chains, check_folder, write


def test_root_folder_from_the_scripts_own_folder_finds_the_config(tmp_path: Path) -> None:
    """bin/start sets `script_dir=$(cd $(dirname $0) || exit 1; pwd)` and `ROOT_DIR=$(realpath
    "${script_dir}/..")`, then runs `uwsgi --ini ${ROOT_DIR}/etc/uwsgi.ini`: the launch is
    bin/start -> etc/uwsgi.ini with the ini's 3 processes, never "config not found"."""
    write(
        tmp_path,
        {
            "bin/start": "#!/bin/bash\nset -e\n"
            "script_dir=$(cd $(dirname $0) || exit 1; pwd)\n"
            'ROOT_DIR=$(realpath "${script_dir}/..")\n'
            "exec uwsgi --ini ${ROOT_DIR}/etc/uwsgi.ini\n",
            "etc/uwsgi.ini": "[uwsgi]\nmodule = app\nprocesses = 3\nhttp-socket = :8000\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["bin/start:5", "etc/uwsgi.ini:3"], "uwsgi", 3)]
    assert not [n for n in result.notes if n.kind == "config-not-found"]


def test_folder_above_the_scripts_own_is_the_repository_root(tmp_path: Path) -> None:
    """`ROOT="$(dirname "$0")/.."` in bin/run.sh: `$ROOT/conf/gunicorn.py` is the repository's
    conf/gunicorn.py."""
    write(
        tmp_path,
        {
            "bin/run.sh": '#!/bin/sh\nROOT="$(dirname "$0")/.."\n'
            'exec gunicorn -c "$ROOT/conf/gunicorn.py" app:app\n',
            "conf/gunicorn.py": 'workers = 5\nbind = "0.0.0.0:8000"\n',
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["bin/run.sh:3", "conf/gunicorn.py:1"], "gunicorn", 5)]


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ('$(realpath "/srv/app/bin/..")', "/srv/app"),
        ("$(realpath -m /srv/app/tmp)", "/srv/app/tmp"),
        ("$(readlink -f ./bin/..)", "."),
        ("$(realpath $UNKNOWN/..)", "$(realpath $UNKNOWN/..)"),
    ],
)
def test_realpath_of_a_path_written_out_is_that_path(value: str, path: str) -> None:
    """`$(realpath PATH)` of a path with no variable left is PATH with `..` resolved; one
    still holding a variable stays as written."""
    assert real_path(value) == path
