"""Findings a chart's maintainer would not send: a Helm chart whose template and values give a
container no resources leaves them to each install (Helm's own `helm create` scaffold
recommends it), so `no-cpu-limit` says nothing there, while a chart that gives a CPU request
below its workers is still judged; identical liveness and readiness probes are advice (the
Kubernetes docs' higher failureThreshold is a recommendation). Seen in CodeForPhilly's
paws-data-pipeline and clowder-framework/clowder2 charts. Each fixture is a small chart."""

from __future__ import annotations

from pathlib import Path

from servertune.check.model import Severity
from tests.folder_support import check_folder, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: example/api:1.0
          command: ["gunicorn", "--workers", "4", "-b", "0.0.0.0:8000", "app:app"]
          ports:
            - containerPort: 8000
          livenessProbe:
            httpGet:
              path: /health
              port: 8000
          readinessProbe:
            httpGet:
              path: /health
              port: 8000
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
"""


def _chart(root: Path, values: str, deployment: str = DEPLOYMENT) -> Path:
    return write(
        root,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: api\nversion: 0.1.0\n",
            "chart/values.yaml": values,
            "chart/templates/deployment.yaml": deployment,
        },
    )


def test_resources_a_chart_leaves_to_values_are_no_cpu_limit_finding(tmp_path: Path) -> None:
    """`resources: {{ toYaml .Values.resources }}` over values.yaml's `resources: {}`, and a
    template with no `resources:` at all: no `no-cpu-limit` (the chart user sizes the pod).
    The same pod outside a chart, with no resources, keeps its `no-cpu-limit` finding, and a
    CPU request the values give under 4 workers is judged as for any manifest."""
    result = check_folder(_chart(tmp_path / "a", "resources: {}\n"))
    assert result.apps
    assert not [f for f in result.findings if f.rule == "no-cpu-limit"]
    bare = DEPLOYMENT.split("          resources:")[0]
    result = check_folder(_chart(tmp_path / "b", "resources: {}\n", bare))
    assert not [f for f in result.findings if f.rule == "no-cpu-limit"]
    plain = write(tmp_path / "c", {"k8s/deployment.yaml": bare})
    assert [f for f in check_folder(plain).findings if f.rule == "no-cpu-limit"]
    values = "resources:\n  requests:\n    cpu: 1\n"
    result = check_folder(_chart(tmp_path / "d", values))
    (finding,) = [f for f in result.findings if f.rule == "no-cpu-limit"]
    assert "without a limit" in finding.message


def test_liveness_same_as_readiness_is_advice(tmp_path: Path) -> None:
    """Identical liveness and readiness probes are said as advice, not as an info fault."""
    result = check_folder(_chart(tmp_path, "resources: {}\n"))
    (finding,) = [f for f in result.findings if f.rule == "liveness-same-as-readiness"]
    assert finding.severity == Severity.advice
    assert "higher failureThreshold" in finding.message
