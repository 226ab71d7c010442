"""Load balancers whose idle timeout is known, so `--lb NAME` needs no number.

Each entry cites the provider's documentation. A configurable timeout is listed at its default:
pass `--lb-idle-timeout S` when yours was changed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LOAD_BALANCERS", "LoadBalancer"]


@dataclass(frozen=True)
class LoadBalancer:
    """A load balancer in front of nginx (or the app server): how long it keeps idle connections."""

    name: str
    #: Seconds (inf: a load balancer config read by `check` that never closes for idleness).
    idle_timeout_s: float
    summary: str
    source: str
    #: The documentation of its defaults, for a config read by `check` (Caddy's, Traefik's).
    docs: str = ""
    #: It proxies through Go's http.Transport (Traefik, Caddy), which sends an idempotent
    #: request (GET, HEAD) again on a new connection when a reused one is closed before any
    #: answer: on a server that only serves files the idle race costs no client anything.
    replays_idempotent: bool = False
    #: It checks that a pooled connection is still open before it sends on it (httpd's
    #: mod_proxy: `ap_proxy_check_connection` in modules/proxy/proxy_util.c, run on every
    #: reuse): only a close landing between that check and the request meets the race.
    checks_before_reuse: bool = False


LOAD_BALANCERS: dict[str, LoadBalancer] = {
    lb.name: lb
    for lb in (
        LoadBalancer(
            "aws-alb",
            60,
            "AWS Application Load Balancer, connection idle timeout (default 60 s, configurable)",
            "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html",
        ),
        LoadBalancer(
            "aws-clb",
            60,
            "AWS Classic Load Balancer, idle connection timeout (default 60 s, configurable)",
            "https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-idle-timeout.html",
        ),
        LoadBalancer(
            "gcp-https",
            600,
            "Google Cloud external Application Load Balancer, backend keep-alive (fixed 600 s)",
            "https://cloud.google.com/load-balancing/docs/https#timeouts_and_retries",
        ),
        LoadBalancer(
            "ingress-nginx",
            60,
            "Kubernetes ingress-nginx, upstream-keepalive-timeout (default 60 s, ConfigMap)",
            "https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/configmap/#upstream-keepalive-timeout",
        ),
    )
}
