"""The shared SSLContext: opt-in, verified, never weakened by the sessions that use it."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from servertune.bench.harness.loopback import KeepAliveServer
from servertune.bench.harness.tls import TestPKI, make_test_pki
from servertune.http import session, ssl_context
from tests.http_support import HTTPX_CLIENTS, MAIN_CLIENTS, call, close


@pytest.fixture(autouse=True)
def _no_ca_bundle_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """requests swaps verify=True for $REQUESTS_CA_BUNDLE / $CURL_CA_BUNDLE: keep True here."""
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPKI:
    """A throwaway CA and a 127.0.0.1 certificate."""
    return make_test_pki(tmp_path_factory.mktemp("pki"))


def _verified_context(pki: TestPKI) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(pki.ca))


def test_ssl_context_is_one_verified_context() -> None:
    """ssl_context() returns the same object each time, verifying certificates and host names."""
    first = ssl_context()
    assert first is ssl_context()
    assert first.verify_mode == ssl.CERT_REQUIRED
    assert first.check_hostname


def test_ssl_context_refuses_to_hand_out_a_weakened_context() -> None:
    """If someone turns verification off on the shared context, ssl_context() raises."""
    shared = ssl_context()
    shared.check_hostname = False
    try:
        with pytest.raises(ValueError, match="never shared"):
            ssl_context()
    finally:
        shared.check_hostname = True


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_session_refuses_an_unverified_context(client: str) -> None:
    """A context with verification off is rejected, whichever client it is offered to."""
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError, match="never shared"):
        session(client, ssl_context=unverified)  # type: ignore[call-overload]


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_sessions_are_not_given_a_shared_context_unless_asked(client_name: str) -> None:
    """Sharing is opt-in: a default httpx (httpx2) session builds its own context."""
    client = session(client_name)  # type: ignore[call-overload]
    try:
        pool = client._transport.inner._pool  # type: ignore[attr-defined]
        assert pool._ssl_context is not ssl_context()
    finally:
        client.close()


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_shared_context_serves_https_and_stays_verified(client: str, pki: TestPKI) -> None:
    """Two sessions share one context over real TLS; it still verifies and gained no CA."""
    shared = _verified_context(pki)
    cas_before = shared.cert_store_stats()["x509_ca"]
    with KeepAliveServer(5, tls=pki.server_context()) as server:
        for _ in range(2):
            c = session(client, ssl_context=shared)  # type: ignore[call-overload]
            try:
                assert call(c, "GET", server.url) == 1
            finally:
                close(c)
    assert shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname
    # requests would reload certifi's bundle into it on every connection without the override.
    assert shared.cert_store_stats()["x509_ca"] == cas_before


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_requests_verify_false_on_a_sharing_session_leaves_the_context_verified(
    pki: TestPKI,
) -> None:
    """GHSA-9wx4-h78v-vm56's shape: a verify=False request must not weaken the shared context."""
    import requests

    shared = _verified_context(pki)
    with KeepAliveServer(5, tls=pki.server_context()) as server:
        s = session("requests", ssl_context=shared)
        try:
            assert s.get(server.url, verify=False).status_code == 200
            assert s.get(server.url).status_code == 200
        finally:
            s.close()
        # And a session that does not trust the test CA still refuses the server.
        with requests.Session() as plain, pytest.raises(requests.exceptions.SSLError):
            plain.get(server.url)
    assert shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_httpx_shared_context_is_http1_only(client_name: str) -> None:
    """httpcore writes ALPN into the context, so http2=True with a shared context is refused."""
    with pytest.raises(ValueError, match=r"HTTP/1\.1"):
        session(client_name, ssl_context=ssl_context(), http2=True)  # type: ignore[call-overload]


def test_make_test_pki_writes_a_ca_and_a_leaf(tmp_path: Path) -> None:
    """The throwaway PKI files exist and the CA loads into a verifying context."""
    made = make_test_pki(tmp_path)
    assert made.ca.read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert ssl.create_default_context(cafile=str(made.ca)).cert_store_stats()["x509_ca"] == 1


@pytest.mark.parametrize(
    "option",
    [
        {"assert_hostname": False},
        {"ca_certs": "/etc/ssl/certs/ca-certificates.crt"},
        {"cert_file": "/x.pem"},
    ],
    ids=lambda o: next(iter(o)),
)
def test_urllib3_options_that_would_change_a_shared_context_are_refused(
    option: dict[str, object],
) -> None:
    """assert_hostname=False, an extra CA or a client cert cannot ride on the shared context."""
    shared = ssl_context()
    with pytest.raises(ValueError, match="would change the shared SSLContext"):
        session("urllib3", ssl_context=shared, **option)
    assert shared.check_hostname
    assert shared.verify_mode == ssl.CERT_REQUIRED
    # Without the shared context, the same option is the caller's own business.
    close(session("urllib3", **option))


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_httpx_client_cert_cannot_ride_on_the_shared_context(client_name: str) -> None:
    """httpx would load `cert=` into the context it is given: refused with a shared one."""
    with pytest.raises(ValueError, match="would change the shared SSLContext"):
        session(client_name, ssl_context=ssl_context(), cert="/x.pem")  # type: ignore[call-overload]
