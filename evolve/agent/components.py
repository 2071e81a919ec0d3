"""The evolve agent's `skeleton` tool, so that code is as easy to propose as a rule: the contract of a
code component (middleware, tool, skill) in a short reference (templates/components.md), and a
working skeleton as `change` edits, checked on a copy of the workspace so that what it hands out
passes `harness check` as it is. Committing edits is change.py's."""
from __future__ import annotations

import json
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

from evoharness.agent.tools import Handler
from evoharness.errors import EvoError, ValidationFailed
from evoharness.workspace.edits import apply_edits
from evoharness.workspace.spec import MIDDLEWARE_HOOKS, ToolSpec

from .tools import guarded

KINDS = ("middleware", "tool", "skill")
# What every middleware file ends with: each hook call runs the file as a script.
RUNNER = '''

if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
'''
_HOOK_BODIES = {
    "before_start": ("instruction", '    # Add to the task, for the whole rollout:\n'
                                    '    # return instruction + "\\n\\n[...]".\n'
                                    '    return None\n'),
    "before_tool": ("call", '    # Refuse: return {"block": "why, and what to do instead"}; change the call:\n'
                            '    # return {"tool": call["tool"], "arguments": {...}}.\n'
                            '    return None\n'),
    "after_tool": ("result", '    # Add a hint: result["output"] += "\\n[hint: ...]"; return result.\n'
                             '    return None\n'),
    "before_model": ("messages", '    # Add a note: return messages + [{"role": "user", "content": "..."}].\n'
                                 '    return None\n'),
    "after_model": ("reply", '    return None\n'),
}
_TOOL_PY = '''"""{name}: what this tool does (write it here)."""
import json
import sys


def main() -> int:
    args = json.load(sys.stdin)  # the arguments tools/{name}.yaml describes
    print(f"got {{args['text']!r}}")  # what you print is what the agent reads
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def reference(kind: str) -> str:
    """The contract of one component kind, from templates/components.md."""
    text = (files("evoharness.evolve.agent") / "templates" / "components.md").read_text(encoding="utf-8")
    return text.partition(f"## {kind}\n")[2].partition("\n## ")[0].strip()


def skeleton_edits(kind: str, name: str, hook: str = "before_tool") -> list[dict[str, Any]]:
    """`change` edits adding a component of `kind` that does nothing yet, and registering it."""
    register = {"op": "register_component", "kind": kind, "name": name}
    if kind == "middleware":
        argument, body = _HOOK_BODIES[hook]
        code = (f'"""{name}: what this middleware does (write it here)."""\n\n\n'
                f"def {hook}({argument}, context):\n{body}{RUNNER}")
        return [{"op": "add_file", "path": f"middleware/{name}.py", "content": code}, register]
    if kind == "tool":
        spec = {"name": name, "description": "What the tool does and when to use it.",
                "parameters": {"type": "object", "properties": {"text": {
                    "type": "string", "description": "what the tool takes"}},
                    "required": ["text"], "additionalProperties": False}}
        return [{"op": "add_file", "path": f"tools/{name}.yaml", "content": json.dumps(spec, indent=1)},
                {"op": "add_file", "path": f"tools/{name}.py", "content": _TOOL_PY.format(name=name)},
                register]
    skill = (f"---\nname: {name}\ndescription: One line saying when to load this skill.\n---\n"
             "What to do, step by step.\n")
    return [{"op": "add_file", "path": f"skills/{name}/SKILL.md", "content": skill}, register]


def skeleton_tool(workspace: Path) -> tuple[ToolSpec, Handler]:
    """`skeleton`: the reference for a kind and its skeleton's edits, checked on a copy of the
    workspace (a taken name, or a name the harness cannot have, is refused with the reason)."""

    def run(arguments: dict[str, Any]) -> str:
        kind, name = arguments["kind"], str(arguments["name"]).strip()
        hook = arguments.get("hook", "before_tool")
        edits = skeleton_edits(kind, name, hook)
        _check(workspace, edits)
        return (f"{reference(kind)}\n\nThese edits pass `harness check` as they are; write the "
                f"body, then send them with `change` (your manifest fields beside them):\n"
                f"{json.dumps(edits, indent=1)}")

    spec = ToolSpec(name="skeleton", description=(
        "The contract of a code component (middleware: hooks that refuse, change or annotate the "
        "agent's calls; tool: a new command the agent can call; skill) and a working skeleton "
        "as change edits to fill in."), parameters={
        "type": "object", "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "name": {"type": "string", "description": "lowercase, e.g. loop_guard"},
            "hook": {"type": "string", "enum": list(MIDDLEWARE_HOOKS), "default": "before_tool",
                     "description": "for middleware: which hook"}},
        "required": ["kind", "name"], "additionalProperties": False})
    return spec, guarded(run)


def _check(workspace: Path, edits: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory(prefix="evo-skeleton-") as scratch:
        copy = Path(scratch) / "harness"
        shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        try:
            apply_edits(copy, edits)
        except ValidationFailed as error:
            raise EvoError("this skeleton does not fit the harness: " + "; ".join(
                str(problem) for problem in error.problems), field="name",
                hint="choose another name (lowercase letters, digits, '_' or '-')") from None
