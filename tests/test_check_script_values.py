"""A launch script's own variable set once from the environment with its default
(`workers=${GUNICORN_WORKERS:-1}`) decides a test on it (`[ $workers -eq 1 ]`) where the
files say what the container's environment holds; a name set twice, in a branch or read
before it is set stays undecided. Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.shell_values import numeric_test, own_values
from tests.folder_support import chains, check_folder, write

SERVER_MAIN = """#!/bin/bash

gunicorn_workers=${GUNICORN_WORKERS:-1}

# if 1 worker, stay with uvicorn
if [ $gunicorn_workers -eq 1 ]; then
    uvicorn main:app --host 0.0.0.0 --port "$PORT"
else
    port=${PORT:-8080}
    gunicorn main:app --workers $gunicorn_workers -k uvicorn.workers.UvicornWorker --bind 0.0.0.0:$port
fi
"""

DOCKERFILE = 'FROM python:3.12\nENV PORT=8080\nCOPY main.sh /main.sh\nENTRYPOINT ["/main.sh"]\n'


def test_the_scripts_default_decides_the_branch_when_no_file_sets_the_variable(
    tmp_path: Path,
) -> None:
    """No file sets GUNICORN_WORKERS: the script's default 1 makes `[ $w -eq 1 ]` true, so
    the image starts uvicorn (line 7), not the last branch's gunicorn with a server-chosen
    note; a compose service setting GUNICORN_WORKERS=4 runs gunicorn with 4 workers."""
    root = write(tmp_path, {"Dockerfile": DOCKERFILE, "main.sh": SERVER_MAIN})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "main.sh:7"], "uvicorn", 1)]
    assert not [n for n in result.notes if n.kind == "server-chosen"]
    write(
        root,
        {
            "compose.yaml": (
                'services:\n  api:\n    build: .\n    environment:\n      GUNICORN_WORKERS: "4"\n'
            )
        },
    )
    assert (["compose.yaml:2", "Dockerfile:4", "main.sh:10"], "gunicorn", 4) in chains(
        check_folder(root), root
    )


@pytest.mark.parametrize(
    "assignment",
    [
        "gunicorn_workers=${GUNICORN_WORKERS:-1}\ngunicorn_workers=${OTHER:-2}",  # set twice
        "if [ -f /etc/x ]; then\n    gunicorn_workers=${GUNICORN_WORKERS:-1}\nfi",  # in a branch
        'echo "$gunicorn_workers"\ngunicorn_workers=${GUNICORN_WORKERS:-1}',  # read before
        "gunicorn_workers=$(nproc)",  # a command's output
    ],
)
def test_a_value_the_files_do_not_fix_leaves_the_branch_undecided(
    tmp_path: Path, assignment: str
) -> None:
    """Only a name set once, outside branches, to a word or `${ENV:-word}` and not read
    before is known: otherwise both branches are read as before (the last server line,
    with a server-chosen note)."""
    script = SERVER_MAIN.replace("gunicorn_workers=${GUNICORN_WORKERS:-1}", assignment)
    root = write(tmp_path, {"Dockerfile": DOCKERFILE, "main.sh": script})
    result = check_folder(root)
    assert [c[1] for c in chains(result, root)] == ["gunicorn"]
    assert [n.kind for n in result.notes if n.kind == "server-chosen"] == ["server-chosen"]


def test_own_values_take_the_environment_then_the_default() -> None:
    """`${ENV:-word}`: ENV's value where it is set and not empty, else the word; a plain
    word as written."""
    lines = [(1, ["a=${A:-1}"]), (2, ["b=${B:-2}"]), (3, ["c=${C-3}"]), (4, ["d=web"])]
    env = {"A": "7", "B": "", "C": ""}
    assert own_values(lines, [], env, {"a", "b", "c", "d"}) == {
        "a": "7",
        "b": "2",
        "c": "",
        "d": "web",
    }


@pytest.mark.parametrize(
    ("words", "result"),
    [
        (["[", "$w", "-eq", "1", "]"], True),
        (["[[", "$w", "-gt", "1", "]]"], False),
        (["test", "2", "-ge", "$w"], True),
        (["[", "$w", "-ne", "$unknown", "]"], None),
        (["[", "$w", "=", "1", "]"], None),
    ],
)
def test_numeric_tests_compare_known_integers(words: list[str], result: bool | None) -> None:
    """`-eq -ne -lt -le -gt -ge` between known integers are decided; anything else is not."""
    assert numeric_test(words, {"$w": "1"}) is result
