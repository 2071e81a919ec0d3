"""The rollout result record: what one run of a harness on one task produced. Written atomically
as one JSON file per rollout by the runner, ingested by traces/."""
from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evoharness.agent.events import Event, ModelTotals
from evoharness.tasks.left_behind import LeftBehind


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    INFRA_ERROR = "infra_error"  # model server unreachable, sandbox failure: not the harness's fault


Split = Literal["train", "validation", "heldout"]
TrialArm = Literal["", "base", "change"]  # "" for an evaluation rollout


def rollout_id(iteration: int, task_id: str, attempt: int, trial_change: str = "",
               trial_arm: TrialArm = "") -> str:
    """Deterministic, so a resumed run knows which rollouts are already stored. A rollout of a
    change's trial names the change and the arm, so its attempts never meet an evaluation's."""
    if trial_change:
        return f"it{iteration:03d}-trial-{trial_change}-{trial_arm}-{task_id}-a{attempt:02d}"
    return f"it{iteration:03d}-{task_id}-a{attempt:02d}"


def sampling_key(iteration: int, task_id: str, attempt: int, trial_change: str = "") -> str:
    """What a rollout's model calls draw their seeds from (agent/clients/seeded.py): for either
    arm of a change's trial, its pair's base rollout id, so both arms sample alike (common random
    numbers); every other rollout, an evaluation's included, its own id."""
    return rollout_id(iteration, task_id, attempt, trial_change, "base" if trial_change else "")


class RolloutResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rollout_id: str
    run_id: str
    iteration: int
    task_id: str
    split: Split = "train"
    attempt: int
    harness_commit: str
    model: str = ""
    outcome: Outcome
    reward: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    steps: int = 0
    duration_s: float = 0.0
    exit_reason: str = ""  # agent: done | max_steps | token_budget | wall_time | model_error ...
    verifier_tail: str = ""  # last lines of the verifier's output (failing assertions)
    started_at: float = 0.0
    node: str = ""  # the machine (and Ray node) that ran it
    trial_change: str = ""  # the change whose trial ran it ("" for an evaluation rollout)
    trial_arm: TrialArm = ""  # which of that trial's trees: the base, or base + the change
    model_time: ModelTotals = Field(default_factory=ModelTotals)  # its model calls summed
    events: list[Event] = Field(default_factory=list)
    # What the agent left (summary, /app's changes), captured before the verifier ran: only for
    # a rollout whose reader must not see its verdict (the exam's best-of-N picker).
    left: LeftBehind | None = None
