"""What the servertune.live tests share: a cgroup tree the test controls, the workers a server
runs, and a bounded load that counts failed requests."""

from __future__ import annotations

import http.client
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from servertune.bench.harness.cgroups import PERIOD_US, ChildCgroup
from servertune.live.cgroup import CgroupReader


class CgroupTree:
    """A cgroup whose CPU limit the test sets: a real child cgroup, or a directory of files."""

    kind: str
    directory: Path

    def set_cores(self, cores: float) -> None:
        raise NotImplementedError

    def reader(self) -> CgroupReader:
        raise NotImplementedError


class RealCgroup(CgroupTree):
    """A real child cgroup: `servertune.bench.harness.cgroups.ChildCgroup`."""

    def __init__(self, child: ChildCgroup) -> None:
        self.child = child
        self.directory, self.mount = child.directory, child.mount
        self.kind = f"real cgroup {child.version}"

    def set_cores(self, cores: float) -> None:
        self.child.set_cores(cores)

    def reader(self) -> CgroupReader:
        return self.child.reader()


class FileCgroup(CgroupTree):
    """A directory holding cgroup v2's files, rewritten atomically (write, then rename)."""

    kind = "directory of files"

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._write("cpuset.cpus.effective", "0-1\n")

    def _write(self, name: str, text: str) -> None:
        temporary = self.directory / f".{name}.tmp"
        temporary.write_text(text)
        temporary.replace(self.directory / name)

    def set_cores(self, cores: float) -> None:
        self._write("cpu.max", f"{int(cores * PERIOD_US)} {PERIOD_US}\n")

    def reader(self) -> CgroupReader:
        return CgroupReader(self.directory)


@contextmanager
def real_cgroup() -> Iterator[RealCgroup]:
    """A real child cgroup (the benchmarks' own), removed at the end."""
    with ChildCgroup.create() as tree:
        yield RealCgroup(tree)


def children(pid: int, needle: str = "") -> list[int]:
    """The child processes of `pid` whose command line contains `needle`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == pid and needle in cmdline:
            found.append(int(entry))
    return found


@dataclass
class Load:
    """Requests one after another on fresh connections, bounded in count and time, until
    stopped; counts answers and failures (anything but a 200)."""

    port: int
    max_requests: int = 50_000
    max_seconds: float = 90.0
    #: Between two requests: without it a quiet machine spends the whole count within seconds
    #: (a trivial app answers thousands a second) and the load stops before the test does.
    pause_s: float = 0.002
    ok: int = 0
    #: (phase, what failed): the phase is what the test was doing (`phase` when it failed).
    failures: list[tuple[str, str]] = field(default_factory=list)
    phase: str = "start"
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        for _ in range(self.max_requests):
            if self._stop.is_set() or time.monotonic() > deadline:
                return
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                connection.request("GET", "/")
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    self.ok += 1
                else:
                    self.failures.append((self.phase, f"HTTP {response.status}"))
            except (OSError, http.client.HTTPException) as exc:
                self.failures.append((self.phase, type(exc).__name__))
            finally:
                connection.close()
            self._stop.wait(self.pause_s)

    def __enter__(self) -> Load:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=15)


CHANGE_LINE = re.compile(
    r"servertune\.live: CPU limit (\S+) -> (\S+) cores .*: workers (\d+) -> (\d+)"
)


def changes(log: Path) -> list[tuple[str, str, int, int]]:
    """The change lines in a server's log: (old cores, new cores, old workers, new workers)."""
    text = log.read_text(errors="replace")
    return [(m[1], m[2], int(m[3]), int(m[4])) for m in CHANGE_LINE.finditer(text)]


def wait_until(check: Callable[[], object], deadline_s: float, what: str) -> float:
    """Poll `check()` until true; the seconds it took. Fails with `what` past the deadline."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > deadline_s:
            raise AssertionError(f"{what}: not within {deadline_s:g} s")
        time.sleep(0.05)
    return time.monotonic() - start


#: The hysteresis window in the tests: long enough against a busy 2-core host's scheduling
#: delays (readings every 0.1 s), short enough to keep each test file near 10 s.
WINDOW_S = 1.5
INTERVAL_S = 0.1


def follow_2_1_2_then_flap(
    tree: CgroupTree, workers: Callable[[], int], log: Path, port: int
) -> Load:
    """Under a bounded load: 2 -> 1 -> 2 cores, each followed only after the window; then a
    limit flapping between 1 and 2 faster than the window, which must change nothing."""
    wait_until(lambda: workers() == 2, 30, "2 workers at start")
    with Load(port) as load:
        wait_until(lambda: load.ok >= 20, 15, "the load's first answers")
        for cores in (1, 2):
            seen = len(changes(log))
            load.phase = f"{3 - cores} -> {cores} cores"
            tree.set_cores(cores)
            took = wait_until(
                lambda c=cores, s=seen: workers() == c and len(changes(log)) == s + 1,  # type: ignore[misc]
                WINDOW_S + 20,
                f"workers following {cores} cores",
            )
            assert took >= WINDOW_S, f"moved to {cores} workers {took:.2f} s after the change"
        load.phase = "flapping"
        flapping_until = time.monotonic() + 2 * WINDOW_S
        cores = 1
        while time.monotonic() < flapping_until:
            tree.set_cores(cores)
            time.sleep(WINDOW_S / 6)  # the flapping itself: held for a sixth of the window
            cores = 3 - cores
        tree.set_cores(2)
        answered = load.ok
        wait_until(lambda: load.ok >= answered + 20, 15, "answers after the flapping")
    assert changes(log) == [("2", "1", 2, 1), ("1", "2", 1, 2)], log.read_text()[-3000:]
    assert workers() == 2
    return load
