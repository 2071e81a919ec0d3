"""Placebo detection: a change whose commit leaves everything the code agent meets as it was. The
loop never judges a change by this label (so placebos measure the false-accept rate honestly); the
report shows how often a placebo was kept."""
from __future__ import annotations

import json
import tempfile

from evoharness.files import read_text_inside
from evoharness.workspace.bounded import MAX_FILE_BYTES
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.validate import load_harness, render_system_prompt


def is_placebo(repo: HarnessRepo, commit: str) -> bool:
    """Whether `commit` changes nothing the agent sees: the rendered system prompt, the tool specs,
    skills, sub-agents and settings, and every Python file (tool and middleware code, byte for
    byte). A comment or whitespace edit to harness.yaml is a placebo."""
    return agent_view(repo, f"{commit}^") == agent_view(repo, commit)


def agent_view(repo: HarnessRepo, commit: str) -> str:
    """Everything of the harness at `commit` that can reach the code agent, as one string."""
    with tempfile.TemporaryDirectory() as tmp:
        root = repo.export(commit, tmp)
        harness = load_harness(root)
        seen = harness.model_dump(mode="json", exclude={"root", "prompt_template", "memory"})
        names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
        code = {rel: read_text_inside(root, rel, limit=MAX_FILE_BYTES) for rel in names}
        return json.dumps([render_system_prompt(harness), seen, code], sort_keys=True)
