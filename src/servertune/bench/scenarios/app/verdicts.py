"""How two candidates are compared: the repeats' spread widened to the noise band, which is
faster, and the targets' thresholds."""

from __future__ import annotations

from typing import Any

from servertune.bench.harness.rounds import band_range
from servertune.bench.harness.scenario import Run
from servertune.bench.scenarios.app.inputs import AppSizes
from servertune.sizing.defaults import ASGI_OVERLOAD_P99_TARGET

#: A spread narrower than this fraction of the median is widened to it before two candidates'
#: spreads are compared: bench balance measured run-to-run differences of about 5% in medians
#: on a shared 2-core machine, so a single run (or repeats that happen to agree) is not trusted
#: more closely than that.
NOISE_BAND = 0.05
#: The same for p99, wider: a closed-loop level's p99 is set by its slowest 1 % of requests,
#: and on a shared 2-core machine one scheduling stall of another process moves it. Measured
#: (2026-11-26, load average 5.8-6.9, the same granian layouts behind nginx, 10 interleaved
#: 1 s wrk loads each at 8 and 32 connections): one layout's p99 spread 1.6-107 x from its
#: lowest to its highest load, and two layouts whose median p99s were within 20 % of each
#: other were called apart by 2 repeats widened to +-25 % in 16-21 % of draws, to +-50 % in
#: 0-9 % (3 repeats: 0-1 %). So two p99s count as different only when their repeats' ranges,
#: widened to at least +-50 % of their median, do not overlap.
P99_NOISE_BAND = 0.5
#: The I/O-bound target: servertune's best >= 1.2x gunicorn's 2n+1 at >= 2 x cores.
IO_BOUND_TARGET = 1.2
#: Below this measured cpu_fraction the app counts as I/O-bound for that target.
IO_BOUND_CPU_FRACTION = 0.5
#: Target at overload: admitted p99 within this multiple of the unloaded p99.
MAX_OVERLOAD_P99_RATIO = ASGI_OVERLOAD_P99_TARGET


#: A closed-loop level measured once (`bench app --replay`'s default run) has no spread of its
#: own: its one value is widened to +-this, the run-to-run move of one 2 s load on these shared
#: cores (mean CV 18.7 % over 6 repeats, docs/benchmarks.md; DROP_MARGIN's +-25 %), so one
#: sample names no winner that repeats would call noise (2026-11-29, the FastAPI replay app: one
#: sample a level said "servertune faster" at 128-512 connections, 1.15-1.35 x, where three
#: repeats a level had said no clear difference).
ONE_SAMPLE_BAND = 0.25


def spread(values: list[float], one_sample_band: float = NOISE_BAND) -> tuple[float, float]:
    """The repeats' min-max, widened to at least +-NOISE_BAND of their median; a single value
    to +-`one_sample_band`."""
    return band_range(values, NOISE_BAND if len(values) > 1 else one_sample_band)


def p99_spread(values: list[float]) -> tuple[float, float]:
    """The repeats' p99 min-max, widened to at least +-P99_NOISE_BAND of their median."""
    return band_range(values, P99_NOISE_BAND)


def p99_verdict(mine: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    """ "servertune lower", "copied lower" or "within noise": the two rows' p99 spreads
    (`p99_ms_low`/`p99_ms_high`) apart or overlapping, like `verdict_of` for req/s; None when
    either row has no spread (no repeat answered a request with a 2xx)."""
    if "p99_ms_low" not in mine or "p99_ms_low" not in theirs:
        return None
    if mine["p99_ms_high"] < theirs["p99_ms_low"]:
        return "servertune lower"
    if theirs["p99_ms_high"] < mine["p99_ms_low"]:
        return "copied lower"
    return "within noise"


def repeats_said(run: Run[AppSizes]) -> str:
    """How many repeats each median has: all of them, or up to them in the adaptive run."""
    return f"up to {run.repeats}" if run.size.adaptive and run.repeats > 1 else str(run.repeats)


def verdict_record(
    level: str,
    metric: str,
    ours: str,
    mine: dict[str, Any],
    copied: str,
    theirs: dict[str, Any],
    key: str,
    verdict: str,
) -> dict[str, Any]:
    """One level's verdict as data (the report's headline reads it)."""
    winner = {"servertune faster": "servertune", "naive faster": "copied"}.get(
        verdict.replace("copied faster", "naive faster")
    )
    return {
        "level": level,
        "metric": metric,
        "ours": ours,
        "ours_value": mine[key],
        "ours_range": [mine[f"{key}_low"], mine[f"{key}_high"]],
        "copied": copied,
        "copied_value": theirs[key],
        "copied_range": [theirs[f"{key}_low"], theirs[f"{key}_high"]],
        "ratio": round(mine[key] / theirs[key], 2) if theirs[key] else None,
        "winner": winner,
        "repeats": min(len(mine.get("repeats") or [1]), len(theirs.get("repeats") or [1])),
        "offered_rps": mine.get("offered_rps"),
        "p99_ms": [mine.get("p99_ms"), theirs.get("p99_ms")],
        "p99_ranges": [
            [mine.get("p99_ms_low"), mine.get("p99_ms_high")],
            [theirs.get("p99_ms_low"), theirs.get("p99_ms_high")],
        ],
        "p99_verdict": p99_verdict(mine, theirs),
    }


def shed_cause(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """Where servertune's row lost because its own admission shed (503) what the copied layout
    answered, that cause, said after the verdict; else nothing."""
    shed, served = int(mine.get("refused_503") or 0), int(theirs.get("refused_503") or 0)
    if shed <= served:
        return ""
    return (
        f" (caused by servertune's own admission: it shed {shed - served} more requests with "
        "503 than the copied layout, which answered them)"
    )


def verdict_of(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """ "servertune faster", "naive faster" or "no clear difference", from the rows' spreads."""
    if ours["rps_low"] > theirs["rps_high"]:
        return "servertune faster"
    if theirs["rps_low"] > ours["rps_high"]:
        return "naive faster"
    return "no clear difference"


def client_lag_unmeasurable(over: dict[str, Any], unloaded_p99_ms: float | None) -> str | None:
    """Why a layout's admitted p99 under overload says nothing about the layout, or None: the
    open-loop client's own send lag (scheduled send -> request written) reached more at p99
    than the layout's whole unloaded p99, so the client, not the layout, set the tail it is
    judged by (and its late sends are the timeouts)."""
    lag = over.get("send_lag_p99_ms")
    if lag is None or not unloaded_p99_ms or lag <= unloaded_p99_ms:
        return None
    return (
        f"not measurable here: the open-loop client's own send lag p99 {lag:g} ms exceeds the "
        f"unloaded p99 {unloaded_p99_ms:g} ms it is judged against (the client fell behind "
        "its schedule on these shared cores)"
    )
