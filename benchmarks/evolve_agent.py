"""The evolve agent on the real embedded 1.5B, measured: a recorded run's first evaluation (the
fixture in benchmarks/fixtures/evolve-small, train rollouts of a short real run) is replayed
through N real EVOLVE phases, each from the same starting point (the starter library offered as
in any run), and each session's changes are judged by the loop's own TRIAL phase (probe capped
at --trial-rollouts), so it reports the sessions whose change was kept, not only committed; then
the code agent runs the built-in suite under constrained decoding and its parse failures are
counted.

Run: python benchmarks/evolve_agent.py [--sessions 8] [--trial-rollouts 24] [--no-trial]
                                       [--code-steps 6] [--no-code] [--keep DIR]
     python benchmarks/evolve_agent.py --record RUN_DIR   (rewrite the fixture from a run)"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from evoharness.agent.clients import make_model
from evoharness.evolve.agent.change import LIBRARY_TRAILER, PLACEHOLDER
from evoharness.evolve.agent.lessons import OVERLAP, added_text, harness_rules, same_lesson, words
from evoharness.evolve.config import RunConfig
from evoharness.evolve.ledger import EVALUATE, Phase
from evoharness.evolve.loop import run_phases
from evoharness.evolve.run import init_run, open_run, read_run
from evoharness.manifests.design import TrialDesign
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_suite
from evoharness.tasks.sandbox.unsafe import require_sandbox
from evoharness.workspace.repo import SEED_DIR, HarnessRepo
from evoharness.workspace.validate import load_harness

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "evolve-small"
SUITE = ROOT / "tasks" / "suite"
# The example change the old prompt showed, which small models copied word for word.
PROMPT_EXAMPLES = ["Before calling done, run the program and compare its output with the task."]
NEAR = 0.5  # a looser overlap than the guard's, to show near misses the guard let through


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- recording the fixture from a real run --------------------------------------------------

def record(run_dir: Path, out: Path) -> None:
    """Keep what a replay of the first EVOLVE phase needs: the run's id, k, train task ids and
    its first evaluation's train rollouts (the calibrated baseline)."""
    config, _ = read_run(run_dir)
    train = [t.id for t, split in load_suite(config.tasks, config.split).items()
             if split == "train" and (config.task_ids is None or t.id in config.task_ids)]
    shutil.rmtree(out, ignore_errors=True)
    folder = out / "rollouts" / "it000"
    folder.mkdir(parents=True)
    for path in sorted((run_dir / "iterations" / "it000" / "rollouts").glob("*.json")):
        if RolloutResult.model_validate_json(path.read_text()).task_id in train:
            shutil.copy(path, folder / path.name)
    (out / "record.json").write_text(json.dumps(
        {"run_id": config.run_id, "k": config.k, "task_ids": train}, indent=1) + "\n")


# --- replaying it -----------------------------------------------------------------------------

def build_template(root: Path, fixture: Path, model: str, trial_rollouts: int) -> Path:
    """A run directory ready for its first EVOLVE phase: the loop's own EVAL (which finds every
    rollout already there and runs none), INGEST, ATTRIBUTE, REVERT and DISTILL. The recorded
    rollouts ran the seed harness of another repository: they are stored as this seed's, so a
    trial's history can find their tree."""
    rec = json.loads((fixture / "record.json").read_text())
    paths = init_run(root, RunConfig(run_id=rec["run_id"], tasks=SUITE, task_ids=rec["task_ids"],
                                     model=model, k=rec["k"],
                                     verdicts=TrialDesign(max_rollouts=trial_rollouts)))
    seed = HarnessRepo(paths.workspace).head()
    paths.rollouts(0).mkdir(parents=True, exist_ok=True)
    for path in sorted((fixture / "rollouts" / "it000").glob("*.json")):
        rollout = RolloutResult.model_validate_json(path.read_text())
        (paths.rollouts(0) / path.name).write_text(
            rollout.model_copy(update={"harness_commit": seed}).model_dump_json())
    with open_run(root) as run:
        run_phases(run, 0, EVALUATE, say)
        if run.ledger.phase(0, Phase.EVAL).result.rollouts_run:
            raise SystemExit(f"{fixture} lacks rollouts of the first evaluation: EVAL ran them")
    return root


def session(template: Path, where: Path, trial: bool) -> dict[str, Any]:
    """One real EVOLVE phase on a copy of the template, what it produced, and (with `trial`) what
    the TRIAL phase decided about each change."""
    shutil.copytree(template, where)
    with open_run(where) as run:
        known = harness_rules(run.repo)
        started = time.perf_counter()
        run_phases(run, 0, (Phase.EVOLVE,), say)
        seconds = time.perf_counter() - started
        result = run.ledger.phase(0, Phase.EVOLVE).result
        manifest = run.ledger.manifest(0)
        events = json.loads(run.paths.evolve_trace(0).read_text())
        rules = {c.id: added_text(run.repo, c.commit) for c in manifest.changes}
        entries = [run.repo.commit_info(c.commit).trailers.get(LIBRARY_TRAILER)
                   for c in manifest.changes]
        if trial and manifest.changes:
            run_phases(run, 0, (Phase.COMMIT, Phase.TRIAL), say)
        decisions = {c.id: c.decision for c in run.ledger.changes()}
    return {"result": result, "seconds": seconds, "manifest": manifest, "events": events,
            "rules": rules, "known": known, "decisions": decisions,
            "entries": [e for e in entries if e]}


def copies(rule: str, known: list[str], threshold: float) -> bool:
    return any(_overlap(rule, other) >= threshold for other in known)


def _overlap(a: str, b: str) -> float:
    wa, wb = words(a), words(b)
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def tally(results: list[dict[str, Any]]) -> dict[str, float]:
    changes = [c for r in results for c in r["manifest"].changes]
    causes: list[str] = []
    for cause in (c.root_cause for c in changes):
        if not any(same_lesson(cause, seen) for seen in causes):
            causes.append(cause)
    results_text = [e for r in results for e in r["events"] if e["kind"] == "tool_result"]
    figures = {
        "sessions": len(results),
        "valid change": sum(bool(r["manifest"].changes) for r in results),
        "specific reason": sum(r["result"].specific and not r["manifest"].changes
                               for r in results),
        "changes": len(changes),
        "copies": sum(copies(r["rules"][c.id], r["known"], OVERLAP)
                      for r in results for c in r["manifest"].changes),
        "example copies": sum(copies(r["rules"][c.id], PROMPT_EXAMPLES, OVERLAP)
                              or bool(PLACEHOLDER.search(r["rules"][c.id]))
                              for r in results for c in r["manifest"].changes),
        "near copies": sum(copies(r["rules"][c.id], r["known"], NEAR)
                           for r in results for c in r["manifest"].changes),
        "refused copies": sum("already in the harness" in e["content"] or "already tried" in
                              e["content"] or "placeholder" in e["content"] for e in results_text),
        "causes": len(causes),
        "invalid actions": sum(e["kind"] == "error" and e["name"] == "ParseError"
                               or e["kind"] == "note" and e["name"] == "parse_retry"
                               for r in results for e in r["events"])
        + sum(e["content"].startswith(("ERROR (permanent): unknown tool",
                                       "ERROR (permanent): invalid arguments"))
              for e in results_text),
        "invalid manifests": sum("invalid manifest" in e["content"] for e in results_text),
        "seconds": sum(r["seconds"] for r in results) / max(len(results), 1),
    }
    figures["ended"] = figures["valid change"] + figures["specific reason"]
    figures["kept"] = sum("keep" in r["decisions"].values() for r in results)
    figures["judged"] = sum(bool(r["decisions"]) and "pending" not in r["decisions"].values()
                            for r in results)
    figures["library"] = sum(bool(r["entries"]) for r in results)
    figures["code"] = sum(c.component in ("middleware", "tool", "tool_impl")
                          for r in results for c in r["manifest"].changes)
    return figures


# --- the code agent under constrained decoding --------------------------------------------------

def code_agent(root: Path, steps: int, workers: int) -> dict[str, int]:
    """Every task of the built-in suite once, the seed harness capped at `steps` steps."""
    harness_dir = root / "harness"
    shutil.copytree(SEED_DIR, harness_dir)
    spec = yaml.safe_load((harness_dir / "harness.yaml").read_text())
    spec["settings"]["max_steps"] = steps
    (harness_dir / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    harness = load_harness(harness_dir)
    paths = run_rollouts(harness, "seed", load_suite(SUITE).items(),
                         make_model("embedded", workers=workers), run_id="bench", iteration=0,
                         out_dir=root / "rollouts", workers=workers,
                         sandbox_factory=require_sandbox(False))
    rollouts = [RolloutResult.model_validate_json(p.read_text()) for p in paths]
    events = [e for r in rollouts for e in r.events]
    return {
        "rollouts": len(rollouts), "passed": sum(r.outcome == "pass" for r in rollouts),
        "model calls": sum(e.kind == "model_call" for e in events),
        "parse failures": sum(e.kind == "note" and e.name == "parse_retry"
                              or e.kind == "error" and e.name == "ParseError" for e in events),
        "invented tools": sum(e.kind == "tool_result" and "unknown tool" in e.content for e in events),
        "invalid arguments": sum(e.kind == "tool_result" and "invalid arguments" in e.content
                                 for e in events),
        "unconstrained": sum(e.name == "constrained_decoding_off" for e in events),
    }


def evolve_figures(tmp: Path, model: str, sessions: int, trial_rollouts: int | None) -> None:
    template = build_template(tmp / "template", FIXTURE, model, trial_rollouts or 24)
    results = []
    for n in range(sessions):
        results.append(session(template, tmp / f"s{n}", trial=trial_rollouts is not None))
        r = results[-1]
        say(f"session {n}: {len(r['manifest'].changes)} change(s) "
            f"{[c.root_cause for c in r['manifest'].changes]} library={r['entries']} "
            f"decisions={r['decisions']} reason={r['manifest'].no_change_reason!r} "
            f"{r['seconds']:.0f}s")
    f = tally(results)
    print(f"sessions: {f['sessions']} sessions")
    print(f"sessions ending in a valid change: {f['valid change']} sessions")
    if trial_rollouts is not None:
        print(f"sessions whose change its trial kept: {f['kept']} sessions "
              f"({100 * f['kept'] / max(f['sessions'], 1):.0f} %; {f['judged']} judged)")
    print(f"sessions applying a library entry: {f['library']} sessions")
    print(f"changes that are code (middleware or tool): {f['code']} changes")
    print(f"sessions ending in a specific no-change reason: {f['specific reason']} sessions")
    print(f"sessions ending in a change or a specific reason: "
          f"{100 * f['ended'] / max(f['sessions'], 1):.0f} %")
    print(f"changes committed: {f['changes']} changes")
    print(f"changes repeating an existing rule: {f['copies']} changes")
    print(f"changes repeating a prompt example: {f['example copies']} changes")
    print(f"changes near an existing rule (overlap >= {NEAR}): "
          f"{f['near copies']} changes")
    print(f"repeats refused before an evaluation: {f['refused copies']} refusals")
    print(f"distinct root causes: {f['causes']} causes")
    print(f"invalid action replies: {f['invalid actions']} replies")
    print(f"invalid manifest replies: {f['invalid manifests']} replies")
    print(f"mean session time: {f['seconds']:.0f} s")


def code_figures(tmp: Path, steps: int, workers: int) -> None:
    c = code_agent(tmp, steps, workers)
    print(f"code agent model calls (constrained): {c['model calls']} calls")
    print(f"code agent parse failures (constrained): {c['parse failures']} failures")
    print(f"code agent invented tools (constrained): {c['invented tools']} calls")
    print(f"code agent invalid arguments (constrained): {c['invalid arguments']} calls")
    print(f"code agent calls left unconstrained: {c['unconstrained']} rollouts")
    print(f"code agent rollouts passing: {c['passed']} of {c['rollouts']} rollouts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--trial-rollouts", type=int, default=24,
                        help="cap on each change's paired probe (run.yaml verdicts.max_rollouts)")
    parser.add_argument("--no-trial", action="store_true",
                        help="skip the trials (then no kept share is reported)")
    parser.add_argument("--code-steps", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-code", action="store_true", help="skip the code-agent figures")
    parser.add_argument("--no-evolve", action="store_true", help="skip the evolve-agent figures")
    parser.add_argument("--record", type=Path, help="rewrite the fixture from this run directory")
    parser.add_argument("--keep", type=Path,
                        help="an empty folder to keep the sessions' runs and rollouts in")
    args = parser.parse_args()
    if args.record:
        record(args.record, FIXTURE)
        say(f"fixture written to {FIXTURE}")
        return
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        where = args.keep or Path(tmp)
        if not args.no_evolve:
            evolve_figures(where, args.model, args.sessions,
                           None if args.no_trial else args.trial_rollouts)
        if not args.no_code:
            code_figures(where / "code", args.code_steps, args.workers)


if __name__ == "__main__":
    main()
