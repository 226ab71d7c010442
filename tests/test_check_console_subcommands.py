"""A console script that is a command group (click's `@click.group()` with `@cli.command()`
subcommands): the launch follows the subcommand its arguments name, binds that command's
options from the command line (else their defaults), and a subcommand that starts no server
is no launch. Seen in redis/agent-memory-server (`agent-memory api|mcp|task-worker`)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

PYPROJECT = '[project]\nname = "shop"\n[project.scripts]\nshop = "shop.cli:cli"\n'
CLI = """\
import click
import uvicorn


@click.group()
def cli():
    pass


@cli.command()
@click.option("--port", default=9000)
@click.option("--host", default="127.0.0.1")
def api(port, host):
    uvicorn.run("shop.main:app", host=host, port=port)


@cli.command()
def task_worker():
    run_worker()


@cli.command("serve-admin")
@click.option("--port", default=9100)
def admin(port):
    uvicorn.run("shop.admin:app", host="0.0.0.0", port=port)
"""


def check_folder(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def _project(root: Path, compose: str) -> None:
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "cli.py").write_text(CLI)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "Dockerfile").write_text("FROM python:3.12\nWORKDIR /app\nCOPY . .\n")
    (root / "docker-compose.yml").write_text(compose)


def test_each_service_runs_the_subcommand_its_command_names(tmp_path: Path) -> None:
    """`shop api --host 0.0.0.0 --port 8000` is uvicorn on 0.0.0.0:8000 (the command line's
    options, not the defaults); `shop task-worker` starts no server (no launch, though
    another command of the group runs uvicorn); `shop serve-admin` is the command named
    `serve-admin`, on its default port."""
    _project(
        tmp_path,
        "services:\n"
        "  api:\n    build: .\n    command: shop api --host 0.0.0.0 --port 8000\n"
        "  worker:\n    build: .\n    command: [shop, task-worker]\n"
        "  admin:\n    build: .\n    command: shop serve-admin\n",
    )
    result = check_folder(tmp_path)
    sockets = sorted(s.value for app in result.apps for s in app.sockets)
    assert sockets == ["0.0.0.0:8000", "0.0.0.0:9100"]
    assert all(app.kind == "uvicorn" for app in result.apps)


def test_a_console_script_under_a_venvs_bin_is_the_console_script(tmp_path: Path) -> None:
    """`/app/.venv/bin/shop api --port 8000` (a supervisord program, the venv's path of the
    script) is the project's console script `shop`, followed into its `api` command."""
    _project(tmp_path, "services:\n  api:\n    build: .\n")
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
        'CMD ["/app/.venv/bin/shop", "api", "--host", "0.0.0.0", "--port", "8000"]\n'
    )
    result = check_folder(tmp_path)
    assert [s.value for app in result.apps for s in app.sockets] == ["0.0.0.0:8000"]


ARGPARSE_CLI = """\
import argparse

import uvicorn


def serve(args):
    uvicorn.run("shop.main:app", host=args.host, port=args.port)


def migrate(args):
    run_migrations()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config")
    sub = parser.add_subparsers()
    web = sub.add_parser("serve")
    web.add_argument("--port", type=int, default=8000)
    web.set_defaults(func=serve)
    sub.add_parser("migrate").set_defaults(func=migrate)
    args = parser.parse_args()
    args.func(args)
"""


def _argparse_project(root: Path, command: str) -> CheckResult:
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "cli.py").write_text(ARGPARSE_CLI)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop"\n[project.scripts]\nshop = "shop.cli:main"\n'
    )
    (root / "Dockerfile").write_text(f"FROM python:3.12\nWORKDIR /app\nCOPY . .\nCMD {command}\n")
    return check_folder(root)


def test_an_argparse_subcommand_runs_the_function_its_parser_names(tmp_path: Path) -> None:
    """A console script whose main dispatches argparse subparsers (`set_defaults(func=serve)`,
    then `args.func(args)`; the pattern of CentOS/duffy's `duffy -c FILE serve`): `shop -c
    x.yaml serve --port 8000` is the uvicorn its `serve` function runs, while `shop -c x.yaml
    migrate` runs `migrate`, which starts none: never the uvicorn of another subcommand (a
    false link), but a launcher not followed."""
    served = _argparse_project(
        tmp_path / "a", '["shop", "-c", "x.yaml", "serve", "--port", "8000"]'
    )
    assert [app.kind for app in served.apps] == ["uvicorn"]
    migrated = _argparse_project(tmp_path / "b", '["shop", "-c", "x.yaml", "migrate"]')
    assert migrated.apps == ()
    assert [n.kind for n in migrated.notes if n.kind == "not-followed"] == ["not-followed"]
