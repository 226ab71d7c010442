"""Kubernetes probes and exposure: readiness before traffic, liveness that does not restart a
busy pod, no bare pod behind a LoadBalancer Service.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

from servertune.check.chain import normalise
from servertune.check.model import AppServer, Container, Finding, Location, Severity
from servertune.check.rules.backing import K8S_PROBES, K8S_RESOURCES
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown
from servertune.check.rules.workers import ASYNC_WORKERS

#: The files do not say which path the app answers: a fix says so rather than promise one.
_PATH_UNKNOWN = "(/health: put a path your app answers; the files do not say which)"


@check_rule(
    "liveness-kills-busy-pod",
    Severity.warning,
    "a liveness probe fails while every worker is busy on requests the timeout allows",
    "the probe is answered by the same workers; it fails after failureThreshold x periodSeconds: "
    + K8S_PROBES,
    kind="fault",
)
def liveness_kills_busy_pod(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box, timeout = app.container, app.request_timeout
        if box is None or timeout is None or timeout.value <= 0:
            continue
        if app.interface == "asgi" or (
            app.worker_class is not None and app.worker_class.value in ASYNC_WORKERS
        ):
            continue  # an event loop answers the probe beside slow requests
        for probe in box.probes:
            if probe.kind != "liveness" or not probe.target.startswith("httpGet"):
                continue
            window = probe.period_s * probe.failure_threshold
            if window < timeout.value:
                yield rule.finding(
                    probe.at,
                    f"the liveness probe gives up after {probe.failure_threshold} x "
                    f"{probe.period_s} s = {window} s, less than the request timeout "
                    f"{as_shown(timeout, ' s')}: when every worker is busy on slow but legitimate "
                    "requests the kubelet restarts a healthy container and drops them all",
                    f"failureThreshold: {math.ceil(timeout.value / probe.period_s) + 1}",
                    (timeout.at,),
                )


@check_rule(
    "liveness-same-as-readiness",
    Severity.info,
    "liveness and readiness probe the same endpoint with the same settings",
    "a busy pod should leave the Service (readiness) long before it is restarted (liveness): "
    + K8S_PROBES,
    kind="fault",
)
def liveness_same_as_readiness(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None:
            continue
        by_kind = {p.kind: p for p in box.probes}
        live, ready = by_kind.get("liveness"), by_kind.get("readiness")
        if live is None or ready is None:
            continue
        fields = ("target", "period_s", "timeout_s", "failure_threshold", "initial_delay_s")
        if all(getattr(live, f) == getattr(ready, f) for f in fields):
            # Advice, not a fault: Kubernetes' docs recommend (not require) the same endpoint
            # with a higher failureThreshold for liveness; a liveness that restarts a busy pod
            # within its request timeout is liveness-kills-busy-pod's warning.
            finding = rule.finding(
                live.at,
                "the liveness probe is the readiness probe: the moment the pod is too busy to be "
                "ready it is also restarted (Kubernetes' docs suggest the same endpoint with a "
                "higher failureThreshold for liveness, so the pod leaves the Service first)",
                "liveness: a higher failureThreshold (restart only after the request timeout)",
                (ready.at,),
            )
            yield replace(finding, severity=Severity.advice)


@check_rule(
    "no-readiness-probe",
    Severity.info,
    "traffic reaches the container before the app server answers",
    "without a readiness probe a container is Ready as soon as it starts: " + K8S_PROBES,
    kind="fault",
)
def no_readiness_probe(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not app.sockets or box.pod_ready_probe:
            continue  # a pod is Ready when all its containers are: a sidecar's probe counts
        if exposed_bare(box):
            continue  # exposed-without-resources-or-probes says it, and more
        if not any(p.kind == "readiness" for p in box.probes):
            yield rule.finding(
                box.at,
                f"container {box.name!r} has no readiness probe: the Service sends it requests "
                "while the workers are still importing the app, and those connections wait or fail",
                f"readinessProbe: {{httpGet: {{path: /health, port: {_probe_port(app)}}}}}"
                f"   {_PATH_UNKNOWN}",
            )


def _probe_port(app: AppServer) -> str:
    """The port a probe of this app server should name: one it listens on (a container port
    named `http` may not exist)."""
    ports = [normalise(s.value)[1] for s in app.sockets if normalise(s.value)[0] != "unix"]
    return next((p for p in ports if p.isdigit()), "http")


def exposed_bare(box: Container) -> bool:
    """A pod a LoadBalancer Service exposes, with no resources and no probe at all."""
    bare = (
        box.cpu_limit is None
        and box.cpu_request is None
        and box.memory_limit_mb is None
        and box.memory_request_mb is None
    )
    return box.exposed_by is not None and bare and not box.probes and not box.pod_ready_probe


_K8S_QOS = "https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/#besteffort"


@check_rule(
    "exposed-without-resources-or-probes",
    Severity.warning,
    "a pod behind a LoadBalancer Service has no resources and no probes",
    f"{K8S_PROBES}; {_K8S_QOS} (a pod with no requests or limits is BestEffort: the first "
    "evicted under node pressure); " + K8S_RESOURCES,
    kind="fault",
)
def exposed_without_resources_or_probes(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[Location] = set()
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not exposed_bare(box):
            continue
        if box.at in seen or box.exposed_by is None:
            continue
        seen.add(box.at)
        port = _probe_port(app)
        yield rule.finding(
            box.at,
            f"container {box.name!r} is exposed by the LoadBalancer Service "
            f"`{box.exposed_by.value}` with no readiness or liveness probe and no CPU or memory "
            "request or limit: the balancer sends it requests while the workers are still "
            "starting and keeps sending them to a pod that hangs, and as a BestEffort pod it "
            f"is the first evicted when its node runs short, with its {app.workers.value} "
            "workers sized for no number of cores",
            f"readinessProbe: {{httpGet: {{path: /health, port: {port}}}}} and "
            f'resources: {{requests: {{cpu: "{app.workers.value}", memory: ...}}, limits: '
            f'{{cpu: "{app.workers.value}", memory: ...}}}}   {_PATH_UNKNOWN}',
            (box.exposed_by.at,),
        )


_GUNICORN_ARBITER = (
    "gunicorn/arbiter.py (Arbiter.start() creates the listeners, which gunicorn/sock.py binds "
    "and listen()s in the master; run() then forks the workers, each of which imports the app "
    "in Worker.init_process() -> load_wsgi())"
)


@check_rule(
    "readiness-tcp-before-workers",
    Severity.warning,
    "a tcpSocket readiness probe passes as soon as gunicorn's master listens, before any "
    "worker can answer",
    "a tcpSocket probe succeeds when the TCP connection is established, which the kernel does "
    "for a listening socket whatever its processes are doing; an httpGet probe needs a "
    f"response: {K8S_PROBES}; {_GUNICORN_ARBITER}",
    kind="fault",
)
def readiness_tcp_before_workers(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not app.listens_before_app:
            continue
        if any(p.kind == "startup" and not p.target.startswith("tcpSocket") for p in box.probes):
            continue  # readiness runs only after a startup probe that needs an answer passed
        ports = {
            int(port)
            for host, port in (normalise(s.value) for s in app.sockets)
            if host != "unix" and port.isdigit()
        }
        for probe in box.probes:
            if probe.kind != "readiness" or not probe.target.startswith("tcpSocket"):
                continue
            if probe.port is None or probe.port not in ports:
                continue
            listens = next(s for s in app.sockets if normalise(s.value)[1] == str(probe.port))
            yield rule.finding(
                probe.at,
                f"the readiness probe opens a TCP connection to port {probe.port}, which "
                f"{app.kind}'s master listens on ({listens.at}) before its "
                f"{app.workers.value} worker(s) have "
                "imported the app: the kernel accepts the connection, the pod turns Ready and "
                "the Service sends it requests that wait in the listen queue for the workers "
                "to boot (or are reset if they fail to); later it stays Ready while every "
                "worker is stuck",
                f"readinessProbe: {{httpGet: {{path: /health, port: {probe.port}}}}}   (a path "
                "the app answers: only a booted worker responds)",
                (listens.at,),
            )
