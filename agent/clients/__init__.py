"""Model clients behind the agent.model.Model protocol, and make_model(spec) that picks one from
a spec string. The protocol itself lives in agent/model.py. A client's module (and its heavy
dependencies: ollama, httpx, llama.cpp) is imported only when that client is asked for."""
from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from evoharness.errors import EvoError

if TYPE_CHECKING:
    from evoharness.agent.model import Model

SPEC_FORMS = ("embedded, embedded-small, ollama:NAME, openai:BASE_URL#MODEL, "
              "scripted:POLICY_OR_SCRIPT_FILE")

_LAZY = {  # the public client classes, each from its own module
    "EmbeddedModel": "evoharness.agent.clients.embedded",
    "OllamaModel": "evoharness.agent.clients.ollama",
    "OpenAICompatModel": "evoharness.agent.clients.openai_compat",
    "RetryingModel": "evoharness.agent.clients.retry",
    "ScriptedModel": "evoharness.agent.clients.scripted",
}

__all__ = ["SPEC_FORMS", *_LAZY, "make_model", "parse_spec"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_model(spec: str = "embedded", *, workers: int = 1) -> Model:
    """The client a spec names, wrapped in RetryingModel; an unknown spec is an EvoError.
    `workers`: how many conversations will call it at once (sizes the embedded server)."""
    from evoharness.agent.clients.retry import RetryingModel

    return RetryingModel(_client(spec.strip(), workers))


def parse_spec(spec: str, field: str = "model") -> tuple[str, str, str]:
    """(kind, name, url) of a spec without connecting to anything, so a run's config can be
    checked when it is created; an unknown spec (or missing script) is an EvoError naming `field`."""
    spec = spec.strip()
    if spec in ("embedded", "embedded-small"):
        return spec, spec, ""
    kind, _, rest = spec.partition(":")
    if kind == "ollama" and rest:
        return kind, rest, ""
    if kind == "scripted" and rest:
        from evoharness.agent.clients.scripted import builtin_policies, script_file

        if script_file(rest) is None:
            raise EvoError("no model script here", field=field, value=spec,
                           hint=f"name a script file, or a built-in policy: "
                                f"{', '.join(builtin_policies())}")
        return kind, rest, ""
    url, _, model = rest.rpartition("#")
    if kind == "openai" and url and model:
        return kind, model, url
    raise EvoError("unknown model spec", field=field, value=spec,
                   hint=f"Use one of: {SPEC_FORMS}")


def _client(spec: str, workers: int) -> Model:
    kind, name, url = parse_spec(spec)
    if kind in ("embedded", "embedded-small"):
        from evoharness.agent.clients.embedded import EmbeddedModel
        from evoharness.agent.clients.weights import WEIGHTS

        size = "1.5b" if kind == "embedded" else "0.5b"
        return EmbeddedModel(WEIGHTS[f"qwen2.5-coder-{size}"], workers=workers)
    if kind == "ollama":
        from evoharness.agent.clients.ollama import OllamaModel

        return OllamaModel(name)
    if kind == "scripted":
        from evoharness.agent.clients.scripted import scripted_model

        return scripted_model(name)
    from evoharness.agent.clients.openai_compat import OpenAICompatModel

    return OpenAICompatModel(url, name, api_key=os.environ.get("OPENAI_API_KEY"))
