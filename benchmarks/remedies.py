"""Each starter-library entry tried on a real code model against the seed harness, through the
project's own trial. A seed baseline (the loop's EVAL, k rollouts of every train task) measures the
failure patterns; each entry is applied alone on the seed, by its id as the evolve agent applies
one, predicting a fix of the train tasks whose failing rollouts showed its patterns (at most
--cued of them, where most rollouts showed them first); then every entry's paired sequential trial
(evolve/trials.py, manifests/trial.py: base and entry arms of the same tasks in the same batches,
alpha 0.05, then the regression screen) runs in the same rounds, so load and model drift hit both
arms alike. Once every trial has decided, each entry's probe runs on to its cap (the same pairs,
the next attempts), so its effect is measured on a sample whose size was fixed before any rollout;
the decisions stand, since a trial reads no rollout past its deciding look. A run directory (--dir)
keeps everything and resumes where a killed run stopped; `evoharness manifest show DIR` shows each
trial task by task.

Prints per entry `effect_ENTRY: +x [lo, hi] points (95% over N pairs, ...)`: the gain on its cued
tasks over the probe's pairs at its cap with Newcombe's pair interval at 1 - alpha
(evolve/evaluate/compare.py `pair_interval`). Read where the trial stopped, the estimate of a gain that
stopped it early is biased upwards and an interval must hold at every look to be valid there;
`effect_at_decision_ENTRY` prints that one (1 - alpha / L for the L looks the trial could have
stopped at, evolve/library/filing.py `effect_interval`: what the loop files in the library), and
with --stop-at-decision it is `effect_ENTRY` and the probe is not run on. Then
`decision_ENTRY: keep|revert (...)` with the trial's exact p, `reason_ENTRY` (the trial's own
words: which bound stopped it) and `rollouts_ENTRY` (what the decision used); then the baseline's
figures and `wall_time`. The sampling seeds are keyed by --run-id: a new id draws fresh rollouts.

A series of such runs makes one claim only when its family was fixed first (manifests/series.py):
`--series FILE --register N [--family-alpha 0.05] [--spending equal|halving]` writes the
pre-registration (N trials, each one's level fixed now, the levels summing to the family's alpha);
each later run with `--series FILE` is that series' next trial, judged at its pre-registered level
(the trial's alpha), and adds its decisions and exact p-values to FILE, which is the record to
commit. A series whose family is used up refuses another trial. Without --series a run is one
trial at --alpha (default 0.05), claiming nothing beyond itself.

Run: python benchmarks/remedies.py [--dir DIR] [--model embedded] [-k 2] [--workers 2]
        [--trial-rollouts 48] [--cued 6] [--max-tasks N] [--task-ids a,b] [--entries a,b]
        [--run-id remedies] [--stop-at-decision] [--tasks SUITE] [--smoke]
        [--series FILE [--register N --family-alpha A --spending equal|halving]] [--alpha A]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evoharness.errors import EvoError  # noqa: E402
from evoharness.files import write_atomic  # noqa: E402
from evoharness.manifests.series import SeriesRecord, register  # noqa: E402
from evoharness.text import comma_list, counted  # noqa: E402
from evoharness.evolve.agent.change import ChangeTool  # noqa: E402
from evoharness.evolve.agent.tools import LibraryOffer  # noqa: E402
from evoharness.evolve.evaluate.compare import pair_interval  # noqa: E402
from evoharness.evolve.config import validate_config  # noqa: E402
from evoharness.evolve.ledger import EVALUATE, Phase  # noqa: E402
from evoharness.evolve.ledger.records import EvolveResult  # noqa: E402
from evoharness.evolve.library.cue import cued_tasks, reached_tasks, rollout_signatures  # noqa: E402
from evoharness.evolve.library.entry import LibraryEntry, Numbers  # noqa: E402
from evoharness.evolve.library.filing import trial_numbers  # noqa: E402
from evoharness.evolve.library.starter import starter_entries  # noqa: E402
from evoharness.evolve.loop import run_phases  # noqa: E402
from evoharness.evolve.run import Run, init_run, open_run  # noqa: E402
from evoharness.evolve.trials import probe_pairs_to_cap  # noqa: E402
from evoharness.manifests.design import TrialDesign  # noqa: E402
from evoharness.manifests.schema import IterationManifest  # noqa: E402
from evoharness.tasks.results import RolloutResult  # noqa: E402
from evoharness.tasks.task import load_suite  # noqa: E402

SUITE = ROOT / "tasks" / "suite"
PROBABILITY = 0.5  # the prediction each entry is applied with, per cued task


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def progress(result: RolloutResult) -> None:
    say(f"  {result.rollout_id}: {result.outcome.value} ({result.duration_s:.0f} s)")


def design(args: argparse.Namespace) -> TrialDesign:
    if args.smoke:  # a few rollouts: shows the pipeline works, decides nothing
        return TrialDesign(max_rollouts=4, batch_rollouts=4, futility_min_pairs=1,
                           screen_first_rollouts=1, screen_max_rollouts=1, screen_batch=1,
                           screen_min_history=2, alpha=args.alpha)
    return TrialDesign(max_rollouts=args.trial_rollouts, alpha=args.alpha)


def series(args: argparse.Namespace) -> SeriesRecord | None:
    """The series this run is a trial of (--series), registered first with --register; sets
    args.alpha to this trial's pre-registered level. A resumed run (its id recorded) keeps the
    level it was run at."""
    if args.series is None:
        return None
    if args.register is not None:
        if args.series.exists():
            raise SystemExit(f"--register: {args.series} exists; a series is registered once")
        record = SeriesRecord(plan=register(args.series.stem, args.register, args.family_alpha,
                                            args.spending))
        write_atomic(args.series, record.model_dump_json(indent=2) + "\n")
        say(record.plan.line())
    if not args.series.is_file():
        raise SystemExit(f"--series: no registration at {args.series}; register it first "
                         "with --register N")
    record = SeriesRecord.model_validate_json(args.series.read_text())
    done = [t for t in record.trials if t.run_id == args.run_id]
    try:
        args.alpha = done[0].level if done else record.next_level()
    except EvoError as error:
        raise SystemExit(f"--series: {error}") from None
    say(f"trial {done[0].index if done else record.next_index} of {record.plan.line()}: "
        f"level {args.alpha:.4g}")
    return record


def record_series(args: argparse.Namespace, record: SeriesRecord | None, run: Run,
                  applied: dict[str, str]) -> None:
    """This run's decisions and exact p-values, added to the series at its level."""
    if record is None or any(t.run_id == run.run_id for t in record.trials):
        return
    results = {applied[r.id]: (r.decision, r.judgement.verdict.p_value)
               for r in run.ledger.changes() if r.judgement is not None}
    trial = record.add(run.run_id, results)
    write_atomic(args.series, record.model_dump_json(indent=2) + "\n")
    print(f"series_trial: {trial.index + 1} of {record.plan.size} at level {trial.level:.4g} "
          f"(family-wise alpha {record.plan.alpha:g}; recorded in {args.series})")


def open_or_create(where: Path, args: argparse.Namespace) -> Run:
    if not (where / "run.yaml").is_file():
        suite = load_suite(args.tasks)
        train = [task.id for task, split in suite.items() if split == "train"]
        if unknown := sorted(set(args.task_ids or ()) - set(train)):
            raise SystemExit(f"--task-ids: no train task {', '.join(unknown)} in {args.tasks}")
        train = [task_id for task_id in train if args.task_ids is None or task_id in args.task_ids]
        try:  # the options are the user's: each problem named, not a traceback
            init_run(where, validate_config(dict(
                run_id=args.run_id, tasks=args.tasks, task_ids=train[:args.max_tasks],
                model=args.model, k=args.k, workers=args.workers, calibration=False,
                starter_library=False, verdicts=design(args)), where / "run.yaml"))
        except EvoError as error:
            raise SystemExit(f"remedies.py: {error}") from None
    return open_run(where, command="benchmark")


def apply_entries(run: Run, entries: list[LibraryEntry], cued: int) -> dict[str, str]:
    """Each entry with cued tasks committed alone on the seed (kept on branch remedy/ENTRY), the
    iteration's manifest pre-registered; returns change id -> entry id."""
    with run.ledger.reading() as store:
        signatures = rollout_signatures(store.con, run.run_id, 0)
        reached = reached_tasks(store.con, run.run_id)
    seed = run.repo.head()
    offers = {e.id: LibraryOffer(e.id, e.summary(), "", edits=tuple(e.edits),
                                 component=e.component, root_cause=e.cue.root_cause,
                                 targeted_fix=e.targeted_fix)
              for e in entries}
    tool = ChangeTool(run.repo, run_id=run.run_id, iteration=0, known_tasks=run.train_ids,
                      max_changes=len(entries), offered=offers)
    applied = {}
    for entry in entries:
        tasks = cued_tasks(entry, signatures, reached)[:cued]
        if not tasks:
            continue
        result = tool({"library_entry": entry.id,
                       "failure_evidence": [{"task_id": t} for t in tasks],
                       "predicted_fixes": [{"task_id": t, "probability": PROBABILITY} for t in tasks],
                       "predicted_regressions": [],
                       "expected_delta": round(100 * PROBABILITY * len(tasks) / len(run.train_ids), 1)})
        if result.error is not None:
            raise SystemExit(f"{entry.id} did not apply to the seed: {result.text()}")
        applied[tool.entries[-1].id] = entry.id
        run.repo.set_branch(f"remedy/{entry.id}", run.repo.head())
        run.repo.reset_hard(seed)  # the next entry goes on the seed too: each is tried alone
    run.ledger.preregister(IterationManifest(
        run_id=run.run_id, iteration=0, created_at=time.time(), harness_commit_before=seed,
        changes=tool.entries, no_change_reason=None if tool.entries else "no entry was cued"))
    run.ledger.record_phase(0, Phase.EVOLVE, EvolveResult(changes=len(tool.entries)),
                            harness_commit=seed, seconds=0.0)
    return applied


def points(effect: float | None, lo: float | None, hi: float | None, level: str) -> str:
    if effect is None:
        return "n/a"
    interval = "" if lo is None else f" [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"{100 * effect:+.1f}{interval} points{level}"


def effect_lines(entry: str, numbers: Numbers, pairs: list[tuple[bool, bool]] | None,
                 confidence: float) -> list[str]:
    """The effect over the probe's `pairs` at its cap ([]: no probe ran; None: read where the
    trial stopped, --stop-at-decision) and the one where the trial stopped."""
    at_decision = points(numbers.effect, numbers.lo, numbers.hi, "" if numbers.lo is None else
                         f" ({100 * numbers.confidence:.4g}% over pairs, at every look)")
    if pairs is None:
        return [f"effect_{entry}: {at_decision}"]
    if not pairs:
        return [f"effect_{entry}: n/a (no probe: {numbers.reason})"]
    fixed = pair_interval(pairs, confidence=confidence)
    return [f"effect_{entry}: " + points(fixed.mean, fixed.lo, fixed.hi, (
                f" ({100 * confidence:.4g}% over {fixed.pairs} pairs, fixed size: the probe run "
                f"to its cap; {counted(fixed.wins, 'win')}, "
                f"{counted(fixed.losses, 'loss', 'losses')})")),
            f"effect_at_decision_{entry}: {at_decision}"]


def report(run: Run, entries: list[LibraryEntry], applied: dict[str, str],
           at_cap: dict[str, list[tuple[bool, bool]]] | None, started: float) -> None:
    """`at_cap`: each change's probe pairs at its cap (None: --stop-at-decision)."""
    for entry in entries:
        if entry.id not in applied.values():
            print(f"effect_{entry.id}: n/a (no train task showed {', '.join(entry.cue.signature)})")
            print(f"decision_{entry.id}: untried")
    for record in run.ledger.changes():
        entry, judgement = applied[record.id], record.judgement
        numbers = trial_numbers(judgement, record.verdict, record.reason)
        pairs = None if at_cap is None else at_cap.get(record.id, [])
        print("\n".join(effect_lines(entry, numbers, pairs, 1 - run.config.verdicts.alpha)))
        tasks = ", ".join(p.task_id for p in record.entry.predicted_fixes)
        verdict = judgement.verdict
        print(f"decision_{entry}: {record.decision} ({record.verdict}; p = {numbers.p_value:.3g}; "
              f"{counted(verdict.wins, 'win')}, {counted(verdict.losses, 'loss', 'losses')} "
              f"in its pairs; tasks: {tasks})")
        print(f"reason_{entry}: {record.reason}")  # futility, the cap, a regression, ...
        print(f"rollouts_{entry}: {judgement.verdict.rollouts.used} rollouts")
    with run.ledger.reading() as store:
        passes, total = store.con.execute(
            "SELECT count(*) FILTER (WHERE outcome = 'pass'), count(*) FROM rollouts "
            "WHERE run_id = ? AND iteration = 0 AND trial_change = ''", [run.run_id]).fetchone()
        trials = store.con.execute("SELECT count(*) FROM rollouts WHERE trial_change <> ''"
                                   ).fetchone()[0]
    print(f"baseline_pass_rate: {100 * passes / max(total, 1):.1f} % ({total} rollouts)")
    print(f"trial_rollouts: {trials} rollouts")
    print(f"wall_time: {time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="run directory to keep (and resume) the run in")
    parser.add_argument("--model", default="embedded", help="the code agent's model")
    parser.add_argument("--tasks", type=Path, default=SUITE, help="a suite with suite.toml")
    parser.add_argument("-k", type=int, default=2, help="baseline rollouts per train task")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trial-rollouts", type=int, default=48,
                        help="cap on each entry's paired probe (both arms)")
    parser.add_argument("--cued", type=int, default=6, help="predicted tasks per entry, at most")
    parser.add_argument("--max-tasks", type=int, help="only the first N train tasks")
    parser.add_argument("--task-ids", type=comma_list,
                        help="only these train tasks (comma-separated)")
    parser.add_argument("--entries", type=comma_list,
                        help="comma-separated entry ids (default: all)")
    parser.add_argument("--run-id", default="remedies",
                        help="the run's id, which keys the sampling seeds: a new id draws fresh "
                             "rollouts (a new run; --dir keeps the old one's)")
    parser.add_argument("--stop-at-decision", action="store_true",
                        help="do not run the probes on to their caps: the effect is read where "
                             "each trial stopped")
    parser.add_argument("--smoke", action="store_true",
                        help="caps for a smoke test: k=1, 2 train tasks, 4 probe rollouts")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the trial's level when the run is no series' trial")
    parser.add_argument("--series", type=Path,
                        help="a series' registration file (JSON): this run is its next trial, at "
                             "the level fixed for it, and its results are added there")
    parser.add_argument("--register", type=int, metavar="N",
                        help="with --series FILE (new): register a series of N trials first")
    parser.add_argument("--family-alpha", type=float, default=0.05,
                        help="with --register: the family-wise error rate of the series")
    parser.add_argument("--spending", choices=("equal", "halving"), default="equal",
                        help="with --register: alpha / N each, or alpha / 2, / 4, ... in order")
    args = parser.parse_args()
    if args.register is not None and args.series is None:
        parser.error("--register needs --series FILE")
    if args.smoke:
        args.k, args.max_tasks, args.cued = 1, args.max_tasks or 2, 1
    entries = starter_entries()
    if unknown := sorted(set(args.entries or ()) - {e.id for e in entries}):
        parser.error(f"--entries: no starter entry {', '.join(unknown)}")
    entries = [e for e in entries if not args.entries or e.id in args.entries]
    record = series(args)  # before any rollout: the trial's level is fixed here
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="remedies-") as scratch:
        with open_or_create(args.dir or Path(scratch) / "run", args) as run:
            if run.run_id != args.run_id:  # its seeds are keyed by the stored id
                raise SystemExit(f"--run-id {args.run_id}: {args.dir} holds run {run.run_id}; "
                                 f"resume it with --run-id {run.run_id}, or give a new --dir")
            run_phases(run, 0, EVALUATE, say, progress)
            if run.ledger.manifest(0) is None:
                applied = apply_entries(run, entries, args.cued)
            else:  # resumed: the entries were applied before
                applied = {c.id: run.repo.commit_info(c.commit).trailers["Library-Entry"]
                           for c in run.ledger.manifest(0).changes}
            run_phases(run, 0, (Phase.COMMIT, Phase.TRIAL), say, progress)
            at_cap = None if args.stop_at_decision else probe_pairs_to_cap(run, 0, progress)
            report(run, entries, applied, at_cap, started)
            record_series(args, record, run, applied)


if __name__ == "__main__":
    main()
