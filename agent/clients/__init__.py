"""Model clients behind the agent.model.Model protocol, and make_model(spec) that picks one from
a spec string. The protocol itself lives in agent/model.py."""
from __future__ import annotations

import os

from agent.clients.embedded import EmbeddedModel, server_size
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
    "parse_spec",
]


def make_model(spec: str = "embedded", *, workers: int = 1) -> Model:
    """The client a spec names, wrapped in RetryingModel; an unknown spec is an EvoError.
    `workers`: how many conversations will call it at once (sizes the embedded server)."""
    return RetryingModel(_client(spec.strip(), workers))


def parse_spec(spec: str, field: str = "model") -> tuple[str, str, str]:
    """(kind, name, url) of a spec without connecting to anything, so a run's config can be
    checked when it is created; an unknown spec is an EvoError naming `field`."""
    spec = spec.strip()
    if spec in ("embedded", "embedded-small"):
        return spec, spec, ""
    kind, _, rest = spec.partition(":")
    if kind == "ollama" and rest:
        return kind, rest, ""
    url, _, model = rest.rpartition("#")
    if kind == "openai" and url and model:
        return kind, model, url
    raise EvoError("unknown model spec", field=field, value=spec,
                   hint=f"Use one of: {SPEC_FORMS}")


def _client(spec: str, workers: int) -> Model:
    kind, name, url = parse_spec(spec)
    if kind == "embedded":
        return EmbeddedModel(WEIGHTS["qwen2.5-coder-1.5b"], server_size(workers))
    if kind == "embedded-small":
        return EmbeddedModel(WEIGHTS["qwen2.5-coder-0.5b"], server_size(workers))
    if kind == "ollama":
        return OllamaModel(name)
    return OpenAICompatModel(url, name, api_key=os.environ.get("OPENAI_API_KEY"))
