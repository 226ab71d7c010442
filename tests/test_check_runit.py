"""runit's service folders as launches of the image that runs them: phusion/baseimage's
`my_init` and `runsvdir DIR` run each `DIR/NAME/run` script the image holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _tree(root: Path, folder: str, command: str) -> None:
    _write(
        root,
        {
            "Dockerfile": f"FROM phusion/baseimage:noble-1.0.2\nCOPY services {folder}/\n"
            f"COPY app.ini /etc/app.ini\nCMD {command}\n",
            "services/nginx/run": "#!/bin/sh\nexec /usr/sbin/nginx -g 'daemon off;'\n",
            "services/web/run": "#!/bin/sh\nset -e\nmkdir -p /var/log/app\n"
            "exec uwsgi --ini /etc/app.ini\n",
            "app.ini": "[uwsgi]\nmodule = app\nprocesses = 2\nthreads = 2\n"
            "socket = /run/app.sock\n",
        },
    )


@pytest.mark.parametrize(
    ("folder", "command"),
    [
        ("/etc/service", '["/sbin/my_init"]'),
        ("/etc/sv", '["runsvdir", "-P", "/etc/sv"]'),
    ],
)
def test_run_script_of_a_service_folder_is_the_images_launch(
    tmp_path: Path, folder: str, command: str
) -> None:
    """`COPY services /etc/service/` with `CMD ["/sbin/my_init"]` (runit under phusion's
    init, seen in ThePalaceProject/circulation), or `runsvdir -P /etc/sv`: the service whose
    run script starts uWSGI is the image's launch, Dockerfile -> run -> app.ini, the nginx
    service beside it no reason to say the image starts no server."""
    _tree(tmp_path, folder, command)
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.relative_to(tmp_path).as_posix() for at in launch.chain] == [
        "Dockerfile",
        "services/web/run",
        "app.ini",
    ]
    assert (launch.app.workers.value, launch.app.threads.value) == (2, 2)
    assert not [n for n in result.notes if n.at.file.name == "Dockerfile"]


def test_my_init_skipping_runit_starts_no_service(tmp_path: Path) -> None:
    """`my_init --skip-runit -- bash -c ./job`: runit is not started, so the service
    folders' run scripts are no launch of this image (read on their own, they still are)."""
    _tree(tmp_path, "/etc/service", '["/sbin/my_init", "--skip-runit", "--", "bash", "-c", "x"]')
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.chain[0].file.name == "run"


def test_my_init_startup_script_that_runs_a_server_is_the_launch(tmp_path: Path) -> None:
    """phusion's `my_init` runs each `/etc/my_init.d/*` script, in name order and to its end,
    before runit: a startup script that runs uWSGI in the foreground (behind phusion's
    `/sbin/setuser USER`) is the image's launch, Dockerfile -> script -> ini, never "runs
    /sbin/my_init, which starts no server". Seen in pypicloud-docker's py3-baseimage."""
    _write(
        tmp_path,
        {
            "Dockerfile": "FROM phusion/baseimage:focal-1.1.0\n"
            "ADD app-uwsgi.sh /etc/my_init.d/app-uwsgi.sh\nADD app.ini /etc/app/app.ini\n"
            'ENV UWSGI_USER app\nCMD ["/sbin/my_init"]\n',
            "app-uwsgi.sh": '#!/bin/sh\nif [ "$UWSGI_USER" = "root" ]; then\n'
            "  uwsgi --ini /etc/app/app.ini\nelse\n"
            '  /sbin/setuser "$UWSGI_USER" uwsgi --ini /etc/app/app.ini\nfi\n',
            "app.ini": "[uwsgi]\nmodule = app\nprocesses = 3\nhttp-socket = :8080\n",
        },
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    started = launches(result.apps, result.links, result.balancer_links)
    chains = [[at.file.relative_to(tmp_path).as_posix() for at in x.chain] for x in started]
    assert ["Dockerfile", "app-uwsgi.sh", "app.ini"] in chains
    assert not [n for n in result.notes if n.at.file.name == "Dockerfile"]


def test_runsv_runs_the_run_script_of_the_one_folder_it_is_given(tmp_path: Path) -> None:
    """`CMD ["runsv", "/etc/service/web"]` (runit's runner of a single service, which starts
    `DIR/run`) is the image's launch through that folder's run script, Dockerfile -> run ->
    app.ini, never "runs /etc/service/web, not in the build context"; `runsv` of the nginx
    folder starts no app server of this image (the web run script is then read on its own)."""
    _tree(tmp_path, "/etc/service", '["runsv", "/etc/service/web"]')
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.relative_to(tmp_path).as_posix() for at in launch.chain] == [
        "Dockerfile",
        "services/web/run",
        "app.ini",
    ]
    assert not [n for n in result.notes if n.at.file.name == "Dockerfile"]
    _tree(tmp_path, "/etc/service", '["runsv", "/etc/service/nginx"]')
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.chain[0].file.name == "run"
