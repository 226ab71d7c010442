"""`COPY FILE DIR` (no trailing slash) into a folder a `RUN` made (`mkdir -p`, `git clone URL
DIR`, or a clone into the URL's last part) puts FILE inside it, as Docker copies into a folder
that exists (seen in ocf/badgr, whose `COPY etc/uwsgi.ini /badgr/badgr-server` went into its
clone of badgr-server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.run_folders import made_folders
from tests.folder_support import chains, check_folder, fronts, write


@pytest.mark.parametrize(
    ("run", "folder"),
    [
        (
            "mkdir /badgr && cd /badgr && git clone https://example.org/x/badgr-server.git",
            "/badgr/badgr-server",
        ),
        ("git clone --depth 1 -b main https://example.org/x/app.git /srv/app", "/srv/app"),
        ("mkdir -p /srv/a /srv/b/c", "/srv/b/c"),
        ("cd /opt && mkdir -m 755 site", "/opt/site"),
    ],
)
def test_folders_a_run_makes(run: str, folder: str) -> None:
    """Each RUN makes `folder` (and the folders above it)."""
    made = made_folders(run, "/")
    assert folder in made
    assert "/" + folder.split("/")[1] in made


def test_copy_into_a_cloned_folder_lands_inside(tmp_path: Path) -> None:
    """`RUN mkdir /badgr && cd /badgr && git clone URL` makes /badgr/badgr-server, so `COPY
    etc/uwsgi.ini /badgr/badgr-server` is /badgr/badgr-server/uwsgi.ini: the script's `cd
    /badgr/badgr-server; uwsgi --ini uwsgi.ini` reads it, and the nginx front on its
    socket joins: Dockerfile -> init.sh -> uwsgi.ini behind site.conf."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.8\nRUN pip install uwsgi\n"
            "RUN mkdir /badgr && cd /badgr && git clone https://example.org/x/badgr-server.git\n"
            "COPY etc/site.conf /etc/nginx/conf.d/site.conf\n"
            "COPY etc/uwsgi.ini /badgr/badgr-server\n"
            "COPY etc/init.sh /badgr\n"
            'ENTRYPOINT ["/badgr/init.sh"]\n',
            "etc/init.sh": "#!/bin/bash\ncd /badgr/badgr-server\nuwsgi --ini uwsgi.ini &\n"
            "exec nginx -g 'daemon off;'\n",
            "etc/uwsgi.ini": "[uwsgi]\nmodule = app.wsgi\nprocesses = 4\nsocket = app.sock\n"
            "chdir = /badgr/badgr-server\n",
            "etc/site.conf": "server {\n    listen 80;\n    location / {\n"
            "        uwsgi_pass unix:/badgr/badgr-server/app.sock;\n    }\n}\n",
        },
    )
    result = check_folder(tmp_path)
    (chain,) = chains(result, tmp_path)
    assert [c.split(":")[0] for c in chain[0]] == ["Dockerfile", "etc/init.sh", "etc/uwsgi.ini"]
    assert chain[1:] == ("uwsgi", 4)
    assert not [n for n in result.notes if n.kind == "config-not-found"]
    assert list(fronts(tmp_path).values()) == [["etc/site.conf:4"]]
