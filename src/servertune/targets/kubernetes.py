"""kubernetes.yaml: ConfigMap (the rendered gunicorn.conf.py and nginx.conf), Deployment, Service,
HorizontalPodAutoscaler and PodDisruptionBudget; with `k8s_layout = "ingress"` also an Ingress,
with `k8s_layout = "gateway"` a Gateway API HTTPRoute instead.

`sidecar` (the default): the pod runs the shared-socket gunicorn.conf.py and an nginx in front
of it, both rendered from the same plan as on one host (the very templates, included). Only the
nginx listen address differs: in a pod nginx must listen on every interface for the Service to
reach it.

`ingress`: the pod runs gunicorn alone, listening on the pod port (the same gunicorn.conf.py
but for its bind), behind a Service and a `networking.k8s.io/v1` Ingress whose ingress-nginx
annotations carry the plan's proxy timeouts.

`gateway`: the `ingress` pod and Service behind a `gateway.networking.k8s.io/v1` HTTPRoute
attached to the Gateway `gateway_name`; its `timeouts` carry the same read timeout.
"""

from __future__ import annotations

from servertune.sizing import Plan
from servertune.templating import render_template

__all__ = ["POD_LISTEN_HOST", "render_kubernetes"]

#: The pod port listens on the pod's address: nginx in the sidecar layout (gunicorn stays on
#: loopback), gunicorn itself in the ingress layout.
POD_LISTEN_HOST = "0.0.0.0"


def render_kubernetes(plan: Plan) -> str:
    """Every manifest in one multi-document YAML file; strings are double-quoted, numbers bare."""
    w = plan.workload
    pod_port = f"{POD_LISTEN_HOST}:{w.listen_port}"
    ingress = w.k8s_layout != "sidecar"
    return render_template(
        "kubernetes.yaml.j2",
        plan=plan,
        w=w,
        # gunicorn.conf.py.j2: on the pod port itself when no nginx is in front of it.
        shared=pod_port if ingress else plan.shared_socket.endpoint,
        # The Ingress rule's host / the HTTPRoute's hostname: none for nginx's catch-all server_name '_'.
        ingress_host=None if w.server_name == "_" else w.server_name,
        # nginx.conf.j2 / nginx-site.conf.j2: nginx in front of the pod's one gunicorn
        backend="gunicorn",
        upstream="servertune_gunicorn",
        servers=[plan.shared_socket.endpoint],
        down=[],
        hosts=[],
        listen=pod_port,
        # The nginx image holds none of the app's files: in the pod nginx proxies every path
        # (serve `static` from the app image, or from a CDN).
        static=(),
    )
