"""A Dockerfile `COPY /path dest` names `path` in the build context: Docker resolves a COPY
source against the context whatever its leading `/`, so the image's CMD reaches the script
the repository holds there, never an outside-the-tree file. Seen in rashadphz/farfalle
(`COPY /docker-scripts/entrypoint.sh ...`). Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write


def test_copy_with_a_leading_slash_is_the_build_context_file(tmp_path: Path) -> None:
    """`COPY /scripts/start.sh /start.sh` + `CMD ["/start.sh"]`: the launch runs Dockerfile
    -> scripts/start.sh -> gunicorn, and no note calls the source outside the tree."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nWORKDIR /app\n"
                'COPY /scripts/start.sh /start.sh\nCMD ["/start.sh"]\n'
            ),
            "scripts/start.sh": "#!/bin/sh\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "scripts/start.sh:2"], "gunicorn", 3)]
    assert not [n for n in result.notes if n.kind == "outside-tree"]
