"""CLI for the improvement library: `library add RUN` (file a run's kept changes and the outcomes
of the entries it applied), `library list DIR`, `library show DIR ENTRY` and `library series DIR ENTRY` (pre-register a
series of trials of it). The library itself is evolve/library/'s."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from evoharness.text import counted

library_app = typer.Typer(help="The improvement library: changes runs kept, and where they held.",
                          no_args_is_help=True, rich_markup_mode=None)
LIBRARY = typer.Argument(..., help="The library directory (a git repository of plain files).")


def add(
    run_dir: Path = typer.Argument(..., help="The run whose changes to file."),
    library: Path = typer.Option(None, "--library", help="The library directory (created if "
                                 "missing; default: the run's, from init --library)."),
) -> None:
    """File a run's kept changes as entries (cue, edit, manifest, judgement numbers, model, suite,
    run), and the outcome (kept or reverted) of every entry the run applied: a starter entry's
    record is kept in this library too (its copy here is what later runs reading it are offered).
    Filing a run again adds nothing twice; each filing is one git commit in the library.

    Example: evoharness library add runs/night1 --library ~/harness-library
    """
    from evoharness.errors import EvoError
    from evoharness.evolve.config import load_config
    from evoharness.evolve.library.filing import file_run
    from evoharness.evolve.library.store import Library

    _, config = load_config(run_dir)
    root = library or config.library
    if root is None:
        raise EvoError("no library given", field="--library",
                       hint="name one with --library DIR (or create the run with init --library); "
                            "it keeps where the starter entries the run applied held, too")
    report = file_run(Library(root), run_dir)
    saved = f" (commit {report.commit[:10]})" if report.commit else " (nothing new)"
    typer.echo(f"{root}: {counted(len(report.added), 'entry', 'entries')} added, "
               f"{counted(len(report.outcomes), 'outcome')} of applied entries recorded{saved}")
    for line in [*(f"  added {e}" for e in report.added), *(f"  {o}" for o in report.outcomes)]:
        typer.echo(line)
    if report.pending:
        typer.echo(f"  not judged yet, not filed: {', '.join(report.pending)}")


def list_cmd(
    library: Path = LIBRARY,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Every entry with its cue and where it was kept or reverted.

    Example: evoharness library list ~/harness-library
    """
    from evoharness.evolve.library.store import Library

    entries = Library(library).require().entries()
    if as_json:
        typer.echo(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return
    for entry in entries:
        typer.echo(f"{entry.id}\n  cue: {entry.cue.root_cause}\n  fix: {entry.targeted_fix}\n"
                   f"  {entry.record()}")
    if not entries:
        typer.echo("(no entries)")


def show(
    library: Path = LIBRARY,
    entry: str = typer.Argument(..., help="An entry id (see `library list`)."),
) -> None:
    """One entry in full: cue, record, every trial's numbers, its edits and its diff.

    Example: evoharness library show ~/harness-library agent-calls-done-without-running-3f2a9c
    """
    from evoharness.evolve.library.store import Library

    shelf = Library(library).require()
    typer.echo(shelf.entry(entry).text(shelf.diff(entry)))


def series(
    library: Path = LIBRARY,
    entry: str = typer.Argument(..., help="An entry id, the library's or a starter's."),
    size: int = typer.Option(..., "--size", help="Trials in the family."),
    alpha: float = typer.Option(0.05, "--alpha", help="The family-wise error rate."),
    spending: str = typer.Option("equal", "--spending", help="equal: alpha / size each; "
                                 "halving: alpha / 2, / 4, ... in order."),
) -> None:
    """Pre-register a series of trials of one entry: its family size and error rate, and so each
    trial's level, fixed before the first. A run's trial of a change applying the entry is judged
    at the series' next level; `library show` marks each trial's place in it.

    Example: evoharness library series ~/harness-library sure-failure-rescue --size 4
    """
    from evoharness.errors import EvoError
    from evoharness.evolve.library.filing import register_series
    from evoharness.evolve.library.store import Library

    if spending not in ("equal", "halving"):
        raise EvoError("must be equal or halving", field="--spending", value=spending)
    plan = register_series(Library(library), entry, size, alpha, spending)  # type: ignore[arg-type]
    typer.echo(f"{entry}: {plan.line()}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    library_app.command("add")(add)
    library_app.command("list")(list_cmd)
    library_app.command("show")(show)
    library_app.command("series")(series)
    app.add_typer(library_app, name="library")
