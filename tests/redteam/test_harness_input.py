"""Red team, harness files as the evolve agent writes them: every attack goes through the `change`
tool (evolve/agent/change.py) and, when accepted, load_harness and a rollout in the real
bubblewrap sandbox with a scripted model. Each asserts containment (nothing fetched, nothing run),
a clear refusal naming the file and field, and that nothing already committed is lost."""
from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from evoharness.agent.tools import ToolResult
from evoharness.evolve.agent.change import ChangeTool
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_task
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.validate import load_harness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
# A safety net only: each attack is refused or contained in seconds; without the bounds some
# of them ran for minutes (a 763-byte alias bomb took 14.6 s and 807 MB, ReDoS froze a thread).
pytestmark = pytest.mark.timeout(300)

MANIFEST = {"component": "tool", "root_cause": "The agent cannot do X.",
            "targeted_fix": "A harness change for X.",
            "failure_evidence": [{"task_id": "hello-world", "rollout_id": "r1"}],
            "predicted_fixes": [{"task_id": "hello-world", "probability": 0.5}],
            "predicted_regressions": [], "expected_delta": 1}
TOOL_CODE = "import json, sys\nargs = json.load(sys.stdin)\nprint('RAN', sorted(args))\n"
SOLVE = [json_action("shell", command='echo "Hello, world!" > hello.txt')]
DONE = [json_action("done", summary="done")]


class Workspace:
    """A seed harness repository and the evolve agent's `change` tool on it."""

    def __init__(self, root: Path) -> None:
        self.repo = HarnessRepo.create(root)
        self.tool = ChangeTool(self.repo, run_id="red", iteration=1, known_tasks=["hello-world"],
                               max_changes=50)

    def change(self, *edits: dict[str, Any]) -> ToolResult:
        return self.tool({**MANIFEST, "edits": list(edits)})

    def accepted(self, *edits: dict[str, Any]) -> None:
        result = self.change(*edits)
        assert result.error is None, result.text()

    def refused(self, *edits: dict[str, Any]) -> str:
        """Apply edits that must be refused; returns the refusal the agent reads, after checking
        that the workspace is exactly its last commit (nothing applied, nothing lost)."""
        head, commits = self.repo.head(), len(self.tool.entries)
        result = self.change(*edits)
        assert result.error is not None and result.error.kind == "permanent", result.text()
        assert self.repo.head() == head and not self.repo.is_dirty()
        assert len(self.tool.entries) == commits
        load_harness(self.repo.path)  # the committed harness still loads
        return result.error.message

    def read(self, rel: str) -> str:
        return (self.repo.path / rel).read_text()


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "workspace")


def add(path: str, content: str) -> dict[str, Any]:
    return {"op": "add_file", "path": path, "content": content}


def write(path: str, content: str) -> dict[str, Any]:
    return {"op": "write_file", "path": path, "content": content}


def register(kind: str, name: str) -> dict[str, Any]:
    return {"op": "register_component", "kind": kind, "name": name}


def tool_files(name: str, parameters: dict[str, Any]) -> list[dict[str, Any]]:
    # Through JSON: yaml.safe_dump writes a shared sub-dict as an alias, which harness YAML refuses.
    spec = json.loads(json.dumps({"name": name, "description": f"The {name} tool.",
                                  "parameters": parameters}))
    return [add(f"tools/{name}.yaml", yaml.safe_dump(spec, sort_keys=False)),
            add(f"tools/{name}.py", TOOL_CODE), register("tool", name)]


def rollout(ws: Workspace, replies: list, tmp_path: Path) -> RolloutResult:
    """One rollout of the workspace's harness on the hello-world task in the real sandbox."""
    harness = load_harness(ws.repo.path)
    [path] = run_rollouts(harness, ws.repo.head(), [(load_task(FIXTURES / "hello-world"), "train")],
                          ScriptedModel(replies), run_id="red", iteration=1,
                          out_dir=tmp_path / "rollouts")
    return RolloutResult.model_validate_json(path.read_text())


def tool_outputs(result: RolloutResult) -> list[str]:
    return [e.content for e in result.events if e.kind == "tool_result"]


# --- item 5: files an edit writes must be readable by the sandbox's uid ------------------------

MIDDLEWARE = '''\
def after_tool(payload):
    payload["output"] = payload["output"] + " [audited]"
    return payload


if __name__ == "__main__":
    import json, sys
    request = json.load(sys.stdin)
    print(json.dumps(globals()[request["hook"]](request["payload"])))
'''


@needs_bwrap
def test_an_edit_adding_a_tool_and_a_middleware_runs_in_the_sandbox(ws, tmp_path):
    ws.accepted(*tool_files("greet", {"type": "object", "properties": {
        "who": {"type": "string"}}, "required": ["who"]}))
    ws.accepted(add("middleware/audit.py", MIDDLEWARE), register("middleware", "audit"))
    for rel in ("tools/greet.py", "tools/greet.yaml", "middleware/audit.py"):
        mode = (ws.repo.path / rel).stat().st_mode
        assert mode & stat.S_IROTH, f"{rel} is {oct(mode)}: another uid could not read it"
    result = rollout(ws, [json_action("greet", who="you"), *SOLVE, *DONE], tmp_path)
    assert result.outcome == Outcome.PASS and result.exit_reason == "done"
    greeted = tool_outputs(result)[0]
    assert "RAN ['who']" in greeted and greeted.rstrip().endswith("[audited]")
    assert not [e for e in result.events if e.kind == "error"]  # no hook failed to read its file
    if os.geteuid() == 0:  # as root the sandbox runs as a random uid: the files are not its own
        assert (ws.repo.path / "tools/greet.py").stat().st_uid == 0


# --- item 4: schemas that reach outside themselves ------------------------------------------


class Listener:
    """A loopback HTTP server that counts every request: a fetched schema would show here."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.hits.append(self.path)
                body = b'{"type": "string"}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def _outside(url: str) -> dict[str, tuple[dict[str, Any], str, str]]:
    """Schemas that would make a validator fetch: (schema, refused field, named value)."""
    prop = {"type": "object", "properties": {"a": None}}
    return {
        "$ref": ({**prop, "properties": {"a": {"$ref": f"{url}/x.json"}}},
                 "parameters.properties.a.$ref", f"{url}/x.json"),
        "$dynamicRef": ({**prop, "properties": {"a": {"$dynamicRef": f"{url}/x.json#meta"}}},
                        "parameters.properties.a.$dynamicRef", f"{url}/x.json#meta"),
        "$id base": ({"$id": f"{url}/root.json", "type": "object",
                      "properties": {"a": {"$ref": "other.json"}}},
                     "parameters.properties.a.$ref", "other.json"),
        "$defs ref": ({"type": "object", "$defs": {"b": {"$ref": f"{url}/b.json"}},
                       "properties": {"a": {"$ref": "#/$defs/b"}}},
                      "parameters.$defs.b.$ref", f"{url}/b.json"),
        "$schema": ({"$schema": f"{url}/meta.json", "type": "object"}, "parameters.$schema",
                    f"{url}/meta.json"),
    }


@pytest.mark.parametrize("attack", ["$ref", "$dynamicRef", "$id base", "$defs ref", "$schema"])
def test_a_schema_reaching_outside_itself_is_refused_and_nothing_is_fetched(ws, listener, attack):
    schema, field, value = _outside(listener.url)[attack]
    refusal = ws.refused(*tool_files("fetcher", schema))
    assert f"tools/fetcher.yaml: {field}" in refusal and value in refusal
    assert listener.hits == []


@pytest.mark.parametrize("schema, field, words", [
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)b"}}},
     "parameters.properties.a.pattern", "linear time"),
    ({"type": "object", "patternProperties": {"(a)\\1": {}}},
     "parameters.patternProperties", "linear time"),
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "x" * 2000}}},
     "parameters.properties.a.pattern", "longer than"),
    ({"type": "object", "$ref": "#"}, "parameters", "refers to itself"),
    ({"type": "object", "allOf": [{"$ref": "#/$defs/nowhere"}]}, "parameters", "not in it"),
    ({"type": "object", "unevaluatedProperties": False}, "parameters.unevaluatedProperties",
     "not supported"),
    ({"type": "object", "properties": {f"p{i}": {} for i in range(2500)}},
     "parameters", "more than 2000 subschemas"),
])
def test_a_schema_the_host_cannot_check_safely_is_refused(ws, schema, field, words):
    refusal = ws.refused(*tool_files("risky", schema))
    assert f"tools/risky.yaml: {field}" in refusal and words in refusal


@pytest.mark.parametrize("value", ["2020-01-01", ".inf", "!!binary aGk=", "!!set {a: null}"])
def test_a_schema_holding_what_json_cannot_carry_is_refused(ws, value):
    text = f"name: odd\ndescription: d\nparameters:\n  type: object\n  default: {value}\n"
    refusal = ws.refused(add("tools/odd.yaml", text), add("tools/odd.py", TOOL_CODE),
                         register("tool", "odd"))
    assert "tools/odd.yaml: parameters: must be plain JSON" in refusal


# --- item 4: what the model sends, against schemas that pass ---------------------------------

NESTED = {"type": "object", "required": ["x"], "properties": {"c": {"$ref": "#/$defs/n"}}}
EXPONENTIAL = {"type": "object", "$defs": {"n": {"anyOf": [
    {**NESTED, "required": ["x"]}, {**NESTED, "required": ["y"]}]}},
    "properties": {"c": {"$ref": "#/$defs/n"}}}


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"c": value}
    return value


@needs_bwrap
def test_argument_attacks_against_accepted_schemas_are_contained(ws, tmp_path):
    evil = "a" * 40 + "!"  # ^(a+)+$ against this froze a worker thread with Python's re
    ws.accepted(*tool_files("redos", {"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^(a+)+$"}}}))
    ws.accepted(*tool_files("keys", {"type": "object", "patternProperties": {"^(a+)+$": {}},
                                     "additionalProperties": False}))
    ws.accepted(*tool_files("names", {"type": "object", "propertyNames": {"pattern": "^(a+)+$"}}))
    ws.accepted(*tool_files("tree", EXPONENTIAL))
    ws.accepted(*tool_files("unique", {"type": "object", "properties": {
        "xs": {"type": "array", "uniqueItems": True}}}))
    ws.accepted(*tool_files("annotated", {"type": "object", "properties": {
        "r": {"type": "string", "format": "regex"}}}))
    attacks = [
        (json_action("redos", a=evil), "does not match"),
        (json_action("keys", **{evil: 1}), "Additional properties are not allowed"),
        (json_action("names", **{evil: 1}), "does not match"),
        (json_action("tree", **_nested(25)), "steps to check these arguments"),
        (json_action("unique", xs=[{"k": i % 2} for i in range(20_000)]), "non-unique"),
        (json_action("redos", a="a" * 300_000), "bytes of JSON"),
        (json_action("redos", a=_nested(40)), "levels deep"),
    ]
    replies = [reply for reply, _ in attacks]
    replies += [json_action("annotated", r="(a+"), *SOLVE, *DONE]
    result = rollout(ws, replies, tmp_path)
    assert result.outcome == Outcome.PASS and result.exit_reason == "done"
    outputs = tool_outputs(result)
    for (reply, words), output in zip(attacks, outputs):
        assert "ERROR (permanent)" in output and words in output, (reply[:80], output[:300])
        assert "RAN" not in output  # the tool never ran on refused arguments
        assert len(output) < 20_000  # the refusal quotes a bounded part of what was sent
    assert "RAN ['r']" in outputs[len(attacks)]  # `format` is an annotation: no code runs on it


# --- item 9: YAML, sizes, counts, templates ---------------------------------------------------

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


def _bombed(rel: str, ws: Workspace) -> list[dict[str, Any]]:
    """Edits that put the alias bomb into the agent-written YAML at `rel`."""
    if rel == "harness.yaml":
        return [write(rel, ws.read(rel) + ALIAS_BOMB.replace("a:", "x_a:", 1))]
    if rel == "tools/boom.yaml":
        return [add(rel, "name: boom\ndescription: d\nparameters:\n  type: object\n"
                    + ALIAS_BOMB), add("tools/boom.py", TOOL_CODE), register("tool", "boom")]
    if rel == "subagents/boom/agent.yaml":
        return [add(rel, "name: boom\ndescription: d\nsystem_prompt: p\n" + ALIAS_BOMB),
                register("subagent", "boom")]
    return [add(rel, "---\nname: boom\ndescription: d\n" + ALIAS_BOMB + "---\nbody\n"),
            register("skill", "boom")]


@pytest.mark.parametrize("rel", ["harness.yaml", "tools/boom.yaml", "subagents/boom/agent.yaml",
                                 "skills/boom/SKILL.md"])
def test_a_yaml_alias_bomb_is_refused_wherever_yaml_is_read(ws, rel):
    assert len(ALIAS_BOMB) < 800  # 9**9 strings once expanded
    refusal = ws.refused(*_bombed(rel, ws))
    assert f"{rel}: line" in refusal and "aliases" in refusal


def nested(ws: Workspace, levels: int) -> str:
    """harness.yaml with an `extra` key (refused by the schema) whose value nests lists so that
    the document is `levels` deep (the top mapping is the first level)."""
    return ws.read("harness.yaml") + "extra: " + "[" * (levels - 1) + "]" * (levels - 1) + "\n"


def test_deep_or_large_yaml_is_refused(ws):
    line = len(ws.read("harness.yaml").splitlines()) + 1  # the `extra` line
    deep = f"harness.yaml: line {line}: YAML is nested deeper than 32 levels"
    assert deep in ws.refused(write("harness.yaml", nested(ws, 33)))
    at_the_bound = ws.refused(write("harness.yaml", nested(ws, 32)))
    assert "nested deeper" not in at_the_bound and "harness.yaml: extra" in at_the_bound
    assert deep in ws.refused(write("harness.yaml", nested(ws, 500)))
    large = ws.read("harness.yaml") + "# " + "x" * 100_000 + "\n"
    assert "harness.yaml: (file): YAML file is too large" in ws.refused(write("harness.yaml", large))


def test_a_long_component_list_is_one_short_error(ws):
    spec = yaml.safe_load(ws.read("harness.yaml"))
    spec["middleware"] = [f"m{i}" for i in range(5_000)]
    refusal = ws.refused(write("harness.yaml", yaml.safe_dump(spec)))
    assert "harness.yaml: middleware" in refusal and "at most 64" in refusal
    assert len(refusal) < 2_000


def test_many_problems_are_counted_not_listed(ws):
    spec = yaml.safe_load(ws.read("harness.yaml"))
    spec["middleware"] = [f"m{i}" for i in range(60)]  # none has a file: 60 problems
    refusal = ws.refused(write("harness.yaml", yaml.safe_dump(spec)))
    assert refusal.count("file is missing") == 30 and "and 30 more problem(s)" in refusal


@pytest.mark.parametrize("setting, value", [
    ("tool_timeout_seconds", float("inf")), ("tool_timeout_seconds", 1e308),
    ("max_steps", 10**12), ("temperature", float("nan")),
])
def test_unbounded_settings_are_refused(ws, setting, value):
    spec = yaml.safe_load(ws.read("harness.yaml"))
    spec["settings"][setting] = value
    refusal = ws.refused(write("harness.yaml", yaml.safe_dump(spec)))
    assert f"harness.yaml: settings.{setting}" in refusal


def test_python_that_crashes_the_compiler_is_a_clear_refusal(ws):
    refusal = ws.refused(add("tools/deep.yaml", yaml.safe_dump({
        "name": "deep", "description": "d", "parameters": {"type": "object"}})),
        add("tools/deep.py", "x = " + "-" * 200_000 + "1\n"), register("tool", "deep"))
    assert "tools/deep.py" in refusal and "cannot compile" in refusal


def test_edit_batches_are_bounded(ws):
    too_many = [add(f"notes/n{i}.md", "x") for i in range(40)]
    assert "at most 32" in ws.refused(*too_many)
    assert "at most 262144" in ws.refused(add("notes/big.md", "x" * 300_000))
    bulky = [add(f"notes/b{i}.md", "x" * 200_000) for i in range(25)]  # 5 MB in files
    assert ".: (files): the harness's files hold" in ws.refused(*bulky)


def _template_with(ws: Workspace, attack: str) -> dict[str, Any]:
    return write("system_prompt.md.j2", ws.read("system_prompt.md.j2") + attack)


@pytest.mark.parametrize("attack, words", [
    ("{{ 'x' * 10**10 }}", "more than 512 MB"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}ab{% endfor %}{% endfor %}",
     "passes 200000 characters"),
    ("{{ ''.__class__.__mro__ }}", "unsafe"),
    ("{% include '/etc/passwd' %}", "no loader"),
])
def test_template_attacks_are_refused_by_the_bounded_renderer(ws, attack, words):
    refusal = ws.refused(_template_with(ws, attack))
    assert "system_prompt.md.j2: template" in refusal and words in refusal


@pytest.mark.slow  # about 10 s of CPU by design, more wall time on a loaded machine
def test_a_template_that_loops_without_output_is_stopped_at_its_cpu_limit(ws):
    loops = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    refusal = ws.refused(_template_with(ws, loops))
    assert "system_prompt.md.j2: template: rendering was stopped" in refusal


def test_an_accepted_change_survives_refused_ones(ws):
    rule = {"op": "append_rule", "text": "Run the tests before calling done."}
    ws.accepted(rule)
    kept = ws.repo.head()
    ws.refused(write("harness.yaml", ALIAS_BOMB))
    ws.refused(_template_with(ws, "{{ 'x' * 10**10 }}"))
    assert ws.repo.head() == kept and "Run the tests before calling done." in ws.read(
        "system_prompt.md.j2")
    assert json.loads(json.dumps([e.id for e in ws.tool.entries])) == [ws.tool.entries[0].id]


def test_an_edit_that_changes_nothing_is_refused(ws):
    """A change whose edits leave every file as it was (a placebo with no diff) costs no trial."""
    same = write("system_prompt.md.j2", ws.read("system_prompt.md.j2"))
    undone = [add("notes.md", "a note"), {"op": "delete_file", "path": "notes.md"}]
    for edits in ([same], undone):
        assert "edits: the edits change nothing" in ws.refused(*edits)
    ws.accepted(write("system_prompt.md.j2", ws.read("system_prompt.md.j2") + "\nBe brief.\n"))
