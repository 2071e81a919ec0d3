"""workspace/prompt.py's template cache (docs/hostile-input.md): the prompt renders in a child
process once per harness and process, and every rollout of that harness reuses it; a harness
whose template or variables differ renders again."""
from __future__ import annotations

import shutil
from pathlib import Path

from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.agent.events import ListSink
from evoharness.agent.loop import run_agent
from tests.fixtures.host_env import HostEnvironment
from evoharness.workspace import prompt
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness


def rollouts(root: Path, app: Path, count: int) -> None:
    harness = load_harness(root)  # validation renders the prompt too
    for _ in range(count):
        model = ScriptedModel([json_action("done", summary="ok")])
        result = run_agent(harness, model, HostEnvironment(root, app), "Do it.", ListSink())
        assert result.exit_reason == "done"


def test_the_prompt_renders_once_per_harness_and_rollouts_reuse_it(tmp_path: Path) -> None:
    root = Path(shutil.copytree(SEED_DIR, tmp_path / "harness"))
    app = tmp_path / "app"
    app.mkdir()
    prompt._render_in_child.cache_clear()

    rollouts(root, app, 3)
    rendered = prompt._render_in_child.cache_info()
    assert (rendered.misses, rendered.hits) == (1, 3)  # one child; validation and 3 rollouts

    (root / "memory" / "LONG_TERM.md").write_text("A memory changes the variables.\n")
    rollouts(root, app, 2)
    again = prompt._render_in_child.cache_info()
    assert (again.misses, again.hits) == (2, 5)
