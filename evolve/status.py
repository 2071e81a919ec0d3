"""A run's progress for `evoharness status`, read through the run ledger and the trace store:
the answer first (the latest exam), the path of changes that led there (lineage.py), then the
iterations; it works while a running `evolve` changes the run (which is then said to be live)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from evoharness.traces.queries import iteration_totals

from .evaluate.compare import Comparison
from .forecast import describe
from .ledger import PHASE_ORDER, holder
from .ledger.records import ExamRecord
from .lineage import lineage
from .run import read_run


def status(run_dir: str | Path) -> dict[str, Any]:
    config, ledger = read_run(run_dir)
    iteration, done = ledger.position()
    with ledger.reading() as store:
        totals = {t.iteration: t for t in iteration_totals(store.con, ledger.run_id)}
    changes = ledger.changes()
    made = Counter(c.iteration for c in changes)
    decided = Counter((c.iteration, c.decision) for c in changes)
    rows = []
    for it in sorted(set(totals) | set(made)):
        t = totals.get(it)
        rows.append({
            "iteration": it, "pass_rate_train": t and t.pass_rate_train,
            "pass_rate_heldout": t and t.pass_rate_heldout, "rollouts": t.rollouts if t else 0,
            "infra_errors": t.infra_errors if t else 0,
            "trial_rollouts": t.trial_rollouts if t else 0,
            "tokens": (t.tokens_in + t.tokens_out) if t else 0, "changes": made[it],
            "kept": decided[it, "keep"], "reverted": decided[it, "revert"]})
    next_phase = next((p for p in PHASE_ORDER if p not in done), PHASE_ORDER[0])
    running = holder(ledger.paths.lock)
    stop = ledger.stop()  # with a process still running: it is in the final exam
    exams = ledger.exams()
    return {"run_id": ledger.run_id, "model": config.model, "k": config.k,
            "live": running is not None, "running": running, "current_iteration": iteration,
            "next_phase": next_phase.value, "stopped": stop and stop.line(), "iterations": rows,
            "exam": _exam(exams[-1]) if exams else None,
            "lineage": [row.model_dump() for row in lineage(changes)],
            # a stopped run's cost is its exam's; what it would still cost is only a guess
            "forecast": [] if stop else describe(config, ledger)}


def _exam(record: ExamRecord) -> dict[str, Any]:
    """The latest final exam: its verdict line, its answer and every line in words, each
    comparison's numbers, the baseline and what the evolution cost."""
    def numbers(c: Comparison) -> dict[str, Any]:
        return {"a": c.a, "b": c.b, "tasks": c.n, "mean": c.mean, "lo": c.lo, "hi": c.hi,
                "confidence": c.confidence, "verdict": c.verdict}

    return {"exam_id": record.exam_id, "iteration": record.iteration, "k": record.k,
            "tasks": len(record.tasks), "verdict": record.verdict_line(),
            "answer": record.answer(), "lines": record.lines(),
            "noise_floor": numbers(record.noise_floor),
            "comparisons": [numbers(c) for c in record.comparisons], "note": record.note,
            "baseline": record.baseline and record.baseline.model_dump(),
            "cost": record.cost and record.cost.model_dump()}
