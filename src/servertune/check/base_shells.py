"""The /bin/sh of an image, from the name of the image it is built FROM.

A shell-form `CMD gunicorn ...` runs `/bin/sh -c 'gunicorn ...'`. Which shell that is decides
whether the server is PID 1: bash and BusyBox ash exec a lone simple command given to `-c`
(no fork: the server takes the shell's process), dash forks it and stays its parent. Debian
and Ubuntu link /bin/sh to dash, Alpine to BusyBox's ash; Fedora and the distributions built
from its packages (RHEL and its UBI images, CentOS, Rocky, Alma, Oracle Linux, Amazon Linux)
and Microsoft's Azure Linux (formerly CBL-Mariner) link it to bash. Evidence:
https://packages.debian.org/bookworm/amd64/dash/filelist (dash ships /bin/sh);
https://github.com/microsoft/azurelinux/blob/3.0/.github/workflows/overwrite_shell_link.sh
("Mariner specs require 'bash'" as /bin/sh);
https://lukeyeager.github.io/2019/11/05/bash-implicit-exec.html (`bash -c 'cmd'` execs cmd);
BusyBox's shell/ash.c since 1.28.0 (commit 1e3e2ccd5, "ash: [SHELL] Optimize dash -c "command"
to avoid a fork"): `-c` runs `evalstring(minusc, EV_EXIT)`, which keeps EV_EXIT for the
string's last command, and `evalcommand` ("Can we avoid forking?") execs an external program
without forking when `flags & EV_EXIT` and no trap is set; `evaltree` passes EV_EXIT on to
the second command of `&&`, `||` and `;`, so a list's last command is exec'd too. Seen with
BusyBox 1.35: `busybox sh -c 'true && sleep 3'` leaves `sleep` alone in the shell's process.
Alpine ships BusyBox 1.28 or later since Alpine 3.8 (3.7 had 1.27.2, which forks).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "BASH_SH_DISTRIBUTIONS",
    "Sh",
    "execs_last_command",
    "execs_lone_command",
    "image_sh",
    "library_image",
    "sh_words",
]

Sh = Literal["bash", "dash", "ash"]

#: Names (an image's path component, or a word of its tag) of distributions whose /bin/sh is
#: bash: `mcr.microsoft.com/azurelinux/base/python:3.12`, `registry.access.redhat.com/ubi9/
#: python-311`, `quay.io/centos/centos:stream9`, `amazonlinux:2023`, `nvidia/cuda:12.4-
#: runtime-rockylinux9`. Declared once: the reader and the message both use it.
BASH_SH_DISTRIBUTIONS = (
    "azurelinux",
    "cbl-mariner",
    "mariner",
    "fedora",
    "rhel",
    "ubi",
    "centos",
    "rockylinux",
    "almalinux",
    "oraclelinux",
    "amazonlinux",
)

#: Names of distributions whose /bin/sh is dash (Debian and its releases, Ubuntu and its).
_DASH_SH = (
    "debian",
    "ubuntu",
    "bookworm",
    "bullseye",
    "buster",
    "stretch",
    "trixie",
    "sid",
    "jammy",
    "noble",
    "focal",
    "bionic",
    "xenial",
)

#: Names of images whose /bin/sh is BusyBox's ash.
_ASH_SH = ("alpine", "busybox")

#: A word of an image's name with its release glued on (`ubi9`, `rockylinux9`, `ubuntu22`).
_RELEASE = re.compile(r"[0-9]+\Z")


def library_image(reference: str) -> bool:
    """The reference names a library image (`python:3.12`, `docker.io/library/nginx`), whose
    command is the Docker Official Images' own (a shell, a REPL, the proxy), never one of a
    project's servers; an owner's image (`ckan/ckan-base:2.11`) runs a command of its own."""
    path = reference.split("@", 1)[0].strip().lower()
    first, _, rest = path.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        first, _, rest = rest.partition("/")  # a registry host (`ghcr.io/`, `host:5000/`)
    return not rest or first == "library"


def _words(reference: str) -> tuple[list[str], list[str]]:
    """The words of the image's tag and of its name (registry host dropped), lowercased and
    without release numbers: `registry.access.redhat.com/ubi9/python-311:1-77` is (["1",
    "77"], ["ubi", "python", "311"])."""
    path = reference.split("@", 1)[0].strip().lower()
    first, _, rest = path.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        path = rest
    name, colon, tag = path.rpartition(":")
    if not colon or "/" in tag:
        name, tag = path, ""

    def split(text: str) -> list[str]:
        return [_RELEASE.sub("", w) or w for w in re.split(r"[-_./]", text) if w]

    return split(tag), split(name)


def image_sh(reference: str) -> Sh | None:
    """The shell /bin/sh is in the image `reference` names (`python:3.12-slim`: dash), None
    when its name does not say (an owner's image, a `$BASE` the build sets)."""
    if not reference or "$" in reference:
        return None
    for words in _words(reference):  # the tag names the variant first: `python:3.12-alpine`
        for word in words:
            if word in BASH_SH_DISTRIBUTIONS:
                return "bash"
            if word in _ASH_SH:
                return "ash"
            if word in _DASH_SH:
                return "dash"
    # A Docker Official Image's default variant (`python:3.12`, `node:20`) is Debian's. Any
    # other name with no owner (`base-web`) may be an image built here by another file
    # (`docker build -t base-web`), whose /bin/sh this name does not say.
    return "dash" if library_image(reference) and _name(reference) in _DEBIAN_DEFAULT else None


#: Docker Official Images whose default variant is built on Debian or Ubuntu (their
#: Dockerfiles on docker-library): an app's usual bases. (mysql's is Oracle Linux: not here.)
_DEBIAN_DEFAULT = frozenset(
    {
        "python",
        "pypy",
        "debian",
        "ubuntu",
        "buildpack-deps",
        "node",
        "ruby",
        "golang",
        "rust",
        "perl",
        "php",
        "gcc",
        "openjdk",
        "eclipse-temurin",
        "nginx",
        "httpd",
        "haproxy",
        "postgres",
        "redis",
    }
)


def _name(reference: str) -> str:
    """A library image's name without registry, `library/`, tag or digest: `python` of
    `docker.io/library/python:3.12-slim@sha256:...`."""
    path = reference.split("@", 1)[0].strip().lower()
    first, _, rest = path.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        path = rest
    return path.removeprefix("library/").partition(":")[0]


#: An Alpine release (or a BusyBox image) older than BusyBox 1.28, whose ash forks a `-c`
#: command: `alpine:3.7`, `python:3.6-alpine3.7`, `busybox:1.27`.
_OLD_ASH = re.compile(r"alpine:?(?:3\.[0-7]|[12]\.\d+)(?![\d.])|busybox:1\.(?:1\d|2[0-7])\b")


def execs_lone_command(shell: str, reference: str) -> bool:
    """Whether `shell -c 'one simple command'` execs that command, so the server takes the
    shell's process (PID 1 in a container): bash does, and BusyBox's ash (1.28 on); dash does
    not. `shell` is a path or name; `sh` is /bin/sh of the image built FROM `reference`."""
    name = shell.rpartition("/")[2]
    if name == "sh":
        sh = image_sh(reference)
        if sh is None:
            return False
        name = sh
    if name == "ash":
        return _OLD_ASH.search(reference.lower()) is None
    return name == "bash"


def execs_last_command(shell: str, reference: str, text: str) -> bool:
    """Whether `shell -c TEXT` execs the last command of the list `text` (`a && b`, `a; b`):
    BusyBox ash 1.28 on does, with no trap set and the last command no pipeline (each part of
    a pipeline is forked); dash and bash are not counted."""
    name = shell.rpartition("/")[2]
    if name == "sh":
        name = image_sh(reference) or ""
    if name != "ash" or not execs_lone_command("ash", reference):
        return False
    last = re.split(r"&&|\|\||;", text)[-1]
    return "|" not in last and not re.search(r"(?<![\w-])trap\b", text)


def sh_words(reference: str) -> str:
    """What /bin/sh is in an image built FROM `reference`, for a message: `dash, in the
    Debian-based base image python:3.12` or the assumption made when the name does not say."""
    sh = image_sh(reference)
    shown = reference or "its base image"
    if sh == "dash":
        return f"dash, in the Debian-based base image {shown}"
    if sh == "ash":
        return f"BusyBox ash before 1.28, in the Alpine-based base image {shown}"
    if sh == "bash":
        return f"bash, in the base image {shown}"
    said = "is set at build time" if "$" in reference else "names no distribution check knows"
    return (
        f"assumed dash or ash, as in Debian- and Alpine-based images: the base image {shown} "
        f"{said}; where /bin/sh is bash (Fedora, RHEL, Azure Linux) or BusyBox ash (Alpine) a "
        "lone command is exec'd and this does not apply"
    )
