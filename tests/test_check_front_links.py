"""A front's config often includes a file its container's entrypoint makes just before the
process manager starts nginx and the app: `cd /app/deploy/nginx; ln -sf locations.conf
http_locations.conf` (seen in QingdaoU/OnlineJudge). Such a link is a file at its name with
its target's text, so the include reads it and the front joins the app its pass reaches; a
link an undecided `if` makes to one target or another may be either. Each repository is
written here for the form it pins."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from servertune.check.runtime_files import made_by
from tests.folder_support import check_folder, write

_IMAGE = """\
FROM python:3.12-alpine
WORKDIR /srv
COPY ./ /srv/
ENTRYPOINT ["/srv/ops/start.sh"]
"""
_SUPERVISORD = """\
[supervisord]
nodaemon=true

[program:nginx]
command=nginx -c /srv/ops/web/nginx.conf

[program:app]
command=gunicorn shop.wsgi --bind 127.0.0.1:9000 --workers 3
"""
_NGINX = """\
events {}
http {
  upstream shop { server 127.0.0.1:9000; }
  server {
    listen 8000;
    include site_locations.conf;
  }
}
"""
_LOCATIONS = "location / {\n  include pass.conf;\n}\n"
_REDIRECT = "location / {\n  return 301 https://$host$request_uri;\n}\n"


def _start(links: str) -> str:
    return f"#!/bin/sh\nROOT=/srv\ncd $ROOT/ops/web\n{links}\nexec supervisord -c /srv/ops/supervisord.conf\n"


def _repository(root: Path, links: str) -> Path:
    return write(
        root,
        {
            "Dockerfile": _IMAGE,
            "ops/start.sh": _start(links),
            "ops/supervisord.conf": _SUPERVISORD,
            "ops/web/nginx.conf": _NGINX,
            "ops/web/locations.conf": _LOCATIONS,
            "ops/web/redirect.conf": _REDIRECT,
            "ops/web/pass.conf": "proxy_pass http://shop;\n",
        },
    )


def _fronts(root: Path) -> list[list[str]]:
    result = check_folder(root)
    return [
        sorted(f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts)
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_a_link_the_entrypoint_makes_after_cd_is_the_file_nginx_includes(
    tmp_path: Path,
) -> None:
    """The entrypoint moves to the config's folder, links `site_locations.conf` to
    `locations.conf` and hands the container to supervisord, whose program starts nginx with
    that config: its relative include reads the link's target (and what it includes), so
    the front joins gunicorn on 127.0.0.1:9000 at its pass, and no include is noted missing."""
    root = _repository(tmp_path, "ln -sf locations.conf site_locations.conf")
    assert _fronts(root) == [["ops/web/pass.conf:1"]]
    notes = check_folder(root).notes
    assert not [n for n in notes if n.kind == "include-not-found"]


def test_either_target_of_an_undecided_if_may_be_the_link(tmp_path: Path) -> None:
    """`if [ -z "$FORCE_HTTPS" ]; then ln -sf locations.conf ...; else ln -sf redirect.conf
    ...; fi` with FORCE_HTTPS set by no file: either link may be there when nginx starts, so
    the one that passes to the app joins it (the later line does not replace the earlier:
    it runs only when the earlier did not); a link made after the `if` always replaces it."""
    links = (
        'if [ -z "$FORCE_HTTPS" ]; then\n'
        "  ln -sf locations.conf site_locations.conf\n"
        "else\n"
        "  ln -sf redirect.conf site_locations.conf\n"
        "fi"
    )
    assert _fronts(_repository(tmp_path / "either", links)) == [["ops/web/pass.conf:1"]]
    # A link the script always makes after the `if` replaces it (`ln -sf`): the redirect.
    always = links.replace("else\n  ln -sf redirect.conf site_locations.conf\n", "")
    always += "\nln -sf redirect.conf site_locations.conf"
    assert _fronts(_repository(tmp_path / "always", always)) == [[]]


def test_a_symbolic_links_relative_target_is_read_from_the_links_folder() -> None:
    """The kernel reads a symbolic link's relative target from the folder the link is in, not
    from where `ln` ran: `ln -s ../shared/site.conf /etc/nginx/conf.d/` links to
    /etc/nginx/shared/site.conf; after `cd /app`, `ln -s a.conf conf/b.conf` links
    /app/conf/b.conf to /app/conf/a.conf, while `cp a.conf conf/b.conf` copies /app/a.conf."""
    at = Path("start.sh")
    into = made_by(at, "ln -s ../shared/site.conf /etc/nginx/conf.d/", 3, {}, set())
    assert [(m.path, m.source) for m in into] == [
        ("/etc/nginx/conf.d/site.conf", "/etc/nginx/shared/site.conf")
    ]
    linked = made_by(at, "ln -sf a.conf conf/b.conf", 4, {}, set(), directory="/app")
    copied = made_by(at, "cp a.conf conf/b.conf", 5, {}, set(), directory="/app")
    assert [(m.path, m.source) for m in linked] == [("/app/conf/b.conf", "/app/conf/a.conf")]
    assert [(m.path, m.source) for m in copied] == [("/app/conf/b.conf", "/app/a.conf")]
