"""RetryingModel's policy and make_model's spec parsing."""
from __future__ import annotations

import pytest

from evoharness.agent.clients import EmbeddedModel, OllamaModel, OpenAICompatModel, RetryingModel, make_model
from evoharness.agent.model import Message, ModelError
from evoharness.errors import EvoError
from evoharness.agent.clients.scripted import ScriptedModel

HELLO = [Message(role="user", content="hi")]


def _transient() -> ModelError:
    return ModelError("blip", kind="transient")


def test_backoff_doubles_and_last_error_is_reraised() -> None:
    sleeps: list[float] = []
    last = _transient()
    model = RetryingModel(ScriptedModel([_transient(), _transient(), last]), attempts=3,
                          backoff=0.25, sleep=sleeps.append)
    with pytest.raises(ModelError) as raised:
        model.chat(HELLO)
    assert raised.value is last
    assert sleeps == [0.25, 0.5]


@pytest.mark.parametrize("kind", ["permanent", "unavailable"])
def test_non_transient_errors_are_not_retried(kind: str) -> None:
    inner = ScriptedModel([ModelError("no", kind=kind), "never reached"])
    with pytest.raises(ModelError):
        RetryingModel(inner, sleep=lambda _: None).chat(HELLO)
    assert len(inner.calls) == 1


def test_arguments_pass_through() -> None:
    inner = ScriptedModel([_transient(), "ok"], name="inner")
    model = RetryingModel(inner, sleep=lambda _: None)
    assert model.name == "inner"
    assert model.chat(HELLO, json_mode=True).content == "ok"
    assert len(inner.calls) == 2


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [("embedded", EmbeddedModel, "embedded:qwen2.5-coder-1.5b"),
     ("embedded-small", EmbeddedModel, "embedded:qwen2.5-coder-0.5b"),
     ("ollama:qwen2.5-coder:7b", OllamaModel, "qwen2.5-coder:7b"),
     ("openai:http://127.0.0.1:8080/v1#coder", OpenAICompatModel, "coder")],
)
def test_make_model_specs(spec: str, cls: type, name: str) -> None:
    model = make_model(spec)
    assert isinstance(model, RetryingModel)
    assert isinstance(model.inner, cls)
    assert model.name == name


@pytest.mark.parametrize("spec", ["gpt-4", "ollama:", "openai:http://x", "openai:#m", ""])
def test_unknown_spec_names_value_and_forms(spec: str) -> None:
    with pytest.raises(EvoError) as raised:
        make_model(spec)
    assert raised.value.field == "model"
    assert raised.value.value == spec
    assert "ollama:NAME" in str(raised.value)
