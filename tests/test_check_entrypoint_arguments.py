"""A compose `command:` (or a pod's `args`) under an image whose ENTRYPOINT is a script is that
script's arguments: the script is evaluated with them (`ROLE=$1; case $ROLE in daphne) exec
daphne -b 0.0.0.0 -p 3355 ...`), and a bare server name there is never read as that server
with no application. Seen in LexPredict/lexpredict-contraxsuite (`command: ["daphne"]` under
`ENTRYPOINT ["./start.sh"]`); each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

START = """#!/bin/bash
ROLE=$1
case $ROLE in
    daphne)
        exec daphne -b 0.0.0.0 -p 3355 asgi:application
        ;;
    celery)
        exec celery -A app worker
        ;;
esac
"""


def test_a_compose_command_is_the_entrypoint_scripts_argument_and_a_bare_name_no_launch(
    tmp_path: Path,
) -> None:
    """`command: ["daphne"]` under the image built here with `ENTRYPOINT ["./start.sh"]` runs
    the script's `daphne)` arm (0.0.0.0:3355); the same command under an image not built here
    (`image: ${APP_IMAGE}`) is a `not-followed` note saying daphne has no application, never a
    daphne on 127.0.0.1:8000."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nWORKDIR /app\nCOPY . .\nENTRYPOINT ["./start.sh"]\n',
            "start.sh": START,
            "compose.yml": 'services:\n  web:\n    build: .\n    command: ["daphne"]\n'
            '  worker:\n    build: .\n    command: ["celery"]\n',
            "deploy/stack.yml": 'services:\n  web:\n    image: ${APP_IMAGE}\n    command: ["daphne"]\n',
        },
    )
    result = check_folder(root)
    found = [(chain[0], chain[-1]) for chain, _, _ in chains(result, root)]
    assert found == [("compose.yml:2", "start.sh:5")], found
    assert [app.sockets[0].value for app in result.apps] == ["0.0.0.0:3355"]
    notes = [n for n in result.notes if n.at.file.name == "stack.yml"]
    assert [n.kind for n in notes] == ["not-followed"], notes
    assert "no application" in notes[0].message


SERVER = """#!/usr/bin/env bash
if [ -n "${K8S_DEPLOY:-}" ]; then
    exec gunicorn --bind 0.0.0.0:8000 -w 4 app.wsgi
else
    exec ./env/bin/gunicorn --bind unix:/tmp/g.sock app.wsgi
fi
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: {{ index .Values.werf.image "app" }}
          args: ["bin/server"]
          envFrom:
            - configMapRef:
                name: base-config
"""


def test_pod_args_under_a_bash_c_entrypoint_run_the_script_with_the_config_maps_env(
    tmp_path: Path,
) -> None:
    """A chart's container with `args: ["bin/server"]` and an image from Helm values runs the
    one image here holding bin/server, whose `ENTRYPOINT ["/bin/bash", "-c"]` runs it; its
    `envFrom` ConfigMap (another template of the chart) sets `K8S_DEPLOY: "true"`, so the
    script's `if [ -n "${K8S_DEPLOY:-}" ]` branch runs: gunicorn on 0.0.0.0:8000, never
    "starts no server" for the manifest. (Seen in NREL/REopt_API's .helm chart.)"""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /opt/app\nWORKDIR /opt/app\n"
            'ENTRYPOINT ["/bin/bash", "-c"]\n',
            "bin/server": SERVER,
            "chart/values.yaml": "replicas: 1\n",
            "chart/templates/deployment.yaml": DEPLOYMENT,
            "chart/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
            '  name: base-config\ndata:\n  K8S_DEPLOY: "true"\n',
        },
    )
    result = check_folder(root)
    found = [(chain[0], chain[-1]) for chain, _, _ in chains(result, root)]
    assert found == [("chart/templates/deployment.yaml:9", "bin/server:3")], found
    assert [app.sockets[0].value for app in result.apps] == ["0.0.0.0:8000"]
