"""agent/model.py: one ModelRequest carries a call's options to every client; `chat` is the
protocol, `respond(request)` what a client implements, and an unknown option is refused."""
from __future__ import annotations

import dataclasses

import pytest

from evoharness.agent.clients.retry import RetryingModel
from evoharness.agent.clients.scripted import ScriptedModel
from evoharness.agent.model import Message, ModelClient, ModelReply, ModelRequest

HI = [Message(role="user", content="hi")]


class Recording(ModelClient):
    name = "recording"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def respond(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply(content="ok")


def test_chat_makes_one_request_with_every_option():
    model = Recording()
    model.chat(HI, temperature=0.3, json_mode=True, max_tokens=9, schema={"type": "object"},
               context_tokens=100, seed=7, tools=None)
    (request,) = model.requests
    assert request.messages == HI
    assert request.options() == {"tools": None, "temperature": 0.3, "json_mode": True,
                                 "max_tokens": 9, "schema": {"type": "object"},
                                 "context_tokens": 100, "seed": 7}
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.seed = 8  # type: ignore[misc]


def test_an_unknown_option_is_refused_not_ignored():
    with pytest.raises(TypeError, match="temprature"):
        ScriptedModel(["done"]).chat(HI, temprature=0.5)


def test_the_retrying_wrapper_passes_the_request_on_unchanged():
    inner = Recording()
    RetryingModel(inner).chat(HI, temperature=0.7, seed=3, max_tokens=5)
    (request,) = inner.requests
    assert request == ModelRequest(messages=HI, temperature=0.7, seed=3, max_tokens=5)


def test_the_scripted_double_takes_the_request_too():
    model = ScriptedModel(["first", "second"])
    assert model.chat(HI).content == "first"
    assert model.respond(ModelRequest(messages=HI, seed=1)).content == "second"
    assert model.calls == [HI, HI]
