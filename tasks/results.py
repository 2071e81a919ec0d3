"""The rollout result record: what one run of a harness on one task produced. Written atomically
as one JSON file per rollout by the runner, ingested by traces/."""
from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.events import Event


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    INFRA_ERROR = "infra_error"  # model server unreachable, sandbox failure: not the harness's fault


Split = Literal["train", "heldout"]


def rollout_id(iteration: int, task_id: str, attempt: int) -> str:
    """Deterministic, so a resumed run knows which rollouts are already stored."""
    return f"it{iteration:03d}-{task_id}-a{attempt:02d}"


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
    events: list[Event] = Field(default_factory=list)
