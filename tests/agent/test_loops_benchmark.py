"""benchmarks/loops.py without the model: a recorded rollout put through the repeat budget ends
where the loop's third same step read its result, and the time after it is what is saved."""
from __future__ import annotations

from evoharness.agent.events import Event
from benchmarks.loops import ended_loop
from evoharness.tasks.results import RolloutResult


def rollout(steps: list[tuple[str, str]], end_ts: float) -> RolloutResult:
    """Steps of (command, output), one second apart: model call, tool call, tool result."""
    events = []
    for n, (command, output) in enumerate(steps):
        events += [Event(seq=3 * n, kind="model_call", content="{}", ts=n),
                   Event(seq=3 * n + 1, kind="tool_call", name="shell",
                         data={"arguments": {"command": command}}, ts=n + 0.1),
                   Event(seq=3 * n + 2, kind="tool_result", name="shell", content=output,
                         ts=n + 0.5)]
    events.append(Event(seq=len(events), kind="model_call", content="{}", ts=end_ts))
    return RolloutResult(rollout_id="r", run_id="x", iteration=0, task_id="t", attempt=0,
                         harness_commit="c", outcome="fail", events=events)


def test_a_loop_ends_at_its_third_same_step_and_the_rest_is_saved():
    steps = [("ls", "a"), ("cat x", "missing"), ("cat x", "missing"), ("cat x", "missing"),
             ("cat x", "missing"), ("ls", "a")]
    loop = ended_loop(rollout(steps, end_ts=100.0), repeated_steps=3)
    assert loop is not None
    assert (loop.ended_at_step, loop.steps, loop.left_the_loop) == (4, 6, True)
    assert loop.saved_s == 100.0 - 3.5  # after the fourth step's result was read


def test_a_polled_command_and_a_short_repeat_are_not_ended():
    polled = [("wc -l log", str(n)) for n in range(5)]
    assert ended_loop(rollout(polled, end_ts=9.0), repeated_steps=3) is None
    twice = [("cat x", "missing"), ("cat x", "missing"), ("ls", "a")]
    assert ended_loop(rollout(twice, end_ts=9.0), repeated_steps=3) is None
