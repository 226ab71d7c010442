"""The files a Dockerfile's `RUN` writes: `echo TEXT > PATH` and `>> PATH`, `printf FORMAT >
PATH`, and a heredoc given to `cat > PATH <<EOF` / `cat <<EOF > PATH` / `tee PATH <<EOF`
(openpredict builds its entrypoint with `RUN echo "#!/bin/bash" > /entrypoint.sh && echo
"uvicorn ..." >> /entrypoint.sh`, then `CMD ["/entrypoint.sh"]`). The file is what was written,
at that path in the image, as a `COPY <<EOF` heredoc's is.

Words are the shell's: quotes removed, `\\` outside quotes escaping the next character, kept
inside double quotes before any character but `"`, `\\`, `$` and a backquote. `echo -e` and
`printf`'s format turn `\\n`, `\\t`, `\\\\` ... into their characters; a plain `echo` keeps them
as written, as bash and busybox do (Debian's dash would turn `\\n` into a line break: a text
written with a plain `echo` is read as bash writes it). `printf` with a directive other than
`%s` / `%%` writes a file not known here. A path relative to the WORKDIR is made absolute; a
path holding a `$` left after the builder's expansion, or a command substitution, is not known.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence

__all__ = ["run_writes"]

#: What ends one simple command in a RUN's text.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;"})
#: An escape `echo -e` and `printf` turn into its character.
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "v": "\v", "f": "\f"}
_ESCAPE = re.compile(r"\\(.)", re.S)


def run_writes(
    text: str, heredocs: Sequence[tuple[str, str]], workdir: str
) -> Iterator[tuple[str, str, bool]]:
    """(absolute path, text, whether it appends) for each file the RUN `text` (its variables
    expanded by the builder) writes, in order; `heredocs` are the RUN's (name, content). A
    `RUN <<EOF` script's own lines are read as the RUN's text."""
    documents = dict(heredocs)
    if re.fullmatch(r"\s*<<-?\s*['\"]?(\w+)['\"]?\s*", text) and len(heredocs) == 1:
        body = heredocs[0][1]
        if "<<" not in body:  # a script's own here-documents are not read here
            yield from run_writes(body.replace("\\\n", " "), (), workdir)
        return
    for line in text.split("\n"):
        for words, redirects in _commands(line):
            found = _written(words, redirects, documents)
            if found is None:
                continue
            path, content, append = found
            path = posixpath.normpath(posixpath.join(workdir, path))
            if "$" not in path and "`" not in path:
                yield path, content, append


def _commands(line: str) -> Iterator[tuple[list[str], list[tuple[str, str]]]]:
    """Each simple command of `line`: its words and its redirections (operator, word)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = ""
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _SEPARATORS:
            yield words, redirects
            words, redirects = [], []
        elif token in (">", ">>", "<<", "<<-", "<", ">|") and index + 1 < len(tokens):
            if words and words[-1].isdigit() and words[-1] != "1" and token.startswith(">"):
                words.pop()  # `2> /dev/null`: another stream than the text
                token = "other"
            redirects.append((token, tokens[index + 1]))
            index += 1
        elif token[:1] in "<>":
            redirects.append((token, ""))  # `>&2`, `&>`: not a file written here
        else:
            words.append(token)
        index += 1
    yield words, redirects


def _written(
    words: list[str], redirects: list[tuple[str, str]], documents: dict[str, str]
) -> tuple[str, str, bool] | None:
    """(path, text, append) one simple command writes; None when it writes no file known."""
    while words[:1] == ["sudo"]:
        words = words[1:]
    outputs = [(op, target) for op, target in redirects if op in (">", ">>", ">|")]
    document = next((documents.get(t) for op, t in redirects if op.startswith("<<")), None)
    if not words:
        return None
    if words[0] == "tee" and document is not None and not outputs:
        operands = [w for w in words[1:] if not w.startswith("-")]
        if len(operands) == 1:
            return operands[0], document, "-a" in words or "--append" in words
        return None
    if len(outputs) != 1:
        return None
    append, path = outputs[0][0] == ">>", outputs[0][1]
    if words == ["cat"] and document is not None:
        return path, document, append
    content = _echoed(words[1:]) if words[0] == "echo" else None
    if words[0] == "printf" and len(words) > 1:
        content = _printed(words[1], words[2:])
    return None if content is None else (path, content, append)


def _echoed(arguments: list[str]) -> str:
    """The text `echo` writes: `-n` leaves out the line end, `-e` turns escapes into
    characters (`-E`, the default, keeps them), as bash's echo does."""
    newline, escapes = True, False
    while arguments and re.fullmatch(r"-[neE]+", arguments[0]):
        flags = arguments.pop(0)[1:]
        newline = newline and "n" not in flags
        for flag in flags:
            escapes = flag == "e" if flag in "eE" else escapes
    text = " ".join(arguments)
    return (_unescaped(text) if escapes else text) + ("\n" if newline else "")


def _printed(format_: str, arguments: list[str]) -> str | None:
    """The text `printf FORMAT ARG...` writes, for a format whose only directives are `%s`
    and `%%` (the format is used again while arguments are left); None for another."""
    pieces = re.split(r"(%%|%s)", format_)
    if any("%" in piece for piece in pieces if piece not in ("%%", "%s")):
        return None
    count = pieces.count("%s")
    out, left = [], list(arguments)
    while True:
        for piece in pieces:
            if piece == "%s":
                out.append(left.pop(0) if left else "")
            else:
                out.append("%" if piece == "%%" else _unescaped(piece))
        if not left or count == 0:
            return "".join(out)


def _unescaped(text: str) -> str:
    """`text` with `\\n`, `\\t`, `\\\\` ... as their characters; another escape as written."""
    return _ESCAPE.sub(lambda found: _ESCAPES.get(found[1], found[0]), text)
