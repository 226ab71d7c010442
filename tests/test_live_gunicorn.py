"""gunicorn follows its cgroup's CPU limit (servertune.live.gunicorn's when_ready hook): a real
arbiter in a real child cgroup whose quota the test changes, under load."""

from __future__ import annotations

from pathlib import Path

from tests.live_support import (
    INTERVAL_S,
    WINDOW_S,
    children,
    follow_2_1_2_then_flap,
    real_cgroup,
)
from tests.support import accepts, free_port, running, tool, wait_for

APP = """
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
"""

CONF = """
from pathlib import Path
from servertune.live.cgroup import CgroupReader
from servertune.live.gunicorn import follow_cpu_limit

bind = ["127.0.0.1:{port}"]
workers = 2
control_socket_disable = True
graceful_timeout = 10
errorlog = "{log}"
loglevel = "info"
when_ready = follow_cpu_limit(
    window_s={window}, interval_s={interval},
    cgroup=CgroupReader(Path("{directory}"), mount_root=Path("{mount}")),
)
"""


def test_gunicorn_workers_follow_a_real_cgroup_2_1_2_and_ignore_flapping(tmp_path: Path) -> None:
    """A real child cgroup: workers go 2 -> 1 -> 2 with the quota, each after the window, no
    request fails meanwhile, and a quota flapping faster than the window changes nothing."""
    (tmp_path / "app.py").write_text(APP)
    port, log = free_port(), tmp_path / "gunicorn.log"
    with real_cgroup() as tree:
        tree.set_cores(2)
        conf = CONF.format(
            port=port, log=log, window=WINDOW_S, interval=INTERVAL_S,
            directory=tree.directory, mount=tree.mount,
        )  # fmt: skip
        (tmp_path / "gunicorn.conf.py").write_text(conf)
        # The arbiter enters the cgroup before it forks, so its workers are under the quota.
        command = tree.child.enter_command(f"{tool('gunicorn')} -c gunicorn.conf.py app:app")
        with running(command, tmp_path) as arbiter:
            wait_for(lambda: accepts(f"127.0.0.1:{port}"), what="gunicorn")
            assert arbiter.pid in tree.child.pids()
            load = follow_2_1_2_then_flap(tree, lambda: len(children(arbiter.pid)), log, port)
    assert load.failures == [], load.failures[:5]
    assert load.ok > 100
