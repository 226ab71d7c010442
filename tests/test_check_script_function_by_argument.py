"""A script that runs its arguments as a command (a line `$@`) runs the function its first
argument names (`helper run` with `run() { gunicorn ...; }`), also when another line calls
that function in a branch the arguments do not take. Seen in pictuga/morss, whose systemd
unit runs `/usr/local/bin/morss-helper run` (the helper beside the unit). Each repository is
written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_HELPER = """\
#!/bin/sh
run() {
\tgunicorn --bind 0.0.0.0:8000 --workers 3 app
}
if [ -z "$1" ]; then
\trun
elif [ "$1" = "sh" ] || command -v "$1" ; then
\t$@
else
\tpython -m app $@
fi
"""


def test_unit_running_a_helper_function_by_its_argument_starts_its_server(
    tmp_path: Path,
) -> None:
    """`ExecStart=/usr/local/bin/app-helper run`: `run` is not empty, so the `$@` line runs
    the function `run`, whose gunicorn (3 workers) the unit starts."""
    root = write(
        tmp_path,
        {
            "app.service": "[Service]\nExecStart=/usr/local/bin/app-helper run\n",
            "app-helper": _HELPER,
        },
    )
    assert (["app.service:2", "app-helper:3"], "gunicorn", 3) in chains(check_folder(root), root)
