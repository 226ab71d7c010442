"""uWSGI's emperor (`uwsgi --emperor DIR`, `emperor = DIR`) runs each vassal ini in DIR as a
uWSGI of its own: each vassal the repository holds where DIR points (the folder whose path ends
with DIR's longest tail, one per environment tree) is a launch started by the emperor's unit,
and the emperor itself is no server to size (no one-process-one-thread finding for it). Seen in
MIT-LCP/physionet-build. Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

UNIT = """\
[Unit]
Description=uWSGI emperor

[Service]
ExecStart=/usr/bin/uwsgi --emperor EMPEROR
KillSignal=SIGQUIT

[Install]
WantedBy=multi-user.target
"""

VASSAL = """\
[uwsgi]
module = app.wsgi
master = true
processes = 10
socket = /run/app.sock
"""


def test_each_vassal_of_each_environment_is_a_launch_of_the_emperor_unit(tmp_path: Path) -> None:
    """`--emperor /etc/uwsgi/vassals` with `deploy/production/etc/uwsgi/vassals/app.ini` and
    the staging one: two launches, each unit -> vassal ini -> uwsgi 10 workers; the emperor
    is not a 1 x 1 uWSGI of its own and gets no one-process-one-thread finding."""
    root = write(
        tmp_path,
        {
            "deploy/common/etc/systemd/system/emperor.service": UNIT.replace(
                "EMPEROR", "/etc/uwsgi/vassals"
            ),
            "deploy/production/etc/uwsgi/vassals/app.ini": VASSAL,
            "deploy/staging/etc/uwsgi/vassals/app.ini": VASSAL,
            "docs/vassals/notes.ini": VASSAL,  # a folder ending `vassals` only: a shorter tail
        },
    )
    result = check_folder(root)
    unit = "deploy/common/etc/systemd/system/emperor.service:5"
    assert sorted(chains(result, root)) == [
        ([unit, "deploy/production/etc/uwsgi/vassals/app.ini:1"], "uwsgi", 10),
        ([unit, "deploy/staging/etc/uwsgi/vassals/app.ini:1"], "uwsgi", 10),
        (["docs/vassals/notes.ini:1"], "uwsgi", 10),
    ]
    assert not [f for f in result.findings if f.rule == "one-process-one-thread"]


def test_an_emperor_glob_takes_only_the_files_it_matches(tmp_path: Path) -> None:
    """`--emperor '/etc/uwsgi/apps/*.ini'` takes the ini in a folder ending `etc/uwsgi/apps`;
    an emperor whose vassal folder no file here is in is a note, not a 1 x 1 server."""
    root = write(
        tmp_path,
        {
            "emperor.service": UNIT.replace("EMPEROR", "'/etc/uwsgi/apps/*.ini'"),
            "etc/uwsgi/apps/web.ini": VASSAL,
            "lone/emperor.service": UNIT.replace("EMPEROR", "/etc/uwsgi/elsewhere"),
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["emperor.service:5", "etc/uwsgi/apps/web.ini:1"], "uwsgi", 10)
    ]
    assert [n.at.line for n in result.notes if "uWSGI emperor" in n.message] == [5]


def test_emperor_set_in_an_ini_the_unit_names(tmp_path: Path) -> None:
    """`uwsgi --ini /etc/uwsgi/emperor.ini` whose ini says `emperor = /etc/uwsgi/vassals`:
    the same emperor, its vassal the launch, the emperor's ini no server of its own."""
    unit = UNIT.replace("--emperor EMPEROR", "--ini /etc/uwsgi/emperor.ini")
    root = write(
        tmp_path,
        {
            "etc/systemd/system/emperor.service": unit,
            "etc/uwsgi/emperor.ini": "[uwsgi]\nemperor = /etc/uwsgi/vassals\n",
            "etc/uwsgi/vassals/app.ini": VASSAL,
        },
    )
    assert chains(check_folder(root), root) == [
        (["etc/systemd/system/emperor.service:5", "etc/uwsgi/vassals/app.ini:1"], "uwsgi", 10)
    ]
