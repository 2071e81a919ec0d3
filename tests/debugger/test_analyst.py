"""The optional analyst: root causes appended to failing tasks; failures never stop distillation."""
from __future__ import annotations

import threading
from pathlib import Path

from evoharness.agent.model import Message, ModelError
from evoharness.debugger.analyst import Analyst
from evoharness.debugger.distill import distill
from tests.debugger.conftest import RUN
from evoharness.agent.clients.scripted import ScriptedModel


def four_tasks(traces) -> None:
    for task in ("broken", "flaky", "hangs", "fine"):
        traces.rollout(task, 1, "pass" if task == "fine" else "fail")


def responder(release: threading.Event):
    """Answers per task (threads call in any order): 'flaky' errors, 'hangs' blocks until the
    test releases it, after the analyst has given up on it."""
    def reply(messages: list[Message]) -> str:
        text = messages[-1].content
        if "# Task flaky" in text:
            raise ModelError("server went away", kind="unavailable")
        if "# Task hangs" in text:
            release.wait()
            return "too late"
        return "Root cause: the prompt never asks to run the tests."
    return reply


def test_analyst_paragraphs_and_failures(traces, tmp_path: Path) -> None:
    """No call here waits on the clock: 'flaky' fails at once, so the deadline is a safety net."""
    for task in ("broken", "flaky", "fine"):
        traces.rollout(task, 1, "pass" if task == "fine" else "fail")
    model = ScriptedModel([responder(threading.Event())] * 2)
    analyst = Analyst(model, max_workers=2, timeout_s=300)
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set(), analyst=analyst)
    assert index.analyst_failed == ["flaky"]
    assert "root causes for 1 failing tasks" in index.overview.read_text()
    assert "analyst unavailable for 1 tasks" in index.overview.read_text()
    assert "## Analyst\n\nRoot cause: the prompt never asks" in index.tasks["broken"].read_text()
    for task in ("flaky", "fine"):
        assert "## Analyst" not in index.tasks[task].read_text()
    assert len(model.calls) == 2  # the passing task is never sent


def test_a_hung_call_times_out_and_does_not_hold_up_the_next_batch(traces, tmp_path) -> None:
    """Each hung call is in a batch of its own (one worker): the first times out, and the second
    batch is still asked (then times out too). A hung call misses any deadline, so the short one
    decides nothing about speed."""
    for task in ("hangs", "hangs-too", "fine"):
        traces.rollout(task, 1, "pass" if task == "fine" else "fail")
    release = threading.Event()
    model = ScriptedModel([responder(release)] * 2)
    try:
        index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set(),
                        analyst=Analyst(model, max_workers=1, timeout_s=0.2))
    finally:
        release.set()
    assert sorted(index.analyst_failed) == ["hangs", "hangs-too"]
    assert len(model.calls) == 2
    assert "analyst unavailable for 2 tasks" in index.overview.read_text()
    assert "## Analyst" not in index.tasks["hangs"].read_text()


def test_analyst_off_by_default(traces, tmp_path: Path) -> None:
    four_tasks(traces)
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set())
    assert "- analyst: off" in index.overview.read_text()
    assert index.analyst_failed == []
