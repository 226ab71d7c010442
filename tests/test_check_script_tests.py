"""Which branch of a launch script's `if`/`elif` chain runs, when its tests read the
container's variables: tests joined by `&&`, `||` and `!` are decided in three-valued
logic; a variable no file sets is unset when the container's whole environment was read;
and when the files leave the chain undecided, the server read is the one that runs with
those variables unset, named as assumed. The pattern was seen in Dispatcharr's
docker/entrypoint.sh (`if [ "$ENV" = "dev" ] && [ "$DEBUG" != "true" ]; then ... elif`);
each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.graph import launches
from servertune.check.shell_values import condition_value
from tests.folder_support import chains, check_folder, write

DOCKERFILE = 'FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n'

#: A production arm first: the last-branch default would read the development server.
PRODUCTION_FIRST = """#!/bin/sh
if [ "$APP_ENV" != "dev" ] && [ "$APP_DEBUG" != "true" ]; then
    exec gunicorn --workers 4 app:app
else
    exec gunicorn --workers 1 --reload app:app
fi
"""


def _comparison(words: list[str]) -> bool | None:
    """`[ a = b ]` decided when neither side is a variable."""
    inner = words[1:-1]
    if len(inner) != 3 or any("$" in w for w in (inner[0], inner[2])):
        return None
    return (inner[0] == inner[2]) == (inner[1] == "=")


@pytest.mark.parametrize(
    ("condition", "value"),
    [
        ("[ a = b ] && [ $X = y ]", False),  # false && x
        ("[ $X = y ] && [ a = b ]", False),  # x && false
        ("[ a = a ] || [ $X = y ]", True),  # true || x
        ("[ $X = y ] || [ a = a ]", True),  # x || true
        ("[ a = a ] && [ $X = y ]", None),
        ("[ a = b ] || [ $X = y ]", None),
        ("! [ a = b ] && [ a = a ]", True),
        ("[ a = b ] && [ $X = y ] || [ a = a ]", True),  # left to right: (f && x) || t
        ("[[ a = b && $X = y ]]", False),
        ("[[ $X = y || a = a ]]", True),
        ("[[ ! a = b ]]", True),
        ("[ a = b -o a = a ]", True),
        ("[ $X = y -a a = b ]", False),
        ("[ a = a ] ; [ a = b ]", None),  # a list: not a test list
        ("grep -q x f && [ a = b ]", False),  # any command && false
        ("grep -q x f || [ a = b ]", None),
    ],
)
def test_conditions_are_read_in_three_valued_logic(condition: str, value: bool | None) -> None:
    """`false && x` is false and `true || x` is true whatever x is (a variable no file sets, a
    command); otherwise the list is undecided when an operand is; `!` flips a decided
    value; `[[ ]]` joins with `&&`/`||`/`!`, `[ ]` with `-a`/`-o`."""
    assert condition_value(condition.split(), _comparison) is value


def test_a_false_operand_decides_an_and_and_a_true_one_an_or(tmp_path: Path) -> None:
    """The image sets APP_ENV=aio and nothing sets OTHER: `[ "$APP_ENV" = dev ] && [
    "$OTHER" != true ]` is false and `elif [ "$APP_ENV" = aio ] || [ -f /etc/flag ]` true, so
    the `elif` branch's server runs (line 5), not the `else` one, and no branch is chosen."""
    script = """#!/bin/sh
if [ "$APP_ENV" = "dev" ] && [ "$OTHER" != "true" ]; then
    exec gunicorn --workers 1 app:app
elif [ "$APP_ENV" = "aio" ] || [ -f /etc/flag ]; then
    exec gunicorn --workers 4 app:app
else
    exec gunicorn --workers 2 app:app
fi
"""
    dockerfile = DOCKERFILE.replace("COPY", "ENV APP_ENV=aio\nCOPY")
    root = write(tmp_path, {"Dockerfile": dockerfile, "entrypoint.sh": script})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "entrypoint.sh:5"], "gunicorn", 4)]
    assert not [n for n in result.notes if n.kind == "server-chosen"]


def test_a_variable_no_file_sets_is_unset_where_the_whole_environment_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compose service built here whose environment is all in its file (APP_ENV=aio;
    APP_DEBUG set nowhere): APP_DEBUG is unset, so the first branch's server runs (line 3),
    decided, with no branch assumed and no server-chosen note."""
    monkeypatch.delenv("APP_DEBUG", raising=False)
    compose = "services:\n  web:\n    build: .\n    environment:\n      APP_ENV: aio\n"
    root = write(
        tmp_path,
        {"Dockerfile": DOCKERFILE, "entrypoint.sh": PRODUCTION_FIRST, "compose.yaml": compose},
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["compose.yaml:2", "Dockerfile:3", "entrypoint.sh:3"], "gunicorn", 4)
    ]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.app.assumed_branch is None
    assert not [n for n in result.notes if n.kind == "server-chosen"]


@pytest.mark.parametrize(
    "environment",
    [
        "    env_file: deploy.env\n",  # a deployment's file, not here
        "    environment:\n      APP_DEBUG: ${APP_DEBUG}\n",  # the deployment's shell's
        "    environment:\n      - APP_DEBUG\n",  # likewise, passed through
    ],
)
def test_a_variable_the_deployment_may_set_is_not_known_to_be_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, environment: str
) -> None:
    """A service whose environment is not all in the files (an env_file not here, a value
    from the shell that runs compose): APP_DEBUG may be set there, so the test is not decided
    by the files; the branch read is assumed, and the launch graph says so."""
    monkeypatch.delenv("APP_DEBUG", raising=False)
    compose = f"services:\n  web:\n    build: .\n{environment}"
    root = write(
        tmp_path,
        {"Dockerfile": DOCKERFILE, "entrypoint.sh": PRODUCTION_FIRST, "compose.yaml": compose},
    )
    result = check_folder(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.app.assumed_branch is not None
    assert launch.app.assumed_branch[0].line == 2


def test_an_undecided_chain_reads_the_server_that_runs_with_its_variables_unset(
    tmp_path: Path,
) -> None:
    """The image alone (a deployment may set anything): APP_ENV and APP_DEBUG set by no file
    leave the chain undecided; the server read is the one that runs when they are unset (line
    3, the production arm first), not the last branch's, and both the launch graph (branch
    assumed: line 2) and a server-chosen note say so."""
    root = write(tmp_path, {"Dockerfile": DOCKERFILE, "entrypoint.sh": PRODUCTION_FIRST})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:3", "entrypoint.sh:3"], "gunicorn", 4)]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert launch.app.assumed_branch is not None
    assert launch.app.assumed_branch[0].line == 2
    assert '[ "$APP_DEBUG" != "true" ]' in launch.app.assumed_branch[1]
    (chosen,) = [n for n in result.notes if n.kind == "server-chosen"]
    assert chosen.at.line == 3
    assert "no file here sets are unset" in chosen.message


@pytest.mark.parametrize(
    ("env_from", "assumed"),
    [
        ("", False),
        ("          envFrom:\n            - secretRef:\n                name: web\n", True),
    ],
)
def test_a_kubernetes_container_whose_environment_is_all_here_decides_too(
    tmp_path: Path, env_from: str, assumed: bool
) -> None:
    """A Deployment's container running the image built here (`docker build -t` in a
    Makefile) with only `env` values: APP_DEBUG is unset, the first branch decided; with an
    `envFrom` Secret (whose keys are not here) the branch is only assumed."""
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: web\n          image: acme/web:1.0\n"
        f"{env_from}          env:\n            - name: APP_ENV\n              value: aio\n"
    )
    root = write(
        tmp_path,
        {
            "Dockerfile": DOCKERFILE,
            "entrypoint.sh": PRODUCTION_FIRST,
            "Makefile": "build:\n\tdocker build -t acme/web:1.0 .\n",
            "deploy.yaml": manifest,
        },
    )
    result = check_folder(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.name for at in launch.chain] == ["deploy.yaml", "Dockerfile", "entrypoint.sh"]
    assert launch.app.workers.value == 4
    assert (launch.app.assumed_branch is not None) is assumed
