"""Issue 44: paths a deployment names, resolved where the files really are. An absolute nginx
include naming a host path the repository mirrors below a folder of its own reads that copy;
a relative unix socket is a path in the server's working directory."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import describe, launches
from tests.folder_support import check_folder, write


def test_absolute_include_reads_the_repository_copy_ending_in_its_longest_unique_tail(
    tmp_path: Path,
) -> None:
    """`include /etc/nginx/snippets/site-https.conf;` in a site kept at
    deploy/common/etc/nginx/sites-available/ reads deploy/common/etc/nginx/snippets/
    site-https.conf, the one file of the tree ending in the path's tail (as
    MIT-LCP/physionet-build keeps its host's /etc): the `uwsgi_pass` it holds joins the
    front to the uWSGI server on the upstream's socket. A tail two files end in maps nothing."""
    files = {
        "deploy/common/etc/nginx/sites-available/site.conf": "upstream django {\n"
        "    server unix:///srv/app/app.sock;\n}\n"
        "server {\n    listen 80;\n    include /etc/nginx/snippets/site-https.conf;\n}\n",
        "deploy/common/etc/nginx/snippets/site-https.conf": "location / {\n"
        "    include uwsgi_params;\n    uwsgi_pass django;\n    uwsgi_read_timeout 60;\n}\n",
        "deploy/app.service": "[Service]\nWorkingDirectory=/srv/app\n"
        "ExecStart=/usr/bin/uwsgi --ini deploy/uwsgi.ini\n",
        "deploy/uwsgi.ini": "[uwsgi]\nsocket = /srv/app/app.sock\nmodule = app.wsgi\n"
        "processes = 4\nharakiri = 30\n",
    }
    result = check_folder(write(tmp_path / "one", files))
    [line] = [describe(one) for one in launches(result.apps, result.links)]
    assert "behind deploy/common/etc/nginx/snippets/site-https.conf:3" in line.replace(
        str(tmp_path / "one") + "/", ""
    )
    assert not [n for n in result.notes if "site-https" in n.message]

    files["deploy/staging/etc/nginx/snippets/site-https.conf"] = "location / {}\n"
    result = check_folder(write(tmp_path / "two", files))
    [line] = [describe(one) for one in launches(result.apps, result.links)]
    assert "behind no front found" in line


def test_relative_unix_socket_is_made_in_the_directory_the_server_runs_in(
    tmp_path: Path,
) -> None:
    """gunicorn's `--bind unix:app.sock` from a script an image runs with `WORKDIR /code` is
    /code/app.sock, which the image's nginx reaches by `proxy_pass http://unix:/code/app.sock`
    (as xchem/fragalysis-backend's launch-stack.sh and django_nginx.conf); uWSGI's `socket =
    site.sock` in a systemd unit's `WorkingDirectory=/srv/site` is /srv/site/site.sock, and
    `socket = run/x.sock` below its own `chdir = /opt/x` is /opt/x/run/x.sock. Each is joined
    to the front passing there, not taken for /app.sock at the root; a socket of another
    folder is not joined."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /code\nCOPY . ./\n"
            'COPY nginx.conf /etc/nginx/conf.d/default.conf\nCMD ["./start.sh"]\n',
            "start.sh": "#!/bin/sh\nnginx\nexec gunicorn app.wsgi --workers 3 --bind unix:app.sock\n",
            "nginx.conf": "server {\n    listen 80;\n"
            "    location / {\n        proxy_pass http://unix:/code/app.sock;\n    }\n}\n",
            "site/site.service": "[Service]\nWorkingDirectory=/srv/site\n"
            "ExecStart=/usr/bin/uwsgi --ini site.ini\n",
            "site/site.ini": "[uwsgi]\nsocket = site.sock\nmodule = site.wsgi\nprocesses = 2\n",
            "site/nginx-site.conf": "server {\n    listen 80;\n    location / {\n"
            "        include uwsgi_params;\n        uwsgi_pass unix:/srv/site/site.sock;\n"
            "    }\n}\n",
            "opt/x.ini": "[uwsgi]\nchdir = /opt/x\nsocket = run/x.sock\nmodule = x.wsgi\n",
            "opt/nginx-x.conf": "server {\n    listen 80;\n    location / {\n"
            "        include uwsgi_params;\n        uwsgi_pass unix:/opt/x/run/x.sock;\n"
            "    }\n}\n",
            "other/nginx-other.conf": "server {\n    listen 80;\n"
            "    location / {\n        proxy_pass http://unix:/app.sock;\n    }\n}\n",
        },
    )
    result = check_folder(tmp_path)
    sockets = sorted(s.value for a in result.apps for s in a.sockets)
    assert sockets == ["unix:/code/app.sock", "unix:/opt/x/run/x.sock", "unix:/srv/site/site.sock"]
    joined = sorted(
        (k.passing.at.file.relative_to(tmp_path).as_posix(), k.app.sockets[0].value)
        for k in result.links
    )
    assert joined == [
        ("nginx.conf", "unix:/code/app.sock"),
        ("opt/nginx-x.conf", "unix:/opt/x/run/x.sock"),
        ("site/nginx-site.conf", "unix:/srv/site/site.sock"),
    ]


def test_compose_working_dir_and_kubernetes_working_dir_place_a_relative_socket(
    tmp_path: Path,
) -> None:
    """A compose service's `working_dir: /srv/w` and a Kubernetes container's `workingDir:
    /srv/k` are where their server's `unix:w.sock` / `unix:k.sock` is made: the sockets are
    /srv/w/w.sock and /srv/k/k.sock."""
    write(
        tmp_path,
        {
            "compose.yml": "services:\n  web:\n    image: python:3.12\n    working_dir: /srv/w\n"
            "    command: gunicorn app:app --bind unix:w.sock\n",
            "k8s/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: k\n"
            "spec:\n  template:\n    spec:\n      containers:\n        - name: k\n"
            "          image: k:1\n          workingDir: /srv/k\n"
            "          command: [gunicorn, app:app, --bind, 'unix:k.sock']\n",
        },
    )
    result = check_folder(tmp_path)
    sockets = sorted(s.value for a in result.apps for s in a.sockets)
    assert sockets == ["unix:/srv/k/k.sock", "unix:/srv/w/w.sock"]


def test_gunicorn_chdir_places_a_relative_unix_bind(tmp_path: Path) -> None:
    """gunicorn changes to `--chdir` (or a config's `chdir = ...`) before it binds, as
    uWSGI does to its `chdir`: `--chdir /srv/g --bind unix:g.sock` binds /srv/g/g.sock, and a
    config's `chdir = "/srv/c"` with `bind = "unix:c.sock"` binds /srv/c/c.sock, whatever
    folder the starter runs it in."""
    write(
        tmp_path,
        {
            "Procfile": "web: gunicorn --chdir /srv/g --bind unix:g.sock app:app\n",
            "conf/Dockerfile": "FROM python:3.12\nWORKDIR /code\nCOPY gunicorn.conf.py ./\n"
            'CMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n',
            "conf/gunicorn.conf.py": 'chdir = "/srv/c"\nbind = "unix:c.sock"\nworkers = 2\n',
        },
    )
    result = check_folder(tmp_path)
    sockets = sorted(s.value for a in result.apps for s in a.sockets)
    assert sockets == ["unix:/srv/c/c.sock", "unix:/srv/g/g.sock"]
