"""`check` on real repositories (issue 29): read what is there without running it, tell files by
content, follow the command lines real projects write, and keep going past one bad file.

Every fixture here is written for the test and reproduces one pattern seen in a public
project's deployment files (named in each test's docstring); none is a copy of one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.model import AppServer
from servertune.sizing import Machine

MACHINE = Machine(cores=4, cores_source="--cores")


def run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m servertune check ARGV...` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", "check", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def only_app(paths: list[Path], machine: Machine = MACHINE) -> AppServer:
    result = check_files(paths, machine=machine, env={})
    assert result.errors == ()
    assert len(result.apps) == 1, result
    return result.apps[0]


# -- 29.1: a gunicorn config is read, never run ------------------------------------------------


def side_effect_config(tmp_path: Path) -> tuple[Path, Path]:
    """A config whose top level writes a file (and runs a shell command doing the same)."""
    marker = tmp_path / "PWNED"
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(
        "import os\n"
        f"os.system('touch {marker}-system')\n"
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "workers = 3\n"
        'bind = "0.0.0.0:8000"\n'
    )
    return config, marker


def test_a_config_with_a_side_effect_is_read_without_it(tmp_path: Path) -> None:
    """The issue's PWNED config: its settings are read, its `os.system` and `open` never run."""
    config, marker = side_effect_config(tmp_path)
    result = run(config, "--cores", "4", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert not marker.exists()
    assert not Path(f"{marker}-system").exists()
    assert only_app([config]).workers.value == 3


def test_no_check_path_runs_a_config_without_the_flag(tmp_path: Path) -> None:
    """Reached through every reader that names a gunicorn config (a Procfile's `-c`, a
    script's, a Dockerfile's CMD, a compose command, a supervisord program), the config is read
    and never run; `--execute-gunicorn-config` runs it, and says so."""
    config, marker = side_effect_config(tmp_path)
    (tmp_path / "Procfile").write_text("web: gunicorn -c gunicorn.conf.py app:app\n")
    (tmp_path / "start.sh").write_text("#!/bin/sh\nexec gunicorn -c gunicorn.conf.py app:app\n")
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n"
        'CMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n'
    )
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    build: .\n    command: gunicorn -c gunicorn.conf.py app:app\n"
    )
    (tmp_path / "web.conf").write_text(
        "[program:web]\ncommand=gunicorn -c gunicorn.conf.py app:app\n"
    )
    for name in ("Procfile", "start.sh", "Dockerfile", "compose.yaml", "web.conf"):
        result = run(tmp_path / name, "--cores", "4", "--format", "json", cwd=tmp_path)
        assert result.returncode in (0, 1), (name, result.stderr)
        assert not marker.exists(), name
        assert json.loads(result.stdout)["files"], name
    executed = run(config, "--cores", "4", "--execute-gunicorn-config", cwd=tmp_path)
    assert executed.returncode in (0, 1), executed.stderr
    assert marker.exists()
    assert "[executed]" in executed.stdout


def test_static_read_knows_environment_arithmetic_and_cpu_count(tmp_path: Path) -> None:
    """What real configs compute (tiangolo's, InvenTree's, Heroku's): os.getenv with defaults,
    int(), arithmetic, cpu_count() as the cores being judged, f-strings; a django-environ or
    project import is an unresolved-variable note, with gunicorn's default kept."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(
        "import multiprocessing\nimport os\nfrom myproject.settings import env\n"
        "cores = multiprocessing.cpu_count()\n"
        'workers = int(os.getenv("WEB_CONCURRENCY", cores * 2 + 1))\n'
        'port = os.environ.get("PORT", "8000")\n'
        'bind = f"0.0.0.0:{port}"\n'
        'timeout = env.int("TIMEOUT", 60)\n'
        "threads = 2 if workers > 4 else 1\n"
    )
    result = check_files([config], machine=MACHINE, env={})
    (app,) = result.apps
    assert app.workers.value == 9
    assert app.workers.at.line == 5
    assert app.workers_follow_cpu_count
    assert app.threads.value == 2
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    # Unknown: gunicorn's default, placed at the line that sets it.
    assert app.request_timeout is not None
    assert app.request_timeout.value == 30
    assert app.request_timeout.at.line == 8
    notes = [(n.kind, n.at.line) for n in result.notes]
    assert ("unresolved-variable", 8) in notes
    assert result.cores == (4, "--cores")


def test_django_environ_reads_with_a_keyword_default_are_the_environments(
    tmp_path: Path,
) -> None:
    """`env("BIND", default="127.0.0.1")`, `env.int("WORKERS", default=cpu_count() * 2 + 1)`
    (django-environ's `env`, its documented keyword default): the environment's value cast
    as the call says, else the default; a positional default stays unresolved (see above)."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(
        "import multiprocessing\nfrom config.env import env\n"
        'BIND_ADDRESS = env("DJANGO_BIND_ADDRESS", default="127.0.0.1")\n'
        'PORT = env("DJANGO_PORT", default=8080)\n'
        'bind = f"{BIND_ADDRESS}:{PORT}"\n'
        'workers = env.int("DJANGO_WORKERS", default=multiprocessing.cpu_count() * 2 + 1)\n'
        'timeout = env.int("GUNICORN_TIMEOUT", default=120)\n'
    )
    result = check_files([config], machine=MACHINE, env={"DJANGO_BIND_ADDRESS": "0.0.0.0"})
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
    assert (app.workers.value, app.workers.at.line) == (9, 6)
    assert app.request_timeout is not None
    assert app.request_timeout.value == 120
    assert not [n for n in result.notes if n.kind == "unresolved-variable"]


def test_cpu_count_is_evaluated_for_the_cores_named_not_the_runner(tmp_path: Path) -> None:
    """Issue 36.3: `cpu_count() * 2 + 1` with --cores 4 is 9 on any machine running check; with
    no --cores, the compose file's CPU limit decides, and the summary says so."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text("import multiprocessing\nworkers = multiprocessing.cpu_count() * 2 + 1\n")
    for cores in (1, 4, 64):
        machine = Machine(cores=cores, cores_source="--cores")
        assert only_app([config], machine).workers.value == cores * 2 + 1
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    build: .\n    cpus: 2\n"
        "    command: gunicorn -c gunicorn.conf.py app:app\n"
    )
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nCOPY . /app\nWORKDIR /app\n")
    host = Machine(cores=64, cores_source="cgroup")
    result = check_files([tmp_path / "compose.yaml"], machine=host, env={})
    assert result.errors == ()
    assert result.apps[0].workers.value == 5
    assert result.cores is not None
    assert result.cores[0] == 2
    assert "CPU limit" in result.cores[1]


def test_a_declared_limit_of_the_cores_already_evaluated_reads_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: the files are read again for a declared CPU limit only when it is another
    count than the one they were read for (the same count reads the same); the summary names
    the limit either way."""
    from servertune.check import audit

    (tmp_path / "gunicorn.conf.py").write_text(
        "import multiprocessing\nworkers = multiprocessing.cpu_count() * 2 + 1\n"
    )
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    build: .\n    cpus: 2\n"
        "    command: gunicorn -c gunicorn.conf.py app:app\n"
    )
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nCOPY . /app\nWORKDIR /app\n")
    read_all = audit._read_all
    reads: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        reads.append(1)
        return read_all(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "_read_all", counted)
    for host, times in ((2, 1), (64, 2)):
        reads.clear()
        machine = Machine(cores=host, cores_source="cgroup")
        result = check_files([tmp_path / "compose.yaml"], machine=machine, env={})
        assert (len(reads), result.apps[0].workers.value) == (times, 5)
        assert result.cores is not None
        assert (result.cores[0], "CPU limit" in result.cores[1]) == (2, True)


def test_a_utf8_bom_is_read_and_utf16_is_named(tmp_path: Path) -> None:
    """Windows editors' files: a UTF-8 BOM is read past (Python does); UTF-16 is one line
    saying what it is, not "binary"."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_bytes(b"\xef\xbb\xbfworkers = 2\n")
    assert only_app([config]).workers.value == 2
    wide = tmp_path / "nginx.conf"
    wide.write_bytes("events {}\n".encode("utf-16"))
    result = run(wide)
    assert result.returncode == 2
    assert "UTF-16" in result.stderr
    assert "binary" not in result.stderr


def test_gunicorn_conf_without_py_is_read_as_gunicorn(tmp_path: Path) -> None:
    """`gunicorn.conf` (no .py, as some projects name it) is a gunicorn config, not nginx."""
    config = tmp_path / "gunicorn.conf"
    config.write_text('bind = "0.0.0.0:8000"\nworkers = 2\ntimeout = 60\n')
    assert only_app([config]).workers.value == 2


# -- 29.2: kind by content ----------------------------------------------------------------------


def test_supervisord_programs_are_command_lines(tmp_path: Path) -> None:
    """mediacms / pretix / hypothesis: `[program:x] command=gunicorn ...` is read as the
    command line it is, `environment=` its variables; nginx and celery programs start none."""
    conf = tmp_path / "supervisord.conf"
    conf.write_text(
        "[supervisord]\nnodaemon=true\n\n[program:web]\n"
        'environment=WEB_CONCURRENCY="3"\n'
        "command=/usr/local/bin/gunicorn --bind unix:/tmp/app.sock\n"
        "  --timeout 90 app.wsgi\n"
        "autorestart=true\n\n[program:nginx]\ncommand=/usr/sbin/nginx -g 'daemon off;'\n"
    )
    app = only_app([conf])
    assert (app.kind, app.workers.value, app.request_timeout) == (
        "gunicorn",
        3,
        app.request_timeout,
    )
    assert app.request_timeout is not None
    assert app.request_timeout.value == 90
    only_nginx = tmp_path / "nginx-program.conf"
    only_nginx.write_text("[program:nginx]\ncommand=nginx -g 'daemon off;'\n")
    result = check_files([only_nginx], machine=MACHINE, env={})
    assert result.errors == ()
    assert [n.kind for n in result.notes] == ["starts-no-server"]


def test_nginx_unit_and_kustomize_patches_are_one_note(tmp_path: Path) -> None:
    """An NGINX Unit json with no Python application (PostHog's shape): one "starts no
    server" note; a kustomize JSON patch in a `nginx/` directory is not parsed as nginx (one
    "not supported" note). Neither changes the exit status."""
    unit = tmp_path / "unit.json"
    unit.write_text('{"listeners": {"*:8000": {"pass": "applications/web"}}, "applications": {}}')
    patch_dir = tmp_path / "nginx"
    patch_dir.mkdir()
    patch = patch_dir / "patch.yaml"
    patch.write_text("- op: replace\n  path: /spec/replicas\n  value: 3\n")
    result = run(unit, patch, "--format", "json")
    assert result.returncode == 0, result.stderr
    coverage = json.loads(result.stdout)["coverage"]
    assert [c["kind"] for c in coverage] == ["not-supported", "starts-no-server"]
    assert "NGINX Unit" in coverage[1]["message"] + coverage[0]["message"]


# -- 29.3: command lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "server", "workers"),
    [
        ("python -m gunicorn.app.wsgiapp -w 3 app:app", "gunicorn", 3),
        ("bin/start-nginx gunicorn -w 2 -b unix:/tmp/nginx.socket app:app", "gunicorn", 2),
        ("s6-setuidgid app granian --interface asgi --workers 2 app:app", "granian", 2),
        ("exec chpst -u app uvicorn --workers 2 app:app", "uvicorn", 2),
    ],
)
def test_wrappers_and_entry_modules(tmp_path: Path, line: str, server: str, workers: int) -> None:
    """Heroku's nginx buildpack, s6-overlay, runit, gunicorn's own entry module."""
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\n{line}\n")
    app = only_app([script])
    assert (app.kind, app.workers.value) == (server, workers)


def test_the_same_server_in_both_branches_is_one(tmp_path: Path) -> None:
    """paperless-ngx's run script: `if root; exec granian ...; else exec s6-setuidgid user
    granian ...` is one server, with `${A:-${B:-8000}}` defaults expanded."""
    script = tmp_path / "run"
    script.write_text(
        "#!/command/with-contenv /usr/bin/bash\n"
        "export GRANIAN_PORT=${GRANIAN_PORT:-${APP_PORT:-8000}}\n"
        "export GRANIAN_WORKERS=${GRANIAN_WORKERS:-${APP_WORKERS:-2}}\n"
        'if [[ -n "${NON_ROOT}" ]]; then\n'
        '  exec granian --interface asgi "app.asgi:application"\n'
        "else\n"
        '  exec s6-setuidgid app granian --interface asgi "app.asgi:application"\n'
        "fi\n"
    )
    result = check_files([script], machine=MACHINE, env={})
    assert result.errors == ()
    (app,) = result.apps
    assert (app.kind, app.workers.value) == ("granian", 2)
    assert next(s.value for s in app.sockets).endswith(":8000")
    assert result.notes == ()


def test_different_servers_in_branches_read_the_last_with_a_note(tmp_path: Path) -> None:
    """A dev branch with uvicorn and a production one with gunicorn: the last is read, the
    other named in a coverage note (not an error)."""
    script = tmp_path / "start.sh"
    script.write_text(
        '#!/bin/sh\nif [ "$DEV" = 1 ]; then\n  exec uvicorn --reload app:app\nelse\n'
        "  exec gunicorn -w 4 app:app\nfi\n"
    )
    result = check_files([script], machine=MACHINE, env={})
    assert [a.kind for a in result.apps] == ["gunicorn"]
    assert [n.kind for n in result.notes] == ["server-chosen"]


def test_a_quoted_string_over_several_lines(tmp_path: Path) -> None:
    """mealie's entry script: `echo "` ... `"` over lines is one command, not a split error."""
    script = tmp_path / "entry.sh"
    script.write_text('#!/bin/bash\necho "\n  User uid: $PUID\n  "\nexec gunicorn -w 2 app:app\n')
    assert only_app([script]).workers.value == 2


# -- 29.4: uWSGI --------------------------------------------------------------------------------


def test_uwsgi_placeholder_math_and_unset_variables(tmp_path: Path) -> None:
    """`processes = %(%k * 2)` is evaluated for the cores judged (and flagged as following the
    CPU count); an unset `$(UWSGI_WORKERS)` is an unresolved-variable note with the default."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\nprocesses = %(%k * 2)\n"
    )
    app = only_app([ini])
    assert app.workers.value == 8
    assert app.workers_follow_cpu_count
    unset = tmp_path / "env.ini"
    unset.write_text("[uwsgi]\nmodule = app:application\nprocesses = $(UWSGI_WORKERS)\n")
    result = check_files([unset], machine=MACHINE, env={})
    assert result.errors == ()
    assert result.apps[0].workers.default
    assert [(n.kind, n.at.line) for n in result.notes] == [("unresolved-variable", 3)]


# -- 29.5 / 36.1: every file reported, coverage apart ------------------------------------------


def test_one_bad_file_does_not_hide_the_others(tmp_path: Path) -> None:
    """A broken file is one `error:` line with its line number, exit 2, and the other files'
    findings are still printed."""
    bad = tmp_path / "bad.conf.py"
    bad.write_text("workers = 2\ntimeout = (\n")
    good = tmp_path / "gunicorn.conf.py"
    good.write_text('workers = 4\nworker_class = "gthread"\nthreads = 1\n')
    result = run(bad, good, "--cores", "2")
    assert result.returncode == 2
    assert "gthread-one-thread" in result.stdout
    errors = result.stderr.splitlines()
    assert len(errors) == 1
    assert errors[0].startswith(f"error: {bad}:2: Python syntax error")


def test_compose_without_its_env_file_and_files_that_start_no_server(tmp_path: Path) -> None:
    """A compose file whose `env_file: .env` is gitignored is read with a note; a compose file
    of postgres and redis, a builder Dockerfile: exit 0 with a note, never exit 2."""
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        "services:\n  web:\n    image: app\n    env_file: .env\n"
        "    command: gunicorn -w 2 --timeout 30 app:app\n"
    )
    data = tmp_path / "compose.db.yaml"
    data.write_text("services:\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n")
    builder = tmp_path / "Dockerfile"
    builder.write_text("FROM node:20 AS assets\nRUN npm ci\n")
    result = run(compose, data, builder, "--cores", "4", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    kinds = sorted(c["kind"] for c in document["coverage"])
    assert kinds == ["env-file-not-found", "starts-no-server", "starts-no-server"]
    assert document["errors"] == []
    alone = run(data, builder)
    assert alone.returncode == 0
    assert "no server to check in 2 files" in alone.stdout


def test_coverage_never_changes_the_exit_and_is_apart_in_every_format(tmp_path: Path) -> None:
    """include-not-found (the stock mime.types, once however many times included) and
    unresolved-variable are notes: exit 0 even with --fail-on info; SARIF carries them as
    notifications, not results."""
    site = tmp_path / "sites-available"
    site.mkdir()
    conf = site / "app"
    conf.write_text(
        "server {\n  listen 80;\n  include snippets/common.conf;\n"
        "  location / { include proxy_params; proxy_pass http://127.0.0.1:8000; }\n"
        "  location /api { include proxy_params; proxy_pass http://127.0.0.1:8000; }\n}\n"
    )
    text = run(conf, "--fail-on", "info")
    assert text.returncode == 0, text.stdout + text.stderr
    assert "[include-not-found]" in text.stdout
    assert "(and 1 more lines)" in text.stdout
    sarif = json.loads(run(conf, "--format", "sarif").stdout)["runs"][0]
    assert sarif["results"] == []
    notified = sarif["invocations"][0]["toolExecutionNotifications"]
    assert {n["descriptor"]["id"] for n in notified} == {"include-not-found"}
    # nginx resolves `snippets/common.conf` against its prefix (the directory above
    # sites-available), as nginx does, not against the site file's own directory.
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "common.conf").write_text("keepalive_timeout 5s;\n")
    (tmp_path / "proxy_params").write_text("proxy_set_header Host $host;\n")
    resolved = json.loads(run(conf, "--format", "json").stdout)
    assert resolved["coverage"] == []


def test_fastapi_run_is_uvicorn_with_its_production_defaults(tmp_path: Path) -> None:
    """FastAPI's own template: `fastapi run --workers 4 app/main.py` is uvicorn on 0.0.0.0:8000
    with 4 workers (fastapi-cli's `run` defaults), from a script and from a Dockerfile CMD."""
    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\nexec fastapi run --workers 4 app/main.py\n")
    app = only_app([script])
    assert (app.kind, app.workers.value) == ("uvicorn", 4)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.12\nCMD ["fastapi", "run", "app/main.py", "--port", "80", "--workers", "2"]\n'
    )
    app = only_app([dockerfile])
    assert (app.kind, app.workers.value) == ("uvicorn", 2)
    assert [s.value for s in app.sockets] == ["0.0.0.0:80"]


def test_an_image_running_supervisord_reads_its_programs(tmp_path: Path) -> None:
    """hypothesis/h: `CMD ["init-env", "supervisord", "-c", "conf/supervisord.conf"]` after
    `COPY . .`: the programs' gunicorn and its `--config` are found through the image's files,
    and a setting from an unset variable is noted at the config's own line, not a temp copy."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "supervisord.conf").write_text(
        "[supervisord]\nnodaemon=true\n\n[program:web]\n"
        "command=gunicorn --paste conf/app.ini --config conf/gunicorn.conf.py\n"
    )
    (tmp_path / "conf" / "gunicorn.conf.py").write_text(
        'from os import environ\nbind = "unix:/tmp/web.sock"\nworkers = environ["WEB_WORKERS"]\n'
        "timeout = 120\n"
    )
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
        'CMD ["init-env", "supervisord", "-c", "conf/supervisord.conf"]\n'
    )
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert result.errors == ()
    (app,) = result.apps
    assert app.request_timeout is not None
    assert app.request_timeout.value == 120
    assert [(n.kind, n.at.file.name, n.at.line) for n in result.notes] == [
        ("unresolved-variable", "gunicorn.conf.py", 3)
    ]


def test_a_default_of_several_words_is_split_as_the_shell_splits_it(tmp_path: Path) -> None:
    """openlibrary: `${GUNICORN_OPTS:- --workers 4 --timeout 180}` unquoted is four words."""
    script = tmp_path / "start.sh"
    script.write_text(
        "#!/bin/bash\nexec gunicorn -k gthread ${GUNICORN_OPTS:- --workers 4 --timeout 180} "
        "--bind :8080 app:app\n"
    )
    app = only_app([script])
    assert app.workers.value == 4
    assert app.request_timeout is not None
    assert app.request_timeout.value == 180


def test_dockerfile_errors_name_their_line_and_a_builder_is_said_plainly(tmp_path: Path) -> None:
    """An unterminated heredoc names the line that opens it; an image with no CMD is "sets no
    CMD or ENTRYPOINT", not "runs 'nothing'"."""
    broken = tmp_path / "Dockerfile"
    broken.write_text("FROM python:3.12\nRUN <<EOF\necho hi\n")
    result = run(broken)
    assert result.returncode == 2
    assert f"{broken}:2: Dockerfile syntax error" in result.stderr
    builder = tmp_path / "builder.Dockerfile"
    builder.write_text("FROM python:3.12 AS build\nRUN pip wheel -w /wheels .\n")
    (note,) = check_files([builder], machine=MACHINE, env={}).notes
    assert "sets no CMD or ENTRYPOINT" in note.message
    assert "'nothing'" not in note.message


def test_one_core_is_one_core(tmp_path: Path) -> None:
    """ "a CPU limit of 1 core", never "1 cores"."""
    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n  web:\n    image: app\n    cpus: 1\n    command: gunicorn -w 5 app:app\n"
    )
    (finding,) = [
        f
        for f in check_files([compose], machine=MACHINE, env={}).findings
        if f.rule == "workers-over-cpu-limit"
    ]
    assert "1 core " in finding.message
    assert "1 cores" not in finding.message


def test_many_aliases_of_shared_defaults_are_read(tmp_path: Path) -> None:
    """getsentry/self-hosted shares `x-defaults: &defaults` among dozens of services (over 100
    aliases): read. What is bounded is the expanded size (a billion-laughs bomb is still
    refused: tests/test_check_hostile.py)."""
    services = "".join(
        f"  worker{i}:\n    <<: *defaults\n    command: run-worker {i}\n    environment: *env\n"
        for i in range(80)
    )
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        "x-env: &env\n  A: '1'\nx-defaults: &defaults\n  image: app\n  restart: always\n"
        "services:\n  web:\n    <<: *defaults\n    command: gunicorn -w 2 app:app\n" + services
    )
    result = check_files([compose], machine=MACHINE, env={})
    assert result.errors == ()
    assert [a.kind for a in result.apps] == ["gunicorn"]


def test_an_image_runs_its_script_through_a_process_wrapper(tmp_path: Path) -> None:
    """Tandoor: `ENTRYPOINT ["/sbin/tini", "--", "/opt/recipes/boot.sh"]` after `COPY . ./`:
    the script tini runs is read, and its gunicorn found."""
    (tmp_path / "boot.sh").write_text("#!/bin/sh\nexec gunicorn --workers 3 app.wsgi\n")
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12\nWORKDIR /opt/recipes\nCOPY . ./\n"
        'ENTRYPOINT ["/sbin/tini", "--", "/opt/recipes/boot.sh"]\n'
    )
    app = only_app([dockerfile])
    assert (app.kind, app.workers.value) == ("gunicorn", 3)


def test_one_setting_inherited_by_many_locations_is_one_finding(tmp_path: Path) -> None:
    """hypothesis/h: an http-level `proxy_read_timeout 10s` inherited by five locations that
    pass to one gunicorn is one line to change: one finding, not five."""
    nginx = tmp_path / "nginx.conf"
    locations = "".join(f"    location /{name} {{ proxy_pass http://web; }}\n" for name in "abcde")
    nginx.write_text(
        "events {}\nhttp {\n  proxy_read_timeout 10s;\n"
        "  upstream web { server unix:/tmp/web.sock; }\n"
        "  server {\n    listen 80;\n" + locations + "  }\n}\n"
    )
    config = tmp_path / "gunicorn.conf.py"
    config.write_text('bind = "unix:/tmp/web.sock"\nworkers = 2\ntimeout = 30\n')
    result = check_files([nginx, config], machine=MACHINE, env={})
    assert [f.rule for f in result.findings] == ["app-timeout-over-read-timeout"]


def test_a_manifest_running_fastapi_run_is_uvicorn(tmp_path: Path) -> None:
    """FastAPI's Kubernetes guidance: `command: ["fastapi", "run", "app/main.py", "--port",
    "80"]` is uvicorn on port 80 (and `python -m gunicorn.app.wsgiapp` is gunicorn)."""
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: api\n          image: api\n"
        '          command: ["fastapi", "run", "app/main.py", "--port", "80", "--workers", "2"]\n'
        "        - name: legacy\n          image: api\n"
        '          command: ["python", "-m", "gunicorn.app.wsgiapp", "-w", "3", "app:app"]\n'
    )
    result = check_files([manifest], machine=MACHINE, env={})
    assert result.errors == ()
    assert sorted((a.kind, a.workers.value) for a in result.apps) == [
        ("gunicorn", 3),
        ("uvicorn", 2),
    ]


def test_an_exec_entrypoint_beside_its_dockerfile(tmp_path: Path) -> None:
    """The common `entrypoint.sh` ending in `exec "$@"`, given beside the Dockerfile whose CMD
    it runs: the server is read through the Dockerfile (its CMD as the script's "$@"), the
    script a link of that launch, not an error, and not said to start no server."""
    (tmp_path / "entrypoint.sh").write_text(
        '#!/bin/sh\nset -e\npython manage.py migrate\nexec "$@"\n'
    )
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\n"
        'ENTRYPOINT ["/entrypoint.sh"]\nCMD ["gunicorn", "-w", "2", "app.wsgi"]\n'
    )
    result = check_files([dockerfile, tmp_path / "entrypoint.sh"], machine=MACHINE, env={})
    assert result.errors == ()
    assert [(a.kind, a.workers.value) for a in result.apps] == [("gunicorn", 2)]
    assert tmp_path / "entrypoint.sh" in [at.file for at in result.apps[0].launched_by]
    assert not [n for n in result.notes if n.kind == "starts-no-server"]


def test_nautobot_server_start_is_uwsgi(tmp_path: Path) -> None:
    """nautobot's image: `nautobot-server start --ini uwsgi.ini` runs uWSGI embedded with those
    arguments, so the ini beside it is read as uWSGI's."""
    (tmp_path / "uwsgi.ini").write_text(
        "[uwsgi]\nhttp = 0.0.0.0:8080\nprocesses = 3\nthreads = 2\nthunder-lock = true\n"
    )
    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\nexec nautobot-server start --ini uwsgi.ini\n")
    app = only_app([script])
    assert (app.kind, app.workers.value, app.threads.value) == ("uwsgi", 3, 2)


def test_a_word_on_a_continued_line_is_placed_on_its_own_line(tmp_path: Path) -> None:
    """Issue 36.1: a shell-form CMD over continued lines: `--http-to $UPSTREAM` on line 6 is
    noted at line 6, not at the instruction's first line, and the continued lines are one
    command."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12\nENV A=1\nCMD uwsgi \\\n    --master \\\n    --processes 2 \\\n"
        "    --http-to $UPSTREAM \\\n    --module app\n"
    )
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert result.errors == ()
    assert [a.workers.value for a in result.apps] == [2]
    assert [(n.kind, n.at.line) for n in result.notes] == [("unresolved-variable", 6)]


def test_an_entrypoint_script_that_is_not_here_is_not_a_variable(tmp_path: Path) -> None:
    """Issue 36.1: `ENTRYPOINT ["/docker-entrypoint.sh"]` not in the context is a
    config-not-found note naming the script, not an unresolved variable."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.12\nENTRYPOINT ["/docker-entrypoint.sh"]\n'
        'CMD ["gunicorn", "-w", "2", "app.wsgi"]\n'
    )
    result = check_files([dockerfile], machine=MACHINE, env={})
    assert [(n.kind, n.at.line) for n in result.notes] == [("config-not-found", 2)]
    assert "ENTRYPOINT /docker-entrypoint.sh" in result.notes[0].message


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("workers = " + "(" * 5000 + "1" + ")" * 5000 + "\n", ("gunicorn.conf.py",)),
        ("workers = 1" + " + 1" * 30000 + "\n", ("gunicorn.conf.py",)),
        ('bind = f"{1:>999999999}"\nworkers = 2\n', ()),
        ("workers = round(5, -10**9)\n", ()),
        ("workers = 2 ** 10 ** 10\n", ()),
        ('bind = "x" * 10**9\nworkers = 2\n', ()),
    ],
    ids=["deep-parens", "long-sum", "huge-width", "huge-round", "huge-power", "huge-repeat"],
)
def test_hostile_python_is_read_without_hanging(
    tmp_path: Path, body: str, words: tuple[str, ...]
) -> None:
    """A config built to make the static reader hang, eat memory or crash: one `error:` line
    (exit 2) or an unresolved value (exit 0/1), never a traceback, never a long run."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(body)
    result = run(config, "--cores", "2")
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1, 2), result.stderr
    if result.returncode == 2:
        assert result.stderr.startswith("error: ")
        assert result.stderr.count("\n") == 1
        for word in words:
            assert word in result.stderr


def test_nginx_with_a_bom_is_refused_as_nginx_would(tmp_path: Path) -> None:
    """nginx takes a UTF-8 BOM as part of its first directive: refused with line 1, not passed."""
    conf = tmp_path / "nginx.conf"
    conf.write_bytes(b"\xef\xbb\xbfevents {}\nhttp { server { listen 8080; } }\n")
    result = run(conf)
    assert result.returncode == 2
    assert f"{conf}:1: starts with a UTF-8 byte-order mark" in result.stderr


def test_a_cmd_written_before_the_entrypoint_of_its_stage_is_kept(tmp_path: Path) -> None:
    """`CMD ["--workers", "3"]` then `ENTRYPOINT ["./start.sh"]` in the same stage: only a
    base image's CMD is reset by an ENTRYPOINT (BuildKit keeps one set in the stage), so the
    script runs with those arguments; a CMD of the stage it builds FROM is reset."""
    (tmp_path / "start.sh").write_text('#!/bin/sh\nexec gunicorn shop.wsgi "$@"\n')
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.12 AS base\nWORKDIR /app\nCOPY start.sh .\n"
        'CMD ["--workers", "3"]\nENTRYPOINT ["./start.sh"]\n'
    )
    result = check_files([dockerfile], machine=MACHINE, env={}, root=tmp_path)
    assert [a.workers.value for a in result.apps] == [3]
    dockerfile.write_text(
        "FROM python:3.12 AS base\nWORKDIR /app\nCOPY start.sh .\n"
        'CMD ["--workers", "3"]\nFROM base\nENTRYPOINT ["./start.sh"]\n'
    )
    result = check_files([dockerfile], machine=MACHINE, env={}, root=tmp_path)
    assert [a.workers.value for a in result.apps] == [1]


def test_a_django_environ_reader_made_here_gives_its_positional_default(tmp_path: Path) -> None:
    """`env = environ.Env()` then `env.int("PORT", 8000)`, or `environ.Env().int(...)` called
    at once: django-environ's `Env.int(var, default)`, so with PORT set nowhere here the
    default 8000 is the bind's port, as `os.getenv("X", d)` gives d (seen in
    quipucords/quipucords's deploy/gunicorn_conf.py, whose nginx then joins on 8000)."""
    config = tmp_path / "gunicorn.conf.py"
    for reader in ("env = environ.Env()\nPORT = env.int(", "PORT = environ.Env().int("):
        config.write_text(
            f'import environ\n{reader}"QUIPU_PORT", 8000)\nbind = f"0.0.0.0:{{PORT}}"\n'
            'workers = environ.Env().int("WORKERS", 3)\n'
        )
        (app,) = check_files([config], machine=MACHINE, env={}).apps
        assert [s.value for s in app.sockets] == ["0.0.0.0:8000"], reader
        assert app.workers.value == 3
