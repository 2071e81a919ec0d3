"""One evolve-agent session: its prompt (jinja2 templates), its toolbox, the runtime loop, and the
outcome the iteration loop turns into a manifest. Saving the manifest is the loop's job."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import get_args

from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel, ConfigDict

from agent.events import EventSink
from agent.loop import run_tools_agent
from agent.model import Model
from agent.parsing import format_instructions
from agent.tools import DONE, ToolRegistry, done_tool
from evoharness.errors import EvoError
from manifests.schema import ChangeManifestEntry
from traces.store import TraceStore
from workspace.repo import HarnessRepo
from workspace.spec import Budgets, ComponentKind, Settings

from .change import CHANGE_SPEC, ChangeTool
from .tools import LibraryOffer, SqlHandler, evidence_tool, library_tool, workspace_tools

# Reading evidence and writing edits needs more room than a code agent's step: longer replies, and
# a session of many steps over one context.
DEFAULT_SETTINGS = Settings(max_output_tokens=1024,
                            budgets=Budgets(tokens=400_000, wall_seconds=3600.0))
_TEMPLATES = Environment(loader=PackageLoader("evolve.agent", "templates"),
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
    exit_reason: str  # the runtime's, or "invalid_manifest" when the retry rule ended the session


def run_evolve_agent(*, repo: HarnessRepo, model: Model, evidence_dir: Path,
                     db_path: Path, run_id: str, iteration: int, train_tasks: list[str],
                     max_changes: int, max_steps: int, sink: EventSink, scoreboard_md: str,
                     store: TraceStore | None = None, settings: Settings | None = None,
                     forbidden: Iterable[str] = (), library: Sequence[LibraryOffer] = (),
                     clock: Callable[[], float] = time.monotonic) -> EvolveOutcome:
    """Let the evolve agent read the evidence and commit up to `max_changes` changes to `repo`.

    `store`, the loop's open TraceStore on `db_path`, is queried instead of opening the file again
    (DuckDB refuses a second handle on it); `settings` (default DEFAULT_SETTINGS) chooses the action format; its max_steps is replaced.
    `forbidden` (the hidden tests' lines) is redacted from what the SQL tool shows; `library`
    lists the improvement-library entries that match this iteration's failures."""
    if repo.is_dirty():
        raise EvoError("uncommitted changes in the workspace", file=repo.path,
                       hint="the evolve agent commits every change; clean the workspace first")
    changes = ChangeTool(repo, run_id=run_id, iteration=iteration, known_tasks=train_tasks,
                         max_changes=max_changes,
                         offered=frozenset(offer.entry_id for offer in library))
    sql = SqlHandler(store or db_path, forbidden)
    registry = _toolbox(repo.path, evidence_dir, sql, changes, library)
    settings = (settings or DEFAULT_SETTINGS).model_copy(update={"max_steps": max_steps})
    system = render_system_prompt(registry, settings, train_tasks, max_changes, scoreboard_md,
                                  [offer.summary for offer in library])
    instruction = _TEMPLATES.get_template("task.md.j2").render(iteration=iteration,
                                                               max_changes=max_changes)
    try:
        result = run_tools_agent(model, registry, system, instruction, sink, settings, clock=clock)
    finally:
        sql.close()
    exit_reason = "invalid_manifest" if changes.gave_up else result.exit_reason
    return EvolveOutcome(manifest_changes=changes.entries,
                         no_change_reason=_no_change_reason(changes, exit_reason),
                         tokens_in=result.tokens_in, tokens_out=result.tokens_out,
                         steps=result.steps, exit_reason=exit_reason)


def _toolbox(workspace: Path, evidence_dir: Path, sql: SqlHandler, changes: ChangeTool,
             library: Sequence[LibraryOffer]) -> ToolRegistry:
    registry = ToolRegistry()
    reads = [library_tool(library)] if library else []
    for spec, handler in [*workspace_tools(workspace), evidence_tool(evidence_dir),
                          (SqlHandler.spec, sql), *reads, (CHANGE_SPEC, changes),
                          (DONE, done_tool)]:
        registry.add(spec, handler)
    return registry


def render_system_prompt(registry: ToolRegistry, settings: Settings, train_tasks: list[str],
                         max_changes: int, scoreboard_md: str, library: Sequence[str] = ()) -> str:
    """The evolve agent's system prompt; only train task ids ever reach it."""
    return _TEMPLATES.get_template("system.md.j2").render(
        tools=[spec for spec in registry.specs if spec.name != DONE.name],
        reply_protocol=format_instructions(settings.action_format, registry.names),
        action_format=settings.action_format,
        components=get_args(ComponentKind),
        task_ids=train_tasks,
        example_task=train_tasks[0] if train_tasks else "task-id",
        max_changes=max_changes,
        scoreboard=scoreboard_md.strip() or "None yet: this is the first iteration with changes.",
        library=list(library),
    )


def _no_change_reason(changes: ChangeTool, exit_reason: str) -> str | None:
    if changes.entries:
        return None
    return changes.gave_up or f"the evolve agent made no change ({exit_reason})"
