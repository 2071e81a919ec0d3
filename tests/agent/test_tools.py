"""agent/tools.py: schema validation before dispatch, structured errors, harness tool dispatch."""
from __future__ import annotations

import pytest

from evoharness.agent.environment import ExecResult
from evoharness.agent.tools import DONE, ToolRegistry, ToolResult, done_tool, from_exec, harness_tool
from evoharness.errors import EvoError
from tests.fixtures.host_env import HostEnvironment
from evoharness.workspace.spec import ToolSpec

ECHO = ToolSpec(name="echo", description="echo text", parameters={
    "type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
    "required": ["text"], "additionalProperties": False})


@pytest.fixture
def registry():
    seen: list[dict] = []
    reg = ToolRegistry()
    reg.add(ECHO, lambda args: seen.append(args) or ToolResult(output=args["text"]))
    reg.add(DONE, done_tool)
    reg.seen = seen
    return reg


@pytest.mark.parametrize("name, arguments, expected", [
    ("ehco", {"text": "x"}, "unknown tool 'ehco'"),
    ("echo", {}, "'text' is a required property"),
    ("echo", {"text": "x", "colour": "red"}, "'colour' was unexpected"),
    ("echo", {"text": 3}, "text: 3 is not of type 'string'"),
    ("echo", {"text": "x", "times": "2"}, "times: '2' is not of type 'integer'"),
])
def test_bad_calls_become_permanent_errors_and_never_dispatch(registry, name, arguments, expected):
    result = registry.call(name, arguments)
    assert result.error is not None and result.error.kind == "permanent"
    assert expected in result.error.message
    assert registry.seen == []
    assert result.text().startswith("ERROR (permanent):") and "Suggestion:" in result.text()


def test_unknown_tool_suggests_the_real_ones(registry):
    assert "echo, done" in registry.call("nope", {}).error.suggestion


def test_valid_call_dispatches(registry):
    assert registry.call("echo", {"text": "hi"}).output == "hi"
    assert registry.call("done", {"summary": "s"}).final == "s"


def test_duplicate_tool_is_refused(registry):
    with pytest.raises(EvoError) as err:
        registry.add(DONE, done_tool)
    assert err.value.value == "done"


def test_subset_keeps_named_tools_and_done(registry):
    assert registry.subset(["echo"]).names == ["echo", "done"]
    assert registry.subset(["done"]).names == ["done"]


@pytest.mark.parametrize("result, kind", [
    (ExecResult(exit_code=-9, output="partial", timed_out=True, exit_reason="timeout"), "transient"),
    (ExecResult(exit_code=-9, output="", exit_reason="killed"), "transient"),
    (ExecResult(exit_code=1, output="bwrap: no", exit_reason="sandbox_error"), "unavailable"),
    (ExecResult(exit_code=-9, output="", exit_reason="memory_limit"), "permanent"),
    (ExecResult(exit_code=-9, output="", exit_reason="disk_limit"), "permanent"),
])
def test_environment_failures_map_to_error_kinds(result, kind):
    mapped = from_exec(result, timeout=5)
    assert mapped.error.kind == kind and mapped.error.suggestion
    assert mapped.output == result.output


def test_nonzero_exit_is_plain_output():
    mapped = from_exec(ExecResult(exit_code=2, output="boom"), timeout=5)
    assert mapped.error is None and (mapped.output, mapped.exit_code) == ("boom", 2)


def test_seed_shell_runs_in_the_workdir_with_json_on_stdin(harness):
    env = HostEnvironment(harness.root, harness.app)
    result = harness_tool("shell", env, timeout=lambda: 10)({"command": "echo hi > f.txt; cat f.txt; exit 3"})
    assert (harness.app / "f.txt").read_text() == "hi\n"
    assert "hi" in result.output and "[exit code: 3]" in result.output and result.error is None
    assert env.calls == [("tools/shell.py", '{"command": "echo hi > f.txt; cat f.txt; exit 3"}')]


def test_a_tool_past_its_timeout_is_a_transient_error(harness):
    env = HostEnvironment(harness.root, harness.app)
    result = harness_tool("shell", env, timeout=lambda: 0.5)({"command": "sleep 5"})
    assert result.error.kind == "transient" and "0.5s" in result.error.message
