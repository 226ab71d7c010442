"""The report's notes that explain a `bench app` run: the ceiling, the CPU split, overload,
the lines a kept log lacks."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from servertune.bench.harness.open_loop_ceiling import ClientCeiling
from servertune.bench.harness.stats import AUTOGROUP_SYSCTL, other_work_advice
from servertune.bench.scenarios.app.levels import (
    OVERLOAD_FACTOR,
    open_loop_rates,
    overload_unmeasurable,
)
from servertune.bench.scenarios.app.load import CPU_KEYS, GOOD_WITHIN_MS


def ceiling_note(row: dict[str, Any], cores: int, model_rps: float, tool: str) -> str:
    """Which ceiling `ceiling_rps` is, measured on `row` (servertune's best at the highest load),
    next to the one without nginx and the load generator and the plan's model."""
    if row.get("ceiling_rps") is None:
        return "ceiling: not measured (no request was answered at the highest load)"
    app, proxy, load = (row[k] for k in CPU_KEYS[:3])
    return (
        f"ceiling_rps {row['ceiling_rps']:.1f} req/s is measured with nginx and {tool} on these "
        f"{cores} cores: {cores} / ({app:.3f} app + {proxy:.3f} nginx + {load:.3f} {tool}) ms of "
        f"CPU per request ({row['config']} at c={row['concurrency']}); with nginx and the load on "
        f"other machines it would be {row['app_ceiling_rps']:.1f} req/s ({cores} / the app's "
        f"CPU alone); the plan's model says {model_rps:.1f}. The verdicts compare candidates "
        "with each other; x_ceiling is each row's req/s over its own on-host ceiling_rps, the "
        "one these runs can reach"
    )


def cpu_split_note(runs: list[dict[str, Any]], tool: str) -> str:
    """How much of the CPU per request nginx and the load generator took, over every row."""
    from servertune.bench.harness.stats import median

    shares: dict[str, list[float]] = {"proxy": [], "load": []}
    for row in runs:
        app, proxy, load = (row.get(k) for k in CPU_KEYS[:3])
        if app is None or proxy is None or load is None or app + proxy + load <= 0:
            continue
        shares["proxy"].append(proxy / (app + proxy + load))
        shares["load"].append(load / (app + proxy + load))
    if not shares["proxy"]:
        return "CPU per request: not measured"
    proxy, load = shares["proxy"], shares["load"]
    return (
        f"of the CPU per request (app + nginx + {tool}), nginx took {median(proxy):.0%} "
        f"({min(proxy):.0%}-{max(proxy):.0%}) and {tool} {median(load):.0%} "
        f"({min(load):.0%}-{max(load):.0%}): median (range) over every candidate and level"
    )


def _p99_ratio(loaded: dict[str, Any], unloaded: dict[str, Any], *, digits: int) -> str:
    """A row's p99 over another's, as `1.5x`; `-` where either has none (nothing admitted)."""
    if not (loaded.get("p99_ms") and unloaded.get("p99_ms")):
        return "-"
    return f"{loaded['p99_ms'] / unloaded['p99_ms']:.{digits}f}x"


def overload_notes(rows: dict[str, dict[str, dict[str, Any]]], ours: list[str]) -> list[str]:
    """One line per layout: admitted p99 under overload over its unloaded p99, and the shed."""
    lines = []
    for name, by_load in rows.items():
        over, calm = by_load["overload"], by_load["unloaded"]
        ratio = _p99_ratio(over, calm, digits=1)
        lines.append(
            f"{name}{' (servertune)' if name in ours else ''}: overload admitted p99 "
            f"{over.get('p99_ms')} ms = {ratio} its unloaded p99 {calm.get('p99_ms')} ms (the "
            f"load generator's own send lag: p99 {over.get('send_lag_p99_ms')} ms); "
            f"{over['rps']:.0f} req/s admitted, {over['good_rps']:.0f} of them within "
            f"{GOOD_WITHIN_MS:g} ms, {over['shed']:.0%} shed (503), "
            f"{over['errors']} errors, {over['timeouts']} timed out ("
            f"{over.get('timeouts_unsent') or 0} of them before the client wrote them)"
        )
    return lines


def overload_repeats_note(name: str, calm: dict[str, Any], over: dict[str, Any]) -> str:
    """The overload p99 target per repeat, each with its admitted req/s, the load generator's own
    send lag and the CPU other work took meanwhile: on a shared machine a busy minute shows as
    one (the target's median can hide a repeat that met it, or one that did not)."""
    parts = []
    calm_by_repeat = {r.get("repeat"): r for r in calm.get("repeats", [])}
    for loaded in over.get("repeats", []):
        unloaded = calm_by_repeat.get(loaded.get("repeat"))
        if unloaded is None:
            continue
        ratio = _p99_ratio(loaded, unloaded, digits=2)
        parts.append(
            f"{ratio} ({loaded['rps']:.0f} req/s admitted, the load generator's send lag p99 "
            f"{loaded.get('send_lag_p99_ms')} ms, other work {loaded.get('other_cpu_cores')} cores)"
        )
    return (
        f"{name}: admitted p99 at overload / unloaded p99 per repeat: {'; '.join(parts)}; the "
        "load generator and any other work share the cores with the app"
    )


def measured_note(paths: tuple[tuple[str, float], ...], measured: list[dict[str, float]]) -> str:
    """Each path's measured figures, `/x x3: 12.00 ms, cpu 1.200 ms, ...` (`servertune measure`
    lists each path only for a mix: one path is the mix itself, named alone)."""
    return (
        ", ".join(
            f"{p} x{w:g}: {m['service_time_ms']:.2f} ms, cpu {m['cpu_ms']:.3f} ms"
            for (p, w), m in zip(paths, measured, strict=False)
        )
        or paths[0][0]
    )


def verdict_rule_note(noise_band: float) -> str:
    """When the verdicts call a difference a difference."""
    return (
        f"verdict: a difference counts when the repeats' ranges of req/s (min-max, widened to "
        f"at least +-{noise_band:.0%} of the median) do not overlap; otherwise "
        "'no clear difference'"
    )


def p99_rule_note(band: float) -> str:
    """When the closed-loop verdicts call a p99 difference a difference."""
    return (
        "p99 at a closed level: servertune's best against the copied best, each the median "
        f"of its repeats; a difference counts when the repeats' p99 ranges (widened to at "
        f"least +-{band:.0%} of the median: one stall sets the p99 of a short load on a shared "
        "machine) do not overlap; otherwise 'within noise'"
    )


#: Other work's CPU (cores) during a measurement above which the report says it is noisy.
BUSY_OTHER_CORES = 0.25


def busy_note(rows: Iterable[dict[str, Any]], sysctl: Path = AUTOGROUP_SYSCTL) -> str | None:
    """A line when other work on the machine took CPU during some measurement (with how to
    keep it off the cores, `other_work_advice`), else None."""
    busiest = max((float(s["other_cpu_cores"]) for s in rows), default=0.0)
    if busiest <= BUSY_OTHER_CORES:
        return None
    return (
        f"other work on this machine used up to {busiest:.2f} cores during a measurement: "
        f"the numbers are noisy{other_work_advice(sysctl)}"
    )


def client_note(client: ClientCeiling, capacity_rps: float) -> str:
    """What the open-loop client can send here, and what that did to the overload level:
    offered as asked, capped at the client's ceiling, or not an overload at all."""
    asked = capacity_rps * OVERLOAD_FACTOR
    offered = open_loop_rates(capacity_rps, client.rps)["overload"]
    if why := overload_unmeasurable(capacity_rps, client.rps):
        said = f"overload {why}; its rows are the layouts at {offered:.0f} req/s offered"
    elif offered < asked:
        said = (
            f"overload offered {offered:.0f} req/s, capped at that ceiling "
            f"({offered / capacity_rps:.2f} x the plan's capacity; {OVERLOAD_FACTOR:g} x would "
            f"be {asked:.0f} req/s)"
        )
    else:
        said = f"overload offered as asked ({asked:.0f} req/s)"
    return f"{client.said()}: {said}"


def dropped_log_notes(dropped: dict[str, int | None]) -> list[str]:
    """The report's words on the lines a logging HAProxy dropped from a kept log: with several
    threads, one that finds another writing to its standard output drops its line rather than
    wait (haproxy/haproxy#1861), and says so in `show info`'s DroppedLogs."""
    notes = []
    for name, lines in dropped.items():
        if lines is None:
            notes.append(f"--keep-log {name}: HAProxy did not say how many log lines it dropped")
        elif lines:
            notes.append(
                f"--keep-log {name}: HAProxy dropped {lines} log line(s): with several threads, "
                "one that finds another writing a line drops its own rather than wait (its "
                "`show info` DroppedLogs; haproxy/haproxy#1861)"
            )
    return notes
