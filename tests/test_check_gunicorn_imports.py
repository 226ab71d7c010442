"""A gunicorn config that imports names from another module: a module of the tree is read, one
level deep and never run, for the literal values its top level assigns (`from .base import *`
too); a module not in the tree leaves the settings it feeds unresolved, named in a coverage
note, never silently at gunicorn's defaults."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

#: As seen in safe-global/safe-transaction-service: the counts live in config/gunicorn.py, read
#: from the environment with defaults, so Django can read them too.
SETTINGS_MODULE = (
    "import os\n\n"
    'gunicorn_workers = int(os.environ.get("WEB_CONCURRENCY", 3))\n'
    'gunicorn_request_timeout = int(os.environ.get("WEB_WORKER_TIMEOUT", 60))\n'
)


def test_names_imported_from_a_tree_module_take_its_values(tmp_path: Path) -> None:
    """`from config.gunicorn import gunicorn_workers` with config/gunicorn.py in the tree:
    `workers = gunicorn_workers` is that module's 3, not gunicorn's default of 1."""
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "gunicorn.conf.py": (
                "from config.gunicorn import gunicorn_request_timeout, gunicorn_workers\n\n"
                'bind = "0.0.0.0:8000"\nworkers = gunicorn_workers\n'
                "timeout = gunicorn_request_timeout\n"
            ),
            "config/__init__.py": "",
            "config/gunicorn.py": SETTINGS_MODULE,
        },
    )
    assert [c[1:] for c in chains(check_folder(tmp_path), tmp_path)] == [("gunicorn", 3)]


def test_star_import_from_a_relative_module(tmp_path: Path) -> None:
    """`from .base import *` in deploy/prod.py binds every name deploy/base.py assigns, its
    settings among them (gunicorn reads the config module's globals)."""
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn -c deploy/prod.py app:app\n",
            "deploy/__init__.py": "",
            "deploy/base.py": 'bind = "0.0.0.0:8000"\nworkers = 5\n',
            "deploy/prod.py": "from .base import *\n\ntimeout = 60\n",
        },
    )
    assert [c[1:] for c in chains(check_folder(tmp_path), tmp_path)] == [("gunicorn", 5)]


def test_a_name_imported_from_a_module_not_in_the_tree_is_unresolved(tmp_path: Path) -> None:
    """`from settings_elsewhere import workers` with no such module here: `workers` is named
    in an unresolved-variable note at its line, not taken as gunicorn's default silently."""
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn -c gunicorn.conf.py app:app\n",
            "gunicorn.conf.py": (
                'from settings_elsewhere import workers_wanted\n\nbind = "0.0.0.0:8000"\n'
                "workers = workers_wanted\n"
            ),
        },
    )
    result = check_folder(tmp_path)
    said = [(n.at.line, n.message) for n in result.notes if n.at.file.name == "gunicorn.conf.py"]
    assert any(line == 4 and "settings_elsewhere.workers_wanted" in m for line, m in said), said


def test_a_call_handed_the_modules_globals_leaves_what_it_may_set_unknown(
    tmp_path: Path,
) -> None:
    """`set_gunicorn_defaults(globals())` from a package not in the tree may set any setting in
    the module (alphagov/document-download-api's notifications_utils sets bind from $PORT):
    each setting no line below the call assigns (bind, threads, backlog...) is unknown, said in
    one unresolved-variable note at the call, never gunicorn's 127.0.0.1:8000 read as the
    bind; `workers = 4` below it stands. `vars()` and `sys.modules[__name__]` are the same."""
    for handed in ("globals()", "vars()", "sys.modules[__name__]"):
        write(
            tmp_path / handed[:4],
            {
                "Procfile": "web: gunicorn -c gunicorn_config.py app:app\n",
                "gunicorn_config.py": (
                    "import sys\nfrom shared.gunicorn import set_defaults\n\n"
                    f"set_defaults({handed})\n\nworkers = 4\n"
                ),
            },
        )
        result = check_folder(tmp_path / handed[:4])
        (app,) = result.apps
        assert app.sockets == ()
        assert app.workers.value == 4
        assert {"threads", "backlog"} <= app.unknown
        (said,) = [n for n in result.notes if "hands the module" in n.message]
        assert (said.at.file.name, said.at.line) == ("gunicorn_config.py", 4)
        assert "bind" in said.message
        assert "workers" not in said.message.partition("(")[0]
