"""Fronts check reads in more of the places projects keep them: Caddy v1's `proxy`, an nginx
site whose values a start script fills (`listen {PORT};`), an Ingress naming the pods' port,
an nginx config held in a ConfigMap and including its other keys by a glob; and a literal
address of another machine, which is no front of an app that only listens on the same port.
Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.caddy import CADDY_V1_DOCS, read_caddyfile
from servertune.check.graph import launches
from tests.folder_support import check_folder, write


def _fronts(root: Path) -> dict[str, list[str]]:
    """Each launch's first chain step (its container, else its first file) -> its fronts."""
    result = check_folder(root)
    assert not result.errors, result.errors
    found: dict[str, list[str]] = {}
    for launch in launches(result.apps, result.links, result.balancer_links):
        box = launch.app.container
        key = box.name if box is not None else launch.chain[0].file.relative_to(root).as_posix()
        found[key] = [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
    return found


def _notes(root: Path, kind: str) -> list[str]:
    return [
        f"{n.at.file.relative_to(root).as_posix()}:{n.at.line}"
        for n in check_folder(root).notes
        if n.kind == kind
    ]


CADDY_V1 = """\
0.0.0.0:80 {
    root /srv/www
    proxy /api http://localhost:9115 {
        transparent
        upstream unix:/run/app.sock
    }
    proxy / 127.0.0.1:9109
}
"""


def test_caddy_v1_proxy_is_a_front_of_its_upstreams(tmp_path: Path) -> None:
    """Caddy v1's `proxy FROM TO... { upstream TO }` (a directive v2 does not have) passes to
    its upstreams, written as v1 writes them (no scheme is http, `unix:/path` a socket); its
    `keepalive` counts connections and its docs give no idle time nor wait, so none is
    judged (seen in skylines' Caddyfile, in front of systemd gunicorns). A `proxy` naming no
    base path first (a plugin's handler, caddy-l4's `proxy UPSTREAM`) is not v1's."""
    path = write(tmp_path, {"Caddyfile": CADDY_V1})
    balancers, _ = read_caddyfile(path / "Caddyfile", CADDY_V1)
    assert [[s.value for s in b.servers] for b in balancers] == [
        ["localhost:9115", "unix:/run/app.sock"],
        ["127.0.0.1:9109"],
    ]
    assert all(b.idle is None and b.server_timeout is None for b in balancers)
    assert balancers[0].docs == CADDY_V1_DOCS
    plugin = ":80 {\n    proxy 127.0.0.1:9115\n}\n"
    assert read_caddyfile(path / "Caddyfile", plugin)[0] == ()
    write(
        tmp_path,
        {
            "deploy/app.service": "[Service]\nExecStart=/usr/bin/gunicorn -b 127.0.0.1:9115 "
            "-w 2 app:app\n",
            "deploy/tiles.service": "[Service]\nExecStart=/usr/bin/gunicorn -b 127.0.0.1:9109 "
            "-w 2 tiles:app\n",
        },
    )
    fronts = _fronts(tmp_path)
    assert fronts["deploy/app.service"] == ["Caddyfile:3"]
    assert fronts["deploy/tiles.service"] == ["Caddyfile:7"]


REMOTE_UPSTREAM = """\
upstream remote {
    server 203.0.113.7;
    server 198.51.100.9;
}
server {
    listen 8080;
    location / {
        proxy_pass http://remote;
    }
}
"""


def test_a_literal_address_of_another_machine_is_no_front_of_a_wildcard_bind(
    tmp_path: Path,
) -> None:
    """`server 203.0.113.7;` (port 80) is some machine's address no container or service read
    here has: uvicorns bound to 0.0.0.0:80 are not joined to it by the port alone, and the
    note says so; an app bound to that very address is (seen in ooni/backend's reverse proxy
    of remote IPs, joined to six uvicorns)."""
    write(
        tmp_path,
        {
            "proxy/backend.conf": REMOTE_UPSTREAM,
            "auth/Dockerfile": 'FROM python:3.12-slim\nCMD ["uvicorn", "auth:app", "--host", '
            '"0.0.0.0", "--port", "80"]\n',
        },
    )
    assert _fronts(tmp_path) == {"auth/Dockerfile": []}
    assert "proxy/backend.conf:2" in _notes(tmp_path, "not-followed")
    write(
        tmp_path,
        {
            "auth/Dockerfile": 'FROM python:3.12-slim\nCMD ["uvicorn", "auth:app", "--host", '
            '"203.0.113.7", "--port", "80"]\n'
        },
    )
    assert _fronts(tmp_path) == {"auth/Dockerfile": ["proxy/backend.conf:8"]}


FILLED_SITE = """\
server {
    listen {PORT};
    server_name app.{DOMAIN};
    proxy_read_timeout @READ_TIMEOUT@;
    location / {
        include uwsgi_params;
        uwsgi_pass unix:///run/uwsgi.sock;
    }
}
"""


def test_nginx_values_a_start_script_fills_are_notes_and_the_rest_is_judged(
    tmp_path: Path,
) -> None:
    """`listen {PORT};` (no nginx syntax: a start script's sed fills it) and `@READ_TIMEOUT@`
    are unresolved-variable notes, each line read as absent; the site is not refused, and its
    uwsgi_pass still fronts the uWSGI on that socket (seen in alphagov's
    digitalmarketplace-docker-base: the only exit 2 of its corpus)."""
    write(
        tmp_path,
        {
            "nginx/site": FILLED_SITE,
            "nginx/run.sh": '#!/bin/sh\nsed -i "s/{PORT}/$PORT/g" /etc/nginx/sites-enabled/site\n'
            "exec nginx\n",
            "uwsgi.ini": "[uwsgi]\nmodule = app:app\nsocket = /run/uwsgi.sock\nprocesses = 4\n",
        },
    )
    assert _fronts(tmp_path) == {"uwsgi.ini": ["nginx/site:7"]}
    assert _notes(tmp_path, "unresolved-variable") == ["nginx/site:2", "nginx/site:4"]


KUBE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: example/api:1
          command: ["uvicorn", "api:app", "--host", "0.0.0.0", "--port", "8000"]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8000}]
"""

INGRESS = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations:
    nginx.ingress.kubernetes.io/proxy-body-size: "32m"
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: api, port: {number: 8000}}}
"""


def test_an_ingress_naming_the_pods_port_reaches_them_through_the_service(
    tmp_path: Path,
) -> None:
    """ingress-nginx takes an Ingress backend's port as the Service port's number, name or
    targetPort (its controller's serviceEndpoints): `port: {number: 8000}` on a Service
    `port: 80, targetPort: 8000` reaches the pods' uvicorn on 8000 (seen in kernelci-api's
    kube/aks)."""
    write(tmp_path, {"kube/api.yaml": KUBE, "kube/ingress.yaml": INGRESS})
    assert "kube/ingress.yaml:13" in _fronts(tmp_path)["api"]


NGINX_CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: web-nginx}
data:
  nginx.conf: |
    events {}
    http {
        include /etc/nginx/conf.d/*.conf;
    }
  site.conf: |
    server {
        listen 80;
        include snippets/pass.conf;
    }
  pass.conf: |
    location / {
        proxy_pass http://web:8000;
    }
"""

NGINX_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx}
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
        - name: nginx
          image: nginx:1.27
          volumeMounts:
            - {name: conf, mountPath: /etc/nginx/nginx.conf, subPath: nginx.conf}
            - {name: conf, mountPath: /etc/nginx/conf.d/default.conf, subPath: site.conf}
            - {name: conf, mountPath: /etc/nginx/snippets/pass.conf, subPath: pass.conf}
      volumes:
        - name: conf
          configMap: {name: web-nginx}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          command: ["gunicorn", "-b", "0.0.0.0:8000", "-w", "2", "web:app"]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 8000}]
"""


def test_nginx_in_a_config_map_reads_the_keys_its_include_glob_names(tmp_path: Path) -> None:
    """An nginx.conf held in a ConfigMap includes `conf.d/*.conf`: the other keys the
    container mounts there by subPath are those files, and one of them including a third key
    of the same manifest is no include cycle; its proxy_pass fronts the gunicorn of the
    Service it names (seen in DjangoBlog's deploy/k8s)."""
    write(tmp_path, {"k8s/configmap.yaml": NGINX_CONFIG_MAP, "k8s/deploy.yaml": NGINX_DEPLOYMENT})
    assert _fronts(tmp_path)["web"] == ["k8s/configmap.yaml:17"]
