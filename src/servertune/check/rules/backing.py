"""Documentation several rules cite as their backing, written once."""

from __future__ import annotations

GUNICORN_DOCS = "https://docs.gunicorn.org/en/stable/settings.html"


K8S_RESOURCES = "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"


K8S_PROBES = (
    "https://kubernetes.io/docs/tasks/configure-pod-container/"
    "configure-liveness-readiness-startup-probes/"
)


DOCKER_RESOURCES = "https://docs.docker.com/engine/containers/resource_constraints/#cpu"
