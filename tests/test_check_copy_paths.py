"""Where a Dockerfile's COPY puts a file, as Docker does: from a build context up to three
folders above the Dockerfile (`extras/docker/production/Dockerfile` built from the root), with
its source and destination written through `ARG` defaults and `ENV` values; and into a folder
the image already has (the WORKDIR) when the destination names it without a trailing slash;
and the service scripts s6-overlay's `/init` finds where the image's COPYs put them.
Fixtures: tests/data/repos/copy-paths, tests/data/repos/s6-init."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "copy-paths"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _folder(name: str) -> CheckResult:
    root = ROOT / name
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def _chain(result: CheckResult, root: Path) -> list[list[str]]:
    return [
        [at.file.relative_to(root).as_posix() for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_copy_from_a_context_three_folders_up_through_arg_and_env() -> None:
    """`COPY ${DOCKER_DIR}/entrypoint.sh $APP_HOME/entrypoint.sh` then
    `CMD ["/home/wger/entrypoint.sh"]`: the image's command is the repository's script, and
    its gunicorn without `exec` is a warning (the launcher is shown), not an info."""
    result = _folder("deep")
    assert _chain(result, ROOT / "deep") == [
        ["extras/docker/production/Dockerfile", "extras/docker/production/entrypoint.sh"]
    ]
    assert [f.rule for f in result.findings if f.rule.startswith("entrypoint")] == [
        "entrypoint-without-exec"
    ]


def test_copy_onto_the_workdir_path_lands_inside_it() -> None:
    """`WORKDIR /opt/nautobot` then `COPY docker/uwsgi.ini /opt/nautobot`: the ini is
    /opt/nautobot/uwsgi.ini, the file the CMD's `--ini` names (no config-not-found)."""
    result = _folder("into-workdir")
    assert _chain(result, ROOT / "into-workdir") == [["docker/Dockerfile", "docker/uwsgi.ini"]]
    assert not [n for n in result.notes if n.kind == "config-not-found"]
    assert [a.workers.value for a in result.apps] == [3]


def test_s6_overlay_init_starts_the_service_run_scripts_the_image_copies() -> None:
    """`COPY ./docker/rootfs /` and `ENTRYPOINT ["/init"]`: s6-overlay runs each service's
    `run`; the webserver's granian is the image's, read under its `ENV GRANIAN_WORKERS=3`
    (the worker's celery starts no server)."""
    root = ROOT.parent / "s6-init"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})
    assert _chain(result, root) == [
        ["Dockerfile", "docker/rootfs/etc/s6-overlay/s6-rc.d/svc-webserver/run"]
    ]
    (app,) = result.apps
    assert (app.kind, app.workers.value) == ("granian", 3)
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_compose_image_named_for_the_repository_is_its_dockerfile() -> None:
    """`image: shopco/shop-published-image:latest` with no `build:`, in the repository
    `shop-published-image` whose one Dockerfile sets a command: that service runs it (its
    gunicorn, linked to the service); `minio/minio` and `postgres:16` are other projects'
    images."""
    root = ROOT.parent / "shop-published-image"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.app.container is not None
    assert launch.app.container.name == "web"
    assert [at.file.relative_to(root).as_posix() for at in launch.chain] == [
        "compose.yaml",
        "docker/Dockerfile",
        "docker/start.sh",
    ]


def test_compose_build_target_runs_that_stages_command() -> None:
    """`build: {target: dev}` runs the `dev` stage's `runserver`, not the final stage's
    gunicorn: only the service building the final stage starts gunicorn."""
    root = ROOT.parent / "build-target"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.app.container is not None
    assert launch.app.container.name == "prod"


def test_relative_copy_under_the_base_images_workdir_reaches_the_entrypoint() -> None:
    """No WORKDIR here (the base image's is not known), `COPY ./container/ ./` and
    `ENTRYPOINT ["/usr/local/searxng/entrypoint.sh"]`: the entrypoint is container/
    entrypoint.sh, read under the image's ENV (granian on its GRANIAN_PORT)."""
    result = _folder("base-workdir")
    assert _chain(result, ROOT / "base-workdir") == [["dist.dockerfile", "container/entrypoint.sh"]]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:8080"]


def test_a_copy_is_passed_over_by_its_text_only_where_its_path_cannot_hold_the_file() -> None:
    """Issue 44: a lookup passes over a COPY whose destination cannot hold the file by comparing
    text (paths for every COPY of every lookup were a walk's largest cost); the text test never
    passes over one that `relative_to` would match (the root, `//`, `.` parts, trailing
    slashes, a relative destination)."""
    from pathlib import PurePosixPath

    from servertune.check.dockerfile import _may_hold

    dests = ["/", "//", "/app", "/app/", "/app/.", "//app", "/ap", "app", ".", "./app", "/a/b/"]
    targets = ["/app", "/app/run.sh", "/apple/run.sh", "/a/b/c", "//app/x", "/x", "app/run.sh"]
    for dest in dests:
        for target in targets:
            try:
                PurePosixPath(target).relative_to(PurePosixPath(dest))
            except ValueError:
                continue
            assert _may_hold(dest, str(PurePosixPath(target))), (dest, target)
    assert not _may_hold("/ap", "/apple/run.sh")
    assert not _may_hold("/srv/app/", "/etc/gunicorn/gunicorn.conf.py")
