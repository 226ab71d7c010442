"""servertune.aws against a real moto server on 127.0.0.1 with IAM checks on: calls, errors, streams.

moto runs as its own process (`moto_server`), with INITIAL_NO_AUTH_ACTION_COUNT set so the
first actions create two IAM users and their keys and every later request is authenticated:
alice may do anything on S3, bob nothing. Only fake credentials and 127.0.0.1 are ever used.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
import pytest
from botocore.credentials import RefreshableCredentials

from servertune.aws import AwsCallError, Signer
from servertune.bench.harness.moto import FAKE_CREDENTIALS, FAKE_REGION, start_moto
from servertune.bench.harness.supervision import Stack
from servertune.http import async_session, session
from tests.http_support import MAIN_CLIENTS, close

BUCKET = "servertune-test"
#: Bytes that are not UTF-8, so a body decoded as text anywhere would fail the test.
BINARY = bytes(range(256)) * 4
#: create_user x2, put_user_policy, create_access_key x2: then moto checks every request.
SETUP_ACTIONS = 5
ALLOW_S3 = (
    '{"Version": "2012-10-17", "Statement": '
    '[{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'
)


class Moto:
    """The running server, and the keys of the two users."""

    def __init__(self, endpoint: str, alice: dict[str, str], bob: dict[str, str]) -> None:
        self.endpoint = endpoint
        self.alice = alice
        self.bob = bob

    def boto(self, keys: dict[str, str]) -> boto3.Session:
        """A boto3 session with `keys` (and nothing from the environment)."""
        return boto3.Session(
            aws_access_key_id=keys["AccessKeyId"],
            aws_secret_access_key=keys["SecretAccessKey"],
            region_name=FAKE_REGION,
        )

    def signer(self, keys: dict[str, str] | None = None) -> Signer:
        """An S3 Signer for this server, as alice unless told."""
        return Signer("s3", session=self.boto(keys or self.alice), endpoint_url=self.endpoint)


@pytest.fixture(scope="module")
def moto() -> Iterator[Moto]:
    """moto_server with IAM checks on after the setup actions, and a bucket alice owns."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in FAKE_CREDENTIALS.items():
            patch.setenv(key, value)
        with Stack("aws-test") as stack:
            _, endpoint = start_moto(stack, auth_after=SETUP_ACTIONS)
            iam = boto3.client("iam", endpoint_url=endpoint, region_name=FAKE_REGION)
            iam.create_user(UserName="alice")
            iam.put_user_policy(UserName="alice", PolicyName="s3", PolicyDocument=ALLOW_S3)
            alice = iam.create_access_key(UserName="alice")["AccessKey"]
            iam.create_user(UserName="bob")
            bob = iam.create_access_key(UserName="bob")["AccessKey"]
            server = Moto(endpoint, alice, bob)
            server.boto(alice).client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
            yield server


@pytest.fixture(autouse=True)
def _fake_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a test builds, boto3 finds only fake credentials and no config files."""
    for key, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_put_get_list_through_each_sync_session(moto: Moto, client: str) -> None:
    """PUT, GET and LIST signed by botocore and sent by each sync servertune session."""
    s3 = moto.signer()
    http = session(client)  # type: ignore[call-overload]
    key = f"sync/{client}/hello world.txt"
    try:
        put = s3.call(
            http, "put_object", {"Bucket": BUCKET, "Key": key, "Body": b"hi " + key.encode()}
        )
        assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
        got = s3.call(http, "get_object", {"Bucket": BUCKET, "Key": key})
        assert got["Body"] == b"hi " + key.encode()
        assert got["ContentLength"] == len(got["Body"])
        listed = s3.call(http, "list_objects_v2", {"Bucket": BUCKET, "Prefix": f"sync/{client}/"})
        assert [o["Key"] for o in listed["Contents"]] == [key]
    finally:
        close(http)


@pytest.mark.parametrize("client", ["aiohttp", "httpx", "httpx2"])
def test_put_get_list_through_async_sessions(moto: Moto, client: str) -> None:
    """The same through async sessions; a key with spaces and non-ASCII survives both ways."""
    s3 = moto.signer()
    key = f"async/{client}/naïve name+plus.txt"

    async def scenario() -> tuple[bytes, list[str]]:
        async with async_session(client) as http:  # type: ignore[call-overload]
            await s3.acall(http, "put_object", {"Bucket": BUCKET, "Key": key, "Body": BINARY})
            got = await s3.acall(http, "get_object", {"Bucket": BUCKET, "Key": key})
            listed = await s3.acall(
                http, "list_objects_v2", {"Bucket": BUCKET, "Prefix": f"async/{client}/"}
            )
            return got["Body"], [o["Key"] for o in listed["Contents"]]

    body, keys = asyncio.run(scenario())
    assert body == BINARY
    assert keys == [key]


def test_missing_key_raises_botocores_no_such_key(moto: Moto) -> None:
    """A 404 is parsed by botocore into the client's own NoSuchKey exception."""
    s3 = moto.signer()

    async def scenario() -> None:
        async with async_session("aiohttp") as http:
            await s3.acall(http, "get_object", {"Bucket": BUCKET, "Key": "no/such/key"})

    with pytest.raises(s3.client.exceptions.NoSuchKey) as caught:
        asyncio.run(scenario())
    assert caught.value.response["Error"]["Code"] == "NoSuchKey"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


@pytest.mark.parametrize(
    ("who", "code"),
    [
        ("bob", "AccessDenied"),
        ("wrong secret", "SignatureDoesNotMatch"),
        ("unknown key", "InvalidAccessKeyId"),
    ],
)
def test_wrong_keys_are_refused_with_botocores_client_error(
    moto: Moto, who: str, code: str
) -> None:
    """Keys without permission, a wrong secret and an unknown key each raise ClientError(code)."""
    keys = {
        "bob": moto.bob,
        "wrong secret": {**moto.alice, "SecretAccessKey": "not-the-secret"},
        "unknown key": {"AccessKeyId": "AKIANOTAREALKEY00000", "SecretAccessKey": "x"},
    }[who]
    s3 = moto.signer(keys)
    http = session("requests")
    try:
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            s3.call(http, "list_objects_v2", {"Bucket": BUCKET})
    finally:
        http.close()
    assert caught.value.response["Error"]["Code"] == code
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_large_bodies_are_streamed_both_ways(moto: Moto, tmp_path: Path) -> None:
    """An 8 MiB file is uploaded from the file object and downloaded into a sink in chunks."""
    data = hashlib.sha256(b"seed").digest() * (8 * 1024 * 1024 // 32)
    source = tmp_path / "big.bin"
    source.write_bytes(data)
    s3 = moto.signer()
    sink = tmp_path / "back.bin"

    async def scenario() -> dict[str, Any]:
        async with async_session("aiohttp") as http:
            with source.open("rb") as body:
                await s3.acall(http, "put_object", {"Bucket": BUCKET, "Key": "big", "Body": body})
            with sink.open("wb") as out:
                return await s3.acall(
                    http, "get_object", {"Bucket": BUCKET, "Key": "big"}, sink=out
                )

    got = asyncio.run(scenario())
    assert got["ContentLength"] == len(data)
    assert got["Body"] == b""  # written to the sink, not held in memory
    assert hashlib.sha256(sink.read_bytes()).digest() == hashlib.sha256(data).digest()


def test_sync_session_streams_a_download_into_a_sink(moto: Moto) -> None:
    """A sync session writes the body to the sink too."""
    s3 = moto.signer()
    http = session("urllib3")
    try:
        s3.call(http, "put_object", {"Bucket": BUCKET, "Key": "sink", "Body": b"y" * 300_000})
        out = io.BytesIO()
        s3.call(http, "get_object", {"Bucket": BUCKET, "Key": "sink"}, sink=out)
    finally:
        http.clear()
    assert out.getvalue() == b"y" * 300_000


@pytest.fixture(scope="module")
def open_moto() -> Iterator[str]:
    """A second moto_server without IAM checks: moto's auth code fails on query-string
    (presigned) signatures with a 500, so presigned URLs are tested here."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in FAKE_CREDENTIALS.items():
            patch.setenv(key, value)
        with Stack("aws-test-open") as stack:
            _, endpoint = start_moto(stack)
            boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
            yield endpoint


@pytest.mark.parametrize("version", ["s3v4", None])
def test_presigned_url_works_with_a_plain_pooled_session(
    open_moto: str, version: str | None
) -> None:
    """A presigned GET URL is fetched by a plain servertune session, no signing by the sender."""
    from botocore.config import Config

    config = Config(signature_version=version) if version else None
    s3 = Signer("s3", endpoint_url=open_moto, config=config)
    http = session("requests")
    try:
        s3.call(http, "put_object", {"Bucket": BUCKET, "Key": "presigned", "Body": b"shared"})
        url = s3.presigned_url("get_object", {"Bucket": BUCKET, "Key": "presigned"}, expires_in=60)
        assert url.startswith(open_moto)
        assert ("X-Amz-Signature=" in url) == (version == "s3v4")
        assert http.get(url).content == b"shared"
    finally:
        http.close()


def test_presigned_url_rejects_bad_parameters() -> None:
    """Presigning validates parameters like a call does: one AwsCallError line."""
    with pytest.raises(
        AwsCallError, match=r'^s3.get_object: Missing required parameter in input: "Key"$'
    ):
        Signer("s3", endpoint_url="http://127.0.0.1:9").presigned_url("get_object", {"Bucket": "b"})


def test_expiring_credentials_are_refreshed_not_cached(moto: Moto) -> None:
    """Credentials near expiry are refreshed before each signature; the new key signs."""
    calls: list[int] = []
    lock = threading.Lock()

    def refresh() -> dict[str, str]:
        with lock:
            calls.append(1)
        # Expiring in 1 minute: inside botocore's refresh window, so the next call refreshes.
        expiry = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
        return {
            "access_key": moto.alice["AccessKeyId"],
            "secret_key": moto.alice["SecretAccessKey"],
            "token": "",
            "expiry_time": expiry,
        }

    credentials = RefreshableCredentials.create_from_metadata(
        metadata=refresh(), refresh_using=refresh, method="servertune-test"
    )
    base = boto3.Session(region_name=FAKE_REGION)
    base._session._credentials = credentials  # type: ignore[attr-defined]
    s3 = Signer("s3", session=base, endpoint_url=moto.endpoint)
    http = session("requests")
    try:
        before = len(calls)
        for _ in range(2):
            assert s3.call(http, "list_objects_v2", {"Bucket": BUCKET})["Name"] == BUCKET
    finally:
        http.close()
    assert len(calls) - before >= 2


def test_unknown_operation_is_one_clear_error(moto: Moto) -> None:
    """A misspelt operation names itself and the closest real one."""
    with pytest.raises(
        AwsCallError, match=r"^s3: no operation 'get_objekt'; did you mean 'get_object'\?$"
    ):
        moto.signer().prepare("get_objekt", {})


def test_missing_parameter_is_one_clear_error(moto: Moto) -> None:
    """botocore's validator report becomes one line naming the operation and the parameter."""
    with pytest.raises(
        AwsCallError, match=r'^s3.get_object: Missing required parameter in input: "Key"$'
    ):
        moto.signer().prepare("get_object", {"Bucket": BUCKET})


def test_unreachable_endpoint_is_one_clear_error() -> None:
    """Nothing listens on port 9: sync and async calls raise AwsCallError naming the host."""
    s3 = Signer("s3", endpoint_url="http://127.0.0.1:9")
    http = session("requests")
    try:
        with pytest.raises(AwsCallError, match=r"^s3.list_buckets: cannot reach 127.0.0.1:9: "):
            s3.call(http, "list_buckets")
    finally:
        http.close()

    async def scenario() -> None:
        async with async_session("aiohttp") as client:
            await s3.acall(client, "list_buckets")

    with pytest.raises(AwsCallError, match=r"^s3.list_buckets: cannot reach 127.0.0.1:9: .+"):
        asyncio.run(scenario())


def test_missing_boto3_names_the_extra(tmp_path: Path) -> None:
    """Without boto3, importing servertune.aws says pip install 'servertune[aws]'."""
    code = (
        "import sys\nsys.modules['boto3'] = None\n"
        "try:\n    import servertune.aws\nexcept ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    assert "pip install 'servertune[aws]'" in out.stdout


def test_presigning_without_credentials_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No credentials anywhere: presigning says so in one AwsCallError line, no traceback."""
    for key in FAKE_CREDENTIALS:
        if key.startswith("AWS_") and key != "AWS_DEFAULT_REGION":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3 = Signer(
        "s3", session=boto3.Session(region_name=FAKE_REGION), endpoint_url="http://127.0.0.1:9"
    )
    with pytest.raises(AwsCallError, match=r"^s3\.get_object: Unable to locate credentials$"):
        s3.presigned_url("get_object", {"Bucket": BUCKET, "Key": "k"})
