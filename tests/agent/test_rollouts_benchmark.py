"""benchmarks/rollouts.py without the model: the fixtures it replays are derived from recorded
rollouts as documented (the committed one byte for byte; a history cut at the first compaction; a
seeded sample of tasks' first attempts), and each arm is shown the recorded replies as its own
grammar writes them."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from benchmarks.rollouts import (
    FIXTURE, NEW, RECORDED, SAMPLE_SEED, TODAY, Conversation, Replay, Step, calls_made, derive,
    messages,
)
from evoharness.agent.events import Event
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.task import load_suite

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suite"


def test_the_committed_fixture_is_derived_from_its_recordings():
    assert derive().model_dump_json(indent=1) + "\n" == FIXTURE.read_text()


def _copy_recordings(tmp_path: Path) -> Path:
    target = tmp_path / "rollouts"
    shutil.copytree(RECORDED, target)
    return target


def test_a_history_ends_at_the_rollouts_first_compaction(tmp_path: Path):
    recorded = _copy_recordings(tmp_path)
    path = recorded / "it000-rename-to-markdown-a00.json"
    result = RolloutResult.model_validate_json(path.read_text())
    whole = next(c for c in derive(recorded).conversations if c.rollout_id == result.rollout_id)
    assert len(whole.steps) >= 3
    # after the second tool result the agent compacted: it sent a shorter history from then on
    second_result = [i for i, e in enumerate(result.events) if e.kind == "tool_result"][1]
    note = Event(seq=0, kind="note", name="compaction", content="context 6100 -> 2400 tokens")
    events = [*result.events[:second_result + 1], note, *result.events[second_result + 1:]]
    path.write_text(result.model_copy(update={"events": events}).model_dump_json())

    cut = next(c for c in derive(recorded).conversations if c.rollout_id == result.rollout_id)

    assert cut.steps == whole.steps[:2]


def test_a_sample_draws_tasks_of_the_suite_and_takes_their_first_attempts(tmp_path: Path):
    """The draw is over the suite's task ids with a fixed seed; a drawn task the recordings lack
    is named rather than replaced by another."""
    recorded = _copy_recordings(tmp_path)
    task_ids = sorted(t.id for t, _ in load_suite(SUITE).items())
    drawn = random.Random(SAMPLE_SEED).sample(task_ids, 2)
    source = RolloutResult.model_validate_json((RECORDED / "it000-count-lines-a00.json").read_text())
    for path in recorded.glob("*.json"):
        path.unlink()
    for task_id in drawn:
        for attempt in (0, 1):
            rollout_id = f"it000-{task_id}-a{attempt:02d}"
            copy = source.model_copy(update={"task_id": task_id, "attempt": attempt,
                                             "rollout_id": rollout_id})
            (recorded / f"{rollout_id}.json").write_text(copy.model_dump_json())

    ids = [c.rollout_id for c in derive(recorded, sample=2).conversations]

    assert ids == sorted(f"it000-{task_id}-a00" for task_id in drawn)
    (recorded / f"it000-{drawn[0]}-a00.json").unlink()
    with pytest.raises(SystemExit, match=drawn[0]):
        derive(recorded, sample=2)


def test_each_arm_reads_the_recorded_replies_as_its_grammar_writes_them():
    replay = Replay.model_validate_json(FIXTURE.read_text())
    conversation = next(c for c in replay.conversations if len(c.steps) >= 2)
    recorded = json.loads(conversation.steps[0].reply)

    today = messages(replay, conversation, 1, TODAY)[2]["content"]
    new = messages(replay, conversation, 1, NEW)[2]["content"]

    assert json.loads(today) == json.loads(new) == recorded
    assert today == json.dumps(recorded, indent=2, ensure_ascii=False)
    assert new == json.dumps(recorded, separators=(",", ":"), ensure_ascii=False)


def _step(command: str, output: str) -> Step:
    reply = json.dumps({"thought": "t", "tool": "shell", "arguments": {"command": command}})
    return Step(reply=reply, tool="shell", output=output)


def test_an_arm_with_a_repeat_budget_makes_no_call_after_the_loop_it_ends():
    loop = [_step("ls", "a"), _step("cat x", "No such file"), _step("cat x", "No such file"),
            _step("cat x", "No such file"), _step("cat x", "No such file"), _step("ls", "a")]
    conversation = Conversation(rollout_id="r", instruction="i", steps=loop)
    assert NEW.repeated_steps == 3 and TODAY.repeated_steps == 0
    assert calls_made(conversation, NEW) == 4  # the third `cat x` in a row is its last call
    assert calls_made(conversation, TODAY) == 6
    polled = [_step("wc -l log", f"{n}") for n in range(5)]  # same call, a new result each time
    assert calls_made(Conversation(rollout_id="p", instruction="i", steps=polled), NEW) == 5
