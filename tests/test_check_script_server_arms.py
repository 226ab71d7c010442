"""A launch script that starts one of several server programs by a variable no file read sets
shows each other program's branch as a launch of its own, with the same chain, labelled with
the value that picks it (`when AYON_SERVER_TYPE=granian`); the branch that runs where it is
unset stays the launch it was. Not where a file sets the variable (a Dockerfile's ENV, a
compose service's environment), not for branches that differ in flags only, never for a
developer's reloading branch. Seen in ynput/ayon-backend's start.sh
(`SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}`, then gunicorn or granian). Each repository is
written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launch_json, launches
from tests.folder_support import chains, check_folder, write

_ALONE = (
    "#!/bin/bash\n"
    "SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}\n"
    'if [ $SERVER_TYPE = "gunicorn" ]; then\n'
    "    exec gunicorn -k uvicorn.workers.UvicornWorker -w 2 -b :5000 app:app\n"
    'elif [ $SERVER_TYPE = "granian" ]; then\n'
    "    exec granian --interface asgi --host 0.0.0.0 --port 5000 app:app\n"
    "else\n"
    "    exit 1\n"
    "fi\n"
)
_DOCKERFILE = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nCMD ["/app/docker/start.sh"]\n'
_CASE = (
    "#!/bin/sh\n"
    'case "$APP_SERVER" in\n'
    "  gunicorn|'') exec gunicorn -w 3 app:app ;;\n"
    "  uvicorn) exec uvicorn app:app --workers 2 ;;\n"
    "esac\n"
)


def _when(root: Path) -> list[tuple[list[str], str, str | None]]:
    result = check_folder(root)
    return [
        (
            [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.chain],
            launch.app.kind,
            launch_json(launch).get("when"),
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_a_script_read_alone_shows_the_branch_its_variable_picks(tmp_path: Path) -> None:
    """Read alone, the gunicorn branch (AYON_SERVER_TYPE unset) is the launch it was, without
    a `when`; the granian branch is a launch too, `when AYON_SERVER_TYPE=granian`: the name
    the deployment sets, not the script's own SERVER_TYPE."""
    root = write(tmp_path, {"start.sh": _ALONE})
    assert _when(root) == [
        (["start.sh:4"], "gunicorn", None),
        (["start.sh:6"], "granian", "AYON_SERVER_TYPE=granian"),
    ]
    result = check_folder(root)
    gunicorn, _ = launches(result.apps, result.links, result.balancer_links)
    assert "when" not in launch_json(gunicorn)


def test_a_case_arm_of_an_image_s_script_is_a_launch_with_the_image_s_chain(
    tmp_path: Path,
) -> None:
    """`case "$APP_SERVER" in gunicorn|'') ...;; uvicorn) ...;;` run by an image's CMD, the
    image setting no APP_SERVER: the uvicorn arm is a launch with the same Dockerfile step,
    `when APP_SERVER=uvicorn`."""
    root = write(tmp_path, {"Dockerfile": _DOCKERFILE, "docker/start.sh": _CASE})
    assert _when(root) == [
        (["Dockerfile:4", "docker/start.sh:3"], "gunicorn", None),
        (["Dockerfile:4", "docker/start.sh:4"], "uvicorn", "APP_SERVER=uvicorn"),
    ]


def test_a_variable_a_file_sets_keeps_the_one_branch_it_picks(tmp_path: Path) -> None:
    """The image's `ENV APP_SERVER=gunicorn`, or a compose service's `environment` setting
    it, decides the `case`: only its branch is a launch, as before."""
    env = write(
        tmp_path / "env",
        {
            "Dockerfile": _DOCKERFILE.replace("COPY", "ENV APP_SERVER=gunicorn\nCOPY"),
            "docker/start.sh": _CASE,
        },
    )
    assert [(c[-1], s) for c, s, _ in chains(check_folder(env), env)] == [
        ("docker/start.sh:3", "gunicorn")
    ]
    compose = write(
        tmp_path / "compose",
        {
            "Dockerfile": _DOCKERFILE,
            "docker/start.sh": _CASE,
            "compose.yaml": "services:\n  web:\n    build: .\n"
            "    environment:\n      APP_SERVER: gunicorn\n",
        },
    )
    assert [(c[-1], s) for c, s, _ in chains(check_folder(compose), compose)] == [
        ("docker/start.sh:3", "gunicorn")
    ]


def test_branches_of_one_program_or_a_reloading_one_are_no_launch(tmp_path: Path) -> None:
    """A branch that runs the same program with other flags (`-w 8` for a big host), or a
    developer's `uvicorn --reload`, is no launch of its own: only the unset branch's."""
    script = (
        "#!/bin/sh\n"
        'if [ "$SIZE" = "big" ]; then\n'
        "  exec gunicorn -w 8 app:app\n"
        'elif [ "$MODE" = "dev" ]; then\n'
        "  exec uvicorn --reload app:app\n"
        "else\n"
        "  exec gunicorn -w 2 app:app\n"
        "fi\n"
    )
    root = write(tmp_path, {"start.sh": script})
    assert _when(root) == [(["start.sh:7"], "gunicorn", None)]
