"""Launches check does not follow, told apart from launches of nothing: a project's own
launcher of a server (it names an address or a listening option, runs a `runserver`-like
subcommand, or is a console script the project's packaging declares) is "not followed", at
its line; a worker or a job is still "starts no server". Fixtures under tests/data/repos/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.model import Location
from servertune.check.output import format_json, format_sarif
from servertune.machine import Machine

REPOS = Path(__file__).parent / "data" / "repos"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
OWN = REPOS / "chain-own-launcher"


def _folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def _notes(root: Path) -> dict[str, tuple[str, int | None, str]]:
    """Each note by its file (relative to `root`): kind, line, message."""
    return {
        n.at.file.relative_to(root).as_posix(): (n.kind, n.at.line, n.message)
        for n in _folder(root).notes
    }


def test_own_launcher_with_a_listening_option_is_not_followed_at_its_line() -> None:
    """`sh -c "shop migrate && shop start --ini ... --port $PORT"`: `--port` says the
    command listens, so the image's CMD is "not followed" (the server `shop` builds in its
    code is not a command line check reads), at the CMD's line, never "starts no server"."""
    kind, line, message = _notes(OWN)["Dockerfile"]
    assert (kind, line) == ("not-followed", 6)
    assert "'shop start --ini /app/shop.ini --port $PORT'" in message
    assert "it takes --port" in message
    assert "check reads gunicorn, uvicorn, granian and uWSGI command lines" in message


def test_console_script_the_packaging_declares_is_not_followed() -> None:
    """`web: shopctl`, with `shopctl = shop.cli:main` under setup.cfg's console_scripts: the
    project's own command, named with the line that declares it."""
    kind, line, message = _notes(OWN)["Procfile"]
    assert (kind, line) == ("not-followed", 1)
    assert f"declared at {OWN / 'setup.cfg'}:6" in message


def test_script_ending_in_runserver_on_an_address_is_not_followed() -> None:
    """`shop runserver 0.0.0.0:8000` as a script's last line: the subcommand and the
    address say it serves; the note is at that line."""
    kind, line, message = _notes(OWN)["bin/run.sh"]
    assert (kind, line) == ("not-followed", 4)
    assert "'runserver'" in message


def test_files_reaching_a_launcher_through_others_do_not_say_starts_no_server() -> None:
    """The compose service built from the Dockerfile and the supervisord program running
    bin/run.sh (held at /app/bin/run.sh through `COPY . /app`) stop where their chain does:
    no "starts no server" for them. The worker image, whose command names no address, no
    listening option and no console script, still starts no server, as does the minio
    service of deploy/storage.yaml (below)."""
    result = _folder(OWN)
    read = {p.relative_to(OWN).as_posix() for p in result.files}
    assert {"compose.yaml", "deploy/supervisord.conf"} <= read
    serverless = {
        n.at.file.relative_to(OWN).as_posix() for n in result.notes if n.kind == "starts-no-server"
    }
    assert serverless == {"worker/Dockerfile", "deploy/storage.yaml"}
    assert not result.errors
    (alone,) = check_files([OWN / "compose.yaml"], machine=MACHINE).notes
    assert (alone.kind, alone.at) == ("not-followed", Location(OWN / "Dockerfile", 6))
    with_image = check_files(
        [OWN / "deploy" / "supervisord.conf", OWN / "Dockerfile"], machine=MACHINE
    )
    # The program's chain stops at the script's last line, which the supervisord file says.
    assert {(n.kind, n.at) for n in with_image.notes} == {
        ("not-followed", Location(OWN / "Dockerfile", 6)),
        ("not-followed", Location(OWN / "bin" / "run.sh", 4)),
    }


def test_not_followed_launchers_are_in_json_and_sarif_coverage() -> None:
    """`--format json` and SARIF carry the same notes: kind `not-followed`, at the line."""
    result = _folder(OWN)
    coverage = json.loads(format_json(result))["coverage"]
    at = {(Path(c["file"]).name, c["line"]) for c in coverage if c["kind"] == "not-followed"}
    assert {("Dockerfile", 6), ("Procfile", 1), ("run.sh", 4)} <= at
    (run,) = json.loads(format_sarif(result))["runs"]
    (invocation,) = run["invocations"]
    ids = [n["descriptor"]["id"] for n in invocation["toolExecutionNotifications"]]
    assert ids.count("not-followed") == 3
    assert ids.count("starts-no-server") == 2


def test_service_of_an_image_not_built_here_runs_that_images_program() -> None:
    """`image: minio/minio` with `command: server /data --console-address ":9001"`: the
    command is the arguments of the image's own program, a third party's server, so the
    compose file still starts no server check reads (no launcher of the project's)."""
    (note,) = check_files([OWN / "deploy" / "storage.yaml"], machine=MACHINE).notes
    assert note.kind == "starts-no-server"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        (
            "setup.py",
            (
                "from setuptools import setup\n\nsetup(\n    name='shop',\n"
                "    entry_points={'console_scripts': [\n        'shopd = shop.main:run',\n"
                "    ]},\n)\n"
            ),
            6,
        ),
        (
            "pyproject.toml",
            '[project]\nname = "shop"\n\n[project.scripts]\nshopd = "shop.main:run"\n',
            5,
        ),
    ],
)
def test_console_script_is_found_in_each_packaging_file(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    """`web: shopd`, declared in setup.py's `entry_points` or pyproject.toml's
    `[project.scripts]` (its module not here): not followed, naming the declaring line."""
    (tmp_path / name).write_text(text)
    (tmp_path / "Procfile").write_text("web: shopd\n")
    (note,) = _folder(tmp_path).notes
    assert note.kind == "not-followed"
    assert f"declared at {tmp_path / name}:{line}" in note.message


def test_undeclared_program_with_no_listening_sign_starts_no_server(tmp_path: Path) -> None:
    """The same `web: shopd` with no packaging file declaring it: nothing says it serves."""
    (tmp_path / "Procfile").write_text("web: shopd\n")
    (note,) = _folder(tmp_path).notes
    assert note.kind == "starts-no-server"


def test_program_running_a_script_not_here_is_not_followed(tmp_path: Path) -> None:
    """A supervisord program `sh -c "./bin/docker-entrypoint-api.sh"` whose script is copied
    from another image (not among the files) is "not followed" at its line, naming the
    script: what it starts is not known; a program running `celery` still starts no server."""
    conf = tmp_path / "supervisor.conf"
    conf.write_text(
        "[supervisord]\nnodaemon=true\n\n[program:api]\ndirectory=/app/backend\n"
        'command=sh -c "./bin/docker-entrypoint-api.sh"\n\n'
        "[program:worker]\ncommand=celery -A app worker\n"
    )
    kind, line, message = _notes(tmp_path)["supervisor.conf"]
    assert (kind, line) == ("not-followed", 6)
    assert "runs ./bin/docker-entrypoint-api.sh, a script not among the files read" in message
    (tmp_path / "supervisor.conf").write_text("[program:worker]\ncommand=celery -A app worker\n")
    assert _notes(tmp_path)["supervisor.conf"][0] == "starts-no-server"
