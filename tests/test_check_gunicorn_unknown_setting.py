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


def test_a_name_only_imported_is_no_setting_written(tmp_path: Path) -> None:
    """`from os import environ as env` binds `env` (also gunicorn's `--env` flag as a name),
    but an import is a module the file uses, not a value written for a setting: no warning;
    `env` assigned later, as a value, is one (seen in CybercentreCanada/assemblyline-ui's
    gunicorn_config.py)."""
    write(
        tmp_path,
        {
            "a/Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "a/gunicorn.conf.py": (
                "import multiprocessing\nfrom os import environ as env\n"
                "workers = int(env.get('WORKERS', multiprocessing.cpu_count()))\n"
                "threads = int(env.get('THREADS', 4))\n"
            ),
            "b/Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "b/gunicorn.conf.py": "from os import environ as env\nworkers = 2\nenv = ['A=1']\n",
        },
    )
    found = [
        (f.at.file.parent.name, f.at.line)
        for f in check_folder(tmp_path).findings
        if f.rule == "gunicorn-unknown-setting"
    ]
    assert found == [("b", 3)]


def test_a_helper_object_named_like_a_flag_is_no_setting_written(tmp_path: Path) -> None:
    """`env = environ.Env()` (django-environ's reader, named as its docs name it) binds `env`,
    also gunicorn's `--env` flag as a name, to a helper object the file reads the environment
    through: a value no setting could take, and `env` is no near spelling of `raw_env`, so no
    warning; `env = ["A=1"]`, a value `raw_env` takes, stays one (seen in
    quipucords/quipucords's deploy/gunicorn_conf.py)."""
    helper = 'import environ\nenv = environ.Env()\nworkers = env.int("WORKERS", 2)\n'
    for name, text, said in (("helper", helper, False), ("list", 'env = ["A=1"]\n', True)):
        root = write(
            tmp_path / name,
            {
                "Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
                "gunicorn.conf.py": text,
            },
        )
        rules = [f.rule for f in check_folder(root).findings]
        assert ("gunicorn-unknown-setting" in rules) is said, name


def test_a_name_the_file_reads_back_is_a_variable_not_a_setting(tmp_path: Path) -> None:
    """`env = os.environ["APP_ENV"]` (`production` where the deployment sets it), then `if env ==
    "production": raw_env = [...]`: the file computes with `env`, so it is a variable of the
    file, not gunicorn's `--env` flag written as a name: no warning (seen in NREL/REopt_API's
    config/gunicorn.conf.py). The same name assigned and never read stays one."""
    read_back = (
        "env = 'production'\nif env == 'production':\n"
        "    raw_env = ['DJANGO_SETTINGS_MODULE=app.production']\n"
    )
    never_read = "env = 'production'\n"
    for name, text, said in (("read", read_back, False), ("unread", never_read, True)):
        root = write(
            tmp_path / name,
            {
                "Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
                "gunicorn.conf.py": text,
            },
        )
        rules = [f.rule for f in check_folder(root).findings]
        assert ("gunicorn-unknown-setting" in rules) is said, name


def test_a_name_set_in_a_module_level_branch_is_found_at_its_line(tmp_path: Path) -> None:
    """`preload = True` in the `else:` of a module-level `if` is a name gunicorn reads all the
    same: the warning points at that line of the config, not at the command that loads the
    file (seen in azavea/pfb-network-connectivity's gunicorn.conf.py, loaded as
    ./gunicorn.conf.py by a Dockerfile ENTRYPOINT)."""
    write(
        tmp_path,
        {
            "Dockerfile": (
                'FROM python:3.12\nWORKDIR /app\nCOPY . /app\nENTRYPOINT ["gunicorn"]\n'
                'CMD ["app:app"]\n'
            ),
            "gunicorn.conf.py": (
                'import os\nbind = ":9202"\nworkers = 3\n'
                'if os.getenv("ENV") == "development":\n    reload = True\n'
                "else:\n    preload = True\n"
            ),
        },
    )
    found = [
        (f.at.file.name, f.at.line)
        for f in check_folder(tmp_path).findings
        if f.rule == "gunicorn-unknown-setting"
    ]
    assert found == [("gunicorn.conf.py", 7)]


def test_a_flag_name_holding_the_value_in_effect_is_a_note(tmp_path: Path) -> None:
    """`log_file = "-"` sets nothing, but `errorlog` is `-` by default, so the server does
    the same either way: an info finding that says so (seen in
    microsoft/sample-app-aoai-chatGPT's gunicorn.conf.py); `log_file` with another value, or
    `keep_alive = 5` (keepalive is 2 by default), stays a warning."""
    from servertune.check.model import Severity

    write(
        tmp_path,
        {
            "a/Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "a/gunicorn.conf.py": 'workers = 2\nlog_file = "-"\nkeep_alive = 5\n',
            "b/Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "b/gunicorn.conf.py": 'workers = 2\nlog_file = "/var/log/app.log"\n',
        },
    )
    found = {
        (f.at.file.parent.name, f.at.line): f
        for f in check_folder(tmp_path).findings
        if f.rule == "gunicorn-unknown-setting"
    }
    assert sorted(found) == [("a", 2), ("a", 3), ("b", 2)]
    assert found["a", 2].severity == Severity.info
    assert "`errorlog` has that value anyway" in found["a", 2].message
    assert found["a", 3].severity == Severity.warning
    assert found["b", 2].severity == Severity.warning
