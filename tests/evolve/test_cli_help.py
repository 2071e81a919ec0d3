"""The README's promise that every command has `--help` with an example, checked on every command
the CLI registers (walked from the click tree, so a new command is checked without editing this)."""
from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from evoharness.evolve.cli import app


def _leaf_commands(command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if hasattr(command, "commands"):  # a group (typer ships its own copy of click's classes)
        return [leaf for name, sub in sorted(command.commands.items())
                for leaf in _leaf_commands(sub, (*path, name))]
    return [path]


COMMANDS = _leaf_commands(typer.main.get_command(app))


def test_the_walk_finds_the_readme_commands():
    names = {" ".join(path) for path in COMMANDS}
    assert {"init", "evolve", "run", "status", "rollback", "report", "traces sql",
            "manifest show", "tasks check"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_help_shows_an_example_of_itself(path):
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    examples = [line.strip() for line in result.output.splitlines() if "Example" in line]
    assert examples, f"`evoharness {' '.join(path)} --help` shows no example"
    assert any(f"evoharness {' '.join(path)}" in line for line in examples), examples
