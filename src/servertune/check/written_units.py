"""systemd units a shell script of the repository writes with a here-document.

A host installer often writes the unit that starts the app server, then enables it (lndg's
`nginx.sh`: `cat << EOF > /etc/systemd/system/uwsgi.service ... ExecStart=$LNDG_DIR/.venv/bin/uwsgi
--ini $LNDG_DIR/lndg.ini ... EOF`, then `systemctl start uwsgi`). No file of the tree holds that
unit, so its server was never a launch; the here-document's text (`written_files.scripts_written`:
the script's own plain assignments expanded, any other `$NAME` as written, said unresolved) is
read as a systemd unit at its lines of the script, a launch like a unit file of the tree. Only a
`.service` file where systemd reads units (/etc/systemd/system/, /lib/systemd/system/,
/usr/lib/systemd/system/) is taken; a text that is no unit, or starts no server, is none. The
script is read, never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from servertune.check.model import AppServer, CheckInputError

__all__ = ["unit_path", "written_units"]

#: The folders systemd loads system units from (systemd.unit(5), "System Unit Search Path").
_FOLDERS = ("/etc/systemd/system/", "/lib/systemd/system/", "/usr/lib/systemd/system/")


def unit_path(path: str) -> bool:
    """`path` is a service unit where systemd loads system units."""
    return path.startswith(_FOLDERS) and path.endswith(".service")


def written_units(paths: Sequence[Path]) -> tuple[AppServer, ...]:
    """The app servers started by the service units the scripts among `paths` write with
    here-documents, each unit read at its lines of the script that writes it."""
    from servertune.check.systemd import read_systemd
    from servertune.check.written_files import written_where

    apps: list[AppServer] = []
    for file in written_where(paths, unit_path):
        try:
            apps.append(read_systemd(file.file, file.text))
        except CheckInputError:
            continue  # no unit, or one that starts no server check reads
    return tuple(apps)
