"""A Helm chart's manifest templates whose actions are only in values are read as Kubernetes
manifests with the chart's values.yaml, not skipped; one whose structure is generated is."""

from __future__ import annotations

from pathlib import Path

from tests.test_check_launch_chain import chains, check_folder

_VALUES = """\
name: shop
image: example/shop:1.0
web:
  workers: 3
  port: 8000
resources:
  limits:
    memory: 512Mi
"""

_DEPLOYMENT = """\
{{- /* the web tier */ -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.name }}-web
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "shop.labels" . | nindent 4 }}
    tier: web
spec:
  selector:
    matchLabels:
      app: {{ .Values.name }}
{{- if .Values.replicas }}
  replicas: {{ .Values.replicas }}
{{- end }}
  template:
    metadata:
      labels:
        app: {{ .Values.name }}
      annotations:
        {{- range $key, $val := .Values.podAnnotations }}
        {{ $key }}: {{ $val | quote }}
        {{- end }}
    spec:
      containers:
        - name: web
          image: {{ .Values.image | quote }}
          command:
            - gunicorn
            - shop.wsgi:application
            - --bind
            - "0.0.0.0:{{ .Values.web.port }}"
            - --workers
            - "{{ .Values.web.workers | default 1 }}"
            - --timeout
            - "{{ .Values.web.timeout | default 30 }}"
          ports:
            - containerPort: {{ .Values.web.port }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Values.name }}-web
spec:
  selector:
    app: {{ .Values.name }}
  ports:
    - port: 80
      targetPort: {{ .Values.web.port }}
"""

_GENERATED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  template:
    spec:
      containers:
        - name: worker
{{ include "shop.container" . | indent 10 }}
{{ .Values.extraSpec }}
"""


def _chart(root: Path, *, chart_yaml: bool = True) -> Path:
    chart = root / "deploy" / "shop"
    (chart / "templates").mkdir(parents=True)
    if chart_yaml:
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(_DEPLOYMENT)
    return chart


def test_a_chart_deployment_built_from_values_is_a_gunicorn_launch(tmp_path: Path) -> None:
    """A chart's `templates/deployment.yaml` whose gunicorn command line takes its bind and
    workers from `.Values` is read as the manifest it renders to: the container starts
    gunicorn with values.yaml's 3 workers on port 8000 (a `default` the values do not override
    is its literal), the Service beside it is read too, and the values it cannot know
    (`.Release.Namespace`) and the `if` whose first branch was read are said, not skipped as a
    template (seen in webrecorder/browsertrix's chart/templates/backend.yaml)."""
    _chart(tmp_path)
    found = chains(tmp_path)
    assert [c for c, _, _ in found] == [["deploy/shop/templates/deployment.yaml"]]
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert app.kind == "gunicorn"
    assert app.workers.value == 3
    assert app.request_timeout is not None
    assert app.request_timeout.value == 30
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    notes = [n for n in result.notes if n.at.file.name == "deployment.yaml"]
    assert not [n for n in notes if "was not read" in n.message]
    unresolved = [n for n in notes if n.kind == "unresolved-variable"]
    assert len(unresolved) == 1
    assert "{{ .Release.Namespace }}" in unresolved[0].message
    assert '{{ include "shop.labels" . | nindent 4 }}' in unresolved[0].message
    assert [n.at.line for n in notes if n.kind == "template"] == [14]


def test_a_chart_copied_without_its_chart_yaml_is_still_a_chart(tmp_path: Path) -> None:
    """A `templates/` folder beside a `values.yaml` is read as a chart even when its
    `Chart.yaml` was left behind: the same launch, with the values' workers."""
    _chart(tmp_path, chart_yaml=False)
    (app,) = check_folder(tmp_path).apps
    assert app.workers.value == 3


def test_a_reading_keeps_the_template_lines_and_fills_a_block(tmp_path: Path) -> None:
    """The reading has the template's lines, so a file:line names the template's own line: a
    `quote`d value is written quoted, a `range` line whose key an action writes is dropped,
    `toYaml .Values.resources | nindent 12` is the values' mapping on its one line, and an
    `include` block beside sibling keys is left out (seen in TheSpaghettiDetective/obico-server's
    chart)."""
    from servertune.check.helm_templates import read_chart_template

    read = read_chart_template(
        _DEPLOYMENT, {"image": "example/shop:1.0", "resources": {"limits": {"memory": "512Mi"}}}
    )
    assert read is not None
    own = _DEPLOYMENT.split("\n")
    lines = read.text.split("\n")
    assert len(lines) == len(own)

    def at(marker: str) -> str:
        return lines[next(i for i, line in enumerate(own) if marker in line)]

    assert at("image:") == '          image: "example/shop:1.0"'
    assert not at("{{ $key }}").strip()
    assert at("toYaml") == '            {"limits": {"memory": "512Mi"}}'
    assert not at("shop.labels").strip()
    port = next(i for i, line in enumerate(own, start=1) if ".Values.web.port" in line)
    assert (".Values.web.port", port) in read.unresolved


def test_a_chart_template_whose_structure_is_generated_stays_skipped(tmp_path: Path) -> None:
    """A template whose lines an action writes (an `include` of a container's fields indented
    into place, a `.Values` value standing as whole lines) cannot be read: it keeps its one
    `template` coverage note, as before, and starts no launch."""
    from servertune.check.helm_templates import read_chart_template

    chart = _chart(tmp_path)
    (chart / "templates" / "deployment.yaml").write_text(_GENERATED)
    assert read_chart_template(_GENERATED, {}) is None
    result = check_folder(tmp_path)
    assert not result.apps
    skipped = [n for n in result.notes if n.kind == "template" and "was not read" in n.message]
    assert [n.at.file.name for n in skipped] == ["deployment.yaml"]


def test_an_argument_around_a_value_the_chart_does_not_give_keeps_the_launch(
    tmp_path: Path,
) -> None:
    """`args: ["{{ .Values.computeType }}_http:app", "--port", "{{ .Values.service.port }}"]`
    under `command: ["uvicorn"]`, with neither value in values.yaml (seen in
    roboflow/inference's chart): the app argument is passed on as written, unknown part and
    all, so uvicorn still has its APP and the launch is read, the unknowns named; never
    "uvicorn refuses its command line: Missing argument 'APP'" and exit 2."""
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "values.yaml").write_text("replicaCount: 1\n")
    (chart / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: infer\nspec:\n"
        "  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n"
        "        - name: infer\n          image: acme/infer:1\n"
        '          command: ["uvicorn"]\n          args:\n'
        '            - "{{ .Values.computeType }}_http:app"\n'
        '            - "--port"\n            - "{{ .Values.service.port }}"\n'
    )
    result = check_folder(tmp_path)
    assert [app.kind for app in result.apps] == ["uvicorn"]
    unresolved = [n.message for n in result.notes if n.kind == "unresolved-variable"]
    assert any("computeType" in message for message in unresolved)


_ENV_INCLUDED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "lab.fullname" . }}-web
spec:
  template:
    spec:
      containers:
        - name: web
          image: "{{ .Values.image }}"
          env:
          {{ include "lab.podEnvVars" . }}
          args: ['sh', '-c', 'gunicorn lab.app:app -b 0.0.0.0:8080 --workers={{ .Values.web.workers | default 1 }}']
          volumeMounts:
            {{- range $key, $entry := .Values.configs }}
            {{- if $entry }}
            - name: conf
              mountPath: /etc/lab/{{ $key }}
            {{- end }}
            {{- end }}
"""


def test_a_named_template_indented_alone_on_its_line_is_an_unknown_block(
    tmp_path: Path,
) -> None:
    """`env:` followed by `{{ include "lab.podEnvVars" . }}` alone and indented on its line (a
    named template writing the container's env entries, seen in galaxyproject/galaxy-helm's
    web deployment) is left out as an unresolved block, as `| nindent 12` would be: the
    template is read, its gunicorn launch found with the workers values.yaml gives, the
    include named as unknown; never the whole template skipped and "no app server found".
    One at the margin may be the whole manifest: that template stays skipped, never read as
    one starting nothing."""
    from servertune.check.helm_templates import read_chart_template

    assert read_chart_template('{{ include "lib.deployment" . }}\n', {}) is None
    chart = tmp_path / "lab"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: lab\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("image: acme/lab:1\nweb:\n  workers: 2\nconfigs: {}\n")
    (chart / "templates" / "deployment-web.yaml").write_text(_ENV_INCLUDED)
    result = check_folder(tmp_path)
    assert [app.kind for app in result.apps] == ["gunicorn"]
    unresolved = [n.message for n in result.notes if n.kind == "unresolved-variable"]
    assert any("lab.podEnvVars" in message for message in unresolved)
