"""Issue 44 §3: a launch that runs a development reloader (`uvicorn --reload`, `gunicorn
--reload`, `flask run`, `manage.py runserver`) is a development launch: the launch graph says
so and no worker or thread count of it is sized; the same reloader as the only launch of a
production image (its final stage's command) is one warning."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import describe, launch_json, launches
from servertune.machine import Machine
from tests.folder_support import check_folder, write

BASE = "FROM python:3.12 AS base\nCOPY . /app\nWORKDIR /app\n"
PRODUCTION = 'FROM base AS prod\nCMD ["gunicorn", "-w", "2", "-b", "0.0.0.0:8000", "app:app"]\n'


def test_reloaders_of_a_dev_compose_file_are_development_launches_not_sized(
    tmp_path: Path,
) -> None:
    """In a compose dev file, `uvicorn --reload` and `gunicorn --reload -w 9` are shown as
    development launches with no worker count and draw no sizing advice (no workers-over-cores
    for the 9 on 2 cores); `flask run` and `python manage.py runserver` are shown in the launch graph as
    development launches, not dropped silently; the production image draws no warning."""
    write(
        tmp_path,
        {
            "Dockerfile": BASE + PRODUCTION,
            "docker-compose.dev.yml": "services:\n"
            "  api:\n    build: .\n    command: uvicorn main:app --reload --host 0.0.0.0\n"
            "  web:\n    build: .\n    command: gunicorn --reload -w 9 -b :8001 wsgi:app\n"
            "  flaskapp:\n    build: .\n    command: flask run --host 0.0.0.0\n"
            "  django:\n    build: .\n    command: python manage.py runserver 0.0.0.0:8002\n",
        },
    )
    walk = discover(tmp_path)
    two = Machine(cores=2, cores_source="--cores", somaxconn=4096)
    result = check_files(list(walk.files), machine=two, discovered=[walk], root=tmp_path)
    lines = [describe(one) for one in launches(result.apps, result.links)]
    development = [line for line in lines if "a development launch" in line]
    assert len(development) == 2
    assert all("not sized" in line and " x " not in line for line in development)
    dev_at = {f.at.line for f in result.findings if f.at.file.name == "docker-compose.dev.yml"}
    assert not dev_at
    shown = [n.message for n in result.notes if n.kind == "development-launch"]
    assert [m.split(" (")[0] for m in shown] == [
        "compose service flaskapp",
        "compose service django",
    ]
    assert "Flask's development server" in shown[0]
    assert "Django's development server" in shown[1]
    assert not [f for f in result.findings if f.rule == "reloader-in-production"]


def test_a_reloader_as_a_production_images_only_launch_is_one_note(tmp_path: Path) -> None:
    """The Dockerfile's final stage runs `uvicorn --reload` (no --workers) and nothing else
    runs the image: one reloader-in-production note (a watcher, no request lost) at the
    `--reload` line saying it runs one process and watches the files; the same CMD in a `dev`
    stage a compose service builds is not one."""
    reload = 'CMD ["uvicorn", "main:app", "--reload", "--host", "0.0.0.0"]\n'
    write(tmp_path / "prod", {"Dockerfile": BASE + "FROM base AS final\n" + reload})
    (warning,) = [
        f for f in check_folder(tmp_path / "prod").findings if f.rule == "reloader-in-production"
    ]
    assert (warning.at.file.name, warning.at.line, warning.severity.name) == (
        "Dockerfile",
        5,
        "info",
    )
    assert "runs one process" in warning.message
    assert "watches the files" in warning.message
    write(
        tmp_path / "dev",
        {
            "Dockerfile": BASE + "FROM base AS dev\n" + reload + PRODUCTION,
            "compose.yaml": "services:\n  api:\n    build:\n      context: .\n      target: dev\n",
        },
    )
    assert not [
        f for f in check_folder(tmp_path / "dev").findings if f.rule == "reloader-in-production"
    ]


def test_a_reloader_in_a_compose_stack_named_for_production_is_a_fault(tmp_path: Path) -> None:
    """`gunicorn --reload` in docker-compose.yml, merged with docker-compose.prod.yml (a
    compose file named for production), is production's reloader: one reloader-in-production
    warning at the `--reload` line, and the launch graph calls that launch a production one;
    the same service in the base file alone, a developer's stack, stays a development launch
    with no fault (seen in okfn-brasil/serenata-de-amor). A file under a `production/` folder
    counts the same; one named for both (`prod.dev.yml`) does not."""
    command = "    command: gunicorn --reload -w 2 -b 0.0.0.0:8000 app:app\n"
    result = check_folder(
        write(
            tmp_path / "stack",
            {
                "Dockerfile": BASE + PRODUCTION,
                "docker-compose.yml": "services:\n  django:\n    build: .\n" + command,
                "docker-compose.prod.yml": "services:\n  django:\n    restart: always\n",
            },
        )
    )
    (warning,) = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert (warning.at.file.name, warning.at.line) == ("docker-compose.yml", 4)
    lines = [describe(one) for one in launches(result.apps, result.links)]
    (production,) = [line for line in lines if "docker-compose.prod.yml" in line]
    assert "a production launch (reloads on code changes" in production
    # The base file alone is named for neither: its reloader alone makes no development launch.
    assert [line for line in lines if "production's or a developer's (reloads" in line]
    folder = {"production/compose.yaml": "services:\n  django:\n    build: ..\n" + command}
    found = check_folder(write(tmp_path / "folder", {"Dockerfile": BASE + PRODUCTION, **folder}))
    assert [f.rule for f in found.findings] == ["reloader-in-production"]
    both = {"prod.dev.yml": "services:\n  django:\n    build: .\n" + command}
    found = check_folder(write(tmp_path / "both", {"Dockerfile": BASE + PRODUCTION, **both}))
    assert not [f for f in found.findings if f.rule == "reloader-in-production"]


DEV_SCRIPT = "#!/bin/sh\npython manage.py migrate\ngunicorn -b 0.0.0.0:8000 app:app\n"


def test_a_launch_through_a_dev_named_script_draws_no_fault(tmp_path: Path) -> None:
    """A compose service whose command is `scripts/run-django-dev.sh` (a script named for
    development) runs gunicorn without `exec`: no entrypoint-without-exec, and the launch
    graph says it is a development launch whose faults are not judged (as seen in
    mitodl/open-discussions)."""
    result = check_folder(
        write(
            tmp_path,
            {
                "Dockerfile": BASE + 'CMD ["gunicorn", "-b", "0.0.0.0:8000", "app:app"]\n',
                "docker-compose.yml": "services:\n  web:\n    build: .\n"
                "    command: ./scripts/run-django-dev.sh\n",
                "scripts/run-django-dev.sh": DEV_SCRIPT,
            },
        )
    )
    assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    (line,) = [
        describe(one)
        for one in launches(result.apps, result.links)
        if "run-django-dev" in describe(one)
    ]
    assert "a development launch (started through run-django-dev.sh" in line
    assert "faults not judged" in line


def test_an_image_command_every_compose_service_replaces_is_no_launch_of_its_own(
    tmp_path: Path,
) -> None:
    """The Dockerfile's shell-form CMD is replaced by the command of the one compose service
    that builds it, and the project deploys through a Procfile on Heroku (app.json): the CMD
    is no launch of its own, so no shell-form-command; without that other deployment the CMD
    may be what production runs, and the warning stays (as seen in mitodl/open-discussions)."""
    files = {
        "Dockerfile": BASE + "CMD gunicorn -b 0.0.0.0:8000 app:app\n",
        "docker-compose.yml": "services:\n  web:\n    build: .\n"
        "    command: ./scripts/run-django-dev.sh\n",
        "scripts/run-django-dev.sh": DEV_SCRIPT,
    }
    alone = check_folder(write(tmp_path / "alone", files))
    assert [f.rule for f in alone.findings] == ["shell-form-command"]
    deployed = {
        **files,
        "Procfile": "web: gunicorn -b 0.0.0.0:$PORT app:app\n",
        "app.json": '{"name": "x", "buildpacks": [{"url": "heroku/python"}]}\n',
    }
    result = check_folder(write(tmp_path / "deployed", deployed))
    assert not result.findings
    lines = [describe(one) for one in launches(result.apps, result.links)]
    (image,) = [line for line in lines if line.split(" -> ")[0].endswith("Dockerfile:4")]
    assert "no launch of its own" in image


def test_a_reloader_from_a_dev_overlay_draws_no_error_behind_traefik(tmp_path: Path) -> None:
    """A base compose file runs `entrypoint.app.sh` (uvicorn, default 5 s keep-alive) behind
    Traefik's 90 s idle pool, and `override.dev.yml` runs `entrypoint.app.dev.sh` with
    `--reload`: the production launch keeps its lb-idle-over-app-keepalive error, the
    development one draws none (as seen in hunvreus/devpush)."""
    uvicorn = "#!/bin/sh\nexec uvicorn main:app --host 0.0.0.0 --port 8000"
    write(
        tmp_path,
        {
            "Dockerfile": BASE,
            "compose/base.yml": "services:\n  app:\n    build:\n      context: ..\n"
            "    entrypoint: /app/entrypoint.app.sh\n    labels:\n"
            "      - traefik.enable=true\n"
            "      - traefik.http.services.app.loadbalancer.server.port=8000\n"
            "  traefik:\n    image: traefik:v3.1\n",
            "compose/override.dev.yml": "services:\n  app:\n"
            "    entrypoint: /app/entrypoint.app.dev.sh\n",
            "entrypoint.app.sh": uvicorn + " --workers 2\n",
            "entrypoint.app.dev.sh": uvicorn + " --reload\n",
        },
    )
    errors = [f for f in check_folder(tmp_path).findings if f.rule == "lb-idle-over-app-keepalive"]
    assert [f.at.file.name for f in errors] == ["entrypoint.app.sh"]


def test_a_reload_switch_under_an_if_whose_then_is_on_the_next_line_follows_the_image_env(
    tmp_path: Path,
) -> None:
    """`RELOAD="--reload"` under `if [[ ${DEV_MODE} == "True" ]];` with `then` on the next
    line, and the image's `ENV DEV_MODE="False"`: the test is false, the script's uvicorn runs
    without --reload, so no reloader-in-production; with `DEV_MODE="True"` it is one (as
    seen in OpenMined/PySyft packages/grid/backend/grid/start.sh)."""
    script = (
        '#!/usr/bin/env bash\nset -e\nRELOAD=""\nif [[ ${DEV_MODE} == "True" ]];\nthen\n'
        '    echo "Hot-reload Enabled"\n    RELOAD="--reload"\nfi\n'
        'exec uvicorn $RELOAD --host 0.0.0.0 --port 80 "grid.main:app"\n'
    )
    for mode, expected in (("False", []), ("True", ["reloader-in-production"])):
        root = write(
            tmp_path / mode,
            {
                "backend.dockerfile": "FROM python:3.12\nWORKDIR /root/app\nCOPY grid ./grid/\n"
                f'ENV DEV_MODE="{mode}"\nCMD ["bash", "./grid/start.sh"]\n',
                "grid/start.sh": script,
            },
        )
        assert [f.rule for f in check_folder(root).findings] == expected, mode


def test_a_procfile_web_process_with_a_reloader_is_production_and_web_dev_is_not(
    tmp_path: Path,
) -> None:
    """A Procfile's `web` process is what the platform runs and routes requests to, so its
    `gunicorn --reload` is one reloader-in-production note at its line, and the launch is no
    development launch; a process named for development (`web_dev`) is one, judged for
    nothing (seen in ourresearch/oadoi's Heroku Procfile)."""
    result = check_folder(
        write(
            tmp_path,
            {
                "Procfile": "web: gunicorn views:app -w 3 --reload\n"
                "web_dev: gunicorn views:app -w 2 --reload\n",
            },
        )
    )
    (note,) = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert (note.at.file.name, note.at.line) == ("Procfile", 1)
    assert "the Procfile's web process" in note.message
    marks = {
        launch_json(one)["chain"][0]["line"]: launch_json(one)["development"]
        for one in launches(result.apps, result.links)
    }
    assert marks == {1: False, 2: True}


def test_a_recipe_named_for_production_runs_the_config_reloader_in_production(
    tmp_path: Path,
) -> None:
    """A justfile recipe named for production (`prod:`) that runs hypercorn with a config
    turning `use_reloader = true` on is a production launch: one reloader-in-production note
    naming the recipe and the config's own setting, not `--reload`; the JSON launch is not
    marked development for its reloader (seen in pyrox0/vgarchive). A `dev` recipe's is."""
    result = check_folder(
        write(
            tmp_path,
            {
                "justfile": "dev:\n    hypercorn -c hypercorn.toml -b 127.0.0.1:9000 app:app\n\n"
                "prod:\n    hypercorn -c hypercorn.toml --workers 8 app:app\n",
                "hypercorn.toml": 'bind = "127.0.0.1:8000"\nuse_reloader = true\n',
            },
        )
    )
    (note,) = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert "use_reloader = true" in note.message
    assert "the justfile's recipe prod" in note.message
    marks = {
        launch_json(one)["chain"][0]["line"]: launch_json(one)["development"]
        for one in launches(result.apps, result.links)
    }
    assert marks == {2: True, 5: False}


def test_a_reloader_alone_makes_no_development_launch(tmp_path: Path) -> None:
    """A script running `uvicorn --reload`, under no name that says development or production,
    is marked development neither in the JSON launch nor in its line: the reloader alone says
    nothing of who runs it (the mark was circular, hiding reloaders in production)."""
    result = check_folder(
        write(tmp_path, {"server": "#!/bin/sh\nuvicorn app:webapp --reload --port 7007\n"})
    )
    (launch,) = launches(result.apps, result.links)
    assert launch_json(launch)["development"] is False
    assert "a development launch" not in describe(launch)


def test_a_unit_running_a_tox_environment_named_for_development_is_no_production_run(
    tmp_path: Path,
) -> None:
    """A systemd unit runs `tox -e dev-server -- --port 8000`, and tox.ini's
    `[testenv:dev-server]` runs `uvicorn --reload ...`: the environment's name says
    development, so the launch is a developer's, marked so, with no reloader-in-production
    warning, though a unit is otherwise a host's service (seen in
    release-engineering/exodus-gw's scripts/systemd). A `[testenv:serve]` keeps the warning."""
    for env, said in (("dev-server", False), ("serve", True)):
        root = write(
            tmp_path / env,
            {
                "app.service": f"[Service]\nExecStart=/usr/bin/tox -e {env} -- --port 8000\n",
                "tox.ini": f"[tox]\nenvlist = py3\n\n[testenv:{env}]\ncommands =\n"
                "    uvicorn --reload app.main:app {posargs}\n",
            },
        )
        result = check_folder(root)
        rules = {f.rule for f in result.findings}
        assert ("reloader-in-production" in rules) is said, env
        (launch,) = launches(result.apps, result.links)
        assert launch_json(launch)["development"] is not said, env


def test_an_images_own_command_is_judged_whatever_its_config_is_named(tmp_path: Path) -> None:
    """A Dockerfile (named for no development, no stage) whose only command is `pserve
    ${INI_FILE}` with `ENV INI_FILE=.../development.ini` runs that ini in every deployment of
    the image: the launch is not labelled a development launch by the ini's name, and its
    faults are judged (seen in yeastgenome/SGDBackend-Nex2)."""
    result = check_folder(
        write(
            tmp_path,
            {
                "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\n"
                "ENV INI_FILE=/app/development.ini\n"
                'CMD ["bash", "-lc", "pserve ${INI_FILE} http_host=0.0.0.0"]\n',
                "development.ini": "[app:main]\nuse = egg:myapp\n\n[server:main]\n"
                "use = egg:waitress#main\nhost = 0.0.0.0\nport = 6543\nbacklog = 65536\n",
            },
        )
    )
    (line,) = [describe(one) for one in launches(result.apps, result.links)]
    assert "development.ini" in line
    assert "development launch" not in line
    assert "backlog-over-somaxconn" in {f.rule for f in result.findings}
