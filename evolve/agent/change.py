"""The evolve agent's `change` tool: one call = one validated manifest entry + one validated edit batch
= one git commit. The edit operations are workspace/'s; the manifest schema and trailers manifests/'."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

from agent.tools import ToolError, ToolResult, refused
from evoharness.errors import EvoError, ValidationFailed
from manifests.schema import ChangeManifestEntry
from manifests.store import parse_manifest, trailers_for
from workspace.edits import EditRefused, apply_edits, parse_edits
from workspace.repo import HarnessRepo
from workspace.spec import ComponentKind, ToolSpec

LIBRARY_TRAILER = "Library-Entry"  # on a change that applies an improvement-library entry
MANIFEST_RETRIES = 1  # an invalid manifest gets one retry; the next one ends the session
PENDING_COMMIT = "0" * 40  # the entry is validated before its commit exists
SHOWN_TASK_IDS = 60  # a refusal lists the known ids, up to this many

_STRING = {"type": "string"}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        'One edit. {"op": "append_rule", "text": ...} adds a bullet to the prompt\'s rules; '
        '{"op": "replace_section", "file": ..., "heading": ..., "text": ...} replaces a markdown '
        'section\'s body; {"op": "add_file", "path": ..., "content": ...} creates a file; '
        '{"op": "write_file", "path": ..., "content": ...} overwrites one; '
        '{"op": "delete_file", "path": ...}; {"op": "register_component", "kind": "tool|middleware|'
        'skill|subagent", "name": ...} lists a component (its files must exist) in harness.yaml; '
        '{"op": "unregister_component", "kind": ..., "name": ...}.'
    ),
    "properties": {
        "op": {"type": "string", "enum": ["append_rule", "replace_section", "add_file",
                                          "write_file", "delete_file", "register_component",
                                          "unregister_component"]},
        "text": _STRING, "file": _STRING, "heading": _STRING, "path": _STRING,
        "content": _STRING, "kind": _STRING, "name": _STRING,
    },
    "required": ["op"],
}
_TASK_LIST = {"type": "array", "items": {"type": "object", "properties": {
    "task_id": _STRING, "probability": {"type": "number"}}}}

# Manifest fields carry types only: their content (required fields, ranges, task ids) is checked
# by the handler, so that every invalid manifest counts toward the one-retry rule.
CHANGE_SPEC = ToolSpec(
    name="change",
    description=(
        "Make ONE harness change (one root cause) as one commit with its prediction. Give `edit` "
        "(one edit) or `edits` (a list). The edits are validated together; if refused, nothing is "
        "changed and the reasons come back."
    ),
    parameters={
        "type": "object",
        "properties": {
            "edit": EDIT_SCHEMA,
            "edits": {"type": "array", "items": EDIT_SCHEMA},
            "component": {"type": "string", "description": " | ".join(get_args(ComponentKind))},
            "root_cause": {"type": "string", "description": "what the AGENT does wrong, in general"},
            "targeted_fix": {"type": "string", "description": "how this change stops it"},
            "failure_evidence": {"type": "array", "items": {"type": "object", "properties": {
                "task_id": _STRING, "rollout_id": _STRING, "attempt": {"type": "integer"}}}},
            "predicted_fixes": {**_TASK_LIST, "description": "tasks this should make pass"},
            "predicted_regressions": {**_TASK_LIST, "description": "tasks this may break"},
            "expected_delta": {"type": "number", "description": "pass-rate points, e.g. 5"},
            "library_entry": {"type": "string", "description": "the improvement-library entry "
                              "this change applies, if any"},
        },
        "additionalProperties": False,
    },
)
_MANIFEST_KEYS = ("component", "root_cause", "targeted_fix", "failure_evidence",
                  "predicted_fixes", "predicted_regressions", "expected_delta")


class ChangeTool:
    """The `change` handler and what it produced: the entries committed, and `gave_up` (the reason)
    once a second invalid manifest in a row ended the session."""

    def __init__(self, repo: HarnessRepo, *, run_id: str, iteration: int, known_tasks: list[str],
                 max_changes: int, offered: frozenset[str] = frozenset()) -> None:
        self.repo = repo
        self.offered = offered  # ids of the library entries this session was shown
        self.run_id = run_id
        self.iteration = iteration
        self.known_tasks = known_tasks
        self.max_changes = max_changes
        self.entries: list[ChangeManifestEntry] = []
        self.gave_up: str | None = None
        self._invalid_in_a_row = 0
        # Change ids must be unique over the run and match the manifest's id pattern.
        self._id_prefix = re.sub(r"[^A-Za-z0-9._-]", "-", f"{run_id}-it{iteration:03d}")

    def __call__(self, arguments: dict[str, Any]) -> ToolResult:
        if len(self.entries) >= self.max_changes:
            return refused("permanent", f"the limit of {self.max_changes} change(s) this iteration "
                           "is reached", "finish with done")
        try:
            draft = self._draft(arguments)
        except ValidationFailed as error:
            return self._invalid_manifest(error)
        self._invalid_in_a_row = 0
        applies = arguments.get("library_entry")
        if applies is not None and applies not in self.offered:
            return refused("permanent", f"no library entry {applies!r} was offered; nothing was "
                           "changed", f"offered: {', '.join(sorted(self.offered)) or 'none'}")
        trailers = trailers_for(draft) | ({LIBRARY_TRAILER: applies} if applies else {})
        try:
            return self._commit(draft, edit_list(arguments), trailers)
        except EditRefused as error:
            return refused("permanent", "edit refused; nothing was changed:\n" + _problems(error),
                           "fix the edit (read the file first) and call change again")

    def _draft(self, arguments: dict[str, Any]) -> ChangeManifestEntry:
        """The manifest entry with a pending commit, validated with the run's train task ids."""
        entry = {"id": f"{self._id_prefix}-c{len(self.entries) + 1}", "files": ["(pending)"],
                 "commit": PENDING_COMMIT,
                 **{key: arguments[key] for key in _MANIFEST_KEYS if key in arguments}}
        wrapper = {"run_id": self.run_id, "iteration": self.iteration,
                   "harness_commit_before": PENDING_COMMIT, "changes": [entry]}
        manifest = parse_manifest(json.dumps(wrapper), Path("manifest"), self.known_tasks)
        return manifest.changes[0]

    def _invalid_manifest(self, error: ValidationFailed) -> ToolResult:
        self._invalid_in_a_row += 1
        problems = _problems(error)
        if self._invalid_in_a_row > MANIFEST_RETRIES:
            self.gave_up = f"invalid manifest: {problems}"
            return ToolResult(final=self.gave_up, error=ToolError(
                kind="permanent", message=self.gave_up, suggestion="the session ends here"))
        known = ", ".join(self.known_tasks[:SHOWN_TASK_IDS])
        return refused("permanent", "invalid manifest; nothing was changed:\n" + problems,
                       f"fix these fields and call change again (last retry). Task ids: {known}")

    def _commit(self, draft: ChangeManifestEntry, edits: list[Any],
                trailers: dict[str, str]) -> ToolResult:
        if not edits:
            raise EditRefused("the change", [EvoError("no edits given", field="edit",
                                                      hint="give `edit` or `edits`")])
        apply_edits(self.repo, parse_edits(edits))
        if not self.repo.is_dirty():
            raise EditRefused("the change", [EvoError("the edits change nothing", field="edits")])
        sha = self.repo.commit_change(_message(draft), change_id=draft.id,
                                      component=draft.component, trailers=trailers)
        entry = ChangeManifestEntry.model_validate(
            {**draft.model_dump(), "commit": sha, "files": self.repo.changed_files(sha)})
        self.entries.append(entry)
        left = self.max_changes - len(self.entries)
        return ToolResult(output=f"committed change {entry.id} as {sha[:12]} "
                                 f"({', '.join(entry.files)}); {left} change(s) left this iteration")


def edit_list(arguments: dict[str, Any]) -> list[Any]:
    """`edit` and `edits` both accepted: a small model often sends one edit object."""
    single = [arguments["edit"]] if "edit" in arguments else []
    return single + list(arguments.get("edits") or [])


def _problems(error: ValidationFailed) -> str:
    return "\n".join(f"- {_one(problem)}" for problem in error.problems)


def _one(problem: EvoError) -> str:
    field = (problem.field or "").removeprefix("changes[0].")
    text = f"{field}: {problem.message}" if field else problem.message
    if problem.file not in (None, "manifest"):
        text = f"{problem.file}: {text}"
    if problem.value is not None:
        text += f" (got {problem.value!r:.120})"
    return text + (f". {problem.hint}" if problem.hint else "")


def _message(entry: ChangeManifestEntry) -> str:
    summary = " ".join(entry.targeted_fix.split())
    summary = summary if len(summary) <= 72 else summary[:69] + "..."
    return f"{entry.component}: {summary}\n\nRoot cause: {entry.root_cause}"
