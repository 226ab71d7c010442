"""`servertune check` from the console: exit codes like a linter, one `error:` line for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servertune.check.gunicorn import GUNICORN_EVAL_TIMEOUT_S
from servertune.check.source import MAX_CONFIG_BYTES

DATA = Path(__file__).parent / "data" / "check"
#: The server these configs are for, whatever machine runs the tests.
CORES = ("--cores", "4")


def run(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m servertune check ARGV...` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", "check", *map(str, argv), *CORES],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, nothing on stdout, one `error:` line on stderr containing every word."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr


def test_missing_file(tmp_path: Path) -> None:
    """A path that does not exist names the file."""
    assert_one_error_line(run(tmp_path / "nope.conf"), "nope.conf", "no such file")


def test_binary_file(tmp_path: Path) -> None:
    """A binary file (NUL bytes) is not parsed."""
    path = tmp_path / "nginx.conf"
    path.write_bytes(b"events {}\0\x01\x02")
    assert_one_error_line(run(path), "nginx.conf", "binary")


def test_non_utf8_file(tmp_path: Path) -> None:
    """Latin-1 bytes are refused with the offset, not silently replaced."""
    path = tmp_path / "uwsgi.ini"
    path.write_bytes("[uwsgi]\nprocesses = 2 # caf\xe9\n".encode("latin-1"))
    assert_one_error_line(run(path), "uwsgi.ini", "not UTF-8")


def test_ten_megabyte_config(tmp_path: Path) -> None:
    """A 10 MB file is refused by its size before anything parses it."""
    path = tmp_path / "huge.conf"
    path.write_text("# padding\n" * (10 * 1024 * 1024 // 10))
    assert path.stat().st_size > MAX_CONFIG_BYTES
    assert_one_error_line(run(path), "huge.conf", "larger than")


def test_nginx_syntax_error(tmp_path: Path) -> None:
    """crossplane's syntax error arrives as file:line and its reason."""
    path = tmp_path / "nginx.conf"
    path.write_text("events {}\nhttp {\n    server {\n        listen 80\n    }\n")
    assert_one_error_line(run(path), "nginx.conf:", "syntax error")


def test_nginx_include_cycle(tmp_path: Path) -> None:
    """a includes b includes a: refused, naming the chain."""
    (tmp_path / "a.conf").write_text("include b.conf;\n")
    (tmp_path / "b.conf").write_text("include a.conf;\n")
    assert_one_error_line(run(tmp_path / "a.conf"), "include cycle", "a.conf", "b.conf")


def test_nginx_self_include(tmp_path: Path) -> None:
    """A glob that matches the including file itself is a cycle too."""
    (tmp_path / "site.conf").write_text("include *.conf;\n")
    assert_one_error_line(run(tmp_path / "site.conf"), "include cycle")


def test_gunicorn_config_that_raises(tmp_path: Path) -> None:
    """An exception in gunicorn.conf.py is reported with its message, from the child process."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text("workers = 2\nraise RuntimeError('no DATABASE_URL')\n")
    assert_one_error_line(run(path), "gunicorn.conf.py", "line 2 raises RuntimeError(")
    executed = run(path, "--execute-gunicorn-config")
    assert_one_error_line(executed, "gunicorn.conf.py", "RuntimeError: no DATABASE_URL")


def test_gunicorn_config_that_loops_is_stopped(tmp_path: Path) -> None:
    """A config that never finishes is killed after the time limit, children included: the
    child it started (which writes its pid, then sleeps past the limit) is gone once check
    has answered, not left running."""
    path = tmp_path / "gunicorn.conf.py"
    pid_file = tmp_path / "child.pid"
    child = tmp_path / "child.py"
    child.write_text(
        f"import os, pathlib, time\npathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))\n"
        f"time.sleep({GUNICORN_EVAL_TIMEOUT_S + 60})\n"
    )
    path.write_text(
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, {str(child)!r}])\n"
        "while True:\n    pass\n"
    )
    started = time.monotonic()
    assert_one_error_line(
        run(path, "--execute-gunicorn-config"), "gunicorn.conf.py", "did not finish loading"
    )
    assert time.monotonic() - started < GUNICORN_EVAL_TIMEOUT_S + 20
    pid = int(pid_file.read_text())
    # A killed orphan is reaped by init: allow it a few seconds to vanish (bounded poll).
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "a process the config started outlived the check"


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def test_gunicorn_syntax_error(tmp_path: Path) -> None:
    """A Python syntax error names the line, without running anything."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text("workers = 2\nthreads = = 4\n")
    assert_one_error_line(run(path), "gunicorn.conf.py:2:", "syntax error")


def test_uwsgi_without_section(tmp_path: Path) -> None:
    """An .ini without [uwsgi] is not a uWSGI config."""
    path = tmp_path / "app.ini"
    path.write_text("[app]\nprocesses = 2\n")
    assert_one_error_line(run(path), "app.ini", "no [uwsgi] section")


def test_uwsgi_unknown_placeholder(tmp_path: Path) -> None:
    """%(name) of an option not set in the file is a value set where uWSGI starts (a
    `--set-ph` of a command line not read, an emperor's): a coverage note at its line, the
    rest of the file checked, never a refusal (exit 2)."""
    path = tmp_path / "uwsgi.ini"
    path.write_text("[uwsgi]\nmodule = app\nsocket = %(base)/app.sock\n")
    result = run(path)
    assert result.returncode != 2, result
    assert "uwsgi.ini:3" in result.stdout, result.stdout
    assert "%(base)" in result.stdout, result.stdout


def test_lb_flags_exclude_each_other() -> None:
    """--lb NAME and --lb-idle-timeout S together are a usage error."""
    case = DATA / "alb-default-keepalive" / "gunicorn.conf.py"
    assert_one_error_line(run(case, "--lb", "aws-alb", "--lb-idle-timeout", "60"), "--lb")


def test_unknown_lb_name_is_a_usage_error() -> None:
    """An LB name servertune does not know lists the valid ones."""
    case = DATA / "alb-default-keepalive" / "gunicorn.conf.py"
    assert_one_error_line(run(case, "--lb", "azure"), "aws-alb")


def test_exit_codes_follow_fail_on() -> None:
    """Findings at or above --fail-on exit 1; below it, 0; advice fails only with --fail-on
    advice; a clean stack exits 0."""
    shared = DATA / "break-shared-socket"  # advice only
    broken = (shared / "uwsgi.ini", shared / "nginx.conf")
    assert run(*broken, "--lb", "aws-alb").returncode == 0
    assert run(*broken, "--lb", "aws-alb", "--fail-on", "info").returncode == 0
    assert run(*broken, "--lb", "aws-alb", "--fail-on", "advice").returncode == 1
    fixed = DATA / "recipe-fixed"
    clean = run(fixed / "nginx.conf", fixed / "gunicorn.conf.py", "--lb", "aws-alb")
    assert clean.returncode == 0
    assert clean.stdout.strip() == "no findings in 2 files, judged for 4 cores (--cores)"
    error = DATA / "alb-default-keepalive" / "gunicorn.conf.py"
    assert run(error, "--lb", "aws-alb", "--fail-on", "error").returncode == 1


def test_json_output() -> None:
    """--format json lists files, links and findings with rule, severity, file and line."""
    case = DATA / "recipe-broken"
    result = run(
        case / "nginx.conf", case / "gunicorn.conf.py", "--lb", "aws-alb", "--format", "json"
    )
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["load_balancer"] == {"name": "aws-alb", "idle_timeout_s": 60}
    assert [link["upstream"] for link in document["links"]] == ["app"]
    [finding] = document["findings"]
    assert finding["rule"] == "upstream-keepalive-over-app-keepalive"
    assert finding["severity"] == "error"
    assert finding["file"].endswith("gunicorn.conf.py")
    assert finding["fix"] == "keepalive = 65"


def test_sarif_output_is_valid_2_1_0() -> None:
    """--format sarif writes a SARIF 2.1.0 log whose results point at rules the driver declares."""
    case = DATA / "uwsgi-django-tutorial"
    result = run(case / "mysite_uwsgi.ini", case / "mysite_nginx.conf", "--format", "sarif")
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    [run_] = log["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert run_["results"]
    for item in run_["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        assert item["level"] in {"error", "warning", "note"}
        region = item["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1


def test_workload_compares_with_the_plan(tmp_path: Path) -> None:
    """--workload adds the plan's numbers and reasons where the file differs from them."""
    workload = tmp_path / "workload.toml"
    workload.write_text("cores = 4\nservice_time_ms = 100\ncpu_fraction = 0.5\n")
    case = DATA / "recipe-fixed"
    result = run(case / "nginx.conf", case / "gunicorn.conf.py", "--workload", workload)
    assert "plan-differs" in result.stdout
    assert "for the workload given the plan is threads 2, not 4" in result.stdout
    # 19.8 req/s a worker at the ceiling (1 core / 50.5 ms: the app's 50 ms and the WSGI
    # server's own 0.5) x 600 s: recycled at most every ten minutes.
    assert "for the workload given the plan is max_requests 11882, not 0 (default)" in result.stdout


def test_an_asgi_gunicorn_config_is_compared_with_the_asgi_plan(tmp_path: Path) -> None:
    """gunicorn with uvicorn's worker against an ASGI workload: no thread count is compared (the
    worker runs one event loop), keep-alive is compared with uvicorn's; against a WSGI workload
    the interface itself is the finding."""
    config = DATA / "phalanx-uvicorn-ingress" / "gunicorn.conf.py"
    asgi = tmp_path / "asgi.toml"
    asgi.write_text('cores = 2\ninterface = "asgi"\n')
    result = run(config, "--workload", asgi)
    assert "threads" not in result.stdout
    assert (
        "for the workload given the plan is keepalive 65, not 5: --timeout-keep-alive"
        in result.stdout
    )
    assert "plan-interface-differs" not in result.stdout
    wsgi = tmp_path / "wsgi.toml"
    wsgi.write_text("cores = 2\n")
    result = run(config, "--workload", wsgi)
    assert "[plan-interface-differs] gunicorn.conf.py serves an ASGI app" in result.stdout
    assert "threads" not in result.stdout.replace("thread count is not compared", "")


def test_a_uvicorn_script_is_compared_with_the_plan_in_its_own_flags(tmp_path: Path) -> None:
    """A uvicorn command line against an ASGI workload: each differing number is named and fixed
    as a uvicorn flag, with the plan's reason."""
    asgi = tmp_path / "asgi.toml"
    asgi.write_text('cores = 4\ninterface = "asgi"\n')
    result = run(DATA / "uvicorn-script-default-keepalive" / "start.sh", "--workload", asgi)
    assert "for the workload given the plan is --workers 4, not 8" in result.stdout
    assert "fix: --workers 4" in result.stdout
    assert (
        "for the workload given the plan is --timeout-keep-alive 65, not 5 (default)"
        in result.stdout
    )
    assert "fix: --timeout-keep-alive 65" in result.stdout


def test_bad_workload_is_one_line(tmp_path: Path) -> None:
    """An invalid --workload file is refused like `gen` refuses it."""
    workload = tmp_path / "workload.toml"
    workload.write_text("cores = 0\n")
    case = DATA / "recipe-fixed" / "gunicorn.conf.py"
    assert_one_error_line(run(case, "--workload", workload), "cores")


def test_environment_reaches_gunicorn() -> None:
    """GUNICORN_CMD_ARGS is honoured, as gunicorn honours it."""
    case = DATA / "alb-default-keepalive" / "gunicorn.conf.py"
    env = {**os.environ, "GUNICORN_CMD_ARGS": "--keep-alive 75"}
    assert run(case, "--lb", "aws-alb", env=env).returncode == 0
    assert run(case, "--lb", "aws-alb").returncode == 1


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_every_format_of_a_clean_run_exits_0(fmt: str) -> None:
    """No findings: exit 0 in every format."""
    case = DATA / "docker-django-nginx"
    result = run(case / "nginx.conf", case / "gunicorn.conf.py", "--format", fmt)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("empty.conf", "", ("empty.conf", "empty", "nothing to check")),
        ("comments.ini", "; nothing\n# here\n\n", ("comments.ini", "empty")),
        ("settings.toml", "workers = 9\n", ("settings.toml", "not a file check reads")),
        ("notes", "processor : 0\nvendor_id : AMD\n", ("notes", "not a file check reads")),
        ("cut.conf", "events {\n", ("cut.conf:", "nginx syntax error: unexpected end of file")),
    ],
)
def test_a_file_check_cannot_read_says_what_it_took_it_for(
    tmp_path: Path, name: str, text: str, words: tuple[str, ...]
) -> None:
    """Empty files, unknown kinds and cut-off nginx files are never passed as "no findings"
    nor guessed as nginx with an empty reason: one line, what and why."""
    path = tmp_path / name
    path.write_text(text)
    assert_one_error_line(run(path), *words)


def test_a_kernel_file_is_not_read_as_nginx() -> None:
    """/proc/cpuinfo (which stat() calls empty) is not a config of any kind check reads."""
    assert_one_error_line(run("/proc/cpuinfo"), "/proc/cpuinfo", "not a file check reads")


@pytest.mark.parametrize(
    "text",
    [
        (
            "def application(environ, start_response):\n"
            "    start_response('200 OK', [])\n    return [b'hi']\n"
        ),
        "import os\nDEBUG = os.environ.get('DEBUG') == '1'\n",
    ],
)
def test_an_application_module_is_not_a_gunicorn_config(tmp_path: Path, text: str) -> None:
    """A .py file that defines no gunicorn setting is an app or a settings module, not a
    gunicorn config: said so, not passed with gunicorn's defaults as "no findings"."""
    path = tmp_path / "app.py"
    path.write_text(text)
    assert_one_error_line(run(path), "app.py", "not a config", "gunicorn.conf.py that serves it")


def test_a_config_of_only_hooks_is_a_gunicorn_config(tmp_path: Path) -> None:
    """Server hooks are gunicorn settings too: such a file is read (with gunicorn's defaults)."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text("def post_fork(server, worker):\n    pass\n")
    result = run(path)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("module", ["crossplane", "yaml"])
def test_a_missing_parser_is_one_line_naming_the_extra(tmp_path: Path, module: str) -> None:
    """Without the `check` extra's parser (crossplane for nginx, PyYAML for manifests) check
    says which extra to install, in one line, instead of a ModuleNotFoundError traceback."""
    if module == "crossplane":
        path = tmp_path / "nginx.conf"
        path.write_text("events {}\nhttp { server { listen 8080; } }\n")
    else:
        path = tmp_path / "deploy.yaml"
        path.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n")
    blocked = (
        f"import sys; sys.modules[{module!r}] = None; sys.argv = ['servertune', 'check', "
        f"{str(path)!r}]; from servertune.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60, check=False
    )
    assert_one_error_line(result, str(path), module, "pip install 'servertune[check]'")


@pytest.mark.parametrize("value", ["0", "-5", "0.5", "lots", "nan", "inf", "99999999"])
def test_rss_mb_must_be_a_positive_number_of_mib(value: str) -> None:
    case = DATA / "alb-default-keepalive" / "gunicorn.conf.py"
    assert_one_error_line(run(case, "--rss-mb", value), "--rss-mb")


def test_kind_reads_a_file_check_cannot_tell(tmp_path: Path) -> None:
    """An nginx site in a file named `default` that starts with a third-party module's
    directive is claimed by no reader (the line says --kind); `--kind nginx` reads it."""
    site = tmp_path / "default"
    site.write_text(
        'more_set_headers "X-Served-By: web";\nserver {\n    listen 8080;\n'
        "    location / { proxy_pass http://127.0.0.1:8000; }\n}\n"
    )
    assert_one_error_line(run(site), "default", "not a file check reads", "--kind")
    read = run("--kind", "nginx", site, "--format", "json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["files"] == [str(site)]


def test_kind_offers_every_reader() -> None:
    """--kind's choices are the registry's kinds; an unknown one (library call) is one line."""
    from servertune.check import READERS, CheckInputError, read_file

    shown = subprocess.run(
        [sys.executable, "-m", "servertune", "check", "--kind", "nope", "x"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shown.returncode == 2
    for reader in READERS:
        assert repr(reader.kind) in shown.stderr
    with pytest.raises(CheckInputError, match="not a kind check reads"):
        read_file(DATA / "docker-django-nginx" / "nginx.conf", kind="nope")


def test_the_gunicorn_probe_ends_itself_when_nothing_stops_it(tmp_path: Path) -> None:
    """A config that loops forever, loaded by the probe with no parent to stop it (its parent
    killed before its timeout): the probe ends itself at its own limit, here lowered to 1 s,
    instead of spinning on."""
    from servertune.check import gunicorn as gunicorn_reader

    config = tmp_path / "gunicorn.conf.py"
    config.write_text("while True:\n    pass\n")
    env = {**os.environ, "SERVERTUNE_CHECK_PROBE_LIMIT_S": "1"}
    probe = gunicorn_reader._PROBE.read_text()
    child = subprocess.run(
        [sys.executable, "-B", "-c", probe, str(config)],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode < 0, child  # ended by a signal, its own


def test_a_file_refused_by_several_launches_is_one_error_line(tmp_path: Path) -> None:
    """A compose command gunicorn refuses (`--timeout` with nothing after it), read once with
    the base file and once merged with its `docker-compose.prod.yml` overlay: one `error:`
    line, not one per launch that met it (opengisch/qfieldcloud printed the same line 6
    times), and exit 2."""
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\n")
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  app:\n    build: .\n    command: gunicorn app:app --timeout\n"
    )
    (tmp_path / "docker-compose.prod.yml").write_text(
        "services:\n  app:\n    environment:\n      A: b\n"
    )
    result = run("--format", "text", tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
