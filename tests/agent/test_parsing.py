"""agent/parsing.py: both action formats, what is forgiven and what is reported."""
from __future__ import annotations

import json

import pytest

from evoharness.agent.model import ModelReply, ToolCall
from evoharness.agent.parsing import ParseError, format_instructions, parse_reply


def parse_json(text: str):
    return parse_reply(ModelReply(content=text), "json")


def test_plain_json_action_with_thought():
    action = parse_json('{"thought": "look", "tool": "shell", "arguments": {"command": "ls"}}')
    assert (action.tool, action.arguments, action.thought) == ("shell", {"command": "ls"}, "look")


def test_code_fence_and_surrounding_prose_are_stripped():
    text = 'Sure! Here is my action:\n```json\n{"tool": "shell", "arguments": {"command": "pwd"}}\n```\nDone.'
    assert parse_json(text).arguments == {"command": "pwd"}


def test_first_balanced_object_skips_non_json_braces_and_keeps_braces_in_strings():
    text = 'I will use {shell} now: {"tool": "shell", "arguments": {"command": "echo \'}{\'"}} {"tool": "x"}'
    action = parse_json(text)
    assert action.tool == "shell" and action.arguments == {"command": "echo '}{'"}


def test_a_backslash_json_does_not_define_is_the_commands_own():
    """The 1.5B's reply in its own tool-calling format, word for word: strict JSON refuses `\\;`."""
    text = ('```json\n{\n  "name": "shell",\n  "arguments": {\n    "command": "find /app/work '
            '-type f -name \'*.tmp\' -exec rm -f {} \\;"\n  }\n}\n```')
    action = parse_reply(ModelReply(content=text), "native")
    assert action.arguments == {"command": "find /app/work -type f -name '*.tmp' -exec rm -f {} \\;"}
    command = 'printf "a\\\\b\\n" \\; echo "\u00e9"'  # escaped backslashes before b and n
    valid = parse_json(json.dumps({"tool": "shell", "arguments": {"command": command}}))
    assert valid.arguments == {"command": command}  # valid escapes mean what JSON says


def test_bare_quotes_in_the_last_argument_are_read_as_its_own():
    """The 1.5B's native-format reply, word for word: without a grammar it leaves the quotes of
    `"$file"` bare, and strictly nothing ran (5 of its 14 rename-to-markdown trial rollouts)."""
    command = 'for file in /app/notes/*.txt; do mv "$file" "${file%.txt}.md"; done'
    text = (f'```json\n{{\n  "name": "shell",\n  "arguments": {{\n    "command": "{command}"'
            '\n  }\n}\n```')
    action = parse_reply(ModelReply(content=text), "native")
    assert (action.tool, action.arguments) == ("shell", {"command": command})
    assert "quotes inside the last argument" in action.note and "message text" in action.note
    flat = parse_json('{"thought": "t", "tool": "shell", "command": "grep "a: b" f"}')
    assert flat.arguments == {"command": 'grep "a: b" f'}
    assert parse_json('{"tool": "shell", "arguments": {"command": "echo \\"ok\\" "x""}}'
                      ).arguments == {"command": 'echo "ok" "x"'}  # escaped ones stay as they are


@pytest.mark.parametrize("text", [
    '{"tool": "shell", "arguments": {"command": "echo "a""}} and then some prose',
    '{"tool": "shell", "arguments": {"command": "echo "a", "cwd": "/"}',  # would be tool's
    '{"tool": "shell", "arguments": {"command": "echo "a", "cwd": "/"}}',
    '"command": "echo "a""}',
])
def test_bare_quotes_are_not_guessed_at_unless_one_last_string_ends_the_object(text):
    with pytest.raises(ParseError):
        parse_json(text)


def test_name_and_parameters_keys_are_accepted():
    action = parse_json('{"name": "shell", "parameters": {"command": "ls"}}')
    assert (action.tool, action.arguments) == ("shell", {"command": "ls"})


def test_flattened_arguments_are_read_from_the_top_level():
    action = parse_json('{"thought": "t", "tool": "shell", "command": "ls"}')
    assert action.arguments == {"command": "ls"} and "top level" in action.note
    assert parse_json('{"tool": "done"}').arguments == {}


def test_arguments_given_as_a_json_string_are_decoded():
    assert parse_json('{"tool": "shell", "arguments": "{\\"command\\": \\"ls\\"}"}').arguments == {
        "command": "ls"}


@pytest.mark.parametrize("arguments", [
    '{"command": {"type": "string"}}',
    '{"command": {"type": "string", "description": "The bash command"}}',
    '{"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}',
])
def test_echoed_schema_is_reported_not_run(arguments):
    with pytest.raises(ParseError) as err:
        parse_json(f'{{"tool": "shell", "arguments": {arguments}}}')
    assert "schema" in err.value.message and err.value.field == "arguments"


def test_a_value_that_merely_mentions_type_is_not_a_schema():
    action = parse_json('{"tool": "convert", "arguments": {"type": "string", "text": "x"}}')
    assert action.arguments == {"type": "string", "text": "x"}


@pytest.mark.parametrize("text, field", [
    ("I cannot do that.", "content"),
    ('{"thought": "no tool here"}', "tool"),
    ('{"tool": "shell", "arguments": [1, 2]}', "arguments"),
    ('{"tool": "shell", "arguments": "not json"}', "arguments"),
])
def test_garbage_is_a_parse_error_naming_the_field(text, field):
    with pytest.raises(ParseError) as err:
        parse_json(text)
    assert err.value.field == field


def test_native_tool_call():
    reply = ModelReply(content="", tool_calls=[ToolCall(id="c1", name="shell", arguments={"command": "ls"})])
    action = parse_reply(reply, "native")
    assert (action.tool, action.arguments, action.call_id, action.note) == ("shell", {"command": "ls"}, "c1", "")


def test_native_raw_string_arguments_are_decoded_or_reported():
    good = ModelReply(content="", tool_calls=[ToolCall(id="c", name="shell", arguments='{"command": "ls"}')])
    assert parse_reply(good, "native").arguments == {"command": "ls"}
    bad = ModelReply(content="", tool_calls=[ToolCall(id="c", name="shell", arguments='{"command": ls')])
    with pytest.raises(ParseError) as err:
        parse_reply(bad, "native")
    assert err.value.field == "tool_calls[0].shell.arguments" and "not valid JSON" in err.value.message


def test_native_several_calls_runs_the_first_and_says_so():
    reply = ModelReply(content="", tool_calls=[
        ToolCall(id="a", name="shell", arguments={"command": "ls"}),
        ToolCall(id="b", name="done", arguments={"summary": "x"})])
    action = parse_reply(reply, "native")
    assert action.call_id == "a" and "ignored: done" in action.note


def test_native_without_tool_call_reads_an_action_from_the_text_or_fails():
    action = parse_reply(ModelReply(content='{"tool": "done", "arguments": {"summary": "ok"}}'), "native")
    assert action.tool == "done" and "message text" in action.note
    with pytest.raises(ParseError) as err:
        parse_reply(ModelReply(content="All finished!"), "native")
    assert err.value.field == "tool_calls" and "no JSON object found" in err.value.message


def test_format_instructions_name_the_tools_and_done():
    text = format_instructions("json", ["shell", "done"])
    assert '"tool"' in text and "shell, done" in text and '"summary"' in text
    assert '{"thought": "<short reasoning>", "tool": "<tool name>"' in text
    assert "thought" not in format_instructions("json", ["shell", "done"], thought_chars=0)


def test_the_action_schema_admits_each_tool_with_its_own_arguments_only():
    from jsonschema import Draft202012Validator

    from evoharness.agent.parsing import action_schema
    from evoharness.agent.tools import DONE
    from evoharness.workspace.spec import ToolSpec

    shell = ToolSpec(name="shell", description="run", parameters={
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
    valid = Draft202012Validator(action_schema([shell, DONE])).is_valid
    assert valid({"thought": "look", "tool": "shell", "arguments": {"command": "ls"}})
    assert valid({"thought": "ok", "tool": "done", "arguments": {"summary": "fine"}})
    assert not valid({"thought": "", "tool": "python", "arguments": {"command": "ls"}})  # invented
    assert not valid({"thought": "", "tool": "shell", "arguments": {"summary": "x"}})  # done's key
    assert not valid({"thought": "", "tool": "shell", "arguments": {"command": "ls", "cwd": "/"}})
    assert not valid({"thought": "", "tool": "shell", "arguments": {"command": "ls"}, "x": 1})
    assert not valid({"tool": "shell", "arguments": {"command": "ls"}})  # the thought comes first
    terse = Draft202012Validator(action_schema([shell, DONE], thought_chars=0)).is_valid
    assert terse({"tool": "shell", "arguments": {"command": "ls"}})
    assert not terse({"thought": "look", "tool": "shell", "arguments": {"command": "ls"}})
    short = Draft202012Validator(action_schema([DONE], thought_chars=5)).is_valid
    assert short({"thought": "12345", "tool": "done", "arguments": {"summary": "s"}})
    assert not short({"thought": "123456", "tool": "done", "arguments": {"summary": "s"}})


def test_string_arguments_are_capped_so_the_action_closes_before_the_token_limit():
    from jsonschema import Draft202012Validator

    from evoharness.agent.parsing import ACTION_TOKENS, CHARS_PER_TOKEN, action_schema
    from evoharness.workspace.spec import ToolSpec

    tool = ToolSpec(name="edit", description="edit", parameters={"type": "object", "properties": {
        "path": {"type": "string"}, "mode": {"type": "string", "enum": ["a", "w"]},
        "note": {"type": "string", "maxLength": 5}}})
    valid = Draft202012Validator(action_schema([tool], max_tokens=512)).is_valid
    cap = (512 - ACTION_TOKENS) * CHARS_PER_TOKEN

    def call(**arguments: str) -> dict:
        return {"thought": "t", "tool": "edit", "arguments": arguments}

    assert valid(call(path="x" * cap, mode="w", note="short"))
    assert not valid(call(path="x" * (cap + 1)))
    assert not valid(call(note="longer"))  # a tool's own bound stands
    assert Draft202012Validator(action_schema([tool])).is_valid(call(path="x" * 10_000))
    assert not valid({"thought": "x" * 301, "tool": "done", "arguments": {"summary": "s"}})
