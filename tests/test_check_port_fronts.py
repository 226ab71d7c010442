"""A front whose upstream host nothing read answers to (seen in monarch-initiative/monarch-app:
`server api:8000;` in services/nginx/, no compose file, the API built from backend/) is joined
by its port alone to the one server of the repository on that port that no other front
reaches, with a `joined-by-name` note saying so; when which server it reaches is not plain (two
on that port, a pass in another protocol) nothing is joined and the `not-followed` note stays.
Each repository is written here for the form it pins."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, fronts, write

_NGINX = """\
events {}
http {
  upstream up { server %s; }
  server {
    listen 80;
    location / { %s_pass %sup; }
  }
}
"""

_GUNICORN = 'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "-b", "0.0.0.0:%s", "app:app"]\n'


def _site(host: str, protocol: str = "proxy") -> str:
    return _NGINX % (host, protocol, "http://" if protocol == "proxy" else "")


def test_an_unknown_host_joins_the_one_server_on_its_port_with_a_note(tmp_path: Path) -> None:
    """`api:8000` names no compose service, alias or Kubernetes Service read here; the one
    server listening on 8000 (backend/Dockerfile's gunicorn) is its front's, joined with a
    `joined-by-name` note naming the host, and no `front host unknown` note is left."""
    root = write(
        tmp_path,
        {"backend/Dockerfile": _GUNICORN % 8000, "services/nginx/default.conf": _site("api:8000")},
    )
    result = check_folder(root)
    assert fronts(root) == {"backend/Dockerfile": ["services/nginx/default.conf:6"]}
    joined = [n.message for n in result.notes if n.kind == "joined-by-name"]
    assert len(joined) == 1
    assert "by port 8000 alone" in joined[0]
    assert "'api:8000'" in joined[0]
    assert not [n for n in result.notes if "front host unknown" in n.message]


def test_two_servers_on_the_port_join_none_and_the_note_stays(tmp_path: Path) -> None:
    """Two servers of the repository listen on 8000, equally far from the front, neither
    fronted: which one the unknown host is, is not in the files; nothing is joined and the
    `not-followed` note says the host is unknown."""
    root = write(
        tmp_path,
        {
            "backend/Dockerfile": _GUNICORN % 8000,
            "admin/Dockerfile": _GUNICORN % 8000,
            "services/nginx/default.conf": _site("api:8000"),
        },
    )
    result = check_folder(root)
    assert not result.links
    assert [n for n in result.notes if "front host unknown" in n.message]


def test_another_port_or_protocol_joins_nothing(tmp_path: Path) -> None:
    """The port must be the server's, and a `uwsgi_pass` reaches only a server speaking
    uwsgi: neither a pass to 9000 nor a uwsgi_pass to 8000 joins the gunicorn on 8000."""
    for host, protocol in (("api:9000", "proxy"), ("api:8000", "uwsgi")):
        root = write(
            tmp_path / protocol / host.replace(":", "-"),
            {"backend/Dockerfile": _GUNICORN % 8000, "nginx/default.conf": _site(host, protocol)},
        )
        assert not check_folder(root).links


def test_a_server_fronted_elsewhere_leaves_the_nearest_one(tmp_path: Path) -> None:
    """Of two servers on 8000, the compose stack's is fronted by its own nginx (`web:8000`);
    the other, built beside the front in deploy/aws/ (seen in cohere-ai/cohere-toolkit's
    aws_copilot_deploy/, whose nginx names a platform's DNS name), is the one the unknown
    host reaches. A host a compose service of the front's project answers to is never joined
    by port: the stack's nginx keeps only its `web`."""
    root = write(
        tmp_path,
        {
            "docker-compose.yml": (
                "services:\n  web:\n    build: .\n  nginx:\n    image: nginx\n    volumes:\n"
                "      - ./nginx.conf:/etc/nginx/nginx.conf\n"
            ),
            "Dockerfile": _GUNICORN % 8000,
            "nginx.conf": _site("web:8000"),
            "deploy/aws/Dockerfile": _GUNICORN % 8000,
            "deploy/aws/nginx.conf": _site("app.internal.example:8000"),
        },
    )
    assert fronts(root) == {
        "web": ["nginx.conf:6"],
        "deploy/aws/Dockerfile": ["deploy/aws/nginx.conf:6"],
    }


_BALANCERS = {
    "caddy/Caddyfile": ":80 {\n  reverse_proxy %s\n}\n",
    "haproxy/haproxy.cfg": (
        "defaults\n  mode http\n  timeout server 30s\n  timeout client 30s\n"
        "  timeout connect 5s\nfrontend web\n  bind *:80\n  default_backend app\n"
        "backend app\n  server s1 %s\n"
    ),
    "traefik/dynamic.yml": (
        "http:\n  services:\n    app:\n      loadBalancer:\n        servers:\n"
        '          - url: "http://%s"\n'
    ),
}


def test_a_balancers_unknown_host_joins_the_one_server_on_its_port(tmp_path: Path) -> None:
    """Caddy's `reverse_proxy api:8000`, an HAProxy `server s1 api:8000` and a Traefik
    service's `url: http://api:8000` name a host no compose service or Kubernetes Service read
    here answers to, as nginx's `server api:8000;` does: each joins the one server listening
    on 8000 by its port, with a `joined-by-name` note, and no `front host unknown` note."""
    for name, text in _BALANCERS.items():
        root = write(
            tmp_path / name.partition("/")[0],
            {"backend/Dockerfile": _GUNICORN % 8000, name: text % "api:8000"},
        )
        result = check_folder(root)
        assert [(f.balancer.kind, f.app is not None) for f in result.balancer_links] == [
            (name.partition("/")[0], True)
        ], name
        joined = [n.message for n in result.notes if n.kind == "joined-by-name"]
        assert len(joined) == 1, name
        assert "by port 8000 alone" in joined[0], name
        assert not [n for n in result.notes if "front host unknown" in n.message], name


def test_a_balancer_with_two_servers_on_its_port_joins_none(tmp_path: Path) -> None:
    """Two servers on 8000 equally near Caddy's `reverse_proxy api:8000`: nothing is joined,
    the `front host unknown` note stays."""
    root = write(
        tmp_path,
        {
            "backend/Dockerfile": _GUNICORN % 8000,
            "admin/Dockerfile": _GUNICORN % 8000,
            "caddy/Caddyfile": _BALANCERS["caddy/Caddyfile"] % "api:8000",
        },
    )
    result = check_folder(root)
    assert not [f for f in result.balancer_links if f.app is not None]
    assert [n for n in result.notes if "front host unknown" in n.message]


_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: registry
spec:
  selector:
    matchLabels: {app: registry}
  template:
    metadata:
      labels: {app: registry}
    spec:
      containers:
        - name: registry
          image: registry:1
          command: ["gunicorn", "-b", "0.0.0.0:8000", "app:app"]
"""


def test_a_server_a_container_runs_is_not_joined_by_port(tmp_path: Path) -> None:
    """The only server on 8000 runs in a Kubernetes pod read here, which answers to its own
    names: a front's `frontend:8000`, a host nothing read answers to, is another service (seen
    in OpenMined/PySyft: Traefik's docker config's `frontend:80`, and the registry pod's
    uvicorn on 80). Nothing is joined; the `front host unknown` note stays."""
    root = write(
        tmp_path,
        {"k8s/registry.yaml": _DEPLOYMENT, "proxy/default.conf": _site("frontend:8000")},
    )
    result = check_folder(root)
    assert [a.container.name for a in result.apps if a.container] == ["registry"]
    assert not result.links
    assert [n for n in result.notes if "front host unknown" in n.message]


def test_an_unrendered_variable_host_is_said_and_joined_by_port(tmp_path: Path) -> None:
    """`proxy_pass http://${API_HOST}:8000;` in a template nothing here renders (no compose
    file or image sets API_HOST) is a host set where the front starts: the one server on 8000
    is joined by its port with a `joined-by-name` note; with two there, nothing is joined and
    the `front host unknown` note says why (it was silent)."""
    site = "server {\n  listen 80;\n  location / { proxy_pass http://${API_HOST}:8000; }\n}\n"
    one = {"backend/Dockerfile": _GUNICORN % 8000, "nginx/default.conf.template": site}
    assert fronts(write(tmp_path / "one", one)) == {
        "backend/Dockerfile": ["nginx/default.conf.template:3"]
    }
    two = write(tmp_path / "two", {**one, "admin/Dockerfile": _GUNICORN % 8000})
    result = check_folder(two)
    assert not result.links
    unknown = [n.message for n in result.notes if "front host unknown" in n.message]
    assert len(unknown) == 1
    assert "${API_HOST}:8000" in unknown[0]


_SOCKET_COMPOSE = """\
services:
  web:
    build: ./app
    volumes: ["sockets:/srv/run"]
  nginx:
    image: nginx:1.27
    volumes:
      - ./nginx/default.conf:/etc/nginx/conf.d/default.conf
      - sockets:/var/run/app
volumes:
  sockets: {}
"""
_SOCKET_SITE = "server {\n  listen 80;\n  location / { proxy_pass http://unix:%s; }\n}\n"
_SOCKET_APP = 'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "--bind", "unix:%s", "a:app"]\n'


def test_a_socket_of_the_same_name_in_a_shared_container_is_joined(tmp_path: Path) -> None:
    """nginx passes to `unix:/var/run/app/gunicorn.sock`, a path no server binds; the one
    server of its compose project binding a socket of that file name, `/srv/run/gunicorn.sock`
    (a volume each container may mount at its own path), is joined with a `joined-by-name`
    note saying it was by the file name alone. The same two literal paths with no container
    (one machine, two files) join nothing."""
    shared = write(
        tmp_path / "shared",
        {
            "docker-compose.yml": _SOCKET_COMPOSE,
            "app/Dockerfile": _SOCKET_APP % "/srv/run/gunicorn.sock",
            "nginx/default.conf": _SOCKET_SITE % "/var/run/app/gunicorn.sock",
        },
    )
    result = check_folder(shared)
    assert fronts(shared) == {"web": ["nginx/default.conf:3"]}
    joined = [n.message for n in result.notes if n.kind == "joined-by-name"]
    assert len(joined) == 1
    assert "socket's file name alone" in joined[0]
    apart = write(
        tmp_path / "apart",
        {
            "app/Dockerfile": _SOCKET_APP % "/srv/run/gunicorn.sock",
            "nginx/default.conf": _SOCKET_SITE % "/var/run/app/gunicorn.sock",
        },
    )
    assert not check_folder(apart).links


_BIND_COMPOSE = """\
services:
  gateway:
    build: ./app
  nginx:
    image: nginx:1.27
    volumes: ["./nginx/default.conf:/etc/nginx/conf.d/default.conf"]
"""
_BIND_APP = 'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "-c", "conf.py", "a:app"]\n'
_BIND_CONF = "from settings import settings\nbind = f'{settings.host}:{settings.port}'\n"


def test_a_service_whose_one_server_has_an_unknown_bind_is_joined_by_name(
    tmp_path: Path,
) -> None:
    """nginx passes to `gateway:4444`, the compose service whose one server is a gunicorn
    whose bind comes from Python settings (seen in IBM/mcp-context-forge): the service's name
    is the link, joined with a `joined-by-name` note saying the port is not checked. A front
    passing to the same service on two ports (a sidecar in the container has the other) joins
    none, and a `not-followed` note says which port is the server's is not in the files."""
    site = "server {\n  listen 80;\n%s}\n"
    one = "  location / { proxy_pass http://gateway:4444; }\n"
    files = {"docker-compose.yml": _BIND_COMPOSE, "app/Dockerfile": _BIND_APP}
    files["app/conf.py"] = _BIND_CONF
    root = write(tmp_path / "one", {**files, "nginx/default.conf": site % one})
    result = check_folder(root)
    assert fronts(root) == {"gateway": ["nginx/default.conf:3"]}
    assert [n for n in result.notes if "port is not checked" in n.message]
    two = one + "  location /rpc { proxy_pass http://gateway:8787; }\n"
    root = write(tmp_path / "two", {**files, "nginx/default.conf": site % two})
    result = check_folder(root)
    assert not result.links
    assert [n for n in result.notes if "ports 4444, 8787" in n.message]
