"""CLI for inspecting a run: `report` (the self-contained HTML report) and `diff` (one change with
its prediction and verdict). Gathering and drawing live in evolve/report/."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.panel import Panel

    from evoharness.evolve.report.data import ChangeRow

RUN = typer.Argument(..., help="The run directory (holds run.yaml, workspace/, traces.duckdb).")


def report(
    run_dir: Path = RUN,
    out: Path = typer.Option(None, "--out", help="Where to write it (default RUN/report.html)."),
) -> None:
    """Write one HTML file with the run's plots and every change with its diff (viewable offline).

    Example: evoharness report runs/demo --out /tmp/demo.html
    """
    from evoharness.evolve.report.build import write_report

    typer.echo(f"report written to {write_report(run_dir, out)}")


def _change_panel(row: ChangeRow) -> Panel:
    from rich.panel import Panel
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    outcome = ("not judged yet" if row.decision == "pending" else
               f"fixed: {', '.join(row.confirmed) or 'none'}; "
               f"regressed: {', '.join(row.regressions) or 'none'}")
    for name, value in (("component", row.component), ("root cause", row.root_cause),
                        ("targeted fix", row.targeted_fix), ("prediction", row.prediction),
                        ("outcome", outcome), ("verdict", f"{row.verdict} -> {row.decision}"),
                        ("reason", row.reason or "-"),
                        ("reverted by", row.revert_commit or "-")):
        table.add_row(f"[bold]{name}[/]", value)
    title = f"{row.change_id} (iteration {row.iteration}, commit {row.commit[:10]})"
    return Panel(table, title=title, title_align="left")


def diff(
    run_dir: Path = RUN,
    commit: str = typer.Argument(..., help="A harness commit (sha or prefix) or a change id."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """One change: its manifest entry (the prediction), its verdict and its diff.

    Example: evoharness diff runs/demo 3f2a9c1
    """
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.syntax import Syntax

    from evoharness.evolve.ledger import RunPaths
    from evoharness.evolve.report.data import collect, commit_diff, find_change
    from evoharness.workspace.repo import HarnessRepo

    repo = HarnessRepo(RunPaths(root=run_dir).workspace)
    row = find_change(collect(run_dir), repo, commit)
    if row is None:  # a commit without a manifest entry (the seed, a revert): just its diff
        info = repo.commit_info(commit)
        text = commit_diff(repo, info.sha)
        if as_json:
            typer.echo(json.dumps({"commit": info.sha, "change": None, "diff": text}, indent=2))
            return
        header = Panel(f"{info.summary}\n(no manifest entry: not a registered change)",
                       title=info.sha[:10], title_align="left")
    else:
        if as_json:
            typer.echo(row.model_dump_json(indent=2))
            return
        header, text = _change_panel(row), row.diff
    body = Syntax(text, "diff", word_wrap=True) if text else "(empty commit: no file differs)"
    Console().print(Group(header, body))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.command("report")(report)
    app.command("diff")(diff)
