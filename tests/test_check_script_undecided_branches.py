"""A launch script's variable set inside an `if` (or a `case` arm) whose test the files do not
decide keeps a value after the block only when every path that can run leaves it that value;
otherwise it is unresolved and the server it names is "not followed", with the block's line,
never the value of the branch written last. Seen in canonical/charmhub.io, whose entrypoint
sets `RUN_COMMAND="... --config observability.gunicorn.conf.py"` only when a variable no file
sets is there, and linked that config as loaded. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_DOCKERFILE = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nCMD ["/app/docker/start.sh"]\n'


def _repository(tmp_path: Path, script: str) -> Path:
    return write(
        tmp_path,
        {
            "Dockerfile": _DOCKERFILE,
            "docker/start.sh": script,
            "docker/otel.conf.py": "workers = 3\n",
        },
    )


def _not_followed(root: Path) -> list[str]:
    return [n.message for n in check_folder(root).notes if "not followed: runs" in n.message]


def test_a_command_set_only_in_an_undecided_if_is_not_followed(tmp_path: Path) -> None:
    """`[ -f /run/secrets/otel ]` on a path no file here holds is not decided: the script may
    run the command set before the `if` or the one inside it, so `exec $RUN_COMMAND` is not
    followed, the note naming the `if` and its line; no config is linked."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        'RUN_COMMAND="gunicorn -w 2 app:app"\n'
        "if [ -f /run/secrets/otel ]; then\n"
        '  RUN_COMMAND="gunicorn -w 2 --config docker/otel.conf.py app:app"\n'
        "fi\n"
        "exec $RUN_COMMAND\n",
    )
    assert chains(check_folder(root), root) == []
    (note,) = _not_followed(root)
    assert "`if` at line 3 set differently" in note


def test_a_value_every_branch_sets_alike_is_kept_and_one_they_set_apart_is_not(
    tmp_path: Path,
) -> None:
    """An `if`/`else` whose branches both set `CMD=gunicorn` (after `then` on the test's line,
    and on a line of the `else`) leaves that value whichever runs: the server is followed. The
    workers they set apart (2 or 4) are not known after `fi`: not the 4 written last."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        "if [ -f /run/secrets/otel ]; then CMD=gunicorn; W=2\n"
        "else\n"
        "  CMD=gunicorn\n"
        "  W=4\n"
        "fi\n"
        "exec $CMD -w $W app:app\n",
    )
    ((chain, server, workers),) = chains(check_folder(root), root)
    assert (chain, server) == (["Dockerfile:4", "docker/start.sh:7"], "gunicorn")
    assert workers != 4


def test_a_case_on_an_unknown_word_is_a_block_like_an_undecided_if(tmp_path: Path) -> None:
    """A `case` on a variable no file sets runs one arm of several: a command its arms set
    to different values is not known after `esac` as one value; each starting gunicorn, it
    is read as those lines written in the arms are, the last arm's (`*)`: 1 worker), the
    other named in a `server-chosen` note naming the `case`."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        'case "$(uname -m)" in\n'
        '  x86_64) RUN="gunicorn -w 4 app:app" ;;\n'
        '  *) RUN="gunicorn -w 1 app:app" ;;\n'
        "esac\n"
        "exec $RUN\n",
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:4", "docker/start.sh:6"], "gunicorn", 1)
    ]
    (note,) = _chosen(root)
    assert "`case` at line 2 set differently" in note
    assert "gunicorn -w 4 app:app" in note


def test_a_decided_if_still_gives_its_branch_value(tmp_path: Path) -> None:
    """An `if` the image's environment decides (`[ "$MODE" = "web" ]` with `ENV MODE=web`)
    runs only its chosen branch: the value set there, on the `then` line, is the command's."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nWORKDIR /app\nENV MODE=web\nCOPY . .\n"
                'CMD ["/app/docker/start.sh"]\n'
            ),
            "docker/start.sh": (
                "#!/bin/sh\n"
                "W=1\n"
                'if [ "$MODE" = "web" ]; then W=6\n'
                "fi\n"
                "exec gunicorn -w $W app:app\n"
            ),
        },
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:5", "docker/start.sh:5"], "gunicorn", 6)
    ]


_CHOOSER = (
    "#!/bin/bash\n"
    "{source}"
    'if [[ "$RUN_WORKER" == "yes" ]]; then\n'
    '    CMD="celery --app site worker"\n'
    'elif [[ "$RUN_MONITOR" == "yes" ]]; then\n'
    '    CMD="celery --app site flower"\n'
    "else\n"
    '    CMD="uvicorn site.asgi:application"\n'
    '    ARGS="--host 0.0.0.0 --port 8087"\n'
    '    CMD="$CMD $ARGS"\n'
    "fi\n"
    "$CMD\n"
)


def test_an_if_on_variables_nothing_sets_is_read_as_the_image_run_as_it_is(
    tmp_path: Path,
) -> None:
    """An `if`/`elif`/`else` whose tests read only variables neither the script nor the
    image's environment sets (`[[ "$RUN_WORKER" == "yes" ]]`) is decided as the shell decides
    it with them unset, which is what `docker run IMAGE` does: the `else` branch's `CMD` runs
    and its server is followed, with a note that names the variables taken as unset. A
    script that first sources a file not here (which may set them) is not so decided: `$CMD`
    is read as the commands its branches set are, the last that starts a server (uvicorn),
    the celery values named in a `server-chosen` note, none saying "taken as unset".
    Seen in thunderbird/thunderbird-accounts' scripts/entry.sh (`$CMD` after such a chain)."""
    root = _repository(tmp_path / "image", _CHOOSER.format(source=""))
    report = check_folder(root)
    assert [(c, s) for c, s, _ in chains(report, root)] == [
        (["Dockerfile:4", "docker/start.sh:11"], "uvicorn")
    ]
    (app,) = report.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8087"]
    (chosen,) = [n.message for n in report.notes if "taken as unset" in n.message]
    assert chosen.startswith("RUN_MONITOR, RUN_WORKER taken as unset")
    assert "the `if` at line 2" in chosen

    sourced = _repository(tmp_path / "sourced", _CHOOSER.format(source=". /etc/site.env\n"))
    assert [(c, s) for c, s, _ in chains(check_folder(sourced), sourced)] == [
        (["Dockerfile:4", "docker/start.sh:12"], "uvicorn")
    ]
    (note,) = _chosen(sourced)
    assert "celery --app site flower" in note
    assert "taken as unset" not in note


def test_a_sourced_virtualenv_sets_virtual_env(tmp_path: Path) -> None:
    """A script that sources a virtualenv's `bin/activate` (not here, but known) has
    VIRTUAL_ENV set by it: a test on it is not taken as unset, so a command its branches set
    apart is read as those commands in the branches are (the last, the `else`'s 4 workers),
    and no note says VIRTUAL_ENV was taken as unset. Seen in
    IBM/mcp-context-forge's run-gunicorn.sh (`if [[ -n "${VIRTUAL_ENV:-}" ]]`)."""
    root = _repository(
        tmp_path,
        "#!/bin/bash\n"
        ". /app/.venv/bin/activate\n"
        'if [[ -n "${VIRTUAL_ENV:-}" ]]; then\n'
        '    RUN="gunicorn -w 2 app:app"\n'
        "else\n"
        '    RUN="gunicorn -w 4 app:app"\n'
        "fi\n"
        "exec $RUN\n",
    )
    report = check_folder(root)
    assert not [n for n in report.notes if "taken as unset" in n.message]
    assert [w for _, _, w in chains(report, root)] == [4]


def test_a_chain_with_a_server_in_a_branch_left_out_is_read_as_before(tmp_path: Path) -> None:
    """Taking unset variables as unset never drops a server line: an `if [[ -n $USE_GUNICORN
    ]]` whose branch (left out with the variable unset) starts gunicorn with options it
    assigns first is read as before, its assignments kept for that line, and no note says
    the variable was taken as unset. Seen in allegroai/clearml-server's entrypoint.sh."""
    root = _repository(
        tmp_path,
        "#!/bin/bash\n"
        "if [[ -n $USE_GUNICORN ]]; then\n"
        '    W="-w 3"\n'
        "    gunicorn $W app:app\n"
        "else\n"
        "    python3 -m app.server\n"
        "fi\n",
    )
    report = check_folder(root)
    assert not [n for n in report.notes if "taken as unset" in n.message]
    assert [w for _, _, w in chains(report, root)] == [3]


def _chosen(root: Path) -> list[str]:
    return [n.message for n in check_folder(root).notes if n.kind == "server-chosen"]


def test_a_command_variable_the_branches_set_to_the_same_server_reads_the_last_path(
    tmp_path: Path,
) -> None:
    """A command held in a variable (seen in serge-chat/serge's deploy.sh: `cmd="hypercorn
    ... --bind 0.0.0.0:8008"`, other `--bind`s in an undecided `if`/`elif`, then `$cmd`) is
    read as the same lines written in the branches are: one server, the value of the last
    path (no branch ran: 2 workers), the others named in a `server-chosen` note."""
    root = _repository(
        tmp_path,
        "#!/bin/bash\n"
        'cmd="gunicorn -w 2 app:app"\n'
        "if [ -f /run/secrets/v6 ] && [ -f /run/secrets/v4 ]; then\n"
        '  cmd="gunicorn -w 4 app:app"\n'
        "elif [ -f /run/secrets/v6 ]; then\n"
        '  cmd="gunicorn -w 3 app:app"\n'
        "fi\n"
        "$cmd || {\n"
        "  echo failed\n"
        "  exit 1\n"
        "}\n",
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:4", "docker/start.sh:8"], "gunicorn", 2)
    ]
    (note,) = _chosen(root)
    assert "`if` at line 3" in note
    assert "gunicorn -w 4 app:app" in note
    assert "gunicorn -w 3 app:app" in note
    assert _not_followed(root) == []


def test_a_command_variable_some_branches_set_to_no_server_reads_the_server(
    tmp_path: Path,
) -> None:
    """When one path's value starts no server check reads (`celery worker`) and another's
    starts gunicorn, the server-starting value is read, as a script's server line among
    others is, the other value named in the note."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        "if [ -f /run/secrets/web ]; then\n"
        '  RUN="gunicorn -w 5 app:app"\n'
        "else\n"
        '  RUN="celery -A app worker"\n'
        "fi\n"
        "exec $RUN\n",
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:4", "docker/start.sh:7"], "gunicorn", 5)
    ]
    (note,) = _chosen(root)
    assert "celery -A app worker" in note


def test_options_the_branches_set_apart_are_left_out_of_set_dash_dash(tmp_path: Path) -> None:
    """`SSL_ARGS=""`, then the TLS flags in an `if` on a test the files do not decide, then
    `set -- uvicorn app:app ... $SSL_ARGS "$@"; exec "$@"` (roboflow/inference's
    run_uvicorn.sh): the options are left out with an `unresolved-variable` note, as an unknown
    `$VAR` on a server's own line is, and uvicorn is read; never the literal `$SSL_ARGS`
    handed to its parser, which refused it (exit 2)."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        'SSL_ARGS=""\n'
        'if is_truthy "$ENABLE_HTTPS"; then\n'
        '  SSL_ARGS="--ssl-certfile /certs/a.crt --ssl-keyfile /certs/a.key"\n'
        "fi\n"
        'set -- uvicorn app:app --port 9001 $SSL_ARGS "$@"\n'
        'exec "$@"\n',
    )
    result = check_folder(root)
    assert not result.errors, result.errors
    assert [a.kind for a in result.apps] == ["uvicorn"]
    assert any(n.kind == "unresolved-variable" and "'$SSL_ARGS'" in n.message for n in result.notes)


def test_a_parser_refusing_a_line_read_without_unknown_words_is_not_followed(
    tmp_path: Path,
) -> None:
    """`uvicorn optimade.server.${MAIN}:app` where `MAIN` is set apart by the branches
    (Materials-Consortia/optimade-python-tools): read without the unknown word, uvicorn's
    parser misses its APP; that is a value check cannot know, so a `not-followed` note says
    so and the run does not end in exit 2."""
    root = _repository(
        tmp_path,
        "#!/bin/sh\n"
        'if [ -f /run/secrets/index ]; then\n  MAIN="main_index"\nelse\n  MAIN="main"\nfi\n'
        "exec uvicorn optimade.server.${MAIN}:app --port 5000\n",
    )
    result = check_folder(root)
    assert not result.errors, result.errors
    assert any(
        n.kind == "not-followed" and "refused by its parser" in n.message for n in result.notes
    )


def test_the_default_idiom_gives_the_variable_its_default(tmp_path: Path) -> None:
    """`if [ -z "${MAIN}" ]; then MAIN="main"; fi` with nothing before it setting MAIN is the
    default idiom (`MAIN=${MAIN:-main}`): the image run as it is takes the branch, so
    `exec uvicorn optimade.server.${MAIN}:app` is read with MAIN=main (seen in
    Materials-Consortia/optimade-python-tools), not left unresolved."""
    root = _repository(
        tmp_path,
        '#!/bin/sh\nif [ -z "${MAIN}" ]; then\n  MAIN="main"\nfi\n'
        "exec uvicorn optimade.server.${MAIN}:app --port 5000\n",
    )
    result = check_folder(root)
    assert [a.kind for a in result.apps] == ["uvicorn"]
    assert not [n for n in result.notes if n.kind == "not-followed"], result.notes


def test_a_case_on_a_variable_nothing_sets_is_read_as_the_image_run_as_it_is(
    tmp_path: Path,
) -> None:
    """A `case "$NAME" in` whose NAME neither the script nor the image's environment sets is
    decided as an `if` on it is: with NAME unset, the arm matching "" runs (`*)` here), so
    the command it sets is the one read, with the note that names NAME taken as unset and
    the `case`'s line, not a `server-chosen` note that the files do not decide it; between
    two server lines, the arm matching "" (`""|gunicorn)`) is the one read, though it is not
    the last (the other arm is a launch `when APP_SERVER=uvicorn`). Seen in a role switch (`case "$SERVICE_ROLE" in worker) ... *) ...`) of
    entrypoint scripts (thunderbird/thunderbird-accounts has the `if` form)."""
    root = _repository(
        tmp_path / "value",
        "#!/bin/bash\n"
        'case "$SERVICE_ROLE" in\n'
        '  worker) CMD="celery --app site worker" ;;\n'
        '  *) CMD="uvicorn site.asgi:application --port 8087" ;;\n'
        "esac\n"
        "$CMD\n",
    )
    report = check_folder(root)
    assert [(c, s) for c, s, _ in chains(report, root)] == [
        (["Dockerfile:4", "docker/start.sh:6"], "uvicorn")
    ]
    (chosen,) = [n.message for n in report.notes if n.kind == "server-chosen"]
    assert chosen.startswith("SERVICE_ROLE taken as unset")
    assert "the `case` at line 2" in chosen

    servers = _repository(
        tmp_path / "servers",
        "#!/bin/sh\n"
        'case "$APP_SERVER" in\n'
        '  ""|gunicorn) exec gunicorn -w 3 app:app ;;\n'
        "  uvicorn) exec uvicorn app:app --workers 2 ;;\n"
        "esac\n",
    )
    # The `uvicorn)` arm, which a deployment picks by setting APP_SERVER, is a launch beside it.
    assert chains(check_folder(servers), servers) == [
        (["Dockerfile:4", "docker/start.sh:3"], "gunicorn", 3),
        (["Dockerfile:4", "docker/start.sh:4"], "uvicorn", 2),
    ]


def test_a_script_read_alone_takes_the_branch_its_own_default_chooses(tmp_path: Path) -> None:
    """A script no file here runs, read alone: `SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}`
    then `if [ $SERVER_TYPE = "gunicorn" ]; then exec gunicorn ...; elif ...; then exec
    granian ...` runs gunicorn where nothing sets AYON_SERVER_TYPE, not the last server line;
    granian's line is the launch `when AYON_SERVER_TYPE=granian`, beside it. (Seen in
    ynput/ayon-backend's start.sh, whose image is built in another repository.)"""
    root = write(
        tmp_path,
        {
            "start.sh": "#!/bin/bash\n"
            "SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}\n"
            '[ -z "$RUN_SERVER" ] && RUN_SERVER=true\n'
            'if [ $RUN_SERVER = "false" ]; then\n'
            "    exec python -m maintenance\n"
            'elif [ $SERVER_TYPE = "gunicorn" ]; then\n'
            "    exec gunicorn -k uvicorn.workers.UvicornWorker -b :5000 app:app\n"
            'elif [ $SERVER_TYPE = "granian" ]; then\n'
            "    exec granian --interface asgi --host 0.0.0.0 --port 5000 app:app\n"
            "fi\n",
        },
    )
    result = check_folder(root)
    found = [(chain[-1], kind) for chain, kind, _ in chains(result, root)]
    assert found == [("start.sh:7", "gunicorn"), ("start.sh:9", "granian")], found
    assert [a.when for a in result.apps] == [None, "AYON_SERVER_TYPE=granian"]
