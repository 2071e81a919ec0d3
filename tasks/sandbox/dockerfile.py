"""Reading a task's Dockerfile as far as evoharness needs: its instructions, the base images its
stages start FROM (Docker's name rules: a short name is Docker Hub's), those bases replaced by
local images, and whether it builds anything the host sandbox would not reproduce. Building is
images.py's."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Instructions that only pick a base, copy the task's own files or set metadata: a Dockerfile of
# these alone leaves nothing in the image that the host sandbox's copy of environment/ lacks.
_COPY_OR_METADATA = {"FROM", "WORKDIR", "COPY", "ADD", "ENV", "LABEL", "ARG", "USER", "EXPOSE",
                     "CMD", "ENTRYPOINT", "SHELL", "HEALTHCHECK", "STOPSIGNAL", "VOLUME",
                     "MAINTAINER"}
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
DOCKER_HUB = "docker.io"


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case
    args: str  # continuation lines joined
    line: int  # 1-based line where it starts


@dataclass(frozen=True)
class Stage:
    base: str  # as written, build ARGs declared before the first FROM substituted
    alias: str
    instruction: Instruction
    flags: tuple[str, ...]  # e.g. --platform=linux/amd64


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions; comments and blank lines dropped, `\\` continuations
    joined (BuildKit heredocs are not understood)."""
    found: list[Instruction] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        start = start or number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, args = (pending + line).strip().partition(" ")
        found.append(Instruction(keyword.upper(), args.strip(), start))
        pending, start = "", 0
    if pending.strip():
        keyword, _, args = pending.strip().partition(" ")
        found.append(Instruction(keyword.upper(), args.strip(), start))
    return found


def _global_args(steps: list[Instruction]) -> dict[str, str]:
    """ARG NAME=default declared before the first FROM (what a FROM line may use)."""
    values: dict[str, str] = {}
    for step in steps:
        if step.keyword == "FROM":
            break
        if step.keyword == "ARG":
            name, _, default = step.args.partition("=")
            values[name.strip()] = default.strip().strip("\"'")
    return values


def stages(text: str) -> list[Stage]:
    steps = instructions(text)
    args = _global_args(steps)
    found = []
    for step in (s for s in steps if s.keyword == "FROM"):
        words = step.args.split()
        flags = tuple(w for w in words if w.startswith("--"))
        rest = [w for w in words if not w.startswith("--")]
        if not rest:
            continue
        base = _VARIABLE.sub(lambda m: args.get(m.group(1) or m.group(2), m.group(0)), rest[0])
        alias = rest[2] if len(rest) >= 3 and rest[1].upper() == "AS" else ""
        found.append(Stage(base=base, alias=alias, instruction=step, flags=flags))
    return found


def external_bases(text: str) -> list[str]:
    """The images the stages start FROM that are neither an earlier stage nor `scratch`, in
    order, each once."""
    aliases: set[str] = set()
    bases: list[str] = []
    for stage in stages(text):
        if stage.base.lower() not in aliases and stage.base != "scratch" and \
                stage.base not in bases:
            bases.append(stage.base)
        if stage.alias:
            aliases.add(stage.alias.lower())
    return bases


def with_bases(text: str, replace: dict[str, str]) -> str:
    """The Dockerfile with each FROM whose base is a key of `replace` starting from its value
    instead (its flags and alias kept); every other line as it was."""
    lines = text.splitlines()
    for stage in reversed(stages(text)):
        if stage.base not in replace:
            continue
        first = stage.instruction.line - 1
        last = first
        while lines[last].rstrip().endswith("\\"):
            last += 1
        alias = f" AS {stage.alias}" if stage.alias else ""
        lines[first:last + 1] = [" ".join(["FROM", *stage.flags, replace[stage.base]]) + alias]
    return "\n".join(lines) + "\n"


def builds_something(text: str) -> bool:
    """Whether the image holds more than a base and the task's files: a RUN step, a second
    stage, a COPY --from another image or stage, an ADD from a URL or git."""
    steps = instructions(text)
    if sum(1 for s in steps if s.keyword == "FROM") > 1:
        return True
    for step in steps:
        if step.keyword not in _COPY_OR_METADATA:
            return True
        if step.keyword in ("COPY", "ADD") and "--from" in step.args:
            return True
        if step.keyword == "ADD" and re.search(r"(^|\s)(https?://|git@)", step.args):
            return True
    return False


def normalise(name: str) -> tuple[str, str]:
    """Docker's reading of an image name: (full name with tag, short name), e.g.
    'python:3.12-slim' -> ('docker.io/library/python:3.12-slim', 'python:3.12-slim'). A digest
    (@sha256:...) is dropped: a stand-in cannot honour it."""
    name = name.split("@", 1)[0]
    head, _, rest = name.partition("/")
    if rest and ("." in head or ":" in head or head == "localhost"):
        registry, path = head, rest
    else:
        registry, path = DOCKER_HUB, name
    last = path.rsplit("/", 1)[-1]
    if ":" not in last:
        path += ":latest"
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    full = f"{registry}/{path}"
    short = path.removeprefix("library/") if registry == DOCKER_HUB else full
    return full, short
