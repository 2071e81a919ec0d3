"""Distillation: one iteration's traces in DuckDB become layered evidence files
(overview.md → tasks/<task>.md → rollouts/<rollout>.md → raw rows), deterministic and fast.

The SQL lives in debugger/queries.py, the overview's bounding in debugger/overview.py, behaviour
patterns in debugger/patterns.py, where the model time went in debugger/model_time.py, the optional root-cause pass in debugger/analyst.py, the leak
guard in traces/leak.py.
"""
from __future__ import annotations

import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel

from evoharness.debugger import queries as q
from evoharness.debugger.analyst import Analyst, AnalystReport
from evoharness.debugger.divergence import Divergence, first_divergence, to_call
from evoharness.traces.leak import Redactor, assert_no_leak
from evoharness.debugger.model_time import model_time
from evoharness.debugger.overview import build_overview, totals
from evoharness.debugger.patterns import find_patterns
from evoharness.debugger.render import render, safe_name

MAX_ROLLOUT_CHARS = 40_000
MAX_TASK_ERRORS = 30


class Staging:
    """Builds the evidence tree in a hidden sibling directory, then swaps it in whole: readers see
    the old evidence or the complete new one, and one sync replaces an fsync per file."""

    def __init__(self, root: Path, redact: Redactor) -> None:
        self.root = root
        self.dir = root.with_name(f".{root.name}.tmp")
        self.redact = redact
        if self.dir.exists():  # left by a killed attempt
            shutil.rmtree(self.dir)

    def write(self, rel: str, text: str) -> Path:
        path = self.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.redact(text))
        return path

    def publish(self) -> None:
        os.sync()
        old = self.root.with_name(f".{self.root.name}.old")
        if self.root.exists():  # a resumed DISTILL must not keep files of an earlier attempt
            os.replace(self.root, old)
        os.replace(self.dir, self.root)
        shutil.rmtree(old, ignore_errors=True)


class EvidenceIndex(BaseModel):
    """Where the evidence of one iteration was written (paths under `root`)."""

    root: Path
    overview: Path
    tasks: dict[str, Path]
    rollouts: dict[str, Path]
    overview_chars: int
    analyst_failed: list[str] = []


def distill(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    iteration: int,
    out_dir: str | Path,
    *,
    hidden_tasks: set[str],
    scoreboard: str | None = None,
    previous_iteration: int | None = None,
    forbidden: Iterable[str] = (),
    analyst: Analyst | None = None,
) -> EvidenceIndex:
    """Write out_dir/evidence/ for one iteration and return its index. `previous_iteration`
    defaults to iteration - 1; `forbidden` are test-file lines that must never appear (redacted,
    then checked); held-out rollouts are never read; `scoreboard` is the trials' scoreboard
    as markdown (held-out task ids in it are redacted like everywhere else)."""
    previous = iteration - 1 if previous_iteration is None else previous_iteration
    scope = q.Scope(run_id=run_id, iteration=iteration, previous=previous,
                    hidden=tuple(sorted(hidden_tasks)))
    root = Path(out_dir) / "evidence"
    stage = Staging(root, Redactor(hidden_tasks, forbidden))

    tasks = q.rows(con, q.TASK_STATS, scope)
    rollouts = q.rows(con, q.ROLLOUTS, scope)
    verifier = {r["rollout_id"]: r["lines"] for r in q.rows(con, q.VERIFIER_LINES, scope)}
    rollout_paths = write_rollouts(con, scope, stage, rollouts, verifier)
    task_paths = write_tasks(con, scope, stage, tasks, rollouts, verifier)

    report = run_analyst(analyst, tasks, task_paths, stage)
    head = {"run_id": run_id, "iteration": iteration, "previous": previous,
            "total": totals(tasks, rollouts), "analyst": report.summary()}
    classes = {
        "exits": q.rows(con, q.EXIT_REASONS, scope),
        "errors": q.rows(con, q.ERROR_CLASSES, scope),
        "verifier": q.rows(con, q.VERIFIER_CLASSES, scope),
    }
    links = {t["task_id"]: f"tasks/{task_paths[t['task_id']].name}" for t in tasks}
    overview = stage.write("overview.md", build_overview(
        head=head, tasks=tasks, links=links, classes=classes, scoreboard=scoreboard,
        patterns=find_patterns(con, scope), model_time=model_time(con, scope)))
    overview_chars = len(overview.read_text())
    assert_no_leak(stage.dir, forbidden, hidden_ids=hidden_tasks)
    stage.publish()

    def final(paths: dict[str, Path]) -> dict[str, Path]:
        return {key: root / path.relative_to(stage.dir) for key, path in paths.items()}

    return EvidenceIndex(root=root, overview=root / "overview.md", tasks=final(task_paths),
                         rollouts=final(rollout_paths), overview_chars=overview_chars,
                         analyst_failed=report.failed)


def write_rollouts(
    con: duckdb.DuckDBPyConnection, scope: q.Scope, stage: Staging,
    rollouts: list[dict[str, Any]], verifier: dict[str, str],
) -> dict[str, Path]:
    events: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in q.rows(con, q.CONDENSED_EVENTS, scope):
        events[event["rollout_id"]].append(event)
    paths = {}
    for r in rollouts:
        rid = r["rollout_id"]
        text = render_rollout(r, events[rid], verifier.get(rid, ""))
        paths[rid] = stage.write(f"rollouts/{safe_name(rid)}.md", text)
    return paths


def render_rollout(r: dict[str, Any], events: list[dict[str, Any]], verifier: str) -> str:
    """The condensed trajectory; if still over MAX_ROLLOUT_CHARS, each event's text is cut to an
    equal share of the budget."""
    shown = mark_cuts(events)
    context = dict(r=r, task_link=f"../tasks/{safe_name(r['task_id'])}.md", verifier=verifier,
                   total=events[0]["total"] if events else 0, shown=len(events))
    text = render("rollout.md.j2", events=shown, **context)
    if len(text) > MAX_ROLLOUT_CHARS:
        share = MAX_ROLLOUT_CHARS // (2 * max(len(shown), 1))
        shown = [dict(e, text=shorten(e["text"], share)) for e in shown]
        text = render("rollout.md.j2", events=shown, **context)
    return text


def mark_cuts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Annotate each kept event with how many events were cut just before it, and tool calls
    with their normalised form."""
    marked, last = [], 0
    for e in events:
        call = to_call(e["seq"], e["name"], e["data"]).label if e["kind"] == "tool_call" else ""
        marked.append(dict(e, cut=e["rn"] - last - 1, call=call))
        last = e["rn"]
    return marked


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    return f"{text[:half]} [... {len(text) - 2 * half} chars cut ...] {text[-half:]}"


def write_tasks(
    con: duckdb.DuckDBPyConnection, scope: q.Scope, stage: Staging, tasks: list[dict[str, Any]],
    rollouts: list[dict[str, Any]], verifier: dict[str, str],
) -> dict[str, Path]:
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rollouts:
        by_task[r["task_id"]].append(
            dict(r, link=f"../rollouts/{safe_name(r['rollout_id'])}.md",
                 verifier=verifier.get(r["rollout_id"], "")))
    errors: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in q.rows(con, q.TASK_ERRORS, scope):
        errors[e["task_id"]].append(e)
    divergences = find_divergences(con, scope, by_task)
    paths = {}
    for t in tasks:
        tid, runs = t["task_id"], by_task[t["task_id"]]
        text = render(
            "task.md.j2", t=t, run_id=scope.run_id, iteration=scope.iteration, rollouts=runs,
            links={r["rollout_id"]: r["link"] for r in runs}, divergence=divergences.get(tid),
            errors=errors[tid][:MAX_TASK_ERRORS],
            errors_cut=max(len(errors[tid]) - MAX_TASK_ERRORS, 0),
        )
        paths[tid] = stage.write(f"tasks/{safe_name(tid)}.md", text)
    return paths


def find_divergences(
    con: duckdb.DuckDBPyConnection, scope: q.Scope, by_task: dict[str, list[dict[str, Any]]]
) -> dict[str, Divergence]:
    """For each task with both outcomes, compare its first passing and first failing rollout."""
    pairs = {}
    for tid, runs in by_task.items():
        passing = [r["rollout_id"] for r in runs if r["outcome"] == "pass"]
        failing = [r["rollout_id"] for r in runs if r["outcome"] != "pass"]
        if passing and failing:
            pairs[tid] = (passing[0], failing[0])
    ids = [rid for pair in pairs.values() for rid in pair]
    calls: dict[str, list] = defaultdict(list)
    for c in q.rows(con, q.TOOL_SEQUENCES, scope, ids=ids) if ids else []:
        calls[c["rollout_id"]].append(to_call(c["seq"], c["name"], c["data"]))
    return {tid: first_divergence(p, calls[p], f, calls[f]) for tid, (p, f) in pairs.items()}


def run_analyst(
    analyst: Analyst | None, tasks: list[dict[str, Any]], paths: dict[str, Path], stage: Staging
) -> AnalystReport:
    """Ask the analyst about each failing task and append its answer to the task file."""
    if analyst is None:
        return AnalystReport(enabled=False)
    failing = {t["task_id"]: paths[t["task_id"]].read_text() for t in tasks if t["passes"] < t["k"]}
    report = analyst.analyse(failing)
    for tid, paragraph in report.paragraphs.items():
        text = paths[tid].read_text() + f"\n## Analyst\n\n{paragraph.strip()}\n"
        stage.write(str(paths[tid].relative_to(stage.dir)), text)
    return report
