"""`servertune measure`: in-process service time and CPU per request of apps with known ratios."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.measure import (
    AppFailed,
    MeasureError,
    Measurement,
    Mix,
    Sample,
    WeightedPath,
    detect_interface,
    measure_app,
    measure_mix,
    parse_weighted_path,
)
from servertune.workload import MIN_CPU_MS
from servertune.workload_file import load_workload
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
    """Seed 000's app (10 ms sleep + 10 ms CPU, five times) measures cpu_fraction 0.5 +- 0.1,
    written as cpu_ms, half its service time."""
    m = _measure("seed000")
    assert abs(m.cpu_fraction - 0.5) <= TOLERANCE
    values = m.workload_values()
    assert abs(values["cpu_ms"] / values["service_time_ms"] - 0.5) <= TOLERANCE
    assert m.service_time_ms >= 100  # five 10 ms sleeps and 50 ms of CPU at the least


def test_pure_sleep_measures_about_zero() -> None:
    """An app that only sleeps measures cpu_fraction near 0, written as its CPU in ms (a
    fraction of a millisecond, not a share floored at 0.01 of its 20 ms)."""
    m = _measure("pure_sleep")
    assert m.cpu_fraction < TOLERANCE
    assert MIN_CPU_MS <= m.workload_values()["cpu_ms"] < 0.01 * m.service_time_ms


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
    assert workload.cpu_ms == m.workload_values()["cpu_ms"]
    assert workload.cpu_fraction == pytest.approx(workload.cpu_ms / workload.service_time_ms)
    assert workload.service_time_ms == m.workload_values()["service_time_ms"]
    assert workload.app == "tests.measure_apps:pure_cpu"


def test_asgi_toml_names_the_app_its_interface_and_loop_share() -> None:
    """An ASGI app is written with `interface = "asgi"` (gen then offers uvicorn, gunicorn-asgi,
    granian) and the share of its time it blocked the loop: seed 000's app computes on the loop
    half the time, so the loop share is at least its GIL share."""
    m = _measure("asgi_seed000", requests=3)
    values = m.workload_values()
    assert values["interface"] == "asgi"
    assert values["app"] == "tests.measure_apps:asgi_seed000"
    assert 0.3 <= values["loop_blocking_fraction"] <= 1.0
    assert values["loop_blocking_fraction"] >= values["cpu_ms"] / values["service_time_ms"] - 0.05
    assert m.gil_enabled is (getattr(sys, "_is_gil_enabled", lambda: True)())


def test_an_awaiting_asgi_app_barely_blocks_its_loop() -> None:
    """An ASGI app that only awaits keeps its loop busy a small share of its time."""
    values = _measure("asgi_pure_sleep", requests=5).workload_values()
    assert values["loop_blocking_fraction"] < 0.2


def test_an_asgi_app_computing_in_a_thread_writes_its_off_loop_share() -> None:
    """Half of the app's CPU runs in a thread it awaits (`asyncio.to_thread`): measure reads the
    process's CPU against the loop thread's and writes off_loop_fraction about 0.5, with a
    note; the plan then gives each core two processes."""
    m = _measure("asgi_half_in_a_thread", requests=20)
    values = m.workload_values()
    assert 0.35 <= values["off_loop_fraction"] <= 0.65
    assert any("written as off_loop_fraction" in note for note in m.notes())
    assert "off_loop_fraction" in m.to_toml()


def test_an_asgi_app_on_its_loop_alone_writes_no_off_loop_share() -> None:
    """An ASGI app whose CPU all runs on the loop (seed 000's, computing between awaits) writes
    no off_loop_fraction: the two clocks agree within the noise the threshold leaves out."""
    m = _measure("asgi_seed000", requests=3)
    assert m.off_loop_fraction is not None
    assert m.off_loop_fraction < 0.05
    assert "off_loop_fraction" not in m.workload_values()


def test_wsgi_toml_has_no_loop_share() -> None:
    """A WSGI app has no event loop: no interface or loop share is written (wsgi is the default)."""
    values = _measure("pure_cpu", requests=2).workload_values()
    assert "interface" not in values
    assert "loop_blocking_fraction" not in values
    assert "off_loop_fraction" not in values


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


@pytest.mark.parametrize(
    ("text", "path", "weight"),
    [
        ("/get", "/get", 1.0),
        ("/get=3", "/get", 3.0),
        ("/delay/0.05=0.5", "/delay/0.05", 0.5),
        ("/items?id=1", "/items?id=1", 1.0),  # the query's own '=' is no weight
        ("/items?id=1=2", "/items?id=1", 2.0),
        ("/items?a=1&b=2", "/items?a=1&b=2", 1.0),
        ("/items?a=1&b=2=4", "/items?a=1&b=2", 4.0),
        ("/a=b=1", "/a=b", 1.0),
    ],
)
def test_weighted_path_syntax(text: str, path: str, weight: float) -> None:
    """`P[=WEIGHT]`: the weight follows the last '=' that is not a query pair's own."""
    assert parse_weighted_path(text) == WeightedPath(path, weight)


@pytest.mark.parametrize("text", ["/get=0", "/get=-1", "/get=nan", "/get=inf", "/a=b", "get=1"])
def test_bad_weights_are_refused(text: str) -> None:
    """Weights are positive finite numbers; anything else names the path input."""
    with pytest.raises(MeasureError, match=r"^path: ") as caught:
        parse_weighted_path(text)
    assert caught.value.field == "path"


def test_a_path_given_twice_is_refused_not_dropped() -> None:
    """Repeating a path is an error that says to use a weight: no measurement is silently lost."""
    with pytest.raises(MeasureError, match="given twice"):
        measure_mix("x:y", [WeightedPath("/a"), WeightedPath("/a")], app=measure_apps.pure_cpu)


def _fixed(path: str, busy_ms: float, cpu_ms: float, n: int = 4) -> Measurement:
    sample = Sample(wall_s=busy_ms / 1000, cpu_s=cpu_ms / 1000, runqueue_s=0.0, status=200)
    return Measurement(
        app="x:y", interface="wsgi", method="GET", path=path, warmup=0, samples=(sample,) * n
    )


def test_mix_weighs_service_time_by_share_and_cpu_by_time() -> None:
    """Mix of 50 ms (1 ms CPU) x1 and 1 ms (1 ms CPU) x3: 13.25 ms, cpu 4/53 of busy time."""
    mix = Mix(((_fixed("/slow", 50, 1), 1.0), (_fixed("/fast", 1, 1, n=8), 3.0)))
    assert mix.service_time_ms == pytest.approx((50 + 3 * 1) / 4)
    assert mix.cpu_fraction == pytest.approx((1 + 3 * 1) / (50 + 3 * 1))
    assert mix.workload_values()["service_time_ms"] == pytest.approx(13.25)
    spread = mix.spread()["service_time_ms"]
    assert spread[1] == pytest.approx(
        1
    )  # a request drawn from the mix is the fast one 3 times in 4
    assert spread[2] == pytest.approx(50)
    measured = mix.measured()
    assert measured.path is None
    assert [(p.path, p.weight, p.requests) for p in measured.paths] == [
        ("/slow", 1.0, 4),
        ("/fast", 3.0, 8),
    ]


def test_one_path_mix_is_that_path() -> None:
    """A mix of one path writes and prints exactly what the single measurement does."""
    one = _fixed("/a", 10, 5)
    mix = Mix(((one, 2.0),))
    assert (mix.table(), mix.to_toml()) == (one.table(), one.to_toml())


def test_wsgi_app_that_raises_is_one_line_with_type_message_and_line() -> None:
    """The app's exception is AppFailed: its type, message, and the file:line of the app's code."""
    with pytest.raises(AppFailed) as caught:
        _measure("raises", requests=2)
    message = str(caught.value)
    line = next(
        n for n, text in enumerate(Path(measure_apps.__file__).read_text().splitlines(), 1)
        if "# the failing line" in text
    )  # fmt: skip
    assert message.startswith("GET /: the app raised ZeroDivisionError: division by zero at ")
    assert message.endswith(f"tests/measure_apps.py:{line} in raises")
    assert "\n" not in message


def test_asgi_app_that_raises_is_one_line() -> None:
    """An ASGI app's exception is reported the same way, from inside the event loop."""
    with pytest.raises(
        AppFailed, match=r"KeyError: 'missing-setting' at tests/measure_apps.py:\d+"
    ):
        _measure("asgi_raises", requests=2)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\nraise RuntimeError('DJANGO_SETTINGS_MODULE is not set')\n",
         "raised RuntimeError: DJANGO_SETTINGS_MODULE is not set at broken_app.py:2 in <module>"),
        ("def app(:\n", "raised SyntaxError"),
        ("import sys\nsys.exit(3)\n", "called sys.exit(3)"),
    ],
)  # fmt: skip
def test_app_that_fails_on_import_is_one_line(tmp_path: Path, source: str, expected: str) -> None:
    """A module that raises, does not parse, or exits on import is a MeasureError naming the app."""
    module = f"broken_app_{abs(hash(source))}"
    (tmp_path / f"{module}.py").write_text(source)
    with pytest.raises(MeasureError, match=r"^app: importing ") as caught:
        measure_app(f"{module}:app", app_dir=str(tmp_path), requests=1)
    assert expected.replace("broken_app.py", f"{module}.py") in str(caught.value)


def test_exported_members() -> None:
    """servertune.measure's public API is exactly its __all__ (pinned, as httpx pins its own)."""
    import servertune.measure as package

    assert set(package.__all__) == {
        "CPU_FRACTION_DECIMALS", "DEFAULT_MAX_SECONDS", "DEFAULT_REQUESTS", "DEFAULT_WARMUP",
        "MIN_CPU_FRACTION", "AppFailed", "Interface", "MeasureError", "Measurement", "Mix",
        "Sample", "WeightedPath", "detect_interface", "load_app", "measure_app", "measure_mix",
        "parse_weighted_path",
    }  # fmt: skip
    assert all(hasattr(package, name) for name in package.__all__)


def test_mix_notes_the_floor_once_for_the_written_value() -> None:
    """The cpu_ms floor is about the value written (the mix's), so it is noted once, not per path."""
    mix = Mix(((_fixed("/a", 20, 0.0001), 1.0), (_fixed("/b", 20, 0.0001), 1.0)))
    assert mix.table().count("floor") == 1


@pytest.mark.parametrize("name", ["never_answers", "asgi_never_answers"])
def test_an_app_that_never_answers_cannot_hang_measure(name: str) -> None:
    """A request that outlives the time limit is interrupted: AppFailed, within about twice the limit."""
    started = time.monotonic()
    with pytest.raises(AppFailed, match=r"^GET /: the app did not answer within 1\.5 s$"):
        _measure(name, requests=2, max_seconds=0.5)
    assert time.monotonic() - started < 10


def test_a_stuck_request_after_good_ones_ends_the_path_early() -> None:
    """Requests measured before the app got stuck are kept; the run says it stopped early."""
    measure_apps._STUCK["n"] = 0
    m = measure_app(
        "tests.measure_apps:slow_then_stuck", app_dir=HERE, requests=5, warmup=0, max_seconds=0.3
    )
    assert len(m.samples) == 2
    assert m.stopped_early
