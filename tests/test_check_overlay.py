"""Compose overlays: a compose file that completes the base file beside it is read as the
project the two make, merged per service as Compose merges `-f base -f overlay` (the overlay's
values winning; https://docs.docker.com/reference/compose-file/merge/), with a note naming it;
a file that runs alone is its own project. Each repository here is written by the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

IMAGE = """FROM python:3.12-slim
WORKDIR /app
COPY . /app
"""
#: The web service of the base file: the development command, GUNICORN_OPTS of its own.
BASE = """services:
  web:
    build: .
    command: docker/web.sh
    environment:
      - GUNICORN_OPTS=--workers 1 --reload
      - MODE=dev
  solr:
    image: solr:9
"""
WEB = "#!/bin/sh\nexec gunicorn $GUNICORN_OPTS -b :8080 app:app\n"


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def from_file(result: CheckResult, name: str) -> list[tuple[str, int, bool]]:
    """(service, workers, reloads) of the apps whose container is in the file `name`."""
    return [
        (a.container.name, int(a.workers.value), a.reloads is not None)
        for a in result.apps
        if a.container is not None and a.container.at.file.name == name
    ]


def test_a_labelled_overlay_that_cannot_run_alone_is_read_merged(tmp_path: Path) -> None:
    """compose.production.yaml sets only web's environment (and solr's, with no image: it
    cannot run alone): merged over compose.yaml, web runs the base's command with the
    production GUNICORN_OPTS (25 workers, no --reload); the base alone keeps its dev values;
    a note names the overlay and its base."""
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": BASE,
            "compose.production.yaml": "services:\n  web:\n    environment:\n"
            "      - GUNICORN_OPTS=--workers 25 --timeout 300\n"
            "  solr:\n    environment:\n      SOLR_HEAP: 8g\n",
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert from_file(result, "compose.production.yaml") == [("web", 25, False)]
    assert from_file(result, "compose.yaml") == [("web", 1, True)]
    (overlay,) = [n for n in result.notes if n.kind == "overlay"]
    assert overlay.at.file.name == "compose.production.yaml"
    assert "merged over compose.yaml" in overlay.message
    # The chain: the overlay's service, then the base's command line, then the script.
    (chain,) = [
        [at.file.name for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
        and launch.app.container.at.file.name == "compose.production.yaml"
    ]
    assert chain == ["compose.production.yaml", "compose.yaml", "web.sh"]


def test_the_override_file_is_merged_by_default(tmp_path: Path) -> None:
    """compose.override.yaml, which `docker compose up` merges by default, sets web's
    GUNICORN_OPTS in the mapping form over the base's list: merged by name, the base's
    command runs with 6 workers."""
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": BASE,
            "compose.override.yaml": "services:\n  web:\n"
            "    environment:\n      GUNICORN_OPTS: --workers 6\n",
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert from_file(result, "compose.override.yaml") == [("web", 6, False)]
    assert [n.kind for n in result.notes].count("overlay") == 1


def test_a_labelled_file_that_runs_alone_is_its_own_project(tmp_path: Path) -> None:
    """docker-compose.prod.yml builds its own image and sets its own command (the usual
    `docker compose -f docker-compose.prod.yml up`): it is read alone, not merged over
    docker-compose.yml (whose dev --reload would otherwise leak into it)."""
    root = write(
        tmp_path / "library",
        {
            "docker-compose.yml": BASE,
            "docker-compose.prod.yml": "services:\n  web:\n    build: .\n"
            '    command: ["gunicorn", "-w", "4", "app:app"]\n',
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert from_file(result, "docker-compose.prod.yml") == [("web", 4, False)]
    assert not [n for n in result.notes if n.kind == "overlay"]


def test_an_overlay_build_target_uses_the_bases_build_context(tmp_path: Path) -> None:
    """docker-compose.final.yml sets `build: {target: final}` only (alone, its folder has no
    Dockerfile): merged over the base's `build: {context: .., dockerfile: docker/Dockerfile,
    target: dev}`, web runs the final stage's uWSGI; the worker, which takes the base's
    celery entrypoint, starts no server."""
    dockerfile = (
        "FROM python:3.12 AS base\nWORKDIR /app\nCOPY docker/uwsgi.ini /app/uwsgi.ini\n"
        'FROM base AS dev\nCMD ["flask", "run"]\n'
        'FROM base AS final\nCMD ["uwsgi", "--ini", "/app/uwsgi.ini"]\n'
    )
    root = write(
        tmp_path / "netapp",
        {
            "development/docker-compose.yml": "services:\n  web:\n    build:\n"
            "      context: ..\n      dockerfile: docker/Dockerfile\n      target: dev\n"
            "    image: local/netapp-dev\n"
            "  worker:\n    image: local/netapp-dev\n"
            '    entrypoint: "celery -A netapp worker"\n',
            "development/docker-compose.final.yml": "services:\n  web:\n    build:\n"
            "      target: final\n    image: local/netapp-final\n"
            "  worker:\n    image: local/netapp-final\n",
            "docker/Dockerfile": dockerfile,
            "docker/uwsgi.ini": "[uwsgi]\nmodule = app:app\nhttp-socket = :8080\nprocesses = 3\n",
        },
    )
    result = check(root)
    assert from_file(result, "docker-compose.final.yml") == [("web", 3, False)]
    assert from_file(result, "docker-compose.yml") == []


def test_a_labelled_file_whose_build_is_not_here_in_either_file_runs_alone(
    tmp_path: Path,
) -> None:
    """docker-compose.prod.yml builds `../backend` (its Dockerfile not among the files here,
    nor is the base's): nothing says it cannot run alone, so it is not merged."""
    root = write(
        tmp_path / "library",
        {
            "deploy/docker-compose.yml": "services:\n  api:\n    build: ../backend\n"
            '    command: ["gunicorn", "-w", "1", "--reload", "app:app"]\n',
            "deploy/docker-compose.prod.yml": "services:\n  api:\n    build: ../backend\n"
            '    command: ["gunicorn", "-w", "4", "app:app"]\n',
        },
    )
    result = check(root)
    assert from_file(result, "docker-compose.prod.yml") == [("api", 4, False)]
    assert not [n for n in result.notes if n.kind == "overlay"]


def test_a_labelled_overlay_runs_behind_the_front_of_its_base(tmp_path: Path) -> None:
    """The base file's nginx (a bind-mounted nginx.conf passing to `fastapi:8000`) fronts the
    overlay's `fastapi` too: `-f base -f overlay` is one project, and the front is in it."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\n",
            "docker-compose.yml": "services:\n  fastapi:\n    build: .\n"
            "    command: gunicorn --bind 0.0.0.0:8000 --timeout 60 -w 2 app:app\n"
            "  nginx:\n    image: nginx:1.25\n    volumes:\n"
            "      - ./nginx/nginx.conf:/etc/nginx/nginx.conf:ro\n",
            "docker-compose.prod.yml": "services:\n  fastapi:\n"
            "    command: gunicorn --bind 0.0.0.0:8000 --timeout 60 -w 4 app:app\n",
            "nginx/nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n"
            "    location / { proxy_pass http://fastapi:8000; proxy_read_timeout 90s; }\n"
            "  }\n}\n",
        },
    )
    result = check(root)
    fronted = {
        (launch.chain[0].file.name, launch.app.workers.value): [
            at.file.name for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronted == {
        ("docker-compose.yml", 2): ["nginx.conf"],
        ("docker-compose.prod.yml", 4): ["nginx.conf"],
    }, fronted


def test_compose_merge_tags_reset_and_override_are_read(tmp_path: Path) -> None:
    """`ports: !reset []` and `environment: !override {...}` (Compose's merge tags) are data,
    not a refused YAML tag: the override replaces web's environment whole (6 workers, no
    --reload), and the reset drops the base's ports."""
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": BASE.replace(
                "    build: .\n", "    build: .\n    ports: ['8080:8080']\n"
            ),
            "compose.override.yaml": "services:\n  web:\n    ports: !reset []\n"
            "    environment: !override\n      GUNICORN_OPTS: --workers 6\n",
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert not result.errors
    assert from_file(result, "compose.override.yaml") == [("web", 6, False)]


def test_a_third_party_images_command_its_server_refuses_alone_is_not_followed(
    tmp_path: Path,
) -> None:
    """`image: vendor/mcp:stable` with `command: ["uvicorn", "--port", "8000"]` (no app: the
    image's ENTRYPOINT, not here, adds it) is a not-followed note at the service, and the
    rest of the file is judged (the web service's gunicorn): never the file refused."""
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": BASE + "  mcp:\n    image: vendor/mcp:stable\n"
            '    command: ["uvicorn", "--host", "0.0.0.0", "--port", "8000"]\n',
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert not result.errors
    assert from_file(result, "compose.yaml") == [("web", 1, True)]
    (followed,) = [n for n in result.notes if n.kind == "not-followed" and "mcp" in n.message]
    assert followed.at.line == 10  # the service


def test_a_compose_command_string_is_split_as_compose_splits_it(tmp_path: Path) -> None:
    """`command: sh -c "... gunicorn ... --timeout 600 \\ --workers 8"` as a plain YAML scalar:
    Compose (go-shellwords) takes `\\ ` inside the double quotes as an escaped space, so the
    shell gets `--workers 8` (POSIX shlex kept the backslash and gunicorn refused the word
    ` --workers`, exit 2): gunicorn with 8 workers. Other backslashes stay as sh reads them."""
    from servertune.check.compose import shell_words

    assert shell_words('sh -c "a && b --t 6 \\ --w 8"') == ["sh", "-c", "a && b --t 6  --w 8"]
    assert shell_words("a 'b \\ c' d\\ e") == ["a", "b \\ c", "d e"]
    assert shell_words("""sh -c "sed 's/\\r$//' a > b" """) == ["sh", "-c", "sed 's/\\r$//' a > b"]
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": 'services:\n  web:\n    build: .\n    command: sh -c "\n'
            "        ./manage.py migrate &&\n"
            "        gunicorn app.wsgi --bind :8000 --timeout 600 \\\n"
            '          --workers 8 --worker-tmp-dir /dev/shm"\n',
            "Dockerfile": IMAGE,
        },
    )
    result = check(root)
    assert not result.errors
    assert from_file(result, "compose.yaml") == [("web", 8, False)]


def test_an_overlay_of_a_base_file_not_named_compose_yaml_is_read_merged(tmp_path: Path) -> None:
    """compose/base.yml and compose/override.dev.yml (seen in hunvreus/devpush, given as
    `docker compose -f base.yml -f override.dev.yml`): the override names only services of
    base.yml, and its web has neither `image` nor `build`, so it cannot run alone; it is read
    merged over base.yml (web runs the base's command with its GUNICORN_OPTS), a note naming
    the base, and base.yml itself, complete, is no overlay of it."""
    root = write(
        tmp_path / "library",
        {
            "compose/base.yml": BASE.replace("build: .", "build: ..").replace(
                "command: docker/web.sh", "command: /app/docker/web.sh"
            ),
            "compose/override.dev.yml": "services:\n  web:\n    environment:\n"
            "      - GUNICORN_OPTS=--workers 3\n",
            "Dockerfile": IMAGE,
            "docker/web.sh": WEB,
        },
    )
    result = check(root)
    assert from_file(result, "override.dev.yml") == [("web", 3, False)]
    (overlay,) = [n for n in result.notes if n.kind == "overlay"]
    assert overlay.at.file.name == "override.dev.yml"
    assert "merged over base.yml" in overlay.message


def test_a_service_whose_script_starts_no_server_leaves_the_others_read(tmp_path: Path) -> None:
    """A compose file's worker service runs a script that starts no server check reads (a
    task queue's worker), listed before the web service: that service starts nothing, and
    the web service's gunicorn is still read, not the whole file said to start no server
    (seen in hunvreus/devpush's override.dev.yml)."""
    root = write(
        tmp_path / "library",
        {
            "compose.yaml": "services:\n  worker:\n    build: .\n    entrypoint: /worker.sh\n"
            "  web:\n    build: .\n    entrypoint: /web.sh\n"
            "    environment:\n      - GUNICORN_OPTS=--workers 2\n",
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n"
            "COPY docker/worker.sh /worker.sh\nCOPY docker/web.sh /web.sh\n",
            "docker/web.sh": WEB,
            "docker/worker.sh": "#!/bin/sh\nset -e\nexec uv run arq workers.Settings\n",
        },
    )
    result = check(root)
    assert from_file(result, "compose.yaml") == [("web", 2, False)]


def test_a_file_whose_services_extend_another_files_is_not_its_overlay(tmp_path: Path) -> None:
    """docker-compose.yml whose web only `extends: {file: docker-compose.apps.yml, service:
    web}` (as seen in mitodl/mit-learn) takes that one service's settings, as Compose's
    `extends` does: it runs alone, so it is not read merged over docker-compose.apps.yml as an
    overlay of the whole file (no `overlay` note), and its web runs the extended command."""
    root = write(
        tmp_path / "library",
        {
            "docker-compose.apps.yml": "services:\n  web:\n    image: acme/web\n"
            "    command: gunicorn -w 4 -b 0.0.0.0:8000 app:app\n"
            "  api:\n    image: acme/api\n"
            "    command: uvicorn --host 0.0.0.0 --port 8001 api:app\n",
            "docker-compose.yml": "services:\n  web:\n    extends:\n"
            "      file: docker-compose.apps.yml\n      service: web\n"
            "    environment:\n      DEBUG: '0'\n",
        },
    )
    result = check(root)
    assert not [n for n in result.notes if n.kind == "overlay"]
    assert from_file(result, "docker-compose.yml") == [("web", 4, False)]


def test_a_front_mounted_by_one_file_of_a_base_and_overlay_pair_fronts_its_launch_only(
    tmp_path: Path,
) -> None:
    """docker-compose.yml's nginx mounts nginx.conf and runs gunicorn; docker-compose.dev.yml
    (an overlay: its services have no image of their own) mounts nginx.dev.conf in nginx's
    place and runs uvicorn --reload (as seen in neurostuff/neurostore): the production
    gunicorn is behind nginx.conf only, the development uvicorn behind nginx.dev.conf only."""
    site = "events {}\nhttp { server { listen 80; location / { proxy_pass http://app:8000; } } }\n"
    root = write(
        tmp_path / "store",
        {
            "nginx/nginx.conf": site,
            "nginx/nginx.dev.conf": site,
            "docker-compose.yml": "services:\n  app:\n    image: acme/app\n"
            "    command: gunicorn -w 4 -b :8000 app:app\n"
            "  nginx:\n    image: nginx:1.27\n"
            "    volumes:\n      - ./nginx/nginx.conf:/etc/nginx/nginx.conf:ro\n",
            "docker-compose.dev.yml": "services:\n  app:\n"
            "    command: uvicorn --host 0.0.0.0 --port 8000 --reload app:app\n"
            "  nginx:\n"
            "    volumes:\n      - ./nginx/nginx.dev.conf:/etc/nginx/nginx.conf:ro\n",
        },
    )
    result = check(root)
    fronts = {
        (launch.app.kind, launch.app.container.at.file.name if launch.app.container else ""): {
            at.file.name for at in launch.fronts
        }
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronts == {
        ("gunicorn", "docker-compose.yml"): {"nginx.conf"},
        ("uvicorn", "docker-compose.dev.yml"): {"nginx.dev.conf"},
    }


def test_a_front_its_base_runs_from_a_published_stage_fronts_the_bases_launch(
    tmp_path: Path,
) -> None:
    """docker-compose.yml runs published images named for the Dockerfile's stages, each tag
    written with a variable's default (`ghcr.io/acme/radio-nginx:${VERSION:-latest}`, the stage
    `radio-nginx` copying docker/nginx.conf); the override beside it builds them and mounts
    docker/nginx.conf into its nginx while its api runs a development command (as seen in
    libretime/libretime): the base's nginx runs that front too, so the base's gunicorn on
    api:9001 is behind it."""
    root = write(
        tmp_path / "radio",
        {
            "Dockerfile": "FROM python:3.12-slim AS radio-api\nWORKDIR /app\n"
            'CMD ["gunicorn", "--workers=4", "--bind=0.0.0.0:9001", "radio.asgi"]\n'
            "FROM nginx AS radio-nginx\nCOPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n",
            "docker/nginx.conf": "server {\n  listen 8080;\n"
            "  location /api/ { proxy_pass http://api:9001; }\n}\n",
            "docker-compose.yml": "services:\n  api:\n"
            "    image: ghcr.io/acme/radio-api:${VERSION:-latest}\n"
            "  nginx:\n    image: ghcr.io/acme/radio-nginx:${VERSION:-latest}\n"
            "    ports:\n      - 8080:8080\n",
            "docker-compose.override.yml": "services:\n  api:\n"
            "    build:\n      context: .\n      target: radio-api\n"
            "    command: radio-api runserver 0.0.0.0:9001\n"
            "  nginx:\n    build:\n      context: .\n      target: radio-nginx\n"
            "    volumes:\n      - ./docker/nginx.conf:/etc/nginx/conf.d/default.conf:ro\n",
        },
    )
    result = check(root)
    fronts = {
        launch.app.kind: {f"{at.file.name}:{at.line}" for at in launch.fronts}
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronts == {"gunicorn": {"nginx.conf:3"}}


def test_an_overlay_in_a_subfolder_is_merged_with_paths_from_the_bases_folder(
    tmp_path: Path,
) -> None:
    """deploy/compose.prod.yml redefines the root compose.yml's `web` with a command and a
    `build: {target: prod}` only (alone, deploy/ has no Dockerfile), and adds a Caddy mounting
    `./deploy/Caddyfile`: it is an overlay of the root file wherever it sits, given as
    `docker compose -f compose.yml -f deploy/compose.prod.yml`, whose relative paths are
    all resolved from the first file's folder (Compose's "Merge" rule for several files). So
    web runs the prod stage's gunicorn, behind the Caddy. Seen in
    alan-turing-institute/AutSPACEs (docker/docker-compose.prod.yml)."""
    root = write(
        tmp_path / "site",
        {
            "compose.yml": "services:\n  web:\n    build:\n      context: .\n"
            "      dockerfile: ./docker/Dockerfile\n      target: dev\n"
            "    command: python manage.py runserver 0.0.0.0:8000\n",
            "deploy/compose.prod.yml": "services:\n  caddy:\n    image: caddy:2\n"
            "    volumes:\n      - ./deploy/Caddyfile:/etc/caddy/Caddyfile\n"
            "  web:\n    build:\n      target: prod\n"
            "    command: sh ./deploy/web.sh\n",
            "deploy/web.sh": "#!/bin/sh\ngunicorn -w 3 -b 0.0.0.0:8000 app.wsgi\n",
            "deploy/Caddyfile": ":80 {\n  reverse_proxy web:8000\n}\n",
            "docker/Dockerfile": "FROM python:3.12 AS dev\nWORKDIR /code\nCOPY . /code\n"
            "FROM dev AS prod\n",
        },
    )
    result = check(root)
    fronted = {
        (launch.chain[0].file.name, launch.app.workers.value): [
            at.file.name for at in launch.fronts
        ]
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    }
    assert fronted == {("compose.prod.yml", 3): ["Caddyfile"]}, fronted


def test_a_base_service_the_override_redefines_is_one_launch(tmp_path: Path) -> None:
    """docker-compose.override.yml redefines `web` (an environment of its own): `docker
    compose up` merges it by default, so `web` is one launch, read merged from the override;
    the base's `worker`, which the override leaves alone, is still read from the base. Seen
    in mozilla-services/eliot (each service was shown alone and merged)."""
    root = write(
        tmp_path / "svc",
        {
            "Dockerfile": IMAGE,
            "docker-compose.yml": "services:\n  web:\n    build: .\n"
            "    command: gunicorn -w 2 -b :8000 app:app\n"
            "  api:\n    build: .\n    command: gunicorn -w 3 -b :8001 api:app\n",
            "docker-compose.override.yml": "services:\n  web:\n    environment:\n      - DEBUG=1\n",
        },
    )
    result = check(root)
    found = sorted(
        (launch.chain[0].file.name, launch.app.workers.value)
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    )
    assert found == [("docker-compose.override.yml", 2), ("docker-compose.yml", 3)], found


def test_an_override_named_file_that_only_adds_keys_is_an_overlay(tmp_path: Path) -> None:
    """`docker-compose.override-build.yml` whose services are all the base's and only add keys
    (`build:` to services that pull an `image:`, environment) completes docker-compose.yml:
    read merged over it, as `docker-compose -f docker-compose.yml -f
    docker-compose.override-build.yml` reads them (seen in StartupsPoleEmploi/trefle, whose
    base's nginx mount then fronts the services). One that changes a key the base sets
    (`command`), or whose name does not say override, is still read alone."""
    from servertune.check.overlay import base_of, services_in

    base = "services:\n  web:\n    image: reg/app:1\n    command: run\n  nginx:\n    image: nginx\n"
    adds = "services:\n  web:\n    build: .\n    environment:\n      A: b\n"
    changes = "services:\n  web:\n    build: .\n    command: other\n"
    root = write(
        tmp_path,
        {
            "docker-compose.yml": base,
            "docker-compose.override-build.yml": adds,
            "docker-compose.override-cmd.yml": changes,
            "docker-compose.prod-build.yml": adds,
        },
    )

    def base_name(name: str) -> str | None:
        services = services_in(root / name)
        assert services is not None
        found = base_of(root / name, services)
        return None if found is None else found.name

    assert base_name("docker-compose.override-build.yml") == "docker-compose.yml"
    assert base_name("docker-compose.override-cmd.yml") is None
    assert base_name("docker-compose.prod-build.yml") is None


def test_a_copy_to_rename_is_read_as_the_override_it_becomes(tmp_path: Path) -> None:
    """`docker-compose.override.template.yml`, a copy the operator renames to the override
    Compose loads, whose service cannot run alone (no `image`, no `build`): read merged over
    docker-compose.yml as it will be once renamed, so a front that runs only from it is kept
    (seen in kartoza/django-bims, whose nginx service is in that file)."""
    from servertune.check.overlay import base_of, services_in

    root = write(
        tmp_path,
        {
            "docker-compose.yml": "services:\n  web:\n    image: reg/app:1\n",
            "docker-compose.override.template.yml": "services:\n  web:\n    environment:\n"
            "      DEBUG: '1'\n",
        },
    )
    copy = root / "docker-compose.override.template.yml"
    services = services_in(copy)
    assert services is not None
    assert base_of(copy, services) == root / "docker-compose.yml"


def test_a_merge_key_in_the_base_is_flattened_before_the_overlay_merges(tmp_path: Path) -> None:
    """A base service written `<<: *common` takes the anchor's keys when the file is loaded
    (YAML's merge type), so an overlay's `environment` merges by name with the anchor's
    WEB_CONCURRENCY=4 instead of replacing it: the merged web runs 4 workers. Seen with
    `<<: *backend` in akvo/akvo-rsr's ci/k8s/deployment.yml."""
    root = write(
        tmp_path / "library",
        {
            "Dockerfile": IMAGE,
            "app.py": "app = None\n",
            "docker-compose.yml": "x-common: &common\n  build: .\n"
            "  command: gunicorn -b :8000 app:app\n"
            '  environment:\n    WEB_CONCURRENCY: "4"\n'
            "services:\n  web:\n    <<: *common\n",
            "docker-compose.override.yml": 'services:\n  web:\n    environment:\n      MODE: "x"\n',
        },
    )
    assert from_file(check(root), "docker-compose.override.yml") == [("web", 4, False)]


def test_a_front_mounted_by_one_overlay_fronts_the_launch_of_that_overlays_merge_only(
    tmp_path: Path,
) -> None:
    """docker-compose.production.yml, .staging.yml and .override.yml each complete the base
    file's app and each bind-mount their own nginx config into the base's `web` (as seen in
    WikipediaLibrary/TWLight): `-f base -f production` runs production's nginx in front of
    production's gunicorn, never staging's or the local override's, so each gunicorn is
    behind its own overlay's front only (a local `--timeout 300` is never judged against the
    production nginx)."""
    site = "server { listen 80; location / { proxy_pass http://app:8000; } }\n"
    overlay = (
        "services:\n  app:\n    image: acme/app:{env}\n"
        "    command: gunicorn --timeout {timeout} -b :8000 app:app\n"
        "  web:\n    volumes:\n      - ./conf/{env}.nginx.conf:/etc/nginx/conf.d/default.conf\n"
    )
    files = {f"conf/{env}.nginx.conf": site for env in ("production", "staging", "local")}
    root = write(
        tmp_path / "library",
        {
            **files,
            "docker-compose.yml": "services:\n  app:\n    build: .\n"
            "    command: gunicorn -b :8000 app:app\n"
            "  web:\n    image: nginx:1.27\n    depends_on: [app]\n",
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n",
            "docker-compose.production.yml": overlay.format(env="production", timeout=30),
            "docker-compose.staging.yml": overlay.format(env="staging", timeout=30),
            "docker-compose.override.yml": overlay.format(env="local", timeout=300),
        },
    )
    result = check(root)
    fronts = {
        launch.app.container.at.file.name if launch.app.container else "": {
            at.file.name for at in launch.fronts
        }
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronts == {
        "docker-compose.yml": set(),
        "docker-compose.production.yml": {"production.nginx.conf"},
        "docker-compose.staging.yml": {"staging.nginx.conf"},
        "docker-compose.override.yml": {"local.nginx.conf"},
    }


def test_traefik_labels_of_one_overlay_front_the_launch_of_that_overlays_merge_only(
    tmp_path: Path,
) -> None:
    """docker/docker-compose.traefik-ingress.yaml sets Traefik labels on the base's `web`,
    docker/docker-compose.static-ingress.yaml publishes its port instead (as seen in
    uwcirg/truenth-portal): the two are other deployments of the base, so Traefik fronts the
    launch of the traefik-ingress merge and never the static-ingress one."""
    root = write(
        tmp_path / "portal",
        {
            "docker/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["gunicorn", "--bind", "0.0.0.0:8008", "wsgi:application"]\n',
            "docker/docker-compose.yaml": "services:\n  web:\n    build:\n"
            "      context: ..\n      dockerfile: docker/Dockerfile\n",
            "docker/docker-compose.static-ingress.yaml": "services:\n  web:\n"
            "    ports:\n      - 127.0.0.1:8080:8008\n",
            "docker/docker-compose.traefik-ingress.yaml": "services:\n  web:\n    labels:\n"
            "      - traefik.enable=true\n"
            "      - traefik.http.routers.portal.rule=Host(`portal.example.org`)\n"
            "      - traefik.http.services.portal.loadbalancer.server.port=8008\n",
        },
    )
    result = check(root)
    fronts = {
        launch.app.container.at.file.name if launch.app.container else "": {
            at.file.name for at in launch.fronts
        }
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronts.get("docker-compose.static-ingress.yaml", set()) == set()
    assert fronts["docker-compose.traefik-ingress.yaml"] == {"docker-compose.traefik-ingress.yaml"}
