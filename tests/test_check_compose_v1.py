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
