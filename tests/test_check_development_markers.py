"""Issue 44: a deployment the files themselves mark as a developer's is not judged as
production's: a pod whose image is never pulled (`imagePullPolicy: Never`, built into minikube
or kind), manifests under a folder for a local cluster, a launcher script nothing runs."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine
from tests.folder_support import check_folder, write

MACHINE = Machine(cores=2, somaxconn=4096)

_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example-web:latest
          imagePullPolicy: %s
          args: ["gunicorn", "-w", "2", "-b", "0.0.0.0:8000", "app:app"]
          ports:
            - containerPort: 8000
"""


def _findings(paths: list[Path]) -> list[Finding]:
    return list(check_files(paths, machine=MACHINE, env={}).findings)


def _at(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_pod_whose_image_is_never_pulled_is_a_developers(tmp_path: Path) -> None:
    """`imagePullPolicy: Never` (an image built into minikube's Docker) makes the pod a
    development launch: no no-cpu-limit, no no-readiness-probe; with `IfNotPresent` both are
    said (seen on ansible/eda-server tools/deploy/, its minikube setup)."""
    dev = _findings([_at(tmp_path / "a", "deployment.yaml", _DEPLOYMENT % "Never")])
    assert not [f for f in dev if f.rule in ("no-cpu-limit", "no-readiness-probe")]
    pulled = _findings([_at(tmp_path / "b", "deployment.yaml", _DEPLOYMENT % "IfNotPresent")])
    assert {"no-cpu-limit", "no-readiness-probe"} <= {f.rule for f in pulled}


def test_manifests_under_a_local_cluster_folder_are_a_developers(tmp_path: Path) -> None:
    """In a folder walk, a manifest under `k8s/minikube/`, `deploy/kind/` or `manifests/local/`
    (a folder of the tree read) is a developer's cluster; the same manifest under `k8s/prod/`
    is judged."""
    manifest = _DEPLOYMENT % "IfNotPresent"
    for folder in ("k8s/minikube", "deploy/kind", "manifests/local"):
        root = write(tmp_path / folder.replace("/", "_"), {f"{folder}/web.yaml": manifest})
        found = check_folder(root).findings
        assert not [f for f in found if f.rule == "no-cpu-limit"], folder
    found = check_folder(write(tmp_path / "prod", {"k8s/prod/web.yaml": manifest})).findings
    assert [f for f in found if f.rule == "no-cpu-limit"]


def test_a_process_manager_script_nothing_runs_is_no_pid_1_warning(tmp_path: Path) -> None:
    """A script that sets up a virtualenv and runs `honcho start` without exec, which no
    Dockerfile, compose file or unit starts and no image copies, is a developer's launcher:
    no entrypoint-without-exec ("the shell stays PID 1" would be unfounded; seen on
    superdesk/superdesk server/scripts/run.sh). Once the image's CMD runs it, it is said."""
    image = "FROM python:3.12\nWORKDIR /app\nCOPY app.py /app/\n%s"
    files = {
        "Dockerfile": image % 'CMD ["gunicorn", "-b", ":8080", "app:app"]\n',
        "app.py": "app = None\n",
        "Procfile": "web: gunicorn -b 0.0.0.0:5000 app:app\n",
        "scripts/run.sh": "#!/bin/bash\nset -e\npip install -r requirements.txt\nhoncho start\n",
    }
    alone = check_folder(write(tmp_path / "alone", files))
    assert not [f for f in alone.findings if f.rule.startswith("entrypoint-without-exec")]
    files["Dockerfile"] = image % 'COPY . /app/\nCMD ["scripts/run.sh"]\n'
    run = check_folder(write(tmp_path / "run", files))
    assert [f.at.line for f in run.findings if f.rule == "entrypoint-without-exec"] == [4]
