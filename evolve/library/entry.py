"""A library entry: one change that a run kept (or a starter entry shipped with evoharness:
starter.py), with its cue (the failure pattern it answers), its edit, its manifest, its judgement's
numbers, and every place it was tried since (model, suite, run; kept or reverted), so the library
learns where a lesson holds. Files and git are store.py's."""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evoharness.manifests.schema import ChangeManifestEntry
from evoharness.manifests.series import SeriesPlan

ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,80}$"


class Cue(BaseModel):
    """What the change answered: the root cause in words, and the failure signature of the
    rollouts it was made from (outcome/exit reason classes and error events: cue.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_cause: str
    signature: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)  # the failure evidence's tasks, in its run


class Numbers(BaseModel):
    """A trial's figures: the effect on the change's predicted-fix tasks (change arm - base arm
    pass rate over the trial's pairs, mean over tasks), its interval, the rollouts its decision
    used, and its p-value. `interval_over`: "pairs" = over the probe's pairs, holding at every
    look (filing.effect_interval); "tasks" = Student's t over the tasks (evolve/evaluate/compare.py), how
    trials filed before this field existed were read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str
    verdict: str
    effect: float | None = None
    lo: float | None = None
    hi: float | None = None
    confidence: float | None = None
    interval_over: Literal["pairs", "tasks"] = "tasks"
    rollouts: int = 0
    p_value: float | None = None
    reason: str = ""


Where = Literal["predicted", "validation", "heldout"]


class Trial(BaseModel):
    """One place the change was judged: the run that made it (applied = False) or a later run
    that applied the entry (applied = True). `where`: the tasks its numbers are on: its predicted
    (train) tasks, the validation tasks that showed its failure in that run's trial, or held-out
    tasks (an exam or an A/B on tasks no run's evolve agent saw). A trial of a run with validation
    tasks is filed twice, once per test, with the same decision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    change_id: str
    iteration: int
    model: str
    suite: str  # the task folder's name
    suite_path: str
    decision: Literal["keep", "revert"]
    applied: bool
    numbers: Numbers
    filed_at: float
    where: Where = "predicted"
    level: float | None = None  # the alpha its test was judged at (None: filed before it was kept)


class LibraryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=ID_PATTERN)
    origin: Literal["run", "starter"] = "run"  # filed from a run's kept change, or shipped
    cue: Cue
    component: str
    targeted_fix: str
    edits: list[dict[str, Any]] = Field(default_factory=list)  # the `change` tool's edit objects
    manifest: ChangeManifestEntry | None = None  # as pre-registered in its first run
    trials: list[Trial] = Field(default_factory=list)
    # A series of trials registered before the first of them (manifests/series.py): each later
    # decision's level is fixed there, and the series' trials make one claim at its alpha.
    series: SeriesPlan | None = None

    @model_validator(mode="after")
    def _filed_from_a_run(self) -> LibraryEntry:
        if self.origin == "run" and (self.manifest is None or not self.trials):
            raise ValueError("an entry filed from a run needs its manifest and its first trial")
        return self

    @property
    def decisions(self) -> list[Trial]:
        """One trial per judgement (a run's validation numbers repeat its decision)."""
        return [t for t in self.trials if t.where != "validation"]

    def series_trials(self) -> list[Trial]:
        """The decisions filed since the series was registered, in order (its trials)."""
        if self.series is None:
            return []
        return [t for t in self.decisions if t.filed_at >= self.series.registered_at]

    def next_level(self) -> float | None:
        """The level the series fixed for the entry's next trial; None without a series, or
        once its family is used up (a trial then claims nothing for the series)."""
        index = len(self.series_trials())
        return self.series.levels[index] if self.series and index < self.series.size else None

    @property
    def held(self) -> list[Trial]:
        return [t for t in self.decisions if t.decision == "keep"]

    @property
    def failed(self) -> list[Trial]:
        return [t for t in self.decisions if t.decision == "revert"]

    def record(self) -> str:
        """Where it held and where it did not, in one line."""
        if not self.trials:
            return "not tried yet"

        def where(trials: list[Trial]) -> str:
            return "; ".join(f"{t.model} on {t.suite} ({t.run_id})" for t in trials) or "nowhere"

        return (f"kept {len(self.held)}x ({where(self.held)}), reverted {len(self.failed)}x "
                f"({where(self.failed)})")

    def summary(self) -> str:
        return f"`{self.id}`: {self.cue.root_cause} Fix: {self.targeted_fix} [{self.record()}]"

    def text(self, diff: str) -> str:
        """Everything about the entry, as `library show` and the evolve agent read it."""
        origin = ("a starter entry shipped with evoharness" if self.origin == "starter"
                  else "a change a run kept")
        lines = [f"# {self.id}", "", f"origin: {origin}", f"cue: {self.cue.root_cause}",
                 f"failure signature: {', '.join(self.cue.signature) or 'none recorded'}",
                 f"component: {self.component}", f"targeted fix: {self.targeted_fix}",
                 f"record: {self.record()}",
                 *([self.series.line()] if self.series else []), "", "## Trials"]
        indices = {id(t): i for i, t in enumerate(self.series_trials())}
        for t in self.trials:
            n = t.numbers
            effect = "n/a" if n.effect is None else f"{100 * n.effect:+.1f} points"
            if n.lo is not None:
                effect += (f" [{100 * n.lo:+.1f}, {100 * n.hi:+.1f}] ({100 * n.confidence:.4g}% "
                           f"over {n.interval_over})")
            on = {"predicted": "its predicted tasks", "validation": "validation tasks",
                  "heldout": "held-out tasks"}[t.where]
            lines.append(f"- {t.decision} ({n.verdict}, {n.method}) in run {t.run_id} "
                         f"(change {t.change_id}, {'applied from the library' if t.applied else 'made there'}): "
                         f"model {t.model}, suite {t.suite}; effect on {on} {effect}; "
                         f"{n.rollouts} rollouts" + (f"; p = {n.p_value:.3g}" if n.p_value is not None else "")
                         + (f"; level {t.level:g}" if t.level is not None else "")
                         + _series_note(self.series, indices.get(id(t))))
        if not self.trials:
            lines.append("(none yet)")
        lines += ["", "## Edits (a `change` naming it as `library_entry` applies them as they are)",
                  *(_edit_line(edit) for edit in self.edits),
                  *([] if self.edits else ["(not recorded: see the diff)"]),
                  "", "## Diff", diff or "(empty)"]
        return "\n".join(lines)


def _series_note(series: SeriesPlan | None, index: int | None) -> str:
    """Where a trial stands in the entry's series: its number and pre-registered level, or past
    the family (it claims nothing for the series)."""
    if series is None or index is None:
        return ""
    if index >= series.size:
        return f" (past the series' family of {series.size}: claims nothing for it)"
    return f" (series trial {index + 1} of {series.size}, pre-registered level {series.levels[index]:g})"


def _edit_line(edit: dict[str, Any]) -> str:
    """One edit in a line: its op and target; file contents are in the diff below."""
    if "content" in edit or "text" in edit and "heading" in edit:
        size = len(str(edit.get("content", edit.get("text", ""))))
        target = edit.get("path") or f"{edit.get('file')} # {edit.get('heading')}"
        return f"- {edit.get('op')} {target} ({size} characters)"
    return "- " + json.dumps(edit)
