"""The evolve agent's `change` tool: one call = one validated manifest entry + one validated edit batch
= one git commit, refused before it costs an evaluation when it breaks the verdict or restates a
rule the harness has (or had and lost). Reading the call as meant is tidy.py's; similarity is
lessons.py's; the edit operations are workspace/'s; the manifest schema and trailers manifests/'."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evoharness.agent.tools import ToolError, ToolResult, refused
from evoharness.errors import EvoError, ValidationFailed
from evoharness.manifests.schema import ChangeManifestEntry
from evoharness.manifests.store import parse_manifest, trailers_for
from evoharness.workspace.edits import (
    AddFile,
    AppendRule,
    EditRefused,
    ReplaceSection,
    WriteFile,
    apply_edits,
    parse_edits,
    prompt_sections_as_rules,
    setting_keys,
)
from evoharness.workspace.kinds import KIND_NAMES
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import ToolSpec

from .lessons import Lesson, restated, rule_lines, workspace_text
from .tidy import COMPONENTS, EDIT_KEYS, LIBRARY_KEY, MANIFEST_KEYS, tidy_change
from .tools import LibraryOffer

LIBRARY_TRAILER = "Library-Entry"  # on a change that applies an improvement-library entry
REFUSALS = 3  # refused calls in a row that end the session; the one before it gets a corrective turn
PENDING_COMMIT = "0" * 40  # the entry is validated before its commit exists
SHOWN_TASK_IDS = 60  # a refusal lists the known ids, up to this many
# The prompt's examples are placeholders in words ("<one general rule ...>"), unlike `<file>`.
PLACEHOLDER = re.compile(r"<[a-z][a-z ,'/-]{8,}>")

# What the registry checks: next to nothing, so that every mistake reaches the handler, which
# forgives what costs nothing and counts the rest toward REFUSALS. What the model is shown and
# decoded under is change_spec(), strict.
LOOSE_SPEC = ToolSpec(name="change", description="", parameters={"type": "object"})
_STRING = {"type": "string"}
_EDITS = [
    ("append_rule", {"text": {**_STRING, "minLength": 12}}),
    ("replace_section", {"file": _STRING, "heading": _STRING, "text": _STRING}),
    ("add_file", {"path": _STRING, "content": _STRING}),
    ("write_file", {"path": _STRING, "content": _STRING}),
    ("delete_file", {"path": _STRING}),
    ("register_component", {"kind": {"type": "string", "enum": list(KIND_NAMES)},
                            "name": _STRING}),
    ("unregister_component", {"kind": {"type": "string", "enum": list(KIND_NAMES)},
                              "name": _STRING}),
    ("set_setting", {"key": {"type": "string", "enum": setting_keys()},
                     "value": {"type": ["string", "number", "boolean"]}}),
]


# The order of the change call's fields, the schema's: a server decoding under it (llama.cpp's
# llguidance) writes an object's properties in this order, so every call the model is shown
# follows it. The library entry comes first: last, after the prediction, the 1.5B copied an
# offered entry's call four times with every field but that one (a change with no edits).
FIELD_ORDER = (LIBRARY_KEY, "root_cause", "failure_evidence", "component", "edits",
               "targeted_fix", "predicted_fixes", "predicted_regressions", "expected_delta")


def in_field_order(call: dict[str, Any]) -> dict[str, Any]:
    """`call` with its keys in FIELD_ORDER; a key it does not name keeps its place after them."""
    rank = {key: n for n, key in enumerate(FIELD_ORDER)}
    return dict(sorted(call.items(), key=lambda item: rank.get(item[0], len(rank))))


def _closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required,
            "additionalProperties": False}


def change_spec(known_tasks: list[str], offered: list[str] = ()) -> ToolSpec:
    """The `change` tool as the model sees it and is decoded under: the library entries `offered`
    this session first (an optional field, only when there are some), then the manifest fields
    in the order worth thinking in (cause, evidence, edit, prediction), task ids and components
    as enums."""
    task = {"type": "string", "enum": known_tasks} if known_tasks else _STRING
    prediction = {"type": "array", "items": _closed({"task_id": task,
                                                     "probability": {"type": "number"}})}
    edit = {"oneOf": [_closed({"op": {"type": "string", "const": op}, **fields})
                      for op, fields in _EDITS]}
    return ToolSpec(
        name="change",
        description=(
            "Make ONE harness change (one root cause) as one commit with its prediction. The edits "
            "are validated together; if refused, nothing is changed and the reasons come back."),
        parameters=_closed(in_field_order({
            "root_cause": {**_STRING, "description": "what the AGENT does wrong, in general"},
            "failure_evidence": {"type": "array", "minItems": 1, "items": _closed(
                {"task_id": task, "attempt": {"type": "integer"}}, ["task_id"])},
            "component": {"type": "string", "enum": list(COMPONENTS)},
            "edits": {"type": "array", "minItems": 1, "maxItems": 4, "items": edit},
            "targeted_fix": {**_STRING, "description": "how this change stops it"},
            "predicted_fixes": {**prediction, "minItems": 1,
                                "description": "tasks this should make pass"},
            "predicted_regressions": {**prediction, "description": "tasks this may break"},
            "expected_delta": {"type": "number", "description": "pass-rate points, e.g. 5"},
            **({LIBRARY_KEY: {"type": "string", "enum": offered,
                              "description": "the improvement-library entry this change "
                                             "applies, if any: its edits are applied, leave "
                                             "edits out"}} if offered else {}),
        }), required=list(MANIFEST_KEYS) + ([] if offered else ["edits"])),
    )


class ChangeTool:
    """The `change` handler and what it produced: the entries committed, and `gave_up` (the reason)
    once REFUSALS refused calls in a row ended the session."""

    def __init__(self, repo: HarnessRepo, *, run_id: str, iteration: int, known_tasks: list[str],
                 max_changes: int, tried: list[Lesson] = (),
                 offered: Mapping[str, LibraryOffer] | None = None,
                 harness_rules: Callable[[], list[str]] | None = None) -> None:
        self.repo = repo
        self.offered = dict(offered or {})  # the library entries this session was shown, by id
        self.run_id = run_id
        self.iteration = iteration
        self.known_tasks = known_tasks
        self.max_changes = max_changes
        self.reverted = [lesson for lesson in tried if lesson.decision == "revert" and lesson.rule]
        self.harness_rules = harness_rules or (lambda: [])
        self.entries: list[ChangeManifestEntry] = []
        self.applied: list[str] = []  # the offered entries committed this session
        self.gave_up: str | None = None
        self.refused_in_a_row = 0
        # Change ids must be unique over the run and match the manifest's id pattern.
        self._id_prefix = re.sub(r"[^A-Za-z0-9._-]", "-", f"{run_id}-it{iteration:03d}")

    def __call__(self, arguments: dict[str, Any]) -> ToolResult:
        if len(self.entries) >= self.max_changes:
            return refused("permanent", f"the limit of {self.max_changes} change(s) this iteration "
                           "is reached", "finish with done")
        arguments, from_entry = self._from_entry(arguments)
        tidied = tidy_change(arguments, self.known_tasks)
        read_as = "".join(f"\n(read as meant: {note})" for note in [*from_entry, *tidied.notes])
        # The manifest and the edits are checked together, so one refusal names every problem.
        draft, manifest_problems = _attempt(self._draft, tidied.manifest)
        manifest_problems += self._library_problems(tidied.library_entry)
        edits, edit_problems = _attempt(_edits, tidied.edits)
        if edits is not None:
            edits, sections = prompt_sections_as_rules(self.repo.path, edits)
            read_as += "".join(f"\n(read as meant: {note})" for note in sections)
        if manifest_problems or edits is None:
            what = "invalid manifest" if manifest_problems else "edit refused"
            return self._refused([*manifest_problems, *edit_problems], tidied.manifest, read_as,
                                 what)
        applies = tidied.library_entry
        trailers = trailers_for(draft) | ({LIBRARY_TRAILER: applies} if applies else {})
        try:
            output = self._commit(draft, edits, trailers)
        except EditRefused as error:
            return self._refused(error.problems, tidied.manifest, read_as, "edit refused")
        self.refused_in_a_row = 0
        if applies:
            self.applied.append(applies)
        return ToolResult(output=output + read_as)

    def next_offer(self) -> LibraryOffer | None:
        """The best-matching offered entry not applied yet (offers come best match first)."""
        return next((offer for entry_id, offer in self.offered.items()
                     if entry_id not in self.applied), None)

    def _draft(self, manifest: dict[str, Any]) -> ChangeManifestEntry:
        """The manifest entry with a pending commit, validated with the run's train task ids."""
        entry = {"id": f"{self._id_prefix}-c{len(self.entries) + 1}", "files": ["(pending)"],
                 "commit": PENDING_COMMIT, **manifest}
        wrapper = {"run_id": self.run_id, "iteration": self.iteration,
                   "harness_commit_before": PENDING_COMMIT, "changes": [entry]}
        draft = parse_manifest(json.dumps(wrapper), Path("manifest"), self.known_tasks)
        if not draft.changes[0].predicted_fixes:
            raise ValidationFailed("manifest", [EvoError(
                "no prediction: name at least one task this change should fix",
                field="predicted_fixes", hint="a change that predicts nothing cannot be judged")])
        return draft.changes[0]

    def _check_new(self, lines: list[str], existing: list[str]) -> None:
        """Refuse rule lines that are a placeholder, or that all restate a rule the harness has or
        one reverted earlier in the run: each would cost an evaluation to learn nothing."""
        if not lines:
            return
        if any(PLACEHOLDER.search(line) for line in lines):
            raise EditRefused("the change", [EvoError(
                "the rule is the prompt's placeholder, not a rule", field="edits", value=lines[0],
                hint="write your own rule for the root cause you found")])
        problems = []
        for line in lines:
            if (rule := restated(line, existing)) is not None:
                problems.append(f"already in the harness: {rule!r}")
            elif (lesson := self._reverted_match(line)) is not None:
                problems.append(f"already tried in iteration {lesson.iteration} "
                                f"({lesson.change_id}, {lesson.verdict}) and reverted: "
                                f"{lesson.rule!r}")
            else:
                return  # one new lesson is enough for the change to be worth an evaluation
        raise EditRefused("the change", [EvoError(
            problem, field="edits", hint="find a different root cause or a different fix")
            for problem in problems])

    def _from_entry(self, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """A call naming an offered entry that has recorded edits gets exactly those edits and the
        entry's component (so the entry's record is about one thing), and the entry's root cause,
        fix and evidence where it leaves them out; the notes say what was taken. A call with no
        edits and an offered entry's own targeted fix, word for word, is that entry's offered
        call without its name, and applies it."""
        named = arguments.get(LIBRARY_KEY)
        entry_id = str(named).strip() if named else self._copied_offer(arguments)
        offer = self.offered.get(entry_id) if entry_id else None
        if offer is None or not offer.edits:
            return arguments, []
        filled = {key: value for key, value in arguments.items() if key not in EDIT_KEYS}
        filled[LIBRARY_KEY] = offer.entry_id
        filled["edits"] = [dict(edit) for edit in offer.edits]
        filled["component"] = offer.component or arguments.get("component")
        notes = [] if named else [f"library_entry missing: the call is library entry "
                                  f"{offer.entry_id}'s as offered"]
        notes.append(f"the edits of library entry {offer.entry_id} were applied as they are"
                     + (" (the edits sent were left out: to change an entry, send your own edits "
                        "without library_entry)" if any(k in arguments for k in EDIT_KEYS) else ""))
        defaults = {"root_cause": offer.root_cause, "targeted_fix": offer.targeted_fix,
                    "failure_evidence": [{"task_id": t} for t in offer.tasks[:3]]}
        for key, value in defaults.items():
            if not arguments.get(key) and value:
                filled[key] = value
                notes.append(f"{key} missing: taken from library entry {offer.entry_id}")
        return filled, notes

    def _copied_offer(self, arguments: dict[str, Any]) -> str | None:
        """The offered entry whose call this is but for its name (the 1.5B copied an offered
        call four times with every field but library_entry, each refused for having no edits)."""
        if any(key in arguments for key in EDIT_KEYS):
            return None
        fix = " ".join(str(arguments.get("targeted_fix") or "").split())
        return next((offer.entry_id for offer in self.offered.values()
                     if fix and fix == " ".join(offer.targeted_fix.split())), None)

    def _library_problems(self, applies: str | None) -> list[EvoError]:
        if applies is None or applies in self.offered:
            return []
        return [EvoError("no such library entry was offered", field=LIBRARY_KEY, value=applies,
                         hint=f"offered: {', '.join(sorted(self.offered)) or 'none'}")]

    def _reverted_match(self, line: str) -> Lesson | None:
        rule = restated(line, [lesson.rule for lesson in self.reverted])
        return next((lesson for lesson in self.reverted if lesson.rule == rule), None)

    def _commit(self, draft: ChangeManifestEntry, edits: list[Any],
                trailers: dict[str, str]) -> str:
        lines = [line for edit in edits for line in _new_rule_lines(self.repo.path, edit)]
        existing = self.harness_rules()  # before the edits add their own lines
        apply_edits(self.repo, edits)  # a harness the edits break is refused first: the worse fault
        if not self.repo.is_dirty():
            raise EditRefused("the change", [EvoError("the edits change nothing", field="edits")])
        try:
            self._check_new(lines, existing)
        except EditRefused:
            self.repo.reset_hard(self.repo.head())  # the session started clean, and each commit too
            raise
        sha = self.repo.commit_change(_message(draft), change_id=draft.id,
                                      component=draft.component, trailers=trailers)
        entry = ChangeManifestEntry.model_validate(
            {**draft.model_dump(), "commit": sha, "files": self.repo.changed_files(sha)})
        self.entries.append(entry)
        left = self.max_changes - len(self.entries)
        return (f"committed change {entry.id} as {sha[:12]} ({', '.join(entry.files)}); "
                f"{left} change(s) left this iteration")

    def _refused(self, found: list[EvoError], manifest: dict[str, Any], read_as: str,
                 what: str) -> ToolResult:
        self.refused_in_a_row += 1
        problems = "\n".join(f"- {_one(problem)}" for problem in found)
        message = f"{what}; nothing was changed:\n{problems}{read_as}"
        if self.refused_in_a_row >= REFUSALS:
            self.gave_up = (f"no valid change after {self.refused_in_a_row} refused attempts; "
                            f"the last one: {what}: {problems}")
            return ToolResult(final=self.gave_up, error=ToolError(
                kind="permanent", message=message, suggestion="the session ends here"))
        if self.refused_in_a_row == REFUSALS - 1:
            return refused("permanent", message, _corrective(found, manifest, self.next_offer()))
        known = ", ".join(self.known_tasks[:SHOWN_TASK_IDS])
        return refused("permanent", message,
                       f"fix these and call change again. Task ids: {known}")


def _attempt(check: Callable[[Any], Any], value: Any) -> tuple[Any, list[EvoError]]:
    """(what `check` made of `value`, []), or (None, its problems)."""
    try:
        return check(value), []
    except ValidationFailed as error:
        return None, error.problems


def _edits(raw: list[Any]) -> list[Any]:
    if not raw:
        raise EditRefused("the change", [EvoError("no edits given", field="edits",
                                                  hint="give `edits` (a list of edits)")])
    return parse_edits(raw)


def _new_rule_lines(root: Path, edit: Any) -> list[str]:
    """The prose lines an edit adds to a .md/.j2 file that were not there before (for append_rule,
    its text): what a rule-restating check compares."""
    if isinstance(edit, AppendRule):
        return [edit.text]
    if isinstance(edit, ReplaceSection | WriteFile | AddFile):
        rel = edit.file if isinstance(edit, ReplaceSection) else edit.path
        if not rel.endswith((".md", ".j2")):
            return []
        before = set(rule_lines(workspace_text(root, rel)))
        text = edit.text if isinstance(edit, ReplaceSection) else edit.content
        return [line for line in rule_lines(text) if line not in before]
    return []


def applying_call(offer: LibraryOffer) -> dict[str, Any]:
    """A complete `change` call applying `offer`, predicting a modest fix of the tasks where its
    patterns showed: the agent may send it as it is or revise the prediction."""
    tasks = list(offer.tasks[:3])
    return in_field_order({
        LIBRARY_KEY: offer.entry_id, "component": offer.component,
        "root_cause": offer.root_cause, "targeted_fix": offer.targeted_fix,
        "failure_evidence": [{"task_id": task} for task in tasks],
        "predicted_fixes": [{"task_id": task, "probability": 0.3} for task in tasks],
        "predicted_regressions": [], "expected_delta": 10})


def remedy_hint(offer: LibraryOffer) -> str:
    """The hint that shows an offered entry's complete `change` call: the 1.5B takes the concrete
    call it is shown (offered five entries and shown none, it wrote the overview's prose rule)."""
    return (f"apply the offered remedy {offer.entry_id}, enforced in code, with: change "
            f"{json.dumps(applying_call(offer))}")


def _corrective(found: list[EvoError], manifest: dict[str, Any],
                offer: LibraryOffer | None) -> str:
    """The one short corrective turn after a second refusal: the fields to fix, with the call's
    other fields kept, and the ways out: an offered entry (its call is valid as it is) or done."""
    bad = {_top_field(problem.field) for problem in found}
    skeleton = in_field_order({key: (f"<fix: {key}>" if key in bad else manifest[key])
                               for key in MANIFEST_KEYS if key in manifest or key in bad})
    edit_note = " and `edits`" if bad & set(EDIT_KEYS) else ""
    return (f"refused twice in a row; this is the last try. Call change once more with "
            f"{', '.join(sorted(bad - set(EDIT_KEYS))) or 'the same fields'}{edit_note} fixed, "
            f"like {json.dumps(skeleton)[:600]}; "
            + (f"or {remedy_hint(offer)}; " if offer else "")
            + "or call done with the specific reason you could not make a valid change")


def _top_field(field: str | None) -> str:
    name = (field or "").removeprefix("changes[0].")
    return re.split(r"[.\[]", name, maxsplit=1)[0] or "edits"


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
