"""CLI commands for the harness noun: `evoharness harness check DIR` validates a harness by hand.
Validation itself is workspace/validate.py's; errors become exit code 2 in evolve/cli/__init__."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from evoharness.workspace.spec import LoadedHarness


def register(app: typer.Typer) -> None:
    """Add the `harness` sub-app to the main app."""
    harness_app = typer.Typer(help="Inspect and validate harness directories.",
                              no_args_is_help=True, rich_markup_mode=None)
    harness_app.command("check")(check)
    app.add_typer(harness_app, name="harness")


def check(
    directory: Path = typer.Argument(..., help="The harness directory (with harness.yaml)."),
    as_json: bool = typer.Option(False, "--json", help="Print the component summary as JSON."),
) -> None:
    """Validate a harness directory: print OK and its components, or every problem (exit 2).

    Example: evoharness harness check runs/night1/workspace
    """
    from rich.console import Console

    from evoharness.workspace.validate import load_harness

    harness = load_harness(directory)
    settings = harness.spec.settings
    if as_json:
        print(json.dumps({"ok": True, "path": str(directory), "name": harness.spec.name,
                          **components(harness), "memory_chars": len(harness.memory),
                          "settings": settings.model_dump()}))
        return
    console = Console(highlight=False)
    console.print(f"OK: harness {harness.spec.name!r} at {directory}")
    for kind, names in components(harness).items():
        console.print(f"  {kind}: {', '.join(names) or '(none)'}")
    console.print(f"  memory: {len(harness.memory)} chars; action format: "
                  f"{settings.action_format}; max steps: {settings.max_steps}")


def components(harness: LoadedHarness) -> dict[str, list[str]]:
    """The names a validated harness has active, by kind (harness.yaml's lists, in the order of
    the registry of kinds, workspace/kinds.py)."""
    from evoharness.workspace.kinds import KINDS

    return {kind.list_key: list(getattr(harness.spec, kind.list_key)) for kind in KINDS}
