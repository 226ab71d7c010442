"""An entrypoint's `case "$1" in` arm that starts a server no file here chooses (only a
deployment's `docker run IMAGE web-async` would) is not followed, and a `not-followed` note
at its server line says so and names the server, rather than leaving it silently missing;
the arm the image's CMD chooses is the launch, and no arm becomes a launch of its own. Seen
in c3nav/c3nav's docker/entrypoint.sh (`web)` runs uWSGI, `web-async)` daphne); each fixture
is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DOCKERFILE = (
    "FROM python:3.12\nCOPY entrypoint.sh /usr/bin/entrypoint\n"
    'ENTRYPOINT ["/usr/bin/entrypoint"]\nCMD ["web"]\n'
)

ENTRYPOINT = """#!/bin/bash
set -e
case "$1" in
web)
  exec uwsgi --master --wsgi app.wsgi --processes 4 \\
    --http 0.0.0.0:8000
  ;;
web-async)
  exec daphne -b 0.0.0.0 -p 8000 app.asgi:application
  ;;
worker)
  exec celery -A app worker
  ;;
*)
  exec "$@"
  ;;
esac
"""


def test_an_arm_no_file_chooses_is_said_not_followed_until_one_does(tmp_path: Path) -> None:
    """CMD ["web"] chooses the `web)` arm (uWSGI, line 5): that is the one launch. The
    `web-async)` arm's daphne (line 9) is chosen by no file: one not-followed note at its
    line names the arm and daphne; the worker arm starts no server and `*)` runs any other
    argument, so neither is named. Once a compose service passes `web-async`, daphne is a
    launch and no arm is noted."""
    root = write(tmp_path, {"Dockerfile": DOCKERFILE, "entrypoint.sh": ENTRYPOINT})
    (root / "entrypoint.sh").chmod(0o755)
    result = check_folder(root)
    assert [(c, s) for c, s, _ in chains(result, root)] == [
        (["Dockerfile:3", "entrypoint.sh:5"], "uwsgi")
    ]
    unchosen = [
        (n.at.line, n.message)
        for n in result.notes
        if n.kind == "not-followed" and n.at.file.name == "entrypoint.sh"
    ]
    assert unchosen == [
        (
            9,
            (
                "not followed: `web-async` arm starts daphne, chosen only by an argument no "
                "file here passes"
            ),
        )
    ]

    # A compose service built from the image with `command: web-async` chooses the daphne
    # arm: it is a launch, and no note names an arm some file chooses.
    compose = "services:\n  app:\n    build: .\n  async:\n    build: .\n    command: web-async\n"
    write(root, {"compose.yaml": compose})
    result = check_folder(root)
    assert sorted(s for _, s, _ in chains(result, root)) == ["daphne", "uwsgi"]
    assert not [
        n for n in result.notes if n.kind == "not-followed" and n.at.file.name == "entrypoint.sh"
    ]


IF_ENTRYPOINT = """#!/bin/sh
if [ "$1" = "web" ]; then
    exec gunicorn --workers 4 app:app
elif [ "$1" = "web-async" ]; then
    exec daphne -b 0.0.0.0 -p 8000 app.asgi:application
else
    exec "$@"
fi
"""


def test_an_if_branch_on_the_first_argument_no_file_chooses_is_said_not_followed(
    tmp_path: Path,
) -> None:
    """The same with `if [ "$1" = "web" ] ... elif [ "$1" = "web-async" ]`: CMD ["web"] runs
    gunicorn (line 3); the daphne branch (line 5) is one not-followed note; the `else`
    branch's `exec "$@"` is not an arm."""
    root = write(tmp_path, {"Dockerfile": DOCKERFILE, "entrypoint.sh": IF_ENTRYPOINT})
    result = check_folder(root)
    assert [(c, s) for c, s, _ in chains(result, root)] == [
        (["Dockerfile:3", "entrypoint.sh:3"], "gunicorn")
    ]
    assert [
        (n.at.line, n.message.split(",")[0])
        for n in result.notes
        if n.kind == "not-followed" and n.at.file.name == "entrypoint.sh"
    ] == [(5, "not followed: `web-async` arm starts daphne")]


def test_a_line_of_many_bars_and_no_paren_in_a_case_is_read_at_once(tmp_path: Path) -> None:
    """Inside `case "$1" in`, a line of 30 words joined by `|` with no `)` (a usage comment)
    is no arm and is passed over at once, not by trying every grouping of its words; the
    `web|serve)` arm after it is still the one starting uWSGI."""
    import os
    import subprocess
    import sys

    names = "|".join(f"cmd{i}" for i in range(30))
    script = f'case "$1" in\n#{names}\nweb|serve)\n  exec uwsgi --http :8000\n  ;;\nesac\n'
    code = (
        "import sys; from pathlib import Path; "
        "from servertune.check.unchosen_arms import argument_arms; "
        "print(argument_arms(Path(sys.argv[1]), sys.stdin.read()))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "entrypoint.sh")],
        input=script,
        capture_output=True,
        text=True,
        timeout=10,  # a hang fails here
        env=env,
        check=True,
    )
    assert done.stdout.strip() == "[('web|serve', 4, 'uwsgi')]"
