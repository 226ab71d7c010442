"""What a launch script's own variables hold after a block whose branches the files do not
decide: an `if`/`elif`/`else` chain with a test check cannot decide (`[ -f /run/secrets/x ]`),
or a `case` on a word not known. Each branch that may run starts from the values before the
block; after it, a variable keeps a value only when every path that can run (each branch,
and running none when the block has no `else` or `*)` arm) leaves it that value. Otherwise
it is unresolved, never the value of the branch written last, and `NAME[if]` holds the line
of the block, for the note that says why (`unresolved_by_branches`).

A block inside a loop check does not unroll (`while [ $# -gt 0 ]; do case "$1" in ...`, an
option loop) is read as before, each branch's assignments in the order written: a pass may
run any branch, and its values (`CLI="$@"` after `--`) are what the loop is for."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["BlockValues", "unresolved_by_branches"]

#: The loops a script's lines may still hold (`for` over literal words is unrolled).
_LOOPS = frozenset({"while", "until", "for", "select"})
#: A `case` arm's pattern alone as the first word: `web)`, `web|api)`, `*)`.
_PATTERN = re.compile(r"\A\(?[^()\s]+\)\Z")


@dataclass
class _Block:
    """An `if` ... `fi` or `case` ... `esac` being read: the values before it, the line it
    starts on, whether the files decide which branch runs, and the values each branch read
    so far left; `closed` once an `else` / `*)` means some branch always runs."""

    kind: str
    before: dict[str, str]
    line: int
    undecided: bool
    paths: list[dict[str, str]] = field(default_factory=list)
    closed: bool = False
    started: bool = False


class BlockValues:
    """The blocks around the line being read, stepped line by line with the script's
    variables (`env`, changed in place)."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []

    def step(self, words: Sequence[str], first: int, decided: bool, env: dict[str, str]) -> None:
        """Before the line at `first` (its `words`) runs; `decided`: an `if` the files decide
        (only the branch they choose is read)."""
        head = words[0] if words else ""
        top = self.blocks[-1] if self.blocks else None
        looped = any(block.kind == "loop" for block in self.blocks)
        if head in _LOOPS:
            self.blocks.append(_Block("loop", {}, first, False))
        elif head == "if":
            self.blocks.append(_Block("if", dict(env), first, not (decided or looped)))
        elif head == "case" and words[-1:] == ["in"]:
            self.blocks.append(_Block("case", dict(env), first, not looped))
        elif top is None:
            return
        elif top.kind == "if" and head in ("elif", "else"):
            if top.undecided:
                _next_branch(top, env)
                top.closed = head == "else"
            if words[1:2] == ["if"]:  # `else if ...`: an `if` of its own
                self.blocks.append(_Block("if", dict(env), first, not (decided or looped)))
        elif top.kind == "case" and _PATTERN.match(head):
            if top.started and top.undecided:
                _next_branch(top, env)
            top.started = True
            top.closed = top.closed or "*" in head.lstrip("(").removesuffix(")").split("|")
        elif (top.kind, head) in (("if", "fi"), ("case", "esac"), ("loop", "done")):
            self.blocks.pop()
            if top.undecided:
                _merged(top, env)


def _next_branch(block: _Block, env: dict[str, str]) -> None:
    """The branch read so far ends: its values kept, the next starts from those before."""
    block.paths.append(dict(env))
    env.clear()
    env.update(block.before)


def _merged(block: _Block, env: dict[str, str]) -> None:
    """`env` after the block: each value every path leaves alike; the rest unresolved."""
    paths = [*block.paths, dict(env)] + ([] if block.closed else [block.before])
    keys = {k for path in paths for k in path if not k.endswith("[if]")}
    marks = {k: v for path in paths for k, v in path.items() if k.endswith("[if]")}
    env.clear()
    for key in keys:
        values = {path.get(key) for path in paths}
        value = values.pop() if len(values) == 1 else None
        if value is not None:
            env[key] = value
        else:
            marks[f"{key.partition('[')[0]}[if]"] = f"`{block.kind}` at line {block.line}"
    env.update({k: v for k, v in marks.items() if k.removesuffix("[if]") not in env})


def unresolved_by_branches(name: str, env: Mapping[str, str]) -> str | None:
    """Why `name` is not known when a block's paths set it differently: the block's line."""
    block = env.get(f"{name}[if]")
    if block is None:
        return None
    return f"that the branches of the {block} set differently (the files do not decide which runs)"
