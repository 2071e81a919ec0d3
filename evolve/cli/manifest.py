"""CLI for change manifests: `manifest show` (prediction against outcome, task by task), `log`
(harness history with verdicts) and `rollback` (a revert by hand). The logic lives in manifests/."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from evoharness.errors import EvoError
from manifests.revert import record_reverts, rollback
from manifests.schema import ChangeManifestEntry, IterationManifest
from manifests.store import load_run_manifests
from traces.store import TraceStore
from workspace.repo import HarnessRepo

manifest_app = typer.Typer(help="Change manifests: what each change predicted and what happened.",
                           no_args_is_help=True)
RUN = typer.Argument(..., help="The run directory (holds workspace/, traces.duckdb, manifests/).")


def _verdicts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """change id -> verdict row (with its JSON detail parsed); empty before any attribution."""
    db = run_dir / "traces.duckdb"
    if not db.exists():
        return {}
    with TraceStore(db, read_only=True) as store:
        rows = store.con.execute(
            "SELECT change_id, iteration, verdict, decision, revert_commit, detail FROM verdicts"
        ).fetchall()
    names = ("iteration", "verdict", "decision", "revert_commit", "detail")
    return {row[0]: dict(zip(names, (*row[1:5], json.loads(row[5])))) for row in rows}


def _select(manifests: list[IterationManifest], selector: str | None):
    pairs = [(m.iteration, c) for m in manifests for c in m.changes]
    if selector is None:
        return pairs
    if selector.isdigit():
        chosen = [(i, c) for i, c in pairs if i == int(selector)]
    else:
        chosen = [(i, c) for i, c in pairs if c.id == selector]
    if not chosen:
        raise EvoError("no change or iteration matches", field="ITER|CHANGE", value=selector,
                       hint="see `evoharness log RUN` for change ids")
    return chosen


def _prediction_cell(row: dict[str, Any]) -> str:
    if row["predicted"] is None:
        return "-"
    return f"{row['predicted']} p={row['probability']:.2f}"


def _pending_rows(change: ChangeManifestEntry) -> list[dict[str, Any]]:
    claims = [("fix", p) for p in change.predicted_fixes]
    claims += [("regression", p) for p in change.predicted_regressions]
    return [{"task_id": p.task_id, "predicted": kind, "probability": p.probability,
             "before": None, "after": None, "cls": "pending", "borderline": False}
            for kind, p in claims]


def _change_table(change: ChangeManifestEntry, verdict: dict[str, Any] | None) -> Table:
    rows = verdict["detail"]["per_task"] if verdict else _pending_rows(change)
    table = Table("task", "predicted", "before", "after", "class")
    for row in rows:
        cls = row["cls"] + (" (borderline)" if row["borderline"] else "")
        table.add_row(row["task_id"], _prediction_cell(row), row["before"] or "-",
                      row["after"] or "-", cls)
    return table


def show(
    run_dir: Path = RUN,
    selector: str = typer.Argument(None, metavar="[ITER|CHANGE]", help="An iteration or a change id."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Each change's prediction against the outcome, task by task.

    Example: evoharness manifest show runs/demo 2
    """
    chosen = _select(load_run_manifests(run_dir), selector)
    verdicts = _verdicts(run_dir)
    if as_json:
        out = [{"iteration": i, "change": c.model_dump(mode="json"), "verdict": verdicts.get(c.id)}
               for i, c in chosen]
        typer.echo(json.dumps(out, indent=2))
        return
    console = Console()
    for iteration, change in chosen:
        verdict = verdicts.get(change.id)
        judged = (f"{verdict['verdict']} -> {verdict['decision']}: {verdict['detail'].get('reason', '')}"
                  if verdict else "not judged yet")
        console.print(f"[bold]{change.id}[/] (iteration {iteration}, {change.component}, "
                      f"{change.commit[:10]}): {judged}", markup=True, highlight=False)
        console.print(f"  fix: {change.targeted_fix}", markup=False)
        console.print(_change_table(change, verdict))


def log(
    run_dir: Path = RUN,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The harness history, newest first, with each change's verdict and decision.

    Example: evoharness log runs/demo
    """
    verdicts = _verdicts(run_dir)
    entries = []
    for info in HarnessRepo(run_dir / "workspace").log():
        change_id = info.trailers.get("Change-Id")
        verdict = verdicts.get(change_id or "", {})
        entries.append({"commit": info.sha, "time": info.time.isoformat(), "summary": info.summary,
                        "change_id": change_id, "reverts": info.trailers.get("Reverts-Change-Id"),
                        "verdict": verdict.get("verdict"), "decision": verdict.get("decision"),
                        "revert_commit": verdict.get("revert_commit")})
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    table = Table("commit", "summary", "change", "verdict", "decision")
    for e in entries:
        change = e["change_id"] or (f"reverts {e['reverts']}" if e["reverts"] else "-")
        table.add_row(e["commit"][:10], e["summary"], change, e["verdict"] or "-",
                      e["decision"] or "-")
    Console().print(table)


def rollback_command(
    run_dir: Path = RUN,
    commit: str = typer.Argument(..., help="The harness commit to revert."),
    reason: str = typer.Option(..., "--reason", help="Why; stored in the revert commit and verdict."),
) -> None:
    """Revert a harness commit by hand (and later changes that depend on it) and record it.

    Example: evoharness rollback runs/demo 3f2a9c1 --reason "breaks the csv tasks"
    """
    manifests = load_run_manifests(run_dir)
    changes = [c for m in manifests for c in m.changes]
    records = rollback(HarnessRepo(run_dir / "workspace"), commit, reason, changes)
    with TraceStore(run_dir / "traces.duckdb") as store:
        run_id = manifests[-1].run_id if manifests else run_dir.name
        iteration = manifests[-1].iteration if manifests else 0
        record_reverts(store.con, run_id, iteration, records, manual=True)
    for r in records:
        typer.echo(f"reverted {r.commit[:10]} ({r.change_id}) with {r.revert_commit[:10]}: {r.reason}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    manifest_app.command("show")(show)
    app.add_typer(manifest_app, name="manifest")
    app.command("log")(log)
    app.command("rollback")(rollback_command)
