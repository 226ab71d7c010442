"""A systemd unit's server config named by a deployed path that nothing here installs
(`uwsgi --ini /srv/site/uwsgi-site.ini`, the repository keeping it as doc/uwsgi-site.ini, copied
by hand) is the repository's only file of that name, said in a `matched-by-name` note; a name
two files have, or an image's command, is never matched so (a false link is worse than a
missing one). Seen in apluslms/a-plus. Each repository is written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_UNIT = (
    "[Unit]\nDescription=site\n\n[Service]\nUser=site\nWorkingDirectory=/srv/site/app\n"
    "ExecStart=/srv/site/venv/bin/uwsgi --ini /srv/site/uwsgi-site.ini\n\n"
    "[Install]\nWantedBy=multi-user.target\n"
)
_INI = (
    "[uwsgi]\nsocket = /run/site/uwsgi.socket\nmaster = true\nprocesses = 6\nmodule = site.wsgi\n"
)


def test_a_units_config_is_the_repositorys_only_file_of_its_name(tmp_path: Path) -> None:
    """deploy/systemd/site.service runs `--ini /srv/site/uwsgi-site.ini`; doc/uwsgi-site.ini is
    the one file of that name: the unit's uwsgi reads it (6 processes), and a note says the
    match is by name, at the ExecStart line; no config-not-found."""
    root = write(
        tmp_path / "repo",
        {"deploy/systemd/site.service": _UNIT, "doc/uwsgi-site.ini": _INI},
    )
    result = check_folder(root)
    assert (
        ["deploy/systemd/site.service:7", "doc/uwsgi-site.ini:2"],
        "uwsgi",
        6,
    ) in chains(result, root)
    (matched,) = [n for n in result.notes if n.kind == "matched-by-name"]
    assert matched.at.line == 7
    assert "/srv/site/uwsgi-site.ini is doc/uwsgi-site.ini" in matched.message
    assert not [n for n in result.notes if n.kind == "config-not-found"]


def test_a_name_two_files_have_is_no_match(tmp_path: Path) -> None:
    """The same unit with two uwsgi-site.ini files in the repository: neither is taken, the
    config is said not found."""
    root = write(
        tmp_path / "repo",
        {
            "deploy/systemd/site.service": _UNIT,
            "doc/uwsgi-site.ini": _INI,
            "examples/uwsgi-site.ini": _INI.replace("6", "2"),
        },
    )
    result = check_folder(root)
    assert not [n for n in result.notes if n.kind == "matched-by-name"]
    assert [n.at.line for n in result.notes if n.kind == "config-not-found"] == [7]


def test_an_images_command_is_never_matched_by_name(tmp_path: Path) -> None:
    """A Dockerfile's `CMD uwsgi --ini /srv/site/uwsgi-site.ini` that copies no such file:
    the image holds no config there, so doc/uwsgi-site.ini is not read as its config."""
    root = write(
        tmp_path / "repo",
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY app /srv/site/app\n"
                'CMD ["uwsgi", "--ini", "/srv/site/uwsgi-site.ini"]\n'
            ),
            "app/x.py": "",
            "doc/uwsgi-site.ini": _INI,
        },
    )
    result = check_folder(root)
    assert not [n for n in result.notes if n.kind == "matched-by-name"]
    assert not [c for c, _, _ in chains(result, root) if c[0] == "Dockerfile:3" and len(c) > 1]
