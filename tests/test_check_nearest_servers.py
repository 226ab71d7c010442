"""Servers a front's local address reaches in several setups of one repository: the front is
joined to the server whose files sit nearest it in the folders, not to every server on the
same socket path or loopback port; servers equally near are all kept. Each repository is
written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

_SITE = (
    "events {}\nhttp {\n  server {\n    listen 80;\n    location / {\n"
    "      include /etc/nginx/uwsgi_params;\n      uwsgi_pass unix:///tmp/app.sock;\n"
    "    }\n  }\n}\n"
)
_PROGRAM = "[program:app]\ncommand=uwsgi --socket /tmp/app.sock --module app:app{more}\n"
_INI = "[uwsgi]\nmodule = app:app\nsocket = /tmp/app.sock\nprocesses = 4\nharakiri = 3600\n"


def _joins(root: Path) -> list[tuple[str, str]]:
    result = check_folder(root)
    return sorted(
        (
            link.nginx.file.relative_to(root).as_posix(),
            (link.app.launched_by[0].file if link.app.launched_by else link.app.file)
            .relative_to(root)
            .as_posix(),
        )
        for link in result.links
    )


def test_a_front_joins_the_server_of_its_own_setup_not_anothers_on_the_same_socket(
    tmp_path: Path,
) -> None:
    """A container's setup (`docker/app/nginx.conf` with `docker/app/supervisord.conf`) and a
    host's (`tools/nginx.conf` with `tools/uwsgi.ini`) both on `unix:/tmp/app.sock` (as seen
    with staffanm/ferenda's legacy layouts): each front is joined to its own folder's server
    only, so the host ini's harakiri 3600 is no finding on the container's nginx. Two servers
    of one folder (a second ini beside `tools/uwsgi.ini`) are equally near its front: nothing
    in the folders tells them apart, so that front is joined to both."""
    root = write(
        tmp_path,
        {
            "docker/app/nginx.conf": _SITE,
            "docker/app/supervisord.conf": _PROGRAM.format(more=" --processes 2"),
            "tools/nginx.conf": _SITE,
            "tools/uwsgi.ini": _INI,
            "tools/uwsgi-other.ini": _INI,
        },
    )
    assert _joins(root) == [
        ("docker/app/nginx.conf", "docker/app/supervisord.conf"),
        ("tools/nginx.conf", "tools/uwsgi-other.ini"),
        ("tools/nginx.conf", "tools/uwsgi.ini"),
    ]
    result = check_folder(root)
    assert [
        f.at.file.relative_to(root).as_posix()
        for f in result.findings
        if f.rule == "app-timeout-over-read-timeout"
    ] == ["tools/nginx.conf"]


def test_of_servers_equally_near_a_front_joins_the_one_whose_chdir_holds_its_root(
    tmp_path: Path,
) -> None:
    """Two uWSGI inis beside two nginx sites, all on `unix:/tmp/app.sock` (staffanm/ferenda's
    tools/: a developer's ini with `harakiri = 3600` and the staging ini): the site whose
    `root` lies in an ini's `chdir` is joined to that ini alone, so the other's harakiri is no
    finding on it (it was, borrowed from the developer's ini); a site whose root lies in neither keeps both, with a note that which one
    it reaches is not known."""
    site = _SITE.replace("listen 80;", "listen 80;\n    root %s;")
    ini = _INI.replace("harakiri = 3600\n", "chdir = %s\n%s")
    root = write(
        tmp_path,
        {
            "tools/uwsgi-dev.ini": ini % ("/home/dev/site", "harakiri = 3600\n"),
            "tools/uwsgi-staging.ini": ini % ("/www/site", ""),
            "tools/nginx-staging.conf": site % "/www/site/data",
            "tools/nginx-other.conf": site % "/srv/other",
        },
    )
    assert _joins(root) == [
        ("tools/nginx-other.conf", "tools/uwsgi-dev.ini"),
        ("tools/nginx-other.conf", "tools/uwsgi-staging.ini"),
        ("tools/nginx-staging.conf", "tools/uwsgi-staging.ini"),
    ]
    result = check_folder(root)
    timeouts = [f for f in result.findings if f.rule == "app-timeout-over-read-timeout"]
    assert "nginx-staging.conf" not in [f.at.file.name for f in timeouts]
    notes = [n.message for n in result.notes if n.at.file.name == "nginx-other.conf"]
    assert any("no root and chdir here say which" in n for n in notes)


_PROXY = (
    "events {}\nhttp {\n  server {\n    listen 80;\n    location /api {\n"
    "      proxy_pass http://localhost:8000;\n    }\n  }\n}\n"
)


def test_a_front_two_images_copy_is_joined_in_each_image(tmp_path: Path) -> None:
    """`deploy/nginx.conf` (a pass to localhost:8000) is copied by two images at the
    repository's root, each of whose start scripts runs nginx and a uvicorn on :8000, one
    script beside the front (`deploy/start.sh`) and one elsewhere (`sandbox/start.sh`), as
    seen with feathr-ai/feathr's FeathrRegistry.Dockerfile and FeathrSandbox.Dockerfile: a
    front an image copies is that image's, so it is joined to the uvicorn of each image,
    not only the one whose script sits nearest it, and no note calls either another setup's."""
    image = (
        "FROM python:3.12\nRUN apt-get install -y nginx\n"
        "COPY ./deploy/nginx.conf /etc/nginx/nginx.conf\nCOPY ./{script} /app/start.sh\n"
        'CMD ["/bin/sh", "/app/start.sh"]\n'
    )
    start = "#!/bin/sh\nnginx\nexec uvicorn app.main:app --host 0.0.0.0 --port 8000\n"
    root = write(
        tmp_path,
        {
            "deploy/nginx.conf": _PROXY,
            "deploy/start.sh": start,
            "sandbox/start.sh": start,
            "Registry.Dockerfile": image.format(script="deploy/start.sh"),
            "Sandbox.Dockerfile": image.format(script="sandbox/start.sh"),
        },
    )
    assert _joins(root) == [
        ("deploy/nginx.conf", "Registry.Dockerfile"),
        ("deploy/nginx.conf", "Sandbox.Dockerfile"),
    ]
    notes = [n.message for n in check_folder(root).notes if n.kind == "not-followed"]
    assert not [n for n in notes if "localhost:8000" in n]


def test_a_socket_on_a_named_volume_joins_within_its_compose_project_only(
    tmp_path: Path,
) -> None:
    """docker-compose.yml's nginx and web share the named volume `shared:/nginx`, where web's
    gunicorn binds `unix:/nginx/app.sock` and nginx passes to it; docker-compose.dev.yml (a
    project of its own, not an override) runs the same web on the same path with no nginx,
    as seen with gnosis/safe-transaction-service: a volume is its project's, so the front is
    joined to the web of its own project only."""
    web = (
        "    build:\n      context: .\n      dockerfile: docker/Dockerfile\n"
        "    volumes:\n      - shared:/nginx\n"
        "    command: gunicorn --bind unix:/nginx/app.sock app.wsgi:application\n"
    )
    site = (
        "events {}\nhttp {\n  server {\n    listen 80;\n    location / {\n"
        "      proxy_pass http://unix:/nginx/app.sock;\n    }\n  }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "docker-compose.yml": "volumes:\n  shared:\nservices:\n  nginx:\n"
            "    image: nginx:1.27\n    volumes:\n"
            "      - ./docker/nginx.conf:/etc/nginx/nginx.conf:ro\n      - shared:/nginx\n"
            "  web:\n" + web,
            "docker-compose.dev.yml": "volumes:\n  shared:\nservices:\n  web:\n" + web,
            "docker/nginx.conf": site,
            "docker/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        },
    )
    result = check_folder(root)
    assert sorted(
        k.app.container.at.file.name for k in result.links if k.app.container is not None
    ) == ["docker-compose.yml"]


def test_a_whole_project_mount_does_not_make_a_front_another_compose_files(
    tmp_path: Path,
) -> None:
    """docker-compose.dev.yml runs nginx with `./nginx/conf.d` mounted (a pass to
    `backend:8000`) beside its backend; docker-compose.staging.yml, a project of its own with
    no nginx, mounts the whole repository (`.:/app:ro`) into its backend, as seen with
    PySpur-Dev/pyspur: that mount carries every file, not a config its container runs, so
    the front is joined to the dev project's backend only."""
    backend = (
        "  backend:\n    build:\n      context: .\n      dockerfile: Dockerfile\n"
        "    command: uvicorn app.main:app --host 0.0.0.0 --port 8000\n"
    )
    root = write(
        tmp_path,
        {
            "docker-compose.dev.yml": "services:\n  nginx:\n    image: nginx:1.27\n"
            "    volumes:\n      - ./nginx/conf.d:/etc/nginx/conf.d\n" + backend,
            "docker-compose.staging.yml": "services:\n"
            + backend
            + "    volumes:\n      - .:/app:ro\n",
            "nginx/conf.d/default.conf": "server {\n  listen 80;\n  location / {\n"
            "    proxy_pass http://backend:8000;\n  }\n}\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        },
    )
    result = check_folder(root)
    assert sorted(
        k.app.container.at.file.name for k in result.links if k.app.container is not None
    ) == ["docker-compose.dev.yml"]


def test_a_host_front_joins_the_compose_service_whose_compose_file_sits_nearest_it(
    tmp_path: Path,
) -> None:
    """A host's nginx (`deploy/nginx/site.nginx`, run by no container) passes to
    `127.0.0.1:8000`, which `deploy/app/docker-compose.yml`'s gunicorn and
    `dev/docker-compose.yml`'s uvicorn both publish, each built from the root Dockerfile whose
    entrypoint.sh starts them (the image's gunicorn, the dev file's `command:`), as
    seen with Syslifters/sysreptor: the compose file that runs a container is one of its
    launch's files, so the deployment's service, nearer the front, is joined and the dev
    stack's is not."""
    build = "    build:\n      context: {up}\n    ports:\n      - 127.0.0.1:8000:8000\n"
    root = write(
        tmp_path,
        {
            "deploy/nginx/site.nginx": "server {\n  listen 80;\n  location / {\n"
            "    proxy_pass http://127.0.0.1:8000;\n  }\n}\n",
            "deploy/app/docker-compose.yml": "services:\n  app:\n" + build.format(up="../.."),
            "dev/docker-compose.yml": "services:\n  api:\n"
            + build.format(up="..")
            + "    command: uvicorn --host 0.0.0.0 --port 8000 app:app\n",
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
            'ENTRYPOINT ["/app/entrypoint.sh"]\n'
            'CMD ["gunicorn", "--bind", "0.0.0.0:8000", "app:app"]\n',
            "entrypoint.sh": '#!/bin/sh\nexec "$@"\n',
        },
    )
    result = check_folder(root)
    assert sorted(
        k.app.container.at.file.relative_to(root).as_posix()
        for k in result.links
        if k.app.container is not None
    ) == ["deploy/app/docker-compose.yml"]


def test_each_stage_of_one_dockerfile_joins_the_front_it_copies_not_the_other_stages(
    tmp_path: Path,
) -> None:
    """One Dockerfile's stages `backend` and `aio` each COPY their own nginx config to
    /etc/nginx/nginx.conf and a supervisord config starting gunicorn on 127.0.0.1:8000;
    compose builds `server` with `target: backend` and `app` from the final stage, as seen
    with seanmorley15/AdventureLog: the final image copies nginx-aio.conf, and only the
    launch through its own CMD line runs in it, so the `backend` stage's server is never
    behind the final stage's nginx-aio.conf (nor the final stage's behind nginx-backend.conf)."""
    program = "[program:gunicorn]\ncommand=gunicorn --bind 127.0.0.1:8000 app:app\n"
    site = (
        "events {}\nhttp {\n  upstream django {\n    server 127.0.0.1:8000;\n  }\n"
        "  server {\n    listen 80;\n    location / {\n      proxy_pass http://django;\n"
        "    }\n  }\n}\n"
    )
    root = write(
        tmp_path,
        {
            "docker/Dockerfile": "FROM python:3.12 AS runtime\nWORKDIR /code\n"
            "FROM runtime AS backend\n"
            "COPY docker/shared/nginx-backend.conf /etc/nginx/nginx.conf\n"
            "COPY docker/shared/supervisord-backend.conf /etc/supervisor/conf.d/app.conf\n"
            'CMD ["supervisord", "-c", "/etc/supervisor/conf.d/app.conf"]\n'
            "FROM runtime AS aio\n"
            "COPY docker/shared/nginx-aio.conf /etc/nginx/nginx.conf\n"
            "COPY docker/shared/supervisord-aio.conf /aio/supervisord.conf\n"
            'CMD ["supervisord", "-c", "/aio/supervisord.conf"]\n',
            "docker/shared/nginx-backend.conf": site,
            "docker/shared/nginx-aio.conf": site,
            "docker/shared/supervisord-backend.conf": program,
            "docker/shared/supervisord-aio.conf": program,
            "docker-compose.yml": "services:\n  app:\n    build:\n      context: .\n"
            "      dockerfile: docker/Dockerfile\n  server:\n    build:\n      context: .\n"
            "      dockerfile: docker/Dockerfile\n      target: backend\n",
        },
    )
    result = check_folder(root)
    joined = sorted((k.nginx.file.name, k.app.file.name) for k in result.links)
    assert ("nginx-aio.conf", "supervisord-aio.conf") in joined
    assert ("nginx-aio.conf", "supervisord-backend.conf") not in joined
    assert ("nginx-backend.conf", "supervisord-aio.conf") not in joined
