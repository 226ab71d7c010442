"""A script's own option loop (`while ...; case $1 in --port) PORT="$2"; shift 2;; esac; done`)
assigns the caller's arguments, unknown when nothing gives them: the variable is unknown
(said unresolved), never the text `$2` handed to the server's parser as a value, which made
uvicorn "refuse its command line" (an error, exit 2). Seen in IBM/mcp-context-forge's run.sh."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

_RUN = """#!/bin/bash
PORT=${PORT:-4444}
while [[ $# -gt 0 ]]; do
    case $1 in
        -p|--port)
            PORT="$2"
            shift 2
            ;;
        *)
            shift
            ;;
    esac
done
exec uvicorn app:app --host 0.0.0.0 --port "$PORT"
"""


def test_a_positional_parameter_in_an_option_loop_is_unknown_not_a_value(tmp_path: Path) -> None:
    """run.sh sets PORT from `"$2"` in its option loop: no error, uvicorn is read, and its
    `--port $PORT` is said unresolved."""
    root = write(tmp_path / "repo", {"run.sh": _RUN})
    result = check_folder(root)
    assert not result.errors
    (app,) = result.apps
    assert app.kind == "uvicorn"
    unresolved = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert [n.at.line for n in unresolved] == [14]
    assert "$PORT" in unresolved[0].message
