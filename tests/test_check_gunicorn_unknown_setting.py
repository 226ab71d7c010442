"""A gunicorn config that assigns a setting's command-line flag as a name (`keep_alive` for
`--keep-alive`, `access_logfile` for `--access-logfile`) sets nothing: gunicorn's loader skips
names it does not know. Each is a `gunicorn-unknown-setting` warning at its line naming the
setting meant; a name that is no flag (a helper variable) is not."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write


def test_flag_spelled_names_are_warnings_naming_the_setting(tmp_path: Path) -> None:
    """`keep_alive = 2`, `access_logfile = "-"` and `log_level` each get one warning at their
    line naming `keepalive`, `accesslog` and `loglevel`; `port` (no flag) and the real
    `workers` get none (seen in safe-global/safe-transaction-service's gunicorn.conf.py)."""
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "gunicorn.conf.py": (
                'port = 8000\nbind = f"0.0.0.0:{port}"\nworkers = 3\nkeep_alive = 2\n'
                'access_logfile = "-"\nlog_level = "info"\n'
            ),
        },
    )
    found = [
        (f.at.line, f.message)
        for f in check_folder(tmp_path).findings
        if f.rule == "gunicorn-unknown-setting"
    ]
    assert [line for line, _ in found] == [4, 5, 6]
    for (_, message), meant in zip(found, ("keepalive", "accesslog", "loglevel"), strict=True):
        assert f"`{meant}`" in message
