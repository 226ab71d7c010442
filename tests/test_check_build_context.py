"""Where an image's files come from and which stage it is: the build context a compose file
gives a Dockerfile (also when the Dockerfile is read on its own), a file a RUN copies or moves
inside the image, a COPY into a folder every image has, and `FROM ${TARGET}` picking a stage by
a build ARG. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launch_json, launches
from tests.folder_support import chains, check_folder, write

_UWSGI_DOCKERFILE = """\
FROM python:3.12-slim AS base
WORKDIR /srv/app
COPY app /srv/app/app

FROM base AS dev
CMD ["python", "manage.py", "runserver", "0.0.0.0:8000"]

FROM base AS prod
COPY uwsgi.ini /srv/app/uwsgi.ini
CMD ["uwsgi", "--ini", "/srv/app/uwsgi.ini"]
"""


def test_dockerfile_read_alone_is_built_from_the_context_compose_gives_it(
    tmp_path: Path,
) -> None:
    """docker/app/Dockerfile is built by compose with `context: .`: its `COPY uwsgi.ini` is the
    repository root's uwsgi.ini (4 processes), not the one beside the Dockerfile, also for the
    image's own run, which no service starts here (the service runs the dev stage)."""
    root = write(
        tmp_path,
        {
            "compose.yaml": (
                "services:\n  api:\n    build:\n      context: .\n"
                "      dockerfile: ./docker/app/Dockerfile\n      target: dev\n"
            ),
            "docker/app/Dockerfile": _UWSGI_DOCKERFILE,
            "docker/app/uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nmodule = app.wsgi\n",
            "uwsgi.ini": "[uwsgi]\nhttp-socket = :8000\nmodule = app.wsgi\nprocesses = 4\n",
            "app/wsgi.py": "application = None\n",
        },
    )
    result = check_folder(root)
    configs = {
        launch_json(launch)["config"]: launch.app.workers.value
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.chain[0].file.name == "Dockerfile"
    }
    assert configs == {str(root / "uwsgi.ini"): 4}


def test_file_a_run_copies_is_where_the_image_runs_it(tmp_path: Path) -> None:
    """`ADD . /app`, `WORKDIR /app`, `RUN cp ./extras/docker/entrypoint.sh /entrypoint.sh`:
    ENTRYPOINT /entrypoint.sh is the repository's extras/docker/entrypoint.sh, followed to its
    gunicorn; `mv` into a folder (`/usr/local/bin/`) is followed the same way."""
    entrypoint = "#!/bin/sh\nexec gunicorn --workers 3 --bind 0.0.0.0:8000 app.wsgi\n"
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nADD . /app\nWORKDIR /app\n"
                "RUN pip install -r requirements.txt && "
                "cp ./extras/docker/entrypoint.sh /entrypoint.sh\n"
                'ENTRYPOINT ["/entrypoint.sh"]\n'
            ),
            "extras/docker/entrypoint.sh": entrypoint,
            "worker/Dockerfile": (
                "FROM python:3.12-slim\nCOPY . /src\n"
                "RUN mv -f /src/run.sh /usr/local/bin/ && chmod +x /usr/local/bin/run.sh\n"
                'CMD ["run.sh"]\n'
            ),
            "worker/run.sh": entrypoint.replace("3", "5"),
        },
    )
    assert sorted(chains(check_folder(root), root)) == [
        (["Dockerfile:5", "extras/docker/entrypoint.sh:2"], "gunicorn", 3),
        (["worker/Dockerfile:4", "worker/run.sh:2"], "gunicorn", 5),
    ]


def test_copy_from_an_arg_default_into_a_folder_every_image_has(tmp_path: Path) -> None:
    """`ARG SRC_DIR=docker/app` then `COPY ${SRC_DIR}/start.sh /usr/local/bin`: the ARG's
    default names the source and /usr/local/bin, a folder every image has, takes the file in,
    so `CMD ["start.sh"]` (found on the PATH) is docker/app/start.sh."""
    root = write(
        tmp_path,
        {
            "docker/Dockerfile": (
                "FROM python:3.12-slim\nARG SRC_DIR=docker/app\n"
                "COPY ${SRC_DIR}/start.sh /usr/local/bin\n"
                'CMD ["start.sh"]\n'
            ),
            "docker/app/start.sh": "#!/bin/sh\nexec uvicorn app.main:app --port 8000 --workers 2\n",
        },
    )
    assert chains(check_folder(root), root) == [
        (["docker/Dockerfile:4", "docker/app/start.sh:2"], "uvicorn", 2)
    ]


_TARGETED = """\
ARG TARGET=storage

FROM python:3.12-slim AS base
WORKDIR /src

FROM base AS storage
CMD ["gunicorn", "--bind", "0.0.0.0:8001", "--workers", "2", "storage.wsgi"]

FROM base AS dashboard
CMD ["gunicorn", "--bind", "0.0.0.0:8002", "--workers", "6", "dashboard.wsgi"]

FROM ${TARGET}
"""


def test_final_stage_named_by_an_arg_is_that_stage(tmp_path: Path) -> None:
    """`FROM ${TARGET}` with `ARG TARGET=storage`: the image is the storage stage (its
    gunicorn), not an image that sets no command; compose's `build.args: TARGET: dashboard`
    builds the dashboard stage for that service."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _TARGETED,
            "compose.yaml": (
                "services:\n  dashboard:\n    build:\n      context: .\n"
                "      args:\n        TARGET: dashboard\n"
                "  other:\n    build:\n      context: .\n      args: [TARGET=storage]\n"
            ),
        },
    )
    result = check_folder(root)
    started = {
        (launch.app.container.name if launch.app.container else "image", launch.app.workers.value)
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert started == {("dashboard", 6), ("other", 2)}
    (alone,) = chains(
        check_folder(write(tmp_path / "alone", {"Dockerfile": _TARGETED})), tmp_path / "alone"
    )
    assert alone == (["Dockerfile:7"], "gunicorn", 2)


_DEPLOY_DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /srv
COPY app/ /srv/app
COPY start.sh /srv/start.sh
ENTRYPOINT ["/srv/start.sh"]
"""


def test_context_lacking_the_copy_sources_is_the_folder_above_that_holds_them(
    tmp_path: Path,
) -> None:
    """deploy/chart/Dockerfile copies `app/` and `start.sh`, which are at the repository root,
    and deploy/chart/compose.yaml builds it with `context: .` (a folder without them, where the
    build would fail): the image is built from the root (`docker build -f
    deploy/chart/Dockerfile .`), so its ENTRYPOINT is the root's start.sh and its gunicorn;
    a build-context note names the assumption. (Seen in topoteretes/cognee's helm folder.)"""
    root = write(
        tmp_path,
        {
            "deploy/chart/Dockerfile": _DEPLOY_DOCKERFILE,
            "deploy/chart/compose.yaml": (
                "services:\n  api:\n    build:\n      context: .\n      dockerfile: Dockerfile\n"
            ),
            "start.sh": "#!/bin/sh\nexec gunicorn --workers 3 --bind 0.0.0.0:8000 app.wsgi\n",
            "app/wsgi.py": "application = None\n",
        },
    )
    result = check_folder(root)
    assert [c for c in chains(result, root) if "start.sh:2" in c[0]] == [
        (["deploy/chart/compose.yaml:2", "deploy/chart/Dockerfile:5", "start.sh:2"], "gunicorn", 3)
    ]
    (assumed,) = [n for n in result.notes if n.kind == "build-context"]
    assert "deploy/chart" in assumed.message
    assert "(assumed)" in assumed.message


def test_dockerfile_folder_lacking_a_copy_source_is_not_its_context(tmp_path: Path) -> None:
    """deploy/Dockerfile, no file naming its context, copies `app/` (only at the root) and
    `start.sh` (at the root, and another beside the Dockerfile): built from deploy/ the COPY
    of `app/` fails, so the image is built from the root and runs the root's start.sh (5
    workers), not the one beside the Dockerfile (2)."""
    root = write(
        tmp_path,
        {
            "deploy/Dockerfile": _DEPLOY_DOCKERFILE,
            "deploy/start.sh": "#!/bin/sh\nexec gunicorn --workers 2 --bind :8000 app.wsgi\n",
            "start.sh": "#!/bin/sh\nexec gunicorn --workers 5 --bind :8000 app.wsgi\n",
            "app/wsgi.py": "application = None\n",
        },
    )
    result = check_folder(root)
    assert [c for c in chains(result, root) if c[0][0] == "deploy/Dockerfile:5"] == [
        (["deploy/Dockerfile:5", "start.sh:2"], "gunicorn", 5)
    ]
    assert [n.kind for n in result.notes].count("build-context") == 1


def test_a_deep_dockerfile_copying_its_own_path_is_built_from_the_repository_root(
    tmp_path: Path,
) -> None:
    """docker/api/prod/web/Dockerfile, four folders down, copies
    `./docker/api/prod/web/entrypoint` and `./api`: only the repository's root holds both, so
    it is its context and the ENTRYPOINT is followed to its gunicorn, not given up as outside
    a context `docker/` (which holds an `api/` folder by chance, and so the `./api` COPY).
    (Seen in MaibornWolff/SecObserve's docker/backend/prod/django/Dockerfile.)"""
    root = write(
        tmp_path,
        {
            "docker/api/prod/web/Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\n"
                "COPY ./docker/api/prod/web/entrypoint /entrypoint\n"
                "COPY ./api /app\n"
                'ENTRYPOINT ["/entrypoint"]\n'
            ),
            "docker/api/prod/web/entrypoint": (
                "#!/bin/sh\nexec gunicorn --workers 3 --bind 0.0.0.0:5000 app.wsgi\n"
            ),
            "docker/api/prod/database/ca.pem": "certificate\n",
            "api/app/wsgi.py": "application = None\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["docker/api/prod/web/Dockerfile:5", "docker/api/prod/web/entrypoint:2"], "gunicorn", 3)
    ]
    (assumed,) = [n for n in result.notes if n.kind == "build-context"]
    assert f"built from {root} (assumed)" in assumed.message


_SELECTED = """\
ARG env
FROM python:3.12 AS base
WORKDIR /app

FROM base AS production
CMD gunicorn -w 2 app:app

FROM base AS development
CMD flask run

FROM ${env} AS final
"""


def test_a_final_stage_selecting_a_stage_by_an_unset_arg_reads_each_candidate(
    tmp_path: Path,
) -> None:
    """`ARG env` (no default) and a last stage that is only `FROM ${env} AS final` (seen in
    boxwise/boxtribute's back/Dockerfile): the argument can only name one of the file's
    stages, so the `production` stage's gunicorn is a launch marked with a `server-chosen`
    note at its CMD naming `--build-arg env=production`; the `development` stage's `flask run`
    is no server and no launch; the FROM line keeps its not-followed note."""
    result = check_folder(write(tmp_path, {"Dockerfile": _SELECTED}))
    assert [(c, s, w) for c, s, w in chains(result, tmp_path)] == [
        (["Dockerfile:6"], "gunicorn", 2)
    ]
    kinds = sorted((n.kind, n.at.line) for n in result.notes if n.at.file.name == "Dockerfile")
    assert kinds == [("not-followed", 11), ("server-chosen", 6)]
    (chosen,) = [n for n in result.notes if n.kind == "server-chosen"]
    assert "--build-arg env=production" in chosen.message


def test_a_final_stage_from_an_unset_arg_that_adds_its_own_steps_is_not_followed(
    tmp_path: Path,
) -> None:
    """`ARG BASE_IMAGE` (no default), then `FROM ${BASE_IMAGE}` followed by a COPY and a CMD
    of its own (seen in jazzband/website's Dockerfile.app): the argument names an outside
    image, not a stage, so no stage beside it is read as the image: a not-followed note, no
    launch, even where a stage beside it runs gunicorn."""
    image = (
        "ARG BASE_IMAGE\nFROM python:3.12 AS web\nCMD gunicorn -w 2 app:app\n"
        "FROM ${BASE_IMAGE}\nCOPY . /app\nCMD ./run.sh\n"
    )
    result = check_folder(write(tmp_path, {"Dockerfile": image, "run.sh": "echo hi\n"}))
    assert chains(result, tmp_path) == []
    assert not [n for n in result.notes if n.kind == "server-chosen"]
