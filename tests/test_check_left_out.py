"""A front config the compose stack leaves out stays unlinked for the right reason: the nginx
service mounts its siblings one by one, and no image copies it by name, folder or wildcard.
The app image's `COPY . /app` holds every file of the repository (the build context is inside
the checked tree here) and deploys none of them as nginx's. Fixture:
tests/data/repos/chain-whole-context."""

from __future__ import annotations

import shutil
from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "chain-whole-context"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def _fronts(result: CheckResult, root: Path) -> list[list[str]]:
    return [
        [at.file.relative_to(root).as_posix() for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_config_the_stack_does_not_mount_is_no_front_though_copy_dot_holds_it() -> None:
    """nginx mounts http.conf and locations.conf; test_server.conf, beside them, is held by
    the app image only through `COPY . /app`: the app is behind the mounted locations, and
    the test server's 5 s timeout is judged against nothing."""
    result = _folder(ROOT)
    assert _fronts(result, ROOT) == [["configuration/nginx/locations.conf"]]
    assert not [f for f in result.findings if f.at.file.name == "test_server.conf"]


def test_config_an_image_copies_by_its_folder_is_still_a_candidate(tmp_path: Path) -> None:
    """The counterpart: an image that copies the nginx folder by name deploys its files, so
    test_server.conf is not left out (the host name then reaches the app through it too)."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT, root)
    dockerfile = root / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text().replace(
            "COPY . /app\n", "COPY . /app\nCOPY configuration/nginx/ /etc/nginx/conf.d/\n"
        )
    )
    result = _folder(root)
    fronts = {front for chain in _fronts(result, root) for front in chain}
    assert "configuration/nginx/test_server.conf" in fronts
