"""The Dockerfile a repository's own build files say an image name is built from.

A compose service or a Kubernetes container that runs `image: ghcr.io/acme/shop:latest`, with
no `build:` of its own, runs whatever built that name. The repository says what did when a
build file of it names both: a `docker build -t NAME -f FILE` line (a Makefile, a CI step's
`run:`), a docker-bake target's `dockerfile` and `tags`, a CI workflow that writes the name
and builds from one Dockerfile (`file: rust/Dockerfile` of docker/build-push-action). That
evidence comes before any guess from the name: the image a repository publishes may be built
from another Dockerfile than the one at its root.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from servertune.check import memo, resolve
from servertune.check.model import CheckInputError, Location

__all__ = [
    "BuiltFrom",
    "build_file_text",
    "build_files",
    "built_from",
    "built_in_script",
    "command_files",
    "continued_words",
    "dockerfiles_building",
    "named_in_own_comments",
]

#: The build files read, relative to the repository's root (CI workflows, bake files, the
#: root Makefile): the files that build and tag images, not the ones that run them.
_BUILD_FILES = (
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    ".gitlab-ci.yml",
    "docker-bake.hcl",
    "Makefile",
    # CI scripts a `.travis.yml` or a pipeline runs (`ci/build.sh`), and the Travis file.
    ".travis.yml",
    "*.sh",
    "ci/*.sh",
    "scripts/*.sh",
)
#: A shell (or Travis `env:`) assignment of a literal: `export PROJECT_NAME=acme`.
_ASSIGNMENT = re.compile(
    r"""^[ \t]*(?:-[ \t]*)?(?:export[ \t]+)?(?P<name>[A-Za-z_]\w*)=["']?(?P<value>[\w./:-]+)["']?[ \t]*(?:[;#]|$)""",
    re.M,
)
#: Deploy scripts (`azure_compose_deploy/azure_deploy.sh`): only their `docker build -t NAME -f
#: FILE` lines are read, each the script's own word for what builds NAME.
_SCRIPTS = ("*.sh", "*/*.sh", "*/*/*.sh")
#: Files running docker commands beside the build files (`command_files`).
_MORE_FILES = ("justfile", "Justfile", ".justfile", "*/Makefile", "*.mk")
#: A key naming the Dockerfile a build uses: build-push-action's `file:`, bake's
#: `dockerfile =`, compose-like `dockerfile:`.
_DOCKERFILE_KEY = re.compile(
    r"""^[ \t]*-?[ \t]*(?:file|dockerfile)[ \t]*[:=][ \t]*["']?(?P<path>[^\s"'#,]+)""", re.I | re.M
)
#: `docker build` / `docker buildx build` / `podman build` with its words to the line's end.
_BUILD_LINE = re.compile(r"\b(?:docker\s+(?:buildx\s+)?|podman\s+)build\b(?P<words>[^\n]*)")
_TAG = re.compile(r"""(?<!\S)(?:-t|--tag)[ =]["']?(?P<tag>[^\s"']+)""")
_FILE = re.compile(r"""(?<!\S)(?:-f|--file)[ =]["']?(?P<file>[^\s"']+)""")
#: `--target STAGE`: the stage the line builds and tags (`docker build --target production`).
_TARGET = re.compile(r"""(?<!\S)--target[ =]["']?(?P<target>[\w.-]+)""")
#: A bake file's `target "name" {` block heads.
_BAKE_TARGET = re.compile(r"""^\s*target\s+"[^"]+"\s*\{""", re.M)
_STAGE = re.compile(r"""^[ \t]*target[ \t]*[:=]\s*["']?(?P<stage>[\w.-]+)""", re.M)


@dataclass(frozen=True)
class BuiltFrom:
    """The Dockerfile a build file builds an image name from, where it says so."""

    dockerfile: Path
    #: The line naming the Dockerfile (a `-f` or a `file:`).
    at: Location
    #: The Dockerfile as that line writes it (`rust/Dockerfile`).
    written: str
    #: The stage built (`target: cli`), None for the last.
    target: str | None = None
    #: The only Dockerfile its block names: False for one of several a workflow writing the
    #: name builds (a matrix, two build steps), which says only that it is one of them.
    alone: bool = True


def built_from(image: str, root: Path) -> BuiltFrom | None:
    """The Dockerfile the repository's build files build `image` from (its path without
    registry and tag, `acme/shop`), None when none of them names it, or they disagree."""
    found = {
        (b.dockerfile, b.target): b
        for file in build_files(root)
        for b in _builds_of(file, image, root)
        if b.alone
    }
    return next(iter(found.values())) if len(found) == 1 else None


def dockerfiles_building(image: str, root: Path) -> frozenset[Path]:
    """Every Dockerfile the repository's build files may build `image` from, also where they
    do not say which one (`built_from` is None): a guess from the name outside them is
    contradicted by the files."""
    return frozenset(
        b.dockerfile for file in build_files(root) for b in _builds_of(file, image, root)
    )


def built_in_script(script: Path, image: str, root: Path) -> BuiltFrom | None:
    """The Dockerfile a `docker build -t IMAGE -f FILE` line of `script` itself builds `image`
    from (a relative FILE from the script's own folder, else from `root`), the last such line
    winning as the script runs them in order; None when it builds no such name."""
    found = list(_builds_of(script, image, root, script=True))
    return found[-1] if found else None


def build_files(root: Path) -> list[Path]:
    """The repository's build files (`_BUILD_FILES`, deploy scripts), listed once a run."""

    def listed() -> tuple[str, ...]:
        patterns = (*_BUILD_FILES, *_SCRIPTS)
        # A build file linked from outside the tree is never opened (`resolve`).
        found = {str(p) for pattern in patterns for p in root.glob(pattern) if p.is_file()}
        return tuple(sorted(p for p in found if resolve.inside(Path(p))))

    return [Path(p) for p in memo.recall(memo.run_table("build files"), str(root), listed)]


def command_files(root: Path) -> tuple[Path, ...]:
    """The repository's files that run docker commands, listed once a run: its build files
    (`build_files`: CI workflows, Makefile, scripts), justfiles and Makefiles one
    folder down, and suffixless shell scripts (`_shell_scripts`); none linked from outside."""

    def listed() -> tuple[Path, ...]:
        files = [*build_files(root)]
        files += sorted({p for pattern in _MORE_FILES for p in root.glob(pattern) if p.is_file()})
        files += _shell_scripts(root)
        # A build file linked from outside the tree is never opened (`resolve`).
        return tuple(f for f in dict.fromkeys(files) if resolve.inside(f))

    return memo.recall(memo.run_table("docker command files"), str(root), listed)


def _shell_scripts(root: Path) -> list[Path]:
    """The shell scripts without a suffix at the root or one folder down (`docker/manage`,
    a project's build-and-run helper): their `docker build` lines are the project's too."""
    found: list[Path] = []
    for path in sorted([*root.glob("*"), *root.glob("*/*")]):
        # A link out of the tree (`.env` -> ../outside/secrets.env) is never opened.
        if path.suffix or not path.is_file() or not resolve.inside(path):
            continue
        try:
            with path.open("rb") as opened:
                first = opened.readline(200)
        except OSError:
            continue
        if first.startswith(b"#!") and re.search(rb"\b(?:ba|da|z|k)?sh\b", first):
            found.append(path)
    return found


def continued_words(lines: list[str], number: int, rest: str) -> list[tuple[str, int]]:
    """The words of a command that starts with `rest` on line `number` of `lines`, its `\\`
    continuations joined, each with the line it is written on (quotes around a word dropped)."""
    words: list[tuple[str, int]] = []
    at = number
    while True:
        part = rest.rstrip()
        words += [(w.strip("\"'"), at) for w in part.removesuffix("\\").split()]
        if not part.endswith("\\") or at >= len(lines):
            return words
        rest, at = lines[at], at + 1


def build_file_text(path: Path) -> str:
    """The build file's text ("" when it cannot be read), read once a run: every image name
    of the run looks through the same files."""
    from servertune.check.source import read_text

    def read() -> str:
        try:
            text = read_text(path)
        except (CheckInputError, OSError):
            return ""
        return _filled(text) if path.suffix in (".sh", ".yml") else text

    return memo.recall(memo.run_table("build file texts"), str(path), read)


def _filled(text: str) -> str:
    """A script's text with each variable it assigns one literal (`export PROJECT_NAME=acme`)
    written as that value (`-t eu.gcr.io/${PROJECT_NAME}/web` is `eu.gcr.io/acme/web`); a
    name assigned two values, or one the CI sets (`${TRAVIS_COMMIT}`), is left as written."""
    values: dict[str, set[str]] = {}
    for found in _ASSIGNMENT.finditer(text):
        values.setdefault(found["name"], set()).add(found["value"])
    known = {name: next(iter(v)) for name, v in values.items() if len(v) == 1}
    if not known:
        return text

    def one(match: re.Match[str]) -> str:
        return known.get(match["braced"] or match["bare"], match[0])

    return re.sub(r"\$\{(?P<braced>\w+)\}|\$(?P<bare>[A-Za-z_]\w*)", one, text)


def _names(text: str, image: str) -> bool:
    """`text` writes the image name (with any registry before it, any tag after it)."""
    return re.search(rf"(?<![\w.-]){re.escape(image)}(?![\w/.-])", text, re.I) is not None


def _builds_of(file: Path, image: str, root: Path, *, script: bool = False) -> Iterator[BuiltFrom]:
    """What `file` says builds `image`: each `docker build` line tagging it, else each
    Dockerfile of a block (a bake target, the whole file otherwise) that writes the name,
    `alone` when it is the block's only one."""
    from servertune.check.commands import is_dockerfile

    text = build_file_text(file)
    if not text or not _names(text, image):
        return
    script = script or file.suffix == ".sh"
    lines = text.splitlines()
    tagged = False
    for number, line in enumerate(lines, 1):
        found = _BUILD_LINE.search(line)
        if found is None or not any(_names(t["tag"], image) for t in _TAG.finditer(found["words"])):
            continue
        tagged = True
        named = _FILE.search(found["words"])
        words = found["words"].split()
        path = named["file"] if named else f"{words[-1] if words else '.'}/Dockerfile"
        target = _TARGET.search(found["words"])
        dockerfile = (root / path).resolve()
        if script and not dockerfile.is_file():
            # A script run from its own folder (`docker build -f api.Dockerfile .`).
            dockerfile = (file.parent / path).resolve()
            if not dockerfile.is_file():
                continue  # where it runs from is not known here
        yield BuiltFrom(dockerfile, Location(file, number), path, target and target["target"])
    if tagged or script:
        return
    starts = [m.start() for m in _BAKE_TARGET.finditer(text)] if file.suffix == ".hcl" else []
    blocks = (
        [text[s:e] for s, e in zip(starts, [*starts[1:], len(text)], strict=True)]
        if starts
        else [text]
    )
    for block in blocks:
        if not _names(block, image):
            continue
        files = {
            m["path"]: m.start()
            for m in _DOCKERFILE_KEY.finditer(block)
            if is_dockerfile(root / m["path"])
        }
        stages = {m["stage"] for m in _STAGE.finditer(block)}
        for path, offset in files.items():
            number = text.count("\n", 0, text.index(block) + offset) + 1
            yield BuiltFrom(
                (root / path).resolve(),
                Location(file, number),
                path,
                next(iter(stages)) if len(stages) == 1 else None,
                alone=len(files) == 1,
            )


#: A Dockerfile's own comment showing how it is built (`#   docker build -t shop -f
#: deployment/Dockerfile .`): the project's word for the name its image is tagged with.
_COMMENTED_BUILD = re.compile(
    r"^[ \t]*#.*?\b(?:docker\s+(?:buildx\s+)?|podman\s+)build\b(?P<words>[^\n]*)", re.M
)


def named_in_own_comments(dockerfile: Path, text: str) -> tuple[str, ...]:
    """The image names (`-t NAME`, registry and tag left) that a `docker build` line in the
    Dockerfile's own comments tags it with: a line whose `-f` names this file (its path's last
    parts), or, without `-f`, a file named `Dockerfile`."""
    names: list[str] = []
    tail = dockerfile.parts
    for line in _COMMENTED_BUILD.finditer(text):
        written = line["words"]
        given = _FILE.search(written)
        if given is not None:
            parts = Path(given["file"]).parts
            parts = tuple(p for p in parts if p != ".")
            if not parts or ".." in parts or tail[-len(parts) :] != parts:
                continue
        elif dockerfile.name != "Dockerfile":
            continue
        for tag in _TAG.finditer(written):
            name = tag["tag"].split("@", 1)[0]
            path = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
            if "$" not in path:
                names.append(path.rsplit("/", 1)[-1])
    return tuple(names)
