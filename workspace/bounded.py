"""Bounds on what the evolve agent may write into a harness: file sizes and counts, and YAML read
without aliases or deep nesting, so no input makes loading slow or large. Validation is validate.py's."""
from __future__ import annotations

from typing import Any

import yaml

from evoharness.errors import EvoError

MAX_FILE_BYTES = 256 * 1024  # one harness file (a prompt, a tool, a skill)
MAX_YAML_BYTES = 64 * 1024  # harness.yaml, tools/*.yaml, agent.yaml, skill front matter
MAX_YAML_DEPTH = 32  # nested mappings and lists; a JSON schema in a tool is the deepest
MAX_HARNESS_FILES = 200  # outside .git
MAX_HARNESS_BYTES = 4 * 1024 * 1024
MAX_COMPONENTS = 64  # names in each of harness.yaml's lists
MAX_EDITS = 32  # edit operations in one batch

# libyaml when the wheel has it: the pure-Python parser is ~10x slower on the same bytes.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str, *, file: str, field: str = "(file)") -> Any:
    """Parse agent-written YAML, refusing aliases (a few hundred bytes of nested aliases expand to
    gigabytes), nesting deeper than MAX_YAML_DEPTH and text over MAX_YAML_BYTES, before building
    any object. Raises EvoError naming the file and the line."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_YAML_BYTES:
        raise EvoError(f"YAML file is too large ({size} bytes; at most {MAX_YAML_BYTES})",
                       file=file, field=field, hint="keep harness YAML short; long text belongs "
                       "in a .md file")
    try:
        _check_events(text, file)
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, checked above
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else field
        raise EvoError(f"invalid YAML: {getattr(error, 'problem', None) or error}", file=file,
                       field=where) from error
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise EvoError(f"invalid YAML value: {error}", file=file, field=field) from error


def _check_events(text: str, file: str) -> None:
    """One pass over the parser's events (no objects built): no alias, bounded nesting."""
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        line = f"line {event.start_mark.line + 1}"
        if isinstance(event, yaml.AliasEvent):
            raise EvoError("YAML aliases (*name) are not allowed in harness files", file=file,
                           field=line, value=f"*{event.anchor}",
                           hint="write the value out where it is used")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise EvoError(f"YAML is nested deeper than {MAX_YAML_DEPTH} levels", file=file,
                               field=line)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
