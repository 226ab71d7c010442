"""Issue 44 (file kinds by name): files `servertune check` reads whatever a project names them,
told by name and content together, and the Procfile processes a Procfile runner starts."""

from __future__ import annotations

from pathlib import Path

from servertune.check.discover import discover
from tests.folder_support import chains, check_folder, write


def found(root: Path) -> set[str]:
    """The files a walk of `root` reads, relative to it."""
    return {p.relative_to(root).as_posix() for p in discover(root).files}


def test_dockerfiles_named_name_dot_docker_or_docker_dash_name_are_told_by_first_instruction(
    tmp_path: Path,
) -> None:
    """`api.docker` (alphagov/digitalmarketplace-docker-base) and `Docker-web` (kartoza/
    django-bims' `Docker-geonode`) are Dockerfiles when their first instruction is FROM or ARG,
    as a Dockerfile's must be: they are read and their CMD is a launch. A `notes.docker` of
    prose and a `docker-entrypoint` script (a shebang first) are not Dockerfiles."""
    write(
        tmp_path,
        {
            "api.docker": "# the API image\nFROM python:3.12\nCMD exec gunicorn -w 3 api:app\n",
            "deploy/Docker-web": "ARG PY=3.12\nFROM python:${PY}\nCMD exec gunicorn -w 2 web:app\n",
            "notes.docker": "how the images are built\n",
            "docker-entrypoint": "#!/bin/sh\nexec gunicorn -w 4 app:app\n",
        },
    )
    assert found(tmp_path) == {"api.docker", "deploy/Docker-web", "docker-entrypoint"}
    launched = {
        (chain[0], kind, workers)
        for chain, kind, workers in chains(check_folder(tmp_path), tmp_path)
    }
    assert ("api.docker:3", "gunicorn", 3) in launched
    assert ("deploy/Docker-web:3", "gunicorn", 2) in launched


def test_env_files_are_named_with_any_separator_and_told_by_their_key_value_lines(
    tmp_path: Path,
) -> None:
    """Env files are named `.env` with any separator after it (`.env_sample`, codalab/
    codabench; `.env_simple`, opendatacube/datacube-ows) and are read by name. A name with `env`
    as a word (`conf.d/env`, mediagis/nominatim-docker; `processor.env.default`, kevoreilly/
    CAPEv2, whose variables are all commented out) is an env file when every line is a comment,
    blank or KEY=value; one with other lines (notes) or another kind's suffix (`env.py`) is
    not."""
    write(
        tmp_path,
        {
            ".env_sample": "SECRET_KEY=change-me\n\n# debug\nDEBUG=True\n",
            ".env_simple": "# an example\nWEB_CONCURRENCY=2\n",
            "conf.d/env": "TOKENIZER=icu\nexport UPDATE_INTERVAL=86400\n",
            "conf/processor.env.default": "# override what you need\n#PROCESSOR_ID=auto\n",
            "docs-env/env": "Set TOKENIZER before the import.\nSee the README.\n",
            "settings/env.py": "DEBUG = True\n",
        },
    )
    assert found(tmp_path) == {
        ".env_sample",
        ".env_simple",
        "conf.d/env",
        "conf/processor.env.default",
    }


def test_a_go_template_in_a_quoted_value_is_data_not_a_template_marker(tmp_path: Path) -> None:
    """A compose file whose logging `tag: '{{.Name}}'` is docker's own Go template, and an env
    file whose quoted value holds `'{{ .CommonAnnotations.host }}'` (an Alertmanager template),
    are read, not skipped as templates (internetstandards/Internet.nl): a Go template's field
    or variable inside a quoted value is text another program fills. Helm's objects
    (`"{{ .Values.image }}"`), a Jinja expression in quotes (`"{{ image }}"`, an Ansible
    variable), an unquoted Go action and a Jinja statement still mark a template."""
    compose = (
        "services:\n  web:\n    image: acme/web\n"
        "    logging:\n      options:\n        tag: '{{.Name}}'\n"
        '    labels:\n      state: "{{index .Container.Labels \\"x\\"}}"\n'
        "    command: gunicorn -w 3 --bind 0.0.0.0:8000 app:app\n"
    )
    write(
        tmp_path,
        {
            "compose.yaml": compose,
            "defaults.env": "SUBJECT=Alert on '{{ .CommonAnnotations.host }}'\nWORKERS=2\n",
            "helm/compose.yaml": compose.replace("'{{.Name}}'", '"{{ .Values.tag }}"'),
            "ansible/compose.yaml": compose.replace("'{{.Name}}'", '"{{ log_tag }}"'),
            "plain/compose.yaml": compose.replace("'{{.Name}}'", "web-{{.Name}}"),
            "jinja/compose.yaml": "{% if tls %}\n" + compose + "{% endif %}\n",
        },
    )
    walk = discover(tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in walk.files} == {
        "compose.yaml",
        "defaults.env",
    }
    assert {(p.relative_to(tmp_path).as_posix(), line) for p, line in walk.templates} == {
        ("helm/compose.yaml", 6),
        ("ansible/compose.yaml", 6),
        ("plain/compose.yaml", 6),
        ("jinja/compose.yaml", 1),
    }
    ((chain, kind, workers),) = chains(check_folder(tmp_path), tmp_path)
    assert (chain[0], kind, workers) == ("compose.yaml:2", "gunicorn", 3)


def test_a_compose_limit_from_a_variable_no_file_here_sets_is_unknown_not_an_error(
    tmp_path: Path,
) -> None:
    """`mem_limit: $HIGH_MEMORY_LIMIT` and `cpus: $CPUS` that no file here sets (the deployment's
    `--env-file` fills them; internetstandards/Internet.nl) interpolate to blank: the limit is
    unknown, and the service's server is read (before, a blank byte value was an error)."""
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  web:\n    image: acme/web\n"
            "    mem_limit: $HIGH_MEMORY_LIMIT\n    cpus: $CPUS\n"
            "    command: gunicorn -w 3 --bind 0.0.0.0:8000 app:app\n",
        },
    )
    result = check_folder(tmp_path)
    ((chain, kind, workers),) = chains(result, tmp_path)
    assert (chain[0], kind, workers) == ("compose.yaml:2", "gunicorn", 3)
    (app,) = result.apps
    assert app.container is not None
    assert app.container.memory_limit_mb is None
    assert app.container.cpu_limit is None


def test_honcho_start_runs_every_procfile_process_each_on_its_own_port(tmp_path: Path) -> None:
    """`honcho start` (superdesk/superdesk: `CMD ["honcho", "start"]`) runs every process of the
    Procfile, not only the first, and gives each PORT 5000 + 100 x its place in the Procfile
    (honcho's `environ.expand_processes`; foreman's base port, blocks of 100 per process type):
    two gunicorns on :5000 and :5200 around a worker at 5100, the second behind the nginx
    upstream at :5200. `foreman start -p 7000 api web` numbers the processes in the Procfile's
    order from 7000 (foreman's `Engine#port_for`)."""
    write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY . /app\nWORKDIR /app\nCMD ["honcho", "start"]\n',
            "Procfile": "rest: gunicorn -w 2 --bind 0.0.0.0:$PORT rest:app\n"
            "work: python worker.py\n"
            "capi: gunicorn -w 3 --bind 0.0.0.0:$PORT capi:app\n",
            "nginx/nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n"
            "    location / { proxy_pass http://127.0.0.1:5200; }\n  }\n}\n",
            "foreman/Dockerfile": "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n"
            'CMD ["foreman", "start", "-p", "7000", "api", "web"]\n',
            "foreman/Procfile": "web: gunicorn -w 4 --bind 0.0.0.0:$PORT web:app\n"
            "api: gunicorn -w 5 --bind 0.0.0.0:$PORT api:app\n",
        },
    )
    result = check_folder(tmp_path)
    sockets = {
        (app.launched_by[-1].file.relative_to(tmp_path).as_posix(), app.launched_by[-1].line): [
            s.value for s in app.sockets
        ]
        for app in result.apps
    }
    assert sockets == {
        ("Procfile", 1): ["0.0.0.0:5000"],
        ("Procfile", 3): ["0.0.0.0:5200"],
        ("foreman/Procfile", 1): ["0.0.0.0:7000"],
        ("foreman/Procfile", 2): ["0.0.0.0:7100"],
    }
    fronted = {(k.app.launched_by[-1].file.name, k.app.launched_by[-1].line) for k in result.links}
    assert fronted == {("Procfile", 3)}


def test_a_procfile_process_running_the_images_command_is_a_launch_of_its_own(
    tmp_path: Path,
) -> None:
    """A Procfile `web:` that runs the same gunicorn command as the image's CMD (opensafely-
    core/job-server) is a launch of its own: a platform (Heroku, Dokku) runs the Procfile, the
    compose service runs the image; both are shown, each with its chain. The image's service is
    followed through its entrypoint's `exec "$@"` although another service's entrypoint starts
    no server itself (a dev target running `manage.py runserver` in the same compose file)."""
    image = (
        "FROM python:3.12 AS prod\nCOPY . /app\nWORKDIR /app\n"
        'ENTRYPOINT ["/app/entrypoints/prod.sh"]\n'
        'CMD ["gunicorn", "--config", "gunicorn.conf.py", "app.wsgi"]\n'
        'FROM prod AS dev\nENTRYPOINT ["/app/entrypoints/dev.sh"]\n'
    )
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn --config gunicorn.conf.py app.wsgi\n"
            "worker: python manage.py worker\n",
            "gunicorn.conf.py": 'workers = 9\nbind = "0.0.0.0:8000"\n',
            "Dockerfile": image,
            "entrypoints/prod.sh": '#!/bin/bash\nset -eu\n./manage.py migrate\nexec "$@"\n',
            "entrypoints/dev.sh": '#!/bin/bash\nset -eu\nexec "$@"\n',
            "compose.yaml": "services:\n"
            "  prod:\n    build:\n      context: .\n      target: prod\n"
            "  dev:\n    build:\n      context: .\n      target: dev\n"
            "    command: python manage.py runserver 0.0.0.0:8000\n",
        },
    )
    starts = sorted(chain[0] for chain, _, _ in chains(check_folder(tmp_path), tmp_path))
    assert starts == ["Procfile:1", "compose.yaml:2"]


def test_two_procfile_processes_on_one_config_are_two_launches(tmp_path: Path) -> None:
    """A script's `honcho start` (superdesk/superdesk's scripts/run.sh) runs the Procfile's
    `rest:` and `capi:`, two gunicorns with the same gunicorn_config.py: two processes (their
    launches go through other lines of the Procfile), not one server read twice."""
    write(
        tmp_path,
        {
            "run.sh": "#!/bin/bash\nset -e\npip install -r requirements.txt\nhoncho start\n",
            "Procfile": "rest: gunicorn -c gunicorn_config.py rest:app\n"
            "work: celery -A worker worker\n"
            "capi: gunicorn -c gunicorn_config.py capi:app\n",
            "gunicorn_config.py": 'import os\nbind = "0.0.0.0:%s" % os.environ.get("PORT", "5000")\n'
            "workers = 3\n",
        },
    )
    found_chains = sorted(chain[:2] for chain, _, _ in chains(check_folder(tmp_path), tmp_path))
    assert found_chains == [
        ["run.sh:4", "Procfile:1"],
        ["run.sh:4", "Procfile:3"],
    ]


def test_a_script_named_like_a_dockerfile_or_caddyfile_is_a_script(tmp_path: Path) -> None:
    """A `.sh` file or one whose first line is `#!` is a shell script whatever its name:
    `dockerfile_exec_gunicorn.sh` (seen in GovReady/govready-q, where it was parsed as a
    Dockerfile and refused, exit 2), a `Dockerfile-entry` with a shebang, and a `Caddyfile.sh`
    are read as scripts, with no file error, and the gunicorn the first one starts is a launch."""
    write(
        tmp_path,
        {
            "deploy/dockerfile_exec_gunicorn.sh": (
                "#!/bin/bash\nset -euf\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n"
            ),
            "deploy/Dockerfile-entry": "#!/bin/sh\nset -e\nexec gunicorn -w 2 app:app\n",
            "Caddyfile.sh": "set -e\ncaddy run\n",
        },
    )
    result = check_folder(tmp_path)
    assert result.errors == ()
    launched = {(chain[0], kind, workers) for chain, kind, workers in chains(result, tmp_path)}
    assert ("deploy/dockerfile_exec_gunicorn.sh:3", "gunicorn", 3) in launched
    assert ("deploy/Dockerfile-entry:3", "gunicorn", 2) in launched
