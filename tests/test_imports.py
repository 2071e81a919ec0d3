"""The stages' imports (DESIGN.md): data flows down workspace → agent → tasks → traces →
debugger → manifests → evolve, so no module imports a later stage, and no two modules import each
other by any path. Every import counts, a lazy one inside a function too: it still ties the two
modules together (tasks/executor.py and tasks/ray_executor.py once did)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["evoharness", "workspace", "agent", "tasks", "traces", "debugger", "manifests", "evolve"]
DATA = {"suite", "starters", "seed", "scripts", "templates"}  # package data, not the package


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts = parts if parts[0] == "evoharness" else ["evoharness", *parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """The project's modules `path` imports: `from P import x` is P's submodule x where x is
    one, else P itself."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            subs = {f"{name}.{alias.name}" for alias in node.names} & modules
            found |= subs if len(subs) == len(node.names) else subs | {name}
    return found & modules - {module}


def _graph() -> dict[str, set[str]]:
    files = [p for stage in ORDER for p in (ROOT / stage).rglob("*.py")
             if not DATA & set(p.relative_to(ROOT).parts)]
    modules = {_module(p): p for p in files}
    return {name: _imports(path, name, set(modules)) for name, path in modules.items()}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ORDER else "evoharness"


def test_no_module_imports_a_later_stage():
    graph = _graph()
    assert len(graph) > 100 and "evoharness.tasks.executor" in graph
    up = sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps
                if ORDER.index(_stage(d)) > ORDER.index(_stage(m)))
    assert up == []


def test_no_two_modules_import_each_other_by_any_path():
    graph = _graph()
    assert "evoharness.tasks.ray_executor" in graph["evoharness.tasks.executor"]  # lazy, counted
    cycles, done = [], set()

    def walk(node: str, path: list[str], on_path: set[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt in on_path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                walk(nxt, [*path, nxt], on_path | {nxt})
        done.add(node)

    for start in sorted(graph):
        if start not in done:
            walk(start, [start], {start})
    assert cycles == []
