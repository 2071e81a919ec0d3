"""The optional analyst: root causes appended to failing tasks; failures never stop distillation."""
from __future__ import annotations

import threading
from pathlib import Path

from agent.model import Message, ModelError
from debugger.analyst import Analyst
from debugger.distill import distill
from tests.debugger.conftest import RUN
from agent.clients.scripted import ScriptedModel


def four_tasks(traces) -> None:
    for task in ("broken", "flaky", "hangs", "fine"):
        traces.rollout(task, 1, "pass" if task == "fine" else "fail")


def responder(release: threading.Event):
    """Answers per task (threads call in any order): 'flaky' errors, 'hangs' blocks."""
    def reply(messages: list[Message]) -> str:
        text = messages[-1].content
        if "# Task flaky" in text:
            raise ModelError("server went away", kind="unavailable")
        if "# Task hangs" in text:
            release.wait(timeout=10)
            return "too late"
        return "Root cause: the prompt never asks to run the tests."
    return reply


def test_analyst_paragraphs_and_failures(traces, tmp_path: Path) -> None:
    four_tasks(traces)
    release = threading.Event()
    model = ScriptedModel([responder(release)] * 4)
    analyst = Analyst(model, max_workers=2, timeout_s=0.5)
    try:
        index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set(), analyst=analyst)
    finally:
        release.set()
    assert sorted(index.analyst_failed) == ["flaky", "hangs"]
    assert "root causes for 1 failing tasks" in index.overview.read_text()
    assert "analyst unavailable for 2 tasks" in index.overview.read_text()
    assert "## Analyst\n\nRoot cause: the prompt never asks" in index.tasks["broken"].read_text()
    for task in ("flaky", "hangs", "fine"):
        assert "## Analyst" not in index.tasks[task].read_text()
    assert len(model.calls) == 3  # the passing task is never sent


def test_analyst_off_by_default(traces, tmp_path: Path) -> None:
    four_tasks(traces)
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set())
    assert "- analyst: off" in index.overview.read_text()
    assert index.analyst_failed == []
