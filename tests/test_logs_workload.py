"""The workload a log yields reproduces its traffic: at the log's mean rate, the requests in flight
the workload implies (Little's law over its means) are the log's own rate x mean time, overall
and per route, for known mixes (a heavy tail among them) and random ones; the tails go to the
timeouts; `explain` names each number a mean or a tail and where it came from."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import build_format, read_traffic
from servertune.logs.traffic import Traffic
from servertune.sizing import plan_for
from servertune.sizing.queueing import held_s
from servertune.workload import Workload

FORMAT = '[$time_local] "$request" $status $request_time'
#: How close the workload's requests in flight must be to the log's (the issue's bar).
WITHIN = 0.10

Draw = Callable[[random.Random], float]


@dataclass(frozen=True)
class Route:
    """One route of a generated log: its share of the requests and how its times are drawn."""

    path: str
    weight: float
    draw: Draw


def exponential(mean_ms: float) -> Draw:
    return lambda r: r.expovariate(1 / mean_ms)


def lognormal(median_ms: float, sigma: float) -> Draw:
    import math

    return lambda r: r.lognormvariate(math.log(median_ms), sigma)


def constant(ms: float) -> Draw:
    return lambda r: ms


@dataclass
class Generated:
    """A log written with its truth: each request's route and time, as written (to the ms)."""

    path: Path
    span_s: int
    times: dict[str, list[float]]

    def in_flight(self, route: str | None = None) -> float:
        """Rate x mean time (Little's law) of the requests as generated."""
        times = (
            [t for ts in self.times.values() for t in ts] if route is None else self.times[route]
        )
        return len(times) / self.span_s * (sum(times) / len(times)) / 1000


def generate(
    folder: Path, routes: Sequence[Route], requests: int, rate: int, seed: int = 1
) -> Generated:
    """`requests` requests at `rate` a second over the routes, times to the millisecond."""
    rnd = random.Random(seed)
    paths = [r.path for r in routes]
    weights = [r.weight for r in routes]
    draws = {r.path: r.draw for r in routes}
    times: dict[str, list[float]] = {p: [] for p in paths}
    lines = []
    for i in range(requests):
        second = i // rate
        path = rnd.choices(paths, weights)[0]
        ms = max(1.0, round(draws[path](rnd)))  # as nginx writes it: 0.001 s steps
        times[path].append(ms)
        lines.append(
            f"[26/Nov/2026:{13 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d} "
            f'+0000] "GET {path}/{i} HTTP/1.1" 200 {ms / 1000:.3f}\n'
        )
    log = folder / "access.log"
    log.write_text("".join(lines))
    span = (requests - 1) // rate + 1
    return Generated(log, span, {p: t for p, t in times.items() if t})


def read(generated: Generated) -> Traffic:
    return read_traffic([generated.path], build_format("nginx", FORMAT))


def implied_in_flight(traffic: Traffic, route: str | None = None) -> float:
    """What the workload the log yields implies: the log's mean rate x the workload's mean time
    a request holds its thread (`held_s`, the one Little's law the plan uses)."""
    workload = Workload(**traffic.workload_values(route))
    count = traffic.timed if route is None else traffic.routes[route].count
    return count / traffic.span_s * held_s(workload)


def assert_reproduced(generated: Generated) -> Traffic:
    traffic = read(generated)
    assert traffic.span_s == generated.span_s
    truth = generated.in_flight()
    assert implied_in_flight(traffic) == pytest.approx(truth, rel=WITHIN)
    for path in generated.times:
        route = f"{path}/{{id}}"
        assert implied_in_flight(traffic, route) == pytest.approx(
            generated.in_flight(path), rel=WITHIN
        ), route
    return traffic


MIXES = {
    # The issue's mix: 90 % at ~20 ms, 10 % at ~800 ms, exponential.
    "fast-and-report": [
        Route("/items", 0.9, exponential(20)),
        Route("/report", 0.1, exponential(800)),
    ],
    # A heavy tail: log-normal with sigma 2 (p99.9 ~ 480x the median).
    "heavy-tail": [Route("/search", 1.0, lognormal(30, 2.0))],
    # Rare, very slow calls: 1 % at ~20 s behind 5 ms requests.
    "rare-slow-calls": [
        Route("/ping", 0.99, constant(5)),
        Route("/export", 0.01, exponential(20_000)),
    ],
    # Three routes, none slow.
    "three-routes": [
        Route("/a", 0.5, exponential(10)),
        Route("/b", 0.3, lognormal(40, 0.5)),
        Route("/c", 0.2, constant(90)),
    ],
}


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_a_known_mix_gives_a_workload_with_the_logs_requests_in_flight(
    mix: str, tmp_path: Path
) -> None:
    """Overall and per route, the workload's Little's law count is within 10 % of the truth."""
    assert_reproduced(generate(tmp_path, MIXES[mix], requests=20_000, rate=500))


def test_the_issues_mix_no_longer_plans_for_2_4x_the_load(tmp_path: Path) -> None:
    """The issue's numbers: ~98.5 ms mean; the workload held 238 ms (p50 + p99 of slow calls).
    Now service time and slow call are means, and the slow calls' p99.9 goes to the tail."""
    generated = generate(tmp_path, MIXES["fast-and-report"], requests=20_000, rate=500)
    traffic = assert_reproduced(generated)
    values = traffic.workload_values()
    workload = Workload(**values)
    mean_ms = traffic.total_ms / traffic.timed
    assert held_s(workload) * 1000 == pytest.approx(mean_ms, rel=0.01)
    # The tail is the log's p99.9, far above any mean, and the timeouts are sized from it.
    assert values["request_tail_ms"] == pytest.approx(traffic.quantile(0.999), abs=0.1)
    assert values["request_tail_ms"] > 3 * values["slow_call_ms"]
    plan = plan_for(workload)
    assert plan.request_timeout_s * 1000 >= values["request_tail_ms"]


def test_explain_names_each_number_a_mean_or_a_tail_and_its_source(tmp_path: Path) -> None:
    """`explain --workload` on a log's workload: the sources say mean / tail, the threads' reason
    says slow_call_ms is a mean, the timeout's that it covers the tail."""
    generated = generate(tmp_path, MIXES["fast-and-report"], requests=5_000, rate=500)
    out = tmp_path / "w.toml"
    out.write_text(read(generated).to_toml())
    result = CliRunner().invoke(cli, ["explain", "--workload", str(out), "--cores", "2"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "service_time_ms = " in text
    assert ": mean of the " in text
    assert "slow_call_ms = " in text
    assert ": mean: the " in text
    assert "request_tail_ms = " in text
    assert ": tail: p99.9 of 5,000 requests" in text
    assert "(slow_call_ms, a mean)" in text
    assert "the longest legitimate request request_tail_ms, a tail = " in text


ROUTE = st.tuples(
    st.floats(0.05, 1.0),
    st.sampled_from(["exponential", "lognormal", "constant"]),
    st.floats(2, 3_000),
)


@settings(max_examples=25, deadline=None)
@given(routes=st.lists(ROUTE, min_size=1, max_size=3), seed=st.integers(0, 1000))
def test_any_mix_gives_a_workload_with_the_logs_requests_in_flight(
    tmp_path_factory: pytest.TempPathFactory,
    routes: list[tuple[float, str, float]],
    seed: int,
) -> None:
    """Random mixes of up to three routes (exponential, log-normal sigma 1.5, constant; means
    2 ms to 3 s): the workload's Little's law count within 10 % of the log's, overall and per
    route."""
    draws = {
        "exponential": exponential,
        "lognormal": lambda ms: lognormal(ms, 1.5),
        "constant": constant,
    }
    mix = [Route(f"/r{i}", weight, draws[kind](ms)) for i, (weight, kind, ms) in enumerate(routes)]
    folder = tmp_path_factory.mktemp("mix")
    assert_reproduced(generate(folder, mix, requests=3_000, rate=300, seed=seed))


def test_a_measured_workload_holds_the_apps_mean_time_not_its_median() -> None:
    """`measure APP` on an app whose fifth request is ten times slower: service_time_ms is the
    mean busy time (28 ms), so at any rate the workload's requests in flight are the app's own
    rate x mean time; the median (10 ms) would plan for 36 % of them."""
    from servertune.measure import measure_app
    from tests import measure_apps

    measured = measure_app(
        "tests.measure_apps:one_in_five_slow",
        app_dir=str(Path(__file__).resolve().parents[1]),
        requests=10,
        warmup=1,
    )
    truth_s = (4 * measure_apps.FAST_ONE_S + measure_apps.SLOW_ONE_S) / 5
    workload = Workload(**measured.workload_values())
    rate = 50.0
    assert rate * held_s(workload) == pytest.approx(rate * truth_s, rel=WITHIN)


def test_a_route_that_takes_most_of_the_time_is_named_with_a_pool_of_its_own(
    tmp_path: Path,
) -> None:
    """The issue's mix: /report is ~10 % of the requests and ~80 % of the time. The report says
    so with the log's numbers and the commands for a pool of its own; `--route` writes that
    route's workload (its Little's law count the route's own), which `gen` takes."""
    generated = generate(tmp_path, MIXES["fast-and-report"], requests=20_000, rate=500)
    traffic = read(generated)
    top = traffic.dominant_route()
    assert top is not None
    assert top.route == "/report/{id}"
    out = tmp_path / "route.toml"
    fmt = f"nginx:{FORMAT}"
    args = ["measure", "--log", str(generated.path), "--log-format", fmt]
    result = CliRunner().invoke(cli, [*args, "--route", "/report/{id}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    share = top.count / traffic.timed
    time_share = top.total_ms / traffic.total_ms
    line = next(x for x in result.output.splitlines() if x.startswith("one route "))
    assert f"/report/{{id}} is {share:.1%} of the requests and {time_share:.1%} of the time" in line
    assert f"{generated.in_flight('/report'):,.2f} of the " in line
    assert "--route '/report/{id}' --out route.toml" in line
    assert "servertune gen gunicorn --workload route.toml --base-port 9001" in line
    written = out.read_text()
    assert "route /report/{id} alone" in written
    from servertune.workload_file import load_workload

    workload = load_workload(out)
    rate = top.count / traffic.span_s
    assert rate * held_s(workload) == pytest.approx(generated.in_flight("/report"), rel=WITHIN)
    gen = CliRunner().invoke(
        cli, ["gen", "gunicorn", "--workload", str(out), "--base-port", "9001", "--cores", "2"]
    )
    assert gen.exit_code == 0, gen.output
    assert 'bind = ["127.0.0.1:9001"]' in gen.output


def test_no_route_is_named_when_the_time_is_spread(tmp_path: Path) -> None:
    """Three routes, none taking most of the time with few requests: no `one route` line."""
    generated = generate(tmp_path, MIXES["three-routes"], requests=3_000, rate=300)
    assert read(generated).dominant_route() is None
    result = CliRunner().invoke(
        cli, ["measure", "--log", str(generated.path), "--log-format", f"nginx:{FORMAT}"]
    )
    assert result.exit_code == 0, result.output
    assert "one route " not in result.output


def test_an_unknown_route_is_one_error_line(tmp_path: Path) -> None:
    """`--route /nope`: one line naming the flag and the log's routes, exit 2, nothing written."""
    generated = generate(tmp_path, MIXES["fast-and-report"], requests=1_000, rate=100)
    out = tmp_path / "w.toml"
    result = CliRunner().invoke(
        cli,
        ["measure", "--log", str(generated.path), "--log-format", f"nginx:{FORMAT}",
         "--route", "/nope", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.startswith("error: --route: no route '/nope' in access.log (its routes: ")
    assert result.output.count("\n") == 1
    assert not out.exists()
    without_log = CliRunner().invoke(cli, ["measure", "app:app", "--route", "/x"])
    assert without_log.exit_code == 2
    assert "error: --route: goes with --log" in without_log.output


def test_the_offered_command_quotes_a_route_for_the_shell(tmp_path: Path) -> None:
    """A route with a quote (/it's/{id}) is offered as one shell word."""
    mix = [Route("/a", 0.9, constant(5)), Route("/it's", 0.1, constant(900))]
    generated = generate(tmp_path, mix, requests=2_000, rate=100)
    from servertune.logs.report import format_traffic

    line = next(x for x in format_traffic(read(generated)).splitlines() if "one route" in x)
    assert "--route '/it'\"'\"'s/{id}' --out route.toml" in line
