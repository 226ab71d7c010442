"""A systemd service unit a host installer of the repository writes with a here-document
(`cat << EOF > /etc/systemd/system/app.service`) is a launch read at its lines of the script,
like a unit file of the tree: its server is checked, its config path said unresolved when the
script's variables are not known, never "no app server found". Seen in cryptosharks131/lndg's
nginx.sh. Each repository is written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, fronts, write

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


def test_a_unit_naming_its_config_with_braces_reads_the_config_the_script_writes(
    tmp_path: Path,
) -> None:
    """The unit runs `--ini ${APP_DIR}/app.ini` (braced): the same path as `$APP_DIR/app.ini`,
    so its uwsgi reads the ini the same script writes (5 processes), as the unbraced form does;
    it was said unresolved and read with uWSGI's defaults."""
    text = _UWSGI_INSTALL.replace("--ini $APP_DIR/app.ini", "--ini ${APP_DIR}/app.ini")
    root = write(tmp_path / "repo", {"install.sh": text})
    result = check_folder(root)
    assert not result.errors
    assert [(chain[0], workers) for chain, _, workers in chains(result, root)] == [
        ("install.sh:7", 5)
    ]


_SITE = """cat << EOF > /etc/nginx/sites-available/app
upstream django {
    server unix://$APP_DIR/app.sock;
}
server {
    listen 8889;
    location / {
        uwsgi_pass django;
    }
}
EOF
"""


def test_the_site_an_installer_writes_reaches_the_socket_its_ini_names_below_the_same_folder(
    tmp_path: Path,
) -> None:
    """The installer writes the ini (`socket = $APP_DIR/app.sock`) and an nginx site passing to
    `unix://$APP_DIR/app.sock`, APP_DIR set by nothing here: the same folder's variable in both,
    written by one script, so nginx's `//` before it names the same socket and the site is the
    uwsgi's front (seen in cryptosharks131/lndg's nginx.sh)."""
    root = write(tmp_path / "repo", {"install.sh": _UWSGI_INSTALL + _SITE})
    assert list(fronts(root).values()) == [["install.sh:21"]]
