"""Hand-built manifests, counts and noise for the manifests tests."""
from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from manifests.noise import NoiseModel, TaskCounts
from manifests.schema import ChangeManifestEntry, IterationManifest, Prediction
from traces.schema import DDL


def change(cid: str, fixes: dict[str, float] | None = None, regs: dict[str, float] | None = None,
           commit: str = "0123456789abcdef", delta: float = 0.0, files=("system_prompt.md.j2",)):
    return ChangeManifestEntry(
        id=cid, component="system_prompt", files=list(files), commit=commit,
        root_cause="the agent forgets to run tests", targeted_fix="tell it to run tests",
        predicted_fixes=[Prediction(task_id=t, probability=p) for t, p in (fixes or {}).items()],
        predicted_regressions=[Prediction(task_id=t, probability=p) for t, p in (regs or {}).items()],
        expected_delta=delta,
    )


def manifest(iteration: int, *changes: ChangeManifestEntry, run_id: str = "run1"):
    return IterationManifest(
        run_id=run_id, iteration=iteration, harness_commit_before="fedcba9876543210",
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
        changes=list(changes), no_change_reason=None if changes else "nothing to fix",
    )


def counts(spec: str) -> dict[str, TaskCounts]:
    """'a=0/2 b=2/2' -> {'a': 0/2, 'b': 2/2}."""
    out = {}
    for item in spec.split():
        task, frac = item.split("=")
        passes, total = frac.split("/")
        out[task] = TaskCounts(passes=int(passes), total=int(total))
    return out


def noise(tasks: str = "", flips: str = "", comparisons: int = 1) -> NoiseModel:
    """Every task in `tasks` compared `comparisons` times; those in `flips` flipped once."""
    flipped = set(flips.split())
    names = set(tasks.split()) | flipped
    return NoiseModel(comparisons={t: comparisons for t in names},
                      flips={t: int(t in flipped) for t in names})


def db(path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    con.execute(DDL)
    return con
