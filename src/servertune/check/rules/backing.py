"""Documentation several rules cite as their backing, written once."""

from __future__ import annotations

from servertune.check.caddy import CADDY_PROXY_DOCS
from servertune.check.traefik import TRAEFIK_ENTRYPOINT_DOCS, TRAEFIK_TRANSPORT_DOCS

GUNICORN_DOCS = "https://docs.gunicorn.org/en/stable/settings.html"


K8S_RESOURCES = "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"


K8S_PROBES = (
    "https://kubernetes.io/docs/tasks/configure-pod-container/"
    "configure-liveness-readiness-startup-probes/"
)


DOCKER_RESOURCES = "https://docs.docker.com/engine/containers/resource_constraints/#cpu"


#: How long Caddy and Traefik keep an idle connection to a server, by their own documentation.
FRONT_IDLE_DOCS = (
    f"Caddy's reverse_proxy http transport, keepalive (default 2m): {CADDY_PROXY_DOCS}; "
    f"Traefik's serversTransport, forwardingTimeouts.idleConnTimeout (default 90s): "
    f"{TRAEFIK_TRANSPORT_DOCS}"
)


#: How long Caddy and Traefik wait for a server's answer, by their own documentation.
FRONT_WAIT_DOCS = (
    f"Caddy's reverse_proxy http transport, response_header_timeout (default none): "
    f"{CADDY_PROXY_DOCS}; Traefik's forwardingTimeouts.responseHeaderTimeout (default 0s, none): "
    f"{TRAEFIK_TRANSPORT_DOCS} and respondingTimeouts.writeTimeout (default 0s): "
    f"{TRAEFIK_ENTRYPOINT_DOCS}"
)
