"""A quoted string that spans lines in a `sh -c` script (a compose `command: |` block) is one
word, as sh reads on to its closing quote: never "an unclosed quote" for a script `sh -n`
accepts. Seen in intuitem/ciso-assistant-community (a Caddyfile echoed by a compose command)
and IBM/mcp-context-forge (`python3 -c "` over many lines). Each repository is written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.commands import Word, shell_commands
from servertune.check.model import Location
from tests.folder_support import chains, check_folder, write


def test_a_double_quoted_string_over_lines_is_one_word_of_one_command() -> None:
    """`echo $URL "{` ... `}" > Caddyfile && caddy run`: two commands, the echoed block one
    word holding its newlines, each command at the line it begins on."""
    script = Word(
        'echo $URL "{\nreverse_proxy /* web:8000\n}" > Caddyfile && caddy run\nls',
        Location(Path("c.yml"), 10),
    )
    commands = shell_commands(script)
    assert [[w.text for w in c] for c in commands] == [
        ["echo", "$URL", "{\nreverse_proxy /* web:8000\n}"],
        ["caddy", "run"],
        ["ls"],
    ]
    assert [c[0].at.line for c in commands] == [10, 10, 13]


def test_compose_command_block_with_a_multiline_quote_is_read_without_error(tmp_path: Path) -> None:
    """A compose `command: |` running `sh -c 'echo "{` ... `}" > f && run'` and another
    service's `python3 -c "` over lines then `exec gunicorn`: no error (exit 0), and the
    gunicorn after the quoted program is read (3 workers)."""
    root = write(
        tmp_path / "repo",
        {
            "compose.yml": (
                "services:\n"
                "  proxy:\n"
                "    image: caddy:2\n"
                "    command: |\n"
                "      sh -c 'echo $$URL \"{\n"
                "      reverse_proxy /* web:8000\n"
                "      }\" > Caddyfile && caddy run'\n"
                "  web:\n"
                "    image: python:3.12-slim\n"
                "    entrypoint: ['sh', '-c']\n"
                "    command:\n"
                "      - |\n"
                '        python3 -c "\n'
                "        import time\n"
                "        print('ready')\n"
                '        "\n'
                "        exec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n"
            ),
        },
    )
    result = check_folder(root)
    assert not result.errors
    assert [(kind, workers) for _, kind, workers in chains(result, root)] == [("gunicorn", 3)]
