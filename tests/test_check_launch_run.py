"""Launchers that the image's process supervisor or a wrapper starts: a command held in a
variable behind a privilege-drop wrapper, an `ExecStart=` interpreter running a script beside
its unit, runit service directories, consul-template `exec` blocks, unset variables in a
config path, and deployed absolute paths whose tail is in the repository. Each fixture is a
small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write


def test_privilege_drop_wrapper_before_a_command_variable_runs_its_value(
    tmp_path: Path,
) -> None:
    """`CMD="uvicorn main:app ..."` then `exec gosu "$UID:$GID" $CMD`: gosu runs the words the
    unquoted variable splits into, as `exec $CMD` alone does, so the script starts uvicorn
    (seen in joaovitoriasilva+endurain's docker/start.sh)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY start.sh /start.sh\nCMD [\"/start.sh\"]\n"
            ),
            "start.sh": (
                "#!/bin/sh\nset -e\n"
                'CMD="uvicorn main:app --host 0.0.0.0 --port 8080"\n'
                'if [ "$BEHIND_PROXY" = "true" ]; then\n'
                '    CMD="$CMD --proxy-headers"\nfi\n'
                'exec gosu "$UID:$GID" $CMD\n'
            ),
        },
    )
    result = check_folder(root)
    assert [(c[1], c[2]) for c in chains(result, root)] == [("uvicorn", 1)]
