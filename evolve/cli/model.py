"""CLI commands for the embedded model (placeholder until agent/clients lands)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
