"""`tox -e NAME [-- ARGS]` runs tox.ini's `[testenv:NAME]` commands, `{posargs}` the ARGS."""

from __future__ import annotations

from pathlib import Path

from tests.test_check_launch_chain import chains

_TOX = """\
[tox]
envlist = py3

[testenv]
deps = pytest
commands = pytest {posargs}

[testenv:dev-server]
use_develop = true
commands =
    -python -m app.migrate
    uvicorn --reload-dir app app.main:app {posargs:--port 9000}
"""


def _unit(root: Path, command: str) -> None:
    (root / "tox.ini").write_text(_TOX)
    (root / "systemd").mkdir()
    (root / "systemd" / "app.service").write_text(
        f'[Unit]\nDescription=app\n[Service]\nExecStart=/bin/sh -c "cd /srv/app; exec {command}"\n'
    )


def test_a_unit_running_a_tox_env_starts_its_commands_server(tmp_path: Path) -> None:
    """A systemd unit's `tox -e dev-server -- --port 8000` runs `[testenv:dev-server]`'s
    commands in turn: the uvicorn line is the launch, after the unit in its chain, and the
    arguments after `--` are its `{posargs}` (seen in release-engineering/exodus-gw)."""
    _unit(tmp_path, "tox -e dev-server -- --port 8000")
    ((chain, _, launch),) = chains(tmp_path)
    assert chain == ["systemd/app.service", "tox.ini"]
    assert launch.chain[-1].line == 12
    assert launch.app.kind == "uvicorn"
    assert [s.value for s in launch.app.sockets] == ["127.0.0.1:8000"]


def test_posargs_default_and_one_env_only(tmp_path: Path) -> None:
    """Without `--`, `{posargs:DEFAULT}` is its default; a tox naming several environments is
    not followed (which one serves is not guessed)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    _unit(tmp_path / "one", "tox -e dev-server")
    ((_, _, launch),) = chains(tmp_path / "one")
    assert [s.value for s in launch.app.sockets] == ["127.0.0.1:9000"]
    _unit(tmp_path / "two", "tox -e py3,dev-server")
    assert chains(tmp_path / "two") == []
