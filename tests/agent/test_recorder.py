"""agent/recorder.py: one sequence across agents, tags for sub-agents, head+tail cuts."""
from __future__ import annotations

from evoharness.agent.events import ListSink
from evoharness.agent.recorder import Recorder, clip


def test_clip_keeps_head_and_tail():
    text = "HEAD" + "x" * 10_000 + "TAIL"
    cut = clip(text, 100)
    assert cut.startswith("HEAD") and cut.endswith("TAIL") and "characters cut" in cut
    assert len(cut) < 200 and clip("short", 100) == "short"


def test_child_shares_the_sequence_and_tags_its_events():
    sink = ListSink()
    main = Recorder(sink)
    main.emit("note", name="a")
    main.child(subagent="writer").emit("tool_call", name="shell", data={"arguments": {}})
    main.emit("note", name="b", content="y" * 10_000)
    assert [e.seq for e in sink.events] == [0, 1, 2]
    assert sink.events[1].data == {"subagent": "writer", "arguments": {}}
    assert sink.events[0].data == {} and len(sink.events[2].content) < 5000
