"""Docs cannot drift: the reference page is regenerated from the model, and every shown `servertune` command is rerun.

Every recipe (docs/recipes/*.md), and any page that declares `<!-- docs-test: session -->`, is
run as a reader would: its console commands in order, in one fresh folder outside the
repository, through bash, and each one's shown output is compared (issue 47: checked command by
command, a recipe hid a later step overwriting an earlier one's file). `<!-- docs-test: root
/tmp/demo -->` maps a page's absolute folder onto the fresh one; `<!-- docs-test: ports 8080
9001 -->` runs the page's server commands on free ports in place of those, and the run then
fails if the page's own stop commands leave a process behind. Commands that start servers,
time things or take minutes (SESSION_SKIPPED) are shown as run, not rerun; a file such a command
wrote and the page shows with `$ cat FILE` is recreated from the shown text,
`<!-- docs-test: file NAME from PATH -->` copies a file or folder of the repository into it,
and `<!-- docs-test: write NAME -->` above a code block writes the block as NAME (an app the
page shows, so the page imports only what it creates).

After a reviewed change of output, refresh the pages on purpose with
`SERVERTUNE_REGEN_DOCS=1 python -m pytest tests/test_docs.py`, then read `git diff docs`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from servertune.reference import workload_reference

from .support import REPO

DOCS = REPO / "docs"
REGENERATE = os.environ.get("SERVERTUNE_REGEN_DOCS") == "1"
#: Commands whose output depends on time or that serve: shown as run, not re-checked. A command
#: with `--out` is rerun too (issue 33: exempt, the `gen all --out` example drifted), writing
#: into the test's own directory (`_out_inside`).
NOT_RECHECKED = ("bench", "measure")


#: In a session page: commands shown as run but not rerun (servers, load, timing, minutes).
SESSION_SKIPPED = ("servertune bench", "servertune measure", "flock ", "uwsgi ", "nginx ", "wrk ")
SESSION_MARK = "<!-- docs-test: session -->"


def _reads_a_log(command: str) -> bool:
    """`servertune measure --log`: reads a file shown beside the page, no app, no clock, so it
    is rerun like `gen` and `check`."""
    return command.startswith("servertune measure ") and " --log " in command


def _session_pages() -> list[Path]:
    return [page for page in sorted(DOCS.rglob("*.md")) if SESSION_MARK in page.read_text()]


def _commands(text: str) -> list[tuple[str, str]]:
    """(command, shown output) for every `$ ` line of the console blocks of a page, in order.

    A command continued with a trailing backslash takes its next lines.
    """
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        command: str | None = None
        output: list[str] = []
        continued = False
        for line in [*block.splitlines(), "$ "]:
            if continued and command is not None:
                command += "\n" + line
                continued = line.endswith("\\")
            elif line.startswith("$ "):
                if command:
                    found.append((command, "\n".join(output)))
                command, output = line[2:], []
                continued = line.endswith("\\")
            else:
                output.append(line)
    return found


def _examples() -> list[tuple[str, str, str]]:
    """(page, command, expected output) for every `$ servertune ...` line in a console block."""
    found = []
    sessions = {*_session_pages(), *(DOCS / "recipes").glob("*.md")}
    for page in sorted(DOCS.rglob("*.md")):
        if page in sessions:
            continue  # run as a whole by test_page_runs_in_order_in_a_fresh_folder
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
            command: str | None = None
            output: list[str] = []
            for line in [*block.splitlines(), "$ "]:
                if line.startswith("$ "):
                    if (
                        command
                        and command.startswith("servertune ")
                        and not any(n in command for n in NOT_RECHECKED)
                    ):
                        found.append((str(page.relative_to(REPO)), command, "\n".join(output)))
                    command, output = line[2:], []
                else:
                    output.append(line)
    return found


EXAMPLES = _examples()


def test_reference_page_is_generated_from_the_model() -> None:
    """docs/reference.md equals `python -m servertune.reference` (regenerate it after changing a field)."""
    assert (DOCS / "reference.md").read_text() == workload_reference()


def test_docs_show_servertune_commands() -> None:
    """The docs do show commands (a parser that finds none would make the next test vacuous)."""
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize(
    ("page", "command", "expected"), EXAMPLES, ids=[f"{p}:{c[:40]}" for p, c, _ in EXAMPLES]
)
def test_shown_command_prints_shown_output(
    page: str, command: str, expected: str, tmp_path: Path
) -> None:
    """Running the command prints exactly what the page shows (stdout then stderr)."""
    argv = [sys.executable, "-m", "servertune", *_out_inside(shlex.split(command)[1:], tmp_path)]
    # `check` reads the config files shown beside the page, by paths relative to it.
    cwd = (REPO / page).parent if argv[3:4] == ["check"] else tmp_path
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "COLUMNS": "100"},
    )  # fmt: skip
    actual = (result.stdout + result.stderr).rstrip("\n").replace(str(tmp_path), "")
    if REGENERATE and actual != expected.rstrip("\n"):
        path = REPO / page
        shown = f"$ {command}\n{expected}".rstrip("\n")
        assert path.read_text().count(shown) == 1, f"cannot locate the example in {page}"
        path.write_text(path.read_text().replace(shown, f"$ {command}\n{actual}"))
        return
    assert actual == expected.rstrip("\n"), page


def _out_inside(args: list[str], root: Path) -> list[str]:
    """`args` with an absolute `--out DIR` moved under `root` (`/tmp/demo/conf` becomes
    `root/tmp/demo/conf`): a shown command never writes outside the test's directory, and its
    output reads as shown once `root` is taken out of it. A relative one already writes there."""
    moved = list(args)
    for i, arg in enumerate(moved[:-1]):
        if arg == "--out" and moved[i + 1].startswith("/"):
            moved[i + 1] = str(root) + moved[i + 1]
    assert not any(a.startswith("--out=") for a in moved), "write `--out DIR`, not `--out=DIR`"
    return moved


def test_an_absolute_out_is_moved_inside_the_test_directory(tmp_path: Path) -> None:
    """The docs test never writes where a page's `--out` points outside its directory."""
    args = ["gen", "all", "--out", "/tmp/demo/conf"]
    assert _out_inside(args, tmp_path) == ["gen", "all", "--out", f"{tmp_path}/tmp/demo/conf"]
    assert _out_inside(["gen", "all", "--out", "deploy/"], tmp_path)[-1] == "deploy/"


def test_commands_with_out_are_rerun() -> None:
    """Every shown `servertune gen ... --out` is among the commands the docs test reruns (alone,
    or in its page's run)."""
    shown = {c for p, c, _ in EXAMPLES}
    seen = 0
    for page in sorted(DOCS.rglob("*.md")):
        for command, _ in _commands(page.read_text()):
            if command.startswith("servertune gen") and "--out" in command:
                seen += 1
                assert command in shown or (
                    page in RUN_PAGES and not _skipped_in_a_run(command, serves=False)
                ), (page, command)
    assert seen >= 3


def test_relative_links_in_docs_resolve() -> None:
    """Every relative link in README.md and docs/ points at a file that exists."""
    broken = []
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if (
                not target.startswith(("http://", "https://", "mailto:"))
                and not (page.parent / target).exists()
            ):
                broken.append(f"{page.relative_to(REPO)} -> {target}")
    assert broken == []


SESSIONS = _session_pages()


def _free_ports(wanted: list[int]) -> dict[int, int]:
    """A free port for each port a page names, consecutive where the page's are (a base port and
    the ones `gen` derives from it): bind port 0, read it, close, then check the run is free."""
    mapping: dict[int, int] = {}
    runs: list[list[int]] = []
    for port in sorted(wanted):
        if runs and port == runs[-1][-1] + 1:
            runs[-1].append(port)
        else:
            runs.append([port])
    for run in runs:
        while True:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                base = probe.getsockname()[1]
            if base + len(run) < 65536 and all(_bindable(base + i) for i in range(len(run))):
                break
        mapping.update({port: base + i for i, port in enumerate(run)})
    return mapping


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait_for_ports(ports: Iterable[int], within_s: float = 20) -> None:
    """Return once every port has a listening socket (or `within_s` passed). Read from
    /proc/net/tcp, not by connecting: a connection would occupy a worker, and a graceful stop
    waits for it."""
    deadline = time.monotonic() + within_s
    wanted = set(ports)
    while wanted - _listening() and time.monotonic() < deadline:
        time.sleep(0.05)


def _wait_for_apps(folder: Path, within_s: float = 30) -> None:
    """Return once every uWSGI worker a log in `folder` names has loaded its app (or `within_s`
    passed). A reader stops the servers after a 10 s load; the run skips the load, and a SIGTERM
    while a lazy-apps worker still imports the app interrupts the import (KeyboardInterrupt,
    "need-app requested, destroying the instance"), after which the master waits out its 60 s
    mercy for the worker that did load: the run's stop must come after start-up, as the reader's."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and not all(
        _uwsgi_apps_ready(log.read_text(errors="replace")) for log in folder.rglob("*.log")
    ):
        time.sleep(0.05)


def _uwsgi_apps_ready(log: str) -> bool:
    """Whether a uWSGI log's last start has loaded the app in every worker it spawned: once in
    the master before the workers fork, or (lazy-apps) once per worker after."""
    *_, before, after = ["", *log.split("spawned uWSGI master process")]
    ready = re.compile(r"app \d+ \(mountpoint=.*\) ready in")
    return bool(ready.search(before)) or len(ready.findall(after)) >= after.count(
        "spawned uWSGI worker"
    )


def _listening() -> set[int]:
    """The TCP ports something listens on (state 0A in /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":
                    found.add(int(fields[1].rsplit(":", 1)[1], 16))
    return found


def _swap(text: str, mapping: dict[str, str]) -> str:
    """`text` with each key replaced by its value, all at once (a port never becomes another)."""
    if not mapping:
        return text
    pattern = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    return re.sub(rf"(?<![\w.]){'(?:' + pattern + ')'}(?![\w])", lambda m: mapping[m[0]], text)


def _processes_under(folder: Path) -> list[int]:
    """Processes whose working directory or command line is inside `folder`: the servers a page
    started there (uWSGI daemonized in its app directory, nginx with its prefix)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd == str(folder) or cwd.startswith(f"{folder}/") or str(folder) in cmdline:
            found.append(int(proc.name))
    return found


def _run_page(page: Path, folder: Path) -> tuple[int, list[tuple[str, str, str]], list[str]]:
    """Run a page's console commands in order in `folder` (fresh, outside the repository).

    Returns how many commands ran, the (command, shown, printed) that differ, and the processes
    the page left running (each then ended, so a failing page leaves nothing behind).
    """
    text = page.read_text()
    for name, source in re.findall(r"<!-- docs-test: file (\S+) from (\S+) -->", text):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / source).is_dir():
            shutil.copytree(REPO / source, folder / name)
        else:
            shutil.copy(REPO / source, folder / name)
    # A file the page itself shows (an app the reader saves): written from the block below it.
    for name, body in re.findall(r"<!-- docs-test: write (\S+) -->\n```\w*\n(.*?)```", text, re.S):
        (folder / name).write_text(body)
    # `<!-- docs-test: root /tmp/demo -->`: the page works in /tmp/demo; the run works in `folder`.
    roots = re.findall(r"<!-- docs-test: root (\S+) -->", text)
    # `<!-- docs-test: ports 8080 9001 9002 -->`: the page's servers listen there; the run starts
    # them on free ports instead, and prints the page's numbers back.
    ports = [
        int(p)
        for line in re.findall(r"<!-- docs-test: ports ([\d ]+) -->", text)
        for p in line.split()
    ]
    port_map = _free_ports(ports)
    to_run = {**{r: str(folder) for r in roots}, **{str(a): str(b) for a, b in port_map.items()}}
    to_shown = {str(b): str(a) for a, b in port_map.items()}
    serves = bool(port_map)
    env = {
        **os.environ,
        "COLUMNS": "100",
        # `servertune` in a shown command is this interpreter's, with this checkout's package.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        # Not the repository root: a page imports only what it creates (issue 33: its app was
        # tests.measure_apps, which no reader has).
        "PYTHONPATH": os.pathsep.join(
            [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    mismatches = []
    rerun = 0
    try:
        for command, shown in _commands(text):
            expected = shown.rstrip("\n")
            cat = re.fullmatch(r"cat (\S+)", command)
            if cat and not (folder / _swap(cat.group(1), to_run)).exists():
                (folder / cat.group(1)).write_text(expected + "\n")  # written by a skipped command
                continue
            # A log only a skipped server writes (`grep ready uwsgi.log`): shown as run.
            read = re.fullmatch(r"grep .* (\S+)", command)
            if read and not (folder / read.group(1)).exists() and not serves:
                continue
            if _skipped_in_a_run(command, serves):
                # A command shown as run must not replace a file the run goes on with: a reader
                # would go on with its file, the run with the old one (issue 47: a second
                # `measure --out workload.toml` made steps 2-3 print another plan).
                written = re.search(r"--out (\S+)", command)
                if written and (folder / written.group(1)).exists():
                    mismatches.append((command, expected, f"overwrites {written.group(1)}"))
                continue
            # A page works in its own folder: an absolute path elsewhere needs `docs-test: root`.
            assert not re.search(
                r"(--out|--pidfile2?|--json|>)\s+/",
                _swap(command, to_run).replace(str(folder), "."),
            ), f"{page.name}: {command!r} writes outside its folder"
            if serves and re.search(r"\bkill\b|--stop|-s (stop|quit)", command):
                # A reader stops servers after using them (the page's load ran meanwhile):
                # stop them once they answer, not while they are still starting.
                _wait_for_ports(port_map.values())
                _wait_for_apps(folder)
            result = subprocess.run(
                ["bash", "-c", _swap(command, to_run)], cwd=folder, capture_output=True, text=True,
                timeout=120, check=False, env=env,
            )  # fmt: skip
            rerun += 1
            actual = _swap((result.stdout + result.stderr).rstrip("\n"), to_shown)
            actual = actual.replace(str(folder), roots[0] if roots else "$PWD")
            if actual != expected:
                mismatches.append((command, expected, actual))
    finally:
        # A stopped server takes a moment to exit: wait for that, not for a fixed time. Bounded
        # by uWSGI's own wait for its workers on a stop (worker-reload-mercy, 60 s by default):
        # beside the full suite a uWSGI master was still exiting after 15 s.
        deadline = time.monotonic() + 60
        while (left := _processes_under(folder)) and time.monotonic() < deadline:
            time.sleep(0.1)
        named = []
        for pid in left:
            with contextlib.suppress(OSError):
                named.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80])
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return rerun, mismatches, [n.decode(errors="replace") for n in named]


#: Commands that need something a fresh folder cannot give in seconds: an app's measurement, a
#: benchmark, load, the network, a program test_docs_programs.py already reruns, another tool.
RUN_SKIPPED = (
    "servertune bench", "servertune measure", "flock ", "wrk ", "curl ", "python ", "ruff ",
    "cd ", "for i in",
)  # fmt: skip
#: Commands that start or stop servers: run when the page names its ports (`docs-test: ports`),
#: so a page that starts a server shows how to stop it, and the runner sees it stopped.
SERVER_COMMANDS = ("uwsgi ", "nginx ", "(cd deploy && uwsgi", "gunicorn ", "uvicorn ")


def _skipped_in_a_run(command: str, serves: bool) -> bool:
    bare = re.sub(r"^(\w+=\S+ )+", "", command)  # `SERVERTUNE_WORKER=0 gunicorn ...`
    if bare.startswith(RUN_SKIPPED) and not _reads_a_log(bare):
        return True
    return bare.startswith(SERVER_COMMANDS) and not serves


RECIPES = sorted((DOCS / "recipes").glob("*.md"))
#: The README's three questions are answered with real output too (issue 47), run as a recipe is.
README = REPO / "README.md"
RUN_PAGES = sorted({*RECIPES, *SESSIONS, README})


def test_session_pages_exist() -> None:
    """The worked example (measure, then generate) is a session page, so its steps are rerun."""
    assert DOCS / "recipes" / "measure-then-generate.md" in SESSIONS


def test_every_recipe_is_run_as_a_whole() -> None:
    """Every recipe is run in order in a fresh folder (issue 47: a recipe checked command by
    command, in the repository, hid an overwritten workload.toml and a kill that killed nothing)."""
    assert len(RECIPES) >= 10
    assert set(RECIPES) <= set(RUN_PAGES)
    assert not {page for page, _, _ in EXAMPLES} & {str(p.relative_to(REPO)) for p in RECIPES}


@pytest.mark.parametrize("page", RUN_PAGES, ids=[p.name for p in RUN_PAGES])
def test_page_runs_in_order_in_a_fresh_folder(
    page: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each command of a recipe (or session page) prints what the page shows, run in order in one
    fresh folder outside the repository, and the servers it starts are stopped by its own commands."""
    folder = tmp_path_factory.mktemp(page.stem)
    assert REPO not in folder.parents
    rerun, mismatches, left = _run_page(page, folder)
    if SESSION_MARK in page.read_text():
        assert rerun >= 3, "a session page reruns its generation steps"
    if REGENERATE and mismatches:
        text = page.read_text()
        for command, expected, actual in mismatches:
            shown = f"$ {command}\n{expected}".rstrip("\n")
            assert text.count(shown) == 1, f"cannot locate the example in {page}"
            text = text.replace(shown, f"$ {command}\n{actual}")
        page.write_text(text)
        return
    assert [(c, e) for c, e, _ in mismatches] == [(c, a) for c, _, a in mismatches]
    assert left == [], f"{page.name} leaves processes running after its own stop commands: {left}"


def test_a_page_that_serves_is_run_with_its_servers(tmp_path: Path) -> None:
    """A page that names its ports runs its server commands, on free ports, and prints the page's
    ports back; one that does not shows them as run."""
    assert not _skipped_in_a_run("(cd deploy && uwsgi --ini uwsgi.ini)", serves=True)
    assert _skipped_in_a_run("(cd deploy && uwsgi --ini uwsgi.ini)", serves=False)
    assert _skipped_in_a_run("SERVERTUNE_WORKER=0 gunicorn -c x.py", serves=False)
    assert _skipped_in_a_run("wrk -t1 http://127.0.0.1:8080/", serves=True)
    assert not _skipped_in_a_run("servertune measure --log a.log", serves=False)
    mapping = _free_ports([58139, 58140, 54379])
    assert mapping[58140] == mapping[58139] + 1
    assert _swap(
        "socket = 127.0.0.1:58139 and 58140, not 581390", {"58139": "1", "58140": "2"}
    ) == ("socket = 127.0.0.1:1 and 2, not 581390")


@pytest.mark.parametrize("page", SESSIONS, ids=[p.name for p in SESSIONS])
def test_a_session_page_measures_only_apps_a_reader_has(page: Path) -> None:
    """An app a page measures is one the page writes (`docs-test: write`) or a published
    package, never a module of this repository (measure-then-generate measured tests.measure_apps,
    which imports only from a checkout's root)."""
    text = page.read_text()
    written = set(re.findall(r"<!-- docs-test: write (\S+) -->", text))
    for command, _ in _commands(text):
        match = re.match(r"servertune measure ([\w.]+):", command)
        if match is None:
            continue
        module = match.group(1)
        top = module.split(".")[0]
        assert f"{top}.py" in written or not (
            (REPO / top).is_dir() or (REPO / f"{top}.py").exists()
        ), f"{page.name} measures {module}, a module of this repository"


def test_commands_are_read_with_their_continuation_lines() -> None:
    """A `\\`-continued command is one command; its output starts after its last line."""
    text = "```console\n$ servertune gen all \\\n    --out deploy\nwrote deploy/uwsgi.ini\n$ cat x\nhi\n```\n"
    assert _commands(text) == [
        ("servertune gen all \\\n    --out deploy", "wrote deploy/uwsgi.ini"),
        ("cat x", "hi"),
    ]


def test_readme_code_runs() -> None:
    """Every ```python block of README.md runs as shown (its asserts are the expected output)."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert blocks
    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block], capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
