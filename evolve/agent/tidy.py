"""Reading a `change` call the way its writer meant it: unknown keys dropped, a single object taken
as a list, task ids matched whatever their case, percentages read as probabilities, a missing
component or targeted fix derived from the edits. Every such reading is a note the agent is told;
what is left to refuse (unknown task ids, no prediction, a bad edit) is change.py's and manifests/'."""
from __future__ import annotations

import re
from typing import Any, get_args

from pydantic import BaseModel, Field

from evoharness.manifests.schema import EvidenceRef, Prediction
from evoharness.workspace.edits import Edit
from evoharness.workspace.kinds import BY_NAME, kind_of_path
from evoharness.workspace.spec import ComponentKind

MANIFEST_KEYS = ("component", "root_cause", "targeted_fix", "failure_evidence",
                 "predicted_fixes", "predicted_regressions", "expected_delta")
EDIT_KEYS = ("edit", "edits")
LIBRARY_KEY = "library_entry"  # the improvement-library entry a change applies (evolve/library/)
TASK_LISTS = {"failure_evidence": set(EvidenceRef.model_fields),
              "predicted_fixes": set(Prediction.model_fields),
              "predicted_regressions": set(Prediction.model_fields)}
TASK_ALIASES = ("task", "task_name", "name", "id")  # what a model writes for task_id
# Each edit op's own keys, read from workspace/edits.py's models.
EDIT_FIELDS = {cls.model_fields["op"].default: set(cls.model_fields)
               for cls in get_args(get_args(Edit)[0])}
COMPONENTS = get_args(ComponentKind)
_NUMBER = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*(%|pp|points?)?\s*$")


class Tidied(BaseModel):
    """The manifest fields and edits as meant, and what was read differently from what was sent."""

    manifest: dict[str, Any]
    edits: list[Any]
    library_entry: str | None = None
    notes: list[str] = Field(default_factory=list)


def tidy_change(arguments: dict[str, Any], known_tasks: list[str]) -> Tidied:
    notes: list[str] = []
    unknown = sorted(set(arguments) - {*MANIFEST_KEYS, *EDIT_KEYS, LIBRARY_KEY})
    if unknown:
        notes.append(f"ignored unknown field(s): {', '.join(unknown)}")
    manifest = {key: arguments[key] for key in MANIFEST_KEYS if key in arguments}
    by_case = {task.casefold(): task for task in known_tasks}
    for field, allowed in TASK_LISTS.items():
        if field in manifest:
            manifest[field] = _task_list(manifest[field], field, allowed, by_case, notes)
    _probabilities(manifest, notes)
    edits = _edits(arguments, notes)
    _component(manifest, edits, notes)
    _expected_delta(manifest, len(known_tasks), notes)
    if not manifest.get("targeted_fix") and edits:
        manifest["targeted_fix"] = _describe(edits[0])
        notes.append("targeted_fix missing: taken from the edit")
    applies = arguments.get(LIBRARY_KEY)
    return Tidied(manifest=manifest, edits=edits, notes=notes,
                  library_entry=str(applies).strip() if applies else None)


def _task_list(value: Any, field: str, allowed: set[str], by_case: dict[str, str],
               notes: list[str]) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (dict, str)):
        notes.append(f"{field}: read the single item as a list")
        value = [value]
    if not isinstance(value, list):
        return value  # the schema check names it
    items, dropped = [], set()
    for item in value:
        if isinstance(item, str):
            item = {"task_id": item}
        if isinstance(item, dict):
            item = dict(item)
            alias = next((a for a in TASK_ALIASES if a in item and "task_id" not in item), None)
            if alias:
                item["task_id"] = item.pop(alias)
            dropped |= set(item) - allowed
            item = {k: v for k, v in item.items() if k in allowed}
            item = _known_case(item, field, by_case, notes)
            if isinstance(item.get("rollout_id"), str):  # as the evidence links it
                item["rollout_id"] = item["rollout_id"].removeprefix("rollouts/").removesuffix(".md")
        items.append(item)
    if dropped:
        notes.append(f"{field}: dropped unknown key(s) {', '.join(sorted(dropped))}")
    return items


def _known_case(item: dict[str, Any], field: str, by_case: dict[str, str],
                notes: list[str]) -> dict[str, Any]:
    task = item.get("task_id")
    if isinstance(task, str):
        known = by_case.get(task.strip().casefold())
        if known and known != task:
            notes.append(f"{field}: read task {task!r} as {known!r}")
            item["task_id"] = known
    return item


def _probabilities(manifest: dict[str, Any], notes: list[str]) -> None:
    """"40%", "0.4" or 40 mean 0.4: a number from 2 to 100 can only be a percentage (1.5 is no
    probability and stays refused)."""
    for field in ("predicted_fixes", "predicted_regressions"):
        for item in manifest.get(field) or []:
            if not isinstance(item, dict) or "probability" not in item:
                continue
            raw = item["probability"]
            value = _number(raw)
            if value is not None and 2 <= value <= 100:
                value /= 100
            if value is not None and value != raw:
                notes.append(f"{field}: read probability {raw!r} as {value:g}")
                item["probability"] = value


def edits_as_meant(arguments: dict[str, Any]) -> list[Any]:
    """The edits of a `change` call as they were applied (what the library files from a trace)."""
    return _edits(arguments, [])


def _edits(arguments: dict[str, Any], notes: list[str]) -> list[Any]:
    """`edit` and `edits` both accepted (a single edit object in either); each edit's unknown keys
    dropped, and an edit with only rule text read as append_rule."""
    raw = arguments.get("edits")
    edits = [arguments["edit"]] if "edit" in arguments else []
    edits += [raw] if isinstance(raw, dict) else list(raw or [])
    tidied = []
    for index, edit in enumerate(edits):
        if isinstance(edit, dict):
            edit = dict(edit)
            if "op" not in edit and set(edit) == {"text"}:
                edit["op"] = "append_rule"
                notes.append(f"edits[{index}]: no op given; read as append_rule")
            if edit.get("op") == "append_rule" and isinstance(edit.get("text"), str):
                edit["text"] = edit["text"].strip().strip('"').strip()  # a quoted suggestion
            fields = EDIT_FIELDS.get(edit.get("op"))
            extra = sorted(set(edit) - fields) if fields else []
            if extra:
                notes.append(f"edits[{index}] ({edit['op']}): dropped key(s) {', '.join(extra)}")
                edit = {k: v for k, v in edit.items() if k in fields}
        tidied.append(edit)
    return tidied


def _component(manifest: dict[str, Any], edits: list[Any], notes: list[str]) -> None:
    """The component the edits touch. A named one stands when an edit touches it (or the edits say
    nothing); else the edits' own kind is taken (the 1.5B called a rule a middleware)."""
    given = manifest.get("component")
    known = given.strip().casefold() if isinstance(given, str) else None
    touched = list(dict.fromkeys(kind for edit in edits if (kind := component_of(edit))))
    if known in COMPONENTS and (known in touched or not touched):
        manifest["component"] = known
        return
    if not touched:
        return  # the schema check names the component
    manifest["component"] = touched[0]
    if known in COMPONENTS:
        notes.append(f"component {given!r}: the edits change {', '.join(touched)}; "
                     f"read as {touched[0]!r}")
    else:
        notes.append(f"component {given!r} is not one of {', '.join(COMPONENTS)}; "
                     f"read as {touched[0]!r} from the edit" if given else
                     f"component missing: read as {touched[0]!r} from the edit")


def component_of(edit: Any) -> str | None:
    """The component kind an edit touches, from its op and path."""
    if not isinstance(edit, dict):
        return None
    if edit.get("op") == "append_rule":
        return "system_prompt"
    if edit.get("op") in ("register_component", "unregister_component"):
        return edit.get("kind") if edit.get("kind") in BY_NAME else "settings"
    path = str(edit.get("path") or edit.get("file") or "")
    if (kind := kind_of_path(path)) is not None:
        return "tool_impl" if kind.name == "tool" and path.endswith(".py") else kind.name
    prefixes = [("memory/", "memory"), ("harness.yaml", "settings")]
    return next((kind for prefix, kind in prefixes if path.startswith(prefix)),
                "system_prompt" if path.endswith((".md", ".j2")) else None)


def _expected_delta(manifest: dict[str, Any], tasks: int, notes: list[str]) -> None:
    raw = manifest.get("expected_delta")
    value = _number(raw)
    if value is not None and value != raw:
        manifest["expected_delta"] = value
        notes.append(f"read expected_delta {raw!r} as {value:g}")
    elif raw is None and tasks:
        fixes = manifest.get("predicted_fixes") or []
        probable = sum(p.get("probability", 0) for p in fixes
                       if isinstance(p, dict) and isinstance(p.get("probability"), float | int))
        manifest["expected_delta"] = round(100 * probable / tasks, 1)
        notes.append(f"expected_delta missing: {manifest['expected_delta']:g} points from your "
                     "predicted fixes")


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    match = _NUMBER.match(raw) if isinstance(raw, str) else None
    return float(match.group(1)) if match else None


def _describe(edit: Any) -> str:
    if not isinstance(edit, dict):
        return "the edit"
    target = edit.get("text") or edit.get("path") or edit.get("file") or edit.get("name") or ""
    return f"{edit.get('op', 'edit')}: {' '.join(str(target).split())[:160]}"
