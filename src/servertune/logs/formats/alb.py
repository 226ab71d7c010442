"""AWS Application Load Balancer access logs (Elastic Load Balancing user guide, "Access log
entries"): space-separated fields, `type time elb client:port target:port
request_processing_time target_processing_time response_processing_time elb_status_code
target_status_code received_bytes sent_bytes "request" ...`. target_processing_time is the app's
time (from the request sent to the target to its response headers); -1 when the target did not
answer (elb_status_code then says why: 502 a closed or reset connection, 504 the idle timeout).
"""

from __future__ import annotations

import re

from servertune.logs.formats.base import LogFormat, LogFormatError, iso_second, seconds_to_ms

__all__ = ["build"]

_PATTERN = (
    r"^(?:https?|h2|grpcs|ws|wss) (?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.?\d*Z \S+ \S+ \S+ "
    r"-?[\d.]+ (?P<service>-?[\d.]+) -?[\d.]+ (?P<status>\d{3}|-) \S+ (?P<length>\d+|-) \S+ "
    r"\"(?:(?P<method>[A-Z]{1,20}|-) (?:[a-z]+://[^/ \"\n]*)?(?P<path>/[^ ?\"\n]*)[^ \"\n]* "
    r"[^\"\n]*|[^\"\n]*)\"[^\n]*$"
)


def build(spec: str | None) -> LogFormat:
    """The ALB access log format (it takes no spec)."""
    if spec is not None:
        raise LogFormatError("alb: the ALB access log format is fixed (no spec)")
    return LogFormat(
        name="alb",
        pattern=re.compile(_PATTERN, re.MULTILINE),
        second=iso_second,
        service_ms=seconds_to_ms,
        service_field="target_processing_time",
    )
