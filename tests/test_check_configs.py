"""`servertune check` on configs modelled on public projects: exactly the findings written down beforehand.

Each directory under tests/data/check holds the files and an expected.json written before the
check was first run (tests/data/check/README.md cites where each config comes from). The machine
is fixed (4 cores, somaxconn 4096) so the result does not depend on the host, except where a
config computes its worker count from the host's CPU count: that is the finding itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from servertune.check import LOAD_BALANCERS, LoadBalancer, check_files
from servertune.sizing import Machine

DATA = Path(__file__).parent / "data" / "check"
CASES = sorted(p.name for p in DATA.iterdir() if (p / "expected.json").exists())
MACHINE = Machine(cores=4, somaxconn=4096)


def _expected(case: str) -> tuple[dict[str, Any], set[tuple[str, str, int]]]:
    spec: dict[str, Any] = json.loads((DATA / case / "expected.json").read_text())
    expected = {(r, f, line) for r, f, line in spec["findings"]}
    # The config's worker count is the host's CPU count (at least 2): above 4 cores it also
    # exceeds the machine this test describes.
    if max(2, os.cpu_count() or 1) > MACHINE.cores:
        expected |= {(r, f, line) for r, f, line in spec.get("when_host_has_more_cores", [])}
    return spec, expected


def test_enough_real_world_cases() -> None:
    """At least ten configs modelled on public ones, plus configs that break one rule each."""
    assert len([c for c in CASES if not c.startswith("break-")]) >= 10
    assert len([c for c in CASES if c.startswith("break-")]) >= 3


@pytest.mark.parametrize("case", CASES)
def test_check_finds_what_was_written_down(case: str) -> None:
    """The rule ids and file:line found equal the ones in the case's expected.json."""
    spec, expected = _expected(case)
    if "lb" in spec:
        lb = LOAD_BALANCERS[spec["lb"]]
    elif "lb_idle_timeout" in spec:
        lb = LoadBalancer("load balancer", spec["lb_idle_timeout"], "", "")
    else:
        lb = None
    # Only the case's own environment: a GUNICORN_CMD_ARGS of the host must not leak in.
    env = {k: v for k, v in os.environ.items() if k != "GUNICORN_CMD_ARGS"} | spec.get("env", {})
    result = check_files(
        [DATA / case / name for name in spec["files"]], lb=lb, machine=MACHINE, env=env
    )
    # Findings and coverage notes alike (include-not-found is a note since issue 36).
    found = {
        (f.rule, f.at.file.relative_to(DATA / case).as_posix(), f.at.line)
        for f in (*result.findings, *result.notes)
    }
    assert found == expected
    for finding in result.findings:
        assert finding.fix
        assert finding.backing
        assert finding.message


def test_tracker_patterns_are_covered() -> None:
    """The failure patterns users report most each have a case that finds them."""
    found = {rule for case in CASES for rule, _, _ in _expected(case)[1]}
    assert {
        "lb-idle-over-app-keepalive",  # gunicorn 2 s behind ALB / GCP's 600 s / uvicorn 5 s
        "lb-idle-over-nginx-keepalive",
        "upstream-keepalive-over-app-keepalive",
        "gthread-one-thread",
        "max-requests-without-jitter",
        "workers-from-cpu-count",
        "app-timeout-over-read-timeout",
        "graceful-below-timeout",
        "backlog-over-somaxconn",
        "shared-socket",
        "thunder-lock",
        "workers-over-cores",
    } <= found


def test_an_nginx_keepalive_of_tens_of_seconds_under_a_longer_lb_idle_is_a_warning(
    tmp_path: Path,
) -> None:
    """nginx's `keepalive_timeout 75s` under a load balancer idle for 90 s is a warning that
    says why (only a connection idle 75 s meets the race, and a retrying balancer hides most
    of it), where `keepalive_timeout 3s` under the same balancer stays an error (as seen in
    alephdata/aleph's contrib Traefik example over nginx's default 75 s)."""
    lb = LoadBalancer("Traefik", 90, "idleConnTimeout 90s (default)", "the test")
    severities = {}
    for seconds in (75, 3):
        site = tmp_path / f"site{seconds}.conf"
        site.write_text(
            f"server {{ listen 80; keepalive_timeout {seconds}s; "
            "location / { proxy_pass http://127.0.0.1:8000; } }\n"
        )
        (finding,) = [
            f
            for f in check_files([site], lb=lb, machine=MACHINE).findings
            if f.rule == "lb-idle-over-nginx-keepalive"
        ]
        severities[seconds] = finding.severity.name
        if seconds == 75:
            assert "a warning, not an error" in finding.message
    assert severities == {75: "warning", 3: "error"}
