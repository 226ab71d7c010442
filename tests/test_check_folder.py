"""`servertune check` on a folder: the repository is walked, each file read by its kind, the
launch chain linked, and a value check cannot know is a coverage note, never a refusal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover, template_line
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import chains, write

REPOS = Path(__file__).parent / "data" / "repos"
NEW_USER = REPOS / "new-user"
#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def run(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m servertune check ARGV...` run in `cwd`, as a user runs it there."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", "check", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk])


def found(root: Path) -> set[str]:
    """The files a walk of `root` reads, relative to it."""
    return {p.relative_to(root).as_posix() for p in discover(root).files}


GUNICORN_EXEC = "#!/bin/sh\nexec gunicorn --bind 0.0.0.0:8000 --workers 2 app:app\n"
BROKEN_DOCKERFILE = "FROM python:3.12\nCMD gunicorn --workers 'unterminated\n"


def test_no_argument_checks_the_current_folder() -> None:
    """`servertune check` alone, at the new-user repository's root, reads the repository and
    names each fault at the repository file and line (exit 1: findings). The count from
    `cpu_count()` under the compose CPU limit is one fault, `workers-from-cpu-count`, which
    names the limit (docs/check.md: a worker count is judged against a declared limit only
    when it is written as a number)."""
    result = run("--cores", "4", cwd=NEW_USER)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    for where, rule in [
        ("docker/entrypoint.sh:4", "entrypoint-without-exec"),
        ("config/gunicorn.conf.py:4", "workers-from-cpu-count"),
        ("nginx/templates/default.conf.template:8", "app-timeout-over-read-timeout"),
    ]:
        assert f"{where}: warning [{rule}]" in out, (where, rule, out)
    # The template's placeholder and compose's `${NGINX_HOST:?}` are coverage, not refusals.
    assert "compose.yaml:15: [unresolved-variable]" in out
    assert "nginx/templates/default.conf.template:5: [unresolved-variable]" in out
    assert result.stderr == ""


def test_new_user_repository_links_one_gunicorn_through_its_chain() -> None:
    """The compose service builds the Dockerfile, whose ENTRYPOINT is the copied script, which
    starts gunicorn with the config the image holds at /app/config: one server, its chain in
    launch order, nginx's proxy_pass as its front, its workers sized for the CPU limit."""
    result = check_folder(NEW_USER)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    chain = [(at.file.relative_to(NEW_USER).as_posix(), at.line) for at in launch.chain]
    assert [f for f, _ in chain] == [
        "compose.yaml",
        "Dockerfile",
        "docker/entrypoint.sh",
        "config/gunicorn.conf.py",
    ]
    assert ("Dockerfile", 7) in chain  # the ENTRYPOINT line
    assert [f.file.name for f in launch.fronts] == ["default.conf.template"]
    assert launch.app.workers.value == 5  # cpu_count() * 2 + 1 for the limit of 2
    assert result.cores is not None
    assert "compose.yaml:7" in result.cores[1]
    assert not result.errors


def test_empty_folder_is_checked_and_clean(tmp_path: Path) -> None:
    """A folder with nothing check reads: exit 0, said in one line, no error."""
    result = run(cwd=tmp_path)
    assert result.returncode == 0, result
    assert "no server to check in 0 files" in result.stdout
    assert result.stderr == ""


def test_gitignore_and_vendored_trees_are_not_read(tmp_path: Path) -> None:
    """A broken Dockerfile under node_modules, .venv, site-packages, a folder holding
    pyvenv.cfg or a path .gitignore names, a broken script or config in build output (build/,
    dist/), is never read (it would exit 2)."""
    write(
        tmp_path,
        {
            ".gitignore": "ignored/\n*.local.sh\n",
            "start.sh": GUNICORN_EXEC,
            "node_modules/pkg/Dockerfile": BROKEN_DOCKERFILE,
            ".venv/Dockerfile": BROKEN_DOCKERFILE,
            "lib/python3.12/site-packages/x/Dockerfile": BROKEN_DOCKERFILE,
            "env/pyvenv.cfg": "home = /usr/bin\n",
            "env/Dockerfile": BROKEN_DOCKERFILE,
            "build/lib/pkg/run.sh": "#!/bin/sh\nexec gunicorn 'unterminated\n",
            "dist/pkg/gunicorn.conf.py": "workers = (\n",
            "ignored/Dockerfile": BROKEN_DOCKERFILE,
            "run.local.sh": "#!/bin/sh\nexec gunicorn 'unterminated\n",
        },
    )
    assert found(tmp_path) == {"start.sh"}
    result = run("--cores", "4", cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.stderr == ""


def test_a_build_folder_holding_a_dockerfile_is_the_projects_own(tmp_path: Path) -> None:
    """`build/web/Dockerfile` (a project's image build folders named build/) is read: build
    output never holds a Dockerfile, so a build/ or dist/ folder with one within two levels
    is walked like any other; one without stays skipped."""
    write(
        tmp_path,
        {
            "build/web/Dockerfile": "FROM python:3.12\nCMD exec gunicorn -w 3 app:app\n",
            "build/lib/start.sh": GUNICORN_EXEC,
            "dist/start.sh": GUNICORN_EXEC,
        },
    )
    assert found(tmp_path) == {"build/web/Dockerfile", "build/lib/start.sh"}


def test_a_dockerfile_named_without_a_separator_is_told_by_its_first_instruction(
    tmp_path: Path,
) -> None:
    """`DockerfileCelery` and `gui/DockerfileProd` (no `.` or `-` after the name) are
    Dockerfiles when their first instruction is FROM or ARG; a `DockerfileNotes` whose first
    line is prose is not."""
    image = "# the worker\nARG PY=3.12\nFROM python:${PY}\nCMD exec gunicorn -w 2 app:app\n"
    write(
        tmp_path,
        {
            "DockerfileCelery": image,
            "gui/DockerfileProd": "FROM node:20\nCMD node server.js\n",
            "DockerfileNotes": "how we build the image\n",
        },
    )
    assert found(tmp_path) == {"DockerfileCelery", "gui/DockerfileProd"}


def test_kinds_told_by_name_and_content(tmp_path: Path) -> None:
    """Dockerfile.prod, Dockerfile-prod, prod.Dockerfile and *.dockerfile are Dockerfiles;
    .env, prod.env, .env.example and env.sample are env files; Procfile.sh is a shell script;
    a gunicorn config written as shell variables is an env file; source code, docs, CI YAML,
    pytest.ini and redis.conf are not deployment files."""
    image = "FROM python:3.12\nCMD exec gunicorn --bind 0.0.0.0:8000 app:app\n"
    write(
        tmp_path,
        {
            "Dockerfile.prod": image,
            "Dockerfile-prod": image,
            "prod.Dockerfile": image,
            "docker/web.dockerfile": image,
            ".env": "A=1\n",
            "prod.env": "A=1\n",
            ".env.example": "A=\n",
            "env.sample": "A=1\n",
            "Procfile.sh": GUNICORN_EXEC,
            "deploy/gunicorn.conf": "GUNICORN_BIND=0.0.0.0:8000\nexport GUNICORN_WORKERS=3\n",
            "app/views.py": "def index():\n    return 'hi'\n",
            "tests/test_gunicorn_app.py": "app = object()\n",
            "src/dockerfile.py": "def parse():\n    pass\n",
            "README.md": "# hi\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n",
            "pytest.ini": "[pytest]\naddopts = -q\n",
            "redis.conf": "maxmemory 100mb\n",
        },
    )
    assert found(tmp_path) == {
        "Dockerfile.prod",
        "Dockerfile-prod",
        "prod.Dockerfile",
        "docker/web.dockerfile",
        ".env",
        "prod.env",
        ".env.example",
        "env.sample",
        "Procfile.sh",
        "deploy/gunicorn.conf",
    }
    result = check_folder(tmp_path)
    assert not result.errors
    assert {a.file.name for a in result.apps} >= {"Procfile.sh", "Dockerfile.prod"}
    assert {p.name for p, _ in result.env_files} == {
        ".env",
        "prod.env",
        ".env.example",
        "env.sample",
        "gunicorn.conf",
    }


def test_env_file_linked_to_the_compose_file_that_loads_it(tmp_path: Path) -> None:
    """A compose file's `.env` and `env_file:` are linked to it; an env file nothing loads
    says so."""
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  web:\n    image: x\n    env_file: web.env\n"
            "    command: gunicorn --bind 0.0.0.0:8000 app:app\n",
            ".env": "A=1\n",
            "web.env": "WEB_CONCURRENCY=2\n",
            "unused.env": "B=1\n",
        },
    )
    result = check_folder(tmp_path)
    loaded = {p.name: [q.name for q in by] for p, by in result.env_files}
    assert loaded == {".env": ["compose.yaml"], "web.env": ["compose.yaml"], "unused.env": []}


def test_env_file_copies_named_dist_and_template_are_env_files(tmp_path: Path) -> None:
    """`.env-dist`, `server.env.template`, `env.prod.template` and `env.nginx.template` (the
    copies a deployment fills in) are found and read as env files."""
    names = (".env-dist", "docker/server.env.template", "env.prod.template", "env.nginx.template")
    write(tmp_path, dict.fromkeys(names, "# fill in\nSECRET_KEY=\nWEB_CONCURRENCY=2\n"))
    assert found(tmp_path) == set(names)
    result = check_folder(tmp_path)
    assert not result.errors
    assert {p.relative_to(tmp_path).as_posix() for p, _ in result.env_files} == set(names)


def test_env_file_loaded_by_a_compose_file_that_starts_no_server(tmp_path: Path) -> None:
    """A compose stack of images built elsewhere (no server check reads) still loads its
    `env_file`s (a path, a list, `{path:}` items, in a sub-folder) and the `.env` it
    interpolates from: none of them is "loaded by nothing"."""
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  web:\n    image: ghcr.io/example/app:${TAG}\n"
            "    env_file: config/prod.env\n  db:\n    image: postgres:16\n"
            "    env_file:\n      - path: db.env\n        required: false\n",
            ".env": "TAG=1.2\n",
            "config/prod.env": "GUNICORN_CMD_ARGS=--workers 3\n",
            "db.env": "POSTGRES_DB=app\n",
            "docker/compose/docker-compose.yml": "services:\n  web:\n    image: example/app\n"
            "    env_file: [docker-compose.env]\n",
            "docker/compose/docker-compose.env": "PAPERLESS_PORT=8000\n",
            "docker/compose/.env": "COMPOSE_PROJECT_NAME=app\n",
            "notes.env": "UNUSED=1\n",
        },
    )
    result = check_folder(tmp_path)
    loaded = {
        p.relative_to(tmp_path).as_posix(): sorted(q.relative_to(tmp_path).as_posix() for q in by)
        for p, by in result.env_files
    }
    assert loaded == {
        ".env": ["compose.yaml"],
        "config/prod.env": ["compose.yaml"],
        "db.env": ["compose.yaml"],
        "docker/compose/.env": ["docker/compose/docker-compose.yml"],
        "docker/compose/docker-compose.env": ["docker/compose/docker-compose.yml"],
        "notes.env": [],
    }


def test_found_file_no_reader_claims_is_named_once_given_one_exits_2(tmp_path: Path) -> None:
    """Files named like deployment files that no reader claims (a Python launcher named `run`,
    a `.cfg` of notes named for uWSGI) are skipped and named in one coverage line in a walk
    (documentation is not even named); named on the command line, such a file is still an
    error (exit 2)."""
    write(
        tmp_path,
        {
            "start.sh": GUNICORN_EXEC,
            "run": "#!/usr/bin/env python\nprint('hi')\n",
            "uwsgi-notes.cfg": "see uwsgi.ini\n",
            "docs/gunicorn-behind-nginx.md": "# notes\n",  # documentation: not even named
        },
    )
    walked = run("--cores", "4", cwd=tmp_path)
    assert walked.returncode == 0, walked
    assert walked.stdout.count("[not-read]") == 1
    assert "no reader claims: run, uwsgi-notes.cfg" in walked.stdout
    named = run("uwsgi-notes.cfg", "--cores", "4", cwd=tmp_path)
    assert named.returncode == 2
    assert named.stderr.startswith("error: uwsgi-notes.cfg: not a file check reads")


def test_deployment_files_of_kinds_not_read_are_named_not_skipped_silently(
    tmp_path: Path,
) -> None:
    """Issue 44 §1: a walk names what it skips. A server's file no reader reads
    (`hypercorn-logging.toml`, setting no key of Hypercorn's) and a Helm chart's values
    (`values.yaml` beside its `templates/`) are named in the coverage summary; DigitalOcean's
    app spec (`.do/app.yaml`) is read (a file kind since issue 44's platforms3 lane); an env file's example with
    several dotted parts (`env.oss.gh.example`) is read as an env file; a YAML of some other
    tool (`mkdocs.yml`, a `values.yaml` outside a chart) is not named. An nginx config all
    commented out is named as empty, not as a file of an unknown kind. A `hypercorn.toml` is
    read (Hypercorn's TOML config, a file kind of its own since issue 44's servers lane)."""
    write(
        tmp_path,
        {
            "hypercorn.toml": 'bind = "0.0.0.0:8080"\nworkers = 2\n',
            "hypercorn-logging.toml": '[loggers]\nkeys = "root"\n',
            ".do/app.yaml": "name: app\nservices:\n  - name: web\n    run_command: ./start.sh\n",
            "chart/values.yaml": "image:\n  tag: 1.0\nreplicaCount: 2\n",
            "chart/templates/deployment.yaml": "kind: Deployment\nspec: {{ .Values.x }}\n",
            "hosting/env.oss.gh.example": "WEB_CONCURRENCY=2\nPORT=8000\n",
            "mkdocs.yml": "site_name: docs\n",
            "tests/values.yaml": "a: 1\n",
            "deployment/nginx.conf": "#server {\n    #listen 80;\n#}\n",
        },
    )
    walk = discover(tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in walk.unclaimed} == {
        "hypercorn-logging.toml",
        "chart/values.yaml",
        "deployment/nginx.conf",
    }
    assert [p.relative_to(tmp_path).as_posix() for p in walk.empty] == ["deployment/nginx.conf"]
    assert {p.relative_to(tmp_path).as_posix() for p in walk.files} == {
        ".do/app.yaml",
        "hosting/env.oss.gh.example",
        "hypercorn.toml",
    }
    (note,) = [n for n in check_folder(tmp_path).notes if n.kind == "not-read"]
    assert "nginx.conf (empty: only comments)" in note.message
    assert "hypercorn-logging.toml," in note.message


def test_a_value_the_launch_chain_gives_is_not_noted_unknown_by_the_config_read_alone(
    tmp_path: Path,
) -> None:
    """`processes = $(UWSGI_PROCESSES)` in uwsgi.ini is unknown read alone, but the image's
    script exports UWSGI_PROCESSES=2 before `uwsgi --ini`: the launch shows 2 processes, so no
    note says it was read with uWSGI's default 1 (mapproxy's run-nginx.sh); a value the chain
    does not give either (`threads = $(UWSGI_THREADS)`) keeps its note."""
    write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY uwsgi.ini run.sh /app/\nCMD ["/app/run.sh"]\n',
            "run.sh": '#!/bin/sh\nexport UWSGI_PROCESSES="${UWSGI_PROCESSES:-2}"\n'
            "exec uwsgi --ini /app/uwsgi.ini\n",
            "uwsgi.ini": "[uwsgi]\nmodule = app:application\nsocket = 0.0.0.0:8080\n"
            "processes = $(UWSGI_PROCESSES)\nthreads = $(UWSGI_THREADS)\n",
        },
    )
    result = check_folder(tmp_path)
    assert [app.workers.value for app in result.apps] == [2]
    unknown = [n.at.line for n in result.notes if n.kind == "unresolved-variable"]
    assert unknown == [5]
    alone = check_files([tmp_path / "uwsgi.ini"], machine=MACHINE, env={})
    assert sorted(n.at.line for n in alone.notes if n.kind == "unresolved-variable") == [4, 5]


def test_template_skipped_with_its_first_template_line(tmp_path: Path) -> None:
    """A Helm chart's manifest is skipped with one coverage line at its first template line;
    a Jinja nginx config whose templating is only in values is read with its `{% if %}` said at
    its line (its first branch read); the other files are judged."""
    write(
        tmp_path,
        {
            "chart/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\n"
            "metadata:\n  name: {{ .Release.Name }}\n",
            "deploy/nginx.conf.j2": "server {\n    listen 80;\n"
            "    {% if tls %}listen 443 ssl;{% endif %}\n}\n",
            "start.sh": GUNICORN_EXEC,
        },
    )
    result = check_folder(tmp_path)
    templates = {(n.at.file.name, n.at.line) for n in result.notes if n.kind == "template"}
    assert templates == {("deployment.yaml", 4), ("nginx.conf.j2", 3)}
    assert len(result.apps) == 1
    assert not result.errors


def test_an_expression_in_a_comment_does_not_make_a_template(tmp_path: Path) -> None:
    """A `{{ }}` on a `#` comment line only changes the comment, so the file is read (an env
    file documenting `{{user.<key>}}` placeholders); a `{% %}` statement on a comment line
    steers the lines after it, so that file is still a template."""
    write(
        tmp_path,
        {
            "deploy/env.template": "# resolve {{user.name}} placeholders\nWEB_CONCURRENCY=3\n",
            "deploy/site.conf": "# {% if tls %}\nserver {\n    listen 80;\n}\n# {% endif %}\n",
            "start.sh": GUNICORN_EXEC,
        },
    )
    result = check_folder(tmp_path)
    templates = {(n.at.file.name, n.at.line) for n in result.notes if n.kind == "template"}
    assert templates == {("site.conf", 1)}
    assert tmp_path / "deploy" / "env.template" in discover(tmp_path).files


def test_json_and_sarif_carry_the_launch_graph_and_coverage() -> None:
    """`--format json` has the launches (chain, server, config, fronts), env files and walks;
    SARIF carries the same in its run's properties, and the coverage as notifications."""
    document = json.loads(run("--format", "json", "--cores", "4", cwd=NEW_USER).stdout)
    (launch,) = document["launches"]
    assert launch["started_by"] == "compose service web"
    assert [step["file"] for step in launch["chain"]][-1] == "config/gunicorn.conf.py"
    assert launch["config"] == "config/gunicorn.conf.py"
    assert launch["fronts"] == [{"file": "nginx/templates/default.conf.template", "line": 7}]
    assert document["walks"][0]["root"] == "."
    assert "compose.yaml" in document["walks"][0]["read"]
    sarif = json.loads(run("--format", "sarif", "--cores", "4", cwd=NEW_USER).stdout)
    (sarif_run,) = sarif["runs"]
    assert sarif_run["properties"]["launches"] == document["launches"]
    notes = sarif_run["invocations"][0]["toolExecutionNotifications"]
    assert any(n["descriptor"]["id"] == "unresolved-variable" for n in notes)


def test_one_gunicorn_once_and_cpu_count_at_its_line(tmp_path: Path) -> None:
    """#47 item 5: an entrypoint passing `--workers 12` to gunicorn with a config whose
    `workers = cpu_count()` is one server (12 workers: the flag wins), not also the config read
    on its own, and the CPU count is not reported at the entrypoint's literal; without the flag
    the finding is at the config's own line."""
    conf = (
        "import multiprocessing\nbind = '0.0.0.0:8000'\n"
        "workers = multiprocessing.cpu_count() * 2 + 1\n"
    )
    entry = "#!/bin/sh\nexec gunicorn -c gunicorn.conf.py --workers 12 app:app\n"
    write(tmp_path, {"gunicorn.conf.py": conf, "entrypoint.sh": entry, "Dockerfile": (
        "FROM python:3.12\nCOPY . /app\nWORKDIR /app\nENTRYPOINT [\"/app/entrypoint.sh\"]\n"
    )})  # fmt: skip
    result = check_folder(tmp_path)
    assert [(a.kind, a.workers.value) for a in result.apps] == [("gunicorn", 12)]
    assert not [f for f in result.findings if f.rule.startswith("workers-from-cpu-count")]
    (tmp_path / "entrypoint.sh").write_text(entry.replace("--workers 12 ", ""))
    result = check_folder(tmp_path)
    assert len(result.apps) == 1
    # No CPU limit declared: the node's count is the container's, said as advice.
    cpu = [f for f in result.findings if f.rule == "workers-from-cpu-count-no-limit"]
    assert [(f.at.file.name, f.at.line) for f in cpu] == [("gunicorn.conf.py", 3)]


def test_walk_finds_template_copies_executables_and_gunicorn_folders(tmp_path: Path) -> None:
    """`default.conf.sample` and `site.conf.tpl` (nginx by content), an executable s6 `run`
    without a suffix, a suffixless file with a shell shebang, a `.py` in a `gunicorn/` folder
    and a comments-only `.env.example` are read; render.com's `render.yaml` (a list of
    services, not compose's mapping) is read as a platform file, not as compose."""
    write(
        tmp_path,
        {
            "nginx/site-confs/default.conf.sample": "server {\n    listen 80;\n}\n",
            "docker/site.conf.tpl": "upstream app { server web:8000; }\n",
            "s6/web/run": GUNICORN_EXEC,
            "etc/gunicorn/marsha.py": "bind = '0.0.0.0:8000'\nworkers = 3\n",
            "render.yaml": "services:\n  - type: web\n    name: x\n",
            "httpd-foreground": "#!/bin/bash\nexec gunicorn --bind 0.0.0.0:8000 app:app\n",
            "docker/.env.example": "# Copy to .env and set:\n# SECRET_KEY=\n",
        },
    )
    (tmp_path / "s6/web/run").chmod(0o755)
    assert found(tmp_path) == {
        "nginx/site-confs/default.conf.sample",
        "docker/site.conf.tpl",
        "s6/web/run",
        "etc/gunicorn/marsha.py",
        "httpd-foreground",  # a shell shebang, its mode bits lost in a copy
        "docker/.env.example",  # comments only: an env file all the same
        "render.yaml",
    }
    assert not check_folder(tmp_path).errors


def test_gunicorn_python_module_config_is_its_file(tmp_path: Path) -> None:
    """`gunicorn -c python:config.gunicorn` (a module config) is config/gunicorn.py of the
    image's working directory: one server, its workers from that file, not two readings."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
            'CMD ["gunicorn", "-c", "python:config.gunicorn", "app:create_app()"]\n',
            "config/gunicorn.py": "bind = '0.0.0.0:8000'\nworkers = 3\n",
        },
    )
    result = check_folder(tmp_path)
    assert [(a.workers.value, a.workers.at.file.name) for a in result.apps] == [(3, "gunicorn.py")]


def test_walk_reads_caddy_and_traefik_fronts(tmp_path: Path) -> None:
    """A Caddyfile, a `*.caddyfile` and Traefik's static and dynamic files (TOML or YAML) are
    found by name and read as fronts: Caddy's 2 min idle keep-alive before uvicorn's 5 s is
    found through the walk, as when the files are named."""
    write(
        tmp_path,
        {
            "Caddyfile": "example.com {\n    reverse_proxy 127.0.0.1:8000\n}\n",
            "docker/caddy/site.caddyfile": "example.org {\n    reverse_proxy 127.0.0.1:8000\n}\n",
            "traefik.prod.toml": '[entryPoints.web]\n  address = ":80"\n',
            "start.sh": "#!/bin/sh\nexec uvicorn app:app --host 127.0.0.1 --port 8000\n",
        },
    )
    assert found(tmp_path) == {
        "Caddyfile",
        "docker/caddy/site.caddyfile",
        "traefik.prod.toml",
        "start.sh",
    }
    result = check_folder(tmp_path)
    assert not result.errors
    assert any(f.rule == "lb-idle-over-app-keepalive" for f in result.findings), result.findings


def test_site_file_without_a_suffix_in_an_nginx_folder_is_walked(tmp_path: Path) -> None:
    """`deployment/nginx/microblog` (a site named for itself, no suffix) is read in a folder
    walk by its nginx content and fronts the supervisord gunicorn it passes to; a README
    beside it is not an nginx file."""
    (tmp_path / "deployment" / "nginx").mkdir(parents=True)
    (tmp_path / "deployment" / "supervisor").mkdir()
    (tmp_path / "deployment" / "nginx" / "microblog").write_text(
        "server {\n    listen 80;\n    location / {\n"
        "        proxy_pass http://localhost:8000;\n    }\n}\n"
    )
    (tmp_path / "deployment" / "nginx" / "README").write_text("how to deploy\n")
    (tmp_path / "deployment" / "supervisor" / "microblog.conf").write_text(
        "[program:microblog]\ncommand=gunicorn -b localhost:8000 -w 4 microblog:app\n"
    )
    walk = discover(tmp_path)
    assert tmp_path / "deployment" / "nginx" / "microblog" in walk.files
    assert tmp_path / "deployment" / "nginx" / "README" not in walk.files
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.name for at in launch.fronts] == ["microblog"]


def test_nginx_files_named_anything_are_walked_by_content(tmp_path: Path) -> None:
    """A Jinja site under `nginx/` named `default.tpl` and an `http-base.conf.jnj` are skipped as
    templates; a stage copy `app.conf.template.prod` and a suffixless `proxy/conf` (which the
    proxy's Dockerfile copies to conf.d) are read as nginx by their content; a LICENSE and a
    Makefile beside them are neither read nor named."""
    jinja_site = "server {\n{% if SSL %}\n    listen 443 ssl;\n{% endif %}\n}\n"
    jinja_http = (
        "server_tokens off;\n{% if not trusted_proxy_cidr %}\nset_real_ip_from 0.0.0.0/0;\n"
    )
    write(
        tmp_path,
        {
            "etc/nginx/default.tpl": jinja_site,
            "conf/nginx/http-base.conf.jnj": jinja_http,
            "deploy/nginx/app.conf.template.prod": "upstream api { server ${API_HOST}:8080; }\n"
            "server {\n    listen 80;\n    location / { proxy_pass http://api; }\n}\n",
            "proxy/conf": "server {\n    listen 80;\n"
            "    location / { proxy_pass http://backend:8000; }\n}\n",
            "proxy/Dockerfile": "FROM nginx:1.25\nCOPY conf /etc/nginx/conf.d/default.conf\n",
            "LICENSE": "Permission is hereby granted, free of charge, to any person\n",
            "Makefile": "run:\n\tdocker compose up\n",
        },
    )
    walk = discover(tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in walk.files} == {
        "deploy/nginx/app.conf.template.prod",
        "proxy/conf",
        "proxy/Dockerfile",
    }
    assert {p.relative_to(tmp_path).as_posix() for p, _ in walk.templates} == {
        "etc/nginx/default.tpl",
        "conf/nginx/http-base.conf.jnj",
    }
    assert not walk.unclaimed
    assert not check_folder(tmp_path).errors


def test_front_copied_into_an_image_belongs_to_the_project_that_builds_it(tmp_path: Path) -> None:
    """An nginx site a proxy's Dockerfile copies (`COPY conf /etc/nginx/conf.d/...`) is in the
    compose project whose service builds that image: its `backend:8000` is that project's
    backend (here a `python app.py` check does not read), never a gunicorn on port 8000 of a
    sample beside it."""
    write(
        tmp_path,
        {
            "with-proxy/compose.yaml": "services:\n  backend:\n    build: backend\n"
            "  proxy:\n    build: proxy\n    ports: ['80:80']\n",
            "with-proxy/backend/Dockerfile": 'FROM python:3.12\nCMD ["python", "app.py"]\n',
            "with-proxy/proxy/Dockerfile": "FROM nginx:1.25\n"
            "COPY conf /etc/nginx/conf.d/default.conf\n",
            "with-proxy/proxy/conf": "server {\n    listen 80;\n"
            "    location / { proxy_pass http://backend:8000; }\n}\n",
            "other-sample/compose.yaml": "services:\n  web:\n    build: .\n"
            "    command: gunicorn --bind 0.0.0.0:8000 --timeout 60 app:app\n",
            "other-sample/Dockerfile": "FROM python:3.12\n",
        },
    )
    result = check_folder(tmp_path)
    fronted = {
        launch.chain[0].file.parent.relative_to(tmp_path).as_posix(): [
            at.file.relative_to(tmp_path).as_posix() for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronted == {"other-sample": []}, fronted
    assert tmp_path / "with-proxy/proxy/conf" in {n.file for n in result.nginx}


def test_compose_file_of_volumes_and_networks_only_is_read(tmp_path: Path) -> None:
    """`docker/prod.yml` declaring only external volumes and a network (given with `-f` beside
    the main compose file) is a compose file read, with one note that it starts no container;
    a YAML with `volumes:` beside a key compose has not (an Ansible play) is not claimed."""
    write(
        tmp_path,
        {
            "docker-compose.yml": "services:\n  api:\n    build: .\n"
            "    command: gunicorn --bind 0.0.0.0:5500 --timeout 60 app:app\n",
            "Dockerfile": "FROM python:3.12\n",
            "docker/prod.yml": "volumes:\n  data:\n    external: true\n"
            "    name: ${COMPOSE_PROJECT_NAME:-app}_data\n\nnetworks:\n  common:\n"
            "    name: ${COMMON_NET_NAME}\n    external: true\n",
            "deploy/site.yml": "volumes:\n  - /srv\ntasks:\n  - name: x\n",
        },
    )
    assert found(tmp_path) == {"docker-compose.yml", "Dockerfile", "docker/prod.yml"}
    result = check_folder(tmp_path)
    assert not result.errors
    assert [a.kind for a in result.apps] == ["gunicorn"]


def test_an_http_front_is_not_joined_to_a_uwsgi_protocol_socket(tmp_path: Path) -> None:
    """nginx's `proxy_pass` (HTTP) to 127.0.0.1:8001 reaches the gunicorn bound there, not a
    uWSGI whose `socket` (the uwsgi protocol, answered only by `uwsgi_pass`) is on the same
    address: the two are alternative deployments, and an HTTP request to a uwsgi socket is a
    502. The same uWSGI on `http-socket` is joined."""
    write(
        tmp_path,
        {
            "gunicorn.conf.py": "bind = '127.0.0.1:8001'\nworkers = 2\n",
            "uwsgi.ini": "[uwsgi]\nsocket = 127.0.0.1:8001\nprocesses = 2\nmodule = app\n",
            "nginx.conf": "server {\n    listen 80;\n    location / {\n"
            "        proxy_pass http://127.0.0.1:8001;\n    }\n}\n",
        },
    )

    def fronted() -> dict[str, int]:
        result = check_folder(tmp_path)
        return {link.app.kind: link.passing.at.line for link in result.links}

    assert fronted() == {"gunicorn": 4}
    (tmp_path / "uwsgi.ini").write_text(
        "[uwsgi]\nhttp-socket = 127.0.0.1:8001\nprocesses = 2\nmodule = app\n"
    )
    assert fronted() == {"gunicorn": 4, "uwsgi": 4}


def test_each_project_s_upstream_of_the_same_name_gets_its_own_keepalive_finding(
    tmp_path: Path,
) -> None:
    """Two projects in one repository, each with nginx's `upstream app` pooling 60 s in front
    of a gunicorn keeping connections 5 s: each project's gunicorn gets the finding (one had
    hidden the other's, both being `app`)."""
    files: dict[str, str] = {}
    for project in ("shop", "blog"):
        files |= {
            f"{project}/Dockerfile": (
                "FROM python:3.12-slim\nCOPY gunicorn.conf.py /app/gunicorn.conf.py\n"
                'CMD ["gunicorn", "-c", "/app/gunicorn.conf.py", "site:app"]\n'
            ),
            f"{project}/gunicorn.conf.py": (
                'bind = "0.0.0.0:8000"\nworkers = 2\nworker_class = "gthread"\nthreads = 2\n'
                "keepalive = 5\n"
            ),
            f"{project}/nginx.conf": (
                "upstream app {\n    server web:8000;\n    keepalive 16;\n}\n"
                "server {\n    listen 80;\n    location / {\n"
                "        proxy_http_version 1.1;\n"
                '        proxy_set_header Connection "";\n'
                "        proxy_pass http://app;\n    }\n}\n"
            ),
            f"{project}/compose.yaml": (
                "services:\n  web:\n    build: .\n  nginx:\n    image: nginx:1.27\n"
                "    volumes:\n      - ./nginx.conf:/etc/nginx/conf.d/default.conf:ro\n"
            ),
        }
    root = write(tmp_path, files)
    found = sorted(
        str(f.at.file.relative_to(root))
        for f in check_folder(root).findings
        if f.rule == "upstream-keepalive-over-app-keepalive"
    )
    assert found == ["blog/gunicorn.conf.py", "shop/gunicorn.conf.py"]


def test_an_erb_template_is_skipped_as_a_template(tmp_path: Path) -> None:
    """An nginx ERB template a tool renders with values of its own (a Chef cookbook's
    `templates/nginx.conf.erb`: `listen <%= @port %>;`) is a template: skipped with a note at
    its first ERB line, never refused as nginx syntax; the Heroku nginx buildpack's
    `config/nginx.conf.erb` is read (`heroku_nginx`); a Python `"<%s>" % name` is no template."""
    text = (
        "daemon off;\nworker_processes <%= ENV['NGINX_WORKERS'] || 4 %>;\nevents {}\n"
        'http {\n  server {\n    listen <%= ENV["PORT"] %>;\n  }\n}\n'
    )
    erb = tmp_path / "templates" / "nginx.conf.erb"
    buildpack = tmp_path / "config" / "nginx.conf.erb"
    for path in (erb, buildpack):
        path.parent.mkdir()
        path.write_text(text)
    (tmp_path / "gunicorn.conf.py").write_text(
        'bind = "0.0.0.0:8000"\nproc_name = "<%s>" % "web"\n'
    )
    walk = discover(tmp_path)
    assert walk.templates == ((erb, 2),)
    assert buildpack in walk.files
    assert template_line('proc_name = "<%s>" % "web"\n') is None


def test_a_platform_building_a_template_dockerfile_is_not_followed(tmp_path: Path) -> None:
    """fly.toml's `[build] dockerfile = 'Dockerfile'` names a project template's Dockerfile
    (`{{ project_name }}`): the platform's launch is "not followed" (what the template renders
    to is not here), never a Dockerfile syntax error that fails the run."""
    (tmp_path / "fly.toml").write_text(
        "app = 'news'\n[build]\n  dockerfile = 'Dockerfile'\n[http_service]\n  internal_port = 8000\n"
    )
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12-slim\nENV PROJECT={{ project_name }}\n"
        'CMD ["gunicorn", "{{ project_name }}.wsgi"]\n'
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    assert not result.errors
    assert any(
        n.kind == "not-followed" and n.at.file.name == "fly.toml" and "a template" in n.message
        for n in result.notes
    )


def test_template_markers_in_a_shell_quote_do_not_make_a_script_a_template(
    tmp_path: Path,
) -> None:
    """In a shell script, `{{ }}` inside a shell quote is text a command is given (`sed -i
    "s/{{PORT}}/$PORT/"` fills another file's placeholder): the script is read. A marker where
    the shell reads words (`--workers {{ workers }}`) still makes a template."""
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\n# don't render here\n"
        'sed -i "s/{{PORT}}/$PORT/" /etc/nginx/conf.d/default.conf\n'
        "sed -i 's|{{'$KEY'}}|'$VALUE'|g' /config/settings.py\n"
        "exec gunicorn --workers 3 app:app\n"
    )
    walk = discover(tmp_path)
    assert (walk.files, walk.templates) == ((tmp_path / "start.sh",), ())
    templated = "#!/bin/sh\necho '{{ quoted }}'\nexec gunicorn --workers {{ workers }} app:app\n"
    assert template_line(templated) == 3


def test_template_markers_in_a_dockerfile_run_do_not_make_it_a_template(tmp_path: Path) -> None:
    """`RUN sed 's/<head>/<head>{% block head %}{% endblock %}/' ...` writes a Django template
    during the build: the Dockerfile is read (3 of 3 files, no template skipped); a marker on
    an instruction it reads itself (`ENV X={{ name }}`) still makes it a template."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12-slim\nCOPY . /app\n"
        "RUN sed 's/<head>/<head>{% block head %}{% endblock %}/' /app/index.html \\\n"
        "    > /app/templates/base.html\n"
        'CMD ["gunicorn", "-b", "0.0.0.0:3000", "app:app"]\n'
    )
    walk = discover(tmp_path)
    assert walk.files == (tmp_path / "Dockerfile",)
    assert walk.templates == ()
    templated = "FROM python:3.12-slim\nENV SETTINGS={{ project_name }}.settings\n"
    assert template_line(templated, dockerfile=True) == 2


def test_a_kubernetes_container_with_args_only_runs_its_image_s_entrypoint_with_them(
    tmp_path: Path,
) -> None:
    """A Deployment's container sets `args: [web]` and no `command`, on the image a compose
    file builds and tags: the kubelet runs the image's ENTRYPOINT with `web` in the CMD's
    place, so the entrypoint's `web)` arm starts gunicorn (the container had been read as
    starting no server, `web` taken for its program)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY entrypoint.sh /entrypoint.sh\n"
                "COPY gunicorn.conf.py /etc/gunicorn.conf.py\n"
                'ENTRYPOINT ["/entrypoint.sh"]\nCMD ["worker"]\n'
            ),
            "entrypoint.sh": (
                '#!/bin/sh\nset -e\ncase "$1" in\n  web)\n'
                "    exec gunicorn -c /etc/gunicorn.conf.py site.wsgi:application\n    ;;\n"
                "  worker)\n    exec celery -A site worker\n    ;;\nesac\n"
            ),
            "gunicorn.conf.py": 'bind = "0.0.0.0:8000"\nworkers = 3\n',
            "compose.yaml": "services:\n  web:\n    build: .\n    image: example/site:1.0\n",
            "k8s/deployment.yaml": (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: site\nspec:\n"
                "  selector:\n    matchLabels:\n      app: site\n  template:\n    metadata:\n"
                "      labels:\n        app: site\n    spec:\n      containers:\n"
                "        - name: web\n          image: example/site:1.0\n          args: [web]\n"
            ),
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0].startswith("k8s/")]
    assert found == [
        (
            ["k8s/deployment.yaml:15", "Dockerfile:4", "entrypoint.sh:5", "gunicorn.conf.py:1"],
            "gunicorn",
            3,
        )
    ]


def test_every_deployment_looking_file_is_read_or_named_with_its_reason(tmp_path: Path) -> None:
    """Issue 44 §1 (a repository root): an `.ini` with no [uwsgi] section (`mwdb.ini`), a config
    of the app in a config folder (`konf/site.yaml`), a YAML that sets a server (`pycsw.yml`,
    `server:`), another server's `.conf` (`zope.conf`) and a Python launcher named as an
    entrypoint that starts no server check reads are each named in the one coverage note,
    counted per reason; a Python entrypoint that starts gunicorn is read. The app's sources
    and data, other tools' configs, tests and a package's `run.py` module are not named."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /app\nCMD gunicorn -w 2 -b :8000 app:app\n",
            "mwdb.ini": "[mwdb]\npostgres_uri = postgresql://db/mwdb\nsecret_key = x\n",
            "konf/site.yaml": "site:\n  title: My site\n",
            "pycsw.yml": "server:\n  url: http://localhost:8000/csw\n  maxrecords: 10\n",
            "zope.conf": "%define INSTANCE /app\n<http-server>\n  address 8080\n</http-server>\n",
            "entrypoint.py": "import subprocess\nsubprocess.run(['alembic', 'upgrade'])\n",
            "web/start.py": "import os\nos.execvp('gunicorn', ['gunicorn', '-w', '3', 'a:b'])\n",
            "app/__init__.py": "",
            "app/run.py": "def main():\n    pass\n",
            "app/views.py": "def index():\n    return 'hi'\n",
            "app/data.yaml": "items: [1, 2]\n",
            "tox.ini": "[tox]\nenvlist = py312\n",
            "setup.cfg": "[metadata]\nname = app\n",
            "mkdocs.yml": "site_name: docs\n",
            "tests/settings.ini": "[app]\nport = 1\n",
        },
    )
    walk = discover(tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in walk.files} == {
        "Dockerfile",
        "web/start.py",
    }
    assert {p.relative_to(tmp_path).as_posix(): why for p, why in walk.reasons} == {
        "mwdb.ini": "configs of the app or of servers check does not read",
        "konf/site.yaml": "configs of the app or of servers check does not read",
        "pycsw.yml": "configs of the app or of servers check does not read",
        "zope.conf": "configs of the app or of servers check does not read",
        "entrypoint.py": "launcher scripts that start no server check reads",
    }
    (note,) = [n for n in check_folder(tmp_path).notes if n.kind == "not-read"]
    assert "configs of the app or of servers check does not read (4): " in note.message
    assert " and 1 more" in note.message
    assert "launcher scripts that start no server check reads (1): " in note.message
