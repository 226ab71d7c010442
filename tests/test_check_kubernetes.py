"""`servertune check` reads Kubernetes manifests: the container's limits beside the server's numbers."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.kubernetes import parse_gateway_duration, parse_quantity
from servertune.cli import app
from servertune.render import TARGETS
from servertune.sizing import Machine, make_plan
from servertune.workload import Workload

from .support import golden_cases

GOLDEN = Path(__file__).parent / "golden"
MACHINE = Machine(cores=1, somaxconn=4096)

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example/web:1
          command: ["gunicorn"]
          args: ["-w", "9", "--timeout", "120", "--graceful-timeout", "120", "proj.wsgi"]
          readinessProbe:
            httpGet: {path: /health, port: 8000}
          resources:
            limits:
              cpu: 500m
"""


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("1.5", Decimal("1.5")),
        ("512Mi", Decimal(512 * 1024**2)),
        ("1G", Decimal(10**9)),
        ("1e3", Decimal(1000)),
        (".5", Decimal("0.5")),
    ],
)
def test_quantities_follow_the_kubernetes_grammar(text: str, value: Decimal) -> None:
    """Millicores, binary and decimal SI suffixes and exponents, as apimachinery reads them."""
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["500 m", "1.5.2", "Mi", "1mi", "0x10", ""])
def test_what_is_not_a_quantity_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "seconds"), [("10s", 10), ("500ms", 0.5), ("1h30m", 5400), ("1m1s1ms", 61.001)]
)
def test_gateway_durations_follow_gep_2257(text: str, seconds: float) -> None:
    assert parse_gateway_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["10", "1.5s", "123456s", "1d", "1h1h1h1h1h", "-1s"])
def test_what_is_not_a_gateway_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="GEP-2257"):
        parse_gateway_duration(text)


ROUTES = """\
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8000}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    nginx.ingress.kubernetes.io/proxy-read-timeout: "60"
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  rules:
    - backendRefs: [{name: web, port: 80}]
      timeouts:
        request: 3m
        backendRequest: 30s
"""


def test_ingress_and_httproute_timeouts_below_the_app_timeout(tmp_path: Path) -> None:
    """Through the Service that selects the pod: the ingress annotation (judged as the nginx
    ingress-nginx renders, by nginx's rule) and the route's backendRequest are below
    gunicorn's 120 s; the route's 3 m request is not."""
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT + ROUTES)
    result = check_files([path], machine=MACHINE)
    found = [(f.at.line, f.message.split(" ")[0]) for f in result.findings]
    late = ("app-timeout-over-read-timeout", "route-timeout-below-app-timeout")
    route = [f for f in result.findings if f.rule in late]
    assert [(f.rule, f.at.line, f.related[0].line) for f in route] == [
        ("app-timeout-over-read-timeout", 36, 17),
        ("route-timeout-below-app-timeout", 48, 17),
    ], found


def test_nine_workers_under_half_a_cpu_are_flagged_at_both_lines(tmp_path: Path) -> None:
    """The worker count's line, the limit's line and the fix."""
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT)
    result = check_files([path], machine=Machine(cores=64, somaxconn=4096))
    (finding,) = [f for f in result.findings if f.rule == "workers-over-cpu-limit"]
    assert finding.at.line == 17  # args: the `-w`
    assert [r.line for r in finding.related] == [22]  # cpu: 500m
    assert "workers = 1" in finding.fix
    assert all(f.rule != "workers-over-cores" for f in result.findings)


def test_configmap_env_and_var_expansion_reach_gunicorn(tmp_path: Path) -> None:
    """WEB_CONCURRENCY from a ConfigMap via envFrom; `$(TIMEOUT)` expanded as the kubelet does."""
    path = tmp_path / "all.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env}\n"
        "data:\n  WEB_CONCURRENCY: '6'\n  TIMEOUT: '90'\n---\n"
        + DEPLOYMENT.replace('"-w", "9", "--timeout", "120"', '"--timeout", "$(TIMEOUT)"').replace(
            "          command:",
            "          envFrom: [{configMapRef: {name: env}}]\n          command:",
        )
    )
    result = check_files([path], machine=MACHINE)
    (server,) = result.apps
    assert server.workers.value == 6
    assert server.workers.at.line == 5
    assert server.request_timeout is not None
    assert server.request_timeout.value == 90


@pytest.mark.parametrize("case", golden_cases("kubernetes"))
@pytest.mark.parametrize("layout", ["sidecar", "ingress", "gateway"])
def test_gen_kubernetes_checks_clean(case: str, layout: str, tmp_path: Path) -> None:
    """servertune's own manifests draw no warning: the limits are the plan's cores. A plan whose
    memory holds more single-threaded processes than cores is checked with its workload (as
    `check --workload`), which is what tells check those processes were planned."""
    data = json.loads((GOLDEN / "cases" / f"{case}.json").read_text())
    if layout != "sidecar":
        data.pop("upstream", None)  # no nginx in the pod: nothing to balance across hosts
    plan = make_plan(Workload.model_validate({**data, "k8s_layout": layout}), MACHINE)
    path = tmp_path / "kubernetes.yaml"
    path.write_text(TARGETS["kubernetes"].render(plan))
    planned = plan if plan.processes > plan.machine.cores else None
    result = check_files([path], machine=MACHINE, plan=planned)
    assert len(result.apps) == 1
    assert result.apps[0].container is not None
    assert [f for f in result.findings if f.severity.name != "info"] == []


HOSTILE = {
    # Billion laughs: each level nine aliases of the one before.
    "bomb.yaml": "apiVersion: v1\nkind: List\na0: &a0 [lol]\n"
    + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 14)),
    "python.yaml": "apiVersion: v1\nkind: Pod\nspec: !!python/object/apply:os.system ['true']\n",
    "deep.yaml": "apiVersion: v1\nkind: Pod\nspec: " + "[" * 200 + "]" * 200 + "\n",
    "syntax.yaml": "apiVersion: v1\nkind: Pod\nspec: {a: [}\n",
    "quantity.yaml": DEPLOYMENT.replace("500m", "half"),
}


def test_a_ten_megabyte_manifest_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(DEPLOYMENT + "# padding\n" * (1024 * 1024))
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2
    assert result.output.startswith("error:")
    assert "larger than" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_binary_manifest_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_bytes(DEPLOYMENT.encode() + b"\0\x89PNG")
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {path}: binary file (contains NUL bytes)"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_manifests_are_one_error_line(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name])
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error:"), result.output
    assert name in lines[0], result.output


MEMORY = """\
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
          command: ["gunicorn"]
          args: ["-w", "4", "proj.wsgi"]
          readinessProbe: {httpGet: {path: /health, port: 8000}}
          resources:
            limits: {cpu: "4", memory: 1Gi}
"""


@pytest.mark.parametrize(("rss", "fires"), [(None, False), (200, False), (300, True)])
def test_workers_times_rss_against_the_memory_limit(
    rss: int | None, fires: bool, tmp_path: Path
) -> None:
    """4 x 200 MiB fits 90% of 1 GiB (921.6 MiB); 4 x 300 does not, 3 do; no --rss-mb, no rule."""
    path = tmp_path / "deploy.yaml"
    path.write_text(MEMORY)
    result = check_files([path], machine=MACHINE, rss_mb=rss)
    found = [f for f in result.findings if f.rule == "workers-over-memory-limit"]
    assert bool(found) == fires
    if fires:
        (finding,) = found
        assert finding.at.line == 13  # args: the `-w`
        assert [r.line for r in finding.related] == [16]  # memory: 1Gi
        assert finding.fix.startswith("--workers 3") or finding.fix.startswith("workers = 3"), (
            finding.fix
        )


JITTER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          command: ["gunicorn"]
          args: ["-w", "WORKERS", "--max-requests", "10240", "--max-requests-jitter", "JITTER", "p.wsgi"]
          readinessProbe: {httpGet: {path: /health, port: 8000}}
          resources:
            limits: {cpu: "4"}
"""


@pytest.mark.parametrize(
    ("replicas", "workers", "jitter", "fires"),
    [
        (1, 4, "512", True),  # the reported pod: 4 workers, 5% jitter, all restarted within 4 s
        (3, 1, "0", True),  # one worker a pod, but three pods share the load
        (3, 4, "1024", False),  # 10%: the plan's own ratio
        (1, 1, "10", False),  # one process: nothing to keep apart
    ],
)
def test_jitter_too_small_for_every_worker_of_every_replica(
    replicas: int, workers: int, jitter: str, fires: bool, tmp_path: Path
) -> None:
    path = tmp_path / "deploy.yaml"
    text = JITTER.replace("REPLICAS", str(replicas)).replace("WORKERS", str(workers))
    path.write_text(text.replace("JITTER", jitter))
    result = check_files([path], machine=Machine(cores=64, somaxconn=4096))
    # No jitter at all is max-requests-without-jitter's finding; too little, max-requests-jitter-small's.
    rule = "max-requests-without-jitter" if jitter == "0" else "max-requests-jitter-small"
    found = [f for f in result.findings if f.rule == rule]
    assert bool(found) == fires, [f.rule for f in result.findings]
    if fires:
        (finding,) = found
        assert finding.at.line == 14
        if jitter != "0":
            assert 5 in [r.line for r in finding.related]  # replicas
        assert finding.fix == "max_requests_jitter = 1024"
