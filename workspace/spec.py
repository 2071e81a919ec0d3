"""The harness spec: `harness.yaml` as pydantic models (which components are active, and the
settings the agent runtime enforces). Loading files and checking them is validate.py's job."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .bounded import MAX_COMPONENTS
from .kinds import COMPONENT_NAMES

ComponentKind = Literal[COMPONENT_NAMES]  # type: ignore[valid-type]

# The functions a middleware file may define, in the order a rollout meets them
# (agent/middleware.py).
MIDDLEWARE_HOOKS = ("before_start", "before_model", "after_model", "before_tool", "after_tool")
# The block of the seed's rules that no edit may remove: validate.py checks both markers and
# the text between them are still in the system prompt template.
PROTECTED_BEGIN = "{# protected:seed-rules:begin #}"
PROTECTED_END = "{# protected:seed-rules:end #}"
# The most characters of a JSON action's thought: a forced reply still thinks first, briefly, as the
# answer follows the thought.
THOUGHT_CHARS = 300


# Every number the evolve agent sets has an upper bound: `inf`, NaN or 1e308 would turn a budget
# into no budget (allow_inf_nan=False refuses the first two, `le` the rest).
_FINITE = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
DAY_SECONDS = 86_400.0


class Budgets(BaseModel):
    model_config = _FINITE

    tokens: int = Field(60_000, gt=0, le=10_000_000,
                        description="total prompt+completion tokens per rollout")
    wall_seconds: float = Field(300.0, gt=0, le=DAY_SECONDS, description="wall time per rollout")
    context_tokens: int = Field(6_000, gt=0, le=1_000_000,
                                description="compact history beyond this")
    tool_calls: dict[str, Annotated[int, Field(ge=0, le=100_000)]] = Field(
        default_factory=dict, max_length=MAX_COMPONENTS, description="max calls per tool")
    # A model that got the same result for the same call twice and asks a third time is in a
    # fixed point: a small model seldom leaves such a loop to pass, and the loop spends the
    # rollout's time (docs/speed.md).
    repeated_steps: int = Field(3, ge=0, le=1_000, description="end the rollout after this many "
                                "steps in a row made the same call and got the same result "
                                "(0: never)")

    @field_validator("repeated_steps")
    @classmethod
    def _a_repeat_takes_two_steps(cls, value: int) -> int:
        if value == 1:  # every step is one in a row: the rollout would end after its first
            raise ValueError("1 would end every rollout after its first step: use 0 (never) or 2+")
        return value


# Settings whose only users were experiments since reverted; each one's branch left the agent loop.
DROPPED_SETTINGS = {
    "fresh_start_temperature": "fresh starts sample at `temperature`, as every call does",
    "resample_temperature": "a resample after a repeated call is drawn at temperature 1",
}


class Settings(BaseModel):
    model_config = _FINITE

    max_steps: int = Field(20, gt=0, le=1_000)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    max_output_tokens: int = Field(512, gt=0, le=32_768)
    action_format: Literal["json", "native"] = "json"
    # JSON actions decoded under the action's JSON schema (tool names, argument keys), so a reply
    # always parses. auto: where the model server is known to enforce it (embedded, Ollama).
    constrained_decoding: Literal["auto", "on", "off"] = "auto"
    tool_timeout_seconds: float = Field(30.0, gt=0, le=3_600.0)
    # What the model reads of one tool's output (head and tail); the event keeps more. Every
    # token of it is read at prefill speed: on 2 cores the 1.5B reads ~14 tokens/s, so 8,000
    # characters (2,000-4,300 tokens) cost two to five minutes, about a whole rollout's budget.
    tool_output_chars: int = Field(4_000, ge=200, le=100_000)
    # When the repeat budget stops an attempt, start it again this many times with a fresh
    # transcript: the task, and the call it was repeating with its result. Steps, tokens and time
    # stay the rollout's, so a fresh start is never a bigger budget.
    fresh_starts: int = Field(0, ge=0, le=100)
    # A reply whose call is the one the agent just made is set aside unseen and the model asked
    # again, at most this many times, at temperature 1 (agent/loop.py); if every answer repeats,
    # the last one runs: a small model's loop opens with such a copy of its own last action.
    # The starter entry resample-repeats sets it (evolve/library/starters/).
    repeat_resamples: int = Field(0, ge=0, le=20)
    # The JSON action's thought, at most this many characters; 0: the action has none, and its
    # reply is only the tool and its arguments: a small model on CPU spends most of its model
    # time decoding, and the thought is about half of what it decodes (docs/speed.md).
    thought_chars: int = Field(THOUGHT_CHARS, ge=0, le=2_000)
    budgets: Budgets = Field(default_factory=Budgets)

    @model_validator(mode="before")
    @classmethod
    def _no_dropped_setting(cls, data: Any) -> Any:
        """A harness.yaml from before a setting was dropped is refused with what to do, not
        pydantic's "Extra inputs are not permitted" (nor run without the setting it asks for)."""
        if isinstance(data, dict):
            dropped = sorted(set(data) & set(DROPPED_SETTINGS))
            if dropped:
                name = dropped[0]
                raise ValueError(f"{name} is no longer a setting ({DROPPED_SETTINGS[name]}): "
                                 "delete it from harness.yaml")
        return data


_NAME_CHARS = 100
_PATH_CHARS = 255
_Names = Annotated[list[Annotated[str, Field(max_length=_NAME_CHARS)]],
                   Field(max_length=MAX_COMPONENTS)]


class HarnessSpec(BaseModel):
    """harness.yaml. Every listed name must have its files; every component file must be listed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("harness", max_length=_NAME_CHARS)
    system_prompt: str = Field("system_prompt.md.j2", max_length=_PATH_CHARS)
    tools: _Names = Field(default_factory=list)  # tools/<name>.yaml + tools/<name>.py
    middleware: _Names = Field(default_factory=list)  # middleware/<name>.py
    skills: _Names = Field(default_factory=list)  # skills/<name>/SKILL.md
    subagents: _Names = Field(default_factory=list)  # subagents/<name>/agent.yaml
    memory: str = Field("memory/LONG_TERM.md", max_length=_PATH_CHARS)
    settings: Settings = Field(default_factory=Settings)


class ToolSpec(BaseModel):
    """tools/<name>.yaml: what the model sees of a tool (name, description, JSON-schema params)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=_NAME_CHARS)
    description: str  # the tool's YAML file is bounded (workspace/bounded.py)
    parameters: dict[str, Any]  # bounded and checked by workspace/schemas.py


class SkillDoc(BaseModel):
    """skills/<name>/SKILL.md: YAML front matter (name, description) and a body loaded on demand."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    body: str


class SubagentSpec(BaseModel):
    """subagents/<name>/agent.yaml: a focused agent the main one can delegate to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=_NAME_CHARS)
    description: str
    system_prompt: str
    tools: _Names = Field(default_factory=list)  # a subset of the harness's tools
    max_steps: int = Field(10, gt=0, le=1_000)


class LoadedHarness(BaseModel):
    """A validated harness directory, read into memory: what the agent runtime runs."""

    model_config = ConfigDict(frozen=True)

    root: Path
    spec: HarnessSpec
    prompt_template: str
    memory: str
    tools: list[ToolSpec]
    skills: list[SkillDoc] = Field(default_factory=list)
    subagents: list[SubagentSpec] = Field(default_factory=list)
    middleware: list[str] = Field(default_factory=list)  # names; code at middleware/<name>.py
