"""Model clients behind the agent.model.Model protocol, and make_model(spec) that picks one from
a spec string. The protocol itself lives in agent/model.py."""
from __future__ import annotations

import os

from agent.clients.embedded import EmbeddedModel
from agent.clients.ollama import OllamaModel
from agent.clients.openai_compat import OpenAICompatModel
from agent.clients.retry import RetryingModel
from agent.clients.weights import WEIGHTS
from agent.model import Model
from evoharness.errors import EvoError

SPEC_FORMS = "embedded, embedded-small, ollama:NAME, openai:BASE_URL#MODEL"

__all__ = [
    "SPEC_FORMS",
    "EmbeddedModel",
    "OllamaModel",
    "OpenAICompatModel",
    "RetryingModel",
    "make_model",
]


def make_model(spec: str = "embedded") -> Model:
    """The client a spec names, wrapped in RetryingModel; an unknown spec is an EvoError."""
    return RetryingModel(_client(spec.strip()))


def _client(spec: str) -> Model:
    if spec == "embedded":
        return EmbeddedModel(WEIGHTS["qwen2.5-coder-1.5b"])
    if spec == "embedded-small":
        return EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"])
    kind, _, rest = spec.partition(":")
    if kind == "ollama" and rest:
        return OllamaModel(rest)
    if kind == "openai" and "#" in rest:
        url, _, model = rest.rpartition("#")
        if url and model:
            return OpenAICompatModel(url, model, api_key=os.environ.get("OPENAI_API_KEY"))
    raise EvoError("unknown model spec", field="model", value=spec,
                   hint=f"Use one of: {SPEC_FORMS}")
