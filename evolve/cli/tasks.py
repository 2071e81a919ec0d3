"""CLI commands for the tasks noun: `evoharness tasks check [PATH]` proves every task (the oracle
passes, doing nothing fails). The work itself is tasks/check.py's."""
from __future__ import annotations

import json
from pathlib import Path

from typing import TYPE_CHECKING

import typer

from .run import ENGINE_HELP, ENVIRONMENT_HELP

if TYPE_CHECKING:
    from rich.console import Console

    from evoharness.errors import EvoError
    from rich.table import Table

    from evoharness.tasks.check import CheckResult

tasks_app = typer.Typer(help="Inspect and prove task suites.", no_args_is_help=True,
                        rich_markup_mode=None)


def _items(path: Path):
    from evoharness.errors import EvoError
    from evoharness.tasks.split import hash_split
    from evoharness.tasks.task import has_split_file, load_suite, load_task, split_of, task_ids_in

    if (path / "task.toml").exists():
        return [(load_task(path), split_of(path))]
    if path.is_dir() and not has_split_file(path):  # split as `init --tasks` would split it
        if not task_ids_in(path):
            raise EvoError("neither a task (no task.toml) nor a suite (no suite.toml, no task "
                           "folders)", file=path,
                           hint="give a task folder, or a folder of them (suite.toml optional)")
        return load_suite(path, hash_split(task_ids_in(path))).items()
    return load_suite(path).items()


def _mark(ok: bool, text: str) -> str:
    return f"[green]{text}[/]" if ok else f"[bold red]{text}[/]"


def _table(results: list[CheckResult], where: dict[str, str], left_out: dict[str, str],
           splits: dict[str, str | None]) -> Table:
    from rich.table import Table

    table = Table("task", "split", "where", "oracle", "nothing", "time")
    for task_id, why in left_out.items():  # the reason goes below the table, on its own line
        table.add_row(task_id, splits[task_id] or "-", where[task_id],
                      _mark(False, why.split(":")[0]), "", "")
    for r in results:
        table.add_row(r.task_id, r.split or "-", where[r.task_id],
                      _mark(r.oracle.passed, f"pass ({r.oracle.reward:g})" if r.oracle.passed
                            else f"FAIL ({r.oracle.reward:g})"),
                      _mark(not r.nothing.passed, "fails" if not r.nothing.passed
                            else f"PASSES ({r.nothing.reward:g})"),
                      f"{r.seconds:.1f}s")
    return table


def _report_left_out(console: Console, left_out: dict[str, str]) -> None:
    """Why each task could not run, one line each: in a table column a reason quoting an engine's
    error was folded into some thirty lines of a few words."""
    for task_id, why in left_out.items():
        console.print(f"{task_id}: {' '.join(why.split())}", style="bold red", markup=False,
                      highlight=False, soft_wrap=True)


def _why_container(console: Console, items, factory, environment: str) -> None:
    """Say why a task from no suite runs in its image: `auto` follows the rule a suite without
    environment = "host" follows, which surprised when one task folder was checked alone."""
    for task, split in items:
        if environment == "auto" and not task.suite_environment and factory.in_container(task):
            console.print(f"{task.id}: no suite.toml says where it runs and its Dockerfile "
                          f"builds something, so `auto` runs it in its image "
                          f"({factory.engine.name}); --environment host checks it on this "
                          "machine", markup=False, highlight=False, soft_wrap=True)


def _nothing_ran(items, left_out: dict[str, str]) -> EvoError:
    """No task could run here: an error (exit 2), one line per task."""
    from evoharness.errors import EvoError, ValidationFailed

    problems = [EvoError(f"cannot run in its image here: {' '.join(left_out[t.id].split())}",
                         file=t.root, field="environment", value="container",
                         hint="pass --environment host to check it on this machine, or make "
                              "its base image available (`evoharness env setup`)")
                for t, _ in items if t.id in left_out]
    return problems[0] if len(problems) == 1 else ValidationFailed("task environments", problems)


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
    environment: str = typer.Option("auto", "--environment", help=ENVIRONMENT_HELP),
    engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Prove each task: solution/solve.sh passes the verifier and an untouched copy fails. A task
    that runs in its image has it built first; one whose base cannot be had here is skipped.

    Example: evoharness tasks check tasks/suite --workers 4 --environment container
    """
    from rich.console import Console
    from rich.progress import Progress

    from evoharness.tasks.check import check_tasks
    from evoharness.tasks.sandbox.environments import environments, settings_for

    items = _items(path)
    settings = settings_for(environment, engine)
    console = Console(stderr=as_json)
    factory = environments(settings, unsafe)
    if not as_json:
        _why_container(console, items, factory, environment)
    prepared = factory.prepare([task for task, _ in items])
    left_out = {s.task_id: f"skipped: {s.reason}" for s in prepared.skipped}
    left_out |= {f.task_id: f"image did not build: {f}" for f in prepared.failed}
    where = {t.id: f"container ({factory.engine.name})" if factory.in_container(t) else "host"
             for t, _ in items}
    runnable = [(t, s) for t, s in items if t.id not in left_out]
    if left_out and not runnable and not as_json:
        raise _nothing_ran(items, left_out)
    with Progress(console=console, transient=True, disable=as_json) as bar:
        job = bar.add_task("checking tasks", total=len(runnable))
        results = check_tasks(runnable, factory, workers=workers,
                              progress=lambda _: bar.advance(job))
    if as_json:
        print(json.dumps([r.model_dump(mode="json") | {"ok": r.ok, "where": where[r.task_id]}
                          for r in results] + [{"task_id": t, "ok": False, "left_out": why}
                                               for t, why in left_out.items()], indent=2))
    else:
        console.print(_table(results, where, left_out, {t.id: s for t, s in items}))
        _report_left_out(console, left_out)
        _report_failures(console, results)
    failed = [r.task_id for r in results if not r.ok] + list(left_out)
    if not as_json:
        console.print(f"{len(results) + len(left_out) - len(failed)}/"
                      f"{len(results) + len(left_out)} tasks proven"
                      + (f" ({len(left_out)} could not run here)" if left_out else ""))
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.add_typer(tasks_app, name="tasks")
