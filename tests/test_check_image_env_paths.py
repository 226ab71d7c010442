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
