"""`servertune measure`: in-process service time and cpu_fraction of apps with known ratios."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.measure import (
    MIN_CPU_FRACTION,
    MeasureError,
    Measurement,
    Sample,
    detect_interface,
    measure_app,
)
from servertune.workload import load_workload
from tests import measure_apps

#: The repository root: the test apps import as `tests.measure_apps`.
HERE = str(Path(__file__).resolve().parents[1])
#: The issue's tolerance for seed 000's app: cpu_fraction 0.5 within 0.1.
TOLERANCE = 0.1


def _measure(name: str, requests: int = 8, **kwargs: object) -> Measurement:
    return measure_app(
        f"tests.measure_apps:{name}", app_dir=HERE, requests=requests, warmup=1, **kwargs
    )  # type: ignore[arg-type]


def test_seed000_app_measures_half_cpu() -> None:
    """Seed 000's app (10 ms sleep + 10 ms CPU, five times) measures cpu_fraction 0.5 +- 0.1."""
    m = _measure("seed000")
    assert abs(m.cpu_fraction - 0.5) <= TOLERANCE
    assert abs(m.workload_values()["cpu_fraction"] - 0.5) <= TOLERANCE
    assert m.service_time_ms >= 100  # five 10 ms sleeps and 50 ms of CPU at the least


def test_pure_sleep_measures_about_zero() -> None:
    """An app that only sleeps measures cpu_fraction near 0, written as the model's floor."""
    m = _measure("pure_sleep")
    assert m.cpu_fraction < TOLERANCE
    assert m.workload_values()["cpu_fraction"] == pytest.approx(MIN_CPU_FRACTION, abs=0.05)


def test_pure_cpu_measures_about_one() -> None:
    """An app that only computes measures cpu_fraction near 1, even when the box is busy."""
    m = _measure("pure_cpu")
    assert m.cpu_fraction > 1 - TOLERANCE


def test_asgi_app_is_detected_and_measured_with_lifespan() -> None:
    """An ASGI app runs its lifespan startup first and measures like its WSGI twin."""
    m = _measure("asgi_seed000")
    assert m.interface == "asgi"
    assert m.statuses == {200: 8}
    assert abs(m.cpu_fraction - 0.5) <= TOLERANCE


def test_interface_detection() -> None:
    """Coroutine functions are ASGI; plain callables are WSGI."""
    assert detect_interface(measure_apps.asgi_seed000) == "asgi"
    assert detect_interface(measure_apps.seed000) == "wsgi"


def test_toml_is_a_workload_gen_reads(tmp_path: Path) -> None:
    """The TOML `--out` writes loads as a Workload with the measured numbers and the app."""
    m = _measure("pure_cpu", requests=3)
    path = tmp_path / "workload.toml"
    path.write_text(m.to_toml(), encoding="utf-8")
    workload = load_workload(path)
    assert workload.cpu_fraction == m.workload_values()["cpu_fraction"]
    assert workload.service_time_ms == m.workload_values()["service_time_ms"]
    assert workload.app == "tests.measure_apps:pure_cpu"


def test_asgi_toml_names_no_app() -> None:
    """An ASGI app is not written as `app`: the generated uWSGI/gunicorn configs serve WSGI."""
    assert "app" not in _measure("asgi_seed000", requests=2).workload_values()


def test_error_statuses_are_counted_and_flagged() -> None:
    """Answers >= 400 are counted by status and named in a note."""
    m = _measure("not_found", requests=4)
    assert m.statuses == {404: 4}
    assert any("400" in note for note in m.notes())


def test_time_limit_stops_measuring() -> None:
    """--max-seconds bounds the run whatever --requests says, and the result says so."""
    m = _measure("pure_sleep", requests=1000, max_seconds=0.1)
    assert m.stopped_early
    assert len(m.samples) in range(1, 1000)
    assert any("time limit" in note for note in m.notes())


def test_request_carries_method_path_query_headers_and_body() -> None:
    """The app sees the method, path, query string, headers and body it was given."""
    seen: dict[str, object] = {}

    def app(environ: dict[str, object], start_response: measure_apps.StartResponse) -> list[bytes]:
        body = environ["wsgi.input"].read()  # type: ignore[attr-defined]
        seen.update(environ, body=body)
        start_response("201 Created", [])
        return [b""]

    m = measure_app(
        "inline:app", app=app, path="/a%20b?x=1", method="post", headers=[("X-Token", "t")],
        body=b"hi", requests=1, warmup=0,
    )  # fmt: skip
    assert m.statuses == {201: 1}
    assert (seen["REQUEST_METHOD"], seen["PATH_INFO"], seen["QUERY_STRING"]) == (
        "POST",
        "/a b",
        "x=1",
    )
    assert (seen["HTTP_X_TOKEN"], seen["CONTENT_LENGTH"], seen["body"]) == ("t", "2", b"hi")


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        ("no_colon", {}, "module:callable"),
        ("tests.measure_apps_missing:app", {}, "cannot import"),
        ("tests.measure_apps:missing", {}, "no attribute"),
        ("tests.measure_apps:ROUNDS", {}, "not callable"),
        # The library names its own inputs; only the CLI maps them to flags.
        ("tests.measure_apps:seed000", {"path": "x"}, "^path: "),
        ("tests.measure_apps:seed000", {"requests": 0}, "^requests: "),
        ("tests.measure_apps:seed000", {"method": "GE T"}, "^method: "),
    ],
)
def test_bad_input_is_one_clear_error(spec: str, kwargs: dict[str, object], message: str) -> None:
    """Bad app specs and options raise MeasureError naming the problem."""
    with pytest.raises(MeasureError, match=message):
        measure_app(spec, app_dir=HERE, **kwargs)  # type: ignore[arg-type]


@given(
    wall=st.floats(0, 10, allow_nan=False),
    cpu=st.floats(0, 10, allow_nan=False),
    runqueue=st.floats(0, 10, allow_nan=False),
)
def test_sample_fraction_is_a_share(wall: float, cpu: float, runqueue: float) -> None:
    """Whatever the clocks say, busy time covers CPU time and cpu_fraction stays in [0, 1]."""
    sample = Sample(wall_s=wall, cpu_s=cpu, runqueue_s=runqueue, status=200)
    assert sample.busy_s >= cpu
    assert 0 <= sample.cpu_fraction <= 1


def test_core_wait_is_not_service_time() -> None:
    """Time spent waiting for a core is taken out: 50 ms CPU in 100 ms wall, 50 ms of it queued, is all CPU."""
    m = Measurement(
        app="x:y", interface="wsgi", method="GET", path="/", warmup=0,
        samples=(Sample(wall_s=0.1, cpu_s=0.05, runqueue_s=0.05, status=200),),
    )  # fmt: skip
    assert m.cpu_fraction == pytest.approx(1.0)
    assert m.raw_cpu_fraction == pytest.approx(0.5)
    assert m.service_time_ms == pytest.approx(50)
