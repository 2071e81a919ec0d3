"""CLI commands for the run noun (placeholder until its stage lands)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
