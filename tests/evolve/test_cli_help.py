"""The README's promise that every command has `--help` with an example, checked on every command
the CLI registers (walked from the click tree, so a new command is checked without editing this)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from evoharness.evolve.cli import app, examples_verbatim


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


DOCS = Path(__file__).resolve().parents[2] / "docs"


def _help(path: tuple[str, ...], width: int = 80) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_example_in_help_is_one_whole_line_at_80_columns(path):
    """Click rewraps a paragraph: two examples ran into one line, and a long one folded in two."""
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    written = [line.strip() for line in (command.help or "").splitlines()
               if line.strip().startswith("Example")]
    shown = [line.strip() for line in _help(path).splitlines() if "Example" in line]
    assert shown == written and written
    assert all(line.count("evoharness ") == 1 for line in shown), shown


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_points_only_to_docs_pages_that_exist(path):
    text = " ".join(_help(path, width=400).split())
    assert "README '" not in text and "README \"" not in text  # a section may be renamed away
    for page in re.findall(r"docs/[\w./-]+?\.md", text):
        assert (DOCS.parent / page).is_file(), f"`{' '.join(path)} --help` cites {page}"


def test_examples_verbatim_opens_a_paragraph_click_does_not_rewrap():
    text = examples_verbatim("Do it.\n\nSee this.\nExample: evoharness a\nExample: evoharness b")
    assert text.splitlines() == ["Do it.", "", "See this.", "", "\b", "Example: evoharness a",
                                 "Example: evoharness b"]
