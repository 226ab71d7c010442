"""Hypothesis strategies for valid workloads, shared by the sizing and rendering tests."""

from __future__ import annotations

from hypothesis import strategies as st

from servertune.workload import Workload

APP_DIRS = st.sampled_from([None, "/srv/app", "/opt/site-1/src"])


@st.composite
def workloads(draw: st.DrawFn, *, base_port: int = 20000) -> Workload:
    """Any valid workload with a numeric core count (plans never read the machine in tests)."""
    memory_per_worker = draw(st.none() | st.integers(50, 4000))
    memory_limit = draw(
        st.none()
        if memory_per_worker is None
        else st.none() | st.integers(memory_per_worker * 2, memory_per_worker * 200)
    )
    # The CPU per request as `measure` writes it (ms), or as a share of the time (older files).
    cpu = draw(
        st.fixed_dictionaries({"cpu_fraction": st.floats(0.01, 1.0, allow_nan=False)})
        | st.fixed_dictionaries({"cpu_ms": st.floats(0.001, 60_000, allow_nan=False)})
    )
    return Workload(
        cores=draw(st.integers(1, 64)),
        service_time_ms=draw(st.floats(0.5, 60_000, allow_nan=False)),
        **cpu,
        slow_call_ratio=draw(st.sampled_from([0.0, 0.001, 0.01, 0.1, 0.5, 1.0])),
        slow_call_ms=draw(st.floats(1, 120_000, allow_nan=False)),
        peak_rps=draw(st.none() | st.floats(0.1, 10_000, allow_nan=False)),
        memory_per_worker_mb=memory_per_worker,
        memory_limit_mb=memory_limit,
        lb_idle_timeout_s=draw(st.integers(1, 4000)),
        base_port=base_port,
        socket_dir=draw(st.sampled_from([None, "/run/servertune", "/tmp/st-sockets"])),
        app_dir=draw(APP_DIRS),
        nginx_user=draw(st.sampled_from([None, "www-data", "root"])),
        max_body_mb=draw(st.integers(0, 10_240)),
        interface=draw(st.sampled_from(["wsgi", "asgi"])),
        loop_blocking_fraction=draw(st.none() | st.floats(0.0, 1.0, allow_nan=False)),
        sync_views=draw(st.booleans()),
        gil=draw(st.sampled_from(["enabled", "disabled"])),
        gunicorn_asgi_worker=draw(st.sampled_from(["auto", "native", "uvicorn"])),
    )


K8S_NAMES = st.from_regex(r"\A[a-z]([a-z0-9-]{0,20}[a-z0-9])?\Z")


@st.composite
def cluster_workloads(draw: st.DrawFn) -> Workload:
    """A valid workload with the Kubernetes inputs drawn too (names, versions, replica ranges).

    A WSGI app: the kubernetes target runs gunicorn's WSGI workers (`gen kubernetes` refuses an
    ASGI app), so an ASGI plan has no worker class for it.
    """
    base = draw(workloads())
    minimum = draw(st.integers(1, 20))
    return Workload.model_validate(
        {
            **base.model_dump(),
            "interface": "wsgi",
            "app_name": draw(K8S_NAMES),
            "namespace": draw(K8S_NAMES),
            "app_image": draw(
                st.sampled_from(
                    ["app:1", "registry.example.com:5000/team/app:2.3.1", "ghcr.io/o/a"]
                )
            ),
            "k8s_version": f"1.{draw(st.integers(25, 37))}",
            "min_replicas": minimum,
            # Unset: derived from the peak, so every drawn plan can be served.
            "max_replicas": None,
            "probe_path": draw(st.sampled_from(["/", "/healthz", "/health/ready", "/-/live"])),
            "endpoint_propagation_s": draw(st.integers(1, 600)),
            "memory_limit_mb": base.memory_limit_mb,
            "k8s_layout": draw(st.sampled_from(["sidecar", "ingress", "gateway"])),
            "ingress_class": draw(K8S_NAMES),
            "gateway_name": draw(K8S_NAMES),
            "ingress_keepalive_s": draw(st.integers(1, 4000)),
            "server_name": draw(st.sampled_from(["_", "example.com", "*.api.example.com", "a"])),
        }
    )
