"""A Kubernetes container's env var given by the downward API from its own CPU quantity
(`valueFrom.resourceFieldRef: {resource: limits.cpu}`) holds that quantity rounded up to a
whole number, as the kubelet writes it; a gunicorn config that sizes its workers by that
variable is sized by the container's limit, not the node's CPU count. Seen in
project-koku/koku's ClowdApp (POD_CPU_LIMIT). Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

CONF = (
    "import multiprocessing\nimport os\n\n"
    'cpus = int(os.environ.get("POD_CPU_LIMIT", multiprocessing.cpu_count()))\n'
    "workers = cpus * 2 + 1\n"
)
DOCKERFILE = 'FROM python:3.12\nWORKDIR /app\nCOPY . /app\nCMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n'
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    spec:
      containers:
        - name: api
          image: example/api:1
          env:
            - name: POD_CPU_LIMIT
              valueFrom:
                resourceFieldRef: {containerName: CONTAINER, resource: limits.cpu}
          resources:
            limits: {cpu: 2500m, memory: 1Gi}
"""


def test_a_cpu_limit_given_by_the_downward_api_sizes_the_workers(tmp_path: Path) -> None:
    """POD_CPU_LIMIT from `resourceFieldRef: limits.cpu` of a 2500m limit is 3 (rounded up),
    so `cpus * 2 + 1` is 7 workers and no `workers-from-cpu-count` finding says the node's
    CPU count decides; a field naming another container of the pod gives no value here."""
    files = {"api/gunicorn.conf.py": CONF, "api/app.py": "app = None\n"}
    files["api/Dockerfile"] = DOCKERFILE
    files["deploy.yaml"] = DEPLOYMENT.replace("CONTAINER", "api")
    result = check_folder(write(tmp_path / "own", files))
    (app,) = [a for a in result.apps if a.container is not None]
    assert app.workers.value == 7
    assert not [f for f in result.findings if f.rule.startswith("workers-from-cpu-count")]
    sidecar = DEPLOYMENT.replace("CONTAINER", "proxy") + (
        "        - name: proxy\n          image: example/proxy:1\n"
    )
    files["deploy.yaml"] = sidecar
    result = check_folder(write(tmp_path / "other", files))
    (app,) = [a for a in result.apps if a.container is not None]
    assert [f for f in result.findings if f.rule == "workers-from-cpu-count"]
