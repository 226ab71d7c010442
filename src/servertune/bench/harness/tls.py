"""A throwaway CA and a 127.0.0.1 server certificate for loopback TLS tests and benchmarks.

Made with the `openssl` command line at run time (no key ships in the package), valid for two
days, with the extensions Python 3.13's strict X.509 verification requires.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TestPKI", "make_test_pki"]

_LEAF_EXTENSIONS = """\
subjectAltName = IP:127.0.0.1
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


@dataclass(frozen=True)
class TestPKI:
    """Paths to the CA certificate and the server's certificate and key."""

    __test__ = False  # not a pytest test class despite the name

    ca: Path
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        """A server-side context presenting the 127.0.0.1 certificate."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def make_test_pki(directory: Path) -> TestPKI:
    """Create the CA and server certificate in `directory`; raise RuntimeError without openssl."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("the openssl command is needed to make a loopback test certificate")
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / "ca.pem", directory / "ca.key"
    cert, key, csr = directory / "server.pem", directory / "server.key", directory / "server.csr"
    ext = directory / "leaf.ext"
    ext.write_text(_LEAF_EXTENSIONS)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    steps = [
        [openssl, "req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2",
         "-subj", "/CN=servertune loopback test CA",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        [openssl, "req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
        [openssl, "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext],
    ]  # fmt: skip
    for step in steps:
        subprocess.run([str(a) for a in step], check=True, capture_output=True, timeout=60)
    return TestPKI(ca=ca, cert=cert, key=key)
