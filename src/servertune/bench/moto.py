"""A real S3-compatible server on 127.0.0.1: moto's server mode, started and stopped by a Stack.

Used by `servertune bench aws` and the tests of `servertune.aws`. Every call it answers is
local; the credentials that go with it are fake (`FAKE_CREDENTIALS`), so nothing can reach AWS.
"""

from __future__ import annotations

from servertune.bench.servers import LOOPBACK, Server, Stack, free_port, tool_path

__all__ = ["FAKE_CREDENTIALS", "FAKE_REGION", "start_moto"]

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
