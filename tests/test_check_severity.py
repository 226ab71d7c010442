"""Issue 45: a warning is a fault, servertune's sizing preference is advice, and the CPUs a
container really has. Each test writes the few files of one pattern seen in public projects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding, Severity
from servertune.machine import Machine

#: The machine running check, as the CLI reads it: its cores name nothing about production.
THIS_MACHINE = Machine.read()
#: Cores named for the run, as `--cores 2` names them.
TWO_CORES = Machine(cores=2, somaxconn=4096)

GUNICORN_DOCUMENTED = "import multiprocessing\n\nworkers = multiprocessing.cpu_count() * 2 + 1\n"
IMAGE = 'FROM python:3.12-slim\nCOPY . .\nCMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n'


def _write(directory: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text)
        paths.append(path)
    return paths


def _findings(directory: Path, files: dict[str, str], **kwargs: object) -> list[Finding]:
    kwargs.setdefault("machine", THIS_MACHINE)
    kwargs.setdefault("env", {})
    return list(check_files(_write(directory, files), **kwargs).findings)  # type: ignore[arg-type]


def _compose(cpus: str) -> str:
    return f"services:\n  web:\n    build: .\n    cpus: {cpus}\n    ports: ['8000:8000']\n"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "servertune", "check", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_gunicorns_documented_cpu_count_formula_on_its_own_is_not_a_fault(tmp_path: Path) -> None:
    """`workers = cpu_count() * 2 + 1` in a config read alone, no container, no --cores:
    gunicorn's own starting point draws nothing at all."""
    assert _findings(tmp_path, {"gunicorn.conf.py": GUNICORN_DOCUMENTED}) == []


def test_cpu_count_under_a_compose_cpu_limit_names_the_node_counts_and_the_limit(
    tmp_path: Path,
) -> None:
    """cpu_count() inside a container limited to 2 CPUs: one warning at the workers line,
    naming what it becomes on 16- and 64-core nodes, the limit's line, and a fix in Python."""
    files = {
        "compose.yaml": _compose('"2"'),
        "Dockerfile": IMAGE,
        "gunicorn.conf.py": GUNICORN_DOCUMENTED,
    }
    (finding,) = [f for f in _findings(tmp_path, files) if f.severity > Severity.advice]
    assert finding.rule == "workers-from-cpu-count"
    assert finding.severity == Severity.warning
    assert (finding.at.file.name, finding.at.line) == ("gunicorn.conf.py", 3)
    assert "16-core node 33 workers" in finding.message
    assert "64-core node 129 workers" in finding.message
    assert "CPU limit of 2 (" in finding.message
    assert finding.related[0].file.name == "compose.yaml"
    assert finding.fix.startswith('workers = int(os.environ.get("WEB_CONCURRENCY", ')
    assert "docs.python.org" in finding.backing


def test_uwsgi_percent_k_cites_uwsgi_not_python(tmp_path: Path) -> None:
    """`processes = %k` under a limit: the same fault, backed by uWSGI's own docs on %k."""
    ini = "[uwsgi]\nhttp-socket = :8000\nmodule = app\nprocesses = %k\ndie-on-term = true\n"
    image = 'FROM python:3.12-slim\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
    files = {"compose.yaml": _compose('"1"'), "Dockerfile": image, "uwsgi.ini": ini}
    (finding,) = [f for f in _findings(tmp_path, files) if f.rule == "workers-from-cpu-count"]
    assert "uwsgi-docs" in finding.backing
    assert "docs.python.org" not in finding.backing
    assert finding.fix.startswith("processes = ")


def test_a_hard_coded_count_without_a_limit_or_cores_is_not_judged(tmp_path: Path) -> None:
    """`-w 9` in a Dockerfile, no limit declared, no --cores: no worker-count finding of any
    kind (the checker's machine says nothing about production)."""
    image = 'FROM python:3.12-slim\nCMD ["gunicorn", "-w", "9", "app:app"]\n'
    rules = {f.rule for f in _findings(tmp_path, {"Dockerfile": image})}
    assert not rules & {
        "workers-over-cores",
        "workers-over-cpu-limit",
        "workers-from-cpu-count",
        "workers-from-cpu-count-no-limit",
    }


def test_a_count_within_the_documented_range_of_the_limit_is_advice(tmp_path: Path) -> None:
    """`-w 5` under `cpus: 2`: within gunicorn's documented 2-4 x cores, advice phrased as the
    plan for a workload; `-w 9` is past it: a warning."""
    image = 'FROM python:3.12-slim\nCMD ["gunicorn", "-w", "WORKERS", "app:app"]\n'
    files = {"compose.yaml": _compose('"2"'), "Dockerfile": image.replace("WORKERS", "5")}
    (advice,) = _findings(tmp_path, files)
    assert (advice.rule, advice.severity) == ("workers-over-cores", Severity.advice)
    assert advice.message.startswith("for servertune's default workload")
    assert "servertune's plan is" in advice.message
    assert "bench hol" in advice.backing  # gunicorn's own measurement, not uWSGI's
    files["Dockerfile"] = image.replace("WORKERS", "9")
    (fault,) = _findings(tmp_path, files)
    assert (fault.rule, fault.severity) == ("workers-over-cpu-limit", Severity.warning)
    assert "gunicorn's documented 2-4 x cores" in fault.message


def test_advice_is_printed_apart_and_fails_only_when_asked(tmp_path: Path) -> None:
    """Text: advice after the faults under its own heading, counted apart in the summary;
    exit 0 by default and with --fail-on info, 1 with --fail-on advice; JSON and SARIF carry
    the severity and kind (advice is SARIF `note`)."""
    image = 'FROM python:3.12-slim\nCMD ["gunicorn", "-w", "5", "app:app"]\n'
    paths = _write(tmp_path, {"compose.yaml": _compose('"2"'), "Dockerfile": image})
    text = _run(*paths)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    heading = lines.index(
        "advice (servertune's plan, not a fault; the exit status ignores it unless "
        "--fail-on advice):"
    )
    assert ": advice [workers-over-cores] for " in lines[heading + 1]
    assert lines[-1].startswith("no findings and 1 piece of advice in ")
    assert _run(*paths, "--fail-on", "info").returncode == 0
    assert _run(*paths, "--fail-on", "advice").returncode == 1
    (found,) = json.loads(_run(*paths, "--format", "json").stdout)["findings"]
    assert (found["severity"], found["kind"]) == ("advice", "advice")
    sarif = json.loads(_run(*paths, "--format", "sarif").stdout)["runs"][0]
    (result,) = sarif["results"]
    assert result["level"] == "note"
    assert result["properties"]["severity"] == "advice"
    rule = next(r for r in sarif["tool"]["driver"]["rules"] if r["id"] == "workers-over-cores")
    assert rule["defaultConfiguration"]["level"] == "note"
    assert rule["properties"]["kind"] == "advice"


def test_faults_come_before_advice_in_the_text(tmp_path: Path) -> None:
    """A fault and a piece of advice in one run: the fault's block first, the advice after
    its heading, whatever their files and lines."""
    conf = 'workers = 5\nmax_requests = 1000\nmax_requests_jitter = 10\nworker_class = "gthread"\n'
    paths = _write(tmp_path, {"gunicorn.conf.py": conf})
    out = _run(*paths, "--cores", "2").stdout
    assert out.index("warning [gthread-one-thread]") < out.index("advice (servertune's")
    assert out.index("advice (servertune's") < out.index("advice [max-requests-jitter-small]")
    assert out.index("advice (servertune's") < out.index("advice [workers-over-cores]")


def test_cpu_count_in_a_config_beside_the_image_that_runs_it_is_the_nodes(tmp_path: Path) -> None:
    """`gunicorn -c python:config.gunicorn` in a Dockerfile, its config beside it computing
    `cpu_count() * 2` (no CPU limit declared): the count is the node's, which with no limit is
    the CPUs the container may use: advice (not a warning) naming a 16- and a 64-core node;
    read alone, the same config draws nothing."""
    config = tmp_path / "config"
    config.mkdir()
    conf = "import multiprocessing\nworkers = multiprocessing.cpu_count() * 2\n"
    image = 'FROM python:3.12-slim\nCMD ["gunicorn", "-c", "python:config.gunicorn", "app:app"]\n'
    (config / "gunicorn.py").write_text(conf)
    (tmp_path / "Dockerfile").write_text(image)
    result = check_files([tmp_path / "Dockerfile", config / "gunicorn.py"], machine=THIS_MACHINE)
    assert not [f for f in result.findings if f.severity > Severity.advice]
    (finding,) = [f for f in result.findings if f.rule == "workers-from-cpu-count-no-limit"]
    assert finding.severity == Severity.advice
    assert "on a 16-core node 32 workers and on a 64-core node 128 workers" in finding.message
    assert "no CPU limit is declared" in finding.message
    # The trap it warns of: a limit set later, the count still following the node.
    assert "If a CPU limit is set later" in finding.message
    assert "set WEB_CONCURRENCY with it" in finding.message
    alone = check_files([config / "gunicorn.py"], machine=THIS_MACHINE)
    assert not [f for f in alone.findings if f.rule.startswith("workers-from-cpu-count")]


def test_nproc_on_a_containers_command_line_is_the_nodes_count(tmp_path: Path) -> None:
    """`gunicorn -w $(($(nproc)*2+1))` in the image's entrypoint under `cpus: 2`: one
    warning naming 33 and 129 workers on 16- and 64-core nodes, the flag fixed with
    WEB_CONCURRENCY; `-w $(nproc)` with no limit (16 and 64) passes gunicorn's 4-12 too."""
    script = "#!/bin/sh\nexec gunicorn -w $(($(nproc)*2+1)) -b :8000 app:app\n"
    image = 'FROM python:3.12-slim\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n'
    files = {"compose.yaml": _compose('"2"'), "Dockerfile": image, "start.sh": script}
    (finding,) = [f for f in _findings(tmp_path, files) if f.rule == "workers-from-cpu-count"]
    assert (finding.at.file.name, finding.at.line) == ("start.sh", 2)
    assert "16-core node 33 workers and on a 64-core node 129 workers" in finding.message
    assert finding.fix.startswith("-w ${WEB_CONCURRENCY:-")
    assert "nproc-invocation" in finding.backing
    plain = {"Dockerfile": image, "start.sh": script.replace("$(($(nproc)*2+1))", "$(nproc)")}
    (tmp_path / "compose.yaml").unlink()
    found = _findings(tmp_path, plain)
    assert not [f for f in found if f.rule == "workers-from-cpu-count"]
    (finding,) = [f for f in found if f.rule == "workers-from-cpu-count-no-limit"]
    assert "no CPU limit is declared" in finding.message
    assert finding.severity == Severity.advice


def test_shell_arithmetic_on_nproc_is_read_never_run() -> None:
    """`$(( $(nproc) * 2 + 1 ))` is computed from its syntax tree for a node's count; a power,
    a division by zero or anything but integer arithmetic is not computed."""
    from servertune.check.rules.workers import nproc_count

    assert nproc_count("$(( $(nproc) * 2 + 1 ))", 64) == 129
    assert nproc_count("$(( ($(nproc) - 1) / 2 ))", 16) == 7
    assert nproc_count("$((2**99))", 16) is None
    assert nproc_count("$(( $(nproc) / 0 ))", 4) is None
    assert nproc_count("$(rm -rf /)", 4) is None


APPRISE_LIKE = (
    "import multiprocessing\nimport os\n\nworker_class = 'gevent'\n"
    'workers = int(os.environ.get("APP_WORKER_COUNT", multiprocessing.cpu_count() * 2 + 1))\n'
)


def test_a_cpu_count_fix_keeps_the_projects_own_variable(tmp_path: Path) -> None:
    """`workers = int(os.environ.get("APP_WORKER_COUNT", cpu_count() * 2 + 1))`: the fix keeps
    APP_WORKER_COUNT (the project's documented knob), never swaps it for WEB_CONCURRENCY;
    under a CPU limit the same config is a warning with the same variable."""
    files = {"Dockerfile": IMAGE, "gunicorn.conf.py": APPRISE_LIKE}
    (advice,) = [f for f in _findings(tmp_path, files) if f.rule.startswith("workers-from-cpu")]
    assert advice.rule == "workers-from-cpu-count-no-limit"
    assert advice.fix.startswith('workers = int(os.environ.get("APP_WORKER_COUNT", ')
    assert "WEB_CONCURRENCY" not in advice.fix + advice.message
    assert "set APP_WORKER_COUNT with it" in advice.message
    # One cause, one finding: with cores named, no workers-over-cores beside it.
    named = _findings(tmp_path, files, machine=TWO_CORES)
    assert [f.rule for f in named if f.at.line == 5] == ["workers-from-cpu-count-no-limit"]
    files["compose.yaml"] = _compose('"2"')
    (fault,) = [f for f in _findings(tmp_path, files) if f.rule.startswith("workers-from-cpu")]
    assert (fault.rule, fault.severity) == ("workers-from-cpu-count", Severity.warning)
    assert fault.fix.startswith('workers = int(os.environ.get("APP_WORKER_COUNT", ')
    assert "APP_WORKER_COUNT set beside the limit overrides it" in fault.fix


def test_advice_for_an_async_worker_never_suggests_threads(tmp_path: Path) -> None:
    """gunicorn's `threads` only applies to gthread (and sync, which becomes gthread): a
    `worker_class = "gevent"` config over the plan's processes is advised processes alone;
    a sync config is advised processes and threads."""
    gevent = "worker_class = 'gevent'\nworkers = 9\n"
    (advice,) = _findings(tmp_path, {"gunicorn.conf.py": gevent}, machine=TWO_CORES)
    assert advice.rule == "workers-over-cores"
    assert "threads" not in advice.fix
    assert " x " not in advice.message.split(", not ")[0]
    assert "event loop" in advice.message
    (sync,) = _findings(tmp_path, {"gunicorn.conf.py": "workers = 9\n"}, machine=TWO_CORES)
    assert sync.rule == "workers-over-cores"
    assert "threads = " in sync.fix
