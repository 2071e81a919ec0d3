"""The evolve agent's read tools as in-process handlers: list and read workspace files, read evidence
files, query the traces (train split only). Each is confined to its folder; changes are change.py's."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from evoharness.agent.tools import Handler, ToolResult, refused
from evoharness.errors import EvoError
from evoharness.files import read_inside
from evoharness.traces.sql_tool import SqlTool
from evoharness.traces.store import TraceStore
from evoharness.workspace.confine import confine
from evoharness.workspace.spec import ToolSpec

MAX_LISTED = 300  # files one list_files call shows; a harness is small, evidence may not be
MAX_READ_BYTES = 4 << 20  # one file read_file or read_evidence returns (a whole harness's bound)


def _spec(name: str, description: str, **properties: dict[str, Any]) -> ToolSpec:
    required = [key for key, prop in properties.items() if "default" not in prop]
    return ToolSpec(name=name, description=description, parameters={
        "type": "object", "properties": properties, "required": required,
        "additionalProperties": False,
    })


def guarded(run: Callable[[dict[str, Any]], str]) -> Handler:
    """A handler whose EvoErrors reach the model as a structured, permanent ToolError."""

    def handler(arguments: dict[str, Any]) -> ToolResult:
        try:
            return ToolResult(output=run(arguments))
        except EvoError as error:
            return refused("permanent", str(error),
                           "fix the request and try again, or choose another action")

    return handler


def _inside(root: Path, rel: str) -> Path:
    """`rel` confined to `root`; '' and '.' mean the root itself."""
    return root if rel.strip() in ("", ".", "./") else confine(root, rel.strip())


def _listing(root: Path, folder: Path, rel: str) -> str:
    if not folder.is_dir():
        raise EvoError("no such folder", file=rel, field="path", hint="list '.' to see what exists")
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        # .git is git's, and a symlinked folder could lead out of the root
        dirnames[:] = sorted(d for d in dirnames
                             if d != ".git" and not Path(dirpath, d).is_symlink())
        found += [Path(dirpath, f).relative_to(root) for f in sorted(filenames)]
    lines = [f"{path} ({(root / path).lstat().st_size} bytes)" for path in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        lines.append(f"... {len(found) - MAX_LISTED} more files; list a subfolder")
    return "\n".join(lines) or "(no files)"


def _text(root: Path, rel: str) -> str:
    path = _inside(root, rel)
    if not path.is_file():
        raise EvoError("no such file", file=rel, field="path", hint="use list_files to see what exists")
    data = read_inside(root, path.relative_to(root).as_posix(), limit=MAX_READ_BYTES)
    return data.decode("utf-8", errors="replace")


def workspace_tools(root: Path) -> list[tuple[ToolSpec, Handler]]:
    """list_files and read_file over the harness workspace."""
    path_arg = {"type": "string", "description": "a path relative to the workspace, e.g. tools"}
    return [
        (_spec("list_files", "List the harness workspace's files (recursively) under a folder.",
               path={**path_arg, "default": "."}),
         guarded(lambda a: _listing(root, _inside(root, a.get("path", ".")), a.get("path", ".")))),
        (_spec("read_file", "Read one file of the harness workspace, e.g. system_prompt.md.j2.",
               path=path_arg),
         guarded(lambda a: _text(root, a["path"]))),
    ]


def evidence_tool(evidence_dir: Path) -> tuple[ToolSpec, Handler]:
    """read_evidence over this iteration's evidence files; a folder path lists it instead."""

    def read(arguments: dict[str, Any]) -> str:
        rel = arguments.get("path", "overview.md")
        path = _inside(evidence_dir, rel)
        return _listing(evidence_dir, path, rel) if path.is_dir() else _text(evidence_dir, rel)

    spec = _spec("read_evidence",
                 "Read an evidence file: overview.md first, then the tasks/<task>.md and "
                 "rollouts/<rollout>.md files it links to. A folder path lists its files.",
                 path={"type": "string", "default": "overview.md",
                       "description": "a path relative to the evidence folder"})
    return spec, guarded(read)


class LibraryOffer(NamedTuple):
    """An improvement-library entry shown to the session: its line in the prompt, its text, and
    what a `change` naming it takes from it (its edits and component; its cue's root cause and
    fix, and the tasks where its patterns showed, where the call leaves those out)."""

    entry_id: str
    summary: str
    text: str
    edits: tuple[dict[str, Any], ...] = ()
    component: str = ""
    root_cause: str = ""
    targeted_fix: str = ""
    tasks: tuple[str, ...] = ()


def library_tool(offers: Iterable[LibraryOffer]) -> tuple[ToolSpec, Handler]:
    """`library`: one offered entry in full (read-only; applying it is a `change` like any other)."""
    texts = {offer.entry_id: offer.text for offer in offers}

    def read(arguments: dict[str, Any]) -> str:
        entry = arguments["entry"]
        if entry not in texts:
            raise EvoError("no such library entry was offered", field="entry", value=entry,
                           hint=f"offered: {', '.join(texts)}")
        return texts[entry]

    spec = _spec("library", "Read an improvement-library entry listed in the prompt: its cue, "
                 "where it was kept or reverted, its edits and its diff.",
                 entry={"type": "string", "description": "an entry id from the list"})
    return spec, guarded(read)


class SqlHandler:
    """The read-only SQL tool over the train split, opened on first use (a snapshot is not free)
    and closed by the session."""

    spec = _spec("sql", "Run one read-only SQL query (DuckDB) on the traces: tables rollouts "
                 "(verifier_lines: the verifier's failing lines), events, changes, verdicts, "
                 "iterations. Add a LIMIT.",
                 query={"type": "string", "description": "one SELECT statement"})

    def __init__(self, db: Path | TraceStore, forbidden: Iterable[str] = ()) -> None:
        self.db = db
        self.forbidden = list(forbidden)  # the hidden tests' lines, redacted like the evidence
        self._tool: SqlTool | None = None

    def __call__(self, arguments: dict[str, Any]) -> ToolResult:
        return guarded(self._run)(arguments)

    def _run(self, arguments: dict[str, Any]) -> str:
        if self._tool is None:
            self._tool = SqlTool(self.db, restrict_to_split="train", forbidden=self.forbidden)
        return self._tool.run(arguments["query"]).text()

    def close(self) -> None:
        if self._tool is not None:
            self._tool.close()
