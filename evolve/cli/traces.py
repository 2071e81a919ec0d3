"""CLI commands for the traces noun: `traces sql` runs one read-only query on a run's trace store,
`traces export` writes its tables as Parquet, `traces rebuild` makes the store again from the run's
files. The store and the SQL tool live in traces/, the run's records in evolve/ledger."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.table import Table

    from evoharness.traces.sql_tool import SqlResult

traces_app = typer.Typer(help="Query and export a run's trace database (RUN/traces.duckdb).",
                         no_args_is_help=True, rich_markup_mode=None)


@traces_app.command()
def sql(
    run: Path = typer.Argument(..., help="The run directory."),
    query: str = typer.Argument(..., help="One SELECT (or WITH, DESCRIBE, SHOW) statement."),
    as_json: bool = typer.Option(False, "--json", help="Print {columns, rows, cut} as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV with a header row."),
    max_rows: int = typer.Option(1000, "--max-rows", min=1, help="Rows shown at most."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds before stopping."),
) -> None:
    """Run one read-only SQL query on the run's traces.

    Example: evoharness traces sql runs/night1 "SELECT task_id, count(*) FROM rollouts GROUP BY 1"
    """
    from rich.console import Console

    from evoharness.evolve.ledger import RunPaths
    from evoharness.traces.sql_tool import run_readonly_sql

    if as_json and as_csv:
        raise typer.BadParameter("choose one of --json and --csv")
    result = run_readonly_sql(RunPaths(root=run).db, query, max_rows=max_rows, timeout_s=timeout)
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), default=str))
        return
    if as_csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(result.columns)
        writer.writerows(result.rows)
    else:
        Console().print(_rich_table(result))
    if result.cut:
        Console(stderr=True).print(f"{result.cut} more row(s) not shown (--max-rows {max_rows})")


def _rich_table(result: SqlResult) -> Table:
    from rich.table import Table

    table = Table(*result.columns, caption=f"{len(result.rows)} row(s)")
    for row in result.rows:
        table.add_row(*("NULL" if value is None else str(value) for value in row))
    return table


@traces_app.command()
def export(
    run: Path = typer.Argument(..., help="The run directory."),
    out: Path = typer.Argument(..., help="Directory for the Parquet files (created if needed)."),
) -> None:
    """Write every table of the run's traces as one Parquet file each.

    Example: evoharness traces export runs/night1 exports/night1
    """
    from evoharness.evolve.ledger import RunPaths
    from evoharness.traces.store import TraceStore

    with TraceStore(RunPaths(root=run).db, read_only=True) as store:
        for path in store.export_parquet(out):
            print(path)


@traces_app.command()
def rebuild(run: Path = typer.Argument(..., help="The run directory.")) -> None:
    """Make the run's trace store again from its files (rollout files, phase records, manifests,
    judgements, reverts); the old store is kept aside. Refused while an evolve runs.

    Example: evoharness traces rebuild runs/night1
    """
    from evoharness.evolve.run import open_run

    with open_run(run, command="traces rebuild", say=print) as opened:
        aside = opened.ledger.rebuild()
    print(f"rebuilt {opened.paths.db}" + (f"; the old store is kept as {aside}" if aside else ""))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.add_typer(traces_app, name="traces")
