"""Issue 44 (corpus8a cause J): `pserve FILE` serves the server FILE's `[server:main]` names
(gunicorn, waitress: servers check reads). When FILE is not among the files read, check says
the config is not found here, not that the image starts no server check reads."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

INI = (
    "[app:main]\nuse = egg:shop\n\n"
    "[server:main]\nuse = egg:gunicorn#main\nhost = 0.0.0.0\nport = 4001\nworkers = 4\n"
)


def test_pserve_with_its_ini_only_as_an_example_says_config_not_found(tmp_path: Path) -> None:
    """The image runs `pserve "${APP_CONFIG_DIR}/shop.ini"` and the tree holds only
    config/shop.ini.example (seen in crim-ca/weaver): one not-followed note at the CMD line
    saying the config is not found here and naming the example copy; no starts-no-server note
    for the Dockerfile."""
    dockerfile = (
        "FROM python:3.12\nENV APP_CONFIG_DIR=/opt/shop/config\n"
        'CMD pserve "${APP_CONFIG_DIR}/shop.ini"\n'
    )
    files = {"docker/manager.dockerfile": dockerfile, "config/shop.ini.example": INI}
    result = check_folder(write(tmp_path, files))
    notes = [n for n in result.notes if n.at.file.name == "manager.dockerfile"]
    (said,) = [n for n in notes if n.kind == "not-followed"]
    assert said.at.line == 3
    assert "config not found here" in said.message
    assert "config/shop.ini.example here is an example copy" in said.message
    assert not [n for n in notes if n.kind == "starts-no-server"]
