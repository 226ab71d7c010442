"""A compose file of the legacy v1 format (services at the top level, no `services:` key),
which Compose v2 no longer reads: in a folder walk one `not-read` coverage note saying so, the
rest of the repository checked as before; given by name, a one-line error saying why (seen in
ministryofjustice/money-to-prisoners-api's local-development docker-compose.yml)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.machine import Machine
from tests.folder_support import check_folder, write

V1 = """\
# local development only
db:
  image: postgres:15
  environment:
    POSTGRES_USER: postgres

django:
  build: .
  command: ./venv/bin/python manage.py runserver 0.0.0.0:8000
  ports:
    - "8000:8000"
"""

V2 = "services:\n  web:\n    build: .\n    command: gunicorn -b 0.0.0.0:8000 app:app\n"


def test_a_v1_compose_file_in_a_walk_is_one_not_read_note(tmp_path: Path) -> None:
    """The v1 file is named once in a `not-read` note giving the reason, no error; the v2
    compose file beside it is read and its launch found."""
    write(tmp_path, {"local/docker-compose.yml": V1, "docker-compose.yml": V2})
    result = check_folder(tmp_path)
    assert not result.errors, result.errors
    (note,) = [n for n in result.notes if n.kind == "not-read"]
    assert "compose file format v1 (no services: key)" in note.message
    assert "local/docker-compose.yml" in note.message
    assert [a.kind for a in result.apps] == ["gunicorn"]


def test_a_v1_compose_file_given_by_name_is_an_error_naming_the_format(tmp_path: Path) -> None:
    """Given explicitly, the file is an input error whose line says it is the v1 format."""
    write(tmp_path, {"docker-compose.yml": V1})
    result = check_files([tmp_path / "docker-compose.yml"], machine=Machine(cores=2))
    (error,) = result.errors
    assert "compose file format v1" in str(error)


def test_only_service_blocks_make_a_v1_file() -> None:
    """A compose file with `services:`, or of compose's own keys only (volumes, networks, an
    `x-` extension holding an `image:`), is not the v1 format."""
    from servertune.check.compose_v1 import legacy_v1

    assert legacy_v1(V1)
    assert not legacy_v1(V2)
    assert not legacy_v1("volumes:\n  data:\nnetworks:\n  front:\n")
    assert not legacy_v1("x-base:\n  image: app\nvolumes:\n  data:\n")


#: A process-compose-like file (top-level `processes:`, deeply indented probe blocks, no
#: `image:` or `build:` anywhere): the shape that hung a folder walk (evroon/bracket).
DEEP_BLOCK = (
    "version: '0.5'\nprocesses:\n"
    + (
        "  web:\n    command: run --port 3000\n    readiness_probe:\n      http_get:\n"
        "        host: 127.0.0.1\n        scheme: http\n        path: /\n        port: 3000\n"
    )
    * 3
)


def _legacy_v1_in_a_child(text: str, seconds: float) -> str:
    """legacy_v1(text) run in a child Python killed after `seconds` (a regex cannot be
    interrupted from a thread of the same process), its answer printed."""
    import os
    import subprocess
    import sys

    code = "import sys; from servertune.check.compose_v1 import legacy_v1; "
    code += "print(legacy_v1(sys.stdin.read()))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=text,
        capture_output=True,
        text=True,
        timeout=seconds,
        env=env,
        check=True,
    )
    return done.stdout.strip()


def test_deeply_indented_blocks_without_a_service_are_read_in_linear_time() -> None:
    """Telling a v1 file takes time linear in the file: a top-level block of deeply indented
    lines holding no `image:` or `build:` is answered at once, not by trying every split of
    every line's indent (which took minutes on 15 lines), and is not the v1 format."""
    assert _legacy_v1_in_a_child(DEEP_BLOCK, seconds=10) == "False"


def test_a_service_block_after_deeply_indented_lines_is_still_v1() -> None:
    """A top-level block whose `image:` follows deeply indented and blank lines is a v1
    service; a block without one after the deep blocks still is not."""
    text = "web:\n  environment:\n    A: '1'\n\n      \n  image: app\n"
    assert _legacy_v1_in_a_child(text, seconds=10) == "True"
    assert _legacy_v1_in_a_child(DEEP_BLOCK + "\nweb:\n  command: x\n", seconds=10) == "False"
