"""kubernetes.yaml: ConfigMap (the rendered gunicorn.conf.py and nginx.conf), Deployment, Service,
HorizontalPodAutoscaler and PodDisruptionBudget for one pod of nginx + gunicorn.

The pod runs the shared-socket gunicorn.conf.py and an nginx in front of it, both rendered from
the same plan as on one host (the very templates, included). Only the nginx listen address
differs: in a pod nginx must listen on every interface for the Service to reach it.
"""

from __future__ import annotations

from servertune.sizing import Plan
from servertune.templating import render_template

__all__ = ["POD_LISTEN_HOST", "render_kubernetes"]

#: nginx in the pod listens on the pod's address; the app server stays on loopback.
POD_LISTEN_HOST = "0.0.0.0"


def render_kubernetes(plan: Plan) -> str:
    """Every manifest in one multi-document YAML file; strings are double-quoted, numbers bare."""
    w = plan.workload
    return render_template(
        "kubernetes.yaml.j2",
        plan=plan,
        w=w,
        # gunicorn.conf.py.j2
        shared=plan.shared_socket.endpoint,
        # nginx.conf.j2 / nginx-site.conf.j2: nginx in front of the pod's one gunicorn
        backend="gunicorn",
        upstream="servertune_gunicorn",
        servers=[plan.shared_socket.endpoint],
        hosts=[],
        listen=f"{POD_LISTEN_HOST}:{w.listen_port}",
        # The nginx image holds none of the app's files: in the pod nginx proxies every path
        # (serve `static` from the app image, or from a CDN).
        static=(),
    )
