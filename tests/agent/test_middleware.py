"""agent/middleware.py: harness hooks run in the Environment, add to the task, change or block
calls, and a broken hook is skipped with an error event while the rollout goes on."""
from __future__ import annotations

import json

from tests.agent.conftest import kinds, last_text
from evoharness.agent.clients.scripted import json_action
from evoharness.agent.middleware import START_CHARS

RUNNER = '''
if __name__ == "__main__":
    import json, sys
    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"])
    if result is not None:
        print(json.dumps(result))
'''

GUARD = '''
def before_tool(call):
    command = call["arguments"].get("command", "")
    if "rm -rf" in command:
        return {"block": "destructive command"}
    if command == "ls":
        return {"tool": call["tool"], "arguments": {"command": "ls -1"}}
    return None

def after_tool(result):
    if result["tool"] == "shell":
        result["output"] = "[checked] " + result["output"]
        return result
''' + RUNNER

REMINDER = '''
def before_model(messages):
    return messages + [{"role": "user", "content": "REMINDER: check your work"}]
''' + RUNNER

CRASHES = '''
def before_tool(call):
    raise RuntimeError("middleware bug")
''' + RUNNER

PRINTS_GARBAGE = '''
def after_model(reply):
    print("not json at all")
''' + RUNNER


def add_middleware(harness, name, code):
    harness.add("middleware", name, f"middleware/{name}.py", code)


def test_before_tool_rewrites_and_blocks_and_after_tool_edits_output(harness):
    (harness.app / "keep.txt").write_text("x")
    add_middleware(harness, "guard", GUARD)
    result, sink, model = harness.run([
        json_action("shell", command="ls"),
        json_action("shell", command="rm -rf /app/keep.txt"),
        json_action("done", summary="ok"),
    ])
    assert result.exit_reason == "done"
    assert model.calls[1][-1].content.startswith("Result of shell:\n[checked] keep.txt")
    assert "blocked by middleware: destructive command" in last_text(model)
    assert (harness.app / "keep.txt").exists()
    actions = [(e.data["hook"], e.data["action"]) for e in sink.events if e.kind == "middleware"]
    assert actions == [("before_tool", "modify"), ("after_tool", "modify"), ("before_tool", "block")]


def test_before_model_changes_what_the_model_reads(harness):
    add_middleware(harness, "reminder", REMINDER)
    _, _, model = harness.run([json_action("done", summary="ok")])
    assert last_text(model) == "REMINDER: check your work"


def test_a_crashing_hook_is_skipped_with_an_error_event(harness):
    add_middleware(harness, "buggy", CRASHES)
    result, sink, _ = harness.run([json_action("shell", command="echo ran > ran.txt"),
                                   json_action("done", summary="ok")])
    assert result.exit_reason == "done" and (harness.app / "ran.txt").exists()
    errors = [e for e in sink.events if e.kind == "error"]
    assert errors[0].name == "middleware:buggy" and "middleware bug" in errors[0].content
    assert errors[0].data == {"hook": "before_tool", "skipped": True}


def test_an_unusable_payload_is_skipped(harness):
    add_middleware(harness, "noisy", PRINTS_GARBAGE)
    result, sink, _ = harness.run([json_action("done", summary="ok")])
    assert result.exit_reason == "done"
    assert "unusable payload" in [e for e in sink.events if e.kind == "error"][0].content


def test_a_hook_past_the_timeout_is_skipped(harness):
    harness.settings(tool_timeout_seconds=0.5)
    add_middleware(harness, "slow", "import time\n\ndef after_model(reply):\n    time.sleep(10)\n" + RUNNER)
    result, sink, _ = harness.run([json_action("done", summary="ok")])
    assert result.exit_reason == "done"
    assert "timeout" in [e for e in sink.events if e.kind == "error"][0].content


def test_only_defined_hooks_are_run(harness):
    add_middleware(harness, "reminder", REMINDER)
    _, sink, _ = harness.run([json_action("done", summary="ok")])
    assert kinds(sink) == ["middleware", "model_call", "tool_call", "tool_result"]
    assert [script for script, _ in harness.env.calls] == ["middleware/reminder.py"]


def test_after_model_can_rewrite_the_reply(harness):
    add_middleware(harness, "finisher", '''
def after_model(reply):
    reply["content"] = '{"tool": "done", "arguments": {"summary": "rewritten"}}'
    return reply
''' + RUNNER)
    result, _, _ = harness.run(["garbage the middleware replaces"])
    assert (result.exit_reason, result.final) == ("done", "rewritten")


CONTEXT_RUNNER = RUNNER.replace('(request["payload"])', '(request["payload"], request["context"])')
REMEMBERS = '''
import json

def before_tool(call, context):
    if call["arguments"].get("command") == "blocked":
        return {"block": "not this one"}
    if call["tool"] == "done":
        return {"block": json.dumps(context)} if context["calls"] < 3 else None
''' + CONTEXT_RUNNER


def test_hooks_get_the_task_and_the_recent_calls_with_their_results(harness):
    """A hook is a fresh process each call: the context is its memory."""
    add_middleware(harness, "remembers", REMEMBERS)
    result, _, model = harness.run([json_action("shell", command="echo one"),
                                    json_action("shell", command="blocked"),
                                    json_action("done", summary="a"),
                                    json_action("done", summary="b")],
                                   instruction="Write one.txt.")
    assert result.final == "b"
    context = json.loads(model.calls[3][-1].content.split("blocked by middleware: ", 1)[1]
                         .split("\nSuggestion")[0])
    assert (context["instruction"], context["calls"]) == ("Write one.txt.", 2)
    assert context["max_steps"] == harness.load().spec.settings.max_steps
    ran, blocked = context["history"]
    assert (ran["tool"], ran["arguments"], ran["output"], ran["blocked"]) == (
        "shell", {"command": "echo one"}, "one\n[exit code: 0]\n", None)
    assert (blocked["arguments"], blocked["output"], blocked["blocked"]) == (
        {"command": "blocked"}, "", "not this one")


PREVIEW = '''
def before_start(instruction, context):
    return instruction + "\\n[/app holds: a.txt]"

def before_tool(call, context):
    if call["tool"] == "done" and context["calls"] == 0:
        return {"block": "the task was: " + context["instruction"]}
''' + CONTEXT_RUNNER


def test_before_start_adds_to_the_task_for_the_whole_rollout(harness):
    """Unlike a before_model note, what before_start adds is the task message itself: every call
    reads it in the same place, so the prompt cache keeps it. Hooks still see the task as given."""
    add_middleware(harness, "preview", PREVIEW)
    result, sink, model = harness.run([json_action("done", summary="a"),
                                       json_action("done", summary="b")],
                                      instruction="Write one.txt.")
    assert result.final == "b"
    tasks = [next(m.content for m in call if m.role == "user") for call in model.calls]
    assert tasks == ["Write one.txt.\n[/app holds: a.txt]"] * 2
    assert "blocked by middleware: the task was: Write one.txt.\n" in last_text(model)
    assert "[/app holds" not in last_text(model)
    hooks = [e.data["hook"] for e in sink.events if e.kind == "middleware"]
    assert hooks == ["before_start", "before_tool"]


def test_a_before_start_past_its_bound_or_not_a_string_is_skipped(harness):
    returns = (("huge", f"instruction + 'x' * {START_CHARS}"), ("listy", "[instruction]"))
    for name, returned in returns:
        add_middleware(harness, name, f"def before_start(instruction, context):\n"
                                      f"    return {returned}\n" + CONTEXT_RUNNER)
    result, sink, model = harness.run([json_action("done", summary="ok")], instruction="Go.")
    assert result.exit_reason == "done"
    assert [m.content for m in model.calls[0] if m.role == "user"] == ["Go."]
    errors = [e.content for e in sink.events if e.kind == "error"]
    assert len(errors) == 2 and "more than 16,000" in errors[0]
    assert "must print a JSON string, not list" in errors[1]
