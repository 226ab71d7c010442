"""Kubernetes readiness probes against the app server's boot, and the AWS load balancers a
manifest's annotations put in front of the pod."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import LOAD_BALANCERS, RULES, check_files
from servertune.check.model import Finding
from servertune.cli import app
from servertune.sizing import Machine
from tests.support import free_ports, running, tool, wait_for

MACHINE = Machine(cores=4, somaxconn=4096)


def _deployment(command: str, probes: str, extra: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - name: web
          image: example/web:1
          command: {command}
          ports: [{{name: http, containerPort: 8000}}]
{probes}          resources: {{limits: {{cpu: "2"}}}}
{extra}"""


GUNICORN = '["gunicorn", "-w", "2", "-b", "0.0.0.0:8000", "proj.wsgi"]'
#: gunicorn with a worker that keeps idle connections open (gthread): the sync worker closes
#: each one after its response, so no load balancer can race its keep-alive.
THREADED = GUNICORN.replace('"-w"', '"-k", "gthread", "--threads", "4", "-w"')
TCP_READY = "          readinessProbe: {tcpSocket: {port: http}}\n"


def _findings(tmp_path: Path, text: str, rule: str) -> list[Finding]:
    path = tmp_path / "deploy.yaml"
    path.write_text(text)
    return [f for f in check_files([path], machine=MACHINE).findings if f.rule == rule]


UVICORN_WORKERS = '["uvicorn", "--workers", "2", "--host", "0.0.0.0", "--port", "8000", "app:app"]'
GRANIAN = '["granian", "--interface", "asgi", "--workers", "2", "--port", "8000", "app:app"]'


@pytest.mark.parametrize(
    "command", [GUNICORN, GUNICORN.replace('"-w", "2"', '"-w", "1"')], ids=["w2", "w1"]
)
def test_tcp_readiness_on_the_port_gunicorns_master_listens_on_is_flagged(
    command: str, tmp_path: Path
) -> None:
    """The probe's line, the line that binds the port, and an httpGet fix on that port."""
    (finding,) = _findings(
        tmp_path, _deployment(command, TCP_READY), "readiness-tcp-before-workers"
    )
    assert finding.at.line == 14  # readinessProbe (its named port resolved to 8000)
    assert [r.line for r in finding.related] == [12]  # the command that binds :8000
    assert "httpGet" in finding.fix
    assert "port: 8000" in finding.fix


@pytest.mark.parametrize(
    ("command", "probes"),
    [
        (GUNICORN, "          readinessProbe: {httpGet: {path: /health, port: http}}\n"),
        (GUNICORN.replace('"-w"', '"--preload", "-w"'), TCP_READY),
        ('["uvicorn", "--host", "0.0.0.0", "--port", "8000", "app:app"]', TCP_READY),
        (UVICORN_WORKERS, TCP_READY),
        (GRANIAN, TCP_READY),
        (GUNICORN, "          readinessProbe: {tcpSocket: {port: 9000}}\n"),
        (
            GUNICORN,
            TCP_READY + "          startupProbe: {httpGet: {path: /health, port: http}}\n",
        ),
    ],
    ids=[
        "httpGet",
        "preload",
        "uvicorn-one-process",
        "uvicorn-workers",
        "granian",
        "another-port",
        "http-startup-probe",
    ],
)
def test_readiness_that_needs_a_worker_is_not_flagged(
    command: str, probes: str, tmp_path: Path
) -> None:
    """An HTTP probe (with no delay or startup probe: only a booted worker answers it); an app
    imported before anything listens (`--preload`, uvicorn, granian: see the real servers
    below); another port; an HTTP startup probe that holds readiness back until a worker
    answered."""
    assert _findings(tmp_path, _deployment(command, probes), "readiness-tcp-before-workers") == []


SLOW_APP = """\
import os, time

open(os.environ["IMPORTING"], "w").close()
while not os.path.exists(os.environ["RELEASE"]):  # a slow import, released by the test
    time.sleep(0.05)


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ready"]


async def app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ready"})
"""


def _connect(port: int) -> socket.socket | None:
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=5)
    except ConnectionRefusedError:
        return None


@pytest.mark.parametrize(
    ("server", "accepts_early"),
    [
        (["gunicorn", "-w", "1", "slowapp:application"], True),
        (["uvicorn", "--workers", "2", "slowapp:app"], False),
        (["granian", "--interface", "asgi", "--workers", "2", "slowapp:app"], False),
    ],
    ids=["gunicorn", "uvicorn-workers", "granian"],
)
def test_which_servers_accept_tcp_before_a_worker_imported_the_app(
    server: list[str], accepts_early: bool, tmp_path: Path
) -> None:
    """The premise of readiness-tcp-before-workers, on the real servers, while the app's import
    is held: gunicorn's master accepts a TCP connection (what a tcpSocket probe tests) that no
    worker answers (what an httpGet probe tests); uvicorn --workers (its parent binds but does
    not listen) and granian (each worker opens its socket after the import) refuse it. Once the
    import ends, each answers."""
    (tmp_path / "slowapp.py").write_text(SLOW_APP)
    importing, release = tmp_path / "importing", tmp_path / "release"
    (port,) = free_ports(1)
    flags = (
        ["-b", f"127.0.0.1:{port}"]
        if server[0] == "gunicorn"
        else ["--host", "127.0.0.1", "--port", str(port)]
    )
    argv = [tool(server[0]), *flags, *server[1:]]
    env = {"IMPORTING": str(importing), "RELEASE": str(release), "PYTHONPATH": str(tmp_path)}
    with running(argv, tmp_path, env=env):
        wait_for(importing.exists, what=f"{server[0]}'s worker importing the app")
        if accepts_early:
            wait_for(lambda: _connect(port) is not None, what="gunicorn's listening socket")
        early = _connect(port)
        assert (early is not None) == accepts_early
        if early is not None:
            with early:
                early.sendall(b"GET / HTTP/1.0\r\nHost: t\r\n\r\n")
                early.settimeout(1.0)
                with pytest.raises(TimeoutError):
                    early.recv(1)  # no worker has imported the app: nobody answers
        release.write_text("")
        wait_for(lambda: _connect(port) is not None, what=f"{server[0]} after the import")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as late:
            late.sendall(b"GET / HTTP/1.0\r\nHost: t\r\n\r\n")
            answer = b""
            while chunk := late.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1."), answer
        assert answer.endswith(b"ready"), answer


def _service(annotations: str, kind: str = "LoadBalancer", target: str = "8000") -> str:
    return f"""\
---
apiVersion: v1
kind: Service
metadata:
  name: web
  annotations:
{annotations}spec:
  type: {kind}
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: {target}}}]
"""


def _ingress(annotations: str, klass: str = "alb") -> str:
    return f"""\
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
{annotations}spec:
  ingressClassName: {klass}
  defaultBackend: {{service: {{name: web, port: {{number: 80}}}}}}
"""


NODE_PORT = _service("", kind="NodePort", target="http")  # a named port: 8000
READY = "          readinessProbe: {httpGet: {path: /health, port: http}}\n"
IDLE_120 = '    service.beta.kubernetes.io/aws-load-balancer-connection-idle-timeout: "120"\n'
HTTP_LISTENER = "    service.beta.kubernetes.io/aws-load-balancer-backend-protocol: http\n"
ALB_300 = (
    "    alb.ingress.kubernetes.io/load-balancer-attributes: "
    "routing.http2.enabled=true,idle_timeout.timeout_seconds=300\n"
)


@pytest.mark.parametrize(
    ("front", "idle_line", "fix"),
    [
        (_service(IDLE_120 + HTTP_LISTENER), 22, "keepalive = 125"),
        (_ingress(ALB_300) + NODE_PORT, 22, "keepalive = 305"),
        (
            _ingress("    alb.ingress.kubernetes.io/scheme: internet-facing\n") + NODE_PORT,
            24,
            "keepalive = 65",
        ),
    ],
    ids=["clb-annotation", "alb-attribute", "alb-default-60"],
)
def test_an_annotated_aws_load_balancer_is_the_one_in_front(
    front: str, idle_line: int, fix: str, tmp_path: Path
) -> None:
    """gunicorn's default 2 s keep-alive behind the Service's Classic LB (HTTP listener) or the
    Ingress's ALB: flagged at the keep-alive, with the annotation (or, for an ALB at AWS's
    default 60 s, its ingressClassName) as the other side."""
    text = _deployment(THREADED, READY) + front
    (finding,) = _findings(tmp_path, text, "lb-idle-over-app-keepalive")
    assert finding.at.line == 12  # the command: gunicorn's default keepalive
    assert [r.line for r in finding.related] == [idle_line]
    assert finding.fix == fix


@pytest.mark.parametrize(
    ("command", "front"),
    [
        (
            THREADED.replace('"-w"', '"--keep-alive", "125", "-w"'),
            _service(IDLE_120 + HTTP_LISTENER),
        ),
        (THREADED, _service(IDLE_120)),  # TCP listener: one back-end connection per client
        (
            THREADED,
            _service(
                IDLE_120
                + HTTP_LISTENER
                + "    service.beta.kubernetes.io/aws-load-balancer-type: nlb\n"
            ),
        ),
        (THREADED, _service(IDLE_120 + HTTP_LISTENER, kind="ClusterIP")),
        (THREADED, _service(IDLE_120 + HTTP_LISTENER, target="8080")),
        (
            THREADED,
            _ingress("    nginx.ingress.kubernetes.io/proxy-read-timeout: '60'\n", "nginx")
            + NODE_PORT,
        ),
    ],
    ids=[
        "keepalive-above",
        "clb-tcp-listener",
        "nlb",
        "not-a-load-balancer",
        "another-container",
        "not-an-alb",
    ],
)
def test_no_annotated_load_balancer_that_reuses_connections_no_finding(
    command: str, front: str, tmp_path: Path
) -> None:
    """A keep-alive above the idle timeout; a Classic LB that relays TCP; an NLB (a pass-through
    that keeps no connection of its own); a Service that is not a load balancer; one that sends
    to another port of the pod (an nginx sidecar's, say); an Ingress of another controller."""
    text = _deployment(command, READY) + front
    assert _findings(tmp_path, text, "lb-idle-over-app-keepalive") == []


def test_the_annotation_wins_over_lb_for_the_pod_it_fronts(tmp_path: Path) -> None:
    """`--lb gcp-https` (600 s) is not also applied to a pod whose ALB the manifest declares."""
    path = tmp_path / "deploy.yaml"
    path.write_text(
        _deployment(THREADED.replace('"-w"', '"--keep-alive", "305", "-w"'), READY)
        + _ingress(ALB_300)
        + NODE_PORT
    )
    result = check_files([path], machine=MACHINE, lb=LOAD_BALANCERS["gcp-https"])
    assert [f.rule for f in result.findings if f.rule.startswith("lb-")] == []


def test_a_malformed_idle_timeout_is_one_error_line(tmp_path: Path) -> None:
    """`idle_timeout.timeout_seconds=5m`: AWS takes whole seconds; refused where it is written."""
    path = tmp_path / "deploy.yaml"
    path.write_text(
        _deployment(GUNICORN, READY) + _ingress(ALB_300.replace("=300", "=5m")) + NODE_PORT
    )
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}:22:"), lines
    assert "idle_timeout.timeout_seconds" in lines[0]


def test_every_rule_has_its_row_in_the_docs() -> None:
    """docs/check.md's rules table names each rule check runs, and no other, with the
    severity and kind the rule declares."""
    text = (Path(__file__).parents[1] / "docs" / "check.md").read_text()
    rows = re.findall(
        r"^\| `([a-z0-9-]+)` \| (error|warning|info|advice) \| (fault|advice|coverage) \|",
        text,
        re.M,
    )
    assert {rule_id for rule_id, _, _ in rows} == set(RULES)
    for rule_id, severity, kind in rows:
        assert (RULES[rule_id].severity.name, RULES[rule_id].kind) == (severity, kind), rule_id
