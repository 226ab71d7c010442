"""A front and a server whose port is the same installer's placeholder token (YunoHost's
`__PORT__`, which its installer fills with one value in every file it installs) are joined,
with a `joined-by-name` note; another token, or another machine's host, joins nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import check_folder, write

_UNIT = (
    "[Service]\nWorkingDirectory=__INSTALL_DIR__/src/\nEnvironment=GRANIAN_HOST=::\n"
    "Environment=GRANIAN_PORT=__PORT__\n"
    "ExecStart=__INSTALL_DIR__/venv/bin/granian --interface asgi site.asgi:application\n"
)


def _front(target: str) -> str:
    return f"location __PATH__/ {{\n  proxy_pass http://{target}/;\n}}\n"


def test_the_same_placeholder_port_on_both_sides_joins_them(tmp_path: Path) -> None:
    """nginx's `proxy_pass http://localhost:__PORT__/` and a systemd unit running granian
    with `Environment=GRANIAN_PORT=__PORT__` (seen in YunoHost-Apps/paperless-ngx_ynh, where
    the server was shown behind no front) are one link, said in a `joined-by-name` note that
    names the token."""
    write(
        tmp_path, {"conf/systemd.service": _UNIT, "conf/nginx.conf": _front("localhost:__PORT__")}
    )
    result = check_folder(tmp_path)
    assert [(k.nginx.file.name, k.app.kind) for k in result.links] == [("nginx.conf", "granian")]
    (joined,) = [n.message for n in result.notes if n.kind == "joined-by-name"]
    assert "__PORT__ on both sides" in joined


@pytest.mark.parametrize("target", ["localhost:__OTHER_PORT__", "10.0.0.5:__PORT__"])
def test_another_token_or_host_joins_nothing(tmp_path: Path, target: str) -> None:
    """Another token than the server's, or a host that is not the front's loopback, is not
    joined by the token: which server answers there is not in the files."""
    write(tmp_path, {"conf/systemd.service": _UNIT, "conf/nginx.conf": _front(target)})
    result = check_folder(tmp_path)
    assert not result.links


def test_two_servers_on_the_same_token_join_neither(tmp_path: Path) -> None:
    """Two units whose port is the same token: which one the front reaches is not known, so
    neither is joined (a false link is worse than a missing one)."""
    write(
        tmp_path,
        {
            "conf/systemd.service": _UNIT,
            "conf/other.service": _UNIT,
            "conf/nginx.conf": _front("127.0.0.1:__PORT__"),
        },
    )
    assert not check_folder(tmp_path).links
