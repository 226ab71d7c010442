"""A uWSGI command line read as uWSGI reads it: options uWSGI declares without a value never
take the next word, placeholders set on the command line are set before the ini is read, the
ini's magic `%d` is the directory the launch reads it from, and a value the environment sets
only when it runs does not replace the ini's. Seen in stevearc/pypicloud-docker
(`uwsgi --die-on-term /etc/pypicloud/config.ini`), agdsn/sipa (`--set-ph prefix=/sipa`) and
higlass/higlass-docker (`socket = %dapp.sock`, `--workers $WORKERS`). Each fixture is a small
repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

INI = """\
[uwsgi]
module = app:application
http-socket = :8080
processes = 8
master = true
"""


def test_a_flag_uwsgi_declares_without_a_value_leaves_the_ini_after_it_a_config(
    tmp_path: Path,
) -> None:
    """`uwsgi --die-on-term /etc/app/app.ini`: die-on-term takes no value in uWSGI's option
    table, so the path is a positional config, loaded by its extension: the launch runs
    through the ini (8 processes), not a 1 x 1 server beside an ini found alone."""
    root = write(
        tmp_path,
        {
            "app.ini": INI,
            "Dockerfile": "FROM python:3.12\nCOPY app.ini /etc/app/app.ini\n"
            'CMD ["uwsgi", "--die-on-term", "--master", "/etc/app/app.ini"]\n',
        },
    )
    assert chains(check_folder(root), root) == [(["Dockerfile:3", "app.ini:3"], "uwsgi", 8)]


PREFIXED = """\
[uwsgi]
module = app:application
http-socket = :8080
processes = 4
[prefixed]
mount = %(prefix)=app.py
ini = :uwsgi
"""


def test_a_placeholder_set_on_the_command_line_is_known_to_the_ini_it_loads(
    tmp_path: Path,
) -> None:
    """`uwsgi --ini uwsgi.ini:prefixed --set-ph prefix=/x`: `%(prefix)` in the [prefixed]
    section is the command line's value, so the section (and the [uwsgi] one it chains) is
    read and the launch runs through it (4 processes)."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": PREFIXED,
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY uwsgi.ini uwsgi.ini\n"
            'CMD ["uwsgi", "--ini", "uwsgi.ini:prefixed", "--set-ph", "prefix=/x"]\n',
        },
    )
    assert chains(check_folder(root), root) == [(["Dockerfile:4", "uwsgi.ini:3"], "uwsgi", 4)]


def test_a_placeholder_nobody_sets_here_is_an_unresolved_value_not_a_broken_file(
    tmp_path: Path,
) -> None:
    """The same launch without `--set-ph`: `%(prefix)` is set where it runs, so its line is
    an unresolved value with a note, and the rest of the section is still read."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": PREFIXED,
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY uwsgi.ini uwsgi.ini\n"
            'CMD ["uwsgi", "--ini", "uwsgi.ini:prefixed"]\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "uwsgi.ini:3"], "uwsgi", 4)]
    assert any(n.kind == "unresolved-variable" and "%(prefix)" in n.message for n in result.notes)


def _sockets(root: Path) -> list[str]:
    return sorted(s.value for app in check_folder(root).apps for s in app.sockets)


def test_uwsgi_magic_d_is_the_folder_the_launch_opens_the_ini_in(tmp_path: Path) -> None:
    """`socket = %dapp.sock` in an ini the image copies to its WORKDIR and the CMD loads as
    `uwsgi --ini uwsgi.ini`: uWSGI's `%d` is the folder it opens the ini in, so the socket
    is /home/app/projects/app.sock, never the checkout's folder. `ini = %dbase.ini` still
    reads the base file kept beside it here (its 3 processes)."""
    root = write(
        tmp_path,
        {
            "web/base.ini": "[uwsgi]\nprocesses = 3\n",
            "web/uwsgi.ini": "[uwsgi]\nini = %dbase.ini\nmodule = app\nsocket = %dapp.sock\n",
            "web/Dockerfile": "FROM python:3.12\nWORKDIR /home/app/projects\n"
            'COPY uwsgi.ini uwsgi.ini\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n',
        },
    )
    assert _sockets(root) == ["unix:/home/app/projects/app.sock"]
    assert [app.workers.value for app in check_folder(root).apps] == [3]


def test_uwsgi_magic_c_and_n_are_those_of_the_path_the_command_line_names(
    tmp_path: Path,
) -> None:
    """`--ini /srv/site/main.ini` of a file kept here as deploy/app.ini: `%c` (the folder's
    name) and `%n` (the file's name without extension) are `site` and `main`, as uWSGI fills
    its magic table from the path it opened."""
    root = write(
        tmp_path,
        {
            "deploy/app.ini": "[uwsgi]\nmodule = app\nsocket = /run/%c-%n.sock\n",
            "Dockerfile": "FROM python:3.12\nCOPY deploy/app.ini /srv/site/main.ini\n"
            'CMD ["uwsgi", "--ini", "/srv/site/main.ini"]\n',
        },
    )
    assert _sockets(root) == ["unix:/run/site-main.sock"]


SUPERVISORD = """\
[supervisord]
nodaemon = true
[program:web]
command = bash -c "mkdir -p /data/log; uwsgi --ini /app/uwsgi.ini --workers $WORKERS"
"""


def test_a_command_line_value_set_only_where_it_runs_leaves_the_ini_value_standing(
    tmp_path: Path,
) -> None:
    """`uwsgi --ini /app/uwsgi.ini --workers $WORKERS` in a supervisord program, WORKERS a
    bare `ARG WORKERS` the build fills (nothing here): the ini's `processes = 4` stands, not
    uWSGI's default 1, and the note quotes `--workers $WORKERS`, not the `bash -c` line."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": INI.replace("processes = 8", "processes = 4"),
            "supervisord.conf": SUPERVISORD,
            "Dockerfile": "FROM python:3.12\nARG WORKERS\nENV WORKERS ${WORKERS}\n"
            "COPY uwsgi.ini /app/uwsgi.ini\n"
            "COPY supervisord.conf /etc/supervisor/conf.d/supervisord.conf\n"
            'CMD ["supervisord", "-c", "/etc/supervisor/conf.d/supervisord.conf"]\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:6", "supervisord.conf:4", "uwsgi.ini:3"], "uwsgi", 4)
    ]
    (note,) = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert "--workers $WORKERS" in note.message
    assert "bash -c" not in note.message


def test_a_command_line_value_no_file_sets_leaves_the_ini_value_known(tmp_path: Path) -> None:
    """`uwsgi --ini /app/uwsgi.ini --workers $WORKERS` with WORKERS set by no file: the word
    is left out (a note), and the ini's `processes = 4` is the value read, not an unknown one."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": INI.replace("processes = 8", "processes = 4"),
            "Dockerfile": "FROM python:3.12\nCOPY uwsgi.ini /app/uwsgi.ini\n"
            'CMD ["sh", "-c", "exec uwsgi --ini /app/uwsgi.ini --workers $WORKERS"]\n',
        },
    )
    (app,) = check_folder(root).apps
    assert app.workers.value == 4
    assert "workers" not in app.unknown
