"""Model server faults through `evoharness evolve` on the fixture suite (hello-world: train,
sum-numbers: held-out) with a real loopback Ollama-protocol server: every faulty rollout ends
as data with its reason, the others are unaffected, and a server that stays down stops the run
cleanly so a later --resume runs only what was never stored."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.ollama_server import OllamaScriptServer
from evoharness.agent.clients.scripted import json_action

from .conftest import (HELLO, assert_clean_error, evoharness, forever, instruction_of, make_run,
                       result_files, rollouts, solver)

ALL = ["it000-hello-world-a00", "it000-sum-numbers-a00"]


def faulty_for_sum_numbers(fault: dict[str, Any]):
    """hello-world is solved normally; every sum-numbers request gets `fault`."""
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return solver(body) if HELLO in instruction_of(body) else dict(fault)
    return reply


def garbage_then_done(fault: dict[str, Any]):
    """The first sum-numbers reply is malformed; the agent then gives up with `done`."""
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if HELLO in instruction_of(body):
            return solver(body)
        acted = any(m["role"] == "assistant" for m in body["messages"])
        return {"content": json_action("done", summary="gave up")} if acted else dict(fault)
    return reply


def events_text(result: dict[str, Any]) -> str:
    return " ".join(str(e.get("content")) + str(e.get("data")) for e in result["events"])


@pytest.mark.parametrize("fault, recorded", [
    ({"status": 500}, "HTTP 500"),
    ({"raw": "this is not json"}, "could not be decoded"),
])
def test_a_failing_server_fails_that_rollout_with_the_reason_and_the_run_goes_on(
        tmp_path: Path, fault: dict[str, Any], recorded: str) -> None:
    with OllamaScriptServer(forever(faulty_for_sum_numbers(fault))) as server:
        run_dir = make_run(tmp_path, server.url, workers=1)
        result = evoharness("evolve", run_dir, host=server.url)
    assert result.returncode == 0, result.stderr
    stored = {rid: (outcome, reason) for rid, outcome, reason in rollouts(run_dir)}
    assert stored == {"it000-hello-world-a00": ("pass", "done"),
                      "it000-sum-numbers-a00": ("fail", "model_error")}
    assert recorded in events_text(result_files(run_dir)["it000-sum-numbers-a00"])


@pytest.mark.parametrize("fault, recorded", [
    # JSON actions: the agent is told its arguments are not valid JSON and asked again
    ({"content": '{"tool": "shell", "arguments": "{{{ not an object"}'}, "not valid JSON"),
    # Ollama sends native arguments as an object: a string there is an undecodable reply
    ({"content": "", "tool_calls": [{"name": "shell", "arguments": "{{{ not an object"}]},
     "could not be decoded"),
    ({"content": json_action("no_such_tool", x=1)}, "unknown tool 'no_such_tool'"),
])
def test_garbage_tool_arguments_are_an_error_the_agent_sees_not_a_crash(
        tmp_path: Path, fault: dict[str, Any], recorded: str) -> None:
    with OllamaScriptServer(forever(garbage_then_done(fault))) as server:
        run_dir = make_run(tmp_path, server.url, workers=1)
        result = evoharness("evolve", run_dir, host=server.url)
    assert result.returncode == 0, result.stderr
    stored = {rid: outcome for rid, outcome, _ in rollouts(run_dir)}
    assert stored == {"it000-hello-world-a00": "pass", "it000-sum-numbers-a00": "fail"}
    assert recorded in events_text(result_files(run_dir)["it000-sum-numbers-a00"])


def test_a_hung_response_times_the_rollout_out_and_the_run_goes_on(tmp_path: Path) -> None:
    with OllamaScriptServer(forever(faulty_for_sum_numbers({"hang": 120}))) as server:
        # hello-world must pass inside the rollout timeout: it took 3 s at a load average of 6
        # on 2 cores, so 15 s leaves five times that; the hung reply outlasts it by far. The
        # hung rollout waits the whole timeout, which is this test's cost.
        run_dir = make_run(tmp_path, server.url, workers=2, rollout_timeout=15)
        result = evoharness("evolve", run_dir, host=server.url)
    assert result.returncode == 0, result.stderr
    stored = {rid: (outcome, reason) for rid, outcome, reason in rollouts(run_dir)}
    assert stored == {"it000-hello-world-a00": ("pass", "done"),
                      "it000-sum-numbers-a00": ("timeout", "rollout_timeout")}


def test_connection_refused_stops_cleanly_and_resume_runs_every_rollout_once(
        tmp_path: Path, unused_url: str) -> None:
    with OllamaScriptServer(forever(solver)) as server:
        run_dir = make_run(tmp_path, server.url)
    down = evoharness("evolve", run_dir, host=unused_url)
    assert_clean_error(down, "model server", "--resume")
    assert rollouts(run_dir) == [] and result_files(run_dir) == {}
    assert len(list((run_dir / "iterations/it000/rollouts/unserved").glob("*.json"))) == 2

    with OllamaScriptServer(forever(solver)) as server:
        back = evoharness("evolve", run_dir, "--resume", host=server.url)
    assert back.returncode == 0, back.stderr
    assert [r[0] for r in rollouts(run_dir)] == ALL
    assert sorted(result_files(run_dir)) == ALL


def test_a_server_dying_mid_iteration_keeps_finished_rollouts_and_resume_runs_only_the_rest(
        tmp_path: Path) -> None:
    server = OllamaScriptServer()
    dying = threading.Event()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if HELLO in instruction_of(body):
            return solver(body)
        if not dying.is_set():  # the server process goes away: its socket closes for good
            dying.set()
            threading.Thread(target=server.__exit__).start()
        return {"status": 503}

    server.script = forever(reply)
    with server:
        run_dir = make_run(tmp_path, server.url, workers=1)
        down = evoharness("evolve", run_dir, host=server.url)
    assert_clean_error(down, "model server", "--resume")
    first = result_files(run_dir)
    assert list(first) == ["it000-hello-world-a00"] and first[ALL[0]]["outcome"] == "pass"

    with OllamaScriptServer(forever(solver)) as again:
        back = evoharness("evolve", run_dir, "--resume", host=again.url)
    assert back.returncode == 0, back.stderr
    assert [r[0] for r in rollouts(run_dir)] == ALL
    # only the unserved rollout ran again: the stored one is the same file, untouched
    assert result_files(run_dir)[ALL[0]] == first[ALL[0]]
    assert all(HELLO not in instruction_of(body) for body in again.requests)
