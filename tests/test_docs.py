"""Docs cannot drift: the reference page is regenerated from the model, and every shown `servertune` command is rerun.

A page whose commands build on each other (measure, then generate into a directory, then read
the files) declares `<!-- docs-test: session -->`: its console commands then run in order, in one
directory, through bash, and each one's shown output is compared. Commands that start servers,
time things or take minutes (SESSION_SKIPPED) are shown as run, not rerun; a file such a command
wrote and the page shows with `$ cat FILE` is recreated from the shown text,
`<!-- docs-test: file NAME from PATH -->` copies a file of the repository into the directory,
and `<!-- docs-test: write NAME -->` above a code block writes the block as NAME (an app the
page shows, so the page imports only what it creates).

After a reviewed change of output, refresh the pages on purpose with
`SERVERTUNE_REGEN_DOCS=1 python -m pytest tests/test_docs.py`, then read `git diff docs`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
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
    sessions = set(_session_pages())
    for page in sorted(DOCS.rglob("*.md")):
        if page in sessions:
            continue  # rerun in order by test_session_page_reruns_in_order
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
            command, output = None, []
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
    """Every shown `servertune gen ... --out` is among the commands the docs test reruns."""
    shown = {c for p, c, _ in EXAMPLES}
    assert any("--out" in c for c in shown)
    for page in sorted(DOCS.rglob("*.md")):
        if page in set(_session_pages()):
            continue
        for command, _ in _commands(page.read_text()):
            if command.startswith("servertune gen") and "--out" in command:
                assert command in shown, (page, command)


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


def test_session_pages_exist() -> None:
    """The worked example (measure, then generate) is a session page, so its steps are rerun."""
    assert DOCS / "recipes" / "measure-then-generate.md" in SESSIONS


@pytest.mark.parametrize("page", SESSIONS, ids=[p.name for p in SESSIONS])
def test_session_page_reruns_in_order(page: Path, tmp_path: Path) -> None:
    """Each command of a session page prints what the page shows, run in order in one directory."""
    text = page.read_text()
    for name, source in re.findall(r"<!-- docs-test: file (\S+) from (\S+) -->", text):
        shutil.copy(REPO / source, tmp_path / name)
    # A file the page itself shows (an app the reader saves): written from the block below it.
    for name, body in re.findall(r"<!-- docs-test: write (\S+) -->\n```\w*\n(.*?)```", text, re.S):
        (tmp_path / name).write_text(body)
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
    for command, shown in _commands(text):
        expected = shown.rstrip("\n")
        cat = re.fullmatch(r"cat (\S+)", command)
        if cat and not (tmp_path / cat.group(1)).exists():
            (tmp_path / cat.group(1)).write_text(expected + "\n")  # written by a skipped command
            continue
        if command.startswith(SESSION_SKIPPED) and not _reads_a_log(command):
            continue
        result = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True,
            timeout=120, check=False, env=env,
        )  # fmt: skip
        rerun += 1
        actual = (result.stdout + result.stderr).rstrip("\n").replace(str(tmp_path), "$PWD")
        if actual != expected:
            mismatches.append((command, expected, actual))
    assert rerun >= 3, "a session page reruns its generation steps"
    if REGENERATE and mismatches:
        for command, expected, actual in mismatches:
            shown = f"$ {command}\n{expected}".rstrip("\n")
            assert text.count(shown) == 1, f"cannot locate the example in {page}"
            text = text.replace(shown, f"$ {command}\n{actual}")
        page.write_text(text)
        return
    assert [(c, e) for c, e, _ in mismatches] == [(c, a) for c, _, a in mismatches]


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
