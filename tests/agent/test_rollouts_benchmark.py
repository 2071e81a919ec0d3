"""benchmarks/rollouts.py without the model: the fixtures it replays are derived from recorded
rollouts as documented (the committed one byte for byte; a history cut at the first compaction; a
seeded sample of tasks' first attempts), and each arm is shown the recorded replies as its own
grammar writes them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchmarks.rollouts import FIXTURE, RECORDED, TODAY, NEW, Replay, derive, messages
from agent.events import Event
from tasks.results import RolloutResult


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


def test_a_sample_draws_first_attempts_of_tasks_with_a_fixed_seed(tmp_path: Path):
    recorded = _copy_recordings(tmp_path)
    firsts = {RolloutResult.model_validate_json(p.read_text()).task_id
              for p in recorded.glob("*-a00.json")}

    drawn = derive(recorded, sample=2)

    ids = [c.rollout_id for c in drawn.conversations]
    assert len(ids) == 2 and all(i.endswith("-a00") for i in ids)
    assert ids == sorted(ids)  # in the order a run starts them
    assert {i.removeprefix("it000-").removesuffix("-a00") for i in ids} <= firsts
    assert [c.rollout_id for c in derive(recorded, sample=2).conversations] == ids
    assert len(derive(recorded, sample=99).conversations) == len(firsts)


def test_each_arm_reads_the_recorded_replies_as_its_grammar_writes_them():
    replay = Replay.model_validate_json(FIXTURE.read_text())
    conversation = next(c for c in replay.conversations if len(c.steps) >= 2)
    recorded = json.loads(conversation.steps[0].reply)

    today = messages(replay, conversation, 1, TODAY)[2]["content"]
    new = messages(replay, conversation, 1, NEW)[2]["content"]

    assert json.loads(today) == json.loads(new) == recorded
    assert today == json.dumps(recorded, indent=2, ensure_ascii=False)
    assert new == json.dumps(recorded, separators=(",", ":"), ensure_ascii=False)
