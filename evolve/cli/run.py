"""CLI commands that create and drive a run: init, run (evaluate once), evolve, status.
The loop itself is evolve/loop.py's; this module parses options and shows progress."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from evoharness.text import comma_list, counted

if TYPE_CHECKING:
    from rich.console import Console

    from evoharness.evolve.lineage import LineageRow

DEFAULT_TASKS = Path(__file__).resolve().parents[2] / "tasks" / "suite"
EXECUTOR_HELP = ("Where rollouts run: local (this machine's threads) or ray (a Ray cluster; "
                 "docs/scale-out.md).")
ENVIRONMENT_HELP = ("Where tasks run: host (bubblewrap over this machine), container (each in "
                    "its image, built from its Dockerfile), or auto: a task whose Dockerfile "
                    "builds something runs in its image when podman or docker works here "
                    "(docs/containers.md).")
ENGINE_HELP = "The container engine: podman, docker, or auto (podman, else docker)."
BASELINE_HELP = ("The exam's matched-budget baseline: best-of (the seed, each pick the model's "
                 "choice among N fresh attempts, N = the evolution's rollouts per train task), "
                 "best-of:N, or none (the default).")
PICKS_HELP = "Baseline picks per held-out task (default: the exam's k); each costs N rollouts."
TEMPERATURES_HELP = ("Comma-separated temperatures the baseline's attempts sample at in turn "
                     "(e.g. 0.2,0.8), so each pick chooses among attempts at each; default: the "
                     "seed's own.")
RAY_ADDRESS_HELP = ("With --executor ray: the cluster (HOST:PORT, auto, ray://HOST:PORT); "
                    "default RAY_ADDRESS, else the cluster last started on this machine, else a "
                    "new local Ray instance.")


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("run")(run)
    app.command("evolve")(evolve_cmd)
    app.command("status")(status)


def default_model() -> str:
    """The embedded model unless OLLAMA_HOST points at an Ollama server."""
    return "ollama:qwen2.5-coder:1.5b" if os.environ.get("OLLAMA_HOST") else "embedded"


def init(
    ctx: typer.Context,
    run_dir: Path = typer.Argument(..., help="Directory to create the run in."),
    config_file: Path = typer.Option(None, "--config", help="A run.yaml to start from (an earlier "
                                     "run's, or one written by hand; its relative paths are "
                                     "from its folder): the options given here override it."),
    tasks: Path = typer.Option(DEFAULT_TASKS, "--tasks", help="Task suite (with suite.toml)."),
    subset: str = typer.Option(None, "--subset",
                               help="Comma-separated task ids, or 'demo' for the suite's demo set."),
    model: str = typer.Option(None, "--model", help="Code agent model: embedded, embedded-small, "
                              "ollama:NAME or openai:URL#MODEL (default: embedded, or Ollama "
                              "when OLLAMA_HOST is set)."),
    evolve_model: str = typer.Option(None, "--evolve-model", help="Evolve agent model (default: --model)."),
    k: int = typer.Option(2, "-k", help="Rollouts per task per evaluation."),
    workers: int = typer.Option(2, "--workers", help="Concurrent rollouts."),
    iterations: int = typer.Option(3, "--iterations", help="Evolution iterations (stop rule)."),
    unsafe_no_sandbox: bool = typer.Option(False, "--unsafe-no-sandbox",
                                           help="Run agent commands without bubblewrap (dangerous)."),
    analyst: bool = typer.Option(False, "--analyst", help="Add an LLM root cause (from the evolve "
                                 "model) to each failing task's evidence."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    ray_address: str = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    environment: str = typer.Option("auto", "--environment", help=ENVIRONMENT_HELP),
    engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP),
    heldout: str = typer.Option(None, "--heldout", help="Held-out tasks: a share (0.25, chosen "
                                "by a stable hash of the ids) or comma-separated ids. Default: "
                                "suite.toml's split, else a quarter by hash."),
    validation: float = typer.Option(None, "--validation", help="Validation tasks for a split "
                                     "the run draws itself (no suite.toml, or --heldout): this "
                                     "share of the tasks, the next train ids by hash. Changes are "
                                     "then kept only when they also help there (docs/trial.md)."),
    exam_k: int = typer.Option(4, "--exam-k", help="Rollouts per held-out task per harness in "
                               "the final exam."),
    exam_baseline: str = typer.Option(None, "--exam-baseline", help=BASELINE_HELP),
    exam_picks: int = typer.Option(None, "--exam-picks", help=PICKS_HELP),
    exam_temperatures: str = typer.Option(None, "--exam-temperatures", help=TEMPERATURES_HELP),
    library: Path = typer.Option(None, "--library", help="An improvement library the evolve "
                                 "agent reads and may apply entries from."),
    starter_library: bool = typer.Option(True, "--starter-library/--no-starter-library",
                                         help="Offer the starter library's remedies (shipped "
                                         "with evoharness) that match the failures."),
    max_changes: int = typer.Option(3, "--max-changes", help="Changes the evolve agent may "
                                    "commit per iteration; each gets its own trial."),
    trial_rollouts: int = typer.Option(None, "--trial-rollouts", help="Cap on one change's paired "
                                       "probe rollouts (run.yaml verdicts.max_rollouts, default "
                                       "100): a smaller cap costs less and shows only larger "
                                       "gains."),
) -> None:
    """Create a run: run.yaml, a harness workspace from the seed (git), and the trace store.

    A folder of tasks without suite.toml gets a default split (about a quarter held out by a
    stable hash of the task ids), stated here and kept in run.yaml.

    Example: evoharness init runs/night1 --tasks tasks/suite --subset demo -k 2 --executor ray
    Example: evoharness init runs/tb --tasks ~/terminal-bench-2 --environment container
    Example: evoharness init runs/night2 --config runs/night1/run.yaml --iterations 5
    """
    from rich.console import Console

    from evoharness.evolve.config import load_config, merged, read_config_file, validate_config
    from evoharness.evolve.forecast import describe
    from evoharness.evolve.ledger import RunPaths
    from evoharness.evolve.run import choose_split, init_run
    from evoharness.tasks.task import load_suite

    # Each option as the run.yaml field it sets; with --config, only those given here override.
    options = {
        "tasks": {"tasks": tasks}, "model": {"model": model or default_model()},
        "evolve_model": {"evolve_model": evolve_model}, "k": {"k": k},
        "workers": {"workers": workers}, "iterations": {"stop": {"iterations": iterations}},
        "unsafe_no_sandbox": {"unsafe_no_sandbox": unsafe_no_sandbox},
        "analyst": {"analyst": analyst}, "executor": {"executor": executor},
        "ray_address": {"ray_address": ray_address}, "environment": {"environment": environment},
        "engine": {"engine": engine}, "exam_k": {"exam": {"k": exam_k}},
        "exam_baseline": {"exam": {"baseline": exam_baseline}},
        "exam_picks": {"exam": {"picks": exam_picks}},
        "exam_temperatures": {} if exam_temperatures is None else
        {"exam": {"temperatures": comma_list(exam_temperatures)}},
        "library": {"library": library and library.resolve()},
        "starter_library": {"starter_library": starter_library},
        "max_changes": {"max_changes": max_changes},
        "trial_rollouts": {} if trial_rollouts is None else
        {"verdicts": {"max_rollouts": trial_rollouts}},
    }
    base: dict = {}
    if config_file is not None:
        base = read_config_file(config_file)
        given = {name for name in options if ctx.get_parameter_source(name).name
                 in ("COMMANDLINE", "ENVIRONMENT")}
        if "model" not in base:  # the default model follows OLLAMA_HOST, as without a file
            given.add("model")
        if "tasks" not in base:
            given.add("tasks")
    else:
        given = set(options)
    raw = {"run_id": run_dir.resolve().name}
    for name in given:
        raw = merged(raw, options[name])
    raw = merged(base, raw)
    tasks = Path(raw["tasks"])
    task_ids = raw.get("task_ids")
    if subset == "demo":
        task_ids = load_suite(tasks).demo_tasks
    elif subset:
        task_ids = comma_list(subset)
    raw["task_ids"] = task_ids
    if heldout is not None or not raw.get("split"):  # a file's split stays, unless --heldout
        split, how = choose_split(tasks, task_ids, heldout, validation)
        raw["split"] = split and split.model_dump()
    else:
        how = ""
    # validated like run.yaml, so a bad option is an error naming the field and value
    config = validate_config(raw, config_file or RunPaths(root=run_dir).config)
    console = Console(soft_wrap=True)  # a progress line stays one line in a log or a pipe
    paths = init_run(run_dir, config, say=lambda line: console.print(line, markup=False))
    task_ids = load_config(paths.root)[1].task_ids
    console.print(f"created run {config.run_id!r} in {paths.root} "
                  f"({len(task_ids) if task_ids else 'all'} tasks, model {config.model}, "
                  f"k={config.k})",
                  markup=False)
    if how:
        console.print(f"{how}; kept in run.yaml (split:)", markup=False, highlight=False)
    _say_forecast(console, describe(config))  # what the stop rules will cost here


def run(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    executor: str = typer.Option(None, "--executor", help=EXECUTOR_HELP + " Default: run.yaml's."),
    ray_address: str = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
) -> None:
    """Evaluate the current harness once (EVAL, INGEST, DISTILL) and print the pass rates.

    Example: evoharness run runs/night1 --executor ray
    """
    from rich.console import Console

    from evoharness.evolve.loop import evaluate_once

    console = Console(soft_wrap=True)  # a progress line stays one line in a log or a pipe
    started = time.monotonic()
    evaluate_once(run_dir, console.print, rollout_line(console),
                  overrides=_executor_options(executor, ray_address))
    console.print(f"done in {time.monotonic() - started:.0f}s")
    _status_table(run_dir, console)


def evolve_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    iterations: int = typer.Option(None, "--iterations", help="Evolution iterations (overrides run.yaml)."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted iteration."),
    executor: str = typer.Option(None, "--executor", help=EXECUTOR_HELP + " Default: run.yaml's."),
    ray_address: str = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
) -> None:
    """Run the evolution loop until a stop rule holds, then the final exam (run.yaml exam:);
    resumable after any crash, the exam too.

    Example: evoharness evolve runs/night1 --iterations 2 --executor ray --ray-address auto
    """
    from rich.console import Console

    from evoharness.evolve.loop import evolve

    console = Console(soft_wrap=True)  # a progress line stays one line in a log or a pipe
    started = time.monotonic()
    result = evolve(run_dir, iterations=iterations, resume=resume, say=console.print,
                    on_rollout=rollout_line(console),
                    overrides=_executor_options(executor, ray_address), examine=True)
    console.print(f"[bold]finished[/] after iteration {result.last_iteration} "
                  f"({result.stop_reason}) in {time.monotonic() - started:.0f}s")
    _status_table(run_dir, console)


def status(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show iterations, pass rates (train and held-out), phase, tokens and kept/reverted counts,
    and the latest final exam.

    Works while `evoharness evolve` runs (and says so).

    Example: evoharness status runs/night1 --json
    """
    from rich.console import Console

    from evoharness.evolve.status import status as status_rows

    if as_json:
        print(json.dumps(status_rows(run_dir), indent=2))
        return
    _status_table(run_dir, Console(soft_wrap=True))


def _executor_options(executor: str | None, ray_address: str | None) -> dict:
    """run.yaml settings that this command's options override (for this process only)."""
    return {key: value for key, value in [("executor", executor), ("ray_address", ray_address)]
            if value is not None}


def _status_table(run_dir: Path, console: Console) -> None:
    from rich import box
    from rich.table import Table

    from evoharness.evolve.status import status as status_rows

    data = status_rows(run_dir)
    _answer(data, console)
    at = f"iteration {data['current_iteration']} {data['next_phase']}"
    if data["live"]:
        at = "the final exam" if data["stopped"] else at
        where = f"{data['running']} is running it, now at {at}"
    else:
        where = data["stopped"] or f"next: {at}"
    console.print(where, markup=False, highlight=False)
    # Short headers and no vertical rules, so the table fits 80 columns (a pipe, a log) whole.
    table = Table(title=f"run {data['run_id']} (model {data['model']}, k={data['k']})",
                  caption="train, held-out: pass@1; infra: infra errors; trials: changes' "
                          "trial rollouts",
                  box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, 1),
                  pad_edge=False)
    for column in ("iter", "train", "held-out", "rollouts", "infra", "trials", "tokens",
                   "changes", "kept", "reverted"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in data["iterations"]:
        table.add_row(str(row["iteration"]), _pct(row["pass_rate_train"]),
                      _pct(row["pass_rate_heldout"]), str(row["rollouts"]),
                      str(row["infra_errors"]), str(row["trial_rollouts"]),
                      compact_count(row["tokens"]),
                      str(row["changes"]), str(row["kept"]), str(row["reverted"]))
    console.print(table)
    _say_forecast(console, data["forecast"])


def _say_forecast(console: Console, lines: list[str]) -> None:
    """The forecast's lines, each wrapped to 80 columns (a log, a pipe)."""
    import textwrap

    for line in lines:
        console.print(textwrap.fill(line, 80, subsequent_indent="    "), markup=False,
                      highlight=False)


def _answer(data: dict, console: Console) -> None:
    """The morning view: the latest exam's answer, then every change on the way there."""
    from evoharness.evolve.lineage import LineageRow

    exam = data["exam"]
    if exam is None:
        console.print("no final exam yet (it runs when a stop rule holds, or: evoharness "
                      "exam RUN)", markup=False, highlight=False)
    else:
        console.print(f"the answer (exam {exam['exam_id']}, {exam['tasks']} held-out tasks, "
                      f"k={exam['k']}):", markup=False, highlight=False)
        for line in [*exam["answer"], exam["lines"][0]]:  # the noise floor is the first line
            console.print(f"  {line}", markup=False, highlight=False)
    rows = data["lineage"]
    if not rows:
        console.print("the path: no change was made", markup=False, highlight=False)
        return
    kept = sum(r["decision"] == "keep" for r in rows)
    console.print(f"the path: {counted(len(rows), 'change')}, {kept} kept",
                  markup=False, highlight=False)
    for line in path_lines([LineageRow.model_validate(r) for r in rows], console.width):
        console.print(line, markup=False, highlight=False)


def path_lines(rows: list[LineageRow], width: int = 80) -> list[str]:
    """One line per change (iteration, change, component, trial, decision, by), each followed
    by what it predicted (and any task its trial saw fall), wrapped between task names: in a
    table column of its own a long task name was folded in two at 80 columns."""
    import textwrap

    header = ("iter", "change", "component", "trial", "decision", "by")
    cells = [(str(r.iteration), r.change_id, r.component, r.effect(short=True), r.decision,
              r.decided_by(short=True)) for r in rows]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]

    def line(c: tuple[str, ...]) -> str:
        return "  ".join([c[0].rjust(widths[0])] + [text.ljust(w) for text, w
                                                    in zip(c[1:], widths[1:])]).rstrip()

    indent = " " * (widths[0] + 2)
    shown = [line(header), "─" * min(width, len(line(header)))]
    for row, c in zip(rows, cells):
        shown.append(line(c))
        detail = f"predicted {row.prediction(short=True)}" + (
            f"; regressed {', '.join(row.regressed)}" if row.regressed else "")
        shown += textwrap.wrap(detail, width, initial_indent=indent,
                               subsequent_indent=indent + "  ", break_long_words=False,
                               break_on_hyphens=False)
    return shown


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def compact_count(tokens: int) -> str:
    """2,212 / 48.3k / 12.4M: at most 6 characters (`status --json` has the exact count)."""
    if tokens < 10_000:
        return f"{tokens:,}"
    thousands = f"{tokens / 1e3:.1f}"
    return f"{thousands}k" if len(thousands) <= 5 else f"{tokens / 1e6:.1f}M"  # not 1000.0k


def rollout_line(console: Console):
    def show(result) -> None:  # a tasks.results.RolloutResult
        style = {"pass": "green", "fail": "red"}.get(result.outcome.value, "yellow")
        console.print(f"  {result.rollout_id:<48} [{style}]{result.outcome.value:<11}[/] "
                      f"{result.steps:>3} steps {result.duration_s:6.1f}s  {result.exit_reason}")
    return show
