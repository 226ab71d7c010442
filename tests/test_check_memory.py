"""`check` and memory: workers x memory per worker against the container's limit (compose
`mem_limit` and `deploy.resources.limits.memory`, Kubernetes `resources.limits.memory`), no
recycling while memory grows, and the plan's memory-aware layout read back clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.machine import Machine
from servertune.sizing import make_plan
from servertune.workload import Workload

MACHINE = Machine(cores=4, cores_source="given")

COMPOSE_MEM_LIMIT = """\
services:
  web:
    image: example/web:1
    command: gunicorn -w 4 proj.wsgi
    cpus: "4"
    mem_limit: 1g
"""

COMPOSE_DEPLOY = """\
services:
  web:
    image: example/web:1
    command: gunicorn -w 4 proj.wsgi
    deploy:
      resources:
        limits: {cpus: "4", memory: 768M}
"""

K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          command: ["gunicorn", "-w", "4", "proj.wsgi"]
          readinessProbe: {httpGet: {path: /health, port: 8000}}
          resources:
            limits: {cpu: "4", memory: 512Mi}
"""


@pytest.mark.parametrize(
    ("name", "text", "limit_mb", "limit_line"),
    [
        ("compose.yaml", COMPOSE_MEM_LIMIT, 1024, 6),
        ("compose.yaml", COMPOSE_DEPLOY, 768, 7),
        ("deploy.yaml", K8S, 512, 15),
    ],
)
def test_the_memory_limit_is_read_from_compose_and_kubernetes(
    name: str, text: str, limit_mb: int, limit_line: int, tmp_path: Path
) -> None:
    """Each spelling of the limit is read in MiB: 4 workers fit at a worker size just under
    90% of it / 4, and are flagged one MiB above, naming the limit's line."""
    path = tmp_path / name
    path.write_text(text)
    fitting = int(limit_mb * 0.9 / 4)
    fine = check_files([path], machine=MACHINE, rss_mb=fitting)
    assert not [f for f in fine.findings if f.rule == "workers-over-memory-limit"]
    over = check_files([path], machine=MACHINE, rss_mb=fitting + 1)
    (finding,) = [f for f in over.findings if f.rule == "workers-over-memory-limit"]
    assert f"memory limit of {limit_mb} MiB" in finding.message
    assert [r.line for r in finding.related] == [limit_line]


GUNICORN_NO_RECYCLING = """\
bind = "127.0.0.1:8001"
workers = 2
threads = 2
"""

GUNICORN_RECYCLING = GUNICORN_NO_RECYCLING + "max_requests = 2000\nmax_requests_jitter = 200\n"


@pytest.mark.parametrize(
    ("config", "growth", "fires"),
    [
        (GUNICORN_NO_RECYCLING, 4.0, True),
        (GUNICORN_NO_RECYCLING, 0.0, False),
        (GUNICORN_NO_RECYCLING, None, False),
        (GUNICORN_RECYCLING, 4.0, False),
    ],
)
def test_no_max_requests_while_memory_grows(
    config: str, growth: float | None, fires: bool, tmp_path: Path
) -> None:
    """Memory growing 4 KiB a request with max_requests unset: a finding whose fix is the
    plan's max_requests and jitter; no growth, or recycling set: nothing."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(config)
    plan = make_plan(
        Workload(cores=2, memory_per_worker_mb=300, memory_growth_kb_per_request=growth)
    )
    result = check_files([path], machine=MACHINE, plan=plan)
    found = [f for f in result.findings if f.rule == "no-recycling-while-memory-grows"]
    assert bool(found) == fires
    if fires:
        (finding,) = found
        assert "grow 4 KiB a request" in finding.message
        assert finding.fix.startswith(f"max_requests = {plan.max_requests}")
        assert "max_requests_jitter = " in finding.fix


def test_more_workers_than_cores_pass_only_when_the_plan_has_them(tmp_path: Path) -> None:
    """6 single-threaded workers on 2 cores: the plan for a workload whose memory holds them
    counts 6 and check agrees; without that plan, more workers than cores is flagged."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text('bind = "127.0.0.1:8001"\nworkers = 6\nthreads = 1\n')
    roomy = make_plan(Workload(cores=2, memory_per_worker_mb=100, memory_limit_mb=2048))
    assert (roomy.processes, roomy.threads) == (6, 1)
    planned = check_files([path], machine=MACHINE, plan=roomy)
    assert not [f for f in planned.findings if f.rule == "workers-over-cores"]
    unknown = make_plan(Workload(cores=2))
    flagged = check_files([path], machine=MACHINE, plan=unknown)
    assert [f for f in flagged.findings if f.rule == "workers-over-cores"]
    # Threads on top of the plan's processes are not what it planned.
    path.write_text('bind = "127.0.0.1:8001"\nworkers = 6\nthreads = 2\n')
    threaded = check_files([path], machine=MACHINE, plan=roomy)
    assert [f for f in threaded.findings if f.rule == "workers-over-cores"]
