"""Reading the figures the docs quote (docs/figures.toml) again from their committed records. Each
entry's `derive` names a function here; it reads the record with the project's own models and
code and returns the values its `quote` is filled with. A record that is gone, that no longer
validates as the project's model, or whose figures the current code derives differently fails."""
from __future__ import annotations

import re
from pathlib import Path

from evoharness.evolve.evaluate.compare import Comparison, compare
from evoharness.evolve.ledger.records import ExamRecord
from evoharness.manifests.judgement import Judgement
from evoharness.manifests.schema import IterationManifest

Values = dict[str, object]
_METRIC = re.compile(r"^([a-z][a-z0-9_]*): (-?[0-9.]+)\b")


def metrics(record: Path) -> Values:
    """A benchmark's stdout, kept as its record: every `name: value unit` line as {name: value}
    (an int where the value is one). Comment lines (`#`) and indented detail lines are skipped."""
    values: Values = {}
    for line in record.read_text().splitlines():
        if (match := _METRIC.match(line)) is not None:
            name, value = match.groups()
            values[name] = int(value) if value.lstrip("-").isdigit() else float(value)
    return values


def runaways(record: Path) -> Values:
    """`python benchmarks/runaways.py`: its metrics, the replies stopped in all, the tokens the
    replies decoded, and the share not decoded in percent."""
    values = metrics(record)
    [total] = re.findall(r"^tokens_not_decoded: \d+ tokens of (\d+)$", record.read_text(), re.M)
    values["stopped"] = int(values["stopped_repeating"]) + int(values["stopped_counting"])
    values["tokens_decoded"] = int(total)
    values["share_not_decoded"] = 100 * int(values["tokens_not_decoded"]) / int(total)
    return values


def lines(record: Path, first: int, last: int) -> Values:
    """Lines `first` to `last` (1-based, inclusive) of a text record, as `text`: a record the
    page quotes as it is (a command's output)."""
    return {"text": "\n".join(record.read_text().splitlines()[first - 1:last])}


def _exam(record: Path) -> ExamRecord:
    return ExamRecord.model_validate_json(record.read_text())


def _again(shown: Comparison) -> Comparison:
    """A stored comparison computed again by today's compare() from its per-task counts."""
    return compare(shown.a, {t.task_id: t.a for t in shown.tasks},
                   shown.b, {t.task_id: t.b for t in shown.tasks},
                   confidence=shown.confidence, a_infra=shown.a_infra, b_infra=shown.b_infra)


def exam_comparison(record: Path, b: str) -> Values:
    """An exam record's comparison of arm `b` (`seed-again`: the noise floor) with the seed,
    recomputed from its per-task pass counts: `sentence` as the exam prints it."""
    exam = _exam(record)
    shown = exam.noise_floor if b == exam.noise_floor.b else next(
        c for c in exam.comparisons if c.b == b)
    return {"sentence": _again(shown).sentence()}


def exam_cost(record: Path) -> Values:
    """What the evolution spent, as an exam record states it: rollouts and tokens."""
    cost = _exam(record).cost
    assert cost is not None, f"{record} states no cost"
    return {"rollouts": cost.rollouts, "tokens": cost.tokens}


def exam_never_passed(record: Path) -> Values:
    """The exam's held-out tasks, and how many of them no arm passed in any rollout."""
    exam = _exam(record)
    passed: dict[str, int] = {task: 0 for task in exam.tasks}
    for shown in [exam.noise_floor, *exam.comparisons]:
        for pair in shown.tasks:
            passed[pair.task_id] += pair.a.passes + pair.b.passes
    return {"never": sum(p == 0 for p in passed.values()), "tasks": len(passed)}


def run_changes(record: Path) -> Values:
    """A run's copied records (manifests/iter-*.json, judgements/*.json under `record`): how many
    changes its manifests pre-registered and how many of them their judgements kept."""
    changes = [change.id for path in sorted((record / "manifests").glob("iter-*.json"))
               for change in IterationManifest.model_validate_json(path.read_text()).changes]
    judged = {j.change_id: j for j in (Judgement.model_validate_json(p.read_text())
                                       for p in sorted((record / "judgements").glob("*.json")))}
    assert set(judged) == set(changes), f"{record}: judgements {sorted(judged)} != {changes}"
    return {"changes": len(changes), "kept": sum(judged[c].decision == "keep" for c in changes)}


def trial(record: Path) -> Values:
    """A change's stored judgement: its trial's wins, losses, pairs on its predicted tasks,
    rollouts, p-value (two decimals) and decision."""
    verdict = Judgement.model_validate_json(record.read_text()).verdict
    spent = verdict.rollouts
    return {"wins": verdict.wins, "losses": verdict.losses, "rollouts": spent.recorded,
            "pairs": min(spent.base, spent.change),
            "p": f"{verdict.p_value:.2f}", "decision": str(verdict.decision)}


def wall_time(record: Path) -> Values:
    """How long a command took, from the timing it printed, kept as its record: GNU time's
    `Elapsed (wall clock) time (h:mm:ss or m:ss): 15:13.04`, the shell's `real 15m13.042s` or
    `main job wall 913.04 s` (`/usr/bin/time -f 'main job wall %e s'`).
    `seconds` (rounded), `minutes` (one decimal) and `min_s` ("15 min 13 s")."""
    text = record.read_text()
    if (gnu := re.search(r"Elapsed \(wall clock\) time.*?: (?:(\d+):)?(\d+):([\d.]+)", text)):
        hours, minutes, seconds = gnu.groups()
        total = 3600 * int(hours or 0) + 60 * int(minutes) + float(seconds)
    elif (shell := re.search(r"^real\s+(\d+)m([\d.]+)s", text, re.M)):
        total = 60 * int(shell.group(1)) + float(shell.group(2))
    elif (plain := re.search(r"^main job wall ([\d.]+) s$", text, re.M)):  # time -f '... %e s'
        total = float(plain.group(1))
    else:
        raise AssertionError(f"{record} holds no wall time (GNU time -v or the shell's time)")
    whole = round(total)
    return {"seconds": whole, "minutes": round(total / 60, 1),
            "min_s": f"{whole // 60} min {whole % 60} s"}
