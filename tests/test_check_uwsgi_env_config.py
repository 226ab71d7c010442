"""uWSGI reads every option from a `UWSGI_<OPTION>` environment variable (uWSGI's docs,
"Configuring uWSGI", environment variables:
https://uwsgi-docs.readthedocs.io/en/latest/Configuration.html#environment-variables), so a
script's `export UWSGI_INI=...` before a bare `uwsgi` loads that ini as `--ini` would: the
launch is linked to it and judged by its settings; an ini named so that is not here is a
config-not-found note, and uWSGI's defaults are not judged (seen in eHealthAfrica/aether's
conf/uwsgi/start.sh)."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DOCKERFILE = 'FROM python:3.12\nCOPY ./ /code\nWORKDIR /code\nCMD ["/code/conf/start.sh"]\n'
START = "#!/bin/sh\nset -e\nexport UWSGI_INI=${UWSGI_INI:-@INI@}\nexec uwsgi --stats :1717\n"
INI = (
    "[uwsgi]\nmodule = app.wsgi\nmaster = true\nprocesses = 4\nthreads = 2\n"
    "http = 0.0.0.0:9100\ndie-on-term = true\n"
)


def _repository(root: Path, ini_path: str) -> Path:
    write(
        root,
        {
            "Dockerfile": DOCKERFILE,
            "conf/start.sh": START.replace("@INI@", ini_path),
            "conf/uwsgi.ini": INI,
        },
    )
    (root / "conf/start.sh").chmod(0o755)
    return root


def test_uwsgi_ini_from_the_environment_is_the_launch_config(tmp_path: Path) -> None:
    """`export UWSGI_INI=/code/conf/uwsgi.ini` (the image's copy of conf/uwsgi.ini) then
    `uwsgi --stats :1717`: one launch, through the ini, with its 4 processes and 2 threads
    and its socket; no finding on uWSGI's defaults (one process and one thread, SIGTERM
    reloading) that the ini overrides."""
    root = _repository(tmp_path, "/code/conf/uwsgi.ini")
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:4", "conf/start.sh:4", "conf/uwsgi.ini:4"], "uwsgi", 4)
    ]
    (app,) = result.apps
    assert app.threads.value == 2
    assert [s.value for s in app.sockets] == ["0.0.0.0:9100"]
    rules = {f.rule for f in result.findings}
    assert not rules & {"one-process-one-thread", "uwsgi-sigterm-reloads"}, rules


def test_uwsgi_ini_from_the_environment_not_here_is_named_and_defaults_are_not_judged(
    tmp_path: Path,
) -> None:
    """UWSGI_INI naming a file the repository does not hold (/etc/uwsgi/app.ini): a
    config-not-found note names it, and uWSGI's defaults, which that file may override, draw
    no finding."""
    root = _repository(tmp_path, "/etc/uwsgi/app.ini")
    result = check_folder(root)
    (note,) = [n.message for n in result.notes if n.kind == "config-not-found"]
    assert "/etc/uwsgi/app.ini" in note
    rules = {f.rule for f in result.findings}
    assert not rules & {"one-process-one-thread", "uwsgi-sigterm-reloads"}, rules
