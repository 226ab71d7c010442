"""A compose file made of `include:` (Compose 2.20+) and compose's own top-level keys is a valid
compose file: the files it includes are its project's services, read as files of their own;
it starts none itself and is never an error (the Compose file reference, "Include":
https://docs.docker.com/reference/compose-file/include/)."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

APP = (
    "services:\n  web:\n    image: python:3.12\n"
    "    command: gunicorn -w 4 -b 0.0.0.0:8000 app:app\n"
)


def test_name_and_include_only_is_not_an_error(tmp_path: Path) -> None:
    """`name:` plus a short-form `include:` list is no error: the file is noted as including
    its files, and the included service is a launch (seen in Syslifters/sysreptor's
    deploy/docker-compose.yml, which was "no services: mapping" and exit 2)."""
    write(
        tmp_path,
        {
            "deploy/docker-compose.yml": "name: app\n\ninclude:\n  - app/docker-compose.yml\n",
            "deploy/app/docker-compose.yml": APP,
        },
    )
    result = check_folder(tmp_path)
    assert result.errors == ()
    assert chains(result, tmp_path) == [(["deploy/app/docker-compose.yml:2"], "gunicorn", 4)]
    said = [n.message for n in result.notes if n.at.file.name == "docker-compose.yml"]
    assert any("includes app/docker-compose.yml" in m for m in said), said


def test_long_form_include_with_other_top_level_keys_is_claimed(tmp_path: Path) -> None:
    """The long form (`path:` one file or a list, `project_directory:`, `env_file:`) beside
    `volumes:`, `networks:` and an `x-` extension, in a YAML file not named for compose, is
    taken for a compose file that includes each path, and is no error."""
    write(
        tmp_path,
        {
            "deploy/stack.yml": (
                "name: app\ninclude:\n  - path:\n      - app/docker-compose.yml\n"
                "      - app/extra.yml\n    project_directory: ..\n    env_file: ../.env\n"
                "volumes:\n  data: {}\nnetworks:\n  front: {}\nx-common: &c\n  a: 1\n"
            ),
            "deploy/app/docker-compose.yml": APP,
        },
    )
    result = check_folder(tmp_path)
    assert result.errors == ()
    said = [n.message for n in result.notes if n.at.file.name == "stack.yml"]
    assert any("includes app/docker-compose.yml, app/extra.yml" in m for m in said), said
