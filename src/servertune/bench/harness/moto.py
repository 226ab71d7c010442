"""A real S3-compatible server on 127.0.0.1: moto's server mode, started and stopped by a Stack.

Used by `servertune bench aws` and the tests of `servertune.aws`. Every call it answers is
local; the credentials that go with it are fake (`FAKE_CREDENTIALS`), so nothing can reach AWS.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from servertune.bench.harness.ports import LOOPBACK, free_port
from servertune.bench.harness.supervision import Server, Stack, tool_path

__all__ = ["FAKE_CREDENTIALS", "FAKE_REGION", "start_moto", "start_moto_with_latency"]

#: Environment for boto3 pointing at nothing real: fake keys, no shared config or credentials
#: file, no instance metadata lookups.
FAKE_REGION = "us-east-1"
FAKE_CREDENTIALS: dict[str, str] = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": FAKE_REGION,
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def start_moto(stack: Stack, *, auth_after: int | None = None) -> tuple[Server, str]:
    """Start `moto_server` on a free loopback port; return it and its endpoint URL.

    `auth_after=N` turns moto's IAM checks on after N unauthenticated actions (moto's
    INITIAL_NO_AUTH_ACTION_COUNT): the first N set up users and keys, the rest are checked.
    """
    port = free_port()
    env = {} if auth_after is None else {"INITIAL_NO_AUTH_ACTION_COUNT": str(auth_after)}
    argv = [tool_path("moto_server"), "-H", LOOPBACK, "-p", str(port)]
    server = stack.start(f"moto-{port}", "moto", argv, ports=[port], env=env)
    return server, f"http://{LOOPBACK}:{port}"


def start_moto_with_latency(stack: Stack, delay_ms: float) -> tuple[Server, str]:
    """moto's own WSGI app and threaded server, answering each request `delay_ms` later.

    The delay stands in for the network and service time a real S3 call has and loopback has
    not (requests overlap: the server is threaded). moto itself is unchanged.
    """
    import servertune

    port = free_port()
    source = str(Path(servertune.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "servertune.bench.harness.moto", str(port), str(delay_ms)]
    server = stack.start(f"moto-{port}", "moto", argv, ports=[port], env={"PYTHONPATH": path})
    return server, f"http://{LOOPBACK}:{port}"


def _serve(port: int, delay_ms: float) -> None:
    """Run moto's app (as `moto_server` builds it) behind a fixed delay, until SIGTERM."""
    import signal

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    moto_app = DomainDispatcherApplication(create_backend_app)
    delay = delay_ms / 1000

    def delayed(environ: dict[str, Any], start_response: Any) -> Any:
        if delay:
            time.sleep(delay)
        return moto_app(environ, start_response)

    server = make_server(LOOPBACK, port, delayed, threaded=True, request_handler=MotoRequestHandler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.serve_forever()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), float(sys.argv[2]))
