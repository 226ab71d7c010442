"""A template named for its kind before the template's suffix (`app.deploy.yaml.j2`) is listed
in the coverage as a template skipped, never passed over in silence."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ APP_NAME }}
spec:
  template:
    spec:
      containers:
        - name: web
          image: "{{ APP_IMAGE }}"
          command: [gunicorn, --config=configs/gunicorn.py, shop.wsgi]
{% include 'app.env.yaml.j2' %}
"""


def test_jinja_manifest_named_yaml_j2_is_a_template_note(tmp_path: Path) -> None:
    """Jinja-rendered Kubernetes manifests `k8s/*.yaml.j2` (seen in mdn/developer-portal)
    are named in a `template` note at their first marker, like a `.yaml` template, and the
    server line it holds is said not followed."""
    write(tmp_path, {"k8s/app.deploy.yaml.j2": DEPLOY})
    result = check_folder(tmp_path)
    assert [(n.kind, n.at.file.name, n.at.line) for n in result.notes] == [
        ("template", "app.deploy.yaml.j2", 4),
        ("not-followed", "app.deploy.yaml.j2", 11),
    ]
