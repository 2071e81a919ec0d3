"""The system prompt template: the sandboxed jinja2 environment it renders in, the protected
seed-rules block, and the reply-protocol check. Loading and validating files is validate.py's job."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from .spec import PROTECTED_BEGIN, PROTECTED_END, LoadedHarness

SEED_DIR = Path(__file__).parent / "seed"

# What a rendered prompt must still say for the agent to know how to act, per action format:
# a prompt that lost these makes every rollout a parse failure, so an edit may not drop them.
REPLY_PROTOCOL: dict[str, tuple[str, ...]] = {
    "json": ('"thought"', '"tool"', '"arguments"', "`done`"),
    "native": ("`done`",),
}


@cache
def jinja_env() -> SandboxedEnvironment:
    """Sandboxed because the evolve agent writes the template: no attribute tricks reach Python."""
    env = SandboxedEnvironment(
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}  # schemas read better in file order
    return env


def template_variables(harness: LoadedHarness) -> dict[str, Any]:
    """The standard variables every system prompt template may use."""
    return {
        "tools": harness.tools,
        "skills": harness.skills,
        "subagents": harness.subagents,
        "memory": harness.memory,
        "settings": harness.spec.settings,
    }


def render_template(source: str, variables: dict[str, Any]) -> str:
    """Render template text; jinja2 errors propagate for the caller to report."""
    return jinja_env().from_string(source).render(**variables)


def render_system_prompt(harness: LoadedHarness, **extra: Any) -> str:
    """The system prompt the agent sees; `extra` adds or overrides template variables."""
    return render_template(harness.prompt_template, template_variables(harness) | extra)


@cache
def seed_protected_block() -> str:
    """The seed's rules, markers included, exactly as every harness must keep them."""
    block = protected_span((SEED_DIR / "system_prompt.md.j2").read_text())
    assert block is not None, "the seed template lost its protected block"
    return block


def protected_span(text: str) -> str | None:
    """The text from PROTECTED_BEGIN to PROTECTED_END inclusive, or None if absent."""
    start, end = text.find(PROTECTED_BEGIN), text.find(PROTECTED_END)
    if start < 0 or end < start:
        return None
    return text[start : end + len(PROTECTED_END)]


def missing_protocol(rendered: str, action_format: str) -> list[str]:
    """The reply-protocol phrases a rendered prompt lacks for its action format."""
    return [phrase for phrase in REPLY_PROTOCOL[action_format] if phrase not in rendered]
