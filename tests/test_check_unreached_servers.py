"""A line that runs a server check reads (gunicorn, uvicorn, uWSGI, ...) but that no launch
check followed reaches is never silent: a `not-followed` note at the line names the server and
the step not followed (the CMD of a Dockerfile stage only `docker build --target` builds).
A line a launch reaches, a comment, or `pip install gunicorn` gets none. Seen in
Codium-ai/pr-agent's docker/Dockerfile (stage `github_app` runs gunicorn, the final stage is a
CLI). A `uwsgi_pass` to a name no upstream defines is said the same way. Each fixture is a
small repository written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.output import format_text
from tests.folder_support import chains, check_folder, write

STAGES = """FROM python:3.12 AS base
WORKDIR /app
RUN pip install gunicorn uvicorn
# gunicorn -c srv/gunicorn_conf.py srv.web:app runs the web stage
COPY srv /app/srv

FROM base AS web_app
CMD ["python", "-m", "gunicorn", "-c", "srv/gunicorn_conf.py", "srv.web:app"]

FROM base AS api
CMD ["uvicorn", "--host", "0.0.0.0", "srv.web:app"]
"""

FILES = {
    "srv/gunicorn_conf.py": 'bind = "0.0.0.0:3000"\n',
    "srv/cli.py": "print('a command line tool')\n",
    "srv/web.py": "app = None\n",
}


def _unreached(result: object, name: str) -> list[tuple[int, str]]:
    return [
        (n.at.line, n.message)
        for n in result.notes  # type: ignore[attr-defined]
        if n.kind == "not-followed" and n.at.file.name == name and "this line runs" in n.message
    ]


def test_a_server_in_a_stage_that_is_not_the_final_one_is_said_not_followed(
    tmp_path: Path,
) -> None:
    """The `web_app` stage's CMD runs gunicorn (line 8), but the image builds the final `api`
    stage (which starts uvicorn, so no build target is read as a launch of its own) and no
    file builds `--target web_app`: one not-followed note at line 8 names gunicorn and the
    stage; the RUN that installs gunicorn and the comment get none."""
    root = write(tmp_path, {"docker/Dockerfile": STAGES, **FILES})
    notes = _unreached(check_folder(root), "Dockerfile")
    assert [line for line, _ in notes] == [8]
    assert "runs gunicorn" in notes[0][1]
    assert "stage 'web_app', not the final stage" in notes[0][1]
    assert "docker build --target web_app" in notes[0][1]


def test_a_server_line_a_launch_reaches_is_not_noted(tmp_path: Path) -> None:
    """With the gunicorn stage last, its CMD is the launch: no note says it is unreached."""
    last = STAGES.replace("FROM base AS api\nCMD", "FROM base AS cli_tool\nRUN echo")
    last = last.split("FROM base AS cli_tool")[0]
    root = write(tmp_path, {"docker/Dockerfile": last, **FILES})
    result = check_folder(root)
    assert [s for _, s, _ in chains(result, root)] == ["gunicorn"]
    assert _unreached(result, "Dockerfile") == []


WEB_TEMPLATE = """{{- range $name, $web := .Values.webs }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}-web
spec:
  template:
    spec:
      containers:
        - name: web
          args:
            - sh
            - -c
            - /srv/.venv/bin/gunicorn srv.web:app -b 0.0.0.0:8080 --workers={{ $web.workers }}
{{- end }}
"""


def test_a_server_in_a_template_check_did_not_render_is_said_not_followed(
    tmp_path: Path,
) -> None:
    """A Helm template check skips (a `{{ range }}` over values) whose container runs gunicorn
    (line 14): a not-followed note at that line names gunicorn and the template, and the
    launch graph says no app server was linked because a step was not followed, not that
    none was found. Seen in galaxyproject/galaxy-helm's deployment-web.yaml."""
    root = write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
            "chart/values.yaml": "webs:\n  main:\n    workers: 2\n",
            "chart/templates/deployment-web.yaml": WEB_TEMPLATE,
        },
    )
    result = check_folder(root)
    notes = _unreached(result, "deployment-web.yaml")
    assert chains(result, root) == []
    assert [line for line, _ in notes] == [14]
    assert "runs gunicorn" in notes[0][1]
    assert "template" in notes[0][1]
    text = format_text(result)
    assert "no app server found" not in text
    assert "no app server linked" in text


def test_a_uwsgi_pass_to_a_name_no_upstream_defines_is_said_not_followed(tmp_path: Path) -> None:
    """`uwsgi_pass django;` with no `upstream django` in the config read with it (the block
    sits in a conf.d neighbour nothing includes) and no compose service of that name: the
    uWSGI server here is not joined to it, and a not-followed note at the pass line names
    the host, never silence. Seen in certego/BuffaLogs's conf.d/site.conf."""
    root = write(
        tmp_path,
        {
            "uwsgi.ini": "[uwsgi]\nmodule = shop.wsgi:application\nsocket = 0.0.0.0:3031\n",
            "nginx/site.conf": (
                "server {\n    listen 80;\n    location / {\n        uwsgi_pass django;\n    }\n}\n"
            ),
        },
    )
    result = check_folder(root)
    notes = [
        (n.at.line, n.message)
        for n in result.notes
        if n.kind == "not-followed" and n.at.file.name == "site.conf"
    ]
    assert [line for line, _ in notes] == [4]
    assert "front host unknown: 'django'" in notes[0][1]
    assert "no `upstream django`" in notes[0][1]


def test_a_file_that_stopped_at_a_link_never_says_it_starts_no_server(tmp_path: Path) -> None:
    """A compose file whose `client` service extends a file that is not here: check stopped
    at that link, so the file is one not-followed note at the `extends` and never "no service
    starts a server" (which only a file whose every link was followed may say). Seen in
    eHealthAfrica/aether's docker-compose-test.yml and clowder-framework/clowder2."""
    compose = (
        "services:\n  db:\n    image: postgres:16\n  client:\n    extends:\n"
        "      file: ./client/docker-compose.yml\n      service: client\n"
    )
    result = check_folder(write(tmp_path, {"docker-compose-test.yml": compose}))
    kinds = [(n.kind, n.at.line) for n in result.notes if n.at.file.name.startswith("docker")]
    assert kinds == [("not-followed", 6)]
