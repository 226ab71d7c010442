"""Known servers' idle timeouts and the client idle expiry derived from them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.http import DEFAULT_SERVER, KNOWN_SERVERS, client_idle_expiry
from servertune.http._servers import MIN_SAFETY_MARGIN


def test_every_known_server_cites_a_source_and_names_its_setting() -> None:
    """Each entry has an https source, a setting name and a positive timeout or None."""
    for name, entry in KNOWN_SERVERS.items():
        assert entry.name == name
        assert entry.source.startswith("https://"), name
        assert entry.setting, name
        assert entry.idle_timeout is None or entry.idle_timeout > 0, name


def test_the_servers_the_issue_names_are_known() -> None:
    """nginx, gunicorn, uvicorn, hypercorn, Node.js, Go, AWS ALB and GCP LB are all listed."""
    assert {
        "nginx",
        "gunicorn",
        "uvicorn",
        "hypercorn",
        "nodejs",
        "go",
        "aws-alb",
        "gcp-lb",
    } <= set(KNOWN_SERVERS)


@pytest.mark.parametrize(
    ("server", "expiry"),
    [("gunicorn", 1.75), ("uvicorn", 4.5), ("nginx", 67.5), ("aws-alb", 54.0), ("gcp-lb", 549.0)],
)
def test_server_picks_its_idle_timeout_minus_the_margin(server: str, expiry: float) -> None:
    """server="gunicorn" gives 2 s - 0.25 s; longer timeouts lose 10%."""
    assert client_idle_expiry(server) == pytest.approx(expiry)


def test_explicit_server_idle_timeout_wins_over_server() -> None:
    """server_idle_timeout overrides the named server's default."""
    assert client_idle_expiry("nginx", 1.0) == pytest.approx(0.75)


def test_no_server_assumes_the_shortest_known_timeout() -> None:
    """With nothing named, the expiry is the one for DEFAULT_SERVER, the shortest timeout."""
    shortest = min(s.idle_timeout for s in KNOWN_SERVERS.values() if s.idle_timeout is not None)
    assert KNOWN_SERVERS[DEFAULT_SERVER].idle_timeout == shortest
    assert client_idle_expiry() == client_idle_expiry(DEFAULT_SERVER)


def test_server_without_idle_timeout_gets_the_default_expiry() -> None:
    """Go's default has no idle timeout; the client still expires idle connections."""
    assert KNOWN_SERVERS["go"].idle_timeout is None
    assert client_idle_expiry("go") == client_idle_expiry()


def test_unknown_server_and_non_positive_timeout_are_rejected() -> None:
    """A typo in `server` or a timeout below 0.1 s is a ValueError."""
    with pytest.raises(ValueError, match="must be one of"):
        client_idle_expiry("ngnix")
    with pytest.raises(ValueError, match=r"from 0\.1 to 86400 seconds"):
        client_idle_expiry(server_idle_timeout=0)


@given(st.floats(min_value=0.1, max_value=86_400))
def test_expiry_is_always_inside_the_server_timeout(timeout: float) -> None:
    """For any timeout the expiry is positive, at least half of it, and below it by the margin."""
    expiry = client_idle_expiry(server_idle_timeout=timeout)
    assert timeout / 2 <= expiry < timeout
    assert timeout - expiry >= min(MIN_SAFETY_MARGIN, timeout / 2) - 1e-12
