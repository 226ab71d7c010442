"""Placeholders a start script fills in an nginx file before nginx reads it: `listen {PORT};`
(`sed -i "s/{PORT}/$PORT/g"`), `@PORT@` (configure-style), `${PORT}` (envsubst). Their values
are known only where nginx starts: the directive holding one is a coverage note and the rest
of the file is judged (checkov marks unresolved variables the same way), never a refusal.

`{NAME}` is no nginx syntax (a `{` opens a block, and a block holding one word and no `;` is a
syntax error to nginx), so it is masked before the file is tokenised and put back after.
"""

from __future__ import annotations

import re

__all__ = ["holds_placeholder", "masked", "unmasked"]

#: `{PORT}` not preceded by `$` (`${PORT}` is nginx's own braced variable syntax).
_BRACED = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Any placeholder a value may hold: `$NAME`, `${NAME}`, `{NAME}`, `@NAME@`.
_ANY = re.compile(r"\$\{?[A-Za-z_]\w*\}?|(?<!\$)\{[A-Za-z_]\w*\}|@[A-Za-z_]\w*@")
#: Private-use characters stand for the braces while crossplane's lexer reads the text.
_OPEN, _CLOSE = "\ue000", "\ue001"


def masked(text: str) -> str | None:
    """`text` with each `{NAME}` written so nginx's lexer reads it as part of a word; None
    when it holds none."""
    if not _BRACED.search(text):
        return None
    return _BRACED.sub(lambda m: f"{_OPEN}{m[1]}{_CLOSE}", text)


def unmasked(word: str) -> str:
    """A word of a masked text as the file writes it."""
    return word.replace(_OPEN, "{").replace(_CLOSE, "}")


def holds_placeholder(value: str) -> str | None:
    """The first placeholder `value` holds (`{PORT}`, `@PORT@`, `${PORT}`), None when none."""
    found = _ANY.search(value)
    return None if found is None else found[0]
