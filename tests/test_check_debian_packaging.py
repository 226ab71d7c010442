"""Debian packaging (`debian/`): debhelper installs `debian/<pkg>.init` at
`/etc/init.d/<pkg>` and each `debian/install` line's files in its last word's folder, so a
unit's `ExecStart=/etc/init.d/<pkg> start` runs the init script here, and the init script's
`start-stop-daemon ... --exec /usr/bin/uwsgi -- --ini /etc/<pkg>/uwsgi.ini` reads the
repository's ini. (Seen in learningequality/kolibri-server.)"""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=2, cores_source="the test's machine", somaxconn=4096)

UNIT = """\
[Unit]
Description=shop

[Service]
Type=forking
ExecStart=/etc/init.d/shop start
ExecStop=/etc/init.d/shop stop

[Install]
WantedBy=multi-user.target
"""

INIT = """\
#!/bin/sh
DAEMON=/usr/bin/uwsgi
ARGS="--ini /etc/shop/uwsgi.ini --daemonize=$SHOP_HOME/uwsgi.log"
HASHI_ARGS="--ini /etc/shop/hashi.ini --daemonize=$SHOP_HOME/hashi.log"
do_start() {
  start-stop-daemon --start --quiet --exec $DAEMON --test -- $ARGS > /dev/null || return 1
  start-stop-daemon --start --quiet --exec $DAEMON -- $ARGS || return 2
  start-stop-daemon --start --quiet --startas $DAEMON -- $HASHI_ARGS || return 2
}
case "$1" in
  start) do_start ;;
  stop) start-stop-daemon --stop --quiet --retry=TERM/30/KILL/5 --name uwsgi ;;
esac
"""


def test_a_units_init_script_from_debian_packaging_starts_each_daemonized_uwsgi(
    tmp_path: Path,
) -> None:
    """`ExecStart=/etc/init.d/shop start` runs `debian/shop.init`, and each ini the init
    script passes by its installed path (`debian/install`: `uwsgi.ini etc/shop/`) is the
    repository's: both `start-stop-daemon` lines start a uWSGI, since `--daemonize` (to a
    log path known only when it runs) returns to the script; the `--test` probe starts none."""
    write(
        tmp_path,
        {
            "debian/shop.service": UNIT,
            "debian/shop.init": INIT,
            "debian/install": "uwsgi.ini etc/shop/\nhashi.ini etc/shop/\n",
            "uwsgi.ini": "[uwsgi]\nsocket = /tmp/shop.sock\nprocesses = 4\n",
            "hashi.ini": "[uwsgi]\nsocket = /tmp/hashi.sock\nprocesses = 2\n",
        },
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    started = sorted(
        (a.config_file.file.name, a.workers.value, a.launched_by[0].file.name)
        for a in result.apps
        if a.config_file is not None
    )
    assert started == [("hashi.ini", 2, "shop.service"), ("uwsgi.ini", 4, "shop.service")]
    assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]
