"""CLI for change manifests: `manifest show` (prediction against outcome, task by task), `log`
(harness history with verdicts) and `rollback` (a revert by hand). The records are the run
ledger's, their meaning manifests/'; reads work while an evolve runs, a rollback waits for it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.table import Table

    from evoharness.manifests.record import ChangeRecord

manifest_app = typer.Typer(help="Change manifests: what each change predicted and what happened.",
                           no_args_is_help=True, rich_markup_mode=None)
RUN = typer.Argument(..., help="The run directory (holds workspace/, manifests/, ledger/).")


def _select(records: list[ChangeRecord], selector: str | None) -> list[ChangeRecord]:
    from evoharness.errors import EvoError

    if selector is None:
        return records
    if selector.isdigit():
        chosen = [r for r in records if r.iteration == int(selector)]
    else:
        chosen = [r for r in records if r.id == selector]
    if not chosen:
        raise EvoError("no change or iteration matches", field="ITER|CHANGE", value=selector,
                       hint="see `evoharness log RUN` for change ids")
    return chosen


def _rows(record: ChangeRecord) -> list[tuple[str, ...]]:
    """(task, predicted, role, history, base, change, result) per task the trial judged or the
    change claimed: history = the base tree's passes before the trial, base and change = the
    arms' passes in the trial."""
    if record.judgement is None:
        claims = [("fix", p) for p in record.entry.predicted_fixes]
        claims += [("regression", p) for p in record.entry.predicted_regressions]
        return [(p.task_id, f"{kind} p={p.probability:.2f}", "-", "-", "-", "-", "pending")
                for kind, p in claims]
    return [(t.task_id, f"{t.predicted} p={t.probability:.2f}" if t.predicted else "-", t.role,
             t.history, t.base or "-", t.change or "-",
             t.result + (f" (floor {t.floor:.2f})" if t.floor is not None else ""))
            for t in record.judgement.verdict.tasks]


def _change_table(record: ChangeRecord) -> Table:
    """Without vertical rules, so at 80 columns (a log, a pipe) every task name stays whole."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, 2), pad_edge=False)
    for column in ("task", "predicted", "role", "history", "base", "change"):
        table.add_column(column, no_wrap=True)
    table.add_column("result")  # the one that may wrap: "not_fixed (floor 0.25)"
    for row in _rows(record):
        table.add_row(*row)
    return table


def _trial_line(record: ChangeRecord) -> str:
    """How the change was tried: which trees, the p-value, the rollouts spent; then its test on
    the predicted tasks and its test on the validation tasks."""
    j = record.judgement
    if not j:
        return "  trial: not decided yet"
    return "\n".join([f"  trial: {j.summary()}", *(f"    {line}" for line in j.tests())])


def _as_json(record: ChangeRecord) -> dict[str, Any]:
    return {"iteration": record.iteration, "change": record.entry.model_dump(mode="json"),
            "verdict": record.verdict, "decision": record.decision, "reason": record.reason,
            "judgement": record.judgement and record.judgement.model_dump(mode="json"),
            "revert": record.revert and record.revert.model_dump(mode="json")}


def show(
    run_dir: Path = RUN,
    selector: str = typer.Argument(None, metavar="[ITER|CHANGE]", help="An iteration or a change id."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Each change's prediction against the outcome, task by task, then the run's final exam.

    Example: evoharness manifest show runs/demo 2
    """
    from rich.console import Console

    from evoharness.evolve.run import read_run

    _, ledger = read_run(run_dir)
    chosen = _select(ledger.changes(), selector)
    if as_json:
        typer.echo(json.dumps([_as_json(r) for r in chosen], indent=2))
        return
    console = Console()
    exams = ledger.exams() if selector is None else []
    for r in chosen:
        judged = (f"{r.verdict} -> {r.decision}: {r.reason}" if r.decision != "pending"
                  else "not judged yet")
        console.print(f"[bold]{r.id}[/] (iteration {r.iteration}, {r.entry.component}, "
                      f"{r.entry.commit[:10]}): {judged}", markup=True, highlight=False)
        console.print(f"  fix: {r.entry.targeted_fix}", markup=False)
        console.print(_trial_line(r), markup=False)
        console.print(_change_table(r))
    if exams:  # what the changes that stayed add up to, on tasks the loop never saw
        from evoharness.evolve.cli.exam import show_exam

        show_exam(exams[-1], console)


def log(
    run_dir: Path = RUN,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The harness history, newest first, with each change's verdict and decision.

    Example: evoharness log runs/demo
    """
    from rich.console import Console
    from rich.table import Table

    from evoharness.evolve.run import read_run
    from evoharness.workspace.repo import HarnessRepo

    _, ledger = read_run(run_dir)
    records = {r.id: r for r in ledger.changes()}
    entries = []
    for info in HarnessRepo(ledger.paths.workspace).log():
        change_id = info.trailers.get("Change-Id")
        record = records.get(change_id or "")
        entries.append({"commit": info.sha, "time": info.time.isoformat(), "summary": info.summary,
                        "change_id": change_id, "reverts": info.trailers.get("Reverts-Change-Id"),
                        "verdict": record and record.verdict,
                        "decision": record and record.decision,
                        "revert_commit": record and record.revert and record.revert.revert_commit})
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
    reason: str = typer.Option(..., "--reason", help="Why; stored in the revert commit and record."),
) -> None:
    """Revert a harness commit by hand (and later changes that depend on it) and record it.
    Refused while another evoharness process (a running evolve) is changing the run.

    Example: evoharness rollback runs/demo 3f2a9c1 --reason "breaks the csv tasks"
    """
    from evoharness.evolve.run import open_run
    from evoharness.manifests.revert import rollback

    with open_run(run_dir, command="rollback") as run:  # the run lock first, then git
        changes = [r.entry for r in run.ledger.changes()]
        records = rollback(run.repo, commit, reason, changes)
        run.ledger.record_reverts(run.ledger.position()[0], records)
    for r in records:
        typer.echo(f"reverted {r.commit[:10]} ({r.change_id}) with {r.revert_commit[:10]}: {r.reason}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    manifest_app.command("show")(show)
    app.add_typer(manifest_app, name="manifest")
    app.command("log")(log)
    app.command("rollback")(rollback_command)
