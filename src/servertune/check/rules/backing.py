"""Documentation several rules cite as their backing, written once."""

from __future__ import annotations

_GUNICORN_DOCS = "https://docs.gunicorn.org/en/stable/settings.html"


_K8S_RESOURCES = "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"


_K8S_PROBES = (
    "https://kubernetes.io/docs/tasks/configure-pod-container/"
    "configure-liveness-readiness-startup-probes/"
)


_DOCKER_RESOURCES = "https://docs.docker.com/engine/containers/resource_constraints/#cpu"
