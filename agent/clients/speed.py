"""What this machine was last measured to do with a model (seconds and tokens per rollout, decode
and prefill rates), kept per host and model in ~/.cache/evoharness/speed/ (EVOHARNESS_SPEED_CACHE
overrides). A run's forecast reads it before the run has a history of its own, and a client's
stall watch starts from its rates. Measuring is the run's business (evolve/forecast.py)."""
from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evoharness.agent.clients.timings import StallWatch
from evoharness.files import write_model

SPEED_ENV = "EVOHARNESS_SPEED_CACHE"


class MachineSpeed(BaseModel):
    model_config = ConfigDict(frozen=True)

    host: str
    model: str  # the client's name, as rollouts record it
    workers: int = Field(ge=1)
    seconds_per_rollout: float = Field(gt=0)  # an evaluation's wall time over its rollouts
    tokens_per_rollout: float = Field(ge=0)
    evolve_seconds: float | None = Field(None, ge=0)  # one evolve agent session
    evolve_tokens: float | None = Field(None, ge=0)
    decode_tokens_per_s: float | None = Field(None, gt=0)
    prefill_tokens_per_s: float | None = Field(None, gt=0)
    source: str  # what was measured: "run NAME, iterations 0-1"
    measured_at: float


def speed_path(model: str, host: str | None = None) -> Path:
    root = Path(os.environ.get(SPEED_ENV) or Path.home() / ".cache/evoharness/speed")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{host or socket.gethostname()}-{model}")
    return root / f"{name}.json"


def load_speed(model: str) -> MachineSpeed | None:
    """This machine's last measurement with `model`; None when there is none (or it is unreadable:
    a cache, never a reason to fail)."""
    try:
        return MachineSpeed.model_validate_json(speed_path(model).read_text())
    except (OSError, ValidationError):
        return None


def save_speed(speed: MachineSpeed) -> None:
    write_model(speed_path(speed.model, speed.host), speed)


def stall_watch(model: str) -> StallWatch:
    """A stall watch for `model`'s server, starting from this machine's measured rates (so even
    a first call that stalls is seen)."""
    known = load_speed(model)
    if known is None:
        return StallWatch()
    return StallWatch(known.decode_tokens_per_s, known.prefill_tokens_per_s)
