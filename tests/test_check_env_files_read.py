"""Issue 44 (corpus8a cause M): an env file a compose service loads (`env_file:`) is read for
its variables, so the walk's account of what it read lists it, in JSON and in text, though no
reader claims the file by its name."""

from __future__ import annotations

import json
from pathlib import Path

from servertune.check.output import format_json, format_text
from tests.folder_support import check_folder, write


def test_an_env_file_compose_loads_is_in_the_walks_read_list(tmp_path: Path) -> None:
    """compose.yml's `env_file: api/environments/local` (a name no reader claims), loaded by a
    service that runs Django's development server, so on no server's chain (seen in
    AlexsLemonade/refinebio), is in `walks[].read` beside compose.yml, once, and the text's
    "files read" counts it."""
    service = (
        "services:\n  api:\n    image: python:3.12\n"
        "    env_file: api/environments/local\n"
        "    command: python manage.py runserver 0.0.0.0:8000\n"
    )
    files = {"compose.yml": service, "api/environments/local": "DEBUG=0\n"}
    result = check_folder(write(tmp_path, files))
    (walk,) = json.loads(format_json(result))["walks"]
    read = [Path(p).resolve().relative_to(tmp_path.resolve()).as_posix() for p in walk["read"]]
    assert sorted(read) == ["api/environments/local", "compose.yml"]
    assert "2 files read" in format_text(result)
