"""Which app server a front's host reaches: the container that answers to that name (a compose
service, a network alias of one, a Kubernetes Service selecting the pod), never an app that
only listens on the same port; and the address an nginx pass names once its `set` variables
and a URI holding variables are read as nginx reads them. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, fronts, write

_STAGES = """\
FROM python:3.12-slim AS base
WORKDIR /app
COPY . /app

FROM base AS development
CMD ["python", "manage.py", "runserver", "0.0.0.0:8000"]

FROM base AS production
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120", "app.wsgi"]
"""

_COMPOSE = """\
services:
  app:
    build:
      context: .
      target: {target}
    networks:
      default:
        aliases:
          - app-service
  nginx:
    image: nginx:1.27
    volumes:
      - ./nginx:/etc/nginx/conf.d:ro
"""


def _site(server: str) -> str:
    return (
        f"upstream backend {{\n    server {server} fail_timeout=0;\n}}\n"
        "server {\n    listen 80;\n    location / {\n        proxy_pass http://backend;\n"
        "    }\n}\n"
    )


def _port_alone(root: Path) -> list[str]:
    return [
        f"{n.at.file.relative_to(root).as_posix()}:{n.at.line}"
        for n in check_folder(root).notes
        if n.kind == "not-followed" and "by the port alone" in n.message
    ]


def test_network_alias_of_a_service_whose_stage_starts_no_server_reaches_no_app(
    tmp_path: Path,
) -> None:
    """`server app-service:8000` is the network alias of service `app`, built with `target:
    development` (runserver): the production stage's gunicorn, on the same port, is not
    that container, so it is not joined (a false front's timeouts would be judged); the host
    is known (that service), so no "front host unknown" note."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": _COMPOSE.format(target="development"),
            "nginx/default.conf": _site("app-service:8000"),
        },
    )
    assert fronts(root) == {"Dockerfile": []}
    assert _port_alone(root) == []


def test_network_alias_of_the_service_that_runs_the_server_reaches_it(tmp_path: Path) -> None:
    """The same alias when service `app` is built with `target: production`: its gunicorn is
    the container that answers to `app-service`, joined through the upstream."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": _COMPOSE.format(target="production"),
            "nginx/default.conf": _site("app-service:8000"),
        },
    )
    assert fronts(root) == {"app": ["nginx/default.conf:7"]}
    assert _port_alone(root) == []


def test_a_services_hostname_reaches_it_as_dockers_dns_resolves_it(tmp_path: Path) -> None:
    """`server shop-api:8000` where no service is named `shop-api` but service `app` sets
    `hostname: shop-api` (as prowler's `api` does): Docker's DNS answers a container's
    hostname on the project's network, so app's gunicorn is joined through the upstream, and
    the host is known (no "front host unknown" note)."""
    compose = _COMPOSE.format(target="production").replace(
        "    networks:\n      default:\n        aliases:\n          - app-service\n",
        "    hostname: shop-api\n",
    )
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": compose,
            "nginx/default.conf": _site("shop-api:8000"),
        },
    )
    assert fronts(root) == {"app": ["nginx/default.conf:7"]}
    assert _port_alone(root) == []


def test_host_no_file_answers_to_reaches_no_app_on_its_port(tmp_path: Path) -> None:
    """`server zzz-nothing:8000`, and a template's `server ${BACKEND_HOST}:8000` that nothing
    sets: no compose service, alias or Kubernetes Service answers, so the gunicorn listening
    on 8000 is not joined by its port; the name is a "front host unknown" note."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": _COMPOSE.format(target="production"),
            "nginx/default.conf": _site("zzz-nothing:8000"),
            "deploy/default.conf.template": _site("${BACKEND_HOST}:8000"),
        },
    )
    assert fronts(root) == {"app": []}
    notes = [n for n in check_folder(root).notes if "front host unknown" in n.message]
    assert "nginx/default.conf:2" in _port_alone(root)
    assert any("'zzz-nothing:8000'" in n.message for n in notes)


def test_kubernetes_service_name_reaches_the_pods_it_selects(tmp_path: Path) -> None:
    """An nginx config passing to `api-svc.shop.svc.cluster.local:80`: the Kubernetes Service
    `api-svc` selects the pods labelled app=api, whose container listens on its targetPort
    8000; the other Deployment's gunicorn on 8000 is not selected, so not joined."""
    deployment = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: {name}
          image: example/{name}:1
          command: ["gunicorn", "-b", "0.0.0.0:8000", "-w", "2", "{name}.wsgi"]
"""
    service = """\
apiVersion: v1
kind: Service
metadata: {name: api-svc}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8000}]
"""
    root = write(
        tmp_path,
        {
            "k8s/api.yaml": deployment.format(name="api") + "---\n" + service,
            "k8s/admin.yaml": deployment.format(name="admin"),
            "nginx/nginx.conf": (
                "server {\n    listen 80;\n    location / {\n"
                "        proxy_pass http://api-svc.shop.svc.cluster.local:80;\n    }\n}\n"
            ),
        },
    )
    assert fronts(root) == {"api": ["nginx/nginx.conf:4"], "admin": []}


def test_compose_service_name_still_reaches_its_app(tmp_path: Path) -> None:
    """`proxy_pass http://app:8000;` in the front's own compose project: the service `app`,
    the common case, joined as before."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": _COMPOSE.format(target="production"),
            "nginx/default.conf": (
                "server {\n    listen 80;\n    location / {\n"
                "        proxy_pass http://app:8000;\n    }\n}\n"
            ),
        },
    )
    assert fronts(root) == {"app": ["nginx/default.conf:4"]}


def test_pass_through_a_set_variable_reaches_its_value(tmp_path: Path) -> None:
    """`set $upstream_endpoint http://app:8000;` then `proxy_pass $upstream_endpoint;` (the
    Docker resolver pattern, the `set` in the server block or the location), `proxy_pass
    http://app:8000/$1;` in a regex location, and `proxy_pass http://app:8000$request_uri;`:
    the upstream is app:8000, as nginx evaluates it; a `set` of another location does not
    apply."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _STAGES,
            "compose.yaml": _COMPOSE.format(target="production"),
            "nginx/default.conf": (
                "server {\n    listen 80;\n    resolver 127.0.0.11 valid=5s;\n"
                "    set $endpoint http://app:8000;\n"
                "    location / {\n        proxy_pass $endpoint;\n    }\n"
                "    location /api {\n        set $api http://app:8000;\n"
                "        proxy_pass $api;\n    }\n"
                "    location ~ ^/static/(.*)$ {\n        proxy_pass http://app:8000/$1;\n    }\n"
                "    location /other {\n        proxy_pass $api;\n    }\n"
                "    location /v2 {\n        proxy_pass http://app:8000$request_uri;\n    }\n}\n"
            ),
        },
    )
    assert fronts(root) == {
        "app": [
            "nginx/default.conf:6",
            "nginx/default.conf:10",
            "nginx/default.conf:13",
            "nginx/default.conf:19",
        ]
    }


#: A backend image with a development and a production stage, and a second service's image.
_BACKEND_STAGES = """\
FROM python:3.12-slim AS core
WORKDIR /app
COPY . /app

FROM core AS backend-development
CMD ["uvicorn", "app.asgi:app", "--host", "0.0.0.0", "--port", "8000", "--reload"]

FROM core AS backend-production
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "90", "app.wsgi"]
"""
_SUMMARY = """\
FROM python:3.12-slim AS production
WORKDIR /app
CMD ["uvicorn", "summary.main:app", "--host", "0.0.0.0", "--port", "8000"]
"""


def _template(upstream: str, variable: str) -> str:
    return (
        f"upstream {upstream} {{\n    server ${{{variable}}}:8000 fail_timeout=0;\n}}\n"
        "server {\n    listen 8083;\n    location / {\n"
        f"        proxy_pass http://{upstream};\n    }}\n}}\n"
    )


def test_templated_host_joins_the_one_production_starter_its_names_name(tmp_path: Path) -> None:
    """`upstream meet_backend { server ${BACKEND_INTERNAL_HOST}:8000; }` in an envsubst
    template, the host set nowhere here: `backend` names the `backend-production` stage's
    gunicorn, the one production starter so named on port 8000; the summary image's uvicorn
    on the same port is not joined, nor is the development stage's `--reload` server."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _BACKEND_STAGES,
            "src/summary/Dockerfile": _SUMMARY,
            "docker/production/default.conf.template": _template(
                "meet_backend", "BACKEND_INTERNAL_HOST"
            ),
        },
    )
    assert fronts(root) == {
        "Dockerfile": ["docker/production/default.conf.template:7"],
        "src/summary/Dockerfile": [],
    }
    assert _port_alone(root) == []


def test_templated_host_its_names_do_not_name_lists_the_candidates(tmp_path: Path) -> None:
    """`server ${UPSTREAM_HOST}:8000` in `upstream main`: no word names a starter, so nothing
    is joined by the port, and the not-followed note names the two production starters on
    8000 it could be."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _BACKEND_STAGES,
            "src/summary/Dockerfile": _SUMMARY,
            "docker/production/default.conf.template": _template("main", "UPSTREAM_HOST"),
        },
    )
    assert fronts(root) == {"Dockerfile": [], "src/summary/Dockerfile": []}
    (note,) = [n for n in check_folder(root).notes if "by the port alone" in n.message]
    assert "candidates: " in note.message
    assert "Dockerfile:" in note.message
    assert "src/summary/Dockerfile:" in note.message


def test_a_unix_socket_written_with_four_slashes_reaches_the_uwsgi_there(tmp_path: Path) -> None:
    """`uwsgi_pass unix:////tmp/public.sock;` is the socket /tmp/public.sock (the kernel reads
    `//` as `/`): the uWSGI whose `socket = /tmp/public.sock` is behind it."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": "[uwsgi]\nmodule = app:app\nsocket = /tmp/public.sock\nprocesses = 2\n",
            "nginx.conf": (
                "events {}\nhttp {\n  server {\n    listen 80;\n    location / {\n"
                "      include uwsgi_params;\n      uwsgi_pass unix:////tmp/public.sock;\n"
                "    }\n  }\n}\n"
            ),
        },
    )
    assert fronts(root) == {"uwsgi.ini": ["nginx.conf:7"]}


def _image_with_front(conf: str) -> str:
    return (
        "FROM python:3.12-slim\nCOPY uwsgi.ini /app/uwsgi.ini\n"
        f"COPY {conf} /etc/nginx/conf.d/default.conf\n"
        'CMD ["uwsgi", "--ini", "/app/uwsgi.ini"]\n'
    )


def test_a_local_pass_reaches_the_server_of_the_image_that_copies_the_front(
    tmp_path: Path,
) -> None:
    """Two images each copy their own nginx config, both passing to 127.0.0.1:8080, where
    each image's uWSGI listens: a local address is the front's own container, so each config
    fronts its own image's uWSGI, not the other image's."""
    uwsgi_ini = "[uwsgi]\nmodule = app:app\nsocket = 127.0.0.1:8080\nprocesses = 2\n"
    site = (
        "server {\n  listen 80;\n  location / {\n    include uwsgi_params;\n"
        "    uwsgi_pass 127.0.0.1:8080;\n  }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "uwsgi.ini": uwsgi_ini,
            "nginx-debian.conf": site,
            "nginx-alpine.conf": site,
            "Dockerfile": _image_with_front("nginx-debian.conf"),
            "Dockerfile-alpine": _image_with_front("nginx-alpine.conf"),
        },
    )
    assert fronts(root) == {
        "Dockerfile": ["nginx-debian.conf:5"],
        "Dockerfile-alpine": ["nginx-alpine.conf:5"],
    }


def test_a_template_an_nginx_image_copies_renders_with_that_images_env(tmp_path: Path) -> None:
    """`COPY nginx.conf.template /etc/nginx/templates/default.conf.template` with `ENV
    PROXY_BACKEND_URL=http://app.:8080` in the nginx image a compose service builds:
    `proxy_pass ${PROXY_BACKEND_URL}/api/;` renders to service `app` (a root-ended name),
    whose gunicorn is behind it."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\n"
                'CMD ["gunicorn", "--bind", "0.0.0.0:8080", "--workers", "2", "app.wsgi"]\n'
            ),
            "web/Dockerfile": (
                "FROM nginx:stable\nENV PROXY_BACKEND_URL=http://app.:8080\n"
                "COPY nginx.conf.template /etc/nginx/templates/default.conf.template\n"
            ),
            "web/nginx.conf.template": (
                "server {\n  listen 80;\n  location /api {\n"
                "    proxy_pass ${PROXY_BACKEND_URL}/api/;\n  }\n}\n"
            ),
            "compose.yaml": (
                "services:\n  app:\n    build: .\n  web:\n    build: web\n"
                "    ports:\n      - 80:80\n"
            ),
        },
    )
    assert fronts(root)["app"] == ["web/nginx.conf.template:4"]


def test_front_beside_another_compose_project_never_reaches_the_root_projects_service(
    tmp_path: Path,
) -> None:
    """A front in `azure/` beside `azure/docker-compose.yml`, whose `nginx` service runs it from
    a registry image (nothing here mounts or builds it), passes to `backend:8000`: the `backend`
    of its own folder's compose project, never the same-named service of the root compose
    project, another stack on another network (seen in cohere-ai/cohere-toolkit). The root
    `backend` has no front."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
                'CMD ["gunicorn", "--bind", "0.0.0.0:8000", "app.wsgi"]\n'
            ),
            "docker-compose.yml": "services:\n  backend:\n    build: .\n",
            "azure/docker-compose.yml": (
                "services:\n  backend:\n    image: registry.example/app-api\n"
                "  nginx:\n    image: registry.example/app-nginx\n    ports: ['80:80']\n"
            ),
            "azure/nginx.conf": _site("backend:8000"),
        },
    )
    assert fronts(root) == {"backend": []}


def test_a_set_host_whose_service_runs_an_image_built_elsewhere_says_so(tmp_path: Path) -> None:
    """`set $upstream_api api-svc; proxy_pass http://$upstream_api:8000;` reaches the compose
    service `api-svc`, which runs `image: registry.example/acme/chalice:1.0` that no Dockerfile
    read here is known to build, while two images here (`api/Dockerfile`, `ee/api/Dockerfile`,
    run by no service) listen on 8000: neither is joined by the port alone, and a
    `not-followed` note at the pass says why and names both (seen in openreplay/openreplay's
    scripts/docker-compose/nginx.conf and `chalice-openreplay` service)."""
    uvicorn = (
        'FROM python:3.12-slim\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0", "--port", "8000"]\n'
    )
    root = write(
        tmp_path,
        {
            "api/Dockerfile": uvicorn,
            "ee/api/Dockerfile": uvicorn,
            "deploy/compose.yaml": (
                "services:\n"
                "  api-svc:\n    image: registry.example/acme/chalice:1.0\n"
                "  nginx:\n    image: nginx:1.27\n"
                "    volumes: ['./nginx.conf:/etc/nginx/conf.d/default.conf:ro']\n"
            ),
            "deploy/nginx.conf": (
                "server {\n    listen 80;\n    location /api/ {\n"
                "        set $upstream_api api-svc;\n"
                "        proxy_pass http://$upstream_api:8000;\n    }\n}\n"
            ),
        },
    )
    result = check_folder(root)
    assert all(not launch.fronts for launch in launches(result.apps, result.links, ()))
    said = [n for n in result.notes if n.kind == "not-followed" and n.at.file.name == "nginx.conf"]
    assert [
        (n.at.line, "'api-svc:8000' is the compose service 'api-svc'" in n.message) for n in said
    ] == [(5, True)]
    assert "api/Dockerfile:2" in said[0].message
    assert "ee/api/Dockerfile:2" in said[0].message


def test_a_host_that_services_of_several_compose_projects_answer_to_joins_none(
    tmp_path: Path,
) -> None:
    """nginx/site.conf's `upstream api_server { server web-api:5000; }`, a config no compose
    service mounts or builds, while docker-compose.full.yml (uWSGI) and docker-compose.e2e.yml
    (gunicorn), each runnable alone, both define `web-api` (as seen in
    cernanalysispreservation/analysispreservation.cern.ch): nothing says which project's
    nginx this is, so neither server is joined (never a silent pick) and a not-followed note
    names both candidates."""
    api = "services:\n  web-api:\n    build: .\n    command: {command}\n"
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n",
            "docker-compose.full.yml": api.format(
                command="uwsgi --socket 0.0.0.0:5000 --module app.wsgi --master"
            ),
            "docker-compose.e2e.yml": api.format(command="gunicorn -b 0.0.0.0:5000 app.wsgi"),
            "nginx/site.conf": "upstream api_server { server web-api:5000; }\n"
            "server {\n  listen 80;\n  location / { uwsgi_pass api_server; include uwsgi_params; }\n"
            "  location /e2e/ { proxy_pass http://api_server; }\n}\n",
        },
    )
    assert all(found == [] for found in fronts(root).values())
    said = [n.message for n in check_folder(root).notes if n.kind == "not-followed"]
    assert any(
        "web-api:5000" in m and "docker-compose.full.yml" in m and "docker-compose.e2e.yml" in m
        for m in said
    ), said
