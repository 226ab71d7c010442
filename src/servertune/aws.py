"""AWS calls as plain signed HTTP: botocore serializes and signs, a servertune session sends.

    from servertune.aws import Signer
    from servertune.http import async_session

    s3 = Signer("s3")                                   # boto3's default credential chain
    async with async_session() as http:
        obj = await s3.acall(http, "get_object", {"Bucket": "b", "Key": "k"})
        obj["Body"]                                      # bytes

boto3 clients block, boto3 sessions must not be shared across threads, and neither runs in an
event loop, so code that fans out many calls pays a thread (and a client) per call. A `Signer` keeps one botocore client for
its *pipeline only*: parameter validation, serialization, S3 addressing and checksums, and the
SigV4/SigV4a signer. The call goes through that pipeline up to the moment botocore would send
(its `before-send` event), and servertune takes the signed request from there. Nothing about
signing is re-implemented. The response is parsed by botocore's own parser for the service's
protocol, errors are raised as the client's own exception classes (`NoSuchKey`, `ClientError`),
and botocore's `after-call` handlers run (S3 URL-decodes listed keys there).

Credentials are read from the client's credential object on every signature, so refreshable
credentials (assumed roles, SSO, container and instance metadata) refresh when they near their
expiry, exactly as in boto3; a signed request is valid for minutes, so sign just before
sending. A refresh may do blocking I/O (STS, metadata endpoint): it happens at most every few
minutes, on the loop's thread.

Mistakes give one `AwsCallError` line: an operation the service does not have, parameters
botocore's validator rejects, or an endpoint that cannot be reached.
"""

from __future__ import annotations

import difflib
import inspect
import io
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

try:
    import boto3
    import botocore.exceptions
    import botocore.parsers
    from botocore.awsrequest import AWSPreparedRequest, HeadersDict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("servertune.aws needs boto3: pip install 'servertune[aws]'") from exc

__all__ = [
    "CHUNK_SIZE",
    "PRESIGNED_BATCH_OPERATIONS",
    "AwsCallError",
    "SignedRequest",
    "Signer",
    "Way",
    "way_for",
]

#: Bytes read or written at a time when a body is streamed (to a sink, or from a file).
CHUNK_SIZE = 256 * 1024


#: Operations whose calls a presigned URL fetched by a pooled sync session makes faster than
#: boto3 clients in threads (bench aws: 100 GETs, 1.07-1.25x boto3 threads' batch time at
#: 0.4-0.5x its client CPU per GET). Only GETs of S3 objects are measured; other operations
#: (and any parameter sent as a header) need the signed request.
PRESIGNED_BATCH_OPERATIONS = frozenset({"get_object"})


@dataclass(frozen=True)
class Way:
    """How to make a batch of calls, as `bench aws` names the ways, and why (its measurement)."""

    name: str
    #: What to call.
    how: str
    reason: str


def way_for(calls: int, *, in_event_loop: bool, operation: str = "get_object") -> Way:
    """The way `bench aws` measured fastest for `calls` calls of `operation` (snake_case).

    Inside an event loop the signed async path is the one that never blocks the loop; at 100
    GETs it takes 1.0-1.3x boto3 threads' time (both on the local S3 server's CPU floor), with about
    0.7x its client CPU per GET. In sync code, GETs of S3 objects are fastest as presigned URLs
    on one pooled session (fewer botocore steps per call), anything else as boto3 clients in
    threads; a single call has nothing to overlap.
    """
    if calls < 1:
        raise ValueError(f"calls: {calls} is not a number of calls (at least 1)")
    if in_event_loop:
        return Way(
            "signed async",
            "Signer.acall on async_session(), all calls gathered",
            "no thread per call; bench aws at 100 GETs: 0.8-1.0x boto3 threads' speed "
            "(both on the server's CPU floor), 0.7x its client CPU per GET",
        )
    if calls == 1:
        return Way("boto3 serial", "one boto3 client", "one call: nothing to overlap")
    if operation in PRESIGNED_BATCH_OPERATIONS:
        return Way(
            "presigned sync pool",
            "Signer.presigned_url, fetched from a thread pool over one pooled session",
            "bench aws at 100 GETs: 1.07-1.25x boto3 threads, 0.4-0.5x its client CPU per GET",
        )
    return Way(
        "boto3 threads",
        "a thread pool with a boto3 session and client per thread",
        "the signed request of any operation, overlapped; presigned URLs cover GETs only",
    )


class AwsCallError(Exception):
    """An AWS call servertune could not make: bad operation or parameters, unreachable endpoint."""


@dataclass(frozen=True)
class SignedRequest:
    """What to send: botocore's signed request, ready for any HTTP client."""

    operation: str
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | BinaryIO | None
    prepared: AWSPreparedRequest


class _Captured(Exception):
    """Raised from botocore's before-send event to stop the call with the signed request."""

    def __init__(self, request: AWSPreparedRequest) -> None:
        super().__init__("captured")
        self.request = request


def _capture(request: AWSPreparedRequest, **_: Any) -> None:
    raise _Captured(request)


class Signer:
    """One AWS service's request pipeline (a private botocore client), for any HTTP session.

    `session` is a `boto3.Session` (default: a new one, so the default credential chain and
    region); `region_name`, `endpoint_url` and `config` go to `session.client(...)`.
    """

    def __init__(
        self,
        service: str,
        *,
        session: boto3.Session | None = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        config: botocore.config.Config | None = None,
    ) -> None:
        session = session or boto3.Session()
        try:
            self.client: Any = session.client(
                service,  # type: ignore[call-overload]
                region_name=region_name,
                endpoint_url=endpoint_url,
                config=config,
            )
        except botocore.exceptions.BotoCoreError as error:
            raise AwsCallError(f"{service}: {error}") from None
        self.service = service
        model = self.client.meta.service_model
        self._parser = botocore.parsers.create_parser(model.resolved_protocol)
        # The private client never sends: every call stops at before-send with the request.
        self.client.meta.events.register("before-send", _capture)

    # --- building -----------------------------------------------------------------------------

    def _operation_name(self, operation: str) -> str:
        api_name: str | None = self.client.meta.method_to_api_mapping.get(operation)
        if api_name is None:
            known = sorted(self.client.meta.method_to_api_mapping)
            close = difflib.get_close_matches(operation, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "operations are snake_case"
            raise AwsCallError(f"{self.service}: no operation {operation!r}; {hint}")
        return api_name

    def prepare(self, operation: str, params: Mapping[str, Any] | None = None) -> SignedRequest:
        """Validate, serialize and sign `operation` with `params` through botocore's pipeline."""
        self._operation_name(operation)
        try:
            getattr(self.client, operation)(**dict(params or {}))
        except _Captured as captured:
            request = captured.request
        except botocore.exceptions.ParamValidationError as error:
            reason = " ".join(str(error.kwargs.get("report", error)).split())
            raise AwsCallError(f"{self.service}.{operation}: {reason}") from None
        except botocore.exceptions.BotoCoreError as error:
            raise AwsCallError(f"{self.service}.{operation}: {error}") from None
        else:  # pragma: no cover - the before-send handler always raises
            raise AssertionError("botocore sent a request servertune meant to send")
        headers = {
            k: v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()
        }
        body: Any = request.body
        if isinstance(body, str):  # query-protocol services hand over a form-encoded str
            body = body.encode("utf-8")
        return SignedRequest(operation, request.method, request.url, headers, body, request)

    def presigned_url(
        self, operation: str, params: Mapping[str, Any] | None = None, expires_in: int = 3600
    ) -> str:
        """A presigned URL (S3): any plain GET/PUT of it is the call, no signing by the sender.

        With temporary credentials the URL stops working when they expire, whatever
        `expires_in` says.
        """
        self._operation_name(operation)
        try:
            url: str = self.client.generate_presigned_url(
                operation, Params=dict(params or {}), ExpiresIn=expires_in
            )
        except botocore.exceptions.ParamValidationError as error:
            reason = " ".join(str(error.kwargs.get("report", error)).split())
            raise AwsCallError(f"{self.service}.{operation}: {reason}") from None
        except botocore.exceptions.BotoCoreError as error:
            raise AwsCallError(f"{self.service}.{operation}: {error}") from None
        return url

    # --- parsing ------------------------------------------------------------------------------

    def parse(
        self, request: SignedRequest, status: int, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any]:
        """botocore's parsed response; an error status raises the client's exception class."""
        context: dict[str, Any] = getattr(request.prepared, "context", None) or {}
        model = self.client.meta.service_model.operation_model(
            self._operation_name(request.operation)
        )
        streaming = status < 300 and model.has_streaming_output
        response = {
            "status_code": status,
            "headers": HeadersDict(headers),
            # A streamed payload is handed over as is (botocore would decode bytes as UTF-8).
            "body": io.BytesIO(body) if streaming else body,
            "context": {"operation_name": model.name},
        }
        parsed: dict[str, Any] = self._parser.parse(response, model.output_shape)
        if streaming and model.output_shape is not None:
            payload = model.output_shape.serialization.get("payload")
            if payload:
                parsed[payload] = body
        http = _FakeHttpResponse(status, response["headers"], body)
        service_id = self.client.meta.service_model.service_id.hyphenize()
        self.client.meta.events.emit(
            f"after-call.{service_id}.{model.name}",
            http_response=http, parsed=parsed, model=model, context=context,
        )  # fmt: skip
        if status >= 300:
            code = context.get("error_code_override") or parsed.get("Error", {}).get("Code")
            raise self.client.exceptions.from_code(code)(parsed, model.name)
        return parsed

    # --- sending ------------------------------------------------------------------------------

    def call(
        self,
        http: Any,
        operation: str,
        params: Mapping[str, Any] | None = None,
        *,
        sink: BinaryIO | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Sign and send with a sync session (requests, httpx.Client, httpx2.Client, urllib3,
        niquests).

        With `sink`, a successful response body is written to it in chunks instead of being
        returned under the payload key (e.g. "Body").
        """
        request = self.prepare(operation, params)
        try:
            status, headers, body = _send_sync(http, request, sink, timeout)
        except Exception as error:
            raise _transport_error(self.service, request, error) from error
        return self.parse(request, status, headers, body)

    async def acall(
        self,
        http: Any,
        operation: str,
        params: Mapping[str, Any] | None = None,
        *,
        sink: BinaryIO | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Sign and send with an async session (aiohttp, httpx.AsyncClient, httpx2.AsyncClient,
        niquests)."""
        request = self.prepare(operation, params)
        try:
            status, headers, body = await _send_async(http, request, sink, timeout)
        except Exception as error:
            raise _transport_error(self.service, request, error) from error
        return self.parse(request, status, headers, body)


@dataclass
class _FakeHttpResponse:
    """The attributes botocore's after-call handlers read from an HTTP response."""

    status_code: int
    headers: Any
    content: bytes


def _transport_error(service: str, request: SignedRequest, error: Exception) -> Exception:
    if isinstance(error, botocore.exceptions.ClientError):
        return error
    host = request.url.split("/")[2] if "//" in request.url else request.url
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return AwsCallError(f"{service}.{request.operation}: cannot reach {host}: {reason}")


def _chunks(body: BinaryIO) -> Iterator[bytes]:
    while chunk := body.read(CHUNK_SIZE):
        yield chunk


async def _achunks(body: BinaryIO) -> AsyncIterator[bytes]:
    while chunk := body.read(CHUNK_SIZE):
        yield chunk


def _is_stream(body: object) -> bool:
    return body is not None and not isinstance(body, bytes | bytearray | str)


def _send_sync(
    http: Any, request: SignedRequest, sink: BinaryIO | None, timeout: float | None
) -> tuple[int, Mapping[str, str], bytes]:
    body = request.body
    if hasattr(http, "connection_from_url"):  # urllib3.PoolManager
        response = http.request(
            request.method, request.url, headers=request.headers, body=body,
            preload_content=False, timeout=timeout, redirect=False, retries=False,
        )  # fmt: skip
        try:
            return (
                response.status,
                response.headers,
                _drain(response.stream(CHUNK_SIZE), response.status, sink),
            )
        finally:
            response.release_conn()
    if hasattr(http, "build_request"):  # httpx.Client, httpx2.Client
        content = _chunks(body) if _is_stream(body) else body  # type: ignore[arg-type]
        with http.stream(
            request.method, request.url, headers=request.headers, content=content, timeout=timeout
        ) as response:
            return (
                response.status_code,
                response.headers,
                _drain(response.iter_bytes(CHUNK_SIZE), response.status_code, sink),
            )
    # requests.Session, niquests.Session
    response = http.request(
        request.method, request.url, headers=request.headers, data=body, stream=True,
        timeout=timeout, allow_redirects=False,
    )  # fmt: skip
    try:
        return (
            response.status_code,
            response.headers,
            _drain(response.iter_content(CHUNK_SIZE), response.status_code, sink),
        )
    finally:
        response.close()


def _drain(chunks: Iterator[bytes], status: int, sink: BinaryIO | None) -> bytes:
    if sink is None or status >= 300:
        return b"".join(chunks)
    for chunk in chunks:
        sink.write(chunk)
    return b""


async def _adrain(chunks: AsyncIterator[bytes], status: int, sink: BinaryIO | None) -> bytes:
    if sink is None or status >= 300:
        return b"".join([c async for c in chunks])
    async for chunk in chunks:
        sink.write(chunk)
    return b""


async def _send_async(
    http: Any, request: SignedRequest, sink: BinaryIO | None, timeout: float | None
) -> tuple[int, Mapping[str, str], bytes]:
    body = request.body
    stream = _is_stream(body)
    if type(http).__module__.startswith("aiohttp"):
        import aiohttp
        import yarl

        data = _achunks(body) if stream else body  # type: ignore[arg-type]
        # botocore's URL is already percent-encoded as signed: aiohttp must not re-quote it.
        async with http.request(
            request.method, yarl.URL(request.url, encoded=True), headers=request.headers,
            data=data, allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout) if timeout else None,
        ) as response:  # fmt: skip
            return (
                response.status,
                response.headers,
                await _adrain(response.content.iter_chunked(CHUNK_SIZE), response.status, sink),
            )
    if hasattr(http, "build_request"):  # httpx.AsyncClient, httpx2.AsyncClient
        content = _achunks(body) if stream else body  # type: ignore[arg-type]
        async with http.stream(
            request.method, request.url, headers=request.headers, content=content, timeout=timeout
        ) as response:
            return (
                response.status_code,
                response.headers,
                await _adrain(response.aiter_bytes(CHUNK_SIZE), response.status_code, sink),
            )
    # niquests.AsyncSession
    response = await http.request(
        request.method, request.url, headers=request.headers, data=body, timeout=timeout,
        allow_redirects=False,
    )  # fmt: skip
    content = response.content
    if inspect.isawaitable(content):
        content = await content
    if sink is not None and response.status_code < 300:
        sink.write(content)
        content = b""
    return response.status_code, response.headers, content or b""
