"""Paths an image builds from its own `ENV`: the command string a shell runs names a script
by `${SRC_DIR}/docker/init.bash`, which is the file the image's `COPY . "${SRC_DIR}"` put
there, so the script is followed (seen in kobotoolbox/kobocat)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _chains(root: Path) -> tuple[list[list[str]], list[str]]:
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)
    found = launches(result.apps, result.links, result.balancer_links)
    chains = [[at.file.relative_to(root).as_posix() for at in f.chain] for f in found]
    return chains, [n.message for n in result.notes]


def test_env_path_in_a_command_string_is_the_copied_script(tmp_path: Path) -> None:
    """`CMD ["/bin/bash", "-c", "exec ${SRC_DIR}/docker/start.bash"]` under `ENV
    SRC_DIR=/srv/src/app` and `COPY . "${SRC_DIR}"`: the shell expands the image's variable,
    so the command runs docker/start.bash of the build context: Dockerfile -> start.bash,
    never "runs ${SRC_DIR}/docker/start.bash, a script not among the files read"."""
    _write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nENV SRC_DIR=/srv/src/app\n"
            'COPY . "${SRC_DIR}"\n'
            'CMD ["/bin/bash", "-c", "exec ${SRC_DIR}/docker/start.bash"]\n',
            "docker/start.bash": "#!/bin/bash\nexec gunicorn -w 3 -b :8000 app.wsgi\n",
        },
    )
    chains, notes = _chains(tmp_path)
    assert chains == [["Dockerfile", "docker/start.bash"]]
    assert not [n for n in notes if "not among the files read" in n]


def _runit_tree(root: Path, command: str) -> None:
    _write(
        root,
        {
            "Dockerfile": "FROM python:3.12\nENV SRC_DIR=/srv/src/app \\\n"
            "    SERVICES_DIR=/etc/service\n"
            "RUN apt-get install -y runit && mkdir -p ${SERVICES_DIR}/web\n"
            'COPY . "${SRC_DIR}"\n'
            'RUN ln -s "${SRC_DIR}/docker/run_web.bash" "${SERVICES_DIR}/web/run" && \\\n'
            '    ln -s "${SRC_DIR}/docker/run_worker.bash" "${SERVICES_DIR}/worker/run"\n'
            f"CMD {command}\n",
            "docker/init.bash": "#!/bin/bash\nset -e\npython manage.py migrate --noinput\n"
            'exec /usr/bin/runsvdir "${SERVICES_DIR}"\n',
            "docker/run_web.bash": "#!/bin/bash\nexec uwsgi --ini ${SRC_DIR}/docker/uwsgi.ini\n",
            "docker/run_worker.bash": "#!/bin/bash\nexec celery -A app worker\n",
            "docker/uwsgi.ini": "[uwsgi]\nmodule = app.wsgi\nprocesses = 3\n"
            "socket = 0.0.0.0:8001\n",
        },
    )


def test_runit_service_linked_in_and_started_by_the_entrypoint_script(tmp_path: Path) -> None:
    """`RUN ln -s "${SRC_DIR}/docker/run_web.bash" "${SERVICES_DIR}/web/run"` installs a
    runit service by a link, and the image's script ends in `exec runsvdir
    "${SERVICES_DIR}"`: runsvdir runs the linked run script, so the launch is Dockerfile ->
    init.bash -> run_web.bash -> uwsgi.ini, and the Dockerfile's command is no script "not
    among the files read"."""
    _runit_tree(tmp_path, '["/bin/bash", "-c", "exec ${SRC_DIR}/docker/init.bash"]')
    chains, notes = _chains(tmp_path)
    assert chains == [["Dockerfile", "docker/init.bash", "docker/run_web.bash", "docker/uwsgi.ini"]]
    assert not [n for n in notes if "not among the files read" in n]


def test_runit_service_linked_in_under_the_images_own_runsvdir(tmp_path: Path) -> None:
    """`CMD ["runsvdir", "/etc/service"]` with the service's run script a link made by `RUN
    ln -s` to a copied file: the link is a service folder's `run` as a COPY to it is."""
    _runit_tree(tmp_path, '["runsvdir", "-P", "/etc/service"]')
    chains, _ = _chains(tmp_path)
    assert chains == [["Dockerfile", "docker/run_web.bash", "docker/uwsgi.ini"]]
