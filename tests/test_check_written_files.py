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
