"""Kubernetes: the pod's resources, the autoscaler, probes and the stop sequence, from the plan.

The pod is the machine the plan was made for: its CPU limit is `cores`, so the processes the plan
counts are the processes the limit pays for. Everything here is derived from numbers earlier
rules put (processes, ceiling, request and graceful timeouts) plus the cluster inputs.
"""

from __future__ import annotations

import math
import re

from servertune.cores import ROUNDING_RULE, round_cores
from servertune.machine import Machine
from servertune.sizing.defaults import (
    CONTAINER_METRIC_K8S_VERSION,
    HPA_MAX_TARGET_PERCENT,
    LIVENESS_PERIOD_S,
    MEMORY_HEADROOM_RATIO,
    NATIVE_SLEEP_K8S_VERSION,
    NGINX_CPU_MILLICORES,
    NGINX_MEMORY_MB,
    PRESTOP_MARGIN_S,
    PROBE_TIMEOUT_S,
    READINESS_FAILURE_THRESHOLD,
    READINESS_PERIOD_S,
    TERMINATION_MARGIN_S,
)
from servertune.sizing.plan import Derivation, PlanError
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Resources, replicas, probes and the stop sequence of the Deployment."""
    ingress_host = w.k8s_layout != "sidecar" and w.server_name != "_"
    if ingress_host and not re.match(INGRESS_HOST_PATTERN, w.server_name):
        what = "an Ingress host" if w.k8s_layout == "ingress" else "an HTTPRoute hostname"
        rule = "an Ingress without a host rule" if w.k8s_layout == "ingress" else "no hostnames"
        raise PlanError(
            f"server_name: {w.server_name!r} is not {what} (lower-case DNS name, "
            f"optionally '*.' first); use '_' for {rule}"
        )
    _resources(w, d)
    _replicas(w, d)
    _probes(w, d)
    _stop_sequence(w, d)


#: What Ingress `spec.rules[].host` accepts: a lower-case RFC 1123 name, or one `*.` label first.
#: HTTPRoute `spec.hostnames[]` accepts the same (Gateway API v1 `Hostname`, at most 253).
INGRESS_HOST_PATTERN = (
    r"\A(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+\Z"
    r"|\A[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z"
)


def _version(w: Workload) -> tuple[int, int]:
    major, minor = (int(part) for part in w.k8s_version.split("."))
    return major, minor


def _resources(w: Workload, d: Derivation) -> None:
    assert isinstance(w.cores, int)
    if w.cpu_limit is not None and not float(w.cpu_limit).is_integer():
        raise PlanError(
            f"cpu_limit: {w.cpu_limit:g} is fractional: a process uses at most one core, so "
            f"{round_cores(w.cpu_limit)} processes would share {w.cpu_limit:g} cores and the CFS "
            "quota throttles them every 100 ms period (servertune reading such a quota counts "
            f"its cores {ROUNDING_RULE}); give a whole number of cores"
        )
    if w.cpu_limit is not None and int(w.cpu_limit) != w.cores:
        raise PlanError(
            f"cpu_limit: {int(w.cpu_limit)} does not match cores {w.cores}: the plan sizes "
            f"{w.cores} processes for {w.cores} cores; set cores to the limit (or leave cpu_limit unset)"
        )
    limit = d.put(
        "cpu_limit_cores",
        w.cores,
        f"= cores ({w.cores}): the limit pays for exactly the processes the plan counts; request = "
        "limit (Guaranteed QoS), so the autoscaler's utilisation is of these cores",
    )
    d.put(
        "python_cpu_count",
        limit,
        "PYTHON_CPU_COUNT = the CPU limit: os.cpu_count() in the pod would count the node's cores "
        "and libraries sizing pools from it would oversubscribe the limit",
    )
    processes = d.get_int("processes")
    if w.memory_limit_mb is not None:
        memory, reason = w.memory_limit_mb, "= memory_limit_mb: the container limit given"
    elif w.memory_per_worker_mb is not None:
        memory = math.ceil(processes * w.memory_per_worker_mb / MEMORY_HEADROOM_RATIO)
        reason = (
            f"{processes} workers x {w.memory_per_worker_mb} MiB / {MEMORY_HEADROOM_RATIO:g}: the "
            "workers' warm size with the headroom the process rule keeps for the master"
        )
    else:
        memory, reason = None, "unset: give memory_per_worker_mb (servertune measure reports it)"
    d.put("app_memory_mb", memory, reason)
    if w.k8s_layout != "sidecar":
        proxy = "the ingress controller's" if w.k8s_layout == "ingress" else "the Gateway's"
        none = f"0: k8s_layout '{w.k8s_layout}' has no nginx in the pod ({proxy} own pods proxy)"
        d.put("nginx_cpu_millicores", 0, none)
        d.put("nginx_memory_mb", 0, none)
        return
    d.put(
        "nginx_cpu_millicores",
        NGINX_CPU_MILLICORES,
        "an allowance for the nginx container, not measured here: check its CPU throttling",
    )
    d.put(
        "nginx_memory_mb",
        NGINX_MEMORY_MB,
        "an allowance for the nginx container's buffers and connections",
    )


def _replicas(w: Workload, d: Derivation) -> None:
    if w.max_replicas is not None and w.max_replicas < w.min_replicas:
        raise PlanError(f"max_replicas: {w.max_replicas} is below min_replicas {w.min_replicas}")
    target = _hpa_target(w, d)
    _container_metric(w, d)
    most = _replica_range(w, d, target)
    _disruptions(d)
    if w.peak_rps is not None and d.get_int("slow_call_threads") > 0 and most > 1:
        d.warn(
            f"peak_rps: the threads were sized for all {w.peak_rps:g} req/s arriving at one "
            f"pod, while the autoscaler also adds pods (up to {most}) as load grows: "
            "both scale with load; give the per-pod peak (peak_rps / pods) to size threads"
        )


def _hpa_target(w: Workload, d: Derivation) -> int:
    """The CPU utilisation the autoscaler aims at: what survives losing one of the fewest pods."""
    n = w.min_replicas
    if n >= 2:
        survivable = math.floor(100 * (n - 1) / n)
        target = min(HPA_MAX_TARGET_PERCENT, survivable)
        reason = (
            f"min({HPA_MAX_TARGET_PERCENT}, 100 x (n-1)/n = {survivable} for n = min_replicas {n}): "
            "n pods at utilisation u carry u x n pods' work; after losing one, n-1 pods carry "
            "u x n/(n-1), which stays at or below 100% when u <= (n-1)/n (worst at the fewest pods)"
        )
    else:
        target = HPA_MAX_TARGET_PERCENT
        reason = f"{HPA_MAX_TARGET_PERCENT}: with min_replicas 1 no target survives losing the pod"
        d.warn("min_replicas: 1 pod means a node drain or a crash is an outage; use 2 or more")
    derived: int = d.put("hpa_target_cpu_percent", target, reason)
    return derived


def _container_metric(w: Workload, d: Derivation) -> None:
    """Whether the autoscaler reads the app container's CPU or the whole pod's."""
    floor = ".".join(str(v) for v in CONTAINER_METRIC_K8S_VERSION)
    container = w.k8s_layout == "sidecar" and _version(w) >= CONTAINER_METRIC_K8S_VERSION
    if w.k8s_layout != "sidecar":
        metric_reason = (
            f"no: the pod metric (type Resource); with k8s_layout '{w.k8s_layout}' the app is the pod's "
            "only container, so the pod's CPU is the app's"
        )
    elif container:
        metric_reason = (
            f"yes (type ContainerResource, container app): GA since Kubernetes {floor} "
            f"(KEP-1610) and this is {w.k8s_version}; the pod metric would average the app's "
            "CPU with the nginx beside it and scale late"
        )
    else:
        metric_reason = (
            f"no: the pod metric (type Resource), which averages the app with nginx - the "
            f"ContainerResource metric is GA only from Kubernetes {floor} (KEP-1610), this is "
            f"{w.k8s_version}"
        )
    d.put("hpa_container_metric", container, metric_reason)


def _replica_range(w: Workload, d: Derivation, target: int) -> int:
    """The pods the peak needs at the target, and the replica range that holds them."""
    ceiling = d.get_float("ceiling_rps")
    if w.peak_rps is None:
        pods = None
        pods_reason = "unset: no peak_rps, so the replica range is not checked against a load"
    else:
        pods = math.ceil(w.peak_rps / (ceiling * target / 100))
        pods_reason = (
            f"ceil(peak_rps {w.peak_rps:g} / (pod ceiling {ceiling:.1f} req/s x {target}%)): "
            "pods the autoscaler runs at the peak"
        )
    pods = d.put("pods_for_peak", pods, pods_reason)
    if w.max_replicas is None:
        most = max(2 * w.min_replicas, pods or 0)
        most_reason = (
            f"max(2 x min_replicas {w.min_replicas}, pods for the peak {pods}): unset in the "
            "workload, so room for the peak and for doubling"
            if pods is not None
            else f"2 x min_replicas {w.min_replicas}: unset in the workload and no peak_rps"
        )
    elif pods is not None and pods > w.max_replicas:
        raise PlanError(
            f"max_replicas: {w.max_replicas} pods at {target}% of {ceiling:.1f} req/s each serve "
            f"{w.max_replicas * ceiling * target / 100:.1f} req/s, below peak_rps {w.peak_rps:g}; "
            f"allow at least {pods}"
        )
    else:
        most, most_reason = w.max_replicas, "max_replicas, from the workload"
    d.put("hpa_min_replicas", w.min_replicas, "min_replicas, from the workload")
    derived: int = d.put("hpa_max_replicas", most, most_reason)
    return derived


def _disruptions(d: Derivation) -> None:
    """One pod at a time out, for drains and for rolling deploys."""
    d.put(
        "pdb_max_unavailable",
        1,
        "a voluntary disruption (node drain) takes one pod at a time: the CPU target was set "
        "for losing one",
    )
    d.put("rollout_max_surge", 1, "a rolling deploy starts one new pod before stopping an old one")
    d.put(
        "rollout_max_unavailable",
        0,
        "and never stops an old pod before the new one is ready: capacity never drops",
    )


def _probes(w: Workload, d: Derivation) -> None:
    d.put(
        "readiness_period_s",
        READINESS_PERIOD_S,
        "readiness failing only takes the pod out of the Service, so it may look often",
    )
    d.put(
        "readiness_failure_threshold",
        READINESS_FAILURE_THRESHOLD,
        f"out of the Service after {READINESS_FAILURE_THRESHOLD} misses "
        f"({READINESS_FAILURE_THRESHOLD * READINESS_PERIOD_S} s)",
    )
    d.put(
        "probe_timeout_s",
        PROBE_TIMEOUT_S,
        "a probe waits behind busy threads like any request; the default 1 s fails on a busy pod",
    )
    period = d.put(
        "liveness_period_s",
        LIVENESS_PERIOD_S,
        "liveness restarts the container, so it looks rarely",
    )
    request_timeout = d.get_int("request_timeout_s")
    d.put(
        "liveness_failure_threshold",
        request_timeout // period + 2,
        f"request timeout {request_timeout} s // period {period} s + 2: a probe stuck behind a "
        "legitimate slow request fails until the request ends or the app server kills it at the "
        "request timeout; the kill needs failures for longer than that",
    )


def _stop_sequence(w: Workload, d: Derivation) -> None:
    keepalive = d.get_int("nginx_keepalive_timeout_s")
    graceful = d.get_int("graceful_timeout_s")
    ingress = w.k8s_layout != "sidecar"
    proxies = "ingress controller" if w.k8s_layout == "ingress" else "Gateway data-plane proxy"
    prestop = d.put(
        "prestop_sleep_s",
        w.endpoint_propagation_s + PRESTOP_MARGIN_S,
        f"endpoint propagation {w.endpoint_propagation_s} s + {PRESTOP_MARGIN_S} s: "
        + (
            f"gunicorn keeps serving until every {proxies} has stopped sending to the pod"
            if ingress
            else "nginx keeps serving until every proxy and load balancer has stopped sending "
            f"(LB idle {w.lb_idle_timeout_s} s < nginx keep-alive {keepalive} s, so the LB "
            "closes first)"
        ),
    )
    if ingress:
        app_prestop = d.put(
            "app_prestop_sleep_s",
            prestop,
            "= preStop: gunicorn is the pod's only container, so it gets SIGTERM once the "
            f"{proxies}s have removed the endpoint and send it nothing new",
        )
    else:
        read_s = d.get_int("nginx_read_timeout_s")
        app_prestop = d.put(
            "app_prestop_sleep_s",
            prestop + read_s,
            f"nginx's preStop {prestop} s + nginx read timeout {read_s} s: nginx gets SIGQUIT "
            "at the end of its preStop - it accepts nothing new and finishes its requests in "
            "flight, each answered within its read timeout - so gunicorn gets SIGTERM only "
            "after nginx has quit, with nothing waiting in the listen backlog it drops when it "
            "closes its socket (benoitc/gunicorn#3397; bench restart measures the same drain "
            "on one host)",
        )
    d.put(
        "termination_grace_period_s",
        app_prestop + graceful + TERMINATION_MARGIN_S,
        f"app preStop {app_prestop} s + graceful timeout {graceful} s + {TERMINATION_MARGIN_S} s: "
        "SIGKILL never lands on a request the app server is still allowed to finish",
    )
    native = _version(w) >= NATIVE_SLEEP_K8S_VERSION
    floor = ".".join(str(v) for v in NATIVE_SLEEP_K8S_VERSION)
    d.put(
        "native_sleep",
        native,
        f"Kubernetes {w.k8s_version} "
        + (
            f">= {floor}: the preStop `sleep` action is GA (KEP-3960), no sleep binary needed"
            if native
            else f"< {floor} (sleep action GA in {floor}, KEP-3960): preStop runs /bin/sleep "
            "from the image"
        ),
    )
