"""A file a setup script of the repository writes with a here-document (`cat > PATH <<EOF`,
`tee PATH <<EOF`) is that text at PATH for a launch that runs PATH and finds it nowhere else.
Each fixture is a small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

_SETUP = """#!/bin/bash
source setup/functions.sh
inst_dir=/usr/local/lib/shop
mkdir -p $inst_dir
venv=$inst_dir/env

# the service's start script
{redirection}
#!/bin/bash
export LANG=en_US.UTF-8
source $venv/bin/activate
exec $venv/bin/gunicorn -b 127.0.0.1:10222 -w 2 --timeout 60 wsgi:app
EOF
chmod +x $inst_dir/start
"""

_UNIT = """[Unit]
Description=the shop's management daemon

[Service]
ExecStart=/usr/local/lib/shop/start

[Install]
WantedBy=multi-user.target
"""


@pytest.mark.parametrize(
    ("redirection", "linked"),
    [
        ("cat > $inst_dir/start <<EOF;", True),
        ("cat <<EOF > ${inst_dir}/start", True),
        ("sudo tee /usr/local/lib/shop/start <<'EOF' >/dev/null", True),
        ("cat >> $inst_dir/start <<EOF", False),
        ("cat > $OTHER/start <<EOF", False),
    ],
)
def test_a_start_script_a_setup_script_writes_is_what_the_unit_runs(
    tmp_path: Path, redirection: str, linked: bool
) -> None:
    """`cat > $inst_dir/start <<EOF ... exec gunicorn ... EOF` in setup/management.sh and a
    unit's `ExecStart=/usr/local/lib/mailinabox/start` (seen in mail-in-a-box): the unit runs
    the written text, its gunicorn read at its line in the setup script (with `$venv`
    expanded, or kept for a quoted delimiter: the program is still gunicorn). An append
    (`>>`) or a path no file sets writes no file known here."""
    root = write(
        tmp_path,
        {
            "setup/management.sh": _SETUP.format(redirection=redirection),
            "conf/shop.service": _UNIT,
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0] == "conf/shop.service:5"]
    assert found == (
        [(["conf/shop.service:5", "setup/management.sh:12"], "gunicorn", 2)] if linked else []
    )


_ENTRYPOINT = """#!/bin/sh
PORT=80
cat > /etc/nginx/conf.d/app.conf <<EOF
server {
    listen $PORT;
    location / {
        include uwsgi_params;
        uwsgi_pass unix:///tmp/app.sock;
        uwsgi_read_timeout 30s;
    }
}
EOF
cat > /etc/nginx/.htpasswd <<EOF
admin:secret
EOF
exec supervisord -n
"""


def test_an_nginx_config_an_entrypoint_writes_is_the_servers_front(tmp_path: Path) -> None:
    """An entrypoint writing `/etc/nginx/conf.d/app.conf` with `cat > PATH <<EOF` (as seen
    with redimp/otterwiki's and getsentry/firetower's generated nginx configs) holds a front:
    its text, read as nginx's config at its lines of the script, passes to the uWSGI socket
    an ini of the repository binds, so the two are joined and the read timeout under
    harakiri is a finding at the script's line. A file written elsewhere under /etc/nginx/
    that is not a config (an htpasswd) is no front."""
    root = write(
        tmp_path,
        {
            "docker/entrypoint.sh": _ENTRYPOINT,
            "docker/uwsgi.ini": "[uwsgi]\nmodule = app:app\nsocket = /tmp/app.sock\n"
            "processes = 2\nthreads = 2\nharakiri = 60\n",
        },
    )
    result = check_folder(root)
    assert [
        (link.nginx.file.relative_to(root).as_posix(), link.app.kind) for link in result.links
    ] == [("docker/entrypoint.sh", "uwsgi")]
    assert [
        (f.rule, f.at.file.relative_to(root).as_posix(), f.at.line)
        for f in result.findings
        if f.rule == "app-timeout-over-read-timeout"
    ] == [("app-timeout-over-read-timeout", "docker/entrypoint.sh", 9)]


_ECHOING = """#!/bin/sh
PORT=80
echo "server {
    listen $PORT;
" > /etc/nginx/sites-enabled/default
if [ -n "$REAL_IP_FROM" ]; then
echo "    set_real_ip_from $REAL_IP_FROM;" >> /etc/nginx/sites-enabled/default
fi
echo "    location / {
        try_files \\$uri @app;
    }
    location @app {
        include uwsgi_params;
        uwsgi_pass unix:///tmp/app.sock;
        uwsgi_read_timeout 30s;
    }" >> /etc/nginx/sites-enabled/default
echo "}" >> /etc/nginx/sites-enabled/default
echo "ignored" >> /etc/nginx/conf.d/other.conf
exec supervisord -n
"""


def test_an_nginx_config_an_entrypoint_echoes_piece_by_piece_is_a_front(tmp_path: Path) -> None:
    """`echo "server { ..." > /etc/nginx/sites-enabled/default` then `echo "..." >> ` the
    same path (as redimp/otterwiki's entrypoint.sh builds its site) writes one config, each
    piece at its own lines of the script (`\\$uri` written as `$uri`): it passes to the uWSGI
    socket the ini binds, and its read timeout is a finding at line 15. An append to a file
    the script never wrote (`conf.d/other.conf`) is no config known here."""
    root = write(
        tmp_path,
        {
            "docker/entrypoint.sh": _ECHOING,
            "docker/uwsgi.ini": "[uwsgi]\nmodule = app:app\nsocket = /tmp/app.sock\n"
            "processes = 2\nthreads = 2\nharakiri = 60\n",
        },
    )
    result = check_folder(root)
    assert [
        (link.nginx.file.relative_to(root).as_posix(), link.app.kind) for link in result.links
    ] == [("docker/entrypoint.sh", "uwsgi")]
    assert [
        (f.rule, f.at.line) for f in result.findings if f.rule == "app-timeout-over-read-timeout"
    ] == [("app-timeout-over-read-timeout", 15)]
