"""Application platforms' files (fly.toml, render.yaml, app.json / heroku.yml, a Cloud Foundry
manifest) are read, not skipped: each starts its server (a command, the repository's Dockerfile,
the Procfile's `web`) in a container of its platform, whose stop grace, stop signal, CPU and
instances the rules judge, with the platform's documented defaults and its own words in fixes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.model import AppServer
from servertune.machine import Machine
from tests.folder_support import write

#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

IMAGE = 'FROM python:3.12\nWORKDIR /app\nCOPY . /app\nCMD ["gunicorn", "shop.wsgi"]\n'


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk])


def on_platform(result: CheckResult, platform: str) -> AppServer:
    """The one app server the files start on `platform`."""
    (app,) = [a for a in result.apps if a.container and a.container.platform == platform]
    return app


def findings(result: CheckResult) -> set[tuple[str, str, int]]:
    return {(f.rule, f.at.file.name, f.at.line) for f in result.findings}


def test_fly_process_runs_in_the_image_with_fly_defaults_and_vm(tmp_path: Path) -> None:
    """A fly.toml `[processes]` command is the image's CMD, under `[env]`; the machine is the
    first `[[vm]]`'s cpus; unset `kill_signal` is Fly's SIGINT (gunicorn's quick shutdown)
    and unset `kill_timeout` Fly's 5 s, each fixed in fly.toml's words."""
    write(
        tmp_path,
        {
            "fly.toml": 'app = "shop"\n\n[build]\n  dockerfile = "Dockerfile"\n\n[env]\n'
            '  WEB_CONCURRENCY = "9"\n\n[processes]\n'
            '  app = "gunicorn --bind 0.0.0.0:8080 --graceful-timeout 20 shop.wsgi"\n\n'
            "[[vm]]\n  cpus = 1\n",
            "Dockerfile": IMAGE,
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "fly")
    box = app.container
    assert box is not None
    assert (box.name, box.at.line) == ("shop app", 10)
    assert (app.workers.value, app.workers.at.line) == (9, 7)  # WEB_CONCURRENCY of [env]
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
    assert box.cpu_limit is not None
    assert (box.cpu_limit.value, box.cpu_limit.at.line) == (1, 13)
    assert box.grace_period_s is not None
    assert box.grace_period_s.default
    assert box.grace_period_s.value == 5
    assert app.stop_signal is not None
    assert app.stop_signal.value == "INT"
    assert findings(result) >= {
        ("stop-signal-quick-shutdown", "fly.toml", 1),
        ("workers-over-cpu-limit", "fly.toml", 7),
    }
    (quick,) = [f for f in result.findings if f.rule == "stop-signal-quick-shutdown"]
    assert quick.fix == 'kill_signal = "SIGTERM"'
    # With SIGTERM the graceful stop runs, and Fly's 5 s default ends it first.
    fly = tmp_path / "fly.toml"
    fly.write_text('kill_signal = "SIGTERM"\n' + fly.read_text())
    (grace,) = [f for f in check_folder(tmp_path).findings if f.rule.startswith("grace-period")]
    assert (grace.at.line, grace.fix) == (1, "kill_timeout = 25")
    assert "kill_timeout 5 s (default) is below the graceful timeout 20 s" in grace.message
    assert "Fly.io kills" in grace.message


def test_render_docker_service_with_its_shutdown_delay_and_port(tmp_path: Path) -> None:
    """A render.yaml web service of the docker runtime runs `dockerfilePath`'s image with
    `dockerCommand` as its CMD and `envVars`, on Render's PORT 10000; a
    `maxShutdownDelaySeconds` below the graceful timeout is a finding in Render's words."""
    write(
        tmp_path,
        {
            "render.yaml": "services:\n  - type: web\n    name: shop\n    runtime: docker\n"
            "    dockerfilePath: ./docker/Dockerfile\n    dockerContext: .\n"
            "    dockerCommand: gunicorn --graceful-timeout 40 shop.wsgi\n"
            "    maxShutdownDelaySeconds: 10\n    numInstances: 3\n    envVars:\n"
            "      - key: WEB_CONCURRENCY\n        value: 3\n"
            "      - key: DATABASE_URL\n        fromDatabase:\n          name: db\n"
            "          property: connectionString\n"
            "databases:\n  - name: db\n",
            "docker/Dockerfile": IMAGE,
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "render")
    assert app.container is not None
    assert app.container.replicas is not None
    assert app.container.replicas.value == 3
    assert (app.workers.value, [s.value for s in app.sockets]) == (3, ["0.0.0.0:10000"])
    (grace,) = [f for f in result.findings if f.rule == "grace-period-below-shutdown"]
    assert (grace.at.file.name, grace.at.line) == ("render.yaml", 8)
    assert grace.fix == "maxShutdownDelaySeconds: 45"
    assert "render.com" in grace.backing


def test_heroku_app_json_runs_the_procfile_web_with_its_env(tmp_path: Path) -> None:
    """app.json's `env` values reach the server of the Procfile's `web` process (Heroku runs
    it), in a Heroku container with `formation.web.quantity` instances; without a Procfile
    or heroku.yml the link is said not followed, never "starts no server"."""
    write(
        tmp_path,
        {
            "app.json": '{\n  "name": "shop",\n  "env": {\n    "WEB_CONCURRENCY": {\n'
            '      "value": "5"\n    },\n    "SECRET_KEY": {"generator": "secret"}\n  },\n'
            '  "formation": {\n    "web": {\n      "quantity": 2\n    }\n  }\n}\n',
            "Procfile": "web: gunicorn shop.wsgi\nworker: celery -A shop worker\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "heroku")
    assert app.container is not None
    assert app.container.replicas is not None
    assert app.container.replicas.value == 2
    assert (app.workers.value, app.workers.at.file.name, app.workers.at.line) == (5, "app.json", 4)
    assert len(result.apps) == 1  # the Procfile's own reading is the same process
    (tmp_path / "Procfile").unlink()
    notes = [n for n in check_folder(tmp_path).notes if n.at.file.name == "app.json"]
    assert [n.kind for n in notes] == ["not-followed"]


def test_cloud_foundry_manifest_runs_its_command_in_its_path(tmp_path: Path) -> None:
    """A Cloud Foundry manifest's `command: ./run.sh` runs in the application's `path`, with
    `env` and CF's PORT 8080; `instances` and `memory` are its container's."""
    write(
        tmp_path,
        {
            "ops/manifests/manifest-prod.yaml": "---\napplications:\n- name: shop\n"
            "  path: ../../src\n  instances: 2\n  memory: 1G\n  command: ./run.sh\n"
            "  env:\n    WEB_CONCURRENCY: 3\n",
            "src/run.sh": "#!/bin/bash\nset -e\nexec gunicorn -c gunicorn.conf.py shop.wsgi\n",
            "src/gunicorn.conf.py": "timeout = 30\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "cloudfoundry")
    box = app.container
    assert box is not None
    assert box.replicas is not None
    assert box.memory_limit_mb is not None
    assert (box.name, box.replicas.value, box.memory_limit_mb.value) == ("shop", 2, 1024)
    assert app.config_file is not None
    assert app.config_file.file.name == "gunicorn.conf.py"
    assert (app.workers.value, [s.value for s in app.sockets]) == (3, ["0.0.0.0:8080"])


def test_cloud_foundry_command_script_is_found_in_the_app_root_above_the_manifest(
    tmp_path: Path,
) -> None:
    """With no `path:`, a manifest's `command: bash cf.sh` runs in the folder `cf push` sends
    (`cf push -f manifests/prod.yml` from the repository's root): a script the command names
    that is not beside the manifest but at the root is followed there, not called "starts no
    server"; gunicorn with no bind listens on CF's PORT. (Seen in 18F/calc.)"""
    write(
        tmp_path,
        {
            "manifests/prod.yml": "applications:\n- name: shop\n  command: bash cf.sh\n",
            "cf.sh": "#!/bin/bash\nset -e\nexec gunicorn shop.wsgi:application\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "cloudfoundry")
    assert app.file.name == "cf.sh"
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]


def test_heroku_yml_gunicorn_with_no_bind_listens_on_the_dynos_port_not_8000(
    tmp_path: Path,
) -> None:
    """heroku.yml's `run.web` gunicorn with no `--bind`, in the image `build.docker.web`
    builds, listens on `0.0.0.0:$PORT`, since Heroku sets PORT for every web dyno and gunicorn's
    default bind then follows it: not 127.0.0.1:8000, and no address is claimed, since the port
    is Heroku's pick. (Seen in pangeo-forge/pangeo-forge-orchestrator.)"""
    write(
        tmp_path,
        {
            "heroku.yml": "build:\n  docker:\n    web: Dockerfile.heroku\nrun:\n"
            "  web: gunicorn -w 2 shop.wsgi\n",
            "Dockerfile.heroku": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "heroku")
    assert app.sockets == ()
    assert any("0.0.0.0:$PORT" in word.value for word in app.unresolved)


def test_platform_file_is_read_not_refused_and_bad_toml_is_one_error_line(
    tmp_path: Path,
) -> None:
    """A fly.toml running an image not built here is read (a starts-no-server note, exit 0),
    not refused as a file check does not read; a fly.toml that is not TOML is one `error:`
    line naming it, exit 2."""
    write(tmp_path, {"fly.toml": 'app = "x"\n[build]\n  image = "nginx:1.27"\n'})
    run = [sys.executable, "-m", "servertune", "check", "--cores", "4"]
    read = subprocess.run([*run, "fly.toml"], cwd=tmp_path, capture_output=True, text=True)
    assert read.returncode == 0, read
    assert "[starts-no-server]" in read.stdout
    (tmp_path / "fly.toml").write_text('app = "x\n[build\n')
    bad = subprocess.run([*run, "fly.toml"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: fly.toml: TOML syntax error")
    assert "Traceback" not in bad.stderr


def test_platform_files_of_unexpected_shapes_never_raise_a_traceback(tmp_path: Path) -> None:
    """app.json whose `env` is a list and `formation` a string, render.yaml whose services
    are strings, a Cloud Foundry `applications` of scalars, a fly.toml whose `vm` and
    `processes` are not tables: each is read (or refused in one `error:` line), never a
    traceback."""
    cases = {
        "a/app.json": '{"env": ["X"], "formation": "web", "scripts": 3}\n',
        "b/render.yaml": "services:\n  - web\n  - type: web\n    envVars: 3\n",
        "c/manifest.yml": "applications:\n  - shop\n  - name: x\n    env: [1]\n",
        "d/fly.toml": 'app = "x"\nvm = 3\nprocesses = "web"\nkill_timeout = "soon"\n',
    }
    write(tmp_path, {**cases, "a/Procfile": "web: gunicorn app:app\n"})
    run = [sys.executable, "-m", "servertune", "check", "--cores", "4"]
    for name in cases:
        done = subprocess.run([*run, name], cwd=tmp_path, capture_output=True, text=True)
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert done.returncode in (0, 2), (name, done)
        if done.returncode == 2:
            assert done.stderr.startswith(f"error: {name}"), (name, done.stderr)


def test_heroku_yml_beside_app_json_is_one_launch_run_by_a_shell(tmp_path: Path) -> None:
    """heroku.yml's `run.web` string runs in the image `build.docker.web` builds, by
    `/bin/sh -c` (so `$PORT`, Heroku's at run time, is unknown, never the text `$PORT`); with
    app.json beside it, app.json's reading is the one launch, with its `env`."""
    write(
        tmp_path,
        {
            "app.json": '{"env": {"WEB_CONCURRENCY": {"value": "3"}}, "stack": "container"}\n',
            "heroku.yml": "build:\n  docker:\n    web: Dockerfile\n"
            "run:\n  web: gunicorn --bind 0.0.0.0:$PORT app:app\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = result.apps
    assert app.container is not None
    assert (app.container.platform, app.container.at.file.name) == ("heroku", "app.json")
    assert (app.workers.value, app.sockets) == (3, ())


def test_heroku_yml_long_form_builds_its_target_stage(tmp_path: Path) -> None:
    """heroku.yml's long form `web: {dockerfile: X, target: STAGE}` builds that stage, as
    compose's `build.target` does: its CMD is the launch, not the last stage's (a `dev`
    stage with no CMD). Seen in wagtail.org (stages `backend` -> `prod`, `backend` -> `dev`)."""
    write(
        tmp_path,
        {
            "heroku.yml": "build:\n  docker:\n    web:\n      dockerfile: Dockerfile\n"
            "      target: prod\n",
            "Dockerfile": "FROM python:3.12 AS backend\nWORKDIR /app\nCOPY . /app\n"
            "FROM backend AS prod\nCMD gunicorn --workers 3 shop.wsgi\n"
            "FROM backend AS dev\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    app = on_platform(result, "heroku")
    assert (app.kind, app.workers.value) == ("gunicorn", 3)


def test_image_the_platform_builds_not_here_is_said_not_followed(tmp_path: Path) -> None:
    """A fly.toml kept in a sub-folder builds `Dockerfile` beside it by default: when that
    file is not here, the launch is "not followed", never "starts no server"."""
    write(tmp_path, {"etc/fly.toml": 'app = "x"\nkill_timeout = 5\n'})
    result = check_folder(tmp_path)
    assert not result.errors
    assert [(n.kind, n.at.file.name) for n in result.notes] == [("not-followed", "fly.toml")]


NO_EXEC = "#!/bin/bash\nset -e\npython manage.py migrate\ngunicorn shop.wsgi\n"


def test_cloud_foundry_start_script_without_exec_is_a_fault_in_its_words(tmp_path: Path) -> None:
    """Cloud Foundry signals the start command's own process, so a script that runs gunicorn
    as its child loses the SIGTERM whether the manifest's `command` or the Procfile's `web`
    runs it (a Procfile there is no group-signalling runner); the finding says so in Cloud
    Foundry's words, not Docker's PID 1."""
    write(
        tmp_path,
        {
            "manifest.yml": "applications:\n- name: shop\n  command: ./run.sh\n",
            "run.sh": NO_EXEC,
        },
    )
    (finding,) = [f for f in check_folder(tmp_path).findings if f.rule.startswith("entrypoint")]
    assert (finding.rule, finding.at.file.name, finding.at.line) == (
        "entrypoint-without-exec",
        "run.sh",
        4,
    )
    assert "Cloud Foundry sends SIGTERM to the start command's own process" in finding.message
    assert "PID 1" not in finding.message
    assert finding.backing.startswith("https://docs.cloudfoundry.org/")
    (tmp_path / "manifest.yml").write_text("applications:\n- name: shop\n")
    (tmp_path / "Procfile").write_text("web: bin/run.sh\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "run.sh").rename(tmp_path / "bin" / "run.sh")
    assert ("entrypoint-without-exec", "run.sh", 4) in findings(check_folder(tmp_path))


def test_heroku_signals_every_process_of_the_dyno(tmp_path: Path) -> None:
    """heroku.yml's `run.web` script without `exec` loses nothing: Heroku's dyno manager sends
    SIGTERM to every process of the dyno, so no shutdown finding is made for it."""
    write(
        tmp_path,
        {
            "app.json": '{"stack": "container"}\n',
            "heroku.yml": "build:\n  docker:\n    web: Dockerfile\nrun:\n  web: ./run.sh\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
            "run.sh": NO_EXEC,
        },
    )
    result = check_folder(tmp_path)
    assert len(result.apps) == 1
    assert not [f for f in result.findings if f.rule.startswith("entrypoint")]


def test_app_engine_service_files_under_any_name_start_their_entrypoint(tmp_path: Path) -> None:
    """A YAML file whose top level has App Engine's `runtime:` and `entrypoint:` is a service
    file whatever its name (`api.yaml` beside `app.yaml`, as The Blue Alliance's `src/*.yaml`
    and boxtribute's `app-api.yaml`): each entrypoint is a launch run in the file's folder
    (its `gunicorn.conf.py` loaded), with PORT 8080, `env_variables` and `instance_class`'s
    memory; `dispatch.yaml` and `cron.yaml` start nothing and are no launch."""
    write(
        tmp_path,
        {
            "src/app.yaml": "runtime: python312\nentrypoint: gunicorn -b :$PORT main:app\n",
            "src/api.yaml": "service: api\nruntime: python312\ninstance_class: F2\n"
            "entrypoint: gunicorn -b :$PORT --threads $THREADS api.main:app\n"
            "env_variables:\n  THREADS: '8'\nhandlers:\n  - url: .*\n    script: auto\n",
            "src/gunicorn.conf.py": "workers = 2\n",
            "src/dispatch.yaml": "dispatch:\n  - url: '*/api/*'\n    service: api\n",
            "src/cron.yaml": "cron:\n  - description: nightly\n    url: /tasks/n\n"
            "    schedule: every 24 hours\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    apps = {
        a.container.name: a
        for a in result.apps
        if a.container is not None and a.container.platform == "appengine"
    }
    assert sorted(apps) == ["api", "default"]
    for app in apps.values():
        assert app.config_file is not None
        assert app.config_file.file.name == "gunicorn.conf.py"
        assert [s.value for s in app.sockets] == [":8080"]
        assert app.workers.value == 2
    assert apps["api"].threads.value == 8
    box = apps["api"].container
    assert box is not None
    assert box.memory_limit_mb is not None
    assert box.memory_limit_mb.value == 768


def test_railway_start_command_replaces_the_image_entrypoint_and_railpack_runs_a_shell(
    tmp_path: Path,
) -> None:
    """railway.toml's `deploy.startCommand` runs in exec form in place of the ENTRYPOINT of
    the image `build.dockerfilePath` builds (seen in topoteretes/cognee's deploy/railway.toml),
    with `numReplicas` and `drainingSeconds` (SIGTERM to SIGKILL) where written; a
    railway.json with no Dockerfile is Railpack's, which runs the start command in a shell."""
    write(
        tmp_path,
        {
            "api/railway.toml": '[build]\ndockerfilePath = "docker/Dockerfile"\n\n[deploy]\n'
            'startCommand = "gunicorn -w 3 -b 0.0.0.0:8000 shop.wsgi"\n'
            "numReplicas = 2\ndrainingSeconds = 15\n",
            "api/docker/Dockerfile": 'FROM python:3.12\nENTRYPOINT ["/entrypoint.sh"]\n'
            'CMD ["python", "manage.py", "runserver"]\n',
            "web/railway.json": '{"deploy": {"startCommand": "uvicorn app:app --port $PORT"}}\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    apps = {a.kind: a for a in result.apps if a.container and a.container.platform == "railway"}
    assert sorted(apps) == ["gunicorn", "uvicorn"]
    gunicorn = apps["gunicorn"]
    assert gunicorn.workers.value == 3
    box = gunicorn.container
    assert box is not None
    assert box.replicas is not None
    assert box.replicas.value == 2
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.at.line) == (15.0, 7)


def test_digitalocean_app_spec_services_run_their_command_dockerfile_or_procfile(
    tmp_path: Path,
) -> None:
    """A DigitalOcean App Platform spec (`.do/app.yaml`; `.do/deploy.template.yaml` under
    `spec:`; any YAML whose `services:` carry App Platform's keys) starts each service's
    `run_command` in its `source_dir`, else the image of its `dockerfile_path`, else the
    Procfile's web line; `envs` at run time, PORT its `http_port` (8080 by default), and
    `termination.grace_period_seconds` (120 s by default) before SIGKILL."""
    write(
        tmp_path,
        {
            "a/.do/app.yaml": "name: shop\nservices:\n- name: api\n  source_dir: backend\n"
            "  environment_slug: python\n  instance_count: 2\n"
            "  run_command: gunicorn -w 3 shop.wsgi\n"
            "  envs:\n  - key: WEB_CONCURRENCY\n    value: '4'\n    scope: RUN_TIME\n"
            "  termination:\n    grace_period_seconds: 40\n",
            "b/.do/deploy.template.yaml": "spec:\n  name: b\n  services:\n  - name: web\n"
            "    dockerfile_path: docker/Dockerfile\n    http_port: 9000\n",
            "b/docker/Dockerfile": 'FROM python:3.12\nCMD ["uvicorn", "app:app", "--port", '
            '"9000"]\n',
            "c/app.spec.yaml": "services:\n- name: site\n  environment_slug: python\n",
            "c/Procfile": "web: granian --interface asgi app:app\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    apps = {
        a.kind: a for a in result.apps if a.container and a.container.platform == "digitalocean"
    }
    assert sorted(apps) == ["granian", "gunicorn", "uvicorn"]
    box = apps["gunicorn"].container
    assert box is not None
    assert box.replicas is not None
    assert box.replicas.value == 2
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.default) == (40.0, False)
    web = apps["uvicorn"].container
    assert web is not None
    assert web.grace_period_s is not None
    assert (web.grace_period_s.value, web.grace_period_s.default) == (120.0, True)


def test_copilot_manifest_runs_its_image_with_entrypoint_and_command_as_ecs_does(
    tmp_path: Path,
) -> None:
    """An AWS Copilot service manifest (`copilot/<svc>/manifest.yml` with a service `type:`)
    starts the image `image.build` builds (paths from the workspace root), its `command`
    (a string split into words) in place of the image's CMD, ENTRYPOINT kept, under its
    `variables`, with ECS's 30 s stop timeout by default; an environment overriding the
    command is its own launch; a registry `image.location` no Dockerfile here builds is not
    followed, said so."""
    write(
        tmp_path,
        {
            "copilot/api/manifest.yml": "name: api\ntype: Load Balanced Web Service\n"
            "image:\n  build: services/api/Dockerfile\n  port: 8000\n"
            "command: gunicorn -w 3 -b 0.0.0.0:8000 shop.wsgi\n"
            "variables:\n  LOG_LEVEL: info\ncount: 2\n"
            "environments:\n  prod:\n    command: gunicorn -w 9 -b 0.0.0.0:8000 shop.wsgi\n",
            "services/api/Dockerfile": 'FROM python:3.12\nENTRYPOINT ["/usr/bin/env"]\n'
            'CMD ["python", "-m", "http.server"]\n',
            "copilot/other/manifest.yml": "name: other\ntype: Backend Service\n"
            "image:\n  location: public.ecr.aws/acme/unknown:latest\n",
        },
    )
    result = check_folder(tmp_path)
    gunicorns = sorted(
        (a for a in result.apps if a.kind == "gunicorn" and a.container is not None),
        key=lambda a: a.workers.value,
    )
    assert [a.workers.value for a in gunicorns] == [3, 9]
    box = gunicorns[0].container
    assert box is not None
    assert box.name == "api"
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.default) == (30.0, True)
    assert box.replicas is not None
    assert box.replicas.value == 2
    assert any(
        "not followed" in str(e) and "public.ecr.aws/acme/unknown" in str(e)
        for e in (*result.errors, *result.notes)
    )


def test_nomad_job_tasks_start_their_docker_image_or_exec_command(tmp_path: Path) -> None:
    """A Nomad job file (`*.nomad`, `*.nomad.hcl`, `.hcl` with `job "x" {`) starts each task:
    a `docker` task the image its `config.image` names (tied to a Dockerfile here) with
    `command` + `args` in place of its CMD, an `exec` task its `command` + `args` as written;
    `env { }` is the environment, `kill_timeout` (5 s by default) the stop grace, SIGINT the
    exec drivers' signal, the group's `count` the instances; a `template` block's rendered
    file is not followed, said so."""
    write(
        tmp_path,
        {
            "deploy/shop.nomad": 'job "shop" {\n  group "web" {\n    count = 3\n'
            '    task "api" {\n      driver = "docker"\n      kill_timeout = "20s"\n'
            '      config {\n        image = "shop:latest"\n        command = "gunicorn"\n'
            '        args = ["-w", "4", "-b", "0.0.0.0:8000", "shop.wsgi"]\n      }\n'
            '      env {\n        LOG_LEVEL = "info"\n      }\n'
            '      template {\n        data = <<EOF\nSECRET={{ key "x" }}\nEOF\n'
            '        destination = "secrets/app.env"\n      }\n    }\n  }\n'
            '  group "jobs" {\n    task "asgi" {\n      driver = "exec"\n'
            '      config {\n        command = "uvicorn"\n'
            '        args = ["app:app", "--port", "9000"]\n      }\n    }\n  }\n}\n',
            "compose.yaml": "services:\n  builder:\n    build: .\n    image: shop:latest\n"
            "    command: ['true']\n",
            "Dockerfile": 'FROM python:3.12\nCMD ["python", "-m", "http.server"]\n',
        },
    )
    result = check_folder(tmp_path)
    apps = {a.kind: a for a in result.apps if a.container and a.container.platform == "nomad"}
    assert sorted(apps) == ["gunicorn", "uvicorn"]
    gunicorn = apps["gunicorn"]
    assert gunicorn.workers.value == 4
    box = gunicorn.container
    assert box is not None
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.default) == (20.0, False)
    assert box.replicas is not None
    assert box.replicas.value == 3
    uvicorn = apps["uvicorn"]
    assert uvicorn.container is not None
    assert uvicorn.container.grace_period_s is not None
    assert uvicorn.container.grace_period_s.value == 5.0
    assert uvicorn.stop_signal is not None
    assert uvicorn.stop_signal.value == "INT"
    assert any("secrets/app.env" in str(n) for n in result.notes)


def test_only_an_app_json_at_the_root_or_beside_a_procfile_is_herokus(tmp_path: Path) -> None:
    """An `app.json` is Heroku's only at the repository's root or beside the Procfile Heroku
    runs: one elsewhere (`deploy/app.json`, some other tool's file of that name, as in
    azavea/pfb-network-connectivity's task-definitions) is no Heroku launch and no error; a
    root app.json with unquoted `${name}` placeholders is a template, said not followed,
    never a JSON syntax error."""
    write(
        tmp_path,
        {
            "app.json": '{"name": "shop", "env": {"PORT": ${port}}}\n',
            "Procfile": "web: gunicorn -w 2 shop.wsgi\n",
            "deploy/app.json": '{"name": "x", "env": {"WEB_CONCURRENCY": "9"}}\n',
            "deploy/start.sh": "#!/bin/sh\nexec gunicorn -w 3 shop.wsgi\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    assert not [a for a in result.apps if a.container and a.container.platform == "heroku"]
    said = [n for n in result.notes if n.kind == "not-followed" and n.at.file.name == "app.json"]
    assert [n.at.file.parent for n in said] == [tmp_path]
    assert "template" in said[0].message
