"""One evolve-agent session: its prompt (jinja2 templates), its toolbox, the runtime loop, and the
outcome the iteration loop turns into a manifest: a committed change or a specific reason for none.
Saving the manifest is the loop's job."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, get_args

from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel, ConfigDict

from evoharness.agent.events import EventSink
from evoharness.agent.loop import run_tools_agent
from evoharness.agent.model import Model
from evoharness.agent.parsing import format_instructions
from evoharness.agent.tools import DONE, Handler, ToolRegistry, ToolResult, done_tool, refused
from evoharness.errors import EvoError
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.schema import ChangeManifestEntry
from evoharness.traces.store import TraceStore
from evoharness.workspace.edits import setting_keys
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import Budgets, ComponentKind, Settings, ToolSpec

from .change import LOOSE_SPEC, PLACEHOLDER, ChangeTool, applying_call, change_spec, remedy_hint
from .components import skeleton_tool
from .lessons import harness_rules, lessons_markdown, same_lesson, tried_lessons
from .tools import LibraryOffer, SqlHandler, evidence_tool, library_tool, workspace_tools

# Reading evidence and writing edits needs more room than a code agent's step: longer replies, and
# a session of many steps over one context.
DEFAULT_SETTINGS = Settings(max_output_tokens=1024,
                            budgets=Budgets(tokens=400_000, wall_seconds=3600.0))
REASON_WORDS = 8  # a no-change reason shorter than this says nothing specific
STEPS_WARNING = 3  # with this many steps left and no change, every tool result says so
REPEAT_WINDOW = 3  # a call identical to one of the last this many is not run again
STUCK_REPEATS = 2  # repeated calls in a row, refused, after which only change or done remain
FINISHING = frozenset({"change", DONE.name})
PATTERNS_HEADING = "## Failure patterns"  # debugger/templates/overview.md.j2
_FIRST_ROLLOUT = re.compile(r"\]\((rollouts/[^)\s]+\.md)\)")
SHOWN_RULES = 20
_TEMPLATES = Environment(loader=PackageLoader("evoharness.evolve.agent", "templates"),
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                         keep_trailing_newline=True, autoescape=False)
_TEMPLATES.policies["json.dumps_kwargs"] = {"sort_keys": False}  # schemas read better in order


def argument_summary(schema: dict) -> str:
    """A tool's arguments as `name: type` pairs. The full JSON schemas cost a small model more
    prompt tokens than all the instructions, and the edit operations are spelled out anyway."""
    required = set(schema.get("required", []))
    parts = [f"{name}: {spec.get('type', 'any')}{'' if name in required else ' (optional)'}"
             for name, spec in schema.get("properties", {}).items()]
    return ", ".join(parts) or "none"


_TEMPLATES.filters["argument_summary"] = argument_summary


class EvolveOutcome(BaseModel):
    """What one session produced: committed changes (each with its commit), or why there are none."""

    model_config = ConfigDict(frozen=True)

    manifest_changes: list[ChangeManifestEntry]
    no_change_reason: str | None = None
    tokens_in: int
    tokens_out: int
    steps: int
    exit_reason: str  # the runtime's, or "invalid_manifest" when refusals ended the session
    specific: bool = True  # a change, or a no-change reason the agent stated specifically


def specific_reason(text: str) -> bool:
    """Whether a no-change reason says something: REASON_WORDS words or more, no placeholder."""
    return len(text.split()) >= REASON_WORDS and not PLACEHOLDER.search(text)


class Finish:
    """`done` for the evolve agent: after a change, any summary; without one, the summary is the
    no-change reason. With library entries offered, the first such `done` is sent back with the
    call that applies the best-matching entry (the 1.5B read the evidence, named the very pattern
    an offered entry answers, and ended with no change); a vague reason is sent back once to be
    made specific."""

    def __init__(self, changes: ChangeTool) -> None:
        self.changes = changes
        self.reason: str | None = None
        self._asked = False
        self._offered = False

    def __call__(self, arguments: dict[str, Any]) -> ToolResult:
        summary = " ".join(str(arguments.get("summary", "")).split())
        if self.changes.entries:
            return self._accept(summary, arguments)
        if (top := self.changes.next_offer()) and not self._offered:
            self._offered = True
            others = [entry for entry in self.changes.offered if entry != top.entry_id]
            return refused("permanent", "no change was made, and the improvement library offers "
                           "remedies for this run's failures",
                           f"apply the best match, {top.entry_id}, with: change "
                           f"{json.dumps(applying_call(top))} (or another offered entry: "
                           f"{', '.join(others) or 'none'}); or call done again with the "
                           "specific reason none of them would help")
        if specific_reason(summary) or self._asked:
            return self._accept(summary, arguments)
        self._asked = True
        return refused("permanent", f"no change was made, and {summary!r} does not say why",
                       "make a change, or call done again with the specific reason: which failure "
                       "patterns or tasks you looked at and why no harness change would help them")

    def _accept(self, summary: str, arguments: dict[str, Any]) -> ToolResult:
        self.reason = summary
        return done_tool(arguments)


class Guide:
    """Wraps every handler so a small model keeps moving: a call identical to a recent one is not
    run again, each read of evidence or harness is followed by the workflow's next step, and with
    STEPS_WARNING steps left and nothing committed, each result says so. (The 1.5B, unguided, read
    overview.md ten times in a row until its time ran out.)

    Once it is stuck with nothing committed (STUCK_REPEATS refused repeats in a row, or
    STEPS_WARNING steps left), only change and done remain: `allowed` narrows the decoding of the
    next reply to them, and without constrained decoding any other call is refused. (In the
    README demo the 1.5B, told twice that its read's result was above, made the same read until
    its steps ran out, and the session ended with nothing.)"""

    def __init__(self, max_steps: int, changes: ChangeTool) -> None:
        self.left = max_steps
        self.changes = changes
        self.recent: list[str] = []
        self.repeats = 0  # refused repeats in a row
        self.patterns: list[str] = []
        self.example_rollout: str | None = None

    def allowed(self) -> frozenset[str] | None:
        """The tools the next call may use, when not all (None)."""
        stuck = self.repeats >= STUCK_REPEATS or self.left <= STEPS_WARNING
        return FINISHING if stuck and not self.changes.entries else None

    def wrap(self, name: str, handler: Handler) -> Handler:
        def handle(arguments: dict[str, Any]) -> ToolResult:
            allowed = self.allowed()
            self.left -= 1
            call = f"{name} {json.dumps(arguments, sort_keys=True)}"
            if allowed is not None and name not in allowed:
                result = refused("permanent", f"no more {name}: only change or done remain",
                                 "call change with the root cause of the failure pattern with "
                                 "the most rollouts, or done with the specific reason there is "
                                 "no change")
            elif name not in FINISHING and call in self.recent[-REPEAT_WINDOW:]:
                self.repeats += 1
                result = refused("permanent", f"you just made this same call ({call}); its result "
                                 "is above", self._next(name, arguments) or "do something else")
            else:
                self.repeats = 0
                result = handler(arguments)
            self.recent.append(call)
            return self._guided(name, arguments, result)
        return handle

    def _guided(self, name: str, arguments: dict[str, Any], result: ToolResult) -> ToolResult:
        if _is_overview(name, arguments) and result.error is None:
            self._read_overview(result.output)
        if result.final is not None:
            return result
        hints = [hint] if result.error is None and (hint := self._next(name, arguments)) else []
        if self.left <= STEPS_WARNING and not self.changes.entries:
            hints.append(f"{self.left} step(s) left: make your change now, or call done with "
                         "the specific reason there is none")
        if not hints:
            return result
        return result.model_copy(update={"output": result.output + "".join(
            f"\n[{hint}]" for hint in hints)})

    def _read_overview(self, text: str) -> None:
        """The failure patterns' titles and the first example rollout, to name next steps with."""
        section = text.partition(PATTERNS_HEADING)[2].partition("\n## ")[0]
        self.patterns = [line[4:].strip() for line in section.splitlines()
                         if line.startswith("### ")]
        found = _FIRST_ROLLOUT.search(section) or _FIRST_ROLLOUT.search(text)
        self.example_rollout = found.group(1) if found else None

    def _next(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The workflow's next step after `name`, or None where the agent should decide."""
        if name == "change":
            return self._after_change()
        if _is_overview(name, arguments):
            example = (f'read_evidence {{"path": "{self.example_rollout}"}}'
                       if self.example_rollout else "read_evidence on one of its rollouts")
            remedy = self._remedy()  # first: hinted after this, the 1.5B sent the
            # overview's own prose rule at once
            return (f"next: {remedy + '; or ' if remedy else ''}pick the failure pattern with the "
                    f"most rollouts and see what the agent did there, e.g. {example}; then call "
                    "change")
        if name == "library":
            return (f'next: to apply it, call change with "library_entry": '
                    f'"{arguments.get("entry", "<id>")}", the tasks it should fix in '
                    "predicted_fixes and the failure_evidence you saw (its edits are applied as "
                    "they are), or call done with the specific reason there is no change")
        if name == "skeleton":
            return ("next: write the body of the skeleton's file, then call change with those "
                    "edits and the manifest fields")
        if name in ("read_evidence", "read_file", "sql", "list_files"):
            remedy = self._remedy()  # first: the 1.5B takes the first concrete call it is shown
            return (f"next: {remedy + '; or ' if remedy else ''}call change with the root cause "
                    "this shows (read_file the harness file first if you will replace a section "
                    "of it), or call done with the specific reason there is none")
        return None

    def _remedy(self) -> str:
        """The hint for the best offered entry not applied yet; '' when none is left."""
        offer = self.changes.next_offer()
        return remedy_hint(offer) if offer else ""

    def _after_change(self) -> str:
        """After a commit, while changes are left: the next pattern no committed root cause states
        yet (one change per root cause) and the next offered remedy; else done."""
        causes = [entry.root_cause for entry in self.changes.entries]
        left = [title for title in self.patterns
                if not any(same_lesson(title, cause) for cause in causes)]
        options = [option for option in (
            self._remedy(), left and f'if another failure pattern has a different root cause, '
                                     f'e.g. "{left[0]}", make one change for it') if option]
        if len(self.changes.entries) >= self.changes.max_changes or not options:
            return "next: call done with a short summary"
        return f"next: {'; or '.join(options)}; otherwise call done with a short summary"


def _is_overview(name: str, arguments: dict[str, Any]) -> bool:
    return name == "read_evidence" and str(arguments.get("path", "overview.md")).endswith(
        "overview.md")


def run_evolve_agent(*, repo: HarnessRepo, model: Model, evidence_dir: Path,
                     db_path: Path, run_id: str, iteration: int, train_tasks: list[str],
                     max_changes: int, max_steps: int, sink: EventSink, scoreboard_md: str,
                     store: TraceStore | None = None, settings: Settings | None = None,
                     forbidden: Iterable[str] = (), library: Sequence[LibraryOffer] = (),
                     tried: Sequence[ChangeRecord] = (),
                     clock: Callable[[], float] = time.monotonic) -> EvolveOutcome:
    """Let the evolve agent read the evidence and commit up to `max_changes` changes to `repo`.

    `store`, the loop's open TraceStore on `db_path`, is queried instead of opening the file again
    (DuckDB refuses a second handle on it); `settings` (default DEFAULT_SETTINGS) chooses the
    action format; its max_steps is replaced. `forbidden` (the hidden tests' lines) is redacted
    from what the SQL tool shows; `library` lists the improvement-library entries that match this
    iteration's failures; `tried` is the run's earlier changes with their fate (the ledger's)."""
    if repo.is_dirty():
        raise EvoError("uncommitted changes in the workspace", file=repo.path,
                       hint="the evolve agent commits every change; clean the workspace first")
    lessons = tried_lessons(tried, repo)
    offered = sorted(offer.entry_id for offer in library)
    changes = ChangeTool(repo, run_id=run_id, iteration=iteration, known_tasks=train_tasks,
                         max_changes=max_changes, tried=lessons,
                         offered={offer.entry_id: offer for offer in library},
                         harness_rules=lambda: harness_rules(repo))
    finish = Finish(changes)
    sql = SqlHandler(store or db_path, forbidden)
    shown = _shown_specs(repo.path, evidence_dir, train_tasks, library, offered)
    guide = Guide(max_steps, changes)
    registry = _toolbox(repo.path, evidence_dir, sql, changes, finish, guide, library)
    settings = (settings or DEFAULT_SETTINGS).model_copy(update={"max_steps": max_steps})
    system = render_system_prompt(
        shown, settings, train_tasks, max_changes, scoreboard_md, lessons=lessons_markdown(lessons),
        rules=harness_rules(repo, bullets_only=True)[:SHOWN_RULES],
        library=[offer.summary for offer in library])
    instruction = _TEMPLATES.get_template("task.md.j2").render(iteration=iteration,
                                                               max_changes=max_changes)
    try:
        result = run_tools_agent(model, registry, system, instruction, sink, settings,
                                 decoding_specs=shown, allowed_tools=guide.allowed, clock=clock)
    finally:
        sql.close()
    exit_reason = "invalid_manifest" if changes.gave_up else result.exit_reason
    reason = _no_change_reason(changes, finish, exit_reason)
    return EvolveOutcome(manifest_changes=changes.entries, no_change_reason=reason,
                         tokens_in=result.tokens_in, tokens_out=result.tokens_out,
                         steps=result.steps, exit_reason=exit_reason,
                         specific=bool(changes.entries) or (
                             finish.reason is not None and specific_reason(finish.reason)))


def _shown_specs(workspace: Path, evidence_dir: Path, train_tasks: list[str],
                 library: Sequence[LibraryOffer], offered: list[str]) -> list[ToolSpec]:
    """The tools as the model sees them and is decoded under (the strict `change`)."""
    reads = [library_tool(library)[0]] if library else []
    return [*(spec for spec, _ in workspace_tools(workspace)), evidence_tool(evidence_dir)[0],
            SqlHandler.spec, *reads, skeleton_tool(workspace)[0],
            change_spec(train_tasks, offered), DONE]


def _toolbox(workspace: Path, evidence_dir: Path, sql: SqlHandler, changes: ChangeTool,
             finish: Finish, guide: Guide, library: Sequence[LibraryOffer]) -> ToolRegistry:
    registry = ToolRegistry()
    reads = [library_tool(library)] if library else []
    for spec, handler in [*workspace_tools(workspace), evidence_tool(evidence_dir),
                          (SqlHandler.spec, sql), *reads, skeleton_tool(workspace),
                          (LOOSE_SPEC, changes), (DONE, finish)]:
        registry.add(spec, guide.wrap(spec.name, handler))
    return registry


def render_system_prompt(tools: list[ToolSpec], settings: Settings, train_tasks: list[str],
                         max_changes: int, scoreboard_md: str, *, lessons: str = "",
                         rules: list[str] = (), library: Sequence[str] = ()) -> str:
    """The evolve agent's system prompt; only train task ids ever reach it."""
    return _TEMPLATES.get_template("system.md.j2").render(
        tools=[spec for spec in tools if spec.name != DONE.name],
        reply_protocol=format_instructions(settings.action_format, [t.name for t in tools]),
        action_format=settings.action_format,
        components=get_args(ComponentKind),
        setting_keys=setting_keys(),
        task_ids=train_tasks,
        max_changes=max_changes,
        scoreboard=scoreboard_md.strip() or "None yet: this is the first iteration with changes.",
        lessons=lessons or "None: no change has been made in this run yet.",
        rules=list(rules),
        library=list(library),
    )


def _no_change_reason(changes: ChangeTool, finish: Finish, exit_reason: str) -> str | None:
    if changes.entries:
        return None
    if changes.gave_up:
        return changes.gave_up
    if finish.reason:
        return f"no change: {finish.reason}"
    return f"the evolve agent made no change ({exit_reason})"
