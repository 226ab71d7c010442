"""Which arm of a launch script's `case "$VAR" in` runs when VAR is the container's: the
image's `ENV` (or a compose service's `environment`) decides it as it decides an `if` test,
also in a function that `main` calls, with arms of several quoted patterns
(`"prod"|"staging")`, one arm, not a pipeline), and when the script assigns VAR only from its
own value (`export MODE=${MODE:-prod}`) or in an arm that does not run. The pattern was seen
in emfoursolutions/trakbridge's docker/entrypoint.sh (`start_server` switching on
`$FLASK_ENV`); each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

ENTRYPOINT = """#!/bin/bash
export MODE=${MODE:-prod}

start_server() {
    case "$MODE" in
        "dev")
            exec flask run
            ;;
        "prod"|"staging")
            exec gunicorn -w 2 -b 0.0.0.0:8000 app:app
            ;;
        *)
            exec gunicorn -c fallback.py app:app
            ;;
    esac
}

main() {
    if [[ $# -eq 0 ]]; then
        start_server
    else
        exec "$@"
    fi
}

case "${1:-}" in
    "test")
        export MODE=testing
        exec pytest
        ;;
    *)
        main "$@"
        ;;
esac
"""


def _repository(tmp_path: Path, mode: str) -> Path:
    return write(
        tmp_path,
        {
            "Dockerfile": f"FROM python:3.12-slim\nENV MODE={mode}\nCOPY . /app\n"
            'ENTRYPOINT ["/app/entrypoint.sh"]\nCMD []\n',
            "entrypoint.sh": ENTRYPOINT,
            "fallback.py": 'bind = "0.0.0.0:9000"\nworkers = 5\n',
            "compose.yml": "services:\n  web:\n    build: .\n    environment:\n"
            f"      MODE: {mode}\n",
        },
    )


def test_a_case_on_the_images_env_in_a_function_main_calls_takes_its_arm(
    tmp_path: Path,
) -> None:
    """`ENV MODE=staging`, and the compose service's `MODE: staging`: for the service, the
    `"prod"|"staging")` arm runs (gunicorn, 2 workers), not the `*)` default's config; the
    `test)` arm's `export MODE=testing` does not run."""
    root = _repository(tmp_path, "staging")
    found = [
        (chain[-1], kind, workers)
        for chain, kind, workers in chains(check_folder(root), root)
        if chain[0].startswith("compose.yml")
    ]
    assert found == [("entrypoint.sh:10", "gunicorn", 2)], found
