"""The change-manifest contract: one pre-registered, falsifiable prediction per harness commit
(pydantic records and their JSON Schema). Reading, writing and judging manifests live elsewhere."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evoharness.workspace.spec import ComponentKind

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class EvidenceRef(BaseModel):
    """Where the failure a change targets was seen: a task, optionally one rollout (by id, or by
    its attempt number as the evidence files list them) and one event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(min_length=1)
    rollout_id: str | None = None
    attempt: int | None = Field(None, ge=0)
    event_seq: int | None = Field(None, ge=0)


class Prediction(BaseModel):
    """A task the change is expected to flip, with the stated probability that it will."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(min_length=1)
    probability: float = Field(ge=0.0, le=1.0)


class ChangeManifestEntry(BaseModel):
    """One change = one git commit: why it was made and what it should do to which tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID_PATTERN, description="stable change id, also the Change-Id trailer")
    component: ComponentKind
    files: list[str] = Field(min_length=1)
    commit: str = Field(min_length=7)
    failure_evidence: list[EvidenceRef] = Field(default_factory=list)
    root_cause: str = Field(min_length=1)
    targeted_fix: str = Field(min_length=1)
    predicted_fixes: list[Prediction] = Field(default_factory=list)
    predicted_regressions: list[Prediction] = Field(default_factory=list)
    expected_delta: float = Field(ge=-100.0, le=100.0, description="pass-rate points, e.g. 5.0")

    @model_validator(mode="after")
    def _one_claim_per_task(self) -> ChangeManifestEntry:
        # A task predicted twice (or both fixed and regressed) makes the prediction unfalsifiable.
        seen: set[str] = set()
        for prediction in [*self.predicted_fixes, *self.predicted_regressions]:
            if prediction.task_id in seen:
                raise ValueError(f"task {prediction.task_id!r} is predicted more than once")
            seen.add(prediction.task_id)
        return self

    def predicted_tasks(self) -> set[str]:
        return {p.task_id for p in [*self.predicted_fixes, *self.predicted_regressions]}


class IterationManifest(BaseModel):
    """Every change the evolve agent made in one iteration, written before the next evaluation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str = Field(min_length=1)
    iteration: int = Field(ge=0)
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    harness_commit_before: str = Field(min_length=7)
    changes: list[ChangeManifestEntry] = Field(default_factory=list)
    no_change_reason: str | None = None

    @field_validator("changes")
    @classmethod
    def _unique_ids(cls, changes: list[ChangeManifestEntry]) -> list[ChangeManifestEntry]:
        ids = [change.id for change in changes]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate change ids {duplicates}")
        return changes

    @model_validator(mode="after")
    def _explains_empty(self) -> IterationManifest:
        if not self.changes and not self.no_change_reason:
            raise ValueError("an iteration without changes must give no_change_reason")
        return self


def json_schema() -> dict:
    """The JSON Schema of a manifest file, for the evolve agent and for external tools."""
    return IterationManifest.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
