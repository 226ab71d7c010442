"""Helpers for tests that check a small repository written in the test: write it, walk it as
`servertune check FOLDER` does, and list its launches."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def write(root: Path, files: dict[str, str]) -> Path:
    """`root` holding `files` (relative path -> text), folders made as needed."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def chains(result: CheckResult, root: Path) -> list[tuple[list[str], str, int]]:
    """Each launch as (its chain as file:line relative to `root`, server, workers)."""
    return [
        (
            [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.chain],
            launch.app.kind,
            launch.app.workers.value,
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def fronts(root: Path) -> dict[str, list[str]]:
    """`root` walked and checked: each launch's container (else its first file, relative to
    `root`) -> its fronts as file:line relative to `root`."""
    result = check_folder(root)
    found: dict[str, list[str]] = {}
    for launch in launches(result.apps, result.links, result.balancer_links):
        box = launch.app.container
        key = box.name if box is not None else launch.chain[0].file.relative_to(root).as_posix()
        found[key] = [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
    return found
