"""An instruction before a Dockerfile's first FROM (other than ARG) is an error, as Docker
refuses it too, but the rest of the file is still read, so what the image runs is followed."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write


def test_label_before_from_is_an_error_and_the_launch_is_still_followed(tmp_path: Path) -> None:
    """`LABEL maintainer=...` on line 1 (seen in Coleridge-Initiative-org/dfadmin's
    Dockerfile.prod) is one error at its line, and the image's gunicorn CMD is a launch."""
    write(
        tmp_path,
        {
            "Dockerfile": 'LABEL maintainer="me@example.org"\n\nFROM python:3.12\n'
            'WORKDIR /app\nCOPY . /app\nCMD ["gunicorn", "-w", "3", "-b", ":8000", "shop.wsgi"]\n'
        },
    )
    result = check_folder(tmp_path)
    assert [(e.file.name, e.line, e.message.split(": ", 1)[1]) for e in result.errors] == [
        ("Dockerfile", 1, "LABEL before the first FROM")
    ]
    assert chains(result, tmp_path) == [(["Dockerfile:6"], "gunicorn", 3)]
