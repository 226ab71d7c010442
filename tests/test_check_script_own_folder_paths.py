"""Paths a script builds from its own location, read from the repository's checkout: the
folder of `$(cd $(dirname $0) || exit 1; pwd)` is the script's, `$(realpath "${DIR}/..")` the
folder above it, so the config the server is given there is the repository's file (seen in
Slicer/slicer_download's bin/start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.script_folder import computed_folder, real_path
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


def test_root_two_folders_above_a_bash_source_folder_finds_the_config(tmp_path: Path) -> None:
    """`BASE_DIR="$( cd "$( dirname "${BASH_SOURCE[0]}" )" && pwd )"` then `ROOT_DIR=$(dirname
    "$(dirname "$BASE_DIR")")` in deploy/scripts/run_web.sh is the repository's root, so
    `uwsgi --ini $ROOT_DIR/deploy/configs/uwsgi.ini` is joined to that ini (seen in
    the-deep/server), never "config not found" nor the ini as a launch alone."""
    write(
        tmp_path,
        {
            "deploy/scripts/run_web.sh": "#!/bin/bash\n"
            'BASE_DIR="$( cd "$( dirname "${BASH_SOURCE[0]}" )" && pwd )"\n'
            'ROOT_DIR=$(dirname "$(dirname "$BASE_DIR")")\n'
            "uwsgi --ini $ROOT_DIR/deploy/configs/uwsgi.ini\n",
            "deploy/configs/uwsgi.ini": "[uwsgi]\nmodule = app\nprocesses = 4\n"
            "http-socket = :8000\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [
        (["deploy/scripts/run_web.sh:4", "deploy/configs/uwsgi.ini:3"], "uwsgi", 4)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]


@pytest.mark.parametrize(
    ("value", "known", "folder"),
    [
        ('$(dirname "$(dirname "$BASE")")', {"BASE": "/code/deploy/scripts"}, "/code"),
        ('$(dirname "$(dirname "$BASE")")', {"BASE": "."}, "../.."),
        ('$(dirname "$(realpath "$BASE/x")")/conf', {"BASE": "/srv/a/../b"}, "/srv/b/conf"),
        ("$(dirname $UNSET)", {}, None),
        ("$(dirname $(pwd))", {}, None),
        ("plain", {}, None),
    ],
)
def test_dirname_of_a_known_path_is_its_folder(
    value: str, known: dict[str, str], folder: str | None
) -> None:
    """`$(dirname WORD)` (nested, through `realpath` too) of a path known is its folder; the
    folder above the script's own folder read from its checkout (`.`) is `..`; a word not
    known, or a value with no such substitution, is None."""

    def expand(word: str) -> str | None:
        name = word.strip("${}").split("/")[0]
        return word.replace("$" + name, known[name]) if name in known else None

    assert computed_folder(value, expand) == folder
