"""uWSGI's `%d` (the folder of the ini) is the folder the file is deployed in: read in place
with no launch saying where (a COPY, a unit), an address written from it is not known, never
this checkout's path on the machine running check."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write


def test_socket_from_percent_d_is_unknown_when_the_file_is_read_in_place(
    tmp_path: Path,
) -> None:
    """`socket = %d../app.sock` in a deploy/uwsgi.ini no launch here places (seen in
    Coleridge-Initiative-org/dfadmin) is left out with an `unresolved-variable` note at its
    line; no socket names the checkout's folder."""
    write(
        tmp_path,
        {"deploy/uwsgi.ini": "[uwsgi]\nsocket = %d../app.sock\nmaster = true\nprocesses = 4\n"},
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == []
    assert [(n.kind, n.at.line) for n in result.notes if n.at.file.name == "uwsgi.ini"] == [
        ("unresolved-variable", 2)
    ]
