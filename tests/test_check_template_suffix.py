"""A template named for its kind before the template's suffix (`app.deploy.yaml.j2`) is listed
in the coverage as a template skipped, never passed over in silence."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

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


def test_percent_placeholder_tpl_files_are_templates_not_errors(tmp_path: Path) -> None:
    """`%`-placeholder templates an installer renders with Python's `%` (seen in
    modoboa/modoboa-installer: `files/uwsgi/modoboa.ini.tpl` with `processes = %nb_processes`,
    an nginx `.tpl` with `%{hostname}`) are each one `template` note at the first placeholder
    line, as a Jinja template is; nothing of them is read, so no error and no exit 2. uWSGI's
    own one-letter magic variables (`%n`, `%d`) are the kind's syntax: a `.tpl` holding only
    those is read as its kind."""
    write(
        tmp_path,
        {
            "files/uwsgi/app.ini.tpl": "[uwsgi]\nmodule = app.wsgi\nprocesses = %workers\n"
            "socket = %socket_path\n",
            "files/nginx/app.conf.tpl": "upstream app {\n    server unix:%{socket_path};\n}\n"
            "server {\n    listen 80;\n    %{tls_enabled}listen 443 ssl;\n"
            "    location / { uwsgi_pass app; }\n}\n",
            "other/uwsgi.ini.tpl": "[uwsgi]\nmodule = app.wsgi\nprocesses = 4\n"
            "logto = %d/log/%n.log\nhttp-socket = :8000\n",
        },
    )
    result = check_folder(tmp_path)
    templates = [n for n in result.notes if n.kind == "template"]
    assert sorted((n.kind, n.at.file.name, n.at.line) for n in templates) == [
        ("template", "app.conf.tpl", 2),
        ("template", "app.ini.tpl", 3),
    ]
    assert not result.errors

    assert [server for _, server, _ in chains(result, tmp_path)] == ["uwsgi"]
