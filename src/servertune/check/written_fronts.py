"""nginx configs a shell script of the repository writes with a here-document.

An entrypoint often writes the site nginx serves just before starting it (`cat >
/etc/nginx/conf.d/app.conf <<EOF ... proxy_pass http://127.0.0.1:8000; ... EOF`, then
`exec supervisord`). No file of the tree holds that config, so it was never a front; the
here-document's text (`written_files.scripts_written`: the script's own plain assignments
expanded, any other `$NAME` as written) is read as nginx's config at its lines of the script,
a front like a file of the tree. Only a path nginx reads its config from is taken (under
/etc/nginx/ or an OpenResty prefix: `nginx.conf`, `*.conf`, `conf.d/`, `sites-enabled/`,
`sites-available/`, a `templates/*.template`); a text that does not parse as nginx's config
(an htpasswd file) is no front. The script is read, never run.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from servertune.check.model import CheckInputError, NginxConfig

__all__ = ["nginx_path", "written_fronts"]

#: The folders nginx (and OpenResty) read their configs from.
_PREFIXES = ("/etc/nginx/", "/usr/local/openresty/nginx/conf/", "/etc/openresty/")
#: The folders whose every file is a site (`include /etc/nginx/sites-enabled/*;`).
_SITE_FOLDERS = ("conf.d", "sites-enabled", "sites-available", "http.d", "templates")


def nginx_path(path: str) -> bool:
    """`path` is where nginx reads a config of its own (not `mime.types` or an htpasswd)."""
    if not path.startswith(_PREFIXES):
        return False
    name = posixpath.basename(path)
    folder = posixpath.basename(posixpath.dirname(path))
    return name.endswith((".conf", ".template")) or folder in _SITE_FOLDERS


def written_fronts(paths: Sequence[Path]) -> tuple[NginxConfig, ...]:
    """The nginx configs the scripts among `paths` write with here-documents, each read as
    nginx's config at its lines of the script that writes it."""
    from servertune.check.nginx import read_nginx_text
    from servertune.check.written_files import written_where

    fronts: list[NginxConfig] = []
    for file in written_where(paths, nginx_path):
        try:
            fronts.append(read_nginx_text(file.file, file.text))
        except CheckInputError:
            continue  # not nginx's syntax: what the script writes there is not a site
    return tuple(fronts)
