"""No input can inject a directive: hostile values in every field are refused, and the renderer has a backstop."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app
from servertune.render import TARGETS, RenderError
from servertune.sizing import make_plan
from servertune.workload import Workload

runner = CliRunner()

HOSTILE = [
    "wsgi:app;",
    "wsgi:app { }",
    "wsgi:app}",
    "wsgi:app\nsocket = 0.0.0.0:1",
    "wsgi:app\r\nx",
    "wsgi:app # comment",
    "$(rm -rf /)",
    "@(exec://touch /tmp/pwned)",
    "%(home)",
    'wsgi:app"',
    "wsgi:app'",
    "wsgi:app\x00",
    "wsgi :app",
    "wsgi:\u0430pp",  # Cyrillic a: a look-alike must not pass the allow-list
    "/srv/app;",
    "/srv/app\n",
    "/srv/a b",
    "/srv/../etc",
    "example.com; location /pwn {}",
    "127.0.0.1;",
    "0.0.0.0",
    "fe80::1%a;b{c}",
    "fe80::1%$(HOME)",
    "::1%x",
    "",
]


#: Fields that are switches on the command line (`--sync-views` / `--no-sync-views`): they take
#: no value there, so a hostile value can only come from a workload file.
SWITCHES = [n for n, f in Workload.model_fields.items() if f.annotation is bool]


@pytest.mark.parametrize("field", SWITCHES)
@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v)[:24] for v in HOSTILE])
def test_hostile_value_of_a_switch_in_a_workload_file_exits_2_with_one_line(
    field: str, value: str, tmp_path: Path
) -> None:
    """A switch set to any hostile string in a workload TOML: exit 2, one line, no file."""
    workload = tmp_path / "workload.toml"
    workload.write_text(f"{field} = {json.dumps(value)}\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "all", "--workload", str(workload), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: "), result.stderr
    assert field in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("field", [n for n in Workload.model_fields if n not in SWITCHES])
@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v)[:24] for v in HOSTILE])
def test_hostile_value_in_any_field_exits_2_with_one_line(
    field: str, value: str, tmp_path: Path
) -> None:
    """Every hostile value in every field: exit 2, one stderr line naming the field, no traceback, no file."""
    flag = "--" + field.replace("_", "-")
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "all", flag, value, "--out", str(out)])
    if result.exit_code == 0:
        # A few values are legitimate for some fields (e.g. 0.0.0.0 for listen_host): they must then
        # reach the files as exactly that value, and never as part of a larger directive.
        assert (field, value) in {
            ("listen_host", "0.0.0.0"),
            ("lb_listen_host", "0.0.0.0"),
            ("server_name", "0.0.0.0"),
            # A registry host name of digits and dots is a valid image reference; it reaches
            # kubernetes.yaml double-quoted, as exactly that value.
            ("app_image", "0.0.0.0"),
            ("nginx_image", "0.0.0.0"),
        }, (
            field,
            value,
        )
        return
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {field} ({flag}): ")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    "value", ["wsgi:app\nsocket = 0.0.0.0:1", "a;b", "x}", "$(id)", "@(exec://id)", 'a"b']
)
def test_renderer_backstop_refuses_unvalidated_values(value: str) -> None:
    """A value that bypassed validation (model_construct) still never reaches a config: RenderError."""
    sneaky = Workload.model_construct(
        **{**Workload(cores=2).model_dump(), "app": value, "cores": 2}
    )
    plan = make_plan(Workload(cores=2)).replace(workload=sneaky)
    for target in ("uwsgi", "gunicorn"):
        with pytest.raises(RenderError, match="refusing to render"):
            TARGETS[target].render(plan)


def test_renderer_backstop_allows_addresses() -> None:
    """The backstop lets IP addresses and unix paths through unchanged."""
    plan = make_plan(Workload(cores=2, bind_host=ipaddress.IPv6Address("::1")))
    assert "[::1]:8001" in TARGETS["nginx"].render(plan)
