"""A file a Dockerfile's RUN writes (`echo TEXT > PATH`, `>> PATH`, `printf`, a heredoc given
to `cat > PATH`) is the image's file at PATH with what was written, as a `COPY <<EOF` heredoc's
is: a CMD naming it runs the server it starts (seen in MaastrichtU-IDS/translator-openpredict,
`RUN echo "#!/bin/bash" > /entrypoint.sh && echo "uvicorn ..." >> /entrypoint.sh`)."""

from __future__ import annotations

from pathlib import Path

from servertune.check.run_writes import run_writes
from tests.folder_support import chains, check_folder, write


def test_entrypoint_echoed_by_a_run_is_followed(tmp_path: Path) -> None:
    """`RUN echo "#!/bin/bash" > /entrypoint.sh && echo "uvicorn ... --reload" >>
    /entrypoint.sh` then `CMD ["/entrypoint.sh"]`: the launch is the RUN's uvicorn line, its
    --reload judged, and never "not written by the Dockerfile"."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . .\n"
            'RUN echo "#!/bin/bash" > /entrypoint.sh && \\\n'
            '    echo "uvicorn app.main:app --host 0.0.0.0 --port 8808 --reload" >> '
            "/entrypoint.sh && \\\n    chmod +x /entrypoint.sh\n"
            'CMD [ "/entrypoint.sh" ]\n',
            "app/main.py": "app = object()\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["Dockerfile:5"], "uvicorn", 1)]
    assert not [n for n in result.notes if n.kind == "not-followed"]
    assert [f.rule for f in result.findings if f.rule == "reloader-in-production"]


def test_start_script_written_by_cat_heredoc_in_a_run_is_followed(tmp_path: Path) -> None:
    """`RUN cat > /start.sh <<EOF` with the script's lines, then `CMD ["sh", "/start.sh"]`:
    the gunicorn line of the here-document is the launch."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\n"
            "RUN cat > /start.sh <<EOF\n#!/bin/sh\nexec gunicorn -w 3 app:app\nEOF\n"
            'CMD ["sh", "/start.sh"]\n',
        },
    )
    assert chains(check_folder(tmp_path), tmp_path) == [(["Dockerfile:4"], "gunicorn", 3)]


def test_echo_and_printf_write_as_the_shell_does() -> None:
    """Plain `echo` keeps `\\n` as written (bash's echo); `echo -e`, `echo -n` and `printf`'s
    `%s` / escapes write what the shell writes; a relative path is under the WORKDIR; a
    `2>` redirection and a path with a `$` left write nothing known."""
    text = (
        "echo 'a\\nb' > one && echo -e 'a\\tb' >> one && echo -n x > /two 2>/dev/null; "
        "printf '%s=%s\\n' k v > /three; echo x > $HOME/four; echo y 2> /five"
    )
    assert list(run_writes(text, (), "/app")) == [
        ("/app/one", "a\\nb\n", False),
        ("/app/one", "a\tb\n", True),
        ("/two", "x", False),
        ("/three", "k=v\n", False),
    ]
