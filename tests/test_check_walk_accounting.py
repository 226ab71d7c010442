"""Every file a folder walk finds is accounted for once in its coverage summary: read, a
template skipped, named as no reader's, or ignored (#44: "a file of no kind check reads is
skipped in a folder walk and named once in the coverage summary"); none vanishes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import Discovery, discover
from servertune.machine import Machine
from tests.folder_support import chains, write

REPOS = Path(__file__).parent / "data" / "repos"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: A runit image's services as seen in metabrainz/listenbrainz-server: each service's `run`
#: kept in the repository as `NAME.service` (a bash script, not a systemd unit), its `finish`
#: as `NAME.finish`, and an `rc.local` the base image runs at boot.
RUNIT_SERVICES = {
    "Dockerfile": (
        "FROM python:3.12\n"
        "COPY docker/services/web/web.service /etc/service/web/run\n"
        "COPY docker/services/web/web.finish /etc/service/web/finish\n"
        "COPY docker/rc.local /etc/rc.local\n"
        "COPY docker/services/web/gunicorn.conf.py /etc/gunicorn.conf.py\n"
        'CMD ["runsvdir", "/etc/service"]\n'
    ),
    "docker/services/web/web.service": (
        "#!/bin/bash\nsleep 1\nexec gunicorn -c /etc/gunicorn.conf.py app:app\n"
    ),
    "docker/services/web/web.finish": '#!/bin/bash\necho "web exited with $1"\nsleep 10\n',
    "docker/services/web/gunicorn.conf.py": 'bind = "0.0.0.0:8000"\nworkers = 4\n',
    "docker/rc.local": "#!/bin/bash\nrm -f /etc/service/web/down\n",
}


def _walked(result: CheckResult) -> Discovery:
    """The result's one folder walk, as its coverage summary reports it."""
    (walk,) = result.discovered
    return walk


def _buckets(walk: Discovery) -> list[str]:
    """Every file the summary names or counts, as paths relative to the walk's root."""
    return [
        os.path.relpath(p, walk.root)
        for p in (*walk.files, *(t[0] for t in walk.templates), *walk.unclaimed)
    ]


def test_runit_service_scripts_finish_scripts_and_rc_local_are_read(tmp_path: Path) -> None:
    """A `web.service` that is a shell script (a shebang, no [Unit]/[Service] section) is read
    as a script, and a `web.finish` and an `rc.local` in a deployment folder are read as the
    scripts their shebangs say: every file of the folder is in exactly one of read, template
    skipped, unclaimed, ignored, and the summary's counts add up to the files found."""
    root = write(tmp_path, RUNIT_SERVICES)
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    summary = _walked(result)
    accounted = _buckets(summary)
    assert len(accounted) == len(set(accounted))
    assert sorted(accounted) == sorted(RUNIT_SERVICES)
    assert summary.ignored == 0
    assert sorted(os.path.relpath(p, root) for p in summary.files) == sorted(RUNIT_SERVICES)
    # The launch still runs through the service's script to gunicorn and its config.
    ((chain, kind, workers),) = chains(result, root)
    assert chain[1] == "docker/services/web/web.service:3"
    assert (kind, workers) == ("gunicorn", 4)


def test_a_unit_named_service_with_sections_stays_a_systemd_unit(tmp_path: Path) -> None:
    """Only a shebang with no section makes a `.service` a script: a unit whose comment
    mentions a shebang-like line, or a unit with [Service], is read as systemd's."""
    from servertune.check.readers import reader_for

    unit = "[Unit]\nDescription=web\n[Service]\nExecStart=/usr/bin/gunicorn app:app\n"
    path = tmp_path / "web.service"
    assert reader_for(path, unit).kind == "systemd"
    assert reader_for(path, "#!/bin/bash\nexec gunicorn app:app\n").kind == "script"


def _walked_files(root: Path) -> tuple[int, int]:
    """How many files under `root` a walk can find (not in a `.gitignore`d or skipped place)
    and how many entries it ignores, counted the way `discover` walks."""
    from servertune.check import discover as walk_module

    found = ignored = 0
    for item in walk_module._walk(root, ()):
        if isinstance(item, int):
            ignored += item
        else:
            found += 1
    return found, ignored


@pytest.mark.parametrize(
    "repo", sorted(p.name for p in REPOS.iterdir() if p.is_dir()), ids=lambda name: name
)
def test_every_deployment_file_of_a_test_repository_is_accounted_once(repo: str) -> None:
    """Over the test repositories: no file is counted twice in a walk's summary, and every
    file a launch follows or the walk opened as a script (a shebang) is among those
    counted, so read + templates + unclaimed + ignored never falls short of them."""
    root = REPOS / repo
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    summary = _walked(result)
    accounted = _buckets(summary)
    assert len(accounted) == len(set(accounted))
    found, ignored = _walked_files(root)
    assert summary.ignored == ignored
    assert len(accounted) + len(summary.passed) <= found
    scripts = {
        os.path.relpath(p, root)
        for p in root.rglob("*")
        if p.is_file() and p.read_bytes()[:2] == b"#!"
    }
    assert not scripts - set(accounted) - {os.path.relpath(p, root) for p in summary.passed}
