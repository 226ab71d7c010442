"""What a launch script's own variables hold after a block whose branches the files do not
decide: an `if`/`elif`/`else` chain with a test check cannot decide (`[ -f /run/secrets/x ]`),
or a `case` on a word not known. Each branch that may run starts from the values before the
block; after it, a variable keeps a value only when every path that can run (each branch,
and running none when the block has no `else` or `*)` arm) leaves it that value. Otherwise
it is unresolved, never the value of the branch written last, and `NAME[if]` holds the line
of the block, for the note that says why (`unresolved_by_branches`).

A block inside a loop check does not unroll (`while [ $# -gt 0 ]; do case "$1" in ...`, an
option loop) is read as before, each branch's assignments in the order written: a pass may
run any branch, and its values (`CLI="$@"` after `--`) are what the loop is for. So are an
array's appends (`cmd+=( --access-logfile - )` in each branch of an `if`): a command built in
an array keeps its server and config whichever branch ran."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["BlockValues", "alternatives", "unresolved_by_branches"]

#: What a name unresolved by a block's branches keeps: the block (`NAME[if]`) and, when every
#: path sets it, the values they give it (`NAME[or]`, at most `_ALTERNATIVES`), so a line that
#: starts the same server with each (`cmd="exec gunicorn ..."` or `su app -c '$cmd'`) is read.
_MARKS = ("[if]", "[or]")
_ALTERNATIVES = 4
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
    #: The name an `if [ -z "$X" ]` tests while nothing before it sets X: the default idiom.
    defaults: str | None = None


class BlockValues:
    """The blocks around the line being read, stepped line by line with the script's
    variables (`env`, changed in place)."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []

    def step(self, words: Sequence[str], first: int, decided: bool, env: dict[str, str]) -> None:
        """Before the line at `first` (its `words`) runs; `decided`: an `if` (or a `case`)
        the files decide (only the branch they choose is read)."""
        head = words[0] if words else ""
        top = self.blocks[-1] if self.blocks else None
        looped = any(block.kind == "loop" for block in self.blocks)
        if head in _LOOPS:
            self.blocks.append(_Block("loop", {}, first, False))
        elif head == "if":
            block = _Block("if", dict(env), first, not (decided or looped))
            block.defaults = _default_test(words, env)
            self.blocks.append(block)
        elif head == "case" and words[-1:] == ["in"]:
            self.blocks.append(_Block("case", dict(env), first, not (decided or looped)))
        elif top is None:
            return
        elif top.kind == "if" and head in ("elif", "else"):
            top.defaults = None  # a default idiom has one branch
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


#: `if [ -z "$X" ]` / `[[ -z ${X} ]]`: the test of the default idiom.
_EMPTY_TEST = re.compile(r'\A"?\$\{?([A-Za-z_]\w*)\}?"?\Z')


def _default_test(words: Sequence[str], env: Mapping[str, str]) -> str | None:
    """X when the `if` at `words` is `if [ -z "$X" ]; then` (or `[[ ... ]]`) and nothing
    before it sets X: with no other branch, `X=value` in it is X's default, as
    `X=${X:-value}` is (optimade-python-tools' run.sh sets MAIN so)."""
    test = [w for w in words[1:] if w not in (";", "then")]
    if len(test) != 4 or test[0] not in ("[", "[[") or test[1] != "-z":
        return None
    if test[3] != {"[": "]", "[[": "]]"}[test[0]]:
        return None
    match = _EMPTY_TEST.match(test[2])
    if match is None or match[1] in env:
        return None
    return match[1]


def _scalar(key: str) -> bool:
    """A plain variable's key, not an array's (`cmd[@]`) nor a value known in part (`X[~]`)."""
    return "[" not in key


def _next_branch(block: _Block, env: dict[str, str]) -> None:
    """The branch read so far ends: its values kept, the next starts from those before (an
    array and a value known in part go on as written, as before)."""
    block.paths.append({k: v for k, v in env.items() if _scalar(k)})
    for key in [k for k in env if _scalar(k)]:
        del env[key]
    env.update({k: v for k, v in block.before.items() if _scalar(k)})


def _merged(block: _Block, env: dict[str, str]) -> None:
    """`env` after the block: each plain value every path leaves alike, the rest unresolved;
    arrays and values known in part as the branches left them in order."""
    plain = [{k: v for k, v in path.items() if _scalar(k)} for path in (env, block.before)]
    paths = [*block.paths, plain[0]] + ([] if block.closed else [plain[1]])
    # In the environment's order, not a set's (which the hash seed changes): the names set
    # before the block where they were, then those its branches add. uWSGI reads its UWSGI_*
    # variables in that order (UWSGI_INI before UWSGI_PROCESSES: the variable wins).
    written = {k for path in paths for k in path}
    keys = [k for k in dict.fromkeys([*plain[1], *(k for p in paths for k in p)]) if k in written]
    marks = {k: v for k, v in env.items() if k.endswith(_MARKS)}
    marks.update((k, v) for k, v in block.before.items() if k.endswith(_MARKS))
    for key in [k for k in env if _scalar(k) or k.endswith(_MARKS)]:
        del env[key]
    for key in keys:
        values = {path.get(key) for path in paths}
        if key == block.defaults and not block.paths and key in plain[0]:
            values = {plain[0][key]}  # the default idiom: unset here, so its branch ran
        value = values.pop() if len(values) == 1 else None
        if value is not None:
            env[key] = value
        else:
            marks[f"{key}[if]"] = f"`{block.kind}` at line {block.line}"
            if None not in values and len(values) <= _ALTERNATIVES:
                # In path order, each value where its last path gives it: the last is the
                # value of the `else` or of running no branch, which a script reads last.
                ordered = reversed(dict.fromkeys(path[key] for path in reversed(paths)))
                marks[f"{key}[or]"] = json.dumps(list(ordered))
    env.update({k: v for k, v in marks.items() if k.partition("[")[0] not in env})


def unresolved_by_branches(name: str, env: Mapping[str, str]) -> str | None:
    """Why `name` is not known when a block's paths set it differently: the block's line."""
    block = env.get(f"{name}[if]")
    if block is None:
        return None
    return f"that the branches of the {block} set differently (the files do not decide which runs)"


def alternatives(text: str, env: Mapping[str, str]) -> list[dict[str, str]]:
    """`env` once per value the one name `text` expands that a block's paths set apart may
    hold (each path sets it), in the order of the paths that last give each; [] when it
    expands none, or more than one, of them."""
    names = {n for n in re.findall(r"\$\{?([A-Za-z_]\w*)", text) if f"{n}[or]" in env}
    if len(names) != 1:
        return []
    (name,) = names
    return [{**env, name: value} for value in json.loads(env[f"{name}[or]"])]
