"""Every generated config passes the real servers' own checks: nginx -t, uwsgi --strict, gunicorn --check-config."""

from __future__ import annotations

import os
import runpy
import subprocess
from pathlib import Path

import pytest
from gunicorn.config import KNOWN_SETTINGS
from hypothesis import HealthCheck, given, settings

from servertune.render import TARGETS, fitting, render_gunicorn, render_nginx, render_target
from servertune.sizing import Plan, make_plan
from servertune.workload import Workload

from .strategies import workloads
from .support import nginx_check, tool

NAMED = {
    "seed000": Workload(cores=4, service_time_ms=100, cpu_fraction=0.5),
    "slow-calls": Workload(
        cores=2, service_time_ms=5, cpu_fraction=1.0, slow_call_ratio=0.01, slow_call_ms=30_000
    ),
    "unix": Workload(
        cores=3, socket_dir="/tmp/servertune-check", memory_per_worker_mb=300, memory_limit_mb=2048
    ),
    "ipv6": Workload(
        cores=2, bind_host="::1", listen_host="::1", app="mysite.wsgi:app", app_dir="/srv/mysite"
    ),
}


def _write_all(plan: Plan, directory: Path) -> dict[str, Path]:
    paths = {}
    for name in fitting(plan.workload.interface):  # what `gen all` writes for this app
        path = directory / TARGETS[name].filename
        path.write_text(render_target(name, plan))
        paths[name] = path
    return paths


def _wrap_snippet(snippet: Path) -> Path:
    """A minimal nginx.conf that includes a snippet in the http context, as users do."""
    wrapper = snippet.with_name(snippet.stem + "-wrapper.conf")
    wrapper.write_text(
        f"pid nginx.pid;\nerror_log error.log;\nevents {{}}\nhttp {{\n    include {snippet.name};\n}}\n"
    )
    return wrapper


@pytest.mark.parametrize("case", list(NAMED))
def test_nginx_accepts_complete_configs_and_snippets(case: str, tmp_path: Path) -> None:
    """nginx -t passes on both complete configs and on both snippets included in an http block."""
    paths = _write_all(make_plan(NAMED[case]), tmp_path)
    for conf in (
        paths["nginx"],
        paths["nginx-gunicorn"],
        paths["nginx-gunicorn-shared"],
        _wrap_snippet(paths["nginx-snippet"]),
        _wrap_snippet(paths["nginx-gunicorn-snippet"]),
    ):
        checked = nginx_check(conf)
        assert checked.returncode == 0, f"{conf.name}: {checked.stderr}"


def test_nginx_rejects_a_broken_config(tmp_path: Path) -> None:
    """The check can fail: a config with a stray brace is refused by nginx -t."""
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        render_nginx(make_plan(NAMED["seed000"])).replace("least_conn;", "least_conn; {")
    )
    assert nginx_check(conf).returncode != 0


def haproxy_check(conf: Path) -> subprocess.CompletedProcess[str]:
    """`haproxy -c -f FILE`: HAProxy's own parse of the whole config, binding nothing."""
    return subprocess.run(
        [tool("haproxy"), "-c", "-f", str(conf)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("case", list(NAMED))
def test_haproxy_accepts_the_load_balancer_config(case: str, tmp_path: Path) -> None:
    """haproxy -c passes on `gen haproxy` for every named workload, IPv6 listeners included,
    and reports no warning (HAProxy warns about a missing timeout, for one)."""
    conf = _write_all(make_plan(NAMED[case]), tmp_path)["haproxy"]
    checked = haproxy_check(conf)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "WARNING" not in checked.stdout + checked.stderr


def test_haproxy_rejects_a_broken_config(tmp_path: Path) -> None:
    """The check can fail: a misspelt keyword is refused by haproxy -c."""
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(
        render_target("haproxy", make_plan(NAMED["seed000"])).replace("http-reuse", "http-reuze")
    )
    assert haproxy_check(conf).returncode != 0


@pytest.mark.parametrize("case", list(NAMED))
def test_uwsgi_strict_accepts_the_ini(case: str, tmp_path: Path) -> None:
    """uwsgi --strict knows every option we emit (it refuses unknown ones before binding)."""
    paths = _write_all(make_plan(NAMED[case]), tmp_path)
    checked = subprocess.run(
        [tool("uwsgi"), "--strict", "--ini", str(paths["uwsgi"]), "--hook-asap=exit:0"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_uwsgi_strict_rejects_an_unknown_option(tmp_path: Path) -> None:
    """The uWSGI check can fail: an unknown option is refused under strict."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(TARGETS["uwsgi"].render(make_plan(NAMED["seed000"])) + "no-such-option = 1\n")
    checked = subprocess.run(
        [tool("uwsgi"), "--strict", "--ini", str(ini), "--hook-asap=exit:0"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert checked.returncode != 0


KNOWN = {setting.name for setting in KNOWN_SETTINGS}


def _gunicorn_keys(conf: Path, env: dict[str, str]) -> set[str]:
    """The settings a gunicorn.conf.py defines, the way gunicorn reads it (executing it)."""
    old = dict(os.environ)
    os.environ.update(env)
    try:
        namespace = runpy.run_path(str(conf))
    finally:
        os.environ.clear()
        os.environ.update(old)
    return {
        k for k, v in namespace.items() if not k.startswith("_") and not callable(v) and k != "os"
    }


@pytest.mark.parametrize("case", list(NAMED))
@pytest.mark.parametrize("layout", ["shared", "per-worker"])
def test_gunicorn_check_config_and_known_settings(case: str, layout: str, tmp_path: Path) -> None:
    """gunicorn --check-config passes, and every key is a gunicorn setting (unknown ones are ignored silently)."""
    plan = make_plan(NAMED[case])
    conf = tmp_path / "gunicorn.conf.py"
    conf.write_text(render_gunicorn(plan, layout))  # type: ignore[arg-type]
    env = {"SERVERTUNE_WORKER": str(plan.processes - 1)} if layout == "per-worker" else {}
    keys = _gunicorn_keys(conf, env)
    assert keys <= KNOWN, keys - KNOWN
    assert {"workers", "threads", "bind", "timeout", "keepalive", "worker_class"} <= keys
    # --check-config imports the app, so give it a real one to find.
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    module, _, attr = plan.workload.app.partition(":")
    package = app_dir.joinpath(*module.split(".")[:-1])
    package.mkdir(parents=True, exist_ok=True)
    for parent in [package, *package.parents]:
        if parent == app_dir:
            break
        (parent / "__init__.py").touch()
    (package / f"{module.split('.')[-1]}.py").write_text(
        f"def {attr}(environ, start_response):\n    return []\n"
    )
    text = conf.read_text()
    if plan.workload.app_dir:
        text = text.replace(f'chdir = "{plan.workload.app_dir}"', f'chdir = "{app_dir}"')
    conf.write_text(text)
    checked = subprocess.run(
        [tool("gunicorn"), "-c", str(conf), "--check-config", "--chdir", str(app_dir)],
        capture_output=True, text=True, timeout=60, check=False, env={**os.environ, **env},
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_per_worker_gunicorn_refuses_a_missing_worker_index(tmp_path: Path) -> None:
    """The per-worker config stops with a clear message when SERVERTUNE_WORKER is unset or out of range."""
    conf = tmp_path / "gunicorn.conf.py"
    conf.write_text(render_gunicorn(make_plan(NAMED["seed000"]), "per-worker"))
    for value in ("", "4", "x"):
        with pytest.raises(SystemExit, match=r"SERVERTUNE_WORKER must be 0\.\.3"):
            _gunicorn_keys(conf, {"SERVERTUNE_WORKER": value})


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(workload=workloads())
def test_nginx_accepts_sampled_workloads(workload: Workload, tmp_path: Path) -> None:
    """100 sampled workloads: both complete nginx configs pass nginx -t."""
    plan = make_plan(workload)
    for backend in ("uwsgi", "gunicorn"):
        conf = tmp_path / f"nginx-{backend}.conf"
        conf.write_text(render_nginx(plan, backend))  # type: ignore[arg-type]
        checked = nginx_check(conf)
        assert checked.returncode == 0, checked.stderr
