"""Recipe programs cannot drift: every ```python NAME block is saved and every `$ python NAME` rerun.

A recipe shows a program in a block whose info string names its file (```python fetch.py) and
then, in a console block, `$ python fetch.py` with the output it prints. This test writes the
page's programs into a temporary directory, runs each shown command there and compares the
output, as tests/test_docs.py does for `servertune` commands. Programs that call AWS run against
a real moto server on 127.0.0.1 with fake credentials (AWS_ENDPOINT_URL), never AWS itself.
Regenerate on purpose with SERVERTUNE_REGEN_DOCS=1, then read `git diff docs`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servertune.bench.harness.moto import FAKE_CREDENTIALS
from tests.support import REPO

DOCS = REPO / "docs"
REGENERATE = os.environ.get("SERVERTUNE_REGEN_DOCS") == "1"
RUN_TIMEOUT_S = 120


def _programs(text: str) -> dict[str, str]:
    return dict(re.findall(r"```python ([\w.-]+\.py)\n(.*?)```", text, re.S))


def _runs(text: str) -> list[tuple[str, str]]:
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        command: str | None = None
        output: list[str] = []
        for line in [*block.splitlines(), "$ "]:
            if line.startswith("$ "):
                if command and command.startswith("python "):
                    found.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
    return found


def _examples() -> list[tuple[str, str, str]]:
    examples = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        programs = _programs(text)
        for command, output in _runs(text):
            if shlex.split(command)[1] in programs:
                examples.append((str(page.relative_to(REPO)), command, output))
    return examples


EXAMPLES = _examples()


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """A moto server for the programs that call S3."""
    from servertune.bench.harness.moto import start_moto
    from servertune.bench.harness.supervision import Stack

    with Stack("docs-moto") as stack:
        _, endpoint = start_moto(stack)
        yield endpoint


def test_recipes_show_programs() -> None:
    """The two client recipes do show runnable programs (an empty list would pass vacuously)."""
    pages = {page for page, _, _ in EXAMPLES}
    assert {"docs/recipes/async-http-clients.md", "docs/recipes/aws-from-asyncio.md"} <= pages


@pytest.mark.parametrize(
    ("page", "command", "expected"), EXAMPLES, ids=[f"{p}:{c}" for p, c, _ in EXAMPLES]
)
def test_shown_program_prints_shown_output(
    page: str, command: str, expected: str, tmp_path: Path, moto_endpoint: str
) -> None:
    """Running the page's program prints exactly what the page shows (stdout then stderr)."""
    for name, code in _programs((REPO / page).read_text()).items():
        (tmp_path / name).write_text(code)
    env = {**os.environ, **FAKE_CREDENTIALS, "AWS_ENDPOINT_URL": moto_endpoint}
    result = subprocess.run(
        [sys.executable, *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True,
        text=True, timeout=RUN_TIMEOUT_S, check=False, env=env,
    )  # fmt: skip
    actual = (result.stdout + result.stderr).rstrip("\n")
    if REGENERATE and actual != expected.rstrip("\n"):
        path = REPO / page
        shown = f"$ {command}\n{expected}".rstrip("\n")
        assert path.read_text().count(shown) == 1, f"cannot locate the example in {page}"
        path.write_text(path.read_text().replace(shown, f"$ {command}\n{actual}"))
        return
    assert actual == expected.rstrip("\n"), page
