"""The system prompt template: rendering it with bounded time and memory (jinja2's sandbox in a
child process, render_child.py), the protected seed-rules block, and the reply-protocol check.
Loading and validating files is validate.py's job."""
from __future__ import annotations

import json
import subprocess
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evoharness.errors import EvoError

from . import render_child
from .spec import PROTECTED_BEGIN, PROTECTED_END, LoadedHarness, Settings

SEED_DIR = Path(__file__).parent / "seed"

# What a rendered prompt must still say for the agent to know how to act, per action format:
# a prompt that lost these makes every rollout a parse failure, so an edit may not drop them.
REPLY_PROTOCOL: dict[str, tuple[str, ...]] = {
    "json": ('"thought"', '"tool"', '"arguments"', "`done`"),
    "native": ("`done`",),
}


MAX_PROMPT_CHARS = 200_000  # ~50k tokens: more than any context budget the settings allow
# Wall-clock bound on one render, interpreter start included (slow on a loaded machine); the child
# also limits its own CPU time and memory.
RENDER_SECONDS = 30.0


class TemplateFailed(EvoError):
    """The template did not render: a syntax error (field "line N"), an error raised while
    rendering, or a bound passed (time, memory, size); field "template" for all but the first."""


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
    """Render template text in a bounded child process; raises TemplateFailed. Models among the
    variables become plain data (attribute access in the template is unchanged). The same
    template and variables render once per process: every rollout of a harness reuses it."""
    request = json.dumps({"template": source, "variables": _plain(variables),
                          "max_chars": MAX_PROMPT_CHARS})
    return _render_in_child(request)


def render_system_prompt(harness: LoadedHarness, **extra: Any) -> str:
    """The system prompt the agent sees; `extra` adds or overrides template variables."""
    return render_template(harness.prompt_template, template_variables(harness) | extra)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


@lru_cache(maxsize=32)
def _render_in_child(request: str) -> str:
    command = [sys.executable, "-I", render_child.__file__]  # -I: no PYTHON* variables, no cwd
    try:
        done = subprocess.run(command, input=request.encode(), capture_output=True,
                              timeout=RENDER_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise TemplateFailed(f"the template did not finish rendering within {RENDER_SECONDS:g} s",
                             field="template", hint="no long loops in the template") from None
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise TemplateFailed(
            f"rendering was stopped (exit code {done.returncode}) past its limits of "
            f"{render_child.CPU_SECONDS} s of CPU time and {render_child.MEMORY_BYTES >> 20} MB",
            field="template", value=done.stderr.decode(errors="replace")[-300:] or None,
            hint="no long loops in the template") from None
    if "error" in answer:
        error = answer["error"]
        field = f"line {error['line']}" if error["kind"] == "syntax" else "template"
        raise TemplateFailed(error["message"], field=field,
                             hint="use only tools, skills, subagents, memory and settings")
    return answer["text"]


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


def missing_protocol(rendered: str, settings: Settings) -> list[str]:
    """The reply-protocol phrases a rendered prompt lacks for its settings' action format (a JSON
    action without a thought need not mention one)."""
    needed = REPLY_PROTOCOL[settings.action_format]
    if not settings.thought_chars:
        needed = tuple(phrase for phrase in needed if phrase != '"thought"')
    return [phrase for phrase in needed if phrase not in rendered]
