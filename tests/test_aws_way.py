"""`servertune.aws.way_for`: the way `bench aws` measured fastest for a call pattern."""

from __future__ import annotations

import pytest

from servertune.aws import PRESIGNED_BATCH_OPERATIONS, Signer, way_for
from servertune.bench.scenarios.aws import CONFIGS


def test_inside_an_event_loop_the_signed_async_path_is_chosen() -> None:
    """In a loop, whatever the operation and count, the way that blocks no thread."""
    for operation in ("get_object", "put_object", "list_objects_v2"):
        for calls in (1, 10, 100):
            assert way_for(calls, in_event_loop=True, operation=operation).name == "signed async"


def test_sync_gets_of_objects_use_presigned_urls_on_a_pooled_session() -> None:
    """Many GETs in sync code: the way measured faster than boto3 threads."""
    assert way_for(100, in_event_loop=False, operation="get_object").name == "presigned sync pool"


def test_sync_calls_that_cannot_be_presigned_use_boto3_threads() -> None:
    """An operation outside the measured presigned set keeps the signed request."""
    way = way_for(100, in_event_loop=False, operation="put_object")
    assert way.name == "boto3 threads"
    assert "put_object" not in PRESIGNED_BATCH_OPERATIONS


def test_one_sync_call_has_nothing_to_overlap() -> None:
    """A single call: one boto3 client."""
    assert way_for(1, in_event_loop=False).name == "boto3 serial"


def test_every_way_chosen_is_one_bench_aws_measures_and_cites_it() -> None:
    """The choice names a measured way and says why."""
    patterns = [
        (c, loop, op)
        for c in (1, 2, 100)
        for loop in (True, False)
        for op in ("get_object", "put_object")
    ]
    for calls, loop, operation in patterns:
        way = way_for(calls, in_event_loop=loop, operation=operation)
        assert way.name in CONFIGS
        assert way.reason
        assert way.how


def test_presigned_operations_are_operations_s3_has() -> None:
    """Every operation in the presigned set is a real S3 method (no typo can hide in it)."""
    s3 = Signer("s3", region_name="us-east-1")
    for operation in PRESIGNED_BATCH_OPERATIONS:
        assert operation in s3.client.meta.method_to_api_mapping


def test_no_calls_is_refused() -> None:
    """Zero calls is a mistake, said in one line."""
    with pytest.raises(ValueError, match="calls: 0"):
        way_for(0, in_event_loop=False)
