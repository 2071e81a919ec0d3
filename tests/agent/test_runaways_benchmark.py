"""benchmarks/runaways.py without the model: recorded replies go through the runaway stop as a
client streams them; a count and a repeated unit are stopped where the stop sees them, and the
tokens after that point are counted as not decoded, in proportion to the characters left."""
from __future__ import annotations

from evoharness.agent.events import Event
from benchmarks.runaways import FIXTURE, Reply, load, replies_of, stopped
from evoharness.tasks.results import RolloutResult

COUNT = '{"tool":"shell","arguments":{"command":"add_item ' + " ".join(map(str, range(1, 200)))
REPEAT = '{"tool":"shell","arguments":{"command":"cat f' + " | sed 's/a//g'" * 30


def reply(content: str, tokens_out: int = 100) -> Reply:
    return Reply(task_id="t", arm="base", json_reply=True, tokens_out=tokens_out, content=content)


def test_a_count_and_a_repeat_are_stopped_and_the_rest_counted_as_not_decoded():
    count, repeat = stopped(reply(COUNT)), stopped(reply(REPEAT))
    assert count.counting and not repeat.counting
    assert count.at < len(COUNT) and repeat.at < len(REPEAT)
    assert count.tokens_not_decoded == 100 * (1 - count.at / len(COUNT))
    assert stopped(reply('{"tool":"shell","arguments":{"command":"seq 1 200"}}')) is None


def test_replies_are_read_from_a_rollouts_dir_and_from_the_fixture(tmp_path):
    events = [Event(seq=0, kind="model_call", content=COUNT, tokens_out=7),
              Event(seq=1, kind="tool_result", content="1"),
              Event(seq=2, kind="model_call", content="")]  # a call that brought nothing back
    result = RolloutResult(rollout_id="r", run_id="x", iteration=0, task_id="t", attempt=0,
                           harness_commit="c", outcome="fail", events=events, trial_arm="change")
    (tmp_path / "r.json").write_text(result.model_dump_json())
    [read] = replies_of(tmp_path)
    assert (read.arm, read.tokens_out, read.json_reply, read.content) == ("change", 7, True, COUNT)
    recorded = load([FIXTURE])
    assert recorded and all(r.content and r.tokens_out > 0 for r in recorded)
