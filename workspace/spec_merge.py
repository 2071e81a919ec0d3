"""A three-way merge of harness.yaml by its structure, for trying one change alone on a base that
lacks an earlier sibling's edit. Two library entries that each register a component add lines
next to each other (`middleware: [a]`, then `[a, b]`); git's line merge calls that a conflict,
but as data the second change only adds `b`, which applies to a base without `a` cleanly.

The rules, for each value the change touched (ancestor: the change's parent; ours: the base;
theirs: the change's commit): a value the change left alone keeps the base's; one the base never
differed on takes the change's; mappings merge key by key; lists lose what the change removed and
gain, at their end, what it added; anything else both sides changed differently is a conflict.
"""
from __future__ import annotations

from typing import Any

import yaml

from evoharness.errors import EvoError

from .bounded import load_yaml
from .validate import SPEC_FILE

_ABSENT = object()  # a key one side does not have


class Conflict(Exception):
    """Both sides changed one value in different ways."""


def merge_spec(ancestor: str, ours: str, theirs: str) -> str | None:
    """harness.yaml holding `theirs`' changes to `ancestor` made on `ours`, in the form edits write
    it; None when the texts do not parse as mappings or the changes conflict."""
    try:
        sides = [load_yaml(text, file=SPEC_FILE) for text in (ancestor, ours, theirs)]
        if not all(isinstance(side, dict) for side in sides):
            return None
        return yaml.safe_dump(_merge(*sides), sort_keys=False)
    except (EvoError, Conflict):
        return None


def _merge(ancestor: Any, ours: Any, theirs: Any) -> Any:
    if ours == theirs or theirs == ancestor:
        return ours
    if ours == ancestor:
        return theirs
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return _merge_mappings(ancestor if isinstance(ancestor, dict) else {}, ours, theirs)
    if isinstance(ours, list) and isinstance(theirs, list):
        return _merge_lists(ancestor if isinstance(ancestor, list) else [], ours, theirs)
    raise Conflict


def _merge_mappings(ancestor: dict, ours: dict, theirs: dict) -> dict:
    merged = {}
    for key in [*ours, *(key for key in theirs if key not in ours)]:
        value = _merge(ancestor.get(key, _ABSENT), ours.get(key, _ABSENT),
                       theirs.get(key, _ABSENT))
        if value is not _ABSENT:
            merged[key] = value
    return merged


def _merge_lists(ancestor: list, ours: list, theirs: list) -> list:
    removed = [item for item in ancestor if item not in theirs]
    added = [item for item in theirs if item not in ancestor and item not in ours]
    return [item for item in ours if item not in removed] + added
