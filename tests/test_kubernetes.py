"""`servertune gen kubernetes`: manifests that validate against the Kubernetes schema of
`--k8s-version`, numbers that follow the plan, and input that cannot inject anything."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from servertune.check.kubernetes import parse_gateway_duration
from servertune.cli import app
from servertune.sizing import (
    PRESTOP_MARGIN_S,
    TERMINATION_MARGIN_S,
    Machine,
    Plan,
    PlanError,
    make_plan,
)
from servertune.sizing.defaults import WSGI_SERVER_MS_PER_REQUEST
from servertune.targets import render_kubernetes
from servertune.workload import Workload

from .strategies import cluster_workloads
from .support import REPO, golden_cases

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"
#: The golden workloads the kubernetes target serves: WSGI apps (`gen kubernetes` refuses ASGI).
WSGI_CASES = golden_cases("kubernetes")
MACHINE = Machine(cores=1, somaxconn=4096)


def _documents(plan: Plan) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(render_kubernetes(plan)) if doc is not None]


def _validate(plan: Plan) -> list[dict[str, Any]]:
    """Every manifest validates against the strict schema of the plan's Kubernetes version (an
    HTTPRoute, a CRD kubernetes-validate has no schema for, against the Gateway API's fields)."""
    docs = _documents(plan)
    for doc in docs:
        if doc.get("apiVersion") == "gateway.networking.k8s.io/v1":
            _validate_httproute(doc)
        else:
            kubernetes_validate.validate(doc, plan.workload.k8s_version + ".0", strict=True)
    return docs


# Gateway API v1.x, HTTPRoute reference (https://gateway-api.sigs.k8s.io/reference/spec/#httproute
# and the CRD's OpenAPI schema): only the fields below exist; unknown fields are refused as the
# API server's structural schema does. Names are ObjectName (1-253), a Service port 1-65535,
# durations GEP-2257's `^([0-9]{1,5}(h|m|s|ms)){1,4}$`, and the CRD's CEL rule makes
# backendRequest <= request (unless request is 0, "no timeout").
_ROUTE_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
_ROUTE_SPEC_FIELDS = {"parentRefs", "hostnames", "rules"}
_PARENT_REF_FIELDS = {"group", "kind", "namespace", "name", "sectionName", "port"}
_RULE_FIELDS = {
    "name",
    "matches",
    "filters",
    "backendRefs",
    "timeouts",
    "retry",
    "sessionPersistence",
}
_BACKEND_REF_FIELDS = {"group", "kind", "namespace", "name", "port", "weight", "filters"}
_PATH_TYPES = {"Exact", "PathPrefix", "RegularExpression"}
_HOSTNAME = re.compile(
    r"\A(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)


def _object_name(value: object) -> None:
    assert isinstance(value, str), value
    assert 1 <= len(value) <= 253, value


def _validate_httproute(doc: dict[str, Any]) -> None:
    """A `gateway.networking.k8s.io/v1` HTTPRoute has only the spec's documented fields."""
    assert set(doc) <= _ROUTE_FIELDS, doc
    assert doc["kind"] == "HTTPRoute", doc
    _object_name(doc["metadata"]["name"])
    spec = doc["spec"]
    assert set(spec) <= _ROUTE_SPEC_FIELDS, spec
    assert 1 <= len(spec["parentRefs"]) <= 32
    for ref in spec["parentRefs"]:
        assert set(ref) <= _PARENT_REF_FIELDS, ref
        _object_name(ref["name"])
    hostnames = spec.get("hostnames", [])
    assert len(hostnames) <= 16
    for host in hostnames:
        assert isinstance(host, str), host
        assert len(host) <= 253, host
        assert _HOSTNAME.match(host), host
    assert 1 <= len(spec["rules"]) <= 16
    for rule in spec["rules"]:
        assert set(rule) <= _RULE_FIELDS, rule
        for match in rule.get("matches", []):
            assert set(match) <= {"path", "headers", "queryParams", "method"}, match
            path = match["path"]
            assert path["type"] in _PATH_TYPES, path
            assert path["value"].startswith("/"), path
        assert 1 <= len(rule["backendRefs"]) <= 16
        for ref in rule["backendRefs"]:
            assert set(ref) <= _BACKEND_REF_FIELDS, ref
            _object_name(ref["name"])
            # A Service backend (kind defaults to Service) must name its port.
            assert isinstance(ref.get("port"), int), ref
            assert 1 <= ref["port"] <= 65535, ref
        timeouts = rule.get("timeouts", {})
        assert set(timeouts) <= {"request", "backendRequest"}, timeouts
        seconds = {key: parse_gateway_duration(value) for key, value in timeouts.items()}
        if seconds.get("request") and "backendRequest" in seconds:
            assert seconds["backendRequest"] <= seconds["request"], timeouts


def _kind(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def _containers(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    spec = _kind(docs, "Deployment")["spec"]["template"]["spec"]
    return {c["name"]: c for c in spec["containers"]}


@pytest.mark.parametrize("case", WSGI_CASES)
def test_golden_workloads_render_schema_valid_manifests(case: str) -> None:
    """Each golden workload's manifests pass the strict Kubernetes schema (unknown fields refused),
    with an Ingress exactly in the ingress layout and an HTTPRoute exactly in the gateway layout."""
    workload = Workload.model_validate(json.loads((GOLDEN / "cases" / f"{case}.json").read_text()))
    docs = _validate(make_plan(workload, MACHINE))
    ingress = {"sidecar": [], "ingress": ["Ingress"], "gateway": ["HTTPRoute"]}[workload.k8s_layout]
    assert [d["kind"] for d in docs] == [
        "ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
        *ingress,
    ]  # fmt: skip


@pytest.mark.parametrize("version", [f"1.{minor}" for minor in range(25, 38)])
def test_every_supported_version_validates(version: str) -> None:
    """Every `--k8s-version` servertune accepts has a schema, and the manifests pass it."""
    _validate(make_plan(Workload(cores=2, k8s_version=version), MACHINE))


def test_a_schema_violation_is_caught() -> None:
    """The validator is not vacuous: a manifest with a string where an integer belongs fails."""
    docs = _documents(make_plan(Workload(cores=2), MACHINE))
    hpa = _kind(docs, "HorizontalPodAutoscaler")
    hpa["spec"]["minReplicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(hpa, "1.34.0", strict=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_workloads())
def test_any_workload_renders_valid_manifests_with_the_timeout_chain(workload: Workload) -> None:
    """For any valid workload: schema-valid manifests whose stop sequence and probes keep their order."""
    plan = make_plan(workload, MACHINE)
    docs = _validate(plan)
    pod = _kind(docs, "Deployment")["spec"]["template"]["spec"]
    containers = _containers(docs)
    app_container = containers["app"]
    w = plan.workload
    assert w.lb_idle_timeout_s < plan.nginx_keepalive_timeout_s
    assert plan.prestop_sleep_s >= w.endpoint_propagation_s + PRESTOP_MARGIN_S
    if w.k8s_layout == "sidecar":
        # gunicorn is signalled only once nginx has answered everything it sent.
        assert plan.app_prestop_sleep_s == plan.prestop_sleep_s + plan.nginx_read_timeout_s
        assert containers["nginx"]["readinessProbe"]["httpGet"]["path"] == w.probe_path
    else:
        assert set(containers) == {"app"}
        assert plan.app_prestop_sleep_s == plan.prestop_sleep_s
        assert plan.gunicorn_keepalive_s > w.ingress_keepalive_s
        assert app_container["readinessProbe"]["httpGet"]["path"] == w.probe_path
    if w.k8s_layout == "ingress":
        assert _kind(docs, "Ingress")["spec"]["ingressClassName"] == w.ingress_class
    if w.k8s_layout == "gateway":
        route = _kind(docs, "HTTPRoute")["spec"]
        assert route["parentRefs"] == [{"name": w.gateway_name}]
        (rule,) = route["rules"]
        # The route waits for the app as long as nginx would: past gunicorn's own kill.
        timeouts = {k: parse_gateway_duration(v) for k, v in rule["timeouts"].items()}
        assert timeouts == {
            "request": plan.nginx_read_timeout_s,
            "backendRequest": plan.nginx_read_timeout_s,
        }
        assert timeouts["backendRequest"] > plan.request_timeout_s
    assert pod["terminationGracePeriodSeconds"] == (
        plan.app_prestop_sleep_s + plan.graceful_timeout_s + TERMINATION_MARGIN_S
    )
    live = app_container["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] > plan.request_timeout_s
    env = {e["name"]: e["value"] for e in app_container["env"]}
    assert env["PYTHON_CPU_COUNT"] == str(w.cores) == app_container["resources"]["limits"]["cpu"]
    hpa = _kind(docs, "HorizontalPodAutoscaler")["spec"]
    assert hpa["minReplicas"] <= hpa["maxReplicas"]
    assert _kind(docs, "Deployment")["metadata"]["name"] == w.app_name


@pytest.mark.parametrize(("version", "native"), [("1.33", False), ("1.34", True), ("1.29", False)])
def test_prestop_uses_the_native_sleep_action_from_1_34(version: str, native: bool) -> None:
    """preStop is `sleep: {seconds}` from Kubernetes 1.34 (KEP-3960 GA), an exec of /bin/sleep before."""
    plan = make_plan(Workload(cores=2, k8s_version=version), MACHINE)
    for name, seconds in (("nginx", plan.prestop_sleep_s), ("app", plan.app_prestop_sleep_s)):
        hook = _containers(_validate(plan))[name]["lifecycle"]["preStop"]
        if native:
            assert hook == {"sleep": {"seconds": seconds}}
        else:
            assert hook == {"exec": {"command": ["/bin/sleep", str(seconds)]}}


@pytest.mark.parametrize(("minimum", "target"), [(2, 50), (3, 66), (4, 75), (5, 80), (20, 80)])
def test_autoscaler_target_survives_losing_one_pod(minimum: int, target: int) -> None:
    """The CPU target u keeps u x n/(n-1) <= 100% at n = min_replicas, and never exceeds 80%."""
    plan = make_plan(Workload(cores=2, min_replicas=minimum), MACHINE)
    assert plan.hpa_target_cpu_percent == target
    assert plan.hpa_target_cpu_percent * minimum / max(1, minimum - 1) <= 100


def test_max_replicas_follows_the_peak_when_unset() -> None:
    """Unset max_replicas: enough pods at the target utilisation for peak_rps (39.6 req/s per pod: 2 cores over 50 ms of GIL time and the WSGI server's own 0.5)."""
    plan = make_plan(
        Workload(cores=2, service_time_ms=100, cpu_fraction=0.5, peak_rps=400), MACHINE
    )
    assert plan.ceiling_rps == pytest.approx(2 / (0.050 + WSGI_SERVER_MS_PER_REQUEST / 1000))
    assert plan.pods_for_peak == 21  # 400 / (39.6 x 50%)
    assert plan.hpa_max_replicas == 21


def test_memory_comes_from_the_workers() -> None:
    """The app container's memory is processes x per-worker memory with the process rule's headroom."""
    plan = make_plan(Workload(cores=3, memory_per_worker_mb=300), MACHINE)
    assert plan.app_memory_mb == 1000  # 3 x 300 / 0.9
    limits = _containers(_validate(plan))["app"]["resources"]["limits"]
    assert limits == {"cpu": "3", "memory": "1000Mi"}


@pytest.mark.parametrize(
    ("flags", "field", "reason"),
    [
        (["--cpu-limit", "1.5", "--cores", "2"], "cpu_limit", "fractional"),
        (["--cpu-limit", "4", "--cores", "2"], "cpu_limit", "does not match cores 2"),
        (
            ["--cores", "2", "--peak-rps", "400", "--max-replicas", "5"],
            "max_replicas",
            "below peak_rps",
        ),
        (["--min-replicas", "4", "--max-replicas", "3"], "max_replicas", "below min_replicas 4"),
        (["--probe-path", "healthz"], "probe_path", "must be"),
        (["--probe-path", "/health?x=1"], "probe_path", "must be"),
        (["--app-name", "My_App"], "app_name", "RFC 1123"),
        (["--app-name", "app\nkind: Secret"], "app_name", "RFC 1123"),
        (["--namespace", 'a"b'], "namespace", "RFC 1123"),
        (["--app-image", "app:1 # x"], "app_image", "image reference"),
        (["--k8s-version", "1.24"], "k8s_version", "1.25 to 1.37"),
    ],
)
def test_bad_cluster_input_is_one_error_line_and_nothing_written(
    flags: list[str], field: str, reason: str, tmp_path: Path
) -> None:
    """Fractional or mismatched CPU, an impossible replica range, a bad probe path, hostile names:
    exit 2, one `error:` line naming the field, no file written."""
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "all", *flags, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert re.match(rf"error: {field}( \(--[a-z0-9-]+\))?: ", result.stderr), result.stderr
    assert reason in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_plan_error_names_the_field_for_library_callers() -> None:
    """make_plan raises PlanError starting with the field, as the CLI prints it."""
    with pytest.raises(PlanError, match=r"^cpu_limit: 2.5 is fractional"):
        make_plan(Workload(cores=2, cpu_limit=2.5), MACHINE)


def test_every_template_value_in_the_manifest_is_quoted_or_an_integer() -> None:
    """YAML injection by construction: each `{{ }}` in kubernetes.yaml.j2 sits inside double quotes
    (and the render allow-list refuses quotes and backslashes) or prints an integer plan field."""
    text = (REPO / "templates" / "kubernetes.yaml.j2").read_text()
    integers = {n for n, f in Plan.fields().items() if f.annotation in (int, int | None)}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue  # a comment ends at the line's end, and no value may carry a newline
        for match in re.finditer(r"\{\{\s*([\w.]+)\s*\}\}", line):
            before, after = line[: match.start()], line[match.end() :]
            quoted = before.count('"') % 2 == 1 and '"' in after
            name = match.group(1)
            assert (
                quoted
                or (name.startswith("plan.") and name[5:] in integers)
                or (name == "w.listen_port")
            ), line


def test_gen_all_writes_kubernetes_yaml(tmp_path: Path) -> None:
    """`gen all` includes kubernetes.yaml next to the other files."""
    result = runner.invoke(app, ["gen", "all", "--cores", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all((tmp_path / "kubernetes.yaml").read_text()))
    assert _kind(docs, "Deployment")["metadata"]["name"] == "app"


def test_warns_when_threads_and_the_autoscaler_both_grow_with_load() -> None:
    """Threads sized from peak_rps (slow calls) and an autoscaler adding pods: one warning;
    without slow calls the threads do not depend on the load and nothing is said."""
    slow = make_plan(
        Workload(cores=2, peak_rps=50, slow_call_ratio=0.1, slow_call_ms=2000), MACHINE
    )
    assert any("both scale with load" in w for w in slow.warnings)
    quick = make_plan(Workload(cores=2, peak_rps=50), MACHINE)
    assert not any("both scale with load" in w for w in quick.warnings)


def test_the_pod_runs_the_same_configs_as_one_host(tmp_path: Path) -> None:
    """The ConfigMap holds exactly `gen gunicorn` and `gen nginx-gunicorn-shared` (nginx listening
    on the pod's address), and nginx -t accepts that nginx.conf."""
    from servertune.render import render_gunicorn, render_nginx

    from .support import nginx_check

    plan = make_plan(Workload(cores=2, listen_port=8080, memory_per_worker_mb=200), MACHINE)
    data = _kind(_validate(plan), "ConfigMap")["data"]
    assert data["gunicorn.conf.py"] == render_gunicorn(plan)
    one_host = render_nginx(plan, "gunicorn", "shared")
    assert data["nginx.conf"] == one_host.replace("listen 127.0.0.1:8080;", "listen 0.0.0.0:8080;")
    assert data["nginx.conf"] != one_host
    conf = tmp_path / "nginx.conf"
    conf.write_text(data["nginx.conf"])
    checked = nginx_check(conf)
    assert checked.returncode == 0, checked.stderr


def test_probes_reach_nginx_by_number_from_the_app_container() -> None:
    """The app container has no ports of its own: its liveness probe names nginx's port number."""
    plan = make_plan(Workload(cores=2, listen_port=8080), MACHINE)
    containers = _containers(_validate(plan))
    assert containers["nginx"]["ports"] == [{"name": "http", "containerPort": 8080}]
    assert "ports" not in containers["app"]
    assert containers["app"]["livenessProbe"]["httpGet"]["port"] == 8080


def test_unix_sockets_live_in_a_directory_both_containers_mount() -> None:
    """With socket_dir, nginx and gunicorn share it as an emptyDir (containers share no files)."""
    plan = make_plan(Workload(cores=2, socket_dir="/run/app"), MACHINE)
    docs = _validate(plan)
    for container in _containers(docs).values():
        assert {"name": "sockets", "mountPath": "/run/app"} in container["volumeMounts"]
    volumes = _kind(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "sockets", "emptyDir": {}} in volumes


def _ingress_plan(**fields: Any) -> Plan:
    return make_plan(Workload(cores=2, k8s_layout="ingress", **fields), MACHINE)


@pytest.mark.parametrize("version", [f"1.{minor}" for minor in range(25, 38)])
def test_the_ingress_layout_validates_on_every_supported_version(version: str) -> None:
    """k8s_layout 'ingress': ConfigMap, Deployment, Service, HPA, PDB and a networking.k8s.io/v1
    Ingress, each passing the strict schema of every `--k8s-version`."""
    docs = _validate(_ingress_plan(k8s_version=version, server_name="shop.example.com"))
    assert [d["kind"] for d in docs] == [
        "ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
        "Ingress",
    ]  # fmt: skip
    assert _kind(docs, "Ingress")["apiVersion"] == "networking.k8s.io/v1"


def test_the_ingress_pod_is_gunicorn_alone_on_the_pod_port(tmp_path: Path) -> None:
    """One container, named port `http` on listen_port, probes on it; the ConfigMap holds only
    `gen gunicorn`'s file with gunicorn bound to the pod port instead of loopback."""
    from servertune.render import render_gunicorn

    plan = _ingress_plan(listen_port=8080)
    docs = _validate(plan)
    (app_container,) = _containers(docs).values()
    assert app_container["ports"] == [{"name": "http", "containerPort": 8080}]
    for probe in ("readinessProbe", "livenessProbe"):
        assert app_container[probe]["httpGet"]["port"] == "http"
    data = _kind(docs, "ConfigMap")["data"]
    assert set(data) == {"gunicorn.conf.py"}
    one_host = render_gunicorn(plan)
    assert data["gunicorn.conf.py"] == one_host.replace(
        'bind = ["127.0.0.1:8001"]', 'bind = ["0.0.0.0:8080"]'
    )
    assert data["gunicorn.conf.py"] != one_host
    assert f"backlog = {plan.shared_backlog}\n" in data["gunicorn.conf.py"]
    service = _kind(docs, "Service")["spec"]["ports"]
    assert service == [{"name": "http", "port": 80, "targetPort": "http"}]


def test_the_ingress_carries_the_plans_proxy_numbers_as_documented_annotations() -> None:
    """Only ingress-nginx's documented per-Ingress annotations, with the plan's numbers: connect,
    read and send timeouts, body size, response buffering."""
    plan = _ingress_plan(slow_call_ratio=0.1, slow_call_ms=40_000, max_body_mb=25)
    ingress = _kind(_validate(plan), "Ingress")
    prefix = "nginx.ingress.kubernetes.io/"
    assert ingress["metadata"]["annotations"] == {
        prefix + "proxy-connect-timeout": str(plan.upstream_connect_timeout_s),
        prefix + "proxy-read-timeout": str(plan.nginx_read_timeout_s),
        prefix + "proxy-send-timeout": str(plan.nginx_read_timeout_s),
        prefix + "proxy-body-size": "25m",
        prefix + "proxy-buffering": "on",
    }
    assert plan.nginx_read_timeout_s > plan.request_timeout_s > 40
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "app", "port": {"name": "http"}}


def test_the_ingress_host_comes_from_server_name() -> None:
    """server_name '_' (nginx's catch-all) is an Ingress rule without a host; a name is its host."""
    (rule,) = _kind(_validate(_ingress_plan()), "Ingress")["spec"]["rules"]
    assert "host" not in rule
    (rule,) = _kind(_validate(_ingress_plan(server_name="*.example.com")), "Ingress")["spec"][
        "rules"
    ]
    assert rule["host"] == "*.example.com"


def test_gunicorn_keepalive_outlasts_the_ingress_controllers() -> None:
    """Ingress layout: gunicorn holds an idle connection longer than the controller's
    upstream-keepalive-timeout, so the controller always closes first."""
    assert _ingress_plan().gunicorn_keepalive_s == 65  # max(60 + 5, ingress 60 + 5)
    assert _ingress_plan(ingress_keepalive_s=300).gunicorn_keepalive_s == 305
    assert make_plan(Workload(cores=2, ingress_keepalive_s=300), MACHINE).gunicorn_keepalive_s == 65


def test_the_ingress_layout_has_no_nginx_allowance_and_stops_after_propagation() -> None:
    """No nginx container: no CPU or memory for it, and gunicorn's preStop is the propagation
    wait alone (nothing sits between the controller and gunicorn to drain)."""
    plan = _ingress_plan()
    assert (plan.nginx_cpu_millicores, plan.nginx_memory_mb) == (0, 0)
    assert plan.app_prestop_sleep_s == plan.prestop_sleep_s
    sidecar = make_plan(Workload(cores=2), MACHINE)
    assert sidecar.app_prestop_sleep_s == sidecar.prestop_sleep_s + sidecar.nginx_read_timeout_s


@pytest.mark.parametrize(
    ("version", "layout", "metric"),
    [
        ("1.29", "sidecar", "Resource"),
        ("1.30", "sidecar", "ContainerResource"),
        ("1.34", "sidecar", "ContainerResource"),
        ("1.34", "ingress", "Resource"),
    ],
)
def test_the_autoscaler_follows_the_app_container_where_the_metric_is_ga(
    version: str, layout: str, metric: str
) -> None:
    """Sidecar pods from Kubernetes 1.30 (ContainerResource GA, KEP-1610) scale on the app
    container's CPU; before that, and for the one-container ingress pod, on the pod's."""
    plan = make_plan(Workload(cores=2, k8s_version=version, k8s_layout=layout), MACHINE)
    (spec,) = _kind(_validate(plan), "HorizontalPodAutoscaler")["spec"]["metrics"]
    assert spec["type"] == metric
    if metric == "ContainerResource":
        assert spec["containerResource"]["container"] == "app"
        assert spec["containerResource"]["target"]["averageUtilization"] == 50
    assert ("KEP-1610" in plan.reasons["hpa_container_metric"]) == (layout == "sidecar")


@pytest.mark.parametrize(
    ("flags", "field", "reason"),
    [
        (["--k8s-layout", "sidecars"], "k8s_layout", "'sidecar'"),
        (
            ["--k8s-layout", "ingress", "--server-name", "Shop.Example.com"],
            "server_name",
            "Ingress host",
        ),
        (
            ["--k8s-layout", "ingress", "--server-name", ".shop.example.com"],
            "server_name",
            "Ingress host",
        ),
        (
            ["--k8s-layout", "ingress", "--server-name", "shop.example.*"],
            "server_name",
            "Ingress host",
        ),
        (["--ingress-class", 'nginx"\nkind: Secret'], "ingress_class", "RFC 1123"),
        (["--ingress-keepalive-s", "0"], "ingress_keepalive_s", "from 1"),
    ],
)
def test_bad_ingress_input_is_one_error_line_and_nothing_written(
    flags: list[str], field: str, reason: str, tmp_path: Path
) -> None:
    """A layout that does not exist, a server_name no Ingress accepts, a hostile class name:
    exit 2, one `error:` line naming the field, no file written."""
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "all", "--cores", "2", *flags, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert re.match(rf"error: {field}( \(--[a-z0-9-]+\))?: ", result.stderr), result.stderr
    assert reason in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def _gateway_plan(**fields: Any) -> Plan:
    return make_plan(Workload(cores=2, k8s_layout="gateway", **fields), MACHINE)


@pytest.mark.parametrize("version", ["1.25", "1.34", "1.37"])
def test_the_gateway_layout_is_the_ingress_pod_behind_an_httproute(version: str) -> None:
    """k8s_layout 'gateway': the ingress layout's ConfigMap, Deployment, Service, HPA and PDB,
    then a gateway.networking.k8s.io/v1 HTTPRoute in place of the Ingress."""
    fields = {"k8s_version": version, "server_name": "shop.example.com"}
    docs = _validate(_gateway_plan(**fields))
    assert [d["kind"] for d in docs] == [
        "ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
        "HTTPRoute",
    ]  # fmt: skip
    assert docs[:5] == _validate(_ingress_plan(**fields))[:5]
    assert docs[5]["apiVersion"] == "gateway.networking.k8s.io/v1"


def test_the_httproute_attaches_to_the_named_gateway_with_the_plans_timeouts() -> None:
    """parentRefs name `gateway_name`; the one rule sends every path to the Service's port with
    timeouts.request = timeouts.backendRequest = nginx's read timeout, the number the ingress
    layout writes as proxy-read-timeout, above gunicorn's own kill."""
    plan = _gateway_plan(
        slow_call_ratio=0.1, slow_call_ms=40_000, gateway_name="public", app_name="shop"
    )
    route = _kind(_validate(plan), "HTTPRoute")
    assert route["metadata"]["name"] == "shop"
    spec = route["spec"]
    assert spec["parentRefs"] == [{"name": "public"}]
    assert "hostnames" not in spec  # server_name '_': every host the Gateway listens for
    (rule,) = spec["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert rule["backendRefs"] == [{"name": "shop", "port": 80}]
    read = plan.nginx_read_timeout_s
    assert rule["timeouts"] == {"request": f"{read}s", "backendRequest": f"{read}s"}
    assert parse_gateway_duration(rule["timeouts"]["backendRequest"]) == read
    assert read > plan.request_timeout_s > 40
    assert "HTTPRoute's timeouts.request" in plan.reasons["nginx_read_timeout_s"]
    ingress = _kind(_validate(_ingress_plan(slow_call_ratio=0.1, slow_call_ms=40_000)), "Ingress")
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == str(read)


def test_the_httproute_hostname_comes_from_server_name() -> None:
    (host,) = _kind(_validate(_gateway_plan(server_name="*.example.com")), "HTTPRoute")["spec"][
        "hostnames"
    ]
    assert host == "*.example.com"


def test_the_gateway_layout_keeps_the_ingress_stop_sequence_and_keepalive() -> None:
    """No nginx in the pod: no allowance for it, preStop is propagation alone, and gunicorn's
    keep-alive outlasts the proxy's (ingress_keepalive_s)."""
    plan = _gateway_plan(ingress_keepalive_s=300)
    assert (plan.nginx_cpu_millicores, plan.nginx_memory_mb) == (0, 0)
    assert plan.app_prestop_sleep_s == plan.prestop_sleep_s
    assert plan.gunicorn_keepalive_s == 305
    assert "Gateway" in plan.reasons["prestop_sleep_s"]


@pytest.mark.parametrize(
    "broken",
    [
        {"timeouts": {"request": "10s", "backendRequest": "11s"}},  # backendRequest > request
        {"timeouts": {"request": "10"}},  # not a GEP-2257 duration
        {"timeouts": {"idle": "10s"}},  # no such field
        {"backendRefs": [{"name": "app"}]},  # a Service backend without a port
    ],
)
def test_the_httproute_check_is_not_vacuous(broken: dict[str, Any]) -> None:
    route = _kind(_documents(_gateway_plan()), "HTTPRoute")
    route["spec"]["rules"][0].update(broken)
    with pytest.raises((AssertionError, ValueError)):
        _validate_httproute(route)


def test_gen_kubernetes_accepts_the_gateway_layout(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["gen", "kubernetes", "--cores", "2", "--k8s-layout", "gateway",
              "--gateway-name", "public", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (out / "kubernetes.yaml").read_text()
    assert "kind: HTTPRoute" in text
    assert "kind: Ingress" not in text
    assert '- name: "public"' in text


@pytest.mark.parametrize(
    ("flags", "field", "reason"),
    [
        (["--k8s-layout", "bogus"], "k8s_layout", "'gateway'"),
        (["--gateway-name", 'gw"\nkind: Secret'], "gateway_name", "RFC 1123"),
        (["--gateway-name", "Public"], "gateway_name", "RFC 1123"),
        (["--gateway-name", "g" * 64], "gateway_name", "RFC 1123"),
        (
            ["--k8s-layout", "gateway", "--server-name", "Shop.Example.com"],
            "server_name",
            "HTTPRoute hostname",
        ),
        (
            ["--k8s-layout", "gateway", "--upstream", "a.example:80"],
            "upstream",
            "k8s_layout 'gateway'",
        ),
    ],
)
def test_bad_gateway_input_is_one_error_line_and_nothing_written(
    flags: list[str], field: str, reason: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "kubernetes", "--cores", "2", *flags, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert re.match(rf"error: {field}( \(--[a-z0-9-]+\))?: ", result.stderr), result.stderr
    assert reason in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()
