"""The generated configs really serve: uWSGI and gunicorn behind nginx on 127.0.0.1, one worker per socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.render import TARGETS
from servertune.sizing import make_plan
from servertune.workload import Workload

from .support import (
    accepts,
    body_of,
    free_base_port,
    free_ports,
    http_get,
    running,
    tool,
    uwsgi_request,
    wait_for,
)

WORKERS = 3


def _workload(pid_app: Path, tmp_path: Path, *, unix: bool) -> Workload:
    return Workload(
        cores=WORKERS,
        app="pidapp:application",
        app_dir=str(pid_app),
        base_port=free_base_port(WORKERS),
        listen_port=free_ports(1)[0],
        socket_dir=str(tmp_path / "sock") if unix else None,
        # nginx started by root runs its workers as nobody, who may not open 660 sockets owned by
        # root in a 0700 test directory; production sets the real nginx user here.
        nginx_user="root" if unix else None,
    )


def _nginx(conf: Path) -> list[str]:
    return [tool("nginx"), "-p", str(conf.parent), "-c", str(conf), "-g", "daemon off;"]


@pytest.mark.parametrize("unix", [False, True], ids=["tcp", "unix"])
def test_uwsgi_maps_one_worker_per_socket_behind_nginx(
    pid_app: Path, tmp_path: Path, unix: bool
) -> None:
    """Each uWSGI socket is served by its own worker pid, and nginx least_conn reaches every worker."""
    workload = _workload(pid_app, tmp_path, unix=unix)
    if unix:
        (tmp_path / "sock").mkdir()
    plan = make_plan(workload)
    for name in ("uwsgi", "nginx"):
        (tmp_path / TARGETS[name].filename).write_text(TARGETS[name].render(plan))
    ini, conf = tmp_path / TARGETS["uwsgi"].filename, tmp_path / TARGETS["nginx"].filename
    front = f"127.0.0.1:{workload.listen_port}"
    with running([tool("uwsgi"), "--ini", str(ini)], tmp_path), running(_nginx(conf), tmp_path):
        for socket_ in plan.sockets:
            wait_for(lambda s=socket_.address: accepts(s), what=f"uWSGI socket {socket_.address}")
        wait_for(lambda: accepts(front), what="nginx")
        per_socket = [body_of(uwsgi_request(s.address)) for s in plan.sockets]
        # Each socket answers from one worker only: ask twice and get the same pid.
        assert per_socket == [body_of(uwsgi_request(s.address)) for s in plan.sockets]
        assert len(set(per_socket)) == WORKERS
        through_nginx = {body_of(http_get(front)) for _ in range(4 * WORKERS)}
        assert through_nginx == set(per_socket)
        if unix:
            assert all(oct(Path(s.address).stat().st_mode)[-3:] == "660" for s in plan.sockets)


@pytest.mark.parametrize("unix", [False, True], ids=["tcp", "unix"])
def test_gunicorn_per_worker_layout_behind_nginx(pid_app: Path, tmp_path: Path, unix: bool) -> None:
    """N single-worker gunicorns, one per socket, each a distinct pid, all reached through nginx."""
    workload = _workload(pid_app, tmp_path, unix=unix)
    if unix:
        (tmp_path / "sock").mkdir()
    plan = make_plan(workload)
    for name in ("gunicorn-per-worker", "nginx-gunicorn"):
        (tmp_path / TARGETS[name].filename).write_text(TARGETS[name].render(plan))
    conf_py = tmp_path / TARGETS["gunicorn-per-worker"].filename
    conf = tmp_path / TARGETS["nginx-gunicorn"].filename
    front = f"127.0.0.1:{workload.listen_port}"
    gunicorn = [tool("gunicorn"), "-c", str(conf_py)]
    with (
        running(gunicorn, tmp_path, {"SERVERTUNE_WORKER": "0"}),
        running(gunicorn, tmp_path, {"SERVERTUNE_WORKER": "1"}),
        running(gunicorn, tmp_path, {"SERVERTUNE_WORKER": "2"}),
        running(_nginx(conf), tmp_path),
    ):
        for socket_ in plan.sockets:
            wait_for(lambda s=socket_.address: accepts(s), what=f"gunicorn {socket_.address}")
        wait_for(lambda: accepts(front), what="nginx")
        per_socket = [body_of(http_get(s.address)) for s in plan.sockets]
        assert len(set(per_socket)) == WORKERS
        through_nginx = {body_of(http_get(front)) for _ in range(4 * WORKERS)}
        assert through_nginx == set(per_socket)
        if unix:
            # No rights for other local users: nobody may reach the app around nginx.
            assert all(Path(s.address).stat().st_mode & 0o007 == 0 for s in plan.sockets)


def test_gunicorn_shared_socket_layout_serves(pid_app: Path, tmp_path: Path) -> None:
    """The shared-socket gunicorn config starts N workers on one socket and answers."""
    workload = _workload(pid_app, tmp_path, unix=False)
    plan = make_plan(workload)
    conf_py = tmp_path / "gunicorn.conf.py"
    conf_py.write_text(TARGETS["gunicorn"].render(plan))
    with running([tool("gunicorn"), "-c", str(conf_py)], tmp_path):
        wait_for(lambda: accepts(plan.shared_socket.address), what="gunicorn")
        pids = {body_of(http_get(plan.shared_socket.address)) for _ in range(10)}
        assert len(pids) in range(1, WORKERS + 1)
