"""The Workload model: defaults, ranges, allow-lists, TOML loading and one-line errors."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from servertune.workload import (
    Workload,
    WorkloadError,
    build_workload,
    describe_allowed,
)
from servertune.workload_file import load_workload


def test_every_field_has_a_default_that_validates() -> None:
    """`Workload()` needs nothing: every field has a default, and the defaults pass validation."""
    workload = Workload()
    assert Workload.model_validate(workload.model_dump()) == workload


@pytest.mark.parametrize("name", list(Workload.model_fields))
def test_every_field_declares_description_and_unit(name: str) -> None:
    """Each field's description and unit are declared once, for the CLI, errors and docs."""
    info = Workload.model_fields[name]
    assert info.description
    assert len(info.description) > 10
    assert isinstance(info.json_schema_extra, dict)
    assert info.json_schema_extra.get("unit")
    assert describe_allowed(name)


def test_cores_accepts_auto_and_numbers_given_as_text() -> None:
    """CLI values arrive as text: '4' becomes 4, 'auto' stays 'auto'."""
    assert build_workload({"cores": "4"}).cores == 4
    assert build_workload({"cores": "auto"}).cores == "auto"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cores", 0),
        ("cores", 1025),
        ("cores", "many"),
        ("cores", True),
        ("listen_host", "fe80::1%eth0"),
        ("cpu_fraction", 0),
        ("cpu_fraction", 1.5),
        ("service_time_ms", -1),
        ("slow_call_ratio", 2),
        ("base_port", 80),
        ("bind_host", "0.0.0.0"),
        ("bind_host", "8.8.8.8"),
        ("app", "wsgi"),
        ("app", "wsgi:app\n"),
        ("app_dir", "relative/dir"),
        ("app_dir", "/srv/../etc"),
        ("socket_dir", "/run/app dir"),
        ("server_name", "example.com;"),
    ],
)
def test_bad_values_give_one_line_naming_the_field(field: str, value: object) -> None:
    """A bad value raises WorkloadError with one line that names the field and what it accepts."""
    with pytest.raises(WorkloadError) as caught:
        build_workload({field: value})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{field}: must be ")


def test_unknown_field_is_refused() -> None:
    """extra='forbid': a misspelt field is an error, not silently ignored."""
    with pytest.raises(WorkloadError, match=r"^cpu_fractoin: unknown field"):
        build_workload({"cpu_fractoin": 0.5})


def test_trailing_newline_is_refused_even_where_dollar_would_match() -> None:
    r"""Patterns end in \Z: 'wsgi:app' followed by a newline is not a valid app."""
    with pytest.raises(WorkloadError):
        build_workload({"app": "wsgi:app\n"})
    assert build_workload({"app": "mysite.wsgi:application"}).app == "mysite.wsgi:application"


def test_bind_host_allows_loopback_and_private_addresses() -> None:
    """App sockets may sit on loopback or a private network, never on a public or wildcard address."""
    assert build_workload({"bind_host": "10.0.0.5"}).bind_host == ipaddress.IPv4Address("10.0.0.5")
    assert build_workload({"bind_host": "::1"}).bind_host == ipaddress.IPv6Address("::1")


def test_toml_file_flat_or_table_and_flags_win(tmp_path: Path) -> None:
    """A workload TOML may be flat or under [workload]; CLI values override the file."""
    flat = tmp_path / "flat.toml"
    flat.write_text('cores = 3\ncpu_fraction = 0.25\napp = "site.wsgi:app"\n')
    table = tmp_path / "table.toml"
    table.write_text("[workload]\ncores = 5\n")
    assert load_workload(flat).cores == 3
    assert load_workload(flat).cpu_fraction == 0.25
    assert load_workload(table).cores == 5
    assert load_workload(flat, {"cores": "7", "app": None}).cores == 7
    assert load_workload(flat, {"app": None}).app == "site.wsgi:app"


def test_toml_errors_are_one_line(tmp_path: Path) -> None:
    """Unreadable or invalid TOML and bad values in a file are one-line WorkloadErrors."""
    broken = tmp_path / "broken.toml"
    broken.write_text("cores = [\n")
    with pytest.raises(WorkloadError, match="not valid TOML"):
        load_workload(broken)
    with pytest.raises(WorkloadError, match="cannot read"):
        load_workload(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("cores = 0\n")
    with pytest.raises(WorkloadError, match=r"^cores: must be an integer from 1 to 1024"):
        load_workload(bad)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("cores", "1_0"),
        ("cores", "+4"),
        ("cores", " 4 "),
        ("cores", "4.0"),
        ("base_port", "8_001"),
        ("max_body_mb", "1_0"),
        ("service_time_ms", "1_0"),
        ("peak_rps", "1_000"),
        ("cpu_fraction", " 0.5"),
    ],
)
def test_numbers_written_as_text_must_be_plain_decimal(name: str, text: str) -> None:
    """`1_0`, a sign, spaces or `4.0` for an integer are refused, not read as another number."""
    with pytest.raises(WorkloadError, match=rf"^{name}: must be "):
        build_workload({name: text})


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [("cores", "12", 12), ("service_time_ms", "2.5", 2.5), ("peak_rps", "1e3", 1000.0)],
)
def test_plain_decimal_text_is_accepted(name: str, text: str, value: float) -> None:
    """Digits, a fraction and an exponent are what a number flag takes."""
    assert getattr(build_workload({name: text}), name) == value


@pytest.mark.parametrize("name", ["cores", "max_body_mb", "listen_port", "service_time_ms"])
def test_a_toml_boolean_is_not_a_number(name: str) -> None:
    """`cores = true` in TOML is refused, not read as 1."""
    with pytest.raises(WorkloadError, match=rf"^{name}: must be .*got True$"):
        build_workload({name: True})


def test_toml_integer_underscores_are_toml_syntax(tmp_path: Path) -> None:
    """An unquoted TOML `1_000` is TOML's own digit grouping and stays allowed."""
    path = tmp_path / "w.toml"
    path.write_text("[workload]\npeak_rps = 1_000\n")
    assert load_workload(path).peak_rps == 1000


def test_an_asgi_workload_without_an_app_serves_the_asgi_module() -> None:
    """The default app follows the interface (Django's wsgi.py / asgi.py): an ASGI server is
    never started on the WSGI module; a named app is kept as given."""
    assert Workload().app == "wsgi:application"
    assert Workload(interface="asgi").app == "asgi:application"
    assert Workload(interface="asgi", app="main:app").app == "main:app"
