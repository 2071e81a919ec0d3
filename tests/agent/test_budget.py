"""agent/budget.py through the loop: each budget stops the rollout with its exit reason."""
from __future__ import annotations

import pytest

from tests.agent.conftest import last_text
from tests.agent.test_middleware import RUNNER
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.agent.loop import FRESH_START_CHARS


def forever(tool="shell", **arguments):
    return ScriptedModel([json_action(tool, **(arguments or {"command": "true"}))] * 50)


def test_max_steps(harness):
    harness.settings(max_steps=3)
    result, _, model = harness.run(forever())
    assert (result.exit_reason, result.steps, len(model.calls)) == ("max_steps", 3, 3)


def test_token_budget_counts_prompt_and_completion_tokens(harness):
    harness.settings(budgets={"tokens": 50})
    result, _, model = harness.run(forever())  # 10 in + 10 out per call
    assert (result.exit_reason, len(model.calls)) == ("token_budget", 3)
    assert result.tokens_in + result.tokens_out == 60


def test_wall_time_with_an_injected_clock(harness):
    harness.settings(budgets={"wall_seconds": 250})
    now = [0.0]

    def slow_reply(messages):  # each model call takes 100 s of the injected clock
        now[0] += 100
        return json_action("shell", command="true")

    result, _, model = harness.run([slow_reply] * 10, clock=lambda: now[0])
    assert (result.exit_reason, len(model.calls)) == ("wall_time", 3)


def test_per_tool_budget_refuses_then_stops_a_stuck_model(harness):
    harness.settings(budgets={"tool_calls": {"shell": 1}})
    result, sink, model = harness.run(forever())
    assert "budget exhausted for tool shell" in last_text(model)
    assert (result.exit_reason, len(model.calls)) == ("tool_budget", 3)
    errors = [e.data["error"] for e in sink.events if e.kind == "tool_result"]
    assert errors[0] is None and [e["kind"] for e in errors[1:]] == ["permanent", "permanent"]


def test_per_tool_budget_lets_a_model_that_adapts_finish(harness):
    harness.settings(budgets={"tool_calls": {"shell": 1}})
    result, _, _ = harness.run([json_action("shell", command="true"), json_action("shell", command="true"),
                                json_action("done", summary="ok")])
    assert result.exit_reason == "done"


def test_a_tool_call_cannot_outlive_the_wall_budget(harness):
    harness.settings(tool_timeout_seconds=60, budgets={"wall_seconds": 2})
    result, sink, _ = harness.run([json_action("shell", command="sleep 30"), json_action("done", summary="x")])
    assert result.exit_reason == "wall_time"
    error = [e for e in sink.events if e.kind == "tool_result"][0].data["error"]
    assert error["kind"] == "transient" and "60s" not in error["message"]


def test_the_same_call_with_the_same_result_ends_the_rollout_at_the_repeat_budget(harness):
    harness.settings(budgets={"repeated_steps": 3})
    result, sink, model = harness.run(forever())
    assert (result.exit_reason, result.steps, len(model.calls)) == ("repeating", 3, 3)
    assert [e.kind for e in sink.events].count("tool_result") == 3


def test_a_repeated_call_whose_result_changes_is_progress_not_a_loop(harness):
    # The same command, but each run prints something new (a counter a poll would watch).
    harness.settings(max_steps=6, budgets={"repeated_steps": 3})
    result, _, model = harness.run(forever(command="echo x >> n; wc -l < n"))
    assert (result.exit_reason, len(model.calls)) == ("max_steps", 6)


@pytest.mark.parametrize("timing", ["1 failed, 1 passed in 0.$(wc -l < n)1s",
                                    "real 0m0.0$(wc -l < n)s", "took $(wc -l < n) seconds"])
def test_a_result_that_differs_only_in_elapsed_time_is_a_repeat(harness, timing):
    # A test runner stuck on one failure: only its timing line changes (here by a counter, so
    # every run's differs), which is no progress.
    harness.settings(max_steps=6, budgets={"repeated_steps": 3})
    result, _, model = harness.run(forever(command=f'echo x >> n; echo "{timing}"'))
    assert (result.exit_reason, len(model.calls)) == ("repeating", 3)


def test_a_different_step_between_repeats_starts_the_count_again(harness):
    harness.settings(max_steps=7, budgets={"repeated_steps": 3})
    same, other = json_action("shell", command="true"), json_action("shell", command=":")
    result, _, model = harness.run(ScriptedModel([same, same, other, same, same, other, same]))
    assert (result.exit_reason, len(model.calls)) == ("max_steps", 7)


def test_a_repeat_budget_of_0_never_ends_a_rollout(harness):
    harness.settings(max_steps=8, budgets={"repeated_steps": 0})
    result, _, model = harness.run(forever())
    assert (result.exit_reason, len(model.calls)) == ("max_steps", 8)


def test_fresh_starts_begin_again_after_a_loop_within_the_rollouts_steps(harness):
    harness.settings(max_steps=20, fresh_starts=2, budgets={"repeated_steps": 3})
    result, sink, model = harness.run(forever(command="echo same"))
    # three attempts of three repeats each, then no fresh start is left
    assert (result.exit_reason, result.steps, len(model.calls)) == ("repeating", 9, 9)
    notes = [e for e in sink.events if e.name == "fresh_start"]
    assert [(n.content, n.data) for n in notes] == [
        ('shell {"command": "echo same"}', {"repeated": 3, "step": 3, "temperature": 0.2}),
        ('shell {"command": "echo same"}', {"repeated": 3, "step": 6, "temperature": 0.2})]
    fresh = model.calls[3]  # the first call of the second attempt: the task and what looped
    assert [m.role for m in fresh] == ["system", "user"]
    assert fresh[1].content.startswith("Do the task.\n\nAn earlier attempt at this task was "
                                       "stopped: it made the same shell call 3 times in a row")
    assert 'The call: {"command": "echo same"}\nIts result:\nsame\n' in fresh[1].content


def test_a_fresh_start_quotes_a_long_call_and_result_clipped(harness):
    # Both are the agent's own text: a fresh start must not grow by what it chose to repeat.
    harness.settings(fresh_starts=1, budgets={"repeated_steps": 2})
    command = f"echo {'x' * 5_000} # {'y' * 5_000}"
    _, _, model = harness.run(forever(command=command))
    fresh = model.calls[2][1].content
    assert "characters cut" in fresh and len(fresh) < 2 * FRESH_START_CHARS + 500


class TemperatureLog(ScriptedModel):
    """A scripted model that notes the temperature of each call."""

    def __init__(self, replies) -> None:
        super().__init__(replies)
        self.temperatures: list[float] = []

    def chat(self, messages, **options):
        self.temperatures.append(options["temperature"])
        return super().chat(messages, **options)


def test_fresh_attempts_sample_at_the_harness_temperature(harness):
    harness.settings(temperature=0.2, fresh_starts=1, budgets={"repeated_steps": 2})
    model = TemperatureLog([json_action("shell", command="echo same")] * 3
                           + [json_action("done", summary="ok")])
    result, sink, _ = harness.run(model)
    # two calls made the loop, the third ended it; the fresh attempt samples as the first did
    assert (result.exit_reason, model.temperatures) == ("done", [0.2, 0.2, 0.2, 0.2])
    assert [e.data["temperature"] for e in sink.events if e.name == "fresh_start"] == [0.2]


def test_a_repeated_call_is_set_aside_unseen_and_the_model_asked_again_hotter(harness):
    harness.settings(temperature=0.2, repeat_resamples=3)
    model = TemperatureLog([json_action("shell", command="echo one"),
                            json_action("shell", command="echo one"),  # the copy, set aside
                            json_action("shell", command="echo two"),
                            json_action("done", summary="ok")])
    result, sink, _ = harness.run(model)
    assert (result.exit_reason, result.steps) == ("done", 3)
    assert model.temperatures == [0.2, 0.2, 1.0, 0.2]  # only the answer to a repeat is hotter
    ran = [e.data["arguments"]["command"] for e in sink.events
           if e.kind == "tool_call" and e.name == "shell"]
    assert ran == ["echo one", "echo two"]
    # the model never reads its set-aside copy: its next call sees one exchange per step run
    assert "echo one" not in model.calls[3][-1].content and len(model.calls[3]) == 6
    [note] = [e for e in sink.events if e.name == "repeat_resampled"]
    assert (note.content, note.data) == ('shell {"command": "echo one"}',
                                         {"attempt": 1, "temperature": 1.0})
    assert sum(e.kind == "model_call" for e in sink.events) == 4  # its tokens stay on record


def test_when_every_resample_repeats_the_repeat_runs_and_the_repeat_budget_ends_it(harness):
    harness.settings(max_steps=20, repeat_resamples=2, budgets={"repeated_steps": 3})
    result, sink, model = harness.run(forever(command="echo same"))
    # the first call, then twice: a repeat and its two resamples, the last of which runs
    assert (result.exit_reason, result.steps, len(model.calls)) == ("repeating", 3, 7)
    assert [e.data["attempt"] for e in sink.events if e.name == "repeat_resampled"] == [1, 2, 1, 2]


def test_an_unusable_resample_is_asked_again_and_never_acted_on(harness):
    harness.settings(repeat_resamples=2)
    result, sink, model = harness.run([json_action("shell", command="echo one"),
                                       json_action("shell", command="echo one"),
                                       "not an action",
                                       json_action("shell", command="echo two"),
                                       json_action("done", summary="ok")])
    assert (result.exit_reason, result.steps, len(model.calls)) == ("done", 3, 5)
    assert not [e for e in sink.events if e.name in ("parse_retry", "ParseError")]


def test_a_call_after_a_different_one_is_never_resampled(harness):
    harness.settings(repeat_resamples=3)
    result, sink, model = harness.run([json_action("shell", command="echo one"),
                                       json_action("shell", command="echo two"),
                                       json_action("shell", command="echo one"),
                                       json_action("done", summary="ok")])
    assert (result.steps, len(model.calls)) == (4, 4)
    assert not [e for e in sink.events if e.name == "repeat_resampled"]


def test_fresh_starts_share_the_step_budget(harness):
    harness.settings(max_steps=7, fresh_starts=5, budgets={"repeated_steps": 3})
    result, sink, model = harness.run(forever())
    assert (result.exit_reason, result.steps, len(model.calls)) == ("max_steps", 7, 7)
    assert sum(e.name == "fresh_start" for e in sink.events) == 2


# Hooks that make every repeat of a call look new: a refusal that counts itself, and a note that
# changes each time. A hook is a fresh process, so the count comes from its context's history.
COUNTING_REFUSAL = """
def before_tool(call, context):
    seen = sum(1 for old in context["history"] if old["arguments"] == call["arguments"])
    if seen:
        return {"block": f"you ran this before (refused {seen} times now)"}
""" + RUNNER.replace('(request["payload"])', '(request["payload"], request["context"])')

CHANGING_NOTE = """
import time
def after_tool(result):
    result["output"] += f"[checked at {time.time_ns()}]"
    return result
""" + RUNNER


@pytest.mark.parametrize("hook, shown, calls", [
    # ran once, then refused: the refused calls are the same step (nothing ran) three times
    (COUNTING_REFUSAL, "refused 2 times now", 4),
    (CHANGING_NOTE, "[checked at", 3),
], ids=["counting-refusal", "changing-note"])
def test_middleware_text_cannot_hide_a_loop_from_the_repeat_budget(harness, hook, shown, calls):
    # Without the budget these run to max_steps: each result the model reads differs.
    harness.settings(max_steps=10, budgets={"repeated_steps": 3})
    harness.add("middleware", "hook", "middleware/hook.py", hook)
    result, _, model = harness.run(forever())
    assert shown in last_text(model)
    assert (result.exit_reason, len(model.calls)) == ("repeating", calls)
