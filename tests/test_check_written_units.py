"""A systemd service unit a host installer of the repository writes with a here-document
(`cat << EOF > /etc/systemd/system/app.service`) is a launch read at its lines of the script,
like a unit file of the tree: its server is checked, its config path said unresolved when the
script's variables are not known, never "no app server found". Seen in cryptosharks131/lndg's
nginx.sh. Each repository is written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_INSTALL = """#!/bin/bash
INSTALL_USER=${SUDO_USER:-${USER}}
APP_DIR="/home/$INSTALL_USER/app"

function setup_units() {
    cat << EOF > /etc/systemd/system/app.service
[Unit]
Description=app

[Service]
ExecStart=$APP_DIR/.venv/bin/gunicorn -w 3 -b 127.0.0.1:8100 app.wsgi
User=$INSTALL_USER
Restart=on-failure

[Install]
WantedBy=multi-user.target
EOF
    cat << EOF > /etc/app/notes.service.txt
[Service]
ExecStart=/usr/bin/gunicorn -w 9 other:app
EOF
}

setup_units
systemctl enable app
systemctl start app
"""


def test_a_unit_an_installer_writes_is_a_launch_at_the_scripts_lines(tmp_path: Path) -> None:
    """install.sh writes /etc/systemd/system/app.service: its gunicorn (3 workers) is a launch
    whose chain starts at the ExecStart line of the script (11); a text written elsewhere
    (not where systemd loads units) is no launch."""
    root = write(tmp_path / "repo", {"install.sh": _INSTALL})
    result = check_folder(root)
    assert not result.errors
    assert chains(result, root) == [(["install.sh:11"], "gunicorn", 3)]


_UWSGI_INSTALL = """#!/bin/bash
APP_DIR="$HOME_DIR/app"
cat << EOF > ${APP_DIR}/app.ini
[uwsgi]
module = app.wsgi
master = true
processes = 5
socket = $APP_DIR/app.sock
EOF
cat << EOF > /etc/systemd/system/app.service
[Service]
ExecStart=$APP_DIR/.venv/bin/uwsgi --ini $APP_DIR/app.ini
EOF
"""


def test_a_config_the_same_script_writes_below_an_unknown_folder_is_the_units(
    tmp_path: Path,
) -> None:
    """The installer writes `${APP_DIR}/app.ini` (APP_DIR from a variable nothing sets) and a
    unit running `--ini $APP_DIR/app.ini`: the same script's folder, so the unit's uwsgi reads
    that text (5 processes, at the script's lines). Another script's `--ini $APP_DIR/app.ini`
    is not given it: its `$APP_DIR` may be another folder."""
    root = write(
        tmp_path / "repo",
        {
            "install.sh": _UWSGI_INSTALL,
            "other.sh": "#!/bin/bash\nexec uwsgi --ini $APP_DIR/app.ini\n",
        },
    )
    result = check_folder(root)
    assert not result.errors
    found = sorted((chain[0], workers) for chain, _, workers in chains(result, root))
    assert found == [("install.sh:7", 5), ("other.sh:2", 1)]
