"""nginx's own variables: a `$name` nginx defines is never a template's (envsubst's), whatever
the container's environment holds (nginx.org/en/docs/varindex.html)."""

from __future__ import annotations

__all__ = ["nginx_variable"]

#: nginx's own variables (nginx.org/en/docs/varindex.html): a `$name` of these is never a
#: template's, whatever the container's environment holds.
_NGINX_VARIABLES = frozenset(
    {
        "args", "binary_remote_addr", "body_bytes_sent", "bytes_sent", "connection",
        "connection_requests", "connection_time", "content_length", "content_type",
        "document_root", "document_uri", "host", "hostname", "https", "is_args", "limit_rate",
        "msec", "nginx_version", "pid", "pipe", "query_string", "realpath_root", "remote_addr",
        "remote_port", "remote_user", "request", "request_body", "request_body_file",
        "request_completion", "request_filename", "request_id", "request_length",
        "request_method", "request_time", "request_uri", "scheme", "server_addr",
        "server_name", "server_port", "server_protocol", "status", "time_iso8601",
        "time_local", "uri", "proxy_host", "proxy_port", "proxy_add_x_forwarded_for",
        "realip_remote_addr", "realip_remote_port", "invalid_referer", "gzip_ratio",
        "secure_link", "secure_link_expires", "memcached_key", "date_local", "date_gmt",
    }
)  # fmt: skip
#: The families of nginx's variables named by a prefix (`$http_host`, `$arg_page`).
_NGINX_PREFIXES = (
    "arg_", "cookie_", "http_", "sent_http_", "sent_trailer_", "upstream_", "ssl_",
    "proxy_protocol_", "tcpinfo_", "geoip_", "jwt_", "limit_", "http2", "http3", "spdy",
)  # fmt: skip


def nginx_variable(name: str) -> bool:
    """`$name` is one of nginx's own variables (`$host`, `$http_upgrade`), never a
    template's."""
    return name in _NGINX_VARIABLES or name.startswith(_NGINX_PREFIXES)
