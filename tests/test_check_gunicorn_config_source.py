"""Where gunicorn's settings come from when `check` links a launch to its config: the
command's `-c`, else `GUNICORN_CMD_ARGS`'s, a `python:package.module` the image imports from
the project's own package, a server started under its distribution's name (`gunicorn3`), and
a setting value only another gunicorn version accepts (a note, never a refused file)."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import describe, launches
from tests.folder_support import chains, check_folder, write

CONFIG = "bind = '0.0.0.0:5000'\nworkers = 3\n"


def test_gunicorn_cmd_args_names_the_config_file(tmp_path: Path) -> None:
    """`ENV GUNICORN_CMD_ARGS="-c g.py"` with a command naming no config: gunicorn loads g.py
    (the command's `-c` first, then the environment's), so the launch is linked to it, with
    its bind and workers, and g.py is no launch of its own (seen in eq-questionnaire-runner)."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /srv\n"
            'ENV GUNICORN_CMD_ARGS="-c gunicorn_settings.py"\nCMD ["gunicorn", "app:app"]\n',
            "gunicorn_settings.py": CONFIG,
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["Dockerfile:5", "gunicorn_settings.py:1"], "gunicorn", 3)]
    assert [s.value for s in result.apps[0].sockets] == ["0.0.0.0:5000"]


def test_gunicorn_cmd_args_config_and_bind_with_the_command_line_first(tmp_path: Path) -> None:
    """`--config=FILE` in GUNICORN_CMD_ARGS is read too, its other settings over the file's
    (its `--bind`), and a `-c` on the command line wins over the environment's."""
    write(
        tmp_path,
        {
            "a/Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /srv\n"
            'ENV GUNICORN_CMD_ARGS="--config=a.py --bind 0.0.0.0:5002"\n'
            'CMD ["gunicorn", "app:app"]\n',
            "a/a.py": CONFIG,
            "b/Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /srv\n"
            'ENV GUNICORN_CMD_ARGS="-c missing.py"\n'
            'CMD ["gunicorn", "-c", "b.py", "app:app"]\n',
            "b/b.py": "workers = 5\n",
        },
    )
    result = check_folder(tmp_path)
    by_file = {a.config_file.file.name: a for a in result.apps if a.config_file is not None}
    assert sorted(by_file) == ["a.py", "b.py"]
    assert [s.value for s in by_file["a.py"].sockets] == ["0.0.0.0:5002"]
    assert by_file["a.py"].workers.value == 3
    assert by_file["b.py"].workers.value == 5
    assert by_file["b.py"].missing_config is None


def test_gunicorn_python_module_config_from_the_installed_package(tmp_path: Path) -> None:
    """`--config python:mypkg.gunicorn_conf` in an image that installs the project (its working
    directory elsewhere) imports the repository's mypkg/gunicorn_conf.py, at the root or under
    src/: each launch is linked to it and it is no launch of its own (seen in datacube-ows)."""
    command = '"gunicorn", "--config", "python:mypkg.gunicorn_conf", "mypkg.wsgi"'
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /src\nRUN pip install /src\n"
            f"WORKDIR /home/app\nCMD [{command}]\n",
            "mypkg/gunicorn_conf.py": CONFIG,
            "lib/Dockerfile": "FROM python:3.12\nCOPY . /src\nRUN pip install /src\n"
            'WORKDIR /home/app\nCMD ["gunicorn", "-c", "python:other.settings", "other.wsgi"]\n',
            "lib/src/other/settings.py": "workers = 7\n",
        },
    )
    result = check_folder(tmp_path)
    assert sorted(chains(result, tmp_path)) == [
        (["Dockerfile:5", "mypkg/gunicorn_conf.py:1"], "gunicorn", 3),
        (["lib/Dockerfile:5", "lib/src/other/settings.py:1"], "gunicorn", 7),
    ]


def test_servers_under_their_distribution_names(tmp_path: Path) -> None:
    """Debian's `/usr/bin/gunicorn3` in a systemd ExecStart and a compose command, and uWSGI as
    `uwsgi_python3` (uwsgi-plugin-python3's link to uwsgi-core) are gunicorn and uWSGI: each is
    a launch, read with its options, and `-c file:PATH` is the file PATH (seen in ooni/backend)."""
    write(
        tmp_path,
        {
            "deb/app.service": "[Service]\nExecStart=/usr/bin/gunicorn3 \\\n"
            "  --config file:app.gunicorn.py \\\n  app.wsgi\n",
            "deb/app.gunicorn.py": "workers = 6\n",
            "compose.yaml": "services:\n  api:\n    image: example/api\n"
            "    command: gunicorn3 -w 2 app.wsgi -b 0.0.0.0:8000\n",
            "uwsgi.sh": "#!/bin/sh\nexec uwsgi_python3 --http :9000 --processes 4 -w app\n",
        },
    )
    result = check_folder(tmp_path)
    assert sorted((a.kind, a.workers.value) for a in result.apps) == [
        ("gunicorn", 2),
        ("gunicorn", 6),
        ("uwsgi", 4),
    ]


def test_a_value_only_another_gunicorn_takes_is_a_note_not_a_refusal(tmp_path: Path) -> None:
    """A setting check does not judge by, with a value the gunicorn installed here refuses
    (`http_protocols = "h3,h2,h1"`: gunicorn 26 takes it, 27 does not), or an option it does
    not have, depends on the deployment's gunicorn, not this machine's: a `server-version`
    note naming the setting and the version installed here, and the launch judged from the
    rest (seen in bunkerweb's src/api, exit 2 before). A refused `workers` stays an error."""
    from importlib.metadata import version

    write(
        tmp_path,
        {
            "start.sh": "#!/bin/sh\n"
            "exec gunicorn -c gunicorn.conf.py --http-protocols h9 --not-yet-an-option app:app\n",
            "gunicorn.conf.py": "bind = '0.0.0.0:8000'\nworkers = 4\nhttp_protocols = 'h3,h2,h1'\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["start.sh:2", "gunicorn.conf.py:1"], "gunicorn", 4)]
    notes = sorted(
        (n.at.file.name, n.at.line, n.message) for n in result.notes if n.kind == "server-version"
    )
    assert [(name, line) for name, line, _ in notes] == [
        ("gunicorn.conf.py", 3),
        ("start.sh", 2),
        ("start.sh", 2),
    ]
    assert all(f"gunicorn {version('gunicorn')}, installed here" in m for _, _, m in notes)
    assert "http_protocols = 'h3,h2,h1'" in notes[0][2]
    assert any("--not-yet-an-option" in m for _, _, m in notes)
    (tmp_path / "gunicorn.conf.py").write_text("workers = 'many'\n")
    errors = [e.message for e in check_folder(tmp_path).errors]
    assert any("workers = 'many': gunicorn refuses it" in m for m in errors), errors


def test_values_a_config_computes_by_its_own_functions_are_unresolved(tmp_path: Path) -> None:
    """`bind = get_bind()` and `workers = compute()`, each a function the config file defines,
    are known only when gunicorn runs the file: each is the same unresolved-variable note as
    any setting the files write but check cannot work out, the launch knows no socket (not
    gunicorn's default 127.0.0.1:8000) and shows its worker count as `?` (not 1 x 1), and no
    rule judges the default in their place: no one-process-one-thread (seen in meeb/tubesync)."""
    config = (
        "def get_bind():\n    return '0.0.0.0:9000'\n\n"
        "def compute():\n    return 4\n\n"
        "bind = get_bind()\nworkers = compute()\n"
    )
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /srv\n"
            'CMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n',
            "gunicorn.conf.py": config,
        },
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert app.sockets == ()
    assert {"workers"} <= app.unknown
    (launch,) = launches(result.apps, result.links)
    assert "gunicorn ? x 1 on no socket known" in describe(launch)
    notes = [n.message for n in result.notes if n.kind == "unresolved-variable"]
    assert len(notes) == 2
    assert all("gunicorn was read without it" in m for m in notes)
    assert not [f for f in result.findings if f.rule == "one-process-one-thread"]


def test_a_long_option_shortened_to_a_unique_prefix_is_read_as_gunicorn_reads_it(
    tmp_path: Path,
) -> None:
    """gunicorn's argparse parser takes a long option shortened to a prefix only it has:
    `--conf g.py` is `--config g.py` (the launch is linked to g.py, with its bind, and g.py is
    no file left unclaimed) and `--thr=5` is `--threads=5`; the same in
    GUNICORN_CMD_ARGS (seen in gratipay/gratipay.com's Procfile `--conf`)."""
    write(
        tmp_path,
        {
            "a/Procfile": "web: gunicorn app:app --conf gunicorn_hidden.py --thr=5\n",
            "a/gunicorn_hidden.py": CONFIG,
            "b/Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . /srv\n"
            'ENV GUNICORN_CMD_ARGS="--conf b.py"\nCMD ["gunicorn", "app:app"]\n',
            "b/b.py": "workers = 4\n",
        },
    )
    result = check_folder(tmp_path)
    by_file = {a.config_file.file.name: a for a in result.apps if a.config_file is not None}
    assert sorted(by_file) == ["b.py", "gunicorn_hidden.py"]
    assert [s.value for s in by_file["gunicorn_hidden.py"].sockets] == ["0.0.0.0:5000"]
    assert by_file["gunicorn_hidden.py"].workers.value == 3
    assert by_file["gunicorn_hidden.py"].threads.value == 5
    assert by_file["b.py"].workers.value == 4
    assert not [n for n in result.notes if n.kind == "not-read"]
