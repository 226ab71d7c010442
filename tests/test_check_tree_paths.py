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
