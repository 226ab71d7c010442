"""Which Dockerfile builds the image a compose service's or a Kubernetes container's `image:`
names, when nothing there builds it: linked only on evidence in the files (a service that
builds and tags the name, a Dockerfile named for it, the files its services start, the
repository's own name), else a not-followed note naming the image; the linked container's
environment and limits reach the server. Each repository here is written by the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: A Dockerfile whose image starts gunicorn through an entrypoint, with as many workers as its
#: container's WORKERS says.
GUNICORN_IMAGE = """FROM python:3.12-slim
WORKDIR /app
COPY start.sh /usr/local/bin/start.sh
CMD ["/usr/local/bin/start.sh"]
"""
START = '#!/bin/sh\nexec gunicorn --workers "${WORKERS:-1}" -b 0.0.0.0:8000 app:app\n'
#: The frontend's image: nginx and its files, no command of its own.
NGINX_IMAGE = "FROM nginx:1.27\nCOPY site/ /usr/share/nginx/html/\n"


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def chains(result: CheckResult, root: Path) -> list[list[str]]:
    return [
        [at.file.relative_to(root).as_posix() for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def unfollowed(result: CheckResult) -> list[str]:
    return [n.message for n in result.notes if n.kind == "not-followed"]


def test_an_image_another_service_builds_and_tags_is_that_build(tmp_path: Path) -> None:
    """compose.build.yaml builds docker/web.Dockerfile as `acme/site:2.1`; the deployment's
    compose.yaml runs `acme/site:2.1` with WORKERS=5: that service runs that build, its
    environment reaching gunicorn (5 workers), though another Dockerfile starts a server too."""
    root = write(
        tmp_path / "site",
        {
            "compose.build.yaml": "services:\n  app:\n    build:\n      context: .\n"
            "      dockerfile: docker/web.Dockerfile\n    image: acme/site:2.1\n",
            "deploy/compose.yaml": "services:\n  web:\n    image: acme/site:2.1\n"
            '    environment:\n      WORKERS: "5"\n',
            "docker/web.Dockerfile": GUNICORN_IMAGE.replace(
                "COPY start.sh", "COPY docker/start.sh"
            ),
            "docker/start.sh": START,
            "tools/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "tools:app"]\n',
        },
    )
    result = check(root)
    deployed = [a for a in result.apps if a.container is not None and a.container.name == "web"]
    assert [a.workers.value for a in deployed] == [5]
    assert ["deploy/compose.yaml", "docker/web.Dockerfile", "docker/start.sh"] in chains(
        result, root
    )


def test_an_image_named_for_a_dockerfiles_folder_is_that_dockerfile(tmp_path: Path) -> None:
    """In the repository `shop`, `acme/shop-backend` is backend/Dockerfile (the name's own
    word once the repository's is left out) and `acme/shop-api` is api/Dockerfile.api; the
    service's CPU limit and WORKERS reach the gunicorn each starts."""
    root = write(
        tmp_path / "shop",
        {
            "compose.yaml": "services:\n"
            "  backend:\n    image: acme/shop-backend:1.0\n    cpus: 2\n"
            '    environment:\n      WORKERS: "4"\n'
            "  api:\n    image: acme/shop-api:1.0\n"
            '    environment:\n      WORKERS: "3"\n'
            "  frontend:\n    build: ./frontend\n",
            "backend/Dockerfile": GUNICORN_IMAGE,
            "backend/start.sh": START,
            "api/Dockerfile.api": GUNICORN_IMAGE,
            "api/start.sh": START,
            "frontend/Dockerfile": NGINX_IMAGE,
        },
    )
    result = check(root)
    by_service = {a.container.name: a for a in result.apps if a.container is not None}
    assert by_service["backend"].workers.value == 4
    assert by_service["backend"].container.cpu_limit.value == 2  # type: ignore[union-attr]
    assert by_service["api"].workers.value == 3
    assert ["compose.yaml", "api/Dockerfile.api", "api/start.sh"] in chains(result, root)


def test_an_image_is_the_dockerfile_holding_what_its_services_start(tmp_path: Path) -> None:
    """`acme/notes:backend` names no Dockerfile, but the `worker` service running it starts
    /opt/bin/worker.sh, which only docker/Dockerfile.prod copies (COPY tools/ /opt/bin/): the
    `web` service running the same image is that Dockerfile's gunicorn."""
    root = write(
        tmp_path / "notes",
        {
            "docker/compose.prod.yaml": "services:\n"
            '  web:\n    image: acme/notes:backend\n    environment:\n      WORKERS: "6"\n'
            '  worker:\n    image: acme/notes:backend\n    entrypoint: ["/opt/bin/worker.sh"]\n',
            "docker/Dockerfile.prod": "FROM python:3.12\nCOPY tools/ /opt/bin/\n"
            'ENTRYPOINT ["/opt/bin/start.sh"]\n',
            "docker/Dockerfile": 'FROM python:3.12\nCOPY . /notes\nCMD ["/notes/tools/start.sh"]\n',
            "tools/start.sh": START,
            "tools/worker.sh": "#!/bin/sh\nexec celery -A notes worker\n",
        },
    )
    result = check(root)
    (web,) = [a for a in result.apps if a.container is not None and a.container.name == "web"]
    assert web.workers.value == 6
    assert ["docker/compose.prod.yaml", "docker/Dockerfile.prod", "tools/start.sh"] in chains(
        result, root
    )


def test_the_repositorys_own_image_is_its_root_dockerfile(tmp_path: Path) -> None:
    """In the repository `owlapp`, `me/owlapp:latest` is the repository's own image: its root
    Dockerfile, not owlapp/Dockerfile (the web frontend's folder happens to share the name)."""
    root = write(
        tmp_path / "owlapp",
        {
            "compose.yaml": "services:\n  app:\n    image: me/owlapp:latest\n"
            '    environment:\n      WORKERS: "2"\n',
            "Dockerfile": GUNICORN_IMAGE,
            "start.sh": START,
            "owlapp/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "-w", "9", "x:app"]\n',
        },
    )
    result = check(root)
    assert ["compose.yaml", "Dockerfile", "start.sh"] in chains(result, root)
    (app,) = [a for a in result.apps if a.container is not None]
    assert app.workers.value == 2


def test_the_repositorys_own_image_runs_its_s6_services(tmp_path: Path) -> None:
    """`ghcr.io/papers/papers` in the repository `papers` is its one Dockerfile, whose
    ENTRYPOINT is s6-overlay's /init: the service runs the granian of the image's s6 service,
    with the service's GRANIAN_WORKERS."""
    root = write(
        tmp_path / "papers",
        {
            "docker/compose/docker-compose.sqlite.yml": "services:\n  webserver:\n"
            "    image: ghcr.io/papers/papers:latest\n"
            '    environment:\n      GRANIAN_WORKERS: "3"\n',
            "Dockerfile": 'FROM python:3.12\nCOPY docker/rootfs /\nENTRYPOINT ["/init"]\n',
            "docker/rootfs/etc/s6-overlay/s6-rc.d/svc-web/run": "#!/bin/sh\n"
            'exec granian --interface asgi --workers "${GRANIAN_WORKERS:-1}" app:app\n',
        },
    )
    result = check(root)
    (app,) = [a for a in result.apps if a.container is not None]
    assert (app.kind, app.workers.value) == ("granian", 3)
    assert [
        "docker/compose/docker-compose.sqlite.yml",
        "Dockerfile",
        "docker/rootfs/etc/s6-overlay/s6-rc.d/svc-web/run",
    ] in chains(result, root)


def test_an_image_several_dockerfiles_could_build_is_a_note_never_a_guess(
    tmp_path: Path,
) -> None:
    """`acme/shop-web` names none of the two Dockerfiles here (both start a server) and no
    file says which builds it: the service is not linked to either, and a not-followed note
    names the image and the count; `minio/minio`, another project's image, and
    `docker.io/postgres` (the library's, behind its registry's host) are no note."""
    root = write(
        tmp_path / "shop-docker",
        {
            "compose.yaml": "services:\n  web:\n    image: acme/shop-web:1.0\n"
            "  storage:\n    image: minio/minio:latest\n"
            "  db:\n    image: docker.io/postgres:16\n",
            "backend/Dockerfile": GUNICORN_IMAGE,
            "backend/start.sh": START,
            "admin/Dockerfile": GUNICORN_IMAGE,
            "admin/start.sh": START,
        },
    )
    result = check(root)
    assert not [a for a in result.apps if a.container is not None]
    notes = unfollowed(result)
    assert any("image acme/shop-web:1.0: 2 Dockerfiles here could build it" in n for n in notes)
    assert not any("minio" in n or "postgres" in n for n in notes)


#: A Deployment whose container runs `image` with no command, PORT and a CPU limit of its own.
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: {name}
          image: registry.example/bank/{name}:v1.2@sha256:0123
          env:
            - name: PORT
              value: "8080"
          resources:
            limits:
              cpu: 500m
"""
SHELL_FORM_IMAGE = "FROM python:3.12-slim\nCMD gunicorn -b :$PORT --threads 4 app:app\n"


def test_kubernetes_containers_run_the_dockerfile_named_for_their_image(tmp_path: Path) -> None:
    """Two Deployments (`users`, `ledger`) run images named for src/users/ and src/ledger/:
    each container is linked to its own Dockerfile's gunicorn, whose `-b :$PORT` is the
    container's PORT (8080) and whose CPU limit is the container's 0.5."""
    root = write(
        tmp_path / "bank",
        {
            "k8s/users.yaml": DEPLOYMENT.format(name="users"),
            "k8s/ledger.yaml": DEPLOYMENT.format(name="ledger"),
            "src/users/Dockerfile": SHELL_FORM_IMAGE,
            "src/ledger/Dockerfile": SHELL_FORM_IMAGE,
        },
    )
    result = check(root)
    linked = {
        a.container.name: a
        for a in result.apps
        if a.container is not None and a.container.platform == "kubernetes"
    }
    assert sorted(linked) == ["ledger", "users"]
    for app in linked.values():
        assert [s.value for s in app.sockets] == [":8080"]
        assert app.container.cpu_limit.value == 0.5  # type: ignore[union-attr]
    assert ["k8s/users.yaml", "src/users/Dockerfile"] in chains(result, root)
    assert not [n for n in result.notes if n.kind == "unresolved-variable"]


def test_kubernetes_image_naming_a_dev_stage_runs_that_stage(tmp_path: Path) -> None:
    """`image: local/app-dev` in the repository `app` names the Dockerfile's `dev` stage,
    whose CMD is a development server: the container is not linked to the final stage's
    gunicorn (which the Dockerfile alone still starts)."""
    root = write(
        tmp_path / "app",
        {
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123", "local/app-dev"
            ),
            "docker/Dockerfile": "FROM python:3.12 AS base\n"
            'FROM base AS dev\nCMD ["flask", "run"]\n'
            'FROM base AS final\nCMD ["gunicorn", "-b", "0.0.0.0:8000", "app:app"]\n',
        },
    )
    result = check(root)
    assert [a.container for a in result.apps] == [None]
    assert chains(result, root) == [["docker/Dockerfile"]]


def test_a_front_copied_into_an_image_a_service_runs_is_that_stacks(tmp_path: Path) -> None:
    """compose.yaml's `proxy` runs `acme/photos-proxy` (proxy/Dockerfile copies nginx.conf,
    which passes to `backend:8001`); unified/compose.yaml's `backend` runs
    `acme/photos-unified` (unified/Dockerfile): the front is compose.yaml's, so `backend` is
    never the unified stack's service, but the one Dockerfile no service runs."""
    gunicorn = 'FROM python:3.12\nCMD ["gunicorn", "-b", "0.0.0.0:8001", "app:app"]\n'
    root = write(
        tmp_path / "photos",
        {
            "compose.yaml": "services:\n  proxy:\n    image: acme/photos-proxy\n"
            "  backend:\n    image: acme/photos\n",
            "proxy/Dockerfile": "FROM nginx:1.27\nCOPY nginx.conf /etc/nginx/nginx.conf\n",
            "proxy/nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n"
            "    location / { proxy_pass http://backend:8001; }\n  }\n}\n",
            "backend/Dockerfile": gunicorn,
            "unified/compose.yaml": "services:\n  backend:\n    image: acme/photos-unified\n",
            "unified/Dockerfile": gunicorn,
        },
    )
    result = check(root)
    fronted = {
        launch.chain[0].file.relative_to(root).as_posix(): bool(launch.fronts)
        for launch in launches(result.apps, result.links, result.balancer_links)
    }
    assert fronted == {"backend/Dockerfile": True, "unified/compose.yaml": False}


#: A release workflow that writes the image's name and builds it from one Dockerfile.
_RELEASE = """\
name: release
env:
  GHCR_IMAGE_NAME: "ghcr.io/owl/owlapp"
jobs:
  build:
    steps:
      - name: Build and push image
        uses: docker/build-push-action@v6
        with:
          context: .
          file: {dockerfile}
          target: {target}
          tags: ${{{{ env.GHCR_IMAGE_NAME }}}}:latest
"""


def test_a_build_file_naming_another_dockerfile_beats_the_repositorys_name(
    tmp_path: Path,
) -> None:
    """In the repository `owlapp`, `ghcr.io/owl/owlapp:latest` would be its root Dockerfile
    by the name alone; its release workflow builds that name from rust/Dockerfile, which is
    not read here: no link to the root Dockerfile, a not-followed note naming the workflow.
    The same files in a folder named otherwise give the same graph."""
    files = {
        "compose.yaml": "services:\n  app:\n    image: ghcr.io/owl/owlapp:latest\n",
        "Dockerfile": GUNICORN_IMAGE,
        "start.sh": START,
        ".github/workflows/release.yml": _RELEASE.format(
            dockerfile="rust/Dockerfile", target="cli"
        ),
    }
    for name in ("owlapp", "elsewhere"):
        root = write(tmp_path / name, files)
        result = check(root)
        assert [c for c in chains(result, root) if c[0] == "compose.yaml"] == []
        assert any(
            ".github/workflows/release.yml:11 builds it from rust/Dockerfile, which was not read"
            in m
            for m in unfollowed(result)
        )


def test_a_build_file_joins_an_image_its_name_says_nothing_about(tmp_path: Path) -> None:
    """`ghcr.io/owl/owlapp` built by the release workflow from deploy/web.Dockerfile's `prod`
    stage: the compose service runs that stage's gunicorn (6 workers), not the `dev` stage's,
    in a folder whose name shares nothing with the image's."""
    root = write(
        tmp_path / "checkout",
        {
            "compose.yaml": "services:\n  app:\n    image: ghcr.io/owl/owlapp:latest\n",
            "deploy/web.Dockerfile": (
                "FROM python:3.12-slim AS base\nWORKDIR /app\n"
                'FROM base AS prod\nCMD ["gunicorn", "-w", "6", "-b", "0.0.0.0:8000", "app:app"]\n'
                'FROM base AS dev\nCMD ["gunicorn", "-w", "1", "--reload", "app:app"]\n'
            ),
            ".github/workflows/release.yml": _RELEASE.format(
                dockerfile="deploy/web.Dockerfile", target="prod"
            ),
        },
    )
    result = check(root)
    (app,) = [a for a in result.apps if a.container is not None]
    assert app.container is not None
    assert app.container.name == "app"
    assert app.workers.value == 6


def test_kubernetes_container_of_another_owners_image_is_not_the_runs_one_dockerfile(
    tmp_path: Path,
) -> None:
    """A Deployment running `vendor/dashboard:1.0.1` (no command), in a repository whose one
    Dockerfile starts uvicorn: nothing here builds that name, so the container is not linked
    to the Dockerfile, as a compose service of that image would not be; the Dockerfile's own
    launch stays."""
    manifest = DEPLOYMENT.format(name="dashboard").replace(
        "registry.example/bank/dashboard:v1.2@sha256:0123", "vendor/dashboard:1.0.1"
    )
    root = write(
        tmp_path / "rag",
        {
            "deploy/dashboard.yaml": manifest,
            "py/Dockerfile": 'FROM python:3.12-slim\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0"]\n',
        },
    )
    result = check(root)
    assert chains(result, root) == [["py/Dockerfile"]]


def test_an_image_the_overlay_given_with_the_base_builds_is_that_build(tmp_path: Path) -> None:
    """docker-compose.yml's `api` names `ghcr.io/acme/api:${TAG:-dev}` and builds nothing;
    docker/dev.yml, given with it (`-f`), builds the same service from the project's
    Dockerfile (`context: .`, the base file's folder): the base's service runs that image,
    with its environment, though two Dockerfiles here could build it by name."""
    root = write(
        tmp_path / "shop",
        {
            "docker-compose.yml": (
                "services:\n  api:\n    image: ghcr.io/acme/api:${TAG:-dev}\n"
                '    environment:\n      WORKERS: "3"\n'
            ),
            "docker/dev.yml": "services:\n  api:\n    build:\n      context: .\n",
            "Dockerfile": GUNICORN_IMAGE,
            "start.sh": START,
            "worker/Dockerfile": 'FROM python:3.12\nCMD ["celery", "-A", "app", "worker"]\n',
        },
    )
    result = check(root)
    assert ["docker-compose.yml", "Dockerfile", "start.sh"] in chains(result, root)
    (app,) = [a for a in result.apps if a.container is not None and a.workers.value == 3]
    assert app.container is not None
    assert app.container.name == "api"


def test_a_compose_file_that_builds_alone_says_nothing_of_anothers_image(tmp_path: Path) -> None:
    """docker-compose-prod.yml's `backend` runs `acme/shop:latest`; docker-compose.yml's
    `backend`, another setup run on its own, builds backend/Dockerfile: that file is no
    overlay of the prod one (its build is found from its own folder), so the prod service
    is not joined to backend/Dockerfile's server."""
    root = write(
        tmp_path / "elsewhere",
        {
            "docker-compose-prod.yml": "services:\n  backend:\n    image: acme/shop:latest\n",
            "docker-compose.yml": "services:\n  backend:\n    build: backend\n",
            "backend/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "-w", "5", "app:app"]\n',
        },
    )
    result = check(root)
    assert ["docker-compose-prod.yml", "backend/Dockerfile"] not in chains(result, root)
    assert ["docker-compose.yml", "backend/Dockerfile"] in chains(result, root)


#: Two images of one owner: a sibling project's (`owl-hub`) and this repository's (`relay`).
_SIBLINGS = (
    "services:\n  hub:\n    image: ghcr.io/owl-hub/owl-hub:main\n"
    "  relay:\n    image: ghcr.io/owl-hub/relay:main\n"
)


def test_the_repositorys_image_is_named_by_its_name_never_by_owner_words(tmp_path: Path) -> None:
    """In a checkout folder `owl-hub+relay` (the owner's words, then the name, as seen with
    open-webui/pipelines), `ghcr.io/owl-hub/owl-hub` is another project's image and `relay`
    one word of a longer folder name: neither service is joined to the root Dockerfile, and
    `relay`'s image is a not-followed note. In a folder named `relay` only `relay` runs it."""
    files = {"compose.yaml": _SIBLINGS, "Dockerfile": GUNICORN_IMAGE, "start.sh": START}
    root = write(tmp_path / "owl-hub+relay", files)
    result = check(root)
    assert [c for c in chains(result, root) if c[0] == "compose.yaml"] == []
    assert any("image ghcr.io/owl-hub/relay:main" in n for n in unfollowed(result))
    root = write(tmp_path / "relay", files)
    result = check(root)
    assert [a.container.name for a in result.apps if a.container is not None] == ["relay"]


def test_the_git_origins_name_is_the_repositorys_name(tmp_path: Path) -> None:
    """A checkout in a folder named `checkout` whose git origin (set by git itself) is
    `git@example.com:owl-hub/relay.git`: the repository is `relay`, so `ghcr.io/owl-hub/relay`
    is its root Dockerfile's gunicorn; `owl-hub/owl-hub` is still no one's here."""
    root = write(
        tmp_path / "checkout",
        {"compose.yaml": _SIBLINGS, "Dockerfile": GUNICORN_IMAGE, "start.sh": START},
    )
    for argv in (["init", "-q"], ["remote", "add", "origin", "git@example.com:owl-hub/relay.git"]):
        subprocess.run(["git", "-C", str(root), *argv], check=True, capture_output=True)
    result = check(root)
    assert [a.container.name for a in result.apps if a.container is not None] == ["relay"]
    assert ["compose.yaml", "Dockerfile", "start.sh"] in chains(result, root)


def test_a_worktree_s_origin_is_read_from_the_repository_it_belongs_to(tmp_path: Path) -> None:
    """A worktree's `.git` is a file pointing at its git folder, whose `commondir` leads to the
    repository's config: its origin `https://example.com/owl-hub/relay.git/` names `relay`."""
    from servertune.check.repository_names import origin_name

    common = tmp_path / "repo.git"
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "config").write_text(
        '[core]\n\tbare = true\n[remote "upstream"]\n\turl = https://example.com/x/other\n'
        '[remote "origin"]\n\turl = https://example.com/owl-hub/relay.git/\n'
    )
    (common / "worktrees" / "wt" / "commondir").write_text("../..\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    assert origin_name(checkout) == "relay"
    (checkout / ".git").write_text("not a pointer\n")
    assert origin_name(checkout) is None


def test_build_files_building_the_name_elsewhere_contradict_the_names_guess(
    tmp_path: Path,
) -> None:
    """In the repository `owlapp`, `ghcr.io/owl/owlapp` would be the root Dockerfile by its
    name; the release workflow builds that name in two steps, from rust/Dockerfile and
    js/Dockerfile, without saying which is the one the service runs: the guess the build files
    contradict is no link (as with chroma's release from rust/Dockerfile), a not-followed note
    names the two."""
    release = _RELEASE.format(dockerfile="rust/Dockerfile", target="cli") + (
        "      - uses: docker/build-push-action@v6\n        with:\n"
        "          file: js/Dockerfile\n          tags: ${{ env.GHCR_IMAGE_NAME }}:js\n"
    )
    root = write(
        tmp_path / "owlapp",
        {
            "compose.yaml": "services:\n  app:\n    image: ghcr.io/owl/owlapp:latest\n",
            "Dockerfile": GUNICORN_IMAGE,
            "start.sh": START,
            ".github/workflows/release.yml": release,
        },
    )
    result = check(root)
    assert [c for c in chains(result, root) if c[0] == "compose.yaml"] == []
    assert any(
        "image ghcr.io/owl/owlapp:latest: the build files here build it from js/Dockerfile or "
        "rust/Dockerfile" in n
        for n in unfollowed(result)
    )


def test_an_image_named_for_a_folder_above_one_dockerfile_is_that_dockerfile(
    tmp_path: Path,
) -> None:
    """In the repository `shop`, `ghcr.io/acme/shop-backend` names no Dockerfile's own folder
    or suffix, but docker/backend/prod/app/Dockerfile is the only one under a `backend/`
    folder (docker/frontend/prod/web/Dockerfile the only one under `frontend/`): each service runs
    the Dockerfile of its word, WORKERS reaching the backend's gunicorn; a word under both
    (`prod`) joins neither. (Seen in MaibornWolff/SecObserve.)"""
    root = write(
        tmp_path / "shop",
        {
            "compose.yaml": "services:\n"
            "  backend:\n    image: ghcr.io/acme/shop-backend:1.4\n"
            '    environment:\n      WORKERS: "6"\n'
            "  frontend:\n    image: ghcr.io/acme/shop-frontend:1.4\n"
            "  other:\n    image: ghcr.io/acme/shop-prod:1.4\n",
            "docker/backend/prod/app/Dockerfile": GUNICORN_IMAGE,
            "docker/backend/prod/app/start.sh": START,
            "docker/frontend/prod/web/Dockerfile": NGINX_IMAGE,
        },
    )
    result = check(root)
    by_service = {a.container.name: a for a in result.apps if a.container is not None}
    assert list(by_service) == ["backend"]
    assert by_service["backend"].workers.value == 6
    notes = unfollowed(result)
    assert not any("shop-frontend" in n or "shop-backend" in n for n in notes)
    assert any("image ghcr.io/acme/shop-prod:1.4: 2 Dockerfiles here" in n for n in notes)


def test_a_word_of_the_repositorys_name_alone_ties_no_image(tmp_path: Path) -> None:
    """In a checkout `owl+owl-deploy` whose Dockerfiles are `prod/owl/` and `prod/frontend/`,
    `owl/owl-agents:dev` (built elsewhere, as seen with yeti-platform/yeti-docker's
    `yetiplatform/yeti-agents`) shares only `owl`, a word of the repository's name, with a
    Dockerfile: that word is no tie when the name's other word (`agents`) names none, so the
    service runs no Dockerfile here and a not-followed note says so."""
    root = write(
        tmp_path / "owl+owl-deploy",
        {
            "prod/compose.yaml": "services:\n  agents:\n    image: owl/owl-agents:dev\n",
            "prod/owl/Dockerfile": GUNICORN_IMAGE,
            "prod/owl/start.sh": START,
            "prod/frontend/Dockerfile": NGINX_IMAGE,
        },
    )
    result = check(root)
    assert [c for c in chains(result, root) if c[0] == "prod/compose.yaml"] == []
    assert any("image owl/owl-agents:dev" in n for n in unfollowed(result))


def test_a_release_tag_no_build_makes_is_the_dockerfiles_last_stage(tmp_path: Path) -> None:
    """compose.yaml builds `ghcr.io/acme/app/backend:debug` from the Dockerfile's `debug` stage
    (a reloading uvicorn); the deployment runs `ghcr.io/acme/app/backend:2025.1.0`, a tag no
    build here makes: the same Dockerfile, built plainly, so its last stage (`prod`, uvicorn
    without --reload) and no reloader-in-production warning (hotosm/fmtm's chart)."""
    root = write(
        tmp_path / "app",
        {
            "compose.yaml": "services:\n  api:\n"
            '    image: "ghcr.io/acme/app/backend:${TAG_OVERRIDE:-debug}"\n'
            "    build:\n      context: .\n      dockerfile: Dockerfile\n"
            '      target: "${TARGET_OVERRIDE:-debug}"\n',
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123", "ghcr.io/acme/app/backend:2025.1.0"
            ),
            "Dockerfile": "FROM python:3.12-slim AS runtime\n"
            'FROM runtime AS debug\nCMD ["uvicorn", "app:app", "--reload", "--host", "0.0.0.0"]\n'
            'FROM runtime AS prod\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0", "--port", "8000"]\n',
        },
    )
    result = check(root)
    assert not [f for f in result.findings if f.rule == "reloader-in-production"]
    deployed = [a for a in result.apps if a.container is not None and a.container.name == "app"]
    assert [a.sockets[0].value for a in deployed] == ["0.0.0.0:8000"]


def test_a_base_image_named_by_its_last_words_is_the_dockerfile_of_that_suffix(
    tmp_path: Path,
) -> None:
    """`Dockerfile-prod` is `FROM acme/shop-backend-prod-no-code:local`: the name's last words
    together (`prod-no-code`) are `Dockerfile-prod-no-code`'s suffix, a longer match than its
    word `prod` alone (which names `Dockerfile-prod`, the Dockerfile asking), so that file is
    its base and the image runs the base's gunicorn: one launch from `Dockerfile-prod` through
    its base's CMD to the script (seen in akvo/akvo-rsr). Last words name a Dockerfile's own
    name only, never a folder: `shop/postgres-dev-env` is no image of `dev-env/Dockerfile`
    (a qualifier, as in tournesol-app/tournesol), still a not-followed note."""
    root = write(
        tmp_path / "shop",
        {
            "Dockerfile-prod": "FROM acme/shop-backend-prod-no-code:local\nCOPY app/ /app/app\n",
            "Dockerfile-prod-no-code": GUNICORN_IMAGE,
            "start.sh": START,
            "dev-env/Dockerfile": 'FROM python:3.12-slim\nCMD ["sleep", "infinity"]\n',
            "dev-env/compose.yaml": "services:\n  db:\n    image: shop/postgres-dev-env:1\n",
        },
    )
    result = check(root)
    assert chains(result, root) == [["Dockerfile-prod", "Dockerfile-prod-no-code", "start.sh"]]
    assert not [m for m in unfollowed(result) if "base image's command" in m]
    assert [m for m in unfollowed(result) if "postgres-dev-env" in m]


def test_a_base_image_is_no_local_dockerfile_by_one_shared_word(tmp_path: Path) -> None:
    """The Dockerfile builds `FROM vendor/uvicorn-gunicorn-fastapi:py3` (a published base
    whose own script starts the server; as seen with ExpDev07/coronavirus-tracker-api) and
    `uvicorn.Dockerfile` here starts uvicorn on :80: the base's name holds no word of the
    repository's name and is matched whole only, so the compose service's image is not
    chained through `uvicorn.Dockerfile` and shows no uvicorn it never runs."""
    root = write(
        tmp_path / "tracker",
        {
            "docker-compose.yml": "services:\n  api:\n    build: .\n",
            "Dockerfile": "FROM vendor/uvicorn-gunicorn-fastapi:py3\nCOPY ./app /app/app\n",
            "uvicorn.Dockerfile": 'FROM python:3.12\nCOPY ./app /app\nCMD ["uvicorn", '
            '"app.main:app", "--host", "0.0.0.0", "--port", "80"]\n',
        },
    )
    result = check(root)
    assert ["docker-compose.yml", "Dockerfile", "uvicorn.Dockerfile"] not in chains(result, root)


def test_another_owners_image_tag_is_no_dockerfile_suffix(tmp_path: Path) -> None:
    """`dbpedia/lookup:dev`, another owner's image pulled beside the project's dev build, is not
    run from `Dockerfile.dev`: a tag picks a Dockerfile by its suffix only for the project's
    own image (its name the repository's), or when a build here tags it so (seen in
    OpenEnergyPlatform/oeplatform, where the lookup service was shown running Django's
    runserver); the dev service that builds Dockerfile.dev is still its launch."""
    root = write(
        tmp_path / "acme+shop",
        {
            "docker/compose.yaml": (
                "services:\n  web:\n    build:\n      context: .\n"
                "      dockerfile: Dockerfile.dev\n    image: shop-dev\n"
                "  lookup:\n    image: dbpedia/lookup:dev\n"
            ),
            "docker/Dockerfile.dev": GUNICORN_IMAGE,
            "docker/start.sh": START,
        },
    )
    result = check(root)
    services = {a.container.name for a in result.apps if a.container is not None}
    assert services == {"web"}


def test_an_image_named_for_a_stage_with_the_repositorys_name_is_that_stage(
    tmp_path: Path,
) -> None:
    """In the repository `radio`, compose runs `ghcr.io/radio/radio-api`, whose whole last part
    is the name of the Dockerfile's stage `FROM python AS radio-api` (gunicorn on :9001), while
    the last stage is `radio-nginx`: the image is published from that stage, so the service
    starts its gunicorn, joined to the nginx that passes to `api:9001` (seen in
    libretime/libretime)."""
    root = write(
        tmp_path / "radio",
        {
            "docker-compose.yml": "services:\n"
            "  api:\n    image: ghcr.io/radio/radio-api:latest\n"
            "  nginx:\n    image: ghcr.io/radio/radio-nginx:latest\n"
            "    ports:\n      - 8080:8080\n",
            "Dockerfile": "FROM python:3.12-slim AS radio-base\n"
            "FROM radio-base AS radio-api\n"
            'CMD ["gunicorn", "--workers", "3", "--bind", "0.0.0.0:9001", "app:app"]\n'
            "FROM nginx:1.27 AS radio-nginx\n"
            "COPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n",
            "docker/nginx.conf": "server {\n  listen 8080;\n"
            "  location / {\n    proxy_pass http://api:9001;\n  }\n}\n",
        },
    )
    result = check(root)
    assert ["docker-compose.yml", "Dockerfile"] in [c[:2] for c in chains(result, root)]
    served = [a for a in result.apps if a.container is not None and a.container.name == "api"]
    assert [(a.workers.value, a.sockets[0].value) for a in served] == [(3, "0.0.0.0:9001")]
    fronts = [link.nginx.file.name for link in result.links if link.app in served]
    assert fronts == ["nginx.conf"]


def test_a_chart_image_no_file_names_runs_the_stage_compose_builds_it_from(
    tmp_path: Path,
) -> None:
    """The chart's one container runs an image the files do not complete (`${IMAGE}`), of
    the run's one Dockerfile, whose last stage `dev` runs `uvicorn --reload`; compose builds
    and tags that Dockerfile's image (`acme/lab:latest`) with `target: main`, the stage the
    published image is built from: the container runs main's uvicorn on :8000, not a
    development launch (seen in mozilla-ai/lumigator)."""
    root = write(
        tmp_path / "lab",
        {
            "docker-compose.yaml": "services:\n  backend:\n    image: acme/lab:latest\n"
            "    build:\n      context: .\n      dockerfile: Dockerfile\n"
            '      target: "main"\n',
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123", '"${IMAGE}"'
            ),
            "Dockerfile": "FROM python:3.12-slim AS base\n"
            'FROM base AS main\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0", "--port", "8000"]\n'
            'FROM base AS dev\nCMD ["uvicorn", "app:app", "--reload", "--host", "0.0.0.0"]\n',
        },
    )
    result = check(root)
    deployed = [a for a in result.apps if a.container is not None and a.container.name == "app"]
    assert [(a.sockets[0].value, a.reloads) for a in deployed] == [("0.0.0.0:8000", None)]


def test_a_release_tag_of_a_name_compose_builds_from_a_target_is_that_target(
    tmp_path: Path,
) -> None:
    """compose builds `acme/lab:latest` with `target: main` (a tag not named for the stage);
    the deployment runs `acme/lab:1.4.0`, a tag no build here makes: the name is built from
    main, so its uvicorn on :8000 runs there, not the last stage's `--reload` (seen in
    mozilla-ai/lumigator; a `:debug` tag built with `target: debug` is a variant, and another
    tag is the last stage, as test_a_release_tag_no_build_makes_is_the_dockerfiles_last_stage
    pins)."""
    root = write(
        tmp_path / "lab",
        {
            "docker-compose.yaml": "services:\n  backend:\n    image: acme/lab:latest\n"
            "    build:\n      context: .\n      dockerfile: Dockerfile\n"
            '      target: "main"\n',
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123", "acme/lab:1.4.0"
            ),
            "Dockerfile": "FROM python:3.12-slim AS base\n"
            'FROM base AS main\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0", "--port", "8000"]\n'
            'FROM base AS dev\nCMD ["uvicorn", "app:app", "--reload", "--host", "0.0.0.0"]\n',
        },
    )
    result = check(root)
    deployed = [a for a in result.apps if a.container is not None and a.container.name == "app"]
    assert [(a.sockets[0].value, a.reloads) for a in deployed] == [("0.0.0.0:8000", None)]


def test_a_docker_build_line_with_target_builds_the_name_from_that_stage(tmp_path: Path) -> None:
    """The Makefile's `docker build --target production -t acme/catalog:latest -f
    services/catalog/Dockerfile .` tags the name from the `production` stage, which COPYs the
    start script; the last stage `development` runs the same script from a bind mount and
    COPYs nothing: the swarm compose file's service runs production's gunicorn (seen in
    ITISFoundation/osparc-simcore)."""
    root = write(
        tmp_path / "sim",
        {
            "Makefile": "build:\n\tdocker build --target production -t acme/catalog:latest "
            "-f services/catalog/Dockerfile .\n",
            "services/docker-compose.yml": "services:\n  catalog:\n"
            "    image: acme/catalog:latest\n",
            "services/catalog/Dockerfile": "FROM python:3.12-slim AS base\n"
            "FROM base AS production\nWORKDIR /home/app\n"
            "COPY services/catalog/docker services/catalog/docker\n"
            'CMD ["/bin/sh", "services/catalog/docker/boot.sh"]\n'
            "FROM base AS development\nWORKDIR /devel\n"
            'CMD ["/bin/sh", "services/catalog/docker/boot.sh"]\n',
            "services/catalog/docker/boot.sh": "#!/bin/sh\n"
            "exec gunicorn --workers 4 --bind 0.0.0.0:8000 app:app\n",
        },
    )
    result = check(root)
    served = [a for a in result.apps if a.container is not None and a.container.name == "catalog"]
    assert [(a.workers.value, a.sockets[0].value) for a in served] == [(4, "0.0.0.0:8000")]


def test_an_image_pulled_by_name_is_the_production_stage_before_a_last_development_one(
    tmp_path: Path,
) -> None:
    """The swarm compose file runs `acme/catalog:latest`, no build and no target said anywhere;
    catalog/Dockerfile ends in `FROM base AS development` (a developer's build, its start
    script bind-mounted, COPYing nothing) after `FROM base AS production`, which COPYs the
    script: the image a registry publishes is production's, so the service runs its gunicorn,
    with a server-chosen note at that stage (seen in ITISFoundation/osparc-simcore). A
    `prod-only-deps` builder is no production stage of its own, a Dockerfile only a word of
    the name names (`docker/` of `acme/docker-osm`, as in healthsites/healthsites) is no
    image a registry publishes from its production stage, and a last stage not named for
    development stays the image."""
    dockerfile = (
        "FROM python:3.12-slim AS base\n"
        "FROM base AS prod-only-deps\nRUN pip install gunicorn\n"
        "FROM base AS production\nWORKDIR /home/app\n"
        "COPY catalog/docker catalog/docker\n"
        'CMD ["/bin/sh", "catalog/docker/boot.sh"]\n'
        "FROM base AS development\nWORKDIR /devel\n"
        'CMD ["/bin/sh", "catalog/docker/boot.sh"]\n'
    )
    files = {
        "docker-compose.yml": "services:\n  catalog:\n    image: acme/catalog:latest\n"
        "  osm:\n    image: acme/docker-osm:latest\n",
        "catalog/Dockerfile": dockerfile,
        "deploy/docker/Dockerfile": "FROM python:3.12-slim AS prod\n"
        'CMD ["gunicorn", "--bind", "0.0.0.0:9000", "osm:app"]\n'
        'FROM prod AS dev\nCMD ["sleep", "infinity"]\n',
        "catalog/docker/boot.sh": "#!/bin/sh\nexec gunicorn --workers 4 --bind 0.0.0.0:8000 app:app\n",
    }
    root = write(tmp_path / "sim", files)
    result = check(root)
    served = [a for a in result.apps if a.container is not None and a.container.name == "catalog"]
    assert [(a.workers.value, a.sockets[0].value) for a in served] == [(4, "0.0.0.0:8000")]
    assert [a for a in result.apps if a.container is not None and a.container.name == "osm"] == []
    chosen = [n for n in result.notes if n.kind == "server-chosen" and "publishes" in n.message]
    assert [(n.at.file.name, n.at.line) for n in chosen] == [("Dockerfile", 4)]
    files["catalog/Dockerfile"] = dockerfile.replace("AS development", "AS tools")
    root = write(tmp_path / "sim2", files)
    result = check(root)
    assert [
        a for a in result.apps if a.container is not None and a.container.name == "catalog"
    ] == []


def test_an_image_named_for_the_folder_its_dockerfile_copies_is_that_dockerfile(
    tmp_path: Path,
) -> None:
    """`acme/webserver` is built by no Dockerfile named `webserver`, but by web/Dockerfile,
    which COPYs web/server/ (the folder beside it) into its production stage: the name is
    its folder's with the one it builds, so the compose service runs that stage's gunicorn.
    A Dockerfile whose own folder is the name (webserver/Dockerfile) still wins, and a folder
    beside it the Dockerfile never names (web/client/) names no image (seen in
    ITISFoundation/osparc-simcore's services/web/Dockerfile)."""
    dockerfile = (
        "FROM python:3.12-slim AS base\n"
        "FROM base AS production\nWORKDIR /home/app\n"
        "COPY web/server/docker web/server/docker\n"
        'CMD ["/bin/sh", "web/server/docker/boot.sh"]\n'
        "FROM base AS development\nWORKDIR /devel\n"
        'CMD ["/bin/sh", "web/server/docker/boot.sh"]\n'
    )
    files = {
        "docker-compose.yml": "services:\n  webserver:\n    image: acme/webserver:latest\n"
        "  webclient:\n    image: acme/webclient:latest\n",
        "web/Dockerfile": dockerfile,
        "web/client/index.html": "<html></html>\n",
        "web/server/docker/boot.sh": "#!/bin/sh\n"
        "exec gunicorn --workers 4 --bind 0.0.0.0:8080 app:app\n",
    }
    result = check(write(tmp_path / "sim", files))
    served = [a for a in result.apps if a.container is not None]
    assert [(a.container.name, a.sockets[0].value) for a in served if a.container] == [
        ("webserver", "0.0.0.0:8080")
    ]
    files["webserver/Dockerfile"] = (
        'FROM python:3.12-slim\nCMD ["gunicorn", "-b", ":9000", "a:b"]\n'
    )
    result = check(write(tmp_path / "own", files))
    served = [a for a in result.apps if a.container is not None and a.container.name == "webserver"]
    assert [a.sockets[0].value for a in served] == [":9000"]


def test_a_base_image_built_by_a_sibling_dockerfile_carries_its_copied_script(
    tmp_path: Path,
) -> None:
    """dockerfiles/Dockerfile.api is `FROM $REPO/dr_api_base:$VERSION` (ARGs with no
    default), the image dockerfiles/Dockerfile.api_base builds, which COPYs the start script
    (its whole `api/` folder, from the repository's root) and sets the WORKDIR; the child's `CMD ["sh", "-c", "/home/user/run_uwsgi.sh"]` starts the
    script the base put there: one launch from Dockerfile.api through the script, not "no file
    given here starts the script" (seen in AlexsLemonade/refinebio)."""
    root = write(
        tmp_path / "bio",
        {
            "dockerfiles/Dockerfile.api_base": "FROM python:3.12-slim\nWORKDIR /home/user\n"
            "COPY api/requirements.txt .\nCOPY api/ .\nENTRYPOINT []\n",
            "api/requirements.txt": "gunicorn\n",
            "dockerfiles/Dockerfile.api": "ARG REPO\nARG VERSION\n"
            "FROM $REPO/dr_api_base:$VERSION\n"
            'CMD ["sh", "-c", "/home/user/run_uwsgi.sh"]\n',
            "api/run_uwsgi.sh": "#!/bin/sh\nexec gunicorn --workers 3 -b 0.0.0.0:8081 app:app\n",
        },
    )
    result = check(root)
    assert chains(result, root) == [["dockerfiles/Dockerfile.api", "api/run_uwsgi.sh"]]


def test_an_unowned_name_another_compose_file_builds_and_tags_is_that_build(
    tmp_path: Path,
) -> None:
    """The root compose runs `${registry}core:${CORE_VERSION}` and dev/compose.yml builds and
    tags that very name from core/Dockerfile (both blank until the deployment's .env fills
    them, seen in exadel-inc/CompreFace): the service runs that build's server. A library
    image's name (`postgres`) with another tag than the one built is still the library's."""
    files = {
        "docker-compose.yml": "services:\n  core:\n    image: ${registry}core:${CORE_VERSION}\n"
        "  db:\n    image: postgres:16\n",
        "dev/docker-compose.yml": "services:\n  core:\n    image: ${registry}core:${CORE_VERSION}\n"
        "    build:\n      context: ../core\n"
        "  db:\n    image: postgres:custom\n    build:\n      context: ../db\n",
        "core/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "-w", "3", "-b", ":3000", "a:b"]\n',
        "db/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "-b", ":5432", "db:app"]\n',
    }
    root = write(tmp_path / "face", files)
    result = check(root)
    assert ["docker-compose.yml", "core/Dockerfile"] in chains(result, root)
    assert not any(
        c[0] == "docker-compose.yml" and "db/Dockerfile" in c for c in chains(result, root)
    )


def test_a_dockerfile_tagged_so_in_its_own_comment_is_the_image_of_that_name(
    tmp_path: Path,
) -> None:
    """deploy/docker-compose.yml runs `registry.example.org/team/shop_api-v3:prod` and the
    Dockerfile beside it says in its own comment it is built with `docker build -t
    shop_api_v3 -f deploy/Dockerfile .` (seen in HumanBrainProject/hbp-validation-framework):
    the service runs that image's server, never "starts no server"."""
    files = {
        "api/deploy/docker-compose.yml": "services:\n  web:\n"
        "    image: registry.example.org/team/shop_api-v3:prod\n",
        "api/deploy/Dockerfile": "# From the parent folder:\n"
        "#   docker build -t shop_api_v3 -f deploy/Dockerfile .\n"
        'FROM python:3.12\nCMD ["uvicorn", "shop.main:app", "--port", "80"]\n',
    }
    root = write(tmp_path / "proj", files)
    result = check(root)
    assert ["api/deploy/docker-compose.yml", "api/deploy/Dockerfile"] in chains(result, root)


def test_an_untied_image_beside_a_dockerfile_is_not_followed_not_no_server(
    tmp_path: Path,
) -> None:
    """deploy/compose.yml runs `ghcr.io/org/app:prod` beside deploy/Dockerfile, and nothing
    says that Dockerfile builds that name: the service is a not-followed note naming the
    image, never "starts no server" for the compose file, and no link."""
    files = {
        "deploy/compose.yml": "services:\n  app:\n    image: ghcr.io/org/app:prod\n",
        "deploy/Dockerfile": 'FROM python:3.12\nCOPY . /app\nCMD ["uvicorn", "app:app"]\n',
    }
    root = write(tmp_path / "proj", files)
    result = check(root)
    assert not any(c[0] == "deploy/compose.yml" for c in chains(result, root))
    assert any("image ghcr.io/org/app:prod" in m for m in unfollowed(result))
    assert not [
        n for n in result.notes if n.kind == "starts-no-server" and n.at.file.name == "compose.yml"
    ]


#: compose builds the backend's image under a name the CI's variables complete.
VARIABLE_BUILD = (
    "services:\n  backend:\n    build:\n      context: .\n"
    "      dockerfile: docker/web.Dockerfile\n"
    "    image: eu.gcr.io/${PROJECT_NAME}/shop-backend:${COMMIT}\n"
)


def _variable_build_repository(tmp_path: Path, extra: dict[str, str]) -> Path:
    return write(
        tmp_path / "shop",
        {
            "docker-compose.images.yaml": VARIABLE_BUILD,
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123",
                "eu.gcr.io/acme-prod/shop-backend:${COMMIT}",
            ),
            "docker/web.Dockerfile": GUNICORN_IMAGE.replace(
                "COPY start.sh", "COPY docker/start.sh"
            ),
            "docker/start.sh": START,
            "tools/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "tools:app"]\n',
            **extra,
        },
    )


def test_an_image_a_build_names_with_variables_is_that_build(tmp_path: Path) -> None:
    """compose builds docker/web.Dockerfile as `eu.gcr.io/${PROJECT_NAME}/shop-backend`; the
    Deployment runs `eu.gcr.io/acme-prod/shop-backend`, which that name completes (a variable
    is any text within one path part): the container runs that build's gunicorn, though
    another Dockerfile starts a server too (seen in akvo/akvo-rsr's CI compose file)."""
    root = _variable_build_repository(tmp_path, {})
    result = check(root)
    assert ["k8s/app.yaml", "docker/web.Dockerfile", "docker/start.sh"] in chains(result, root)


def test_an_image_two_builds_with_variables_could_be_is_not_tied(tmp_path: Path) -> None:
    """A second compose file builds tools/Dockerfile as `${REGISTRY}/${PROJECT}/shop-backend`,
    which the Deployment's name could complete too: two builds match, so neither is its
    image (no guess), and the Deployment is not said to run docker/web.Dockerfile."""
    other = VARIABLE_BUILD.replace("docker/web.Dockerfile", "tools/Dockerfile").replace(
        "eu.gcr.io/${PROJECT_NAME}", "${REGISTRY}/${PROJECT}"
    )
    root = _variable_build_repository(tmp_path, {"compose.tools.yaml": other})
    result = check(root)
    assert not [c for c in chains(result, root) if c[0] == "k8s/app.yaml"]


def test_a_variable_matches_within_one_path_part_of_a_literal_last_part() -> None:
    """A variable stands for any text of one path part (its default too); the last part must
    be written out on both sides: `${IMAGE}` alone names no image."""
    from servertune.check.image_patterns import matches

    assert matches("eu.gcr.io/${project}/web", "eu.gcr.io/acme/web")
    assert matches("${REGISTRY:-ghcr.io}/acme/web", "acme/web")
    assert matches("acme-${ENV:-prod}/web", "acme-prod/web")
    assert not matches("eu.gcr.io/${project}/web", "eu.gcr.io/acme/team/web")
    assert not matches("eu.gcr.io/${project}/web", "eu.gcr.io/acme/api")
    assert not matches("${IMAGE}", "acme/web")
    assert not matches("acme/${NAME}", "acme/web")


def test_an_image_name_a_variable_gives_whole_is_its_default(tmp_path: Path) -> None:
    """compose builds `${APP_IMAGE:-acme/shop:main}` (a variable holding the whole name, its
    default a path): the build tags the default, which another compose file runs, as before
    any variable was kept in a name (seen in ansible/eda-server)."""
    root = write(
        tmp_path / "shop",
        {
            "compose.build.yaml": "services:\n  app:\n    build:\n      context: .\n"
            "      dockerfile: docker/web.Dockerfile\n    image: ${APP_IMAGE:-acme/shop:main}\n",
            "deploy/compose.yaml": "services:\n  web:\n    image: acme/shop:main\n",
            "docker/web.Dockerfile": GUNICORN_IMAGE.replace(
                "COPY start.sh", "COPY docker/start.sh"
            ),
            "docker/start.sh": START,
            "tools/Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "tools:app"]\n',
        },
    )
    assert ["deploy/compose.yaml", "docker/web.Dockerfile", "docker/start.sh"] in chains(
        check(root), root
    )


def test_an_image_of_the_origin_owners_registry_account_is_not_followed(tmp_path: Path) -> None:
    """The git origin is `acme/acme-shop`; the Deployment runs
    `eu.gcr.io/acme-cloud/shop-backend`, whose owner begins with the origin's (a registry
    account named after it, seen in akvo/akvo-rsr's `akvo-lumen`), and neither Dockerfile here
    is named for it: the manifest is "not followed" at the image's line, never "starts no
    server"."""
    root = write(
        tmp_path / "checkout",
        {
            "k8s/app.yaml": DEPLOYMENT.format(name="app").replace(
                "registry.example/bank/app:v1.2@sha256:0123",
                "eu.gcr.io/acme-cloud/shop-backend:${COMMIT}",
            ),
            "Dockerfile-prod": GUNICORN_IMAGE,
            "start.sh": START,
            "Dockerfile-nginx": NGINX_IMAGE,
        },
    )
    for argv in (["init", "-q"], ["remote", "add", "origin", "git@example.com:acme/acme-shop.git"]):
        subprocess.run(["git", "-C", str(root), *argv], check=True, capture_output=True)
    result = check(root)
    kinds = {n.kind for n in result.notes if n.at.file.as_posix().endswith("k8s/app.yaml")}
    assert kinds == {"not-followed"}
    assert any("eu.gcr.io/acme-cloud/shop-backend" in m for m in unfollowed(result))
