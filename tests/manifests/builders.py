"""Hand-built manifests, counts and trial judgements for the manifests tests."""
from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from evoharness.manifests.design import TrialDesign
from evoharness.manifests.history import TaskCounts, TreeHistory
from evoharness.manifests.judgement import Applied, Judgement, TrialSetup
from evoharness.manifests.probe import ProbeOutcomes
from evoharness.manifests.schema import ChangeManifestEntry, IterationManifest, Prediction
from evoharness.manifests.trial import Trial
from evoharness.traces.schema import DDL


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


def judge(entry: ChangeManifestEntry, history: str, base: dict[str, str] | None = None,
          change: dict[str, str] | None = None, *, iteration: int = 0, run_id: str = "run1",
          applied: Applied = "alone", placebo: bool = False,
          design: TrialDesign = TrialDesign(), validation: list[str] | None = None) -> Judgement:
    """The real trial of `entry` on the base tree's `history` ('a=0/2 b=2/2'), every rollout it
    asks for drawn from a pattern per arm and task ('01' = fail, pass, fail, pass, ...; a task
    with no pattern always passes), stepped until it decides; stored as the loop stores it."""
    tree = TreeHistory(tree="tree-base", counts=counts(history))
    trial = Trial(entry, tree, design, validation=validation)
    patterns = {"base": base or {}, "change": change or {}}
    drawn: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
    while (step := trial.step(ProbeOutcomes(**drawn))).verdict is None:
        for request in step.requests:
            got = drawn[request.arm].setdefault(request.task_id, [])
            pattern = patterns[request.arm].get(request.task_id, "1")
            got += [pattern[(len(got) + i) % len(pattern)] == "1" for i in range(request.count)]
    setup = TrialSetup(change_id=entry.id, run_id=run_id, iteration=iteration, applied=applied,
                       base_commit="b" * 40, base_tree="tree-base", change_commit="c" * 40,
                       change_tree="tree-change", history=tree, candidates=tree, design=design,
                       placebo=placebo, validation=validation)
    return Judgement(setup=setup, verdict=step.verdict)


def db(path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    con.execute(DDL)
    return con
