"""A Kubernetes Ingress served by ingress-nginx, read as the nginx it is: a front.

ingress-nginx renders each Ingress path into an nginx `location` that proxies to the pods of
the backend Service, so the Ingress is read into the same `NginxConfig` an nginx file is, and
the rules that judge nginx's `proxy_read_timeout` against the app server's timeout judge the
Ingress's: its passes are the rules' paths (and the default backend), their target the
Service and its port (`flask:5000`), their timeouts the Ingress's annotations, unitless
seconds (ingress-nginx's annotations page, "Custom timeouts": `proxy-read-timeout`,
`proxy-send-timeout`, "All timeout values are unitless and in seconds"), else the
controller's ConfigMap defaults, 60 s each (its ConfigMap page: `proxy-read-timeout`,
`proxy-send-timeout`). ingress-nginx proxies with HTTP/1.1 (`proxy-http-version`, "1.1" by
default). Its upstream keep-alive pool (`upstream-keepalive-timeout`, 60 s, and
`upstream-keepalive-connections`, 320) is set only in the controller's ConfigMap, not per
Ingress (there is no annotation for it: kubernetes/ingress-nginx#11472 asks for one), so it
is not read from an Ingress; nor is `proxy-body-size`, which no rule of the model reads.

A pass reaches an app server as the cluster routes it: the Service of that name (one read in
the same run, any file), its port (by number or name) to its `targetPort`, the pods its
selector matches, the container listening there. An Ingress of another class (`alb`, `gce`,
`traefik`, ...) is not ingress-nginx and is not read as one; an Ingress naming no class is
the cluster's default class, read as ingress-nginx (minikube's and kind's ingress addons).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.chain import KubeService
from servertune.check.model import IGNORED_BY_PLATFORM, NginxConfig, PassTarget, Setting, note

if TYPE_CHECKING:
    from servertune.check.kubernetes import _Node

__all__ = [
    "DEFAULT_PROXY_TIMEOUT_S",
    "INGRESS_NGINX_ANNOTATIONS",
    "INGRESS_NGINX_DOCS",
    "ingress_fronts",
    "kube_services",
]

#: ingress-nginx's per-Ingress annotations live under this prefix.
INGRESS_NGINX_ANNOTATIONS = "nginx.ingress.kubernetes.io/"
#: Where ingress-nginx documents the annotations read here and the ConfigMap defaults.
INGRESS_NGINX_DOCS = (
    "https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/annotations/"
    "#custom-timeouts; "
    "https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/configmap/"
    "#proxy-read-timeout"
)
#: ingress-nginx's ConfigMap defaults for `proxy-read-timeout` and `proxy-send-timeout`.
DEFAULT_PROXY_TIMEOUT_S = 60.0


def _is_ingress_nginx(ingress: _Node) -> bool:
    """ingress-nginx serves it: its class names nginx (the field or the older annotation), an
    annotation of ingress-nginx's is set, or it names no class (the cluster's default)."""
    spec_class = ingress.get("spec", "ingressClassName")
    annotations = ingress.get("metadata", "annotations")
    keys = [k for k, _ in annotations.items()] if annotations is not None else []
    if any(k.startswith(INGRESS_NGINX_ANNOTATIONS) for k in keys):
        return True
    legacy = annotations.get("kubernetes.io/ingress.class") if annotations is not None else None
    named = spec_class if spec_class is not None else legacy
    if named is None or named.text() is None:
        return not any(_other_controllers(k) for k in keys)
    return "nginx" in (named.text() or "")


#: Annotation namespaces of other Ingress controllers (GKE's, HAProxy's, Kong's), beside the
#: `*.ingress.kubernetes.io` ones (`alb.`, `traefik.`): an Ingress naming no class that sets
#: one is meant for that controller.
_OTHER_NAMESPACES = frozenset(
    {"networking.gke.io", "haproxy.org", "haproxy-ingress.github.io", "konghq.com"}
)


def _other_controllers(key: str) -> bool:
    namespace = key.partition("/")[0] if "/" in key else ""
    return namespace in _OTHER_NAMESPACES or (
        namespace.endswith("ingress.kubernetes.io")
        and namespace not in ("nginx.ingress.kubernetes.io", "ingress.kubernetes.io")
    )


def _timeout(ingress: _Node, which: str) -> Setting[float]:
    """The Ingress's `proxy-<which>-timeout` annotation, else the ConfigMap's 60 s (default,
    at the Ingress's first line)."""
    from servertune.check.kubernetes import _seconds

    annotations = ingress.get("metadata", "annotations")
    key = f"{INGRESS_NGINX_ANNOTATIONS}proxy-{which}-timeout"
    value = annotations.get(key) if annotations is not None else None
    if value is None or value.text() is None:
        return Setting(DEFAULT_PROXY_TIMEOUT_S, ingress.at, default=True)
    written = (value.text() or "").strip()
    if not written.isdecimal():
        # ingress-nginx reads it as an integer (`parser.GetIntAnnotation`) and, refused,
        # keeps the ConfigMap's value: `'360s'` is valid YAML, a fault of the deployment.
        note(
            IGNORED_BY_PLATFORM,
            value.at,
            f"{key}: {written!r} is not a whole number of seconds, so ingress-nginx ignores "
            f"it and its default {DEFAULT_PROXY_TIMEOUT_S:g} s applies (the annotations are "
            "unitless seconds)",
            f'{key}: "{written.rstrip("s") if written.rstrip("s").isdecimal() else "SECONDS"}"',
        )
        return Setting(DEFAULT_PROXY_TIMEOUT_S, value.at, default=True)
    return Setting(_seconds(value, key, written), value.at)


def _backend(backend: _Node | None) -> tuple[str, _Node] | None:
    """(`service:port`, the node it is written at) of a backend: networking.k8s.io/v1's
    `service: {name, port: {number | name}}`, or v1beta1's `serviceName` / `servicePort`."""
    if backend is None:
        return None
    service = backend.get("service")
    if service is not None:
        name, port = service.get("name"), service.get("port", "number")
        port = port if port is not None else service.get("port", "name")
    else:
        name, port = backend.get("serviceName"), backend.get("servicePort")
    if name is None or port is None or not name.text() or not port.text():
        return None
    return f"{name.text()}:{port.text()}", name


def ingress_fronts(path: Path, text: str) -> tuple[NginxConfig, ...]:
    """Each ingress-nginx Ingress of the manifests, as the nginx config it renders to."""
    from servertune.check.kubernetes import _documents, _objects

    fronts: list[NginxConfig] = []
    for ingress in _objects(_documents(path, text)):
        kind = ingress.get("kind")
        if kind is None or kind.text() != "Ingress" or not _is_ingress_nginx(ingress):
            continue
        read, send = _timeout(ingress, "read"), _timeout(ingress, "send")
        routes = [
            (p.get("path").text() or "/" if p.get("path") is not None else "/", p.get("backend"))  # type: ignore[union-attr]
            for rule in ingress.each("spec", "rules")
            for p in rule.each("http", "paths")
        ]
        spec = ingress.get("spec")
        default = spec.get("defaultBackend") or spec.get("backend") if spec is not None else None
        if default is not None:
            routes.append(("/", default))
        passes = []
        for location, node in routes:
            found = _backend(node)
            if found is None:
                continue
            target, at = found
            passes.append(
                PassTarget(
                    "http",
                    target,
                    at.at,
                    read,
                    http11=True,
                    location=location,
                    send_timeout=send,
                    annotations=INGRESS_NGINX_ANNOTATIONS,
                )
            )
        if passes:
            fronts.append(NginxConfig(path, (path,), (), {}, tuple(passes)))
    return tuple(fronts)


def kube_services(path: Path, text: str) -> tuple[KubeService, ...]:
    """The Services of a manifest file."""
    from servertune.check.kubernetes import _documents, _kind, _name, _objects

    found: list[KubeService] = []
    for obj in _objects(_documents(path, text)):
        if _kind(obj) != "Service":
            continue
        selector = obj.get("spec", "selector")
        pairs = tuple((k, v.text() or "") for k, v in selector.items()) if selector else ()
        ports = []
        for entry in obj.each("spec", "ports"):
            number, name = entry.get("port"), entry.get("name")
            target = entry.get("targetPort") or number
            written = (
                (number.text() or "") if number is not None else "",
                (name.text() or "") if name is not None else "",
                (target.text() or "") if target is not None else "",
            )
            ports.append(Setting(written, entry.at))
        found.append(KubeService(_name(obj), pairs, tuple(ports)))
    return tuple(found)
