"""Sockets: one per worker behind nginx least_conn (one shared by single-threaded processes),
who accepts from them, their permissions, and no address twice."""

from __future__ import annotations

import ipaddress

from servertune.machine import Machine
from servertune.sizing.defaults import (
    ASGI_NORMAL_RPS,
    ASGI_OVERLOAD_FACTOR,
    ASGI_OVERLOAD_P99,
    ASGI_OVERLOAD_P99_TARGET,
    BALANCE_AT_CORES_P99,
    BALANCE_AT_CORES_RPS,
    BALANCE_SINGLE_SHARED_P99,
    SOCKET_MODE,
    SOCKET_UMASK,
    THUNDER_LOCK_MIN_PROCESSES,
    UNIX_PATH_MAX,
)
from servertune.sizing.plan import Derivation, PlanError, Socket, SocketLayout
from servertune.workload import Workload

_Host = ipaddress.IPv4Address | ipaddress.IPv6Address


def _per_worker(w: Workload, count: int) -> tuple[tuple[Socket, ...], Socket]:
    if w.socket_dir is not None:
        base = w.socket_dir.rstrip("/")
        longest = f"{base}/worker-{count - 1}.sock"
        if len(longest.encode()) > UNIX_PATH_MAX:
            raise PlanError(
                f"socket_dir: {longest!r} is {len(longest.encode())} bytes; unix socket paths "
                f"must be at most {UNIX_PATH_MAX}: choose a shorter directory"
            )
        workers = tuple(Socket.unix(f"{base}/worker-{i}.sock") for i in range(count))
        return workers, Socket.unix(f"{base}/shared.sock")
    if w.base_port + count > 65536:
        raise PlanError(
            f"base_port: {w.base_port} + {count} workers runs past port 65535; choose a lower base_port"
        )
    workers = tuple(Socket.tcp(w.bind_host, w.base_port + i) for i in range(count))
    return workers, Socket.tcp(w.bind_host, w.base_port)


def _same_address(a: _Host, b: _Host) -> bool:
    """Whether two binds on one port would collide: the same address, or either a wildcard."""
    if a.is_unspecified or b.is_unspecified:
        # 0.0.0.0 overlaps every IPv4 address; :: usually every address (IPV6_V6ONLY off).
        return a.version == b.version or isinstance(
            a if a.is_unspecified else b, ipaddress.IPv6Address
        )
    return a == b


def _check_collisions(w: Workload, sockets: tuple[Socket, ...], shared: Socket) -> None:
    """nginx's listen address must not be one the app server binds (the second bind would fail)."""
    for label, socket in [
        *((f"worker socket {i}", s) for i, s in enumerate(sockets)),
        ("the shared socket", shared),
    ]:
        if (
            socket.kind == "tcp"
            and socket.port == w.listen_port
            and socket.host is not None
            and _same_address(socket.host, w.listen_host)
        ):
            raise PlanError(
                f"listen_port: {w.listen_port} on {w.listen_host} is also {label}'s port "
                f"(base_port {w.base_port} .. {w.base_port + len(sockets) - 1} on {w.bind_host}): "
                "nginx and the app server cannot bind the same address; move listen_port or base_port"
            )


def _asgi_layouts(per_worker: bool) -> str:
    """The ASGI targets of one layout with what `servertune bench asgi` measured for each, those
    that meet the overload target first."""
    measured = sorted(
        ((t, r) for t, r in ASGI_OVERLOAD_P99.items() if t.endswith("-per-worker") == per_worker),
        key=lambda item: item[1],
    )
    return ", ".join(
        f"{t} {r:g} ({'meets' if r <= ASGI_OVERLOAD_P99_TARGET else 'misses'}; "
        f"{ASGI_NORMAL_RPS[t]:g} x the best default's req/s at normal load)"
        for t, r in measured
    )


def _span(low_high: tuple[float, float]) -> str:
    """A measured range as the reasons print it: 0.97-1.2."""
    return f"{low_high[0]:g}-{low_high[1]:g}"


#: What `servertune bench asgi` measured, for the ASGI apps' socket reasons.
_ASGI_MEASURED = (
    f"`servertune bench asgi` measured (p99 of admitted requests under {ASGI_OVERLOAD_FACTOR:g} x "
    f"the plan's capacity / unloaded p99; target <= {ASGI_OVERLOAD_P99_TARGET:g}):"
)


def _gunicorn_worker(w: Workload, d: Derivation, threads: int) -> None:
    """gunicorn's worker class: the one that accepts only when a thread is free."""
    if w.interface == "asgi":
        d.put("gunicorn_worker_class", None, "an ASGI app: gunicorn-asgi runs an ASGI worker")
    elif threads == 1:
        d.put(
            "gunicorn_worker_class",
            "sync",
            "1 thread a process: a sync worker accepts only when it is idle, so on one socket the "
            "workers are one queue; gthread with 1 thread keeps accepting while its thread is "
            "busy (up to worker_connections, gunicorn/workers/gthread.py) and queues them behind "
            "it (bench hol, 2 x 1 behind a 10 s call: 13-24 quick requests a run over 1 s with "
            "gthread, none with sync); a sync worker closes each connection after its answer, "
            "so nginx opens one per request",
        )
    else:
        d.put(
            "gunicorn_worker_class",
            "gthread",
            f"{threads} threads a process: gunicorn's threaded worker (a sync worker given "
            "threads runs as gthread anyway)",
        )


def _layout(w: Workload, d: Derivation) -> None:
    """uWSGI's layout: per-worker sockets while a process has threads, one socket when it has one."""
    processes, threads = d.get_int("processes"), d.get_int("threads")
    layout: SocketLayout = "per-worker"
    if w.interface == "asgi":
        why = "an event loop accepts while it is busy: see sockets"
    elif threads > 1:
        why = (
            f"{threads} threads a process: a second request accepted by a process whose other "
            "thread is busy takes turns with it on the GIL while another process may idle, so "
            "each worker gets its own socket and nginx least_conn picks the least busy (see "
            "sockets)"
        )
    elif processes == 1:
        why = "one process: its one socket is the only queue either way"
    else:
        layout = "shared"
        why = (
            "1 thread a process: a single-threaded uWSGI worker accepts a connection only when "
            f"it is idle, so one socket for all {processes} is one queue that the first idle "
            "worker serves; with a socket each, once connections outnumber the workers, a "
            "request waits behind a busy worker while another idles; bench balance (6 x 1 on 2 "
            f"cores, 8 connections) measured {_span(BALANCE_SINGLE_SHARED_P99)} x lower p99 on "
            "one socket than on a socket each, at the same req/s"
        )
    d.put("socket_layout", layout, why)
    lock = layout == "shared" and processes >= THUNDER_LOCK_MIN_PROCESSES
    if lock:
        why = (
            f"{processes} processes on one socket: they take turns in accept() instead of all "
            f"waking for every connection (uWSGI's thunder-lock, from {THUNDER_LOCK_MIN_PROCESSES} "
            "processes, as uWSGI's article on serializing accept advises; bench balance measured "
            "it a wash at 6 processes on 2 cores)"
        )
    elif layout == "shared":
        why = (
            f"{processes} processes on one socket: few enough to wake together (thunder-lock "
            f"from {THUNDER_LOCK_MIN_PROCESSES})"
        )
    else:
        why = "a socket per worker: no accept() to share"
    d.put("thunder_lock", lock, why)


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Per-worker sockets (uWSGI map-socket / one gunicorn each), the shared one, and modes."""
    workers, shared = _per_worker(w, d.get_int("processes"))
    _check_collisions(w, workers, shared)
    if w.interface == "asgi":
        d.put(
            "sockets",
            workers,
            "one per worker (uvicorn-per-worker, gunicorn-asgi-per-worker, granian-per-worker) "
            "behind nginx least_conn, which sends each request to the least busy event loop; "
            f"{_ASGI_MEASURED} {_asgi_layouts(per_worker=True)}",
        )
        d.put(
            "shared_socket",
            shared,
            "the single socket of uvicorn --workers, gunicorn-asgi and granian: the kernel, not "
            "nginx, picks the process, and a busy loop takes requests an idle one could serve; "
            f"{_ASGI_MEASURED} {_asgi_layouts(per_worker=False)}",
        )
    else:
        d.put(
            "sockets",
            workers,
            "one per worker (uWSGI map-socket while a process has threads, see socket_layout / "
            "one gunicorn per socket) behind nginx least_conn: "
            "a shared socket lets a busy process take requests an idle one could serve; bench "
            "balance (2 cores, requests holding the GIL half the time) measured "
            f"{_span(BALANCE_AT_CORES_RPS)} x a shared socket's req/s (plain or thunder-lock) with "
            f"{_span(BALANCE_AT_CORES_P99)} x lower p99 at concurrency = cores, and no clear "
            "difference from 2 x cores up, where every layout spends the same CPU per request",
        )
        d.put(
            "shared_socket",
            shared,
            "the single socket of gen gunicorn's layout, and of uWSGI's for single-threaded "
            "processes (socket_layout)",
        )
    _layout(w, d)
    _gunicorn_worker(w, d, d.get_int("threads"))

    unix = w.socket_dir is not None
    mode = f"{SOCKET_MODE:o}" if unix else None
    umask = f"0o{SOCKET_UMASK:03o}" if unix else None
    owner = (
        f"owned by {w.nginx_user}:{w.nginx_user}"
        if w.nginx_user
        else "nginx must share the server's user or group"
    )
    d.put(
        "socket_mode",
        mode,
        f"unix sockets {mode}, {owner}: no other local user may bypass nginx"
        if unix
        else "TCP sockets on bind_host: no file mode",
    )
    d.put(
        "socket_umask",
        umask,
        f"gunicorn's umask {umask}: no rights for other users on its sockets (its default "
        "0 leaves them 0777)"
        if unix
        else "TCP sockets: gunicorn's umask is left alone",
    )
