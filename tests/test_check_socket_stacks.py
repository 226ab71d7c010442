"""A front passing to a unix socket reaches the server making that socket file only where the
file is shared: a compose nginx the services of its own compose project (a volume of that
project), a pod's nginx sidecar the containers of its own pod (a volume of that pod), never
a server of the other platform that happens to use the same path. And a container a
kustomize overlay gives no `image:` runs the one image whose command reads the file a
`configMapGenerator` mounts at that path. Seen in dod-ccpo/atst (docker-compose.yml's
nginx and deploy/azure's pod both on `unix:/var/run/uwsgi/uwsgi.socket`). Each fixture is
a small repository written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

SOCKET = "/var/run/uwsgi/uwsgi.socket"
UWSGI_INI = f"[uwsgi]\nmodule = shop.wsgi\nsocket = {SOCKET}\nprocesses = 2\n"
DOCKERFILE = """\
FROM python:3.12-slim
RUN pip install uwsgi
WORKDIR /opt/shop
COPY . .
COPY deploy/k8s/uwsgi.ini .
CMD ["uwsgi", "--ini", "uwsgi.ini"]
"""
COMPOSE = """\
services:
  backend:
    build: .
    volumes:
      - sockets:/var/run/uwsgi
  frontend:
    image: nginx:1.25
    volumes:
      - ./deploy/docker/sample.nginx.conf:/etc/nginx/conf.d/default.conf
      - sockets:/var/run/uwsgi
volumes:
  sockets:
"""
SITE = f"server {{\n  listen 80;\n  location / {{\n    include uwsgi_params;\n    uwsgi_pass unix://{SOCKET};\n  }}\n}}\n"
POD_NGINX = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-nginx
data:
  shop.conf: |
    server {
      listen 8080;
      location / {
        uwsgi_pass unix:///var/run/uwsgi/uwsgi.socket;
      }
    }
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  template:
    spec:
      containers:
        - name: shop
          IMAGE
          volumeMounts:
            - name: sockets
              mountPath: /var/run/uwsgi
            - name: uwsgi-config
              mountPath: /opt/shop/uwsgi.ini
              subPath: uwsgi.ini
        - name: nginx
          image: nginx:1.25
          volumeMounts:
            - name: nginx-config
              mountPath: /etc/nginx/conf.d/
            - name: sockets
              mountPath: /var/run/uwsgi
      volumes:
        - name: sockets
          emptyDir: {}
        - name: nginx-config
          configMap:
            name: shop-nginx
        - name: uwsgi-config
          configMap:
            name: uwsgi-config
"""
KUSTOMIZATION = """\
resources:
  - deployment.yml
  - nginx-configmap.yml
configMapGenerator:
  - name: uwsgi-config
    files:
      - uwsgi.ini
"""


def _repo(root: Path, image: str) -> Path:
    return write(
        root,
        {
            "Dockerfile": DOCKERFILE,
            "docker-compose.yml": COMPOSE,
            "deploy/docker/sample.nginx.conf": SITE,
            "deploy/k8s/deployment.yml": DEPLOYMENT.replace("IMAGE", image),
            "deploy/k8s/nginx-configmap.yml": POD_NGINX,
            "deploy/k8s/uwsgi.ini": UWSGI_INI,
            "deploy/k8s/kustomization.yaml": KUSTOMIZATION,
        },
    )


def _fronts(root: Path) -> dict[str, list[str]]:
    result = check_folder(root)
    return {
        launch.chain[0].file.relative_to(root).as_posix(): sorted(
            {f.file.relative_to(root).as_posix() for f in launch.fronts}
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_a_socket_front_joins_only_its_own_stack(tmp_path: Path) -> None:
    """The compose nginx's `uwsgi_pass unix:///var/run/uwsgi/uwsgi.socket` reaches the compose
    backend, and the pod's nginx sidecar the same path only in its own pod: the compose
    launch's one front is sample.nginx.conf, never the pod's ConfigMap."""
    fronts = _fronts(_repo(tmp_path, "image: shop:latest"))
    assert fronts["docker-compose.yml"] == ["deploy/docker/sample.nginx.conf"]
    pod = [f for start, f in fronts.items() if start.startswith("deploy/k8s")]
    assert all(f == ["deploy/k8s/nginx-configmap.yml"] for f in pod)


def test_a_container_with_no_image_runs_the_image_reading_its_generated_config(
    tmp_path: Path,
) -> None:
    """A kustomize base whose container sets no `image:` (the overlay sets it) and mounts a
    `configMapGenerator`'s uwsgi.ini at /opt/shop/uwsgi.ini runs the one image whose CMD
    reads `uwsgi.ini` in WORKDIR /opt/shop: its launch reads deploy/k8s/uwsgi.ini behind the
    pod's nginx sidecar, and the compose launch keeps its own front."""
    root = _repo(tmp_path, "imagePullPolicy: Always")
    fronts = _fronts(root)
    assert fronts["docker-compose.yml"] == ["deploy/docker/sample.nginx.conf"]
    assert fronts["deploy/k8s/deployment.yml"] == ["deploy/k8s/nginx-configmap.yml"]
    result = check_folder(root)
    (pod,) = [
        [at.file.relative_to(root).as_posix() for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.chain[0].file.name == "deployment.yml"
    ]
    assert pod == ["deploy/k8s/deployment.yml", "Dockerfile", "deploy/k8s/uwsgi.ini"]
