"""A `.conf` is taken for nginx by its content only when its top-level statements are nginx's:
rsyslog's `if $programname ... then {` is another daemon's config, a file not read, never an
nginx syntax error."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import check_folder, write

RSYSLOG = """\
if $programname contains 'shop-web' then {
  *.* /var/log/shop/web.log
  stop
}
"""


def test_rsyslog_conf_is_not_read_as_nginx(tmp_path: Path) -> None:
    """rsyslog's RainerScript `if ... then { }` (seen in scoringengine/scoringengine's
    configs/rsyslog.conf) starts with `if`, a word nginx has, but not nginx's `if (...)`:
    the file is named as not read, with no error; beside it, a snippet of nginx's own
    top-level statements (`if ($x ...)`, `location`) is still read as nginx."""
    write(
        tmp_path,
        {
            "configs/rsyslog.conf": RSYSLOG,
            "configs/site.conf": "if ($http_x_forwarded_proto = 'http') {\n"
            "    return 301 https://$host$request_uri;\n}\n"
            "location / {\n    proxy_pass http://127.0.0.1:8000;\n}\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    assert [(n.kind, n.at.file.name) for n in result.notes] == [("not-read", "rsyslog.conf")]


def test_rsyslog_template_statement_is_not_nginx(tmp_path: Path) -> None:
    """rsyslog's `template(name=... ) { }` after an nginx-looking first line (`include`, a
    word both have) is not nginx's syntax: not read, no error."""
    write(
        tmp_path,
        {
            "configs/rsyslog.conf": "include /etc/rsyslog.d/common.conf;\n"
            'template(name="line" type="list") {\n  property(name="msg")\n}\n'
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    assert [(n.kind, n.at.file.name) for n in result.notes] == [("not-read", "rsyslog.conf")]
