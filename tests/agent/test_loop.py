"""agent/loop.py: the full loop on the seed harness with a scripted model and a host workdir."""
from __future__ import annotations

from evoharness.agent.events import CallTimings, ModelTotals
from evoharness.agent.model import ModelError, ModelReply, Runaway, ToolCall
from evoharness.agent.parsing import ACTION_TOKENS, CHARS_PER_TOKEN
from tests.agent.conftest import kinds, last_text
from evoharness.agent.clients.scripted import ScriptedModel, json_action, native_call


class RecordingModel(ScriptedModel):
    """Also records the keyword arguments of each call (tools, json_mode)."""

    def __init__(self, replies, **kw):
        super().__init__(replies, **kw)
        self.options: list[dict] = []

    def chat(self, messages, **options):
        self.options.append(options)
        return super().chat(messages, **options)


def test_small_file_task_completes_with_done(harness):
    model = RecordingModel([
        json_action("shell", command="printf 'hello\\n' > greeting.txt"),
        json_action("shell", command="cat greeting.txt"),
        '```json\n{"thought": "checked", "tool": "done", "arguments": {"summary": "wrote greeting.txt"}}\n```',
    ])
    result, sink, _ = harness.run(model, "Write hello into /app/greeting.txt")
    assert (harness.app / "greeting.txt").read_text() == "hello\n"
    assert (result.exit_reason, result.steps, result.final) == ("done", 3, "wrote greeting.txt")
    assert (result.tokens_in, result.tokens_out) == (30, 30)
    assert kinds(sink) == ["model_call", "tool_call", "tool_result"] * 3
    assert [e.seq for e in sink.events] == list(range(9))
    assert "hello" in model.calls[2][-1].content and "[exit code: 0]" in model.calls[2][-1].content
    system, instruction = model.calls[0][:2]
    assert system.role == "system" and '"tool"' in system.content and "`shell`" in system.content
    assert instruction.content == "Write hello into /app/greeting.txt"
    assert model.options[0]["json_mode"] is True and model.options[0]["tools"] is None
    assert sink.events[1].data["arguments"] == {"command": "printf 'hello\\n' > greeting.txt"}


def test_invalid_arguments_reach_the_model_as_a_structured_error(harness):
    result, sink, model = harness.run([
        json_action("shell", cmd="ls"),
        json_action("shel", command="ls"),
        json_action("done", summary="gave up"),
    ])
    assert result.exit_reason == "done"
    assert "ERROR (permanent)" in model.calls[1][-1].content
    assert "'command' is a required property" in model.calls[1][-1].content
    assert "unknown tool 'shel'" in last_text(model)
    assert sink.events[2].data["error"]["kind"] == "permanent"


def test_unparseable_reply_is_retried_once_without_costing_a_step(harness):
    result, sink, model = harness.run(["I think I should list files.", json_action("done", summary="ok")])
    assert (result.exit_reason, result.steps) == ("done", 1)
    feedback = model.calls[1][-1]
    assert feedback.role == "user" and "could not be used" in feedback.content
    assert '"arguments"' in feedback.content  # the expected format is restated
    assert kinds(sink)[:2] == ["model_call", "note"] and sink.events[1].name == "parse_retry"


def test_two_unparseable_replies_in_a_row_cost_a_step_with_an_error_event(harness):
    result, sink, _ = harness.run(["nope", "still nope", "again no", json_action("done", summary="ok")])
    assert (result.exit_reason, result.steps) == ("done", 2)
    assert [e.name for e in sink.events if e.kind in ("note", "error")] == [
        "parse_retry", "ParseError", "parse_retry"]


def test_unavailable_model_ends_the_rollout_cleanly(harness):
    result, sink, _ = harness.run([ModelError("connection refused", kind="unavailable")])
    assert result.exit_reason == "model_unavailable"
    assert sink.events[-1].kind == "error" and sink.events[-1].data["kind"] == "unavailable"


def test_other_model_errors_end_with_model_error(harness):
    result, sink, _ = harness.run([json_action("shell", command="true"),
                                   ModelError("bad request", kind="permanent")])
    assert (result.exit_reason, result.steps) == ("model_error", 1)
    assert sink.events[-1].kind == "error"


def test_native_format_passes_tool_specs_and_answers_with_tool_messages(harness):
    harness.settings(action_format="native")
    model = RecordingModel([native_call("shell", "c1", command="echo native"),
                            native_call("done", "c2", summary="fine")])
    result, _, _ = harness.run(model)
    assert result.exit_reason == "done"
    assert [t.name for t in model.options[0]["tools"]] == ["shell", "done"]
    assert model.options[0]["json_mode"] is False
    assistant, answer = model.calls[1][-2:]
    assert assistant.tool_calls[0].id == "c1" and answer.role == "tool"
    assert answer.tool_call_id == "c1" and "native" in answer.content


def test_native_malformed_arguments_are_answered_on_the_same_call_id(harness):
    harness.settings(action_format="native")
    bad = ModelReply(content="", tool_calls=[ToolCall(id="c9", name="shell", arguments="{command: ls")])
    result, _, model = harness.run([bad, native_call("done", summary="ok")])
    assert result.exit_reason == "done"
    answer = model.calls[1][-1]
    assert answer.role == "tool" and answer.tool_call_id == "c9" and "not valid JSON" in answer.content


class ConstrainingModel(RecordingModel):
    """A scripted server that says it enforces schemas, and refuses them while `refuse` is set."""

    constrains_by_default = True

    def __init__(self, replies, refuse: bool = False):
        super().__init__(replies)
        self.refuse = refuse

    def chat(self, messages, **options):
        if self.refuse and options.get("schema") is not None:
            self.options.append(options)
            raise ModelError("grammar conversion failed", kind="permanent", field="scripted")
        return super().chat(messages, **options)


def test_json_actions_are_decoded_under_the_action_schema_by_default(harness):
    model = ConstrainingModel([json_action("done", summary="ok")])
    harness.run(model)
    variants = model.options[0]["schema"]["oneOf"]
    assert [v["properties"]["tool"]["const"] for v in variants] == ["shell", "done"]
    command = harness.load().tools[0].parameters["properties"]["command"]
    cap = (harness.load().spec.settings.max_output_tokens - ACTION_TOKENS) * CHARS_PER_TOKEN
    assert variants[0]["properties"]["arguments"]["properties"] == {
        "command": {**command, "maxLength": cap}}  # the reply closes before its token limit


def test_without_a_thought_the_action_is_only_the_tool_and_its_arguments(harness):
    model = ConstrainingModel(["not an action", json_action("done", summary="ok")])
    harness.settings(thought_chars=0).run(model)
    variants = model.options[0]["schema"]["oneOf"]
    assert [sorted(v["properties"]) for v in variants] == [["arguments", "tool"]] * 2
    assert [v["required"] for v in variants] == [["tool", "arguments"]] * 2
    feedback = model.calls[1][-1].content  # the protocol restated after the unusable reply
    assert '{"tool": "<tool name>"' in feedback and "thought" not in feedback


def test_the_setting_turns_constrained_decoding_off_or_on(harness):
    model = ConstrainingModel([json_action("done", summary="ok")])
    harness.settings(constrained_decoding="off").run(model)
    assert "schema" not in model.options[0]
    plain = RecordingModel([json_action("done", summary="ok")])  # not known to constrain
    harness.run(plain)
    assert "schema" not in plain.options[0]
    harness.settings(constrained_decoding="on").run(plain)
    assert plain.options[1]["schema"]["oneOf"]
    native = ConstrainingModel([native_call("done", summary="ok")])
    harness.settings(action_format="native", constrained_decoding="on").run(native)
    assert "schema" not in native.options[0]  # the server's own tool-call format applies


def test_a_server_refusing_the_schema_is_asked_again_without_it(harness):
    model = ConstrainingModel([json_action("shell", command="true"),
                               json_action("done", summary="ok")], refuse=True)
    result, sink, _ = harness.run(model)
    assert result.exit_reason == "done"
    assert ["schema" in o for o in model.options] == [True, False, False]  # once, then never
    notes = [e for e in sink.events if e.name == "constrained_decoding_off"]
    assert len(notes) == 1 and "grammar conversion failed" in notes[0].content


def _timed(timings: CallTimings, clock: list[float], seconds: float):
    def reply(messages):
        clock[0] += seconds
        return ModelReply(content=json_action("shell", command="true"), tokens_in=400,
                          tokens_out=40, timings=timings)
    return reply


def test_a_model_call_s_timings_reach_its_event_and_a_stall_names_the_exit(harness):
    """Each call of 200 s against a 300 s wall budget: the budget ends the rollout after the
    second (400 s). When the stalled calls lost at least half of that (their server said so),
    the machine spent the time and the exit reason says so; a stall that lost less leaves the
    timeout the harness's."""
    for stalled, lost_ms, expected in ((True, 100_000.0, "model_stalled"),
                                       (True, 99_000.0, "wall_time"), (False, 0.0, "wall_time")):
        timings = CallTimings(tokens_read=380, tokens_cached=20, prefill_ms=150_000.0,
                              decode_ms=50_000.0, stalled=stalled, stall_ms=lost_ms)
        now = [0.0]
        replies = [_timed(timings, now, 200.0) for _ in range(3)]
        result, sink, _ = harness.run(replies, clock=lambda: now[0])
        assert result.exit_reason == expected
        calls = [e for e in sink.events if e.kind == "model_call"]
        assert [e.timings for e in calls] == [timings, timings]
        assert ModelTotals.of(sink.events) == ModelTotals(
            model_calls=2, model_s=sum(e.duration_ms for e in calls) / 1000, tokens_read=760,
            tokens_cached=40, prefill_s=300.0, decode_s=100.0, stalled_calls=2 * stalled,
            stall_s=2 * lost_ms / 1000)


def test_the_model_reads_tool_output_up_to_the_harness_s_bound_and_the_event_keeps_it(harness):
    harness.settings(tool_output_chars=1000)
    model = RecordingModel([json_action("shell", command="python3 -c 'print(\"q\" * 6000)'"),
                            json_action("done", summary="ok")])
    result, sink, _ = harness.run(model)
    read = model.calls[1][-1].content
    assert "characters cut" in read and 900 < read.count("q") <= 1000  # head and tail of 1000
    output = next(e for e in sink.events if e.kind == "tool_result")
    assert output.content.count("q") == 6000  # the event keeps what the model did not read
    assert model.options[0]["context_tokens"] == 6000  # the budget the server is sized for


def test_a_reply_cut_as_a_runaway_runs_what_was_kept_and_its_event_says_so(harness):
    runaway = Runaway(unit=" | wc -l", decoded='{"thought":"","tool":"shell","arguments":'
                      '{"command":"ls' + " | wc -l" * 30)
    kept = ModelReply(content=json_action("shell", command="ls | wc -l"), tokens_in=90,
                      tokens_out=70, runaway=runaway)
    result, sink, _ = harness.run([lambda messages, **_: kept,
                                   json_action("done", summary="counted")])
    [first, second] = [e for e in sink.events if e.kind == "model_call"]
    assert first.data["runaway"] == runaway.model_dump() and "runaway" not in second.data
    assert sink.events[1].data["arguments"] == {"command": "ls | wc -l"}
    assert result.exit_reason == "done"
