"""uWSGI started by a Kubernetes container's `command`/`args` is a launch like gunicorn's, in
every form (exec list, `bash -c "uwsgi ..."`), and the ini its `--ini` names is found among the
files the container mounts from ConfigMaps (by `subPath`, in the same file or another, or in a
Helm chart's ConfigMap template named with `template` where the volume uses `include`). Seen
in Substra/substra-backend's chart. Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  template:
    spec:
      containers:
        - name: server
          image: example/server:1
          command: ["/bin/bash"]
          args: ["-c", "uwsgi --ini uwsgi.ini"]
          volumeMounts:
            - name: uwsgi
              mountPath: /usr/src/app/uwsgi.ini
              subPath: uwsgi.ini
      volumes:
        - name: uwsgi
          configMap:
            name: NAME-uwsgi
"""

CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME-uwsgi
data:
  uwsgi.ini: |
    [uwsgi]
    module = app.wsgi
    master = 1
    processes = 6
    http-socket = :8000
"""


def test_uwsgi_in_a_container_command_list_is_a_launch(tmp_path: Path) -> None:
    """`command: ["uwsgi", "--http-socket", ":8000", "--processes", "4", ...]` starts uWSGI
    with 4 processes, read from the container's own line, as gunicorn's would be."""
    manifest = DEPLOYMENT.replace(
        '["/bin/bash"]', '["uwsgi", "--http-socket", ":8000", "--module", "app.wsgi", "-p", "4"]'
    ).replace('          args: ["-c", "uwsgi --ini uwsgi.ini"]\n', "")
    root = write(tmp_path, {"deploy.yaml": manifest})
    assert chains(check_folder(root), root) == [(["deploy.yaml:8"], "uwsgi", 4)]


def test_bash_c_uwsgi_ini_is_read_from_a_config_map_of_another_file(tmp_path: Path) -> None:
    """`bash -c "uwsgi --ini uwsgi.ini"`, the ini mounted by `subPath` from a ConfigMap kept in
    a file of its own: the launch runs through the ConfigMap's ini (its `processes = 6`)."""
    root = write(
        tmp_path,
        {
            "k8s/deploy.yaml": DEPLOYMENT.replace("NAME", "server"),
            "k8s/cm.yaml": CONFIG_MAP.replace("NAME", "server"),
        },
    )
    assert chains(check_folder(root), root) == [
        (["k8s/deploy.yaml:8", "k8s/cm.yaml:10"], "uwsgi", 6)
    ]


def test_helm_chart_config_map_named_by_template_is_the_volume_named_by_include(
    tmp_path: Path,
) -> None:
    """In a chart, the ConfigMap is named `{{ template "app.fullname" . }}-uwsgi` and the
    Deployment's volume `{{ include "app.fullname" . }}-uwsgi`: both render the same named
    template, so the volume is that ConfigMap and its ini is the launch's config."""
    root = write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
            "chart/values.yaml": "replicas: 1\n",
            "chart/templates/deployment.yaml": DEPLOYMENT.replace(
                "NAME", '{{ include "app.fullname" . }}'
            ),
            "chart/templates/configmap.yaml": CONFIG_MAP.replace(
                "NAME", '{{ template "app.fullname" . }}'
            ),
        },
    )
    assert chains(check_folder(root), root) == [
        (["chart/templates/deployment.yaml:8", "chart/templates/configmap.yaml:10"], "uwsgi", 6)
    ]
