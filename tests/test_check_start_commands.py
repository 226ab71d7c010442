"""Issue 44 (how a server is really started): words before the command word that the shell
drops, what supervisord expands in a program's values itself, and the config supervisord
reads when the command that starts it names none or names one a script rendered from a file
of the repository."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from servertune.check.graph import launches
from servertune.check.model import Location
from tests.folder_support import check_folder, write


def _joined(root: Path) -> list[tuple[list[str], list[str]]]:
    """Each launch as (its chain, its fronts), as file:line relative to `root`."""
    result = check_folder(root)

    def where(ats: Iterable[Location]) -> list[str]:
        return [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in ats]

    return [
        (where(launch.chain), sorted(where(launch.fronts)))
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


_NGINX_SOCKET = """\
upstream web { server unix:///run/gunicorn--web.sock fail_timeout=0; }
server {
  listen 80;
  location / { proxy_pass http://web; }
}
"""


def test_supervisord_expands_program_name_in_a_command(tmp_path: Path) -> None:
    """`--bind unix:/run/gunicorn--%(program_name)s.sock` in `[program:web]` is the socket
    `/run/gunicorn--web.sock` (supervisord expands its own `%(program_name)s`, seen in
    dsmrreader/dsmr-reader), so the nginx upstream on that socket is the program's front."""
    write(
        tmp_path,
        {
            "deploy/supervisor/web.conf": (
                "[program:web]\n"
                "command=/srv/venv/bin/gunicorn --workers 3 "
                "--bind unix:/run/gunicorn--%(program_name)s.sock app.wsgi\n"
            ),
            "deploy/nginx/site.conf": _NGINX_SOCKET,
        },
    )
    assert _joined(tmp_path) == [(["deploy/supervisor/web.conf:2"], ["deploy/nginx/site.conf:4"])]


def test_supervisord_expands_process_num_with_its_format(tmp_path: Path) -> None:
    """An `[fcgi-program:asgi]` whose daphne binds `/run/daphne/d%(process_num)02d.sock`
    (Channels' supervisord recipe spells `%(process_num)d`) listens on the first process's
    socket, `/run/daphne/d00.sock`, which nginx passes to."""
    write(
        tmp_path,
        {
            "supervisord.conf": (
                "[fcgi-program:asgi]\nsocket=tcp://localhost:8000\nnumprocs=2\n"
                "process_name=asgi%(process_num)d\n"
                "command=daphne -u /run/daphne/d%(process_num)02d.sock --fd 0 app.asgi:application\n"
            ),
            "nginx.conf": (
                "server {\n  listen 80;\n"
                "  location / { proxy_pass http://unix:/run/daphne/d00.sock; }\n}\n"
            ),
        },
    )
    assert _joined(tmp_path) == [(["supervisord.conf:5"], ["nginx.conf:3"])]


def test_leading_words_of_expansions_only_are_dropped_or_read_past(tmp_path: Path) -> None:
    """`${SUB}$prefix gunicorn ...` (codecov/codecov-api's enterprise.sh: SUB set empty or
    from an unset variable, prefix never set) runs gunicorn: a leading word made only of
    expansions is dropped when empty, as the shell's field splitting drops it, and read past
    as a wrapper when its value is unknown here, with an `unresolved-variable` note."""
    write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY run.sh /run.sh\nENTRYPOINT ["/run.sh"]\n',
            "run.sh": (
                '#!/bin/bash\nif [[ "$WRAP" ]]; then\nSUB="$WRAP"\nelse\nSUB=""\nfi\n'
                'if [[ -z "$1" ]]; then\n'
                "  ${SUB}$prefix gunicorn app:app --workers=3 --bind 0.0.0.0:8000\n"
                'else\n  exec "$@"\nfi\n'
            ),
        },
    )
    assert [chain for chain, _ in _joined(tmp_path)] == [["Dockerfile:3", "run.sh:8"]]
    notes = check_folder(tmp_path).notes
    assert any(n.kind == "unresolved-variable" and n.at.line == 8 for n in notes)


_PROGRAM = "[supervisord]\nnodaemon=true\n\n[program:web]\ncommand=gunicorn -w 3 -b :8000 app:app\n"


def test_supervisord_with_no_config_option_reads_its_default_search_path(tmp_path: Path) -> None:
    """`supervisord -n` with no `-c` reads the first file of its documented search path that
    exists, here `/etc/supervisor/supervisord.conf` the image COPYs (seen in
    ansible/ansible-ai-connect-service): the launch runs from the image through the script
    to the program in that config."""
    write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY conf/supervisord.conf /etc/supervisor/supervisord.conf\n"
                'COPY start.sh /usr/bin/start.sh\nCMD ["/usr/bin/start.sh"]\n'
            ),
            "start.sh": "#!/bin/sh\nset -e\n/usr/local/bin/supervisord -n\n",
            "conf/supervisord.conf": _PROGRAM,
        },
    )
    assert [chain for chain, _ in _joined(tmp_path)] == [
        ["Dockerfile:4", "start.sh:3", "conf/supervisord.conf:5"]
    ]


def test_supervisor_started_as_a_service_reads_its_packaged_config(tmp_path: Path) -> None:
    """`service supervisor start` (in a keep-alive loop, seen in uclapi/uclapi) and
    `/etc/init.d/supervisor start` start supervisord with the config its init script passes,
    `/etc/supervisor/supervisord.conf`: the file the image COPYs there is read, and its
    program's gunicorn runs from the image through the script. The init script daemonizes
    supervisord, so no `exec` is asked for on that line."""
    for starts in ("service supervisor start", "/etc/init.d/supervisor start"):
        root = tmp_path / starts.split()[0].strip("/").replace("/", "-")
        write(
            root,
            {
                "Dockerfile": (
                    "FROM python:3.12\n"
                    "COPY conf/supervisord.conf /etc/supervisor/supervisord.conf\n"
                    'COPY run.sh /run.sh\nCMD ["/run.sh"]\n'
                ),
                "run.sh": f"#!/bin/bash\n{starts}\nwhile true; do sleep 60; done\n",
                "conf/supervisord.conf": _PROGRAM,
            },
        )
        assert [chain for chain, _ in _joined(root)] == [
            ["Dockerfile:4", "run.sh:2", "conf/supervisord.conf:5"]
        ]
        result = check_folder(root)
        assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]


def test_a_config_rendered_by_sed_from_an_image_file_is_that_file(tmp_path: Path) -> None:
    """`sed "s/will_be_replaced/$(pwgen 40 1)/g" /app/etc/supervisord.conf >
    /app/run/supervisord.conf` then `exec supervisord --configuration /app/run/...` (seen in
    helfertool/helfertool): the rendered path is the file the image copied to the sed's
    source, its literal placeholders replaced (by the value where the script gives it, else
    by what is written), so the launch runs from the image through the script to its
    program; a replacement the script knows is read in its place. A folder named
    `supervisord` that the script makes is not supervisord run (no default config looked
    for from it), and the `exec` line hands over, so no finding asks for `exec`."""
    write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY etc /app/etc\nCOPY start.sh /app/start.sh\n"
                'CMD ["/app/start.sh"]\n'
            ),
            "start.sh": (
                "#!/bin/bash\nset -e\nPORT=8000\nmkdir -p /app/run/supervisord\n"
                'sed "s/will_be_replaced/$(pwgen 40 1)/g" /app/etc/supervisord.conf'
                " > /app/run/stage.conf\n"
                'sed -e "s|__PORT__|$PORT|g" /app/run/stage.conf > /app/run/supervisord.conf\n'
                "exec supervisord --nodaemon --configuration /app/run/supervisord.conf\n"
            ),
            "etc/supervisord.conf": (
                "[unix_http_server]\nfile=/app/run/s.sock\npassword=will_be_replaced\n\n"
                "[program:web]\ncommand=gunicorn -w 3 -b 127.0.0.1:__PORT__ app:app\n"
            ),
            "etc/nginx.conf": (
                "server {\n  listen 80;\n  location / { proxy_pass http://127.0.0.1:8000; }\n}\n"
            ),
        },
    )
    assert not check_folder(tmp_path).findings
    assert _joined(tmp_path) == [
        (["Dockerfile:4", "start.sh:7", "etc/supervisord.conf:6"], ["etc/nginx.conf:3"])
    ]


def test_a_script_dot_sourced_by_a_command_string_is_followed(tmp_path: Path) -> None:
    """A compose `command: sh -c ". bin/startup.sh"` (seen in sweepai/sweep) runs the script
    in the command's shell: it is followed as `sh bin/startup.sh` is, and the gunicorn it
    starts is the service's launch; `source` reads the same."""
    for sourcing in (".", "source"):
        root = tmp_path / ("dot" if sourcing == "." else sourcing)
        write(
            root,
            {
                "docker-compose.yml": (
                    "services:\n  web:\n    build: .\n"
                    f'    command: bash -c "{sourcing} bin/startup.sh"\n'
                ),
                "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
                "bin/startup.sh": "#!/bin/sh\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n",
            },
        )
        assert [chain for chain, _ in _joined(root)] == [
            ["docker-compose.yml:2", "bin/startup.sh:2"]
        ]
