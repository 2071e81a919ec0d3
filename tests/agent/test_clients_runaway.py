"""A runaway reply: seen in the stream (the embedded model's, Ollama's, an OpenAI-compatible
server's), cut after its first copy of the repeated unit, JSON closed; a reply that counts, cut
after the first number of its count; replies that do neither (the 1.5B's recorded ones among
them) are never cut."""
from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evoharness.agent.clients import EmbeddedModel, OllamaModel, OpenAICompatModel
from evoharness.agent.clients.runaway import (
    MAX_UNIT,
    RUNAWAY_SPAN,
    StreamedText,
    close_json,
    counting_unit,
    cut_runaway,
    runaway_unit,
)
from evoharness.agent.clients.weights import WEIGHTS
from evoharness.agent.model import Message, ModelError
from evoharness.agent.parsing import action_schema, parse_reply
from evoharness.agent.tools import DONE
from tests.fixtures.llama_server import (
    MS_PER_TOKEN,
    PROMPT_CACHED,
    PROMPT_READ,
    FakeLlamaServer,
)
from tests.fixtures.ollama_server import STREAM_PIECE, OllamaScriptServer
from evoharness.workspace.spec import ToolSpec

SHELL = ToolSpec(name="shell", description="Run a shell command", parameters={
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
RECORDED = Path(__file__).parents[2] / "benchmarks" / "fixtures" / "rollouts.json"
# The main job's exam, 2026-12-02: the 1.5B wrote this unit until its reply cap.
STUCK = ('{"thought":"Extract the version.","tool":"shell","arguments":{"command":'
         '"cat /app/package.json | grep version' + ' | sed \'s/\\"//g\'' * 40)


def test_a_reply_that_repeats_one_unit_is_seen_and_cut_after_its_first_copy() -> None:
    period = runaway_unit(STUCK)
    assert period == len(' | sed \'s/\\"//g\'')
    cut, why = cut_runaway(STUCK, period)
    assert why.unit == ' | sed \'s/\\"//g\'' and why.decoded == STUCK
    action = json.loads(close_json(cut))
    assert action["arguments"]["command"] == 'cat /app/package.json | grep version | sed \'s/"//g\''


def test_a_cut_keeps_a_whole_stage_where_the_stage_before_ends_alike() -> None:
    """As the 1.5B wrote it on json-extract-version (2026-12-03): the stage before the repeats
    ends in `//g'` as the repeated one does, so the repeats seem to begin 4 characters early;
    the cut keeps the first one that closes its quotes."""
    command = ("cat /app/package.json | grep version | awk -F: '{print $2}' | tr -d '\\\"' | "
               "tr -d '\\n' | sed 's/ //g' | sed 's/,//g'")
    decoded = ('{"thought":"The version.","tool":"shell","arguments":{"command":"' + command
               + " | sed 's/ //g'" * 20)
    cut, why = cut_runaway(decoded, runaway_unit(decoded), json_reply=True)
    kept = json.loads(close_json(cut))["arguments"]["command"]
    assert kept == json.loads(f'"{command}"') + " | sed 's/ //g'"
    assert why.unit == "//g' | sed 's/ "  # the repeats as the text alone shows them
    plain, _ = cut_runaway(decoded, runaway_unit(decoded))  # not JSON: the first copy's end
    assert plain.endswith(" | sed 's/,//g' | sed 's/ ")


def test_the_tail_must_repeat_for_the_whole_span() -> None:
    assert runaway_unit(STUCK[:RUNAWAY_SPAN - 1]) is None  # too short to judge
    assert runaway_unit("x" * RUNAWAY_SPAN) == 1
    broken = "ab" * (RUNAWAY_SPAN // 2) + "c"  # the last character breaks the pattern
    assert runaway_unit(broken) is None
    # A unit longer than a third of the span is a runaway once three copies of it are there.
    long_unit = "y" * (RUNAWAY_SPAN // 3 + 1) + "z"
    assert runaway_unit(long_unit * 2 + long_unit[:-1]) is None
    assert runaway_unit(long_unit * 3) == len(long_unit)
    assert runaway_unit(("u" * MAX_UNIT + "v") * 4) is None  # longer than any unit looked for


def streamed(reply: str, piece: int = 3) -> StreamedText:
    """The reply as a client streams it, a few characters a time, up to where it is stopped."""
    text = StreamedText(json_reply=True)
    for at in range(0, len(reply), piece):
        if text.add(reply[at:at + piece]):
            break
    return text


# As the 1.5B wrote it on fix-mutable-default (2026-12-06), to its 512-token cap.
COUNTING = ('{"tool":"shell","arguments":{"command":"python3 /app/cart.py add_item '
            + " ".join(str(n) for n in range(10, 1210, 10)) + " 12")


def test_a_reply_that_counts_is_stopped_and_keeps_the_first_number_of_its_count() -> None:
    assert runaway_unit(COUNTING) is None  # no unit repeats as it is: the numbers differ
    text = streamed(COUNTING)
    assert len(text.text) < len(COUNTING) // 2  # stopped once its last 160 characters count
    kept, why = text.kept()
    assert json.loads(kept)["arguments"]["command"] == "python3 /app/cart.py add_item 10"
    assert why.unit == " 10" and why.decoded == text.text
    ones = '{"tool":"shell","arguments":{"command":"' + "".join(
        f"echo {n} > f{n}.txt; " for n in range(1, 40))
    kept, why = streamed(ones).kept()
    assert json.loads(kept)["arguments"]["command"] == "echo 1 > f1.txt; "  # two numbers a copy


def test_a_long_unit_is_stopped_once_three_copies_of_it_are_there() -> None:
    """As the 1.5B wrote it on uppercase-lines (2026-12-06): a 54-character unit, which three
    copies in the 160-character span could not hold."""
    unit = " | tr -d '\\r\\n' | tr -d '\\r' | tr -d '\\t' | tr -d '\\f'"
    reply = ('{"tool":"shell","arguments":{"command":"cat /app/words.txt | tr '
             "'[:lower:]' '[:upper:]'" + unit * 12)
    assert len(unit) == 54
    text = streamed(reply)
    assert len(text.text) < len(reply) // 2
    kept = json.loads(text.kept()[0])["arguments"]["command"]
    assert kept == "cat /app/words.txt | tr '[:lower:]' '[:upper:]'" + json.loads(f'"{unit}"')


def test_numbers_that_do_not_step_alike_are_not_counting() -> None:
    rows = "".join(f"{n},{n * n % 97}\n" for n in range(60))  # data: the second column jumps
    assert counting_unit(rows) is None
    assert counting_unit("x" * RUNAWAY_SPAN + " 1 1 1") is None  # a repeat, not a count
    assert counting_unit(" ".join(str(n) for n in range(1, 80))) == 2
    assert counting_unit(" ".join(str(n) for n in range(1, 80))[:RUNAWAY_SPAN - 1]) is None
    # A number no int holds (Python refuses 4,300 digits and more), its digits not repeating.
    digits = "".join(random.Random(0).choices("0123456789", k=5000))
    huge = '{"tool":"shell","arguments":{"command":"echo ' + digits + " 1 2 3 4 5" * 40
    kept, _ = streamed(huge, piece=500).kept()  # ... then a count that repeats
    assert json.loads(kept)["arguments"]["command"] == f"echo {digits} 1 2 3 4 5"


@settings(max_examples=300, deadline=None, derandomize=True)  # the same replies every run
@given(text=st.text(alphabet="0123456789 ,;x'|\"{}\\\n", min_size=RUNAWAY_SPAN, max_size=600),
       count=st.lists(st.integers(min_value=0, max_value=10 ** 25), max_size=60),
       piece=st.integers(min_value=1, max_value=40), json_reply=st.booleans())
def test_any_reply_streams_through_the_stop_and_keeps_a_prefix(
        text: str, count: list[int], piece: int, json_reply: bool) -> None:
    """Model output is hostile input: digits, separators, quotes and counts in any mix."""
    reply = text + " ".join(str(n + step) for step, n in enumerate(count))
    streamed_text = StreamedText(json_reply)
    for at in range(0, len(reply), piece):
        if streamed_text.add(reply[at:at + piece]):
            break
    kept, why = streamed_text.kept()
    if why is None:
        assert streamed_text.text == kept == reply
    elif not json_reply:  # a JSON reply's kept text has its strings and brackets closed
        assert streamed_text.text.startswith(kept) and len(kept) < len(streamed_text.text)


def test_no_recorded_reply_of_the_real_model_is_cut() -> None:
    """The 111 replies of the rollout benchmark's fixtures, streamed, and each one sent twice in a
    row (a model that repeats a whole action is the repeat breaker's business, not a runaway)."""
    replies = [s["reply"] for fixture in (RECORDED, RECORDED.with_name("suite-rollouts.json"))
               for c in json.loads(fixture.read_text())["conversations"] for s in c["steps"]]
    assert len(replies) == 111
    for reply in replies:
        assert streamed(reply).text == reply
        assert runaway_unit(reply * 2) is None or len(reply) * 3 <= RUNAWAY_SPAN


@pytest.mark.parametrize(("cut", "closed"), [
    ('{"a":"x\\', '{"a":"x"}'),  # a half-written escape is dropped
    ('{"a":"x\\u00', '{"a":"x"}'),
    ('{"a":"x\\\\', '{"a":"x\\\\"}'),  # a whole escaped backslash stays
    ('{"a":["b",{"c":"d', '{"a":["b",{"c":"d"}]}'),
    ('{"a":"}]{["', '{"a":"}]{["}'),  # brackets inside a string are text
])
def test_close_json_closes_what_was_open(cut: str, closed: str) -> None:
    assert close_json(cut) == closed
    json.loads(closed)


def test_the_embedded_client_stops_the_server_at_a_runaway_and_keeps_its_timings() -> None:
    pieces = [STUCK[i:i + 4] for i in range(0, len(STUCK), 4)]
    server = FakeLlamaServer(pieces)
    model = EmbeddedModel()
    body = model.request([Message(role="user", content="go")], tools=None, temperature=0.0,
                         json_mode=True, max_tokens=512, schema=action_schema([SHELL, DONE]))
    reply = model.complete(server, body)
    assert server.bodies[0]["stream"] and server.bodies[0]["timings_per_token"]
    assert server.sent < len(pieces)  # stopped before the end
    assert reply.runaway is not None and STUCK.startswith(reply.runaway.decoded)
    action = parse_reply(reply, "json")
    assert action.tool == "shell" and action.arguments["command"].endswith("| sed 's/\"//g'")
    assert (reply.tokens_in, reply.tokens_out) == (PROMPT_READ + PROMPT_CACHED, server.sent)
    assert reply.timings.tokens_read == PROMPT_READ
    assert reply.timings.decode_ms == MS_PER_TOKEN * server.sent


def test_without_the_cut_the_same_reply_comes_whole() -> None:
    server = FakeLlamaServer(STUCK)
    model = EmbeddedModel(cut_runaways=False)
    body = model.request([Message(role="user", content="go")], tools=None, temperature=0.0,
                         json_mode=True, max_tokens=512, schema=None)
    reply = model.complete(server, body)
    assert "stream" not in server.bodies[0]
    assert reply.content == STUCK and reply.runaway is None


def test_an_error_in_the_stream_is_a_model_error_naming_it() -> None:
    server = FakeLlamaServer(STUCK)
    server.handle_chat_completions = lambda body, callback: callback(
        {"error": {"code": 400, "message": "the request exceeds the context"}})
    model = EmbeddedModel()
    body = model.request([Message(role="user", content="go")], tools=None, temperature=0.0,
                         json_mode=True, max_tokens=512, schema=None)
    with pytest.raises(ModelError, match="exceeds the context") as raised:
        model.complete(server, body)
    assert raised.value.kind == "permanent"


def test_ollama_s_stream_is_closed_at_a_runaway_and_its_action_kept() -> None:
    """Over a real socket: the client stops reading at the runaway and closes the connection,
    which is how Ollama is told to stop generating; the parts it read are its tokens out."""
    schema = action_schema([SHELL, DONE])
    with OllamaScriptServer([{"content": STUCK}, {"content": STUCK}]) as server:
        reply = OllamaModel("qwen", host=server.url).chat(
            [Message(role="user", content="go")], json_mode=True, schema=schema)
        assert server.requests[0]["stream"] is True
        whole = httpx.post(f"{server.url}/api/chat", json={"model": "q", "stream": True,
                                                          "messages": []}).text.splitlines()
    assert reply.runaway is not None and STUCK.startswith(reply.runaway.decoded)
    assert reply.tokens_out < len(whole) - 1 and reply.timings is None
    assert parse_reply(reply, "json").arguments["command"].endswith("| sed 's/\"//g'")


def test_ollama_s_streamed_reply_that_ends_keeps_the_server_s_counts() -> None:
    script = [{"content": '{"a":1}', "prompt_eval_count": 40, "eval_count": 3}]
    with OllamaScriptServer(script) as server:
        reply = OllamaModel("qwen", host=server.url).chat([Message(role="user", content="go")],
                                                           json_mode=True)
    assert (reply.content, reply.tokens_in, reply.tokens_out) == ('{"a":1}', 40, 3)
    assert reply.runaway is None


def test_an_openai_compatible_stream_is_closed_at_a_runaway_and_its_action_kept() -> None:
    schema = action_schema([SHELL, DONE])
    script = [{"content": STUCK}, {"content": '{"a":1}', "eval_count": 3}]
    with OllamaScriptServer(script) as server:
        client = OpenAICompatModel(server.url, "coder")
        cut = client.chat([Message(role="user", content="go")], json_mode=True, schema=schema)
        whole = client.chat([Message(role="user", content="go")], json_mode=True)
        sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert cut.runaway is not None and STUCK.startswith(cut.runaway.decoded)
    assert cut.tokens_out < len(STUCK) // STREAM_PIECE and cut.timings is None
    assert parse_reply(cut, "json").arguments["command"].endswith("| sed 's/\"//g'")
    assert (whole.content, whole.tokens_out, whole.runaway) == ('{"a":1}', 3, None)


@pytest.mark.slow
def test_the_real_model_made_to_repeat_itself_is_cut_and_its_action_runs() -> None:
    """The 0.5B asked for a pipeline of 100 identical stages runs on to its string cap without
    the cut (shown first, so the attack is known to work) and stops early with it, its action
    the pipeline's first stage."""
    prompt = [Message(role="system", content='Reply with one JSON object: {"thought": "ok", '
                      '"tool": "shell", "arguments": {"command": str}}. Keep the thought "ok".'),
              Message(role="user", content="Write one shell command: a pipeline that starts "
                      "with `cat /app/a.txt` and then has the stage `sed 's/x/y/'` written out "
                      "100 times, each stage after a `|`. Do not use a loop.")]
    schema = action_schema([SHELL, DONE], 300)
    replies = {}
    for cut in (False, True):
        model = EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"], cut_runaways=cut)
        replies[cut] = model.chat(prompt, json_mode=True, schema=schema, max_tokens=300)
    assert replies[False].runaway is None and replies[False].tokens_out >= 150
    assert replies[True].runaway.unit == " | sed 's/x/y/'"
    assert replies[True].tokens_out < replies[False].tokens_out - 60
    action = parse_reply(replies[True], "json")
    assert action.arguments == {"command": "cat /app/a.txt | sed 's/x/y/'"}
