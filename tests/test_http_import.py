"""servertune.http imports no HTTP client, and a missing client names the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

import servertune.http as http
from servertune.http import session

CLIENT_MODULES = (
    "requests",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "urllib3",
    "niquests",
    "urllib3_future",
)


def test_importing_servertune_and_servertune_http_imports_no_client() -> None:
    """`import servertune; import servertune.http` leaves every HTTP client unimported."""
    code = (
        "import sys, servertune, servertune.http\n"
        f"print(sorted(m for m in {CLIENT_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("client", ["httpx", "httpx2"])
def test_missing_client_raises_import_error_naming_the_extra(client: str) -> None:
    """With httpx (httpx2) unimportable, session("httpx") says `pip install 'servertune[httpx]'`;
    the other library, installed beside it, neither stands in for it nor is imported."""
    other = {"httpx": "httpx2", "httpx2": "httpx"}[client]
    code = (
        "import sys\n"
        f"sys.modules[{client!r}] = None\n"
        "from servertune.http import async_session, session\n"
        "for factory in (session, async_session):\n"
        "    try:\n"
        f"        factory({client!r})\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
        f"print({other!r} in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    extra = f"pip install 'servertune[{client}]'"
    assert out.stdout.splitlines() == [
        f"servertune.http.session({client!r}) needs {client}: {extra}",
        f"servertune.http.async_session({client!r}) needs {client}: {extra}",
        "False",
    ]


def test_public_names_are_exported() -> None:
    """The public API is exactly what __all__ lists, and every name in it exists."""
    assert set(http.__all__) >= {"session", "async_session", "ssl_context", "KNOWN_SERVERS"}
    for name in http.__all__:
        assert hasattr(http, name), name


def test_unknown_client_is_rejected() -> None:
    """A client name outside CLIENTS is a ValueError listing the valid ones."""
    with pytest.raises(ValueError, match="requests, niquests, httpx, httpx2, urllib3"):
        session("pycurl")  # type: ignore[call-overload]


@pytest.mark.parametrize("client", ["requests", "urllib3"])
def test_async_session_exists_only_for_the_async_clients(client: str) -> None:
    """async_session() refuses the sync-only clients."""
    with pytest.raises(ValueError, match="aiohttp, httpx, httpx2, niquests; got"):
        http.async_session(client)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("client", "option"),
    [
        ("requests", "max_retries"),
        ("httpx", "limits"),
        ("httpx", "transport"),
        ("httpx2", "limits"),
        ("httpx2", "mounts"),
        ("urllib3", "maxsize"),
    ],
)
def test_options_servertune_sets_cannot_be_overridden_by_keyword(client: str, option: str) -> None:
    """Passing a setting servertune owns through **options is a TypeError, not a silent override."""
    with pytest.raises(TypeError, match=option):
        session(client, **{option: 1})  # type: ignore[call-overload]
