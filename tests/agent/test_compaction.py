"""agent/compaction.py: the transcript keeps system prompt and instruction and shrinks past the budget."""
from __future__ import annotations

from evoharness.agent.compaction import Transcript, step_line
from evoharness.agent.model import Message
from evoharness.agent.tools import ToolResult, refused
from evoharness.agent.clients.scripted import ScriptedModel, json_action


def exchange(i: int, size: int = 400) -> list[Message]:
    return [Message(role="assistant", content=f"action {i}"), Message(role="user", content="x" * size)]


def test_compaction_keeps_head_and_the_newest_exchange_and_lists_dropped_actions():
    transcript = Transcript("SYSTEM with memory", "INSTRUCTION")
    for i in range(6):
        transcript.add(exchange(i), f"shell {{\"command\": \"step {i}\"}} -> exit {i}")
    before, after = transcript.compact()
    assert after < before
    messages = transcript.messages()
    assert [m.content for m in messages[:2]] == ["SYSTEM with memory", "INSTRUCTION"]
    note = messages[2].content
    assert "Context compacted: steps 1-5" in note and "step 0" in note and "exit 4" in note
    assert [ex.messages[0].content for ex in transcript.exchanges] == ["action 5"]


def test_a_later_compaction_leaves_the_prompt_before_it_as_it_was():
    """What the server has cached (system prompt, instruction, earlier notes) is not rewritten:
    the next call reads only what follows it."""
    transcript = Transcript("S", "I")
    for i in range(4):
        transcript.add(exchange(i), f"step {i}")
    transcript.compact()
    earlier = transcript.messages()[:3]
    for i in range(4, 8):
        transcript.add(exchange(i), f"step {i}")
    transcript.compact()
    messages = transcript.messages()
    assert messages[:3] == earlier
    assert "steps 4-7" in messages[3].content and "step 6" in messages[3].content
    assert "step 2" not in messages[3].content
    assert [ex.summary for ex in transcript.exchanges] == ["step 7"]
    assert transcript.compacted == [f"step {i}" for i in range(7)]


def test_server_token_count_is_preferred_over_the_character_estimate():
    transcript = Transcript("S", "I")
    transcript.observe(5000)
    assert transcript.estimate() == 5000
    transcript.add([Message(role="user", content="y" * 400)], "s")
    assert transcript.estimate() == 5100


def test_step_line_reports_the_exit_code_the_tool_printed():
    assert step_line("shell", {"command": "make"}, ToolResult(output="err\n[exit code: 2]\n", exit_code=0)
                     ) == 'shell {"command": "make"} -> exit 2'
    assert "error (permanent)" in step_line("x", {}, refused("permanent", "no", "try"))


def test_loop_compacts_when_the_context_budget_is_exceeded(harness):
    harness.settings(budgets={"context_tokens": 1200})
    chatter = [json_action("shell", command=f"python3 -c 'print(\"z\" * 1500)' # {i}") for i in range(6)]
    model = ScriptedModel([*chatter, json_action("done", summary="ok")], tokens=0)
    result, sink, _ = harness.run(model, "INSTRUCTION")
    assert result.exit_reason == "done"
    notes = [e for e in sink.events if e.name == "compaction"]
    assert notes and all(e.data["after"] < e.data["before"] for e in notes)
    last = model.calls[-1]
    assert last[0].role == "system" and last[1].content == "INSTRUCTION"
    assert "Context compacted" in last[2].content and "# 0" in last[2].content
    assert len(last) < 2 + 2 * 6
    notes = [m.content for m in last if m.content.startswith("[Context compacted")]
    for earlier in model.calls[:-1]:  # a note, once sent, is sent unchanged
        sent = [m.content for m in earlier if m.content.startswith("[Context compacted")]
        assert notes[:len(sent)] == sent
