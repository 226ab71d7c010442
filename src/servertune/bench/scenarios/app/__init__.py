"""`bench app`: your app under servertune's layouts and the ones people copy from docs.

One concept per module, read top-down (each imports only those above it):

* `inputs`: what was asked (`AppInput`, `--path`, `--concurrency`), validated;
* `user_commands`: `--against` uvicorn/granian command lines from scripts and Procfiles;
* `wsgi_layouts`, `asgi_layouts`: the candidates as data, servertune's and the copied ones
  (adding a layout is one line of `LAYOUTS` or of `NAIVE`/`OURS` there);
* `levels`: the closed-loop connections and the open-loop rates;
* `candidates`: which candidates a run serves, through which entry point (the run's state);
* `deploy`: a candidate started behind nginx and proved ready;
* `load`: one run of load on it, as a row;
* `verdicts`, `notes`, `static`: how rows are compared, and what the report says about them;
* `replay`: `--replay`'s arrival times at 1, 2 and 4 x the log's pace, and their verdicts;
* `summary_wsgi`, `summary_asgi`, `summary_dual`: the report of each entry point, and of both;
* `scenario`: `AppBench`, the scenario `run_scenario()` drives (registered in `SCENARIOS`).

Every name other modules and tests import is re-exported here.
"""

from __future__ import annotations

from servertune.bench.scenarios.app.inputs import (
    MAX_CONCURRENCY,
    AppInput,
    AppSizes,
    EntryPoint,
    Interface,
    parse_concurrency,
    parse_path,
    sibling_entry_point,
)
from servertune.bench.scenarios.app.levels import UNLOADED_FACTOR_TEXT, default_levels
from servertune.bench.scenarios.app.load import (
    CPU_KEYS,
    cpu_per_request,
    merge_parts,
    split_connections,
    wrk_lua,
)
from servertune.bench.scenarios.app.notes import ceiling_note, cpu_split_note
from servertune.bench.scenarios.app.scenario import MEASURE_GRACE_S, AppBench
from servertune.bench.scenarios.app.static import STATIC_PROBE_MAX_BYTES, static_note, static_probe
from servertune.bench.scenarios.app.verdicts import (
    IO_BOUND_CPU_FRACTION,
    IO_BOUND_TARGET,
    NOISE_BAND,
    spread,
    verdict_of,
    verdict_record,
)
from servertune.bench.scenarios.app.wsgi_layouts import NAIVE, NAIVE_GTHREADS, OURS

__all__ = [
    "CPU_KEYS",
    "IO_BOUND_CPU_FRACTION",
    "IO_BOUND_TARGET",
    "MAX_CONCURRENCY",
    "MEASURE_GRACE_S",
    "NAIVE",
    "NAIVE_GTHREADS",
    "NOISE_BAND",
    "OURS",
    "STATIC_PROBE_MAX_BYTES",
    "UNLOADED_FACTOR_TEXT",
    "AppBench",
    "AppInput",
    "AppSizes",
    "EntryPoint",
    "Interface",
    "ceiling_note",
    "cpu_per_request",
    "cpu_split_note",
    "default_levels",
    "merge_parts",
    "parse_concurrency",
    "parse_path",
    "sibling_entry_point",
    "split_connections",
    "spread",
    "static_note",
    "static_probe",
    "verdict_of",
    "verdict_record",
    "wrk_lua",
]
