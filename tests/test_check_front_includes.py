"""A front whose `proxy_pass` / `uwsgi_pass` is written in a snippet a site includes (seen in
MIT-LCP/physionet-build, whose sites-available/physionet_nginx.conf includes
snippets/physionet-https.conf, and QingdaoU/OnlineJudge, whose nginx.conf includes
locations.conf, which includes api_proxy.conf): the launch graph names the pass's own line
and the `include` lines that bring it into the site nginx serves, nearest first, in the
text and as `fronts[].included_from` in JSON and SARIF. Each repository is made up here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servertune.check.output import format_json, format_sarif, format_text
from tests.folder_support import check_folder, write

_PROCFILE = "web: gunicorn shop.wsgi --bind 127.0.0.1:8000 --workers 3\n"
_SITE = """\
server {
    listen 80;
    server_name shop.example.org;

    include snippets/shop-proxy.conf;
}
"""
_SNIPPET = """\
location / {
    proxy_read_timeout 30s;
    proxy_pass http://127.0.0.1:8000;
}
"""
_ADMIN = """\
server {
    listen 8080;
    location / { proxy_pass http://127.0.0.1:8000; }
}
"""


def _relative(entries: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """JSON file:line entries with their files relative to `root`, nested ones too."""
    found = []
    for entry in entries:
        file = Path(entry["file"])
        item = {
            **entry,
            "file": (file.relative_to(root) if file.is_absolute() else file).as_posix(),
        }
        if "included_from" in entry:
            item["included_from"] = _relative(entry["included_from"], root)
        found.append(item)
    return found


def test_a_pass_in_a_snippet_a_site_includes_names_the_site_s_include_line(
    tmp_path: Path,
) -> None:
    """The site (sites-available/shop.conf) includes snippets/shop-proxy.conf at its line 5,
    and the snippet's line 3 passes to gunicorn: the JSON front is the snippet's line 3 with
    `included_from` the site's line 5, and the text reads `behind
    nginx/snippets/shop-proxy.conf:3 (included from nginx/sites-available/shop.conf:5)`. A
    second site that writes its own pass to gunicorn is a front as before: its line, no
    `included_from` key, named alone in the text."""
    root = write(
        tmp_path,
        {
            "Procfile": _PROCFILE,
            "nginx/sites-available/shop.conf": _SITE,
            "nginx/snippets/shop-proxy.conf": _SNIPPET,
            "nginx/sites-available/admin.conf": _ADMIN,
        },
    )
    result = check_folder(root)
    (launch,) = json.loads(format_json(result))["launches"]
    assert sorted(_relative(launch["fronts"], root), key=lambda f: str(f["file"])) == [
        {"file": "nginx/sites-available/admin.conf", "line": 3},
        {
            "file": "nginx/snippets/shop-proxy.conf",
            "line": 3,
            "included_from": [{"file": "nginx/sites-available/shop.conf", "line": 5}],
        },
    ]
    text = format_text(result).replace(f"{root}/", "")
    assert (
        "nginx/snippets/shop-proxy.conf:3 (included from nginx/sites-available/shop.conf:5)"
    ) in text
    assert "nginx/sites-available/admin.conf:3\n" in text or (
        "nginx/sites-available/admin.conf:3, " in text
    )
    sarif = json.loads(format_sarif(result))["runs"][0]["properties"]
    assert _relative(sarif["launches"][0]["fronts"], root) == _relative(launch["fronts"], root)


def test_an_include_chain_lists_the_nearest_include_first_and_nginx_conf_last(
    tmp_path: Path,
) -> None:
    """nginx.conf's http block includes conf.d/shop.conf at its line 4, whose server includes
    snippets/shop-proxy.conf at line 5: the front's `included_from` is the site's line 5, then
    nginx.conf's line 4 (the outermost last)."""
    root = write(
        tmp_path,
        {
            "Procfile": _PROCFILE,
            "nginx/nginx.conf": "events {}\nhttp {\n    keepalive_timeout 65s;\n"
            "    include conf.d/*.conf;\n}\n",
            "nginx/conf.d/shop.conf": _SITE,
            "nginx/snippets/shop-proxy.conf": _SNIPPET,
        },
    )
    (launch,) = json.loads(format_json(check_folder(root)))["launches"]
    assert _relative(launch["fronts"], root) == [
        {
            "file": "nginx/snippets/shop-proxy.conf",
            "line": 3,
            "included_from": [
                {"file": "nginx/conf.d/shop.conf", "line": 5},
                {"file": "nginx/nginx.conf", "line": 4},
            ],
        }
    ]
