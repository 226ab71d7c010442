"""Files a container makes when it starts from the repository's files (`cp`, `ln -s`,
`envsubst`, `echo >`) are the files its server reads: the chain reaches the repository file
(or the text written), on evidence in the files only. Each repository is written here for the
form it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.runtime_files import made_by
from tests.folder_support import chains, check_folder, write

#: An image whose CMD runs start.sh from its WORKDIR.
_IMAGE = """\
FROM python:3.12-slim
WORKDIR /opt/app
COPY . /opt/app/
ENV UWSGI_PROCESSES=6
CMD ["sh", "start.sh"]
"""


def test_envsubst_rendered_ini_is_the_template_read_with_the_images_env(tmp_path: Path) -> None:
    """`envsubst <uwsgi.conf.ini >uwsgi.ini` then `uwsgi --ini uwsgi.ini`: the server reads
    the template rendered with the image's ENV (processes 6); a name nothing sets stays
    unresolved (threads: uWSGI's default, said in a note), never guessed."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _IMAGE,
            "uwsgi.conf.ini": "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\n"
            "processes = ${UWSGI_PROCESSES}\nthreads = ${UWSGI_THREADS}\n",
            "start.sh": "#!/bin/sh\nenvsubst <uwsgi.conf.ini >uwsgi.ini || true\n"
            "exec uwsgi --ini uwsgi.ini\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:5", "start.sh:3", "uwsgi.conf.ini:3"], "uwsgi", 6)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]
    unresolved = [n.at for n in result.notes if n.kind == "unresolved-variable"]
    assert any(at.file.name == "uwsgi.conf.ini" and at.line == 5 for at in unresolved)


def test_envsubst_with_a_shell_format_substitutes_only_the_names_it_lists(tmp_path: Path) -> None:
    """`envsubst '$PROCS'` renders that name only (`$PROCS` unbraced too): `${THREADS}`, which
    the environment also sets, stays as written, so threads is uWSGI's default, not 4."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _IMAGE.replace("ENV UWSGI_PROCESSES=6", "ENV PROCS=6 THREADS=4"),
            "uwsgi.conf.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = $PROCS\n"
            "threads = ${THREADS}\n",
            "start.sh": "#!/bin/sh\nenvsubst '$PROCS' < uwsgi.conf.ini > /tmp/u.ini\n"
            "exec uwsgi --ini /tmp/u.ini\n",
        },
    )
    result = check_folder(root)
    ((_, kind, workers),) = chains(result, root)
    assert (kind, workers) == ("uwsgi", 6)
    (app,) = result.apps
    assert app.threads.value == 1


def test_cp_in_an_s6_init_service_the_server_service_depends_on(tmp_path: Path) -> None:
    """s6-rc starts `init-app-config` (which copies /defaults/uwsgi.ini to /app/uwsgi.ini)
    before `svc-app` (its dependencies.d says so): the server's `--ini /app/uwsgi.ini` is
    root/defaults/uwsgi.ini, one process, read once."""
    s6 = "root/etc/s6-overlay/s6-rc.d"
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY root/ /\n",
            "root/defaults/uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 5\n",
            f"{s6}/init-app-config/run": "#!/usr/bin/with-contenv bash\nmkdir -p /app\n"
            "cp /defaults/uwsgi.ini /app/uwsgi.ini\n",
            f"{s6}/svc-app/dependencies.d/init-app-config": "",
            f"{s6}/svc-app/run": "#!/usr/bin/with-contenv bash\n"
            "exec s6-setuidgid abc uwsgi --ini /app/uwsgi.ini\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        ([f"{s6}/svc-app/run:2", "root/defaults/uwsgi.ini:2"], "uwsgi", 5)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]


def test_mv_in_an_s6_init_service_puts_the_image_file_where_the_server_reads_it(
    tmp_path: Path,
) -> None:
    """`mv /defaults/uwsgi.ini /app/uwsgi.ini > /dev/null 2>&1` in the init service svc-app
    depends on puts root/defaults/uwsgi.ini where `--ini /app/uwsgi.ini` reads it, as `cp`
    does; the init script's `sed -i 's|{{'$KEY'}}|...|'` (a placeholder of another file, in
    shell quotes) does not make it a template."""
    s6 = "root/etc/s6-overlay/s6-rc.d"
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY root/ /\n",
            "root/defaults/uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 5\n",
            f"{s6}/init-app-config/run": "#!/usr/bin/with-contenv bash\n"
            'for KEY in "${!CONF[@]}"; do\n'
            "    sed -i 's|{{'$KEY'}}|'${CONF[$KEY]}'|g' /config/settings.py\ndone\n"
            "mv /defaults/uwsgi.ini /app/uwsgi.ini > /dev/null 2>&1\n",
            f"{s6}/svc-app/dependencies.d/init-app-config": "",
            f"{s6}/svc-app/run": "#!/usr/bin/with-contenv bash\n"
            "exec s6-setuidgid abc uwsgi --ini /app/uwsgi.ini\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        ([f"{s6}/svc-app/run:2", "root/defaults/uwsgi.ini:2"], "uwsgi", 5)
    ]
    assert not [n for n in result.notes if n.kind in ("config-not-found", "template")]


def test_cp_in_a_service_nothing_orders_first_is_not_followed(tmp_path: Path) -> None:
    """The same copy in an s6 service the server's service does not depend on may run after
    it: the server's config stays not found, never guessed."""
    s6 = "root/etc/s6-overlay/s6-rc.d"
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY root/ /\n",
            "root/defaults/uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 5\n",
            f"{s6}/init-app-config/run": "#!/bin/bash\ncp /defaults/uwsgi.ini /app/uwsgi.ini\n",
            f"{s6}/svc-app/run": "#!/bin/bash\nexec uwsgi --ini /app/uwsgi.ini\n",
        },
    )
    result = check_folder(root)
    assert [n.at.file.name for n in result.notes if n.kind == "config-not-found"] == ["run"]


def test_ln_s_into_a_folder_made_by_the_script(tmp_path: Path) -> None:
    """`ln -s -t "$CONF" /etc/app/conf.d/web.ini` (CONF a folder the script made) links the
    file the image copied there: `--ini /run/conf.d/web.ini` is conf/web.ini."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY conf/ /etc/app/conf.d/\n"
            'COPY start.sh /start.sh\nCMD ["/start.sh"]\n',
            "conf/web.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 3\n",
            "start.sh": '#!/bin/sh\nCONF=/run/conf.d\nmkdir -p "$CONF"\n'
            'ln -s -t "$CONF" /etc/app/conf.d/web.ini\nexec uwsgi --ini /run/conf.d/web.ini\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "start.sh:5", "conf/web.ini:2"], "uwsgi", 3)]


def test_ln_s_after_the_server_line_makes_nothing_it_reads(tmp_path: Path) -> None:
    """A link made after the server started (a line below `uwsgi` that does not exec) is
    not what the server read."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY conf/ /etc/app/\n"
            'COPY start.sh /start.sh\nCMD ["/start.sh"]\n',
            "conf/web.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 3\n",
            "start.sh": "#!/bin/sh\nuwsgi --ini /run/web.ini &\n"
            "ln -s /etc/app/web.ini /run/web.ini\nwait\n",
        },
    )
    result = check_folder(root)
    assert any(n.kind == "config-not-found" for n in result.notes)


def test_echo_writes_the_config_the_server_reads_with_the_images_env(tmp_path: Path) -> None:
    """`echo "workers = $WORKERS" > /tmp/gunicorn.conf.py` (WORKERS from the image's ENV)
    then `gunicorn -c /tmp/gunicorn.conf.py`: 7 workers, read from the echo line."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nENV WORKERS=7\n"
            'COPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n',
            "entrypoint.sh": '#!/bin/sh\necho "workers = $WORKERS" > /tmp/gunicorn.conf.py\n'
            "exec gunicorn -c /tmp/gunicorn.conf.py --bind 0.0.0.0:8000 app:app\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "entrypoint.sh:2"], "gunicorn", 7)]


def test_echo_of_a_variable_nothing_sets_is_an_unresolved_note(tmp_path: Path) -> None:
    """`echo "workers = $WORKERS"` with WORKERS set nowhere: the file is read with the text as
    written (gunicorn's default workers), and a note says the value is known only at run."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY entrypoint.sh /entrypoint.sh\n"
            'ENTRYPOINT ["/entrypoint.sh"]\n',
            "entrypoint.sh": '#!/bin/sh\necho "workers = $WORKERS" > /tmp/gunicorn.conf.py\n'
            "exec gunicorn -c /tmp/gunicorn.conf.py --bind 0.0.0.0:8000 app:app\n",
        },
    )
    result = check_folder(root)
    notes = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert any("$WORKERS" in n.message and n.at.line == 2 for n in notes)


def test_image_from_an_image_built_here_inherits_its_files_env_and_command(
    tmp_path: Path,
) -> None:
    """`FROM acme/shop-base:1.0` in shop's repository, whose shop_base/Dockerfile copies
    common/ (start.sh, uwsgi.conf.ini) and sets ENV PROCS=4: the app image runs its own CMD
    `sh start.sh` from the base's files, under the base's ENV, so the chain reaches the
    envsubst-rendered ini (4 processes), not "not in the build context"."""
    root = write(
        tmp_path / "shop",
        {
            "shop_base/Dockerfile": "FROM python:3.12-slim AS system\nFROM system\n"
            "COPY ./common/ /opt/shop/\nENV PROCS=4\n",
            "common/start.sh": "#!/bin/sh\nenvsubst < uwsgi.conf.ini > uwsgi.ini\n"
            "exec uwsgi --ini uwsgi.ini\n",
            "common/uwsgi.conf.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = ${PROCS}\n",
            "shop_app/Dockerfile": "ARG VERSION=edge\nFROM acme/shop-base:${VERSION}\n"
            'WORKDIR /opt/shop/\nCMD ["sh", "start.sh"]\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (
            ["shop_app/Dockerfile:4", "common/start.sh:3", "common/uwsgi.conf.ini:2"],
            "uwsgi",
            4,
        )
    ]
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_from_a_library_image_inherits_nothing(tmp_path: Path) -> None:
    """`FROM python:3.12` (a library image) beside a Dockerfile of the repository: nothing
    of that Dockerfile is taken for the base's, the start script stays not followed."""
    root = write(
        tmp_path / "shop",
        {
            "shop_base/Dockerfile": "FROM python:3.12-slim\nCOPY ./common/ /opt/shop/\n",
            "common/start.sh": "#!/bin/sh\nexec uwsgi --http :8000 --processes 3\n",
            "shop_app/Dockerfile": 'FROM python:3.12\nWORKDIR /opt/shop/\nCMD ["sh", "start.sh"]\n',
        },
    )
    result = check_folder(root)
    assert all(launch[0][0] != "shop_app/Dockerfile:3" for launch in chains(result, root))
    assert any(n.kind == "not-followed" for n in result.notes)


def test_find_exec_ln_s_fills_the_folder_supervisords_include_reads(tmp_path: Path) -> None:
    """The entrypoint links the image's non-celery program files into /run/conf.d (`find
    /etc/app/conf.d -type f ! -name 'celery-*.conf' -exec ln -s -t "$CONF" {} +`) and then
    runs supervisord, whose `[include] files = /run/conf.d/*.conf` reads them: web.conf's
    gunicorn is reached through the script, supervisord.conf and the include."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY etc /etc/\nCOPY start /app/bin/\n"
            'ENTRYPOINT ["/app/bin/start"]\nCMD ["runserver"]\n',
            "etc/app/supervisord.conf": "[supervisord]\nnodaemon = true\n\n"
            "[include]\nfiles = /run/conf.d/*.conf\n",
            "etc/app/conf.d/web.conf": "[program:web]\n"
            "command = gunicorn --workers 3 --bind 0.0.0.0:8000 app:app\n",
            "etc/app/conf.d/celery-worker.conf": "[program:celery]\ncommand = celery worker\n",
            "start": "#!/bin/bash\nprepare() {\n    CONF=/run/conf.d/\n"
            '    mkdir -p "$CONF"\n'
            "    find /etc/app/conf.d -type f ! -name 'celery-*.conf' "
            '-exec ln -s -t "$CONF" {} +\n}\n'
            "start_supervisord() {\n    exec supervisord --configuration=/etc/app/supervisord.conf\n}\n"
            'main() {\n    if [[ ${1:-} == "runserver" ]]; then\n        prepare\n'
            '        start_supervisord\n    fi\n}\nmain "$@"\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (
            [
                "Dockerfile:4",
                "start:8",
                "etc/app/supervisord.conf:5",
                "etc/app/conf.d/web.conf:2",
            ],
            "gunicorn",
            3,
        )
    ]


@pytest.mark.parametrize(
    ("line", "made"),
    [
        ("cp -a /src/. /dst/", [("/dst", "/src")]),
        ("cp /a/x.ini /b/", [("/b/x.ini", "/a/x.ini")]),
        ("cp a.ini b.ini /d", [("/d/a.ini", "a.ini"), ("/d/b.ini", "b.ini")]),
        ("ln -sf /etc/a.conf /run/a.conf", [("/run/a.conf", "/etc/a.conf")]),
        ("ln /etc/a.conf /run/a.conf", []),  # a hard link: not what these images write
        ("cat /etc/a.conf >> /run/a.conf", []),  # appends to a file whose start is unknown
        ('cp /etc/a.conf "$NOWHERE/a.conf"', []),  # a destination known only at run time
        ('echo "server $HOST:$PORT;" > /run/up 2>&1', [("/run/up", "server web:$PORT;\n")]),
        ("cat /etc/a.conf > /run/a.conf", [("/run/a.conf", "/etc/a.conf")]),
        ("cat < /etc/a.conf > /run/a.conf", [("/run/a.conf", "/etc/a.conf")]),
        ("cat /etc/a.conf /etc/b.conf > /run/a.conf", []),  # two files joined: neither
        ("cat -n /etc/a.conf > /run/a.conf", []),  # numbered lines: not the file's text
        # Carriage returns dropped (a Windows checkout): the same lines, for Unix.
        ("sed 's/\\r$//' /conf/start.sh > /tmp/start.sh", [("/tmp/start.sh", "/conf/start.sh")]),
        ("sed -e 's/\\r//g' < /conf/start.sh > /tmp/s", [("/tmp/s", "/conf/start.sh")]),
        ("tr -d '\\r' < /conf/start.sh > /tmp/start.sh", [("/tmp/start.sh", "/conf/start.sh")]),
        # Literal text replaced (the new text known); a pattern or a group: the text unknown.
        ("sed 's/8000/9000/' /etc/a.conf > /run/a.conf", [("/run/a.conf", "/etc/a.conf")]),
        ("sed 's/80*/9000/' /etc/a.conf > /run/a.conf", []),
        ("sed 's/8000/&0/' /etc/a.conf > /run/a.conf", []),
        ("sed -i 's/\\r$//' /etc/a.conf > /run/a.conf", []),  # edits in place, writes no copy
    ],
)
def test_lines_that_make_a_file_and_lines_that_make_none(
    line: str, made: list[tuple[str, str]]
) -> None:
    """Each form read as the shell runs it: what it makes (destination, source or text),
    and nothing when the destination or its whole content is not known here."""
    found = made_by(Path("start.sh"), line, 1, {"HOST": "web"}, set())
    assert [(m.path, m.source if m.text is None else m.text) for m in found] == made


def test_image_from_a_base_built_here_runs_the_bases_cmd_under_its_own_env(
    tmp_path: Path,
) -> None:
    """The app image sets no CMD: the base's `CMD ["sh", "start.sh"]` runs, in the base's
    WORKDIR, with the app's `ENV WORKERS=5` winning over the base's 2; its chain starts at
    the app's FROM line, and the base's own reading of the same lines is that process."""
    root = write(
        tmp_path / "shop",
        {
            "shop_base/Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY common/ /srv/\n"
            'ENV WORKERS=2\nCMD ["sh", "start.sh"]\n',
            "common/start.sh": '#!/bin/sh\nexec gunicorn -w "$WORKERS" -b 0.0.0.0:8000 app:app\n',
            "shop_app/Dockerfile": "FROM acme/shop-base:1\nENV WORKERS=5\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["shop_app/Dockerfile:1", "shop_base/Dockerfile:5", "common/start.sh:2"], "gunicorn", 5)
    ]


#: s6-overlay's service folder in an image's files.
_S6 = "root/etc/s6-overlay/s6-rc.d"
#: An image that installs s6 services and sets no command of its own.
_S6_IMAGE = "FROM ghcr.io/acme/s6-base:3\nRUN apk add --no-cache uwsgi\nCOPY root/ /\nEXPOSE 8000\n"
#: A supervised run script that chain-loads (`cd DIR prog...`) into the server, which
#: names its config relative to that folder.
_S6_RUN = (
    "#!/usr/bin/with-contenv bash\nexec \\\n"
    '    s6-notifyoncheck -d -n 300 -c "nc -z localhost 8000" \\\n'
    "        cd /srv/web s6-setuidgid app /usr/sbin/uwsgi --ini web.ini\n"
)


def _s6_repository(root: Path, bundle: list[str]) -> Path:
    """An image with no command whose files install `svc-web` (after `init-web-ready`, after
    `init-web-config`, which copies the config into /srv/web) and the `user` bundle `bundle`."""
    return write(
        root,
        {
            "Dockerfile": _S6_IMAGE,
            "root/defaults/web.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 3\n",
            f"{_S6}/init-web-config/type": "oneshot\n",
            f"{_S6}/init-web-config/run": "#!/usr/bin/with-contenv bash\nmkdir -p /srv/web\n"
            "cp /defaults/web.ini /srv/web/web.ini\n",
            f"{_S6}/init-web-ready/type": "oneshot\n",
            f"{_S6}/init-web-ready/dependencies.d/init-web-config": "",
            f"{_S6}/svc-web/type": "longrun\n",
            f"{_S6}/svc-web/dependencies.d/init-web-ready": "",
            f"{_S6}/svc-web/run": _S6_RUN,
            **{f"{_S6}/user/contents.d/{name}": "" for name in bundle},
        },
    )


def test_an_image_with_no_command_runs_its_s6_services_through_the_base_images_init(
    tmp_path: Path,
) -> None:
    """No CMD or ENTRYPOINT, s6 services in the `user` bundle: the base image's /init runs
    them, so the image (its FROM line, the graph saying why) starts svc-web's uwsgi; the
    chain-loading `cd /srv/web` makes `--ini web.ini` /srv/web/web.ini, which the init
    service two dependencies back copies from root/defaults/web.ini (3 processes)."""
    from servertune.check.graph import describe, launches

    root = _s6_repository(tmp_path, ["init-web-config", "init-web-ready", "svc-web"])
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:1", f"{_S6}/svc-web/run:4", "root/defaults/web.ini:2"], "uwsgi", 3)
    ]
    assert not [
        n
        for n in result.notes
        if n.kind in ("config-not-found", "starts-no-server") and n.at.file.name == "Dockerfile"
    ]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert "Dockerfile:1 (its base image's s6-overlay /init runs the services)" in describe(launch)


def test_an_s6_service_outside_the_user_bundle_is_not_started(tmp_path: Path) -> None:
    """The bundle lists the init services only: /init never starts svc-web, so the image
    starts no server (its note stays) and the run script is read on its own."""
    root = _s6_repository(tmp_path, ["init-web-config", "init-web-ready"])
    result = check_folder(root)
    assert all(c[0][0] != "Dockerfile:1" for c in chains(result, root))
    assert any(
        n.kind == "starts-no-server" and n.at.file.name == "Dockerfile" for n in result.notes
    )


def test_a_cd_line_before_the_server_makes_its_relative_config_that_folders(
    tmp_path: Path,
) -> None:
    """`cd /srv/web || exit` then `exec uwsgi --ini web.ini`: the config is /srv/web/web.ini
    (the image's COPY of conf/web.ini), not the web.ini beside the script in the WORKDIR."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /opt/app\nCOPY . /opt/app/\n"
            'COPY conf/web.ini /srv/web/web.ini\nCMD ["sh", "start.sh"]\n',
            "conf/web.ini": "[uwsgi]\nhttp-socket = :8000\nprocesses = 4\n",
            "web.ini": "[uwsgi]\nhttp-socket = :9000\nprocesses = 2\n",
            "start.sh": "#!/bin/sh\ncd /srv/web || exit 1\nexec uwsgi --ini web.ini\n",
        },
    )
    result = check_folder(root)
    assert (["Dockerfile:5", "start.sh:3", "conf/web.ini:2"], "uwsgi", 4) in chains(result, root)


#: A front image whose start script sources a library whose function renders one nginx
#: template per word of a loop, each pass naming its backend by indirection.
_LOOP_FRONT = {
    "proxy/Dockerfile": "FROM nginx:1.27-alpine\nWORKDIR /etc/nginx\n"
    "COPY common/lib.sh common/start.sh proxy/site.template.conf /etc/nginx/\n"
    "ENV WEB_BACKEND_HOST=web WEB_BACKEND_PORT=8000 "
    "ADMIN_BACKEND_HOST=admin ADMIN_BACKEND_PORT=8001\n"
    'CMD ["sh", "start.sh"]\n',
    "common/lib.sh": "#!/bin/sh\nrender_sites() {\n\tfor app in WEB ADMIN; do\n"
    "\t\teval export BACKEND_HOST=\\$${app}_BACKEND_HOST\n"
    '\t\teval "export BACKEND_PORT=\\${${app}_BACKEND_PORT}"\n'
    "\t\tenvsubst <${1} >/etc/nginx/conf.d/${app}.conf\n\tdone\n}\n",
    "common/start.sh": "#!/bin/sh\nset -e\n. ./lib.sh\n"
    "render_sites /etc/nginx/site.template.conf\nexec nginx -g 'daemon off;'\n",
    "proxy/site.template.conf": "upstream backend {\n    server ${BACKEND_HOST}:${BACKEND_PORT};\n}\n"
    "server {\n    listen 80;\n    location / {\n        uwsgi_pass backend;\n"
    "        include uwsgi_params;\n    }\n}\n",
    "app/Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY app/ /srv/\n"
    'CMD ["uwsgi", "--ini", "/srv/uwsgi.ini"]\n',
    "app/uwsgi.ini": "[uwsgi]\nsocket = :$(APP_PORT)\nprocesses = 2\nmodule = site.wsgi\n",
    "compose.yaml": "services:\n"
    + "".join(
        f"  {name}:\n    build:\n      context: .\n      dockerfile: app/Dockerfile\n"
        f'    environment:\n      APP_PORT: "{port}"\n'
        for name, port in (("web", 8000), ("admin", 8001))
    )
    + "  proxy:\n    build:\n      context: .\n      dockerfile: proxy/Dockerfile\n",
}


def _fronts(root: Path, files: dict[str, str]) -> dict[str, list[str]]:
    """Each compose service's app -> the fronts linked to it, as file:line under `root`."""
    from servertune.check.graph import launches

    result = check_folder(write(root, files))
    return {
        launch.app.container.name: [
            f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    }


def test_a_loop_over_words_renders_the_front_once_per_pass_each_joining_its_own_app(
    tmp_path: Path,
) -> None:
    """`for app in WEB ADMIN; do eval export BACKEND_HOST=\\$${app}_BACKEND_HOST ...;
    envsubst <$1 >conf.d/$app.conf; done`, in a function of a sourced file called with the
    template's path: two rendered fronts, `web:8000` and `admin:8001` (the image's ENV, by
    indirection), each joined to the uWSGI of its own service."""
    assert _fronts(tmp_path, _LOOP_FRONT) == {
        "web": ["proxy/site.template.conf:7"],
        "admin": ["proxy/site.template.conf:7"],
    }


def test_a_loop_over_one_word_renders_one_front_and_joins_that_app_only(tmp_path: Path) -> None:
    """The same loop over `WEB` alone renders the web front only: the admin service stays
    with no front (never joined by a guess at ADMIN_BACKEND_*)."""
    files = dict(_LOOP_FRONT)
    files["common/lib.sh"] = files["common/lib.sh"].replace("WEB ADMIN", "WEB")
    assert _fronts(tmp_path, files) == {"web": ["proxy/site.template.conf:7"], "admin": []}


def test_a_loop_over_a_variable_renders_with_nothing_guessed(tmp_path: Path) -> None:
    """`for app in $APPS` (a list only the running shell knows) is read once, as written:
    the loop variable is not known, so no rendering names a backend and no app is joined."""
    files = dict(_LOOP_FRONT)
    files["common/lib.sh"] = files["common/lib.sh"].replace("WEB ADMIN", "$APPS")
    assert _fronts(tmp_path, files) == {"web": [], "admin": []}


def test_eval_indirection_in_a_loop_sets_the_rendered_servers_config(tmp_path: Path) -> None:
    """`eval "export PROCS=\\${${role}_PROCS}"` in a loop pass is the variable the role names
    (PRIMARY_PROCS=5 from the image's ENV): the uwsgi config envsubst renders in that pass
    holds processes = 5."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _IMAGE.replace("ENV UWSGI_PROCESSES=6", "ENV PRIMARY_PROCS=5"),
            "uwsgi.tpl": "[uwsgi]\nhttp-socket = :8000\nprocesses = ${PROCS}\n",
            "start.sh": "#!/bin/sh\nfor role in PRIMARY; do\n"
            '  eval "export PROCS=\\${${role}_PROCS}"\n'
            "  envsubst < uwsgi.tpl > /tmp/$role.ini\ndone\n"
            "exec uwsgi --ini /tmp/PRIMARY.ini\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:5", "start.sh:6", "uwsgi.tpl:2"], "uwsgi", 5)]


def test_a_config_in_the_installed_package_is_the_repository_file(tmp_path: Path) -> None:
    """`-c /venv/lib/python3.12/site-packages/shop/api/gunicorn_conf.py`, the project's package
    installed into the image (`COPY shop shop` then `pip install .` in the builder stage, the
    venv copied on): the config is shop/api/gunicorn_conf.py of the repository (5 workers)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim AS builder\nWORKDIR /app\nCOPY shop shop\n"
            "COPY pyproject.toml .\nRUN python -m venv /venv && /venv/bin/pip install .\n"
            "FROM python:3.12-slim\nCOPY --from=builder /venv /venv\n"
            'CMD ["gunicorn", "-c", "/venv/lib/python3.12/site-packages/shop/api/gunicorn_conf.py",'
            ' "shop.api:app"]\n',
            "pyproject.toml": "[project]\nname = 'shop'\n",
            "shop/api/gunicorn_conf.py": "bind = '0.0.0.0:8000'\nworkers = 5\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:8", "shop/api/gunicorn_conf.py:1"], "gunicorn", 5)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]
