"""Which arm of a launch script's `case "$VAR" in` runs when VAR is the container's: the
image's `ENV` (or a compose service's `environment`) decides it as it decides an `if` test,
also in a function that `main` calls, with arms of several quoted patterns
(`"prod"|"staging")`, one arm, not a pipeline), and when the script assigns VAR only from its
own value (`export MODE=${MODE:-prod}`) or in an arm that does not run. The pattern was seen
in emfoursolutions/trakbridge's docker/entrypoint.sh (`start_server` switching on
`$FLASK_ENV`); each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

ENTRYPOINT = """#!/bin/bash
export MODE=${MODE:-prod}

start_server() {
    case "$MODE" in
        "dev")
            exec flask run
            ;;
        "prod"|"staging")
            exec gunicorn -w 2 -b 0.0.0.0:8000 app:app
            ;;
        *)
            exec gunicorn -c fallback.py app:app
            ;;
    esac
}

main() {
    if [[ $# -eq 0 ]]; then
        start_server
    else
        exec "$@"
    fi
}

case "${1:-}" in
    "test")
        export MODE=testing
        exec pytest
        ;;
    *)
        main "$@"
        ;;
esac
"""


def _repository(tmp_path: Path, mode: str) -> Path:
    return write(
        tmp_path,
        {
            "Dockerfile": f"FROM python:3.12-slim\nENV MODE={mode}\nCOPY . /app\n"
            'ENTRYPOINT ["/app/entrypoint.sh"]\nCMD []\n',
            "entrypoint.sh": ENTRYPOINT,
            "fallback.py": 'bind = "0.0.0.0:9000"\nworkers = 5\n',
            "compose.yml": "services:\n  web:\n    build: .\n    environment:\n"
            f"      MODE: {mode}\n",
        },
    )


def test_a_case_on_the_images_env_in_a_function_main_calls_takes_its_arm(
    tmp_path: Path,
) -> None:
    """`ENV MODE=staging`, and the compose service's `MODE: staging`: for the service, the
    `"prod"|"staging")` arm runs (gunicorn, 2 workers), not the `*)` default's config; the
    `test)` arm's `export MODE=testing` does not run."""
    root = _repository(tmp_path, "staging")
    found = [
        (chain[-1], kind, workers)
        for chain, kind, workers in chains(check_folder(root), root)
        if chain[0].startswith("compose.yml")
    ]
    assert found == [("entrypoint.sh:10", "gunicorn", 2)], found


ROLE_SCRIPT = """#!/bin/bash
case "${ROLE:-web}" in
    web)
        exec gunicorn app:app --bind :8000
        ;;
    worker)
        exec celery -A app worker
        ;;
esac
"""

ROLE_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: {name}
          image: example/app:latest
          env:
            - name: ROLE
              value: "{role}"
"""


def test_a_case_on_a_defaulted_variable_takes_the_arm_the_containers_env_sets(
    tmp_path: Path,
) -> None:
    """`case "${ROLE:-web}" in` compares the value each container sets: a Kubernetes container
    and a compose service setting `ROLE: worker` run the `worker)` arm (celery: no server),
    not the default's gunicorn; one setting `ROLE: web` runs gunicorn. (Seen in
    ietf-tools/mailarchive's build/app/start.sh, `CONTAINER_ROLE` set by each Deployment.)"""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nCMD ["./start.sh"]\n',
            "start.sh": ROLE_SCRIPT,
            "compose.yml": "services:\n  web:\n    build: .\n    image: example/app:latest\n"
            "    environment:\n      ROLE: web\n  worker:\n    build: .\n"
            "    environment:\n      ROLE: worker\n",
            "k8s/web.yaml": ROLE_DEPLOYMENT.format(name="web", role="web"),
            "k8s/worker.yaml": ROLE_DEPLOYMENT.format(name="worker", role="worker"),
        },
    )
    found = sorted(chain[0] for chain, _, _ in chains(check_folder(root), root))
    assert found == ["compose.yml:2", "k8s/web.yaml:9"], found
