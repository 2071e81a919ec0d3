"""Red team, what a model (or a middleware speaking for it) sends back: lone surrogates through the
real clients against a loopback server, surrogates from a middleware's JSON, a reply nested past
the JSON decoder's stack, and a client that raises. Each rollout runs in the real sandbox and must
end as its own outcome with every event kept, never as a lost infra_error."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evoharness.agent.clients import OllamaModel, OpenAICompatModel
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_task
from tests.fixtures.ollama_server import OllamaScriptServer
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
pytestmark = [pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
              pytest.mark.timeout(300)]  # a safety net only

LONE = "\ud800"  # what json.loads makes of the escape "\ud800": no UTF-8 encoder accepts it
COMMAND = 'echo "Hello, world!" > hello.txt'


def _harness(tmp_path: Path, *, native: bool = False, middleware: str | None = None) -> Path:
    root = tmp_path / "harness"
    shutil.copytree(SEED_DIR, root)
    spec = yaml.safe_load((root / "harness.yaml").read_text())
    if native:
        spec["settings"]["action_format"] = "native"
    if middleware:
        (root / "middleware").mkdir()
        (root / "middleware" / "echo.py").write_text(middleware)
        spec["middleware"] = ["echo"]
    (root / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def _rollout(root: Path, model, tmp_path: Path) -> tuple[RolloutResult, str]:
    """One rollout on hello-world; the result as read back from its trace file, and that file."""
    [path] = run_rollouts(load_harness(root), "c0", [(load_task(FIXTURES / "hello-world"), "train")],
                          model, run_id="red", iteration=0, out_dir=tmp_path / "rollouts")
    text = path.read_text(encoding="utf-8")
    return RolloutResult.model_validate_json(text), text


def _texts(result: RolloutResult) -> str:
    return json.dumps([[e.content, e.data] for e in result.events], ensure_ascii=False)


def test_a_lone_surrogate_through_the_openai_client_keeps_the_rollout(tmp_path):
    script = [{"content": json.dumps({"thought": f"write it {LONE}", "tool": "shell",
                                      "arguments": {"command": COMMAND}}, ensure_ascii=False)},
              {"content": json.dumps({"tool": "done", "arguments": {"summary": f"ok {LONE}"}},
                                     ensure_ascii=False)}]
    with OllamaScriptServer(script) as server:
        result, _ = _rollout(_harness(tmp_path), OpenAICompatModel(server.url, "m"), tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.PASS, "done")
    assert len(server.requests) == 2  # the request after the bad reply went out
    replayed = json.dumps(server.requests[1]["messages"], ensure_ascii=False)
    assert "write it \ufffd" in replayed and LONE not in replayed
    assert "ok \ufffd" in _texts(result)  # recorded, as U+FFFD


def test_a_lone_surrogate_in_ollama_native_tool_calls_keeps_the_rollout(tmp_path):
    script = [{"content": f"thinking {LONE}", "tool_calls": [
                  {"name": "shell", "arguments": {"command": COMMAND}}]},
              {"content": "", "tool_calls": [{"name": "done", "arguments": {"summary": LONE}}]}]
    with OllamaScriptServer(script) as server:
        model = OllamaModel("scripted", host=server.url)
        result, _ = _rollout(_harness(tmp_path, native=True), model, tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.PASS, "done")
    assert len(server.requests) == 2
    assert "thinking \ufffd" in json.dumps(server.requests[1]["messages"], ensure_ascii=False)


SURROGATE_HOOK = '''\
def after_tool(payload):
    payload["output"] = payload["output"] + "SURR"
    return payload


if __name__ == "__main__":
    import json, sys
    request = json.load(sys.stdin)
    print(json.dumps(globals()[request["hook"]](request["payload"])).replace("SURR", "\\\\ud800"))
'''


def test_a_surrogate_from_a_middleware_does_not_make_the_trace_unwritable(tmp_path):
    root = _harness(tmp_path, middleware=SURROGATE_HOOK)
    model = ScriptedModel([json_action("shell", command=COMMAND), json_action("done", summary="ok")])
    result, text = _rollout(root, model, tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.PASS, "done")
    outputs = [e.content for e in result.events if e.kind == "tool_result"]
    assert outputs[0].endswith("\ufffd")  # the hook's change, recorded encodable
    assert LONE not in text


def test_a_reply_nested_past_the_decoder_is_a_parse_error_not_a_crash(tmp_path):
    deep = '{"tool": "shell", "arguments": {"command": ' + "[" * 50_000 + "]" * 50_000 + "}}"
    model = ScriptedModel([deep, json_action("shell", command=COMMAND),
                           json_action("done", summary="ok")])
    result, _ = _rollout(_harness(tmp_path), model, tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.PASS, "done")
    assert [e.name for e in result.events if e.kind == "note"][:1] == ["parse_retry"]


def test_a_client_that_raises_keeps_the_events_recorded_before(tmp_path):
    def broken(messages):
        raise UnicodeEncodeError("utf-8", LONE, 0, 1, "surrogates not allowed")

    def model():  # each try of the rollout (it is run again twice) replays the script
        return ScriptedModel([json_action("shell", command=COMMAND), broken])
    result, _ = _rollout(_harness(tmp_path), model, tmp_path)
    assert result.outcome == Outcome.INFRA_ERROR
    assert result.exit_reason.startswith("exception: UnicodeEncodeError")
    kinds = [e.kind for e in result.events]
    assert kinds[:3] == ["model_call", "tool_call", "tool_result"]  # the first step is kept
