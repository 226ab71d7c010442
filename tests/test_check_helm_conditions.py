"""A Helm chart template's `if` / `with` is judged by the chart's values.yaml where its
condition is a value (`.Values.a.b`), `not`, `eq`, `and` / `or` of such, as Helm renders it
with those values (false, 0, "", nil, an empty list or map are false: Helm's flow-control
guide): a developer's `--reload` behind `developer.enabled: false` is not read into the
launch. A condition not judged here keeps the first branch, said in a note. Seen in
DIRACGrid/diracx-charts' diracx Deployment (`{{- if and .Values.developer.enabled
.Values.developer.autoReload }} - "--reload"`). Each fixture is a small chart written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.helm_templates import read_chart_template
from tests.folder_support import check_folder, write

VALUES = """\
developer:
  enabled: false
  autoReload: true
web:
  port: 8000
  mode: prod
  extra: []
cert-manager:
  enabled: true
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: example/api:1.0
          command:
            - uvicorn
            - api.main:app
            - --host=0.0.0.0
            - --port={{ .Values.web.port }}
          {{- if and .Values.developer.enabled .Values.developer.autoReload }}
            - --reload
          {{- else if eq .Values.web.mode "prod" }}
            - --workers=4
          {{- end }}
"""


def _chart(root: Path, deployment: str = DEPLOYMENT, values: str = VALUES) -> Path:
    return write(
        root,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: api\nversion: 0.1.0\n",
            "chart/values.yaml": values,
            "chart/templates/deployment.yaml": deployment,
        },
    )


def test_a_development_branch_its_values_turn_off_is_not_read(tmp_path: Path) -> None:
    """`{{ if and .Values.developer.enabled .Values.developer.autoReload }} --reload` with
    `developer.enabled: false` renders no `--reload`: the launch is uvicorn with the `else if
    eq .Values.web.mode "prod"` branch's 4 workers, judged (not a development launch), and a
    note says the chart's values.yaml chose the branch."""
    result = check_folder(_chart(tmp_path))
    (app,) = result.apps
    assert app.kind == "uvicorn"
    assert app.reloads is None
    assert app.workers.value == 4
    notes = [n for n in result.notes if n.kind == "template"]
    assert any("values.yaml chooses" in n.message for n in notes)
    assert not any("not judged" in n.message for n in notes)


def _read(condition: str, values: str = VALUES) -> str:
    import yaml

    text = f"a: 1\n{{{{- if {condition} }}}}\nb: yes\n{{{{- else }}}}\nb: no\n{{{{- end }}}}\n"
    found = read_chart_template(text, yaml.safe_load(values))
    assert found is not None
    return "yes" if "b: yes" in found.text else "no"


def test_conditions_are_judged_by_helm_truth() -> None:
    """A key the values do not set is nil (false), an empty list is false, `not` / `or` / `ne`
    and a parenthesized condition combine them as Helm does, and `$.Values` is the root's; `index .Values "a-b" "c"` reads a key no identifier names."""
    assert _read(".Values.developer.enabled") == "no"
    assert _read(".Values.developer.autoReload") == "yes"
    assert _read(".Values.missing.key") == "no"
    assert _read(".Values.web.extra") == "no"
    assert _read("not .Values.developer.enabled") == "yes"
    assert _read("or .Values.developer.enabled .Values.web.port") == "yes"
    assert _read('ne .Values.web.mode "prod"') == "no"
    assert _read("and (not .Values.developer.enabled) $.Values.web.port") == "yes"
    assert _read('index .Values "cert-manager" "enabled"') == "yes"
    assert _read('index .Values "other-chart" "enabled"') == "no"


def test_a_with_on_a_missing_key_renders_its_else() -> None:
    """`{{ with .Values.debug }}` where values.yaml sets no `debug` renders nothing of its
    body, only its `else`; one on a set key reads its body with that value as the dot."""
    import yaml

    text = (
        "{{- with .Values.debug }}\nflag: {{ .level }}\n{{- else }}\nflag: unset\n{{- end }}\n"
        "{{- with .Values.web }}\nport: {{ .port }}\n{{- end }}\n"
    )
    found = read_chart_template(text, yaml.safe_load(VALUES))
    assert found is not None
    assert yaml.safe_load(found.text) == {"flag": "unset", "port": 8000}


def test_a_condition_not_judged_keeps_its_first_branch_and_says_so(tmp_path: Path) -> None:
    """A condition on what the chart's files do not give (`.Release.IsUpgrade`, a function
    like `semverCompare`) is not guessed: its first branch is read, as before, and a note says
    "not followed: Helm condition ... not judged"."""
    deployment = DEPLOYMENT.replace(
        "and .Values.developer.enabled .Values.developer.autoReload", ".Release.IsUpgrade"
    )
    result = check_folder(_chart(tmp_path, deployment))
    (app,) = result.apps
    assert app.reloads is not None
    notes = [n.message for n in result.notes if n.kind == "template"]
    assert any(
        "not followed: Helm condition `{{ if .Release.IsUpgrade }}` not judged" in m for m in notes
    )


def test_a_values_named_owners_image_is_not_the_runs_one_dockerfile(tmp_path: Path) -> None:
    """A chart's one container that sets no command and whose `image:` an `include` writes from
    a values path naming another owner's image (`infiniflow/infinity`, a database) is that
    image, not the one Dockerfile here: no launch is bound to it. Seen in infiniflow/ragflow,
    where judging `{{ if eq .Values.env.DOC_ENGINE "infinity" }}` left that container alone."""
    deployment = """\
{{- if eq .Values.engine "infinity" }}
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: infinity
spec:
  template:
    spec:
      containers:
        - name: infinity
          image: {{ include "app.imageRepo" (dict "repo" .Values.infinity.image.repository) }}:1
{{- end }}
"""
    values = "engine: infinity\ninfinity:\n  image:\n    repository: infiniflow/infinity\n"
    root = _chart(tmp_path, deployment, values)
    write(root, {"Dockerfile": 'FROM python:3.12\nCMD ["uvicorn", "app:app", "--port", "9385"]\n'})
    result = check_folder(root)
    assert [a.container for a in result.apps if a.container is not None] == []


def test_a_template_its_values_turn_off_is_said_to_render_nothing(tmp_path: Path) -> None:
    """A template wholly behind `{{ if .Values.developer.enabled }}` (false in values.yaml)
    renders nothing: the note says so at that `if`, not "what it renders to is not in the
    repository"."""
    deployment = "{{- if .Values.developer.enabled }}\n" + DEPLOYMENT + "{{- end }}\n"
    result = check_folder(_chart(tmp_path, deployment))
    assert result.apps == ()
    (said,) = [n for n in result.notes if n.kind == "template"]
    assert "renders nothing with its chart's values.yaml" in said.message
    assert said.at.line == 1
