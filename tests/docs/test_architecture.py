"""docs/architecture.md is the repository's map: every module and folder it names exists, its
stages are the package's top-level folders, and no stage imports a later one in its table (the
one-way data flow the page states)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def page() -> str:
    return PAGE.read_text()


def stages() -> list[str]:
    """The stages table's first column, in its order: `evoharness/`, `workspace/`, ..."""
    table = page().split("## The stages", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([\w/]+)/` \|", table, re.M)


def test_every_path_the_page_names_exists() -> None:
    named = set(re.findall(r"`([\w./-]+(?:\.py|/))`", page()))
    assert len(named) > 50
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_the_stages_are_the_packages_top_level_folders() -> None:
    top = [s for s in stages() if "/" not in s]
    packages = sorted(p.parent.name for p in ROOT.glob("*/__init__.py")
                      if p.parent.name not in {"tests", "benchmarks"})
    assert sorted(top) == packages


def _stage_imports(stage: str) -> set[tuple[str, str]]:
    """(file, stage imported) for every `evoharness.<stage>` import in the stage's modules."""
    found = set()
    for path in (ROOT / stage).rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "evoharness" and len(parts) > 1:
                    found.add((str(path.relative_to(ROOT)), parts[1]))
    return found


def test_no_stage_imports_a_later_one() -> None:
    order = [s for s in stages() if "/" not in s]
    up = sorted((path, imported) for i, stage in enumerate(order)
                for path, imported in _stage_imports(stage)
                if imported in order and order.index(imported) > i)
    assert not up, f"imports up the stages of docs/architecture.md: {up}"


def test_the_phases_are_listed_in_the_loops_order() -> None:
    from evoharness.evolve.ledger import PHASE_ORDER

    table = page().split("## The phases, in order", 1)[1].split("\n## ", 1)[0]
    listed = [p for p in re.findall(r"^\| ([A-Z]+) \|", table, re.M)]
    assert listed == [str(p) for p in PHASE_ORDER]


def test_every_command_is_in_the_commands_table() -> None:
    import typer

    from evoharness.evolve.cli import app

    root = typer.main.get_command(app)
    names = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        names += [f"{name} {sub}" for sub in subs] if subs else [name]
    table = page().split("## The commands", 1)[1]
    listed = set(re.findall(r"`([a-z]+(?: [a-z]+)?)(?: \[[^\]]*\])?`", table))
    assert sorted(set(names) - listed) == []
