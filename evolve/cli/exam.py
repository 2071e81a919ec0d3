"""CLI for after the run: `exam` (the run's final exam), `eval` (harnesses x models x suites in an
evaluation directory) and `compare` (their paired differences with intervals). The work is
evolve/evaluate/exam.py's, evolve/evaluate/evaluation.py's and evolve/evaluate/transfer.py's; this module parses and prints."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from evoharness.text import comma_list

from .run import (
    BASELINE_HELP, ENGINE_HELP, ENVIRONMENT_HELP, EXECUTOR_HELP, PICKS_HELP, RAY_ADDRESS_HELP,
    TEMPERATURES_HELP, default_model, rollout_line,
)

if TYPE_CHECKING:
    from rich.console import Console

    from evoharness.evolve.ledger.records import ExamRecord
    from evoharness.evolve.evaluate.transfer import TransferRow

RUN = typer.Argument(..., help="The run directory.")


def exam_cmd(
    run_dir: Path = RUN,
    exam_baseline: str = typer.Option(None, "--exam-baseline", help=BASELINE_HELP + " Default: "
                                      "run.yaml's exam.baseline; for this exam only."),
    exam_picks: int = typer.Option(None, "--exam-picks", help=PICKS_HELP),
    exam_temperatures: str = typer.Option(None, "--exam-temperatures", help=TEMPERATURES_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The final exam: the seed (twice, for the noise floor), the final harness and the best
    iteration's on the held-out tasks, k rollouts each (run.yaml exam:), and the matched-budget
    baseline if asked for, paired by task, with confidence intervals. `evolve` runs it when the
    run stops; this runs it (or finishes a killed one) now, and shows a finished one again
    without running anything. Another baseline is another exam.

    Example: evoharness exam runs/demo --exam-baseline best-of:8
    """
    from rich.console import Console

    from evoharness.evolve.config import validate_config
    from evoharness.evolve.evaluate.exam import examine, require_exam
    from evoharness.evolve.run import open_run

    console = Console(stderr=as_json, soft_wrap=True)
    with open_run(run_dir, command="exam", say=console.print) as run:
        temperatures = comma_list(exam_temperatures) if exam_temperatures is not None else None
        chosen = {key: value for key, value in [("baseline", exam_baseline), ("picks", exam_picks),
                                                 ("temperatures", temperatures)]
                  if value is not None}
        if chosen:  # validated as run.yaml is, so a bad value names the field
            exam = run.config.exam.model_dump() | chosen
            run.config = validate_config(run.config.model_dump() | {"exam": exam},
                                         run.paths.config)
        record = require_exam(examine(run, console.print, rollout_line(console)), run)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
        return
    show_exam(record, console)


def show_exam(record: ExamRecord, console: Console) -> None:
    """The exam's per-task table and its comparisons in words (exam, status, manifest show)."""
    from rich.table import Table

    from evoharness.evolve.evaluate.compare import METHOD

    names = [a.name for a in record.arms]
    table = Table(*["held-out task", *[a.label for a in record.arms]],
                  title=f"final exam {record.exam_id} (model {record.model}, k={record.k})")
    for task, counts in record.per_task().items():
        table.add_row(task, *[str(counts[n]) if n in counts else "-" for n in names])
    infra = {record.noise_floor.a: record.noise_floor.a_infra,
             record.noise_floor.b: record.noise_floor.b_infra,
             **{c.b: c.b_infra for c in record.comparisons}}
    table.add_row("infra errors", *[str(infra[n]) if n in infra else "-" for n in names])
    console.print(table)
    console.print(f"{METHOD}; {record.confidence:.0%} family-wise over the "
                  f"{len(record.comparisons)} comparisons (Bonferroni), the seed's two runs "
                  "pooled", markup=False, highlight=False)
    for line in record.lines():
        console.print(f"  {line}", markup=False, highlight=False)


def eval_cmd(
    eval_dir: Path = typer.Argument(..., help="The evaluation directory (created, or resumed)."),
    harness: list[str] = typer.Option(None, "--harness", help="[NAME=]RUN, RUN@REV (a commit or "
                                      "tag: seed, iter-002) or a harness directory; repeat it."),
    model: list[str] = typer.Option(None, "--model", help="A model spec; repeat it (default: "
                                    "embedded, or Ollama when OLLAMA_HOST is set)."),
    tasks: list[Path] = typer.Option(None, "--tasks", help="A task suite or folder of tasks; "
                                     "repeat it (default: the built-in suite)."),
    split: str = typer.Option("all", "--split", help="Which tasks of each suite: all, heldout "
                              "or train (a folder without suite.toml is split by hash)."),
    task_ids: str = typer.Option(None, "--task-ids", help="Only these tasks of the split: ids, "
                                 "comma-separated."),
    k: int = typer.Option(4, "-k", help="Rollouts per task per harness and model."),
    workers: int = typer.Option(2, "--workers", help="Concurrent rollouts."),
    rollout_timeout: float = typer.Option(300.0, "--rollout-timeout", help="Seconds per rollout."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    ray_address: str = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    unsafe_no_sandbox: bool = typer.Option(False, "--unsafe-no-sandbox",
                                           help="Run agent commands without bubblewrap."),
    environment: str = typer.Option("auto", "--environment", help=ENVIRONMENT_HELP),
    engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP),
) -> None:
    """Evaluate harnesses x models x suites, k rollouts per task, into an evaluation directory
    (the run's store format). Run it again to finish a killed one: stored rollouts are not run
    again. Then `evoharness compare DIR`. Put it under RUN/evals/ and the run's report shows it.

    Example: evoharness eval runs/demo/evals/small --harness runs/demo@seed --harness runs/demo --model embedded-small --split heldout -k 4
    """
    from rich.console import Console

    from evoharness.evolve.cli.run import DEFAULT_TASKS
    from evoharness.evolve.evaluate.evaluation import EvalDir, run_plan
    from evoharness.evolve.ledger.lock import RunLock
    from evoharness.evolve.evaluate.transfer import only_tasks, plan_eval, resolve_harness, suite_tasks
    from evoharness.tasks.sandbox.environments import settings_for
    from evoharness.tasks.executor import make_executor

    console = Console(soft_wrap=True)
    folder = EvalDir(eval_dir)
    lock = RunLock(folder.lock)
    lock.acquire("eval")
    try:
        if harness:
            suites = [suite_tasks(t, split) for t in tasks or [DEFAULT_TASKS]]
            if task_ids:
                suites = only_tasks(suites, comma_list(task_ids))
            for suite in suites:
                if suite.split is not None:
                    console.print(f"{suite.root.name}: no suite.toml, split by a stable hash of "
                                  "the task ids (a quarter held out)", markup=False)
            plan = folder.start(plan_eval(
                eval_dir.resolve().name, [resolve_harness(h, folder) for h in harness],
                model or [default_model()], suites, k))
        else:
            plan = folder.plan()  # resume the stored plan
        settings = settings_for(environment, engine, build_logs=folder.root / "builds")
        runner = make_executor(executor, workers=workers, rollout_timeout=rollout_timeout,
                               unsafe_no_sandbox=unsafe_no_sandbox, ray_address=ray_address,
                               environment=settings)
        ran = run_plan(folder, plan, runner, rollout_line(console))
    finally:
        lock.release()
    console.print(f"{ran} rollouts run; {len(plan.arms)} harness x model x suite arms stored in "
                  f"{folder.root}", markup=False)
    show_transfer(_compare([eval_dir], None, None, 0.95), console)


def compare_cmd(
    eval_dirs: list[Path] = typer.Argument(..., help="Evaluation directories (eval's, or a run's "
                                           "exams/EXAM); several are pooled by harness name."),
    a: str = typer.Option(None, "--a", help="The reference harness (default: the first)."),
    b: str = typer.Option(None, "--b", help="Only this harness against the reference."),
    confidence: float = typer.Option(0.95, "--confidence", help="Family-wise over the "
                                     "comparisons shown (Bonferroni)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Paired differences with intervals: harness B against A on each model and suite, paired by
    task, all intervals holding together at --confidence. Given several evaluations of the same
    harnesses (one name, one commit tree), each task's rollouts in all of them count. Rollouts a
    stopped evaluation never stored are stored first.

    Example: evoharness compare runs/demo/evals/small --a seed --json
    """
    from rich.console import Console

    rows = _compare(eval_dirs, a, b, confidence)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
        return
    show_transfer(rows, Console())


def _compare(eval_dirs: list[Path], a: str | None, b: str | None,
             confidence: float) -> list[TransferRow]:
    from evoharness.evolve.evaluate.evaluation import EvalDir, store_finished
    from evoharness.evolve.evaluate.transfer import compare_eval

    folders = [EvalDir(d) for d in eval_dirs]
    for folder in folders:
        stored = store_finished(folder, folder.plan())
        if stored is None:
            typer.echo(f"{folder.root}: an evaluation is running there; its rollouts not stored "
                       "yet are left out", err=True)
        elif stored:
            typer.echo(f"{folder.root}: stored {stored} rollouts a stopped evaluation left",
                       err=True)
    return compare_eval(folders, a=a, b=b, confidence=confidence)


def show_transfer(rows: list[TransferRow], console: Console) -> None:
    from rich.table import Table

    from evoharness.evolve.evaluate.compare import METHOD

    table = Table("model", "suite", "A", "B", "tasks", "B - A (points)", "interval",
                  "infra errors A, B", "verdict")
    for row in rows:
        c = row.comparison
        table.add_row(row.model, row.suite, c.a, c.b, str(c.n),
                      "n/a" if c.mean is None else f"{100 * c.mean:+.1f}",
                      "n/a" if c.lo is None else f"[{100 * c.lo:+.1f}, {100 * c.hi:+.1f}] "
                      f"({100 * c.confidence:.4g}%)", f"{c.a_infra}, {c.b_infra}",
                      c.verdict + (" (more infra errors)" if c.infra_rose else ""))
    console.print(table)
    console.print(f"{METHOD}; a B with a higher infra-error rate than A is worse",
                  markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main app."""
    app.command("exam")(exam_cmd)
    app.command("eval")(eval_cmd)
    app.command("compare")(compare_cmd)
