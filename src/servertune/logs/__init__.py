"""The workload read from access logs: nginx, gunicorn, uWSGI, HAProxy and AWS ALB.

`read_traffic(paths, build_format("nginx", log_format))` streams the logs into a `Traffic`:
arrival rate, service-time percentiles overall and per route, slow calls, concurrency by
Little's law, the status mix; `Traffic.to_toml()` is the workload file `gen --workload` reads.
"""

from __future__ import annotations

from servertune.logs.detect import detect_format
from servertune.logs.errors import LogError
from servertune.logs.formats import LogFormat, LogFormatError, build_format, format_names
from servertune.logs.traffic import Traffic, read_traffic

__all__ = [
    "LogError",
    "LogFormat",
    "LogFormatError",
    "Traffic",
    "build_format",
    "detect_format",
    "format_names",
    "read_traffic",
]
