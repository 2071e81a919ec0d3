"""CLI commands for the tasks noun: `evoharness tasks check [PATH]` proves every task (the oracle
passes, doing nothing fails). The work itself is tasks/check.py's."""
from __future__ import annotations

import json
from pathlib import Path

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from tasks.check import CheckResult

tasks_app = typer.Typer(help="Inspect and prove task suites.", no_args_is_help=True,
                        rich_markup_mode=None)


def _items(path: Path):
    from tasks.task import load_suite, load_task

    if (path / "task.toml").exists():
        return [(load_task(path), "train")]
    return load_suite(path).items()


def _mark(ok: bool, text: str) -> str:
    return f"[green]{text}[/]" if ok else f"[bold red]{text}[/]"


def _table(results: list[CheckResult]) -> Table:
    from rich.table import Table

    table = Table("task", "split", "oracle", "nothing", "time")
    for r in results:
        table.add_row(r.task_id, r.split,
                      _mark(r.oracle.passed, f"pass ({r.oracle.reward:g})" if r.oracle.passed
                            else f"FAIL ({r.oracle.reward:g})"),
                      _mark(not r.nothing.passed, "fails" if not r.nothing.passed
                            else f"PASSES ({r.nothing.reward:g})"),
                      f"{r.seconds:.1f}s")
    return table


def _report_failures(console: Console, results: list[CheckResult]) -> None:
    for r in results:
        if not r.oracle.passed:
            console.print(f"{r.task_id}: the oracle did not pass:", style="bold red")
            console.print(r.oracle.output_tail, markup=False, highlight=False)
        if r.nothing.passed:
            console.print(f"{r.task_id}: the untouched task already passes its tests",
                          style="bold red")


@tasks_app.command("check")
def check(
    path: Path = typer.Argument(Path("tasks/suite"), help="A suite directory or one task."),
    workers: int = typer.Option(2, "--workers", min=1, help="Tasks checked at the same time."),
    unsafe: bool = typer.Option(False, "--unsafe-no-sandbox",
                                help="Run without bubblewrap, directly on this machine."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Prove each task: solution/solve.sh passes the verifier and an untouched copy fails.

    Example: evoharness tasks check tasks/suite --workers 4
    """
    from rich.console import Console
    from rich.progress import Progress

    from tasks.check import check_tasks
    from tasks.unsafe import require_sandbox

    items = _items(path)
    factory = require_sandbox(unsafe)
    console = Console()
    with Progress(console=console, transient=True, disable=as_json) as bar:
        job = bar.add_task("checking tasks", total=len(items))
        results = check_tasks(items, factory, workers=workers,
                              progress=lambda _: bar.advance(job))
    if as_json:
        print(json.dumps([r.model_dump(mode="json") | {"ok": r.ok} for r in results], indent=2))
    else:
        console.print(_table(results))
        _report_failures(console, results)
    failed = [r.task_id for r in results if not r.ok]
    if not as_json:
        console.print(f"{len(results) - len(failed)}/{len(results)} tasks proven")
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.add_typer(tasks_app, name="tasks")
