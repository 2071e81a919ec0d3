"""Agent-runtime test helpers: a copy of the seed harness to customise, a temp /app-like workdir."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from evoharness.agent.events import ListSink
from evoharness.agent.loop import AgentResult, run_agent
from evoharness.agent.model import Model
from tests.fixtures.host_env import HostEnvironment
from evoharness.agent.clients.scripted import ScriptedModel
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.spec import LoadedHarness
from evoharness.workspace.validate import load_harness


class Harness:
    """A seed-harness copy on disk that a test extends (settings, middleware, skills, sub-agents)."""

    def __init__(self, root: Path, app: Path) -> None:
        self.root, self.app = root, app
        shutil.copytree(SEED_DIR, root)

    def settings(self, **changes: Any) -> Harness:
        spec = self._spec()
        budgets = changes.pop("budgets", {})
        spec["settings"].update(changes)
        spec["settings"]["budgets"].update(budgets)
        self._write_spec(spec)
        return self

    def add(self, kind: str, name: str, relpath: str, text: str) -> Harness:
        """Write a component file and register it in harness.yaml under `kind`."""
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        spec = self._spec()
        spec[kind] = [*spec.get(kind, []), name]
        self._write_spec(spec)
        return self

    def load(self) -> LoadedHarness:
        return load_harness(self.root)

    def run(self, replies: list | Model, instruction: str = "Do the task.", **kwargs: Any
            ) -> tuple[AgentResult, ListSink, Any]:
        """Run the agent on this harness in the app dir; a list of replies becomes a ScriptedModel."""
        model = ScriptedModel(replies) if isinstance(replies, list) else replies
        sink = ListSink()
        self.env = env = HostEnvironment(self.root, self.app)
        result = run_agent(self.load(), model, env, instruction, sink, **kwargs)
        return result, sink, model

    def _spec(self) -> dict[str, Any]:
        return yaml.safe_load((self.root / "harness.yaml").read_text())

    def _write_spec(self, spec: dict[str, Any]) -> None:
        (self.root / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    app = tmp_path / "app"
    app.mkdir()
    return Harness(tmp_path / "harness", app)


def kinds(sink: ListSink) -> list[str]:
    return [event.kind for event in sink.events]


def last_text(model: ScriptedModel) -> str:
    """What the model read last: the final message of its latest call."""
    return model.calls[-1][-1].content
