"""The starter library: structural remedies shipped with evoharness, one folder each in starters/
(entry.yaml: the root cause, the fix, the failure patterns it answers, what it registers and the
settings it sets; files/: its component files as they go into a harness; or `combines`: other
entries applied together, as one change), read as library entries that every run may be offered.
Where their record is kept once a run has tried one is filing.py's."""
from __future__ import annotations

import difflib
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evoharness.debugger.patterns import DETECTORS
from evoharness.errors import EvoError, validation_problems
from evoharness.workspace.edits import apply_edits
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.kinds import KindName
from evoharness.workspace.spec import ComponentKind

from .entry import ID_PATTERN, Cue, LibraryEntry

STARTERS = Path(__file__).with_name("starters")
PATTERN_CLASS = "pattern:"  # a failure signature's class for a debugger/patterns.py pattern


class StarterSpec(BaseModel):
    """starters/<id>/entry.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_cause: str
    targeted_fix: str
    component: ComponentKind
    # Starter entries applied first, in order, whose patterns this one answers too: remedies that
    # each help alone are tried together as one change, cued wherever any of them is.
    combines: list[Annotated[str, Field(pattern=ID_PATTERN)]] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)  # debugger/patterns.py names
    # Patterns of the combined entries that this one does not answer, because it switches off the
    # check that does: left out of its cue, which decides the tasks its trial is tried on.
    leaves_out: list[str] = Field(default_factory=list)
    registers: dict[KindName, list[str]] = Field(
        default_factory=dict)
    settings: dict[str, bool | int | float | str] = Field(default_factory=dict)  # set_setting


def starter_entries(root: Path = STARTERS) -> list[LibraryEntry]:
    """Every starter entry, by id."""
    return [_entry(folder) for folder in sorted(root.iterdir()) if (folder / "entry.yaml").is_file()]


def _entry(folder: Path, combined_in: Path | None = None) -> LibraryEntry:
    """The entry in `folder`; `combined_in`: the entry.yaml that combines it, which it may not
    do itself (one level only)."""
    path = folder / "entry.yaml"
    spec = _spec(path)
    if combined_in is not None and spec.combines:
        raise EvoError("combines an entry that combines others (one level only)",
                       file=combined_in, field="combines", value=folder.name)
    parts = [_part(folder, path, name) for name in spec.combines]
    inherited = [c.removeprefix(PATTERN_CLASS) for part in parts for c in part.cue.signature]
    stray = sorted(set(spec.leaves_out) - set(inherited))
    if stray:
        raise EvoError("leaves out patterns no combined entry answers", file=path,
                       field="leaves_out", value=stray, hint=f"combined: {', '.join(inherited)}")
    patterns = [name for name in dict.fromkeys([*inherited, *spec.patterns])
                if name not in spec.leaves_out]
    if not patterns:
        raise EvoError("names no failure pattern it answers", file=path, field="patterns",
                       hint=f"known: {', '.join(DETECTORS)}")
    unknown = sorted(set(patterns) - set(DETECTORS))
    if unknown:
        raise EvoError("names failure patterns debugger/patterns.py does not detect", file=path,
                       field="patterns", value=unknown, hint=f"known: {', '.join(DETECTORS)}")
    files = sorted(p for p in (folder / "files").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    edits = [edit for part in parts for edit in part.edits]
    edits += [{"op": "add_file", "path": p.relative_to(folder / "files").as_posix(),
               "content": p.read_text(encoding="utf-8")} for p in files]
    edits += [{"op": "register_component", "kind": kind, "name": name}
              for kind, names in spec.registers.items() for name in names]
    edits += [{"op": "set_setting", "key": key, "value": value}
              for key, value in spec.settings.items()]
    return LibraryEntry(
        id=folder.name, origin="starter", component=spec.component,
        cue=Cue(root_cause=spec.root_cause,
                signature=[PATTERN_CLASS + name for name in patterns]),
        targeted_fix=" ".join(spec.targeted_fix.split()), edits=edits)


def _spec(path: Path) -> StarterSpec:
    try:
        return StarterSpec.model_validate(yaml.safe_load(path.read_text()))
    except yaml.YAMLError as error:
        raise EvoError(f"invalid starter entry: {error}".splitlines()[0], file=path) from None
    except ValidationError as error:
        first = validation_problems(error)[0]
        raise EvoError(f"invalid starter entry: {first.message}", file=path, field=first.field,
                       value=first.value) from None


def _part(folder: Path, path: Path, name: str) -> LibraryEntry:
    """A starter entry that `folder`'s entry combines: a sibling that combines none itself."""
    part = folder.parent / name
    if name == folder.name or not (part / "entry.yaml").is_file():
        raise EvoError("combines an entry that is not another starter entry", file=path,
                       field="combines", value=name)
    return _entry(part, combined_in=path)


@functools.cache
def starter_diff(entry_id: str, root: Path = STARTERS) -> str:
    """The entry's edits as a patch of the seed harness (applied and validated on a copy of it)."""
    entry = _entry(root / entry_id)
    with tempfile.TemporaryDirectory(prefix="evo-starter-") as scratch:
        harness = Path(scratch) / "harness"
        shutil.copytree(SEED_DIR, harness, ignore=shutil.ignore_patterns("__pycache__"))
        apply_edits(harness, entry.edits)
        return "".join(_file_diff(SEED_DIR, harness, rel) for rel in _files(SEED_DIR, harness))


def _files(before: Path, after: Path) -> list[str]:
    names = {p.relative_to(root).as_posix() for root in (before, after) for p in root.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    return sorted(names)


def _file_diff(before: Path, after: Path, rel: str) -> str:
    old, new = (_lines(root / rel) for root in (before, after))
    if old == new:
        return ""
    return "".join(difflib.unified_diff(old, new, "/dev/null" if not old else f"a/{rel}",
                                        f"b/{rel}"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True) if path.is_file() else []
