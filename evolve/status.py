"""A run's progress for `evoharness status`: from the trace store, or, while a running `evolve`
holds the store (DuckDB admits no reader beside its writer), from the files the loop writes."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from manifests.store import load_run_manifests
from tasks.results import Outcome, RolloutResult
from traces.queries import iteration_totals
from traces.store import StoreBusy

from .config import load_config
from .loop import PHASE_ORDER, position
from .run import open_run


def status(run_dir: str | Path) -> dict[str, Any]:
    try:
        return _from_store(run_dir)
    except StoreBusy:
        return _from_files(run_dir)


def _from_store(run_dir: str | Path) -> dict[str, Any]:
    with open_run(run_dir) as r:
        iteration, done = position(r)
        totals = {t.iteration: t for t in iteration_totals(r.store.con, r.run_id)}
        decisions = {(it, d): n for it, d, n in r.store.con.execute(
            "SELECT c.iteration, v.decision, count(*) FROM changes c JOIN verdicts v "
            "USING (change_id) WHERE c.run_id = ? GROUP BY ALL", [r.run_id]).fetchall()}
        made = dict(r.store.con.execute(
            "SELECT iteration, count(*) FROM changes WHERE run_id = ? GROUP BY ALL",
            [r.run_id]).fetchall())
        rows = []
        for it in sorted(set(totals) | set(made)):
            t = totals.get(it)
            rows.append(_row(it, t and t.pass_rate_train, t and t.pass_rate_heldout,
                             t.rollouts if t else 0, t.infra_errors if t else 0,
                             (t.tokens_in + t.tokens_out) if t else 0, made.get(it, 0),
                             decisions.get((it, "keep"), 0), decisions.get((it, "revert"), 0)))
        next_phase = next((p for p in PHASE_ORDER if p not in done), PHASE_ORDER[0])
        return {"run_id": r.run_id, "model": r.config.model, "k": r.config.k, "live": False,
                "current_iteration": iteration, "next_phase": next_phase, "iterations": rows}


def _from_files(run_dir: str | Path) -> dict[str, Any]:
    """Rollout files and manifests only: verdicts live in the store, so kept/reverted are None."""
    paths, config = load_config(run_dir)
    made = {m.iteration: len(m.changes) for m in load_run_manifests(paths.root)}
    counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path in sorted((paths.root / "iterations").glob("it*/rollouts/*.json")):
        try:
            result = RolloutResult.model_validate_json(path.read_text())
        except ValueError:
            continue  # a file being quarantined; the store will say
        c = counts[result.iteration]
        c["rollouts"] += 1
        c["tokens"] += result.tokens_in + result.tokens_out
        if result.outcome == Outcome.INFRA_ERROR:
            c["infra"] += 1
            continue
        c[f"scored_{result.split}"] += 1
        c[f"passed_{result.split}"] += result.outcome == Outcome.PASS
    rows = [_row(it, _rate(c, "train"), _rate(c, "heldout"), c["rollouts"], c["infra"],
                 c["tokens"], made.get(it, 0), None, None)
            for it, c in sorted(counts.items())]
    current = max(counts, default=0)
    return {"run_id": config.run_id, "model": config.model, "k": config.k, "live": True,
            "current_iteration": current, "next_phase": "running", "iterations": rows}


def _rate(counts: dict[str, int], split: str) -> float | None:
    scored = counts[f"scored_{split}"]
    return counts[f"passed_{split}"] / scored if scored else None


def _row(iteration: int, train: float | None, heldout: float | None, rollouts: int, infra: int,
         tokens: int, changes: int, kept: int | None, reverted: int | None) -> dict[str, Any]:
    return {"iteration": iteration, "pass_rate_train": train, "pass_rate_heldout": heldout,
            "rollouts": rollouts, "infra_errors": infra, "tokens": tokens, "changes": changes,
            "kept": kept, "reverted": reverted}
