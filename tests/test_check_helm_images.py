"""A Helm chart's container whose `image:` comes from the chart's values (set where the chart
is installed: `{{ .Values.api.image.name }}:{{ .Values.api.image.tag }}`) runs the image the
repository's Dockerfile builds when that is the one image holding the files its command names:
the command is read through that image (its COPYs, its WORKDIR or the container's
`workingDir`). Two such images are not guessed between: a `not-followed` note says so. Seen in
IFRCGo/go-api's chart (values `SET-BY-CICD-IMAGE`, `command: [sh, /usr/local/bin/runserver.sh]`)
and elixir-cloud-aai/proTES' (`workingDir`, `-c gunicorn.py`). Each fixture is a small
repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

CHART = "apiVersion: v2\nname: shop\nversion: 0.1.0\n"
VALUES = "api:\n  image:\n    name: SET-BY-CI-IMAGE\n    tag: SET-BY-CI-TAG\n"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Chart.Name }}-api
spec:
  template:
    spec:
      containers:
        - name: api
          image: "{{ .Values.api.image.name }}:{{ .Values.api.image.tag }}"
          COMMAND
"""
DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /app
COPY . .
COPY run.sh /usr/local/bin/
"""
RUN_SH = "#!/bin/sh\npython manage.py migrate\nexec gunicorn shop.wsgi -w 3 -b 0.0.0.0:8000\n"


def test_helm_values_image_runs_the_one_image_holding_its_script(tmp_path: Path) -> None:
    """`command: ["sh", "/usr/local/bin/run.sh"]`, the script copied there by the one
    Dockerfile: the launch runs from the Deployment through the script to its gunicorn."""
    deployment = DEPLOYMENT.replace("COMMAND", 'command: ["sh", "/usr/local/bin/run.sh"]')
    files = {
        "chart/Chart.yaml": CHART,
        "chart/values.yaml": VALUES,
        "chart/templates/deployment.yaml": deployment,
        "Dockerfile": DOCKERFILE,
        "run.sh": RUN_SH,
    }
    root = write(tmp_path, files)
    assert chains(check_folder(root), root) == [
        (["chart/templates/deployment.yaml:9", "run.sh:3"], "gunicorn", 3)
    ]


def test_working_dir_config_is_read_from_the_image(tmp_path: Path) -> None:
    """`workingDir: /app/web` and `gunicorn -c gunicorn.py web.wsgi`: the config is the
    image's `/app/web/gunicorn.py` (`COPY . .` under `WORKDIR /app`), `web/gunicorn.py` here,
    and its `workers = 5` is the launch's."""
    deployment = DEPLOYMENT.replace(
        "COMMAND",
        "workingDir: /app/web\n"
        '          command: ["gunicorn"]\n'
        '          args: ["-c", "gunicorn.py", "web.wsgi"]',
    )
    files = {
        "chart/Chart.yaml": CHART,
        "chart/values.yaml": VALUES,
        "chart/templates/deployment.yaml": deployment,
        "Dockerfile": DOCKERFILE,
        "web/gunicorn.py": "workers = 5\nbind = '0.0.0.0:8000'\n",
    }
    root = write(tmp_path, files)
    result = check_folder(root)
    assert chains(result, root) == [
        (["chart/templates/deployment.yaml:9", "web/gunicorn.py:1"], "gunicorn", 5)
    ]
    config = next(app.config_file for app in result.apps if app.kind == "gunicorn")
    assert config is not None
    assert config.file == root / "web/gunicorn.py"


def test_two_images_holding_the_script_are_not_guessed_between(tmp_path: Path) -> None:
    """Two Dockerfiles both copy the script the container runs: which one the values' image
    is was not said, so no launch is made up and a note says the image was not tied."""
    deployment = DEPLOYMENT.replace("COMMAND", 'command: ["sh", "/usr/local/bin/run.sh"]')
    files = {
        "chart/Chart.yaml": CHART,
        "chart/values.yaml": VALUES,
        "chart/templates/deployment.yaml": deployment,
        "api/Dockerfile": DOCKERFILE.replace("COPY . .\n", ""),
        "api/run.sh": RUN_SH,
        "admin/Dockerfile": DOCKERFILE.replace("COPY . .\n", ""),
        "admin/run.sh": RUN_SH,
    }
    root = write(tmp_path, files)
    result = check_folder(root)
    assert not [c for c, _, _ in chains(result, root) if c[0].startswith("chart/")]
    assert any(
        n.kind == "not-followed" and "image from Helm values not tied to a Dockerfile" in n.message
        for n in result.notes
    )
