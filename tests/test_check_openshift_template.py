"""An OpenShift `kind: Template` is plain YAML: its `objects:` are read as manifests, each
`${NAME}` / `${{NAME}}` at its parameter's default with a note, one with no default unknown;
a Clowder `ClowdApp` among them starts each `spec.deployments[].podSpec`."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: shop
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: ${APP_NAME}
  spec:
    replicas: ${{REPLICAS}}
    template:
      spec:
        containers:
        - name: web
          image: ${IMAGE}:latest
          command: ["gunicorn"]
          args: ["--workers=${WORKERS}", "--threads=${THREADS}", "-b", "0.0.0.0:8000", "shop.wsgi"]
parameters:
- name: APP_NAME
  value: shop
- name: REPLICAS
  value: "3"
- name: WORKERS
  value: "4"
- name: THREADS
  required: true
- name: IMAGE
  required: true
"""

CLOWDAPP = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: inventory
objects:
- apiVersion: cloud.redhat.com/v1alpha1
  kind: ClowdApp
  metadata:
    name: inventory
  spec:
    deployments:
    - name: service-reads
      replicas: ${{REPLICAS}}
      podSpec:
        image: quay.io/example/inventory:latest
        command: ["gunicorn"]
        args: ["--workers=${WORKERS}", "-b", "0.0.0.0:8000", "run:app"]
parameters:
- name: REPLICAS
  value: "2"
- name: WORKERS
  value: "3"
"""


def test_template_objects_are_read_with_parameter_defaults(tmp_path: Path) -> None:
    """The Deployment inside a Template (seen in RedHatInsights/insights-host-inventory's
    deploy/clowdapp.yml) is a launch, its `${WORKERS}` at the parameter's default and
    `${{REPLICAS}}` (not a Jinja marker) the replica count; the defaults taken are one
    `template` note, the parameters with none one `unresolved-variable` note."""
    write(tmp_path, {"deploy/template.yml": TEMPLATE})
    result = check_folder(tmp_path)
    assert not result.errors
    assert chains(result, tmp_path) == [(["deploy/template.yml:15"], "gunicorn", 4)]
    (app,) = result.apps
    assert app.container is not None
    assert app.container.replicas is not None
    assert app.container.replicas.value == 3
    kinds = sorted(n.kind for n in result.notes if n.at.file.name == "template.yml")
    assert "template" in kinds
    assert "unresolved-variable" in kinds
    unknown = [n.message for n in result.notes if n.kind == "unresolved-variable"]
    assert any("${THREADS}" in m and "${IMAGE}" in m for m in unknown)


def test_clowdapp_deployments_start_their_pod_spec(tmp_path: Path) -> None:
    """A ClowdApp's `spec.deployments[].podSpec` is one container's spec and its pod's: its
    command is a launch named for the deployment, with the deployment's replicas."""
    write(tmp_path, {"deploy/clowdapp.yml": CLOWDAPP})
    result = check_folder(tmp_path)
    assert not result.errors
    assert chains(result, tmp_path) == [(["deploy/clowdapp.yml:15"], "gunicorn", 3)]
    (app,) = result.apps
    assert app.container is not None
    assert app.container.name == "service-reads"
    assert app.container.replicas is not None
    assert app.container.replicas.value == 2


def test_an_image_from_a_parameter_with_no_default_is_not_followed(tmp_path: Path) -> None:
    """A container with no command whose image a parameter with no default names (seen in
    bcgov/wps's openshift/templates) is a `not-followed` note at the image line, not a file
    that starts no server."""
    write(
        tmp_path,
        {
            "deploy/api.yaml": TEMPLATE.replace('          command: ["gunicorn"]\n', "").replace(
                '          args: ["--workers=${WORKERS}", "--threads=${THREADS}", "-b", '
                '"0.0.0.0:8000", "shop.wsgi"]\n',
                "",
            )
        },
    )
    result = check_folder(tmp_path)
    assert not result.apps
    kinds = [(n.kind, n.at.line) for n in result.notes if n.kind != "template"]
    assert ("not-followed", 16) in kinds
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
