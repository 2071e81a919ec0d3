"""Reading and pre-registering manifest files (where they live is the run ledger's RunPaths) and
the commit trailers that carry a prediction. How a change is judged is trial.py's job."""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from evoharness.errors import EvoError, ValidationFailed
from evoharness.files import write_model

from .schema import ChangeManifestEntry, IterationManifest


def _field_path(loc: tuple) -> str:
    """('changes', 0, 'predicted_fixes', 1, 'task_id') -> 'changes[0].predicted_fixes[1].task_id'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _unknown_tasks(manifest: IterationManifest, known: set[str], path: Path) -> list[EvoError]:
    problems = []
    for i, change in enumerate(manifest.changes):
        groups = {
            "failure_evidence": change.failure_evidence,
            "predicted_fixes": change.predicted_fixes,
            "predicted_regressions": change.predicted_regressions,
        }
        for group, refs in groups.items():
            for j, ref in enumerate(refs):
                if ref.task_id not in known:
                    problems.append(EvoError(
                        f"unknown task {ref.task_id!r}", file=path,
                        field=f"changes[{i}].{group}[{j}].task_id",
                        hint="use a task id of the suite (evoharness tasks check lists them)",
                    ))
    return problems


def parse_manifest(text: str, path: Path, known_tasks: Iterable[str] | None) -> IterationManifest:
    """Validate manifest text; every problem names the file and the field (or line and column)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise EvoError(
            f"not valid JSON at line {error.lineno} column {error.colno}: {error.msg}", file=path
        ) from None
    except RecursionError:
        raise EvoError("JSON is nested too deeply", file=path) from None
    try:
        manifest = IterationManifest.model_validate(raw)
    except ValidationError as error:
        problems = [
            EvoError(e["msg"], file=path, field=_field_path(e["loc"]) or None)
            for e in error.errors()
        ]
        raise ValidationFailed(f"manifest {path}", problems) from None
    if known_tasks is not None:
        problems = _unknown_tasks(manifest, set(known_tasks), path)
        if problems:
            raise ValidationFailed(f"manifest {path}", problems)
    return manifest


def load_manifest(path: str | Path, known_tasks: Iterable[str] | None = None) -> IterationManifest:
    """Read one manifest file; `known_tasks` (the suite's ids) turns unknown task ids into errors."""
    path = Path(path)
    if not path.is_file():
        raise EvoError("manifest file not found", file=path)
    return parse_manifest(path.read_text(), path, known_tasks)


def load_manifests(folder: str | Path) -> list[IterationManifest]:
    """Every manifest file in a run's manifests folder, oldest iteration first."""
    return [load_manifest(path) for path in sorted(Path(folder).glob("iter-*.json"))]


def _existing(path: Path) -> IterationManifest | None:
    """The manifest already registered at `path`, or None when there is none (or it is corrupt)."""
    try:
        return load_manifest(path)
    except EvoError:
        return None


def save_manifest(path: str | Path, manifest: IterationManifest) -> Path:
    """Pre-register a manifest: write it atomically to `path`.

    Saving the same manifest again is a no-op (resume); a different one for an iteration that
    already has a valid manifest is refused, because predictions may not be edited after the fact.
    """
    path = Path(path)
    existing = _existing(path)
    if existing is not None and existing != manifest:
        raise EvoError(
            "a different manifest is already registered for this iteration", file=path,
            field="iteration", value=manifest.iteration,
            hint="predictions are pre-registered; make a new change in the next iteration instead",
        )
    if existing is None:
        write_model(path, manifest)
    return path


def _predictions_trailer(predictions) -> str:
    return ", ".join(f"{p.task_id}:{p.probability:.2f}" for p in predictions) or "none"


def trailers_for(entry: ChangeManifestEntry) -> dict[str, str]:
    """Git trailers that carry the prediction inside the commit message too."""
    return {
        "Change-Id": entry.id,
        "Component": entry.component,
        "Predicted-Fixes": _predictions_trailer(entry.predicted_fixes),
        "Predicted-Regressions": _predictions_trailer(entry.predicted_regressions),
    }
