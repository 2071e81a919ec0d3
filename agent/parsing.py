"""Turning a model reply into one Action (tool name + arguments) for both action formats, forgiving
where it is safe; the reply protocol text shown to the model on a parse error, and the JSON schema of
one action that constrained decoding forces a reply into. Dispatch is tools.py's."""
from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evoharness.agent.model import ModelReply
from evoharness.errors import EvoError
from evoharness.workspace.spec import THOUGHT_CHARS, ToolSpec

ActionFormat = Literal["json", "native"]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)  # a backslash and what follows, pair by pair
_STRING_VALUE = re.compile(r'"[A-Za-z_][A-Za-z0-9_]*"\s*:\s*"')  # `"key": "` opening a string
_OBJECT_END = re.compile(r'"\s*(?:\}\s*)+$')  # a string's closing quote, then only braces
_BARE_QUOTE = re.compile(r'(?<!\\)"')
_NEXT_KEY = re.compile(r'"\s*,\s*"[A-Za-z_][A-Za-z0-9_]*"\s*:')  # `", "key":` inside a value
_JSON_ESCAPES = set('"\\/bfnrtu')
_ACTION_KEYS = {"tool", "name", "thought"}
_JSON_TYPES = {"string", "object", "array", "number", "integer", "boolean", "null"}
# Characters a token of a reply holds at least, in practice (code and prose hold 3-4): each free
# string argument is capped so that the action closes before the reply's token limit. Uncapped,
# the 1.5B once repeated "| awk '{print $1, $2}'" until the limit cut its reply mid-string.
CHARS_PER_TOKEN = 2
ACTION_TOKENS = 130  # the thought (THOUGHT_CHARS), the tool name and the JSON around them
_SCHEMA_KEYS = {
    "type", "description", "properties", "required", "items", "enum", "default",
    "additionalProperties", "title", "$schema",
}


class Action(BaseModel):
    """One tool call the model asked for. `note` says what the parser had to forgive."""

    model_config = ConfigDict(frozen=True)

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None
    thought: str = ""
    note: str = ""


class ParseError(EvoError):
    """A reply that holds no usable action; the message is what the model reads back."""


def parse_reply(reply: ModelReply, action_format: ActionFormat) -> Action:
    if action_format == "native":
        return _parse_native(reply)
    return _parse_json_action(reply.content)


def format_instructions(action_format: ActionFormat, tool_names: list[str],
                        thought_chars: int = THOUGHT_CHARS) -> str:
    """The reply protocol, as the model is reminded of it after a parse error."""
    tools = ", ".join(tool_names)
    thought = '"thought": "<short reasoning>", ' if thought_chars else ""
    if action_format == "native":
        return (
            f"Call exactly one tool per reply using a native tool call. Available tools: {tools}. "
            'When the task is finished, call `done` with {"summary": "..."}.'
        )
    return (
        "Reply with exactly ONE JSON object and nothing else, of the form "
        f'{{{thought}"tool": "<tool name>", "arguments": {{<argument values>}}}}. '
        f"Available tools: {tools}. Give argument VALUES, not their schema. "
        'When the task is finished, use the tool "done" with arguments {"summary": "..."}.'
    )


def action_schema(tools: list[ToolSpec], max_tokens: int | None = None,
                  thought_chars: int = THOUGHT_CHARS) -> dict[str, Any]:
    """The JSON-format action as one JSON schema: a thought of at most `thought_chars` (none at
    0), then one of `tools` by name with that tool's own argument schema (a oneOf over the tools).
    A server that decodes under this schema cannot produce an unparsable reply, an invented tool
    or an unknown argument key; with `max_tokens` (the reply's limit), nor one the limit cuts off
    in a string argument."""
    cap = (None if max_tokens is None
           else max(THOUGHT_CHARS, (max_tokens - ACTION_TOKENS) * CHARS_PER_TOKEN))
    return {"oneOf": [_one_action(tool, cap, thought_chars) for tool in tools]}


def _one_action(tool: ToolSpec, cap: int | None, thought_chars: int) -> dict[str, Any]:
    arguments = dict(tool.parameters)
    arguments.setdefault("type", "object")
    if "properties" in arguments:
        arguments.setdefault("additionalProperties", False)
        if cap is not None:
            arguments["properties"] = {name: _capped(spec, cap)
                                       for name, spec in arguments["properties"].items()}
    thought = {"thought": {"type": "string", "maxLength": thought_chars}} if thought_chars else {}
    return {
        "type": "object",
        "properties": {**thought, "tool": {"type": "string", "const": tool.name},
                       "arguments": arguments},
        "required": [*thought, "tool", "arguments"],
        "additionalProperties": False,
    }


def _capped(spec: Any, cap: int) -> Any:
    """A free string argument (no length, enum or const of its own) at most `cap` characters."""
    free = (isinstance(spec, dict) and spec.get("type") == "string"
            and not {"maxLength", "enum", "const"} & set(spec))
    return {**spec, "maxLength": cap} if free else spec


def _parse_native(reply: ModelReply) -> Action:
    if not reply.tool_calls:
        # Some models put the call in the text instead; accept it when it is an unambiguous action.
        try:
            action = _parse_json_action(reply.content)
        except ParseError as error:
            raise ParseError(f"the reply has no tool call, and its text holds no usable one "
                             f"({error.message})", field="tool_calls") from None
        note = "; ".join(filter(None, ["tool call read from the message text", action.note]))
        return action.model_copy(update={"note": note})
    call = reply.tool_calls[0]
    note = ""
    if len(reply.tool_calls) > 1:
        ignored = ", ".join(c.name for c in reply.tool_calls[1:])
        note = f"only the first of {len(reply.tool_calls)} tool calls ran (ignored: {ignored})"
    arguments = _arguments_dict(call.arguments, field=f"tool_calls[0].{call.name}.arguments")
    return Action(tool=call.name, arguments=arguments, call_id=call.id, note=note)


def _parse_json_action(text: str) -> Action:
    found = _first_json_object(text)
    if found is None:
        raise ParseError("no JSON object found in the reply", field="content", value=text[:200])
    obj, notes = found
    tool = obj.get("tool", obj.get("name"))
    if not isinstance(tool, str) or not tool:
        raise ParseError('the JSON object has no "tool" name', field="tool", value=obj)
    if "arguments" in obj or "parameters" in obj:
        raw = obj.get("arguments", obj.get("parameters"))
    else:  # small models often flatten the arguments into the action; the schema check follows
        raw = {k: v for k, v in obj.items() if k not in _ACTION_KEYS}
        notes += ["arguments read from the top level of the action"] if raw else []
    arguments = _arguments_dict(raw, field="arguments")
    thought = obj.get("thought", "")
    return Action(tool=tool, arguments=arguments, note="; ".join(notes),
                  thought=thought if isinstance(thought, str) else "")


def _first_json_object(text: str) -> tuple[dict[str, Any], list[str]] | None:
    """The first balanced JSON object, looking inside code fences first, and what reading it
    forgave. A backslash JSON does not define (a shell command's `\\;`, `\\.` or `\\$`) is read
    as a literal backslash, as the command meant it: strictly, the 1.5B's `find ... -exec rm {}
    \\;` was no action at all. Failing that, an object whose last string holds bare quotes."""
    text = _ESCAPE.sub(_literal_if_invalid, text)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start in (i for i, ch in enumerate(candidate) if ch == "{"):
            try:
                obj, _ = decoder.raw_decode(candidate, start)
            except (json.JSONDecodeError, RecursionError):  # nesting past the decoder's stack
                continue
            if isinstance(obj, dict):
                return obj, []
    for candidate in candidates:
        obj = _with_bare_quotes_kept(candidate)
        if obj is not None:
            return obj, ["quotes inside the last argument read as its own"]
    return None


def _with_bare_quotes_kept(candidate: str) -> dict[str, Any] | None:
    """The object `candidate` ends with, when its last string value holds unescaped double quotes:
    without the grammar of the JSON format, the 1.5B writes `"command": "mv "$f" "${f%.txt}.md""`
    and strictly nothing runs. Only that last value is repaired (its bare quotes escaped): tried
    from the last `"key": "` back, the first repair that parses to an object is taken, unless the
    value would swallow a later key (`"tool": "shell", "arguments": ...` read as one tool name)."""
    candidate = candidate.rstrip()
    end = _OBJECT_END.search(candidate)
    first = candidate.find("{")
    if end is None or first < 0:
        return None
    openings = list(_STRING_VALUE.finditer(candidate, first, end.start()))
    for opening in reversed(openings):
        value = candidate[opening.end():end.start()]
        if _NEXT_KEY.search(value):
            return None
        value = _BARE_QUOTE.sub(r'\\"', value)
        repaired = candidate[first:opening.end()] + value + candidate[end.start():]
        try:
            obj = json.loads(repaired)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _literal_if_invalid(escape: re.Match[str]) -> str:
    return escape.group(0) if escape.group(1) in _JSON_ESCAPES else "\\" + escape.group(0)


def _arguments_dict(raw: Any, *, field: str) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise ParseError(f"arguments are not valid JSON ({exc.msg})", field=field, value=raw) from None
        except RecursionError:
            raise ParseError("arguments are nested too deeply", field=field, value=raw) from None
    if not isinstance(raw, dict):
        raise ParseError("arguments must be a JSON object", field=field, value=raw)
    echoed_whole = raw.get("type") == "object" and "properties" in raw and _looks_like_schema(raw)
    if echoed_whole or any(_looks_like_schema(v) for v in raw.values()):
        raise ParseError(
            "the arguments are a JSON schema echoed back, not values",
            field=field,
            value=raw,
            hint='give the values themselves, e.g. {"command": "ls -la"}',
        )
    return raw


def _looks_like_schema(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in _JSON_TYPES
        and set(value) <= _SCHEMA_KEYS
    )
