"""The attribution scoreboard as the debugger reads it: what the previous iteration's changes did.

manifests/ computes verdicts and scores; the loop adapts its output into these records.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ChangeOutcome(BaseModel):
    """One change of the previous iteration and what the evaluation said about it."""

    model_config = ConfigDict(frozen=True)

    change_id: str
    component: str
    summary: str = ""
    verdict: str  # effective partial ineffective harmful mixed manual
    decision: str  # keep | revert
    predicted_fixes: list[str] = Field(default_factory=list)
    confirmed_fixes: list[str] = Field(default_factory=list)
    regressions: list[str] = Field(default_factory=list)


class Scores(BaseModel):
    """Prediction quality of the iteration (None where undefined, e.g. no predictions made)."""

    model_config = ConfigDict(frozen=True)

    fix_precision: float | None = None
    fix_recall: float | None = None
    reg_precision: float | None = None
    reg_recall: float | None = None
    brier: float | None = None


class Scoreboard(BaseModel):
    model_config = ConfigDict(frozen=True)

    changes: list[ChangeOutcome] = Field(default_factory=list)
    scores: Scores = Field(default_factory=Scores)
