"""An nginx config held in a ConfigMap key and mounted into a container at nginx's own paths
(`/etc/nginx/nginx.conf` by `subPath`, a ConfigMap mounted as `/etc/nginx/conf.d`) is a
front: read at its lines in the ConfigMap, also when the ConfigMap is in a file of its own,
and joined through the Kubernetes Service its host names, never a same-named compose
service. Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

APP = """\
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
          command: ["gunicorn", "app:app", "--bind", "0.0.0.0:8000", "--workers", "3"]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 7272, targetPort: 8000}]
"""

CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: proxy-files}
data:
  nginx.conf: |
    events {}
    http {
        upstream backend { server api:7272; }
        server {
            listen 80;
            location / {
                proxy_pass http://backend;
            }
        }
    }
"""

NGINX = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: proxy}
spec:
  selector: {matchLabels: {app: proxy}}
  template:
    metadata: {labels: {app: proxy}}
    spec:
      containers:
        - name: nginx
          image: nginx:1.27
          volumeMounts:
            - {name: conf, mountPath: /etc/nginx/nginx.conf, subPath: nginx.conf}
      volumes:
        - name: conf
          configMap: {name: proxy-files}
"""


def _fronts(root: Path) -> dict[str, list[str]]:
    result = check_folder(root)
    return {
        launch.app.kind + "@" + str(launch.chain[0].file.relative_to(root)): [
            f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_nginx_conf_mounted_by_subpath_from_a_config_map_of_another_file_is_the_front(
    tmp_path: Path,
) -> None:
    """cm.yaml's `nginx.conf: |` key, mounted at /etc/nginx/nginx.conf by proxy.yaml, is
    nginx's config: its `proxy_pass` (cm.yaml:12) reaches the gunicorn the Service `api`
    selects; the proxy's manifest no longer "starts no server and holds no proxy"."""
    root = write(
        tmp_path, {"k8s/app.yaml": APP, "k8s/cm.yaml": CONFIG_MAP, "k8s/proxy.yaml": NGINX}
    )
    assert _fronts(root) == {"gunicorn@k8s/app.yaml": ["k8s/cm.yaml:12"]}
    notes = check_folder(root).notes
    assert not [n for n in notes if n.kind == "starts-no-server" and "proxy" in str(n.at.file)]


def test_a_pods_nginx_never_reaches_a_compose_service_of_the_same_name(tmp_path: Path) -> None:
    """The same front beside a compose file whose service `api` listens on 7272, with no
    Kubernetes Service `api` read: the pod's nginx resolves `api` by the cluster's DNS, so it
    fronts nothing here (not the compose service)."""
    root = write(
        tmp_path,
        {
            "k8s/cm.yaml": CONFIG_MAP,
            "k8s/proxy.yaml": NGINX,
            "compose.yaml": (
                "services:\n  api:\n    image: example/api:1\n"
                '    command: ["gunicorn", "app:app", "--bind", "0.0.0.0:7272"]\n'
            ),
        },
    )
    assert _fronts(root) == {"gunicorn@compose.yaml": []}


def test_a_config_map_mounted_as_conf_d_gives_each_conf_key(tmp_path: Path) -> None:
    """A ConfigMap mounted whole at /etc/nginx/conf.d (no subPath), in the same file as the
    Deployment: each `*.conf` key is a site nginx reads (default.conf's pass at its line)."""
    site = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: proxy-files}\ndata:\n"
        "  default.conf: |\n"
        "    server {\n"
        "        listen 80;\n"
        "        location / { proxy_pass http://api:7272; }\n"
        "    }\n"
        "  README: not a site\n"
    )
    mount = NGINX.replace(
        "{name: conf, mountPath: /etc/nginx/nginx.conf, subPath: nginx.conf}",
        "{name: conf, mountPath: /etc/nginx/conf.d}",
    )
    root = write(tmp_path, {"app.yaml": APP, "proxy.yaml": site + "---\n" + mount})
    assert _fronts(root) == {"gunicorn@app.yaml": ["proxy.yaml:8"]}


def test_a_pods_nginx_passing_to_a_unix_socket_fronts_the_uwsgi_making_it(tmp_path: Path) -> None:
    """A ConfigMap site mounted at /etc/nginx/conf.d/ in an nginx sidecar that passes
    `uwsgi_pass unix:///var/run/uwsgi/uwsgi.socket` (the socket on an emptyDir the pod's
    containers share, as seen in dod-ccpo/atst): a unix socket is a file, reached by its path,
    not a Service the cluster routes, so the front is joined to the uWSGI ini whose `socket`
    makes it."""
    site = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: proxy-files}\ndata:\n"
        "  app.conf: |-\n"
        "    server {\n"
        "        listen 8342;\n"
        "        location / { include uwsgi_params; uwsgi_pass unix:///var/run/uwsgi/u.socket; }\n"
        "    }\n"
    )
    mount = NGINX.replace(
        "{name: conf, mountPath: /etc/nginx/nginx.conf, subPath: nginx.conf}",
        "{name: conf, mountPath: /etc/nginx/conf.d/}",
    )
    root = write(
        tmp_path,
        {
            "deploy/proxy.yaml": site + "---\n" + mount,
            "deploy/uwsgi.ini": "[uwsgi]\nmodule = app:app\nsocket = /var/run/uwsgi/u.socket\n"
            "processes = 4\n",
        },
    )
    assert _fronts(root) == {"uwsgi@deploy/uwsgi.ini": ["deploy/proxy.yaml:8"]}
