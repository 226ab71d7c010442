"""Plan -> text: the Jinja2 environment and one renderer per emitted file.

Templates hold no arithmetic and no defaults: everything they print comes from the Plan, whose
string values were allow-listed by the Workload model. The `finalize` hook is a second line of
defence: any value that would carry a directive separator into a config aborts the render.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jinja2

from servertune import __version__
from servertune.sizing import ACCESS_LOG_BUFFER_KB, ACCESS_LOG_FLUSH_S, Plan

__all__ = [
    "TARGETS",
    "RenderError",
    "render_gunicorn",
    "render_nginx",
    "render_target",
    "render_uwsgi",
    "write_atomically",
]

Backend = Literal["uwsgi", "gunicorn"]
Layout = Literal["per-worker", "shared"]

# Characters a rendered value may contain. No whitespace, quotes, `;`, braces, `#`, `$`, `%`,
# `@`, parentheses or backslashes: nothing that ends a directive or starts an expansion in nginx,
# uWSGI ini files or Python source.
_SAFE_VALUE = re.compile(r"\A[A-Za-z0-9_.:/\[\]*,-]*\Z")


class RenderError(ValueError):
    """A value failed the render-time allow-list: a bug upstream of the template, never input."""


def _finalize(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return str(value)
    if isinstance(value, str) and _SAFE_VALUE.match(value):
        return value
    raise RenderError(f"refusing to render {value!r}: not an allow-listed config value")


def _template_dir() -> Path:
    """Templates ship inside the wheel as servertune/templates; a source checkout has them at the top."""
    # A plain path, not importlib.resources: the wheel installs the package as files, and
    # importlib.resources (with zipfile) would add to every `servertune gen`'s cold start.
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if checkout.is_dir():
        return checkout
    raise RenderError("servertune's templates are missing from this installation")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_template_dir()),
        autoescape=False,  # configs, not HTML: escaping would corrupt them
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(version=__version__, **context)


def _trusted_proxies(plan: Plan) -> str:
    host = plan.workload.bind_host
    return "127.0.0.1,::1" if host.is_loopback or plan.workload.socket_dir else str(host)


def render_uwsgi(plan: Plan) -> str:
    """uwsgi.ini: one socket per worker, each mapped to its worker (map-socket i:i+1)."""
    mapping = [(index, index + 1, socket) for index, socket in enumerate(plan.sockets)]
    return _render("uwsgi.ini.j2", plan=plan, w=plan.workload, mapping=mapping)


def render_nginx(
    plan: Plan, backend: Backend = "uwsgi", layout: Layout = "per-worker", *, snippet: bool = False
) -> str:
    """nginx.conf (complete, run with `nginx -p DIR -c DIR/nginx.conf`) or the includable snippet."""
    servers = list(plan.sockets) if layout == "per-worker" else [plan.shared_socket]
    listen = plan.workload.listen_host
    listen_address = f"[{listen}]" if isinstance(listen, ipaddress.IPv6Address) else str(listen)
    context = {
        "plan": plan,
        "w": plan.workload,
        "backend": backend,
        "upstream": f"servertune_{backend}",
        "servers": [s.nginx for s in servers],
        "listen": f"{listen_address}:{plan.workload.listen_port}",
        # gunicorn speaks HTTP/1.1 to nginx, so nginx may keep connections; a pool per app thread.
        "upstream_keepalive": plan.processes * plan.threads,
        "access_log_buffer_kb": ACCESS_LOG_BUFFER_KB,
        "access_log_flush_s": ACCESS_LOG_FLUSH_S,
    }
    return _render("nginx-site.conf.j2" if snippet else "nginx.conf.j2", **context)


def render_gunicorn(plan: Plan, layout: Layout = "shared") -> str:
    """gunicorn.conf.py: gthread on one shared socket, or one single-worker instance per socket."""
    context = {
        "plan": plan,
        "w": plan.workload,
        "trusted_proxies": _trusted_proxies(plan),
        "sockets": [s.gunicorn for s in plan.sockets],
        "shared": plan.shared_socket.gunicorn,
        "last_worker": len(plan.sockets) - 1,
    }
    name = "gunicorn.conf.py.j2" if layout == "shared" else "gunicorn-per-worker.conf.py.j2"
    return _render(name, **context)


@dataclass(frozen=True)
class Target:
    """One emitted file: its name in `gen all` and how to render it."""

    filename: str
    render: Callable[[Plan], str]
    summary: str


TARGETS: Mapping[str, Target] = {
    "uwsgi": Target("uwsgi.ini", render_uwsgi, "uWSGI, one socket per worker (map-socket)"),
    "nginx": Target("nginx-uwsgi.conf", render_nginx, "complete nginx.conf in front of uWSGI"),
    "nginx-snippet": Target(
        "nginx-uwsgi-site.conf",
        lambda p: render_nginx(p, snippet=True),
        "upstream + server for an existing nginx (http context)",
    ),
    "gunicorn": Target("gunicorn.conf.py", render_gunicorn, "gunicorn gthread, one shared socket"),
    "gunicorn-per-worker": Target(
        "gunicorn-per-worker.conf.py",
        lambda p: render_gunicorn(p, "per-worker"),
        "one single-worker gunicorn per socket (SERVERTUNE_WORKER=0..N-1)",
    ),
    "nginx-gunicorn": Target(
        "nginx-gunicorn.conf",
        lambda p: render_nginx(p, "gunicorn"),
        "complete nginx.conf in front of the per-worker gunicorns",
    ),
    "nginx-gunicorn-shared": Target(
        "nginx-gunicorn-shared.conf",
        lambda p: render_nginx(p, "gunicorn", "shared"),
        "complete nginx.conf in front of the shared-socket gunicorn.conf.py",
    ),
    "nginx-gunicorn-snippet": Target(
        "nginx-gunicorn-site.conf",
        lambda p: render_nginx(p, "gunicorn", snippet=True),
        "upstream + server over the per-worker gunicorns",
    ),
}


def render_target(name: str, plan: Plan) -> str:
    """Render one target by its `TARGETS` name."""
    return TARGETS[name].render(plan)


def write_atomically(files: Mapping[str, str], directory: Path) -> list[Path]:
    """Write every file or none.

    Every file is first written in full to a temporary name in `directory` (same filesystem, so
    the final rename is atomic). Files about to be replaced are kept under a backup name until
    all renames succeeded; on any failure the new files are removed and the old ones restored.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name in files:
        # os.replace onto a directory fails with EISDIR or EPERM ("Operation not permitted"):
        # say what is in the way, before anything is written.
        if (directory / name).is_dir():
            raise IsADirectoryError(
                errno.EISDIR, "a directory of that name is in the way", str(directory / name)
            )
    staged: list[tuple[Path, Path]] = []
    backups: list[tuple[Path, Path]] = []
    done: list[Path] = []
    try:
        for name, text in files.items():
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
            tmp = Path(tmp_name)
            staged.append((tmp, directory / name))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            tmp.chmod(0o644)
        for _, final in staged:
            if final.exists():
                backup = final.with_name(f".{final.name}.bak")
                backup.unlink(missing_ok=True)  # a stale one from an interrupted run
                os.link(final, backup)
                backups.append((backup, final))
        for tmp, final in staged:
            os.replace(tmp, final)
            done.append(final)
    except BaseException:
        restored = {final for _, final in backups}
        for path in done:
            if path not in restored:
                path.unlink(missing_ok=True)
        for backup, final in backups:
            os.replace(backup, final)
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for backup, _ in backups:
        backup.unlink(missing_ok=True)
    return done
