"""Prediction scores (AHE's fix/regression precision and recall, Brier score, expected vs observed
delta, keep rate) per change, per iteration and over the run, and the scoreboard the evolve agent
reads. Two feeders fill the same counts: `score_changes` from attribution's before/after classes
(today's loop) and `scores_from_verdicts` from stored trial verdicts (verdict.py), which the loop
moves to when it drives trials."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from .attribution import TaskClass, Verdict, classify_tasks
from .noise import NoiseModel, TaskCounts
from .schema import ChangeManifestEntry
from .verdict import TrialVerdict

_JUDGED = (TaskClass.FIXED, TaskClass.REGRESSED, TaskClass.UNCHANGED)


def _ratio(num: int | float, den: int) -> float | None:
    return num / den if den else None


class Scores(BaseModel):
    """Counts behind the scores, so iterations add up (micro-averaged) over a run.

    Precision counts (change, task) predictions on judged tasks; recall counts observed FIXED or
    REGRESSED tasks that any change predicted. Predictions on unstable or missing tasks are left
    out of both and of the Brier score, and counted in `unjudged`. `changes` and `kept` count
    verdicts (filled from trial verdicts only).
    """

    model_config = ConfigDict(frozen=True)

    fix_predicted: int = 0
    fix_confirmed: int = 0
    fixes_observed: int = 0
    fixes_recalled: int = 0
    reg_predicted: int = 0
    reg_confirmed: int = 0
    regs_observed: int = 0
    regs_recalled: int = 0
    brier_sum: float = 0.0
    brier_n: int = 0
    unjudged: int = 0
    expected_delta: float = 0.0
    observed_delta: float = 0.0
    changes: int = 0
    kept: int = 0

    @property
    def keep_rate(self) -> float | None:
        return _ratio(self.kept, self.changes)

    @property
    def fix_precision(self) -> float | None:
        return _ratio(self.fix_confirmed, self.fix_predicted)

    @property
    def fix_recall(self) -> float | None:
        return _ratio(self.fixes_recalled, self.fixes_observed)

    @property
    def reg_precision(self) -> float | None:
        return _ratio(self.reg_confirmed, self.reg_predicted)

    @property
    def reg_recall(self) -> float | None:
        return _ratio(self.regs_recalled, self.regs_observed)

    @property
    def brier(self) -> float | None:
        return _ratio(self.brier_sum, self.brier_n)

    def plus(self, other: Scores) -> Scores:
        return Scores(**{name: getattr(self, name) + getattr(other, name)
                         for name in Scores.model_fields})


def observed_delta(before: Mapping[str, TaskCounts], after: Mapping[str, TaskCounts]) -> float:
    """Pass-rate points gained over the tasks evaluated both times."""
    common = sorted(set(before) & set(after))
    if not common:
        return 0.0
    return 100.0 * (_mean_rate(after, common) - _mean_rate(before, common))


def _mean_rate(counts: Mapping[str, TaskCounts], tasks: list[str]) -> float:
    return sum(counts[t].passes / counts[t].total for t in tasks) / len(tasks)


def _tally(judged: Iterable[tuple[str, float, bool | None]]) -> dict:
    """Counts behind precision and Brier from (kind, stated probability, happened) per prediction,
    kind "fix" or "reg"; happened is None when the prediction could not be judged."""
    counts = dict(fix_predicted=0, fix_confirmed=0, reg_predicted=0, reg_confirmed=0,
                  brier_sum=0.0, brier_n=0, unjudged=0)
    for kind, probability, happened in judged:
        if happened is None:
            counts["unjudged"] += 1
            continue
        counts[f"{kind}_predicted"] += 1
        counts[f"{kind}_confirmed"] += int(happened)
        counts["brier_sum"] += (probability - float(happened)) ** 2
        counts["brier_n"] += 1
    return counts


def _prediction_counts(changes, classes) -> dict:
    def judged():
        for change in changes:
            for kind, predictions, target in (("fix", change.predicted_fixes, TaskClass.FIXED),
                                              ("reg", change.predicted_regressions, TaskClass.REGRESSED)):
                for p in predictions:
                    cls = classes.get(p.task_id, TaskClass.UNJUDGED)
                    yield kind, p.probability, (cls is target) if cls in _JUDGED else None
    return _tally(judged())


def score_changes(
    changes: Sequence[ChangeManifestEntry],
    before: Mapping[str, TaskCounts],
    after: Mapping[str, TaskCounts],
    noise: NoiseModel,
) -> Scores:
    """The scores of a set of changes judged on one before/after pair (one change or an iteration)."""
    classes = classify_tasks(before, after, noise)
    fixed = {t for t, c in classes.items() if c is TaskClass.FIXED}
    regressed = {t for t, c in classes.items() if c is TaskClass.REGRESSED}
    fix_claims = {p.task_id for c in changes for p in c.predicted_fixes}
    reg_claims = {p.task_id for c in changes for p in c.predicted_regressions}
    return Scores(
        **_prediction_counts(changes, classes),
        fixes_observed=len(fixed), fixes_recalled=len(fixed & fix_claims),
        regs_observed=len(regressed), regs_recalled=len(regressed & reg_claims),
        expected_delta=sum(c.expected_delta for c in changes),
        observed_delta=observed_delta(before, after),
    )


_HAPPENED = {"fixed": True, "not_fixed": False, "regressed": True, "held": False}


def scores_from_verdicts(verdicts: Sequence[TrialVerdict]) -> Scores:
    """The scores of stored trial verdicts. A predicted fix happened when its task's own pairs
    reached the trial's boundary; a predicted regression when the screen found it. A fix is only
    observed on a predicted task (a trial runs the change on nothing else that could improve), so
    fix recall stays undefined; regressions are observed on every screened task, predicted or not."""
    rows = [(v, t) for v in verdicts for t in v.tasks]
    judged = [("fix" if t.predicted == "fix" else "reg", t.probability, _HAPPENED.get(t.result))
              for _, t in rows if t.predicted is not None]
    regressed = [t for _, t in rows if t.result == "regressed"]
    return Scores(
        **_tally(judged),
        regs_observed=len(regressed),
        regs_recalled=sum(1 for t in regressed if t.predicted == "regression"),
        changes=len(verdicts), kept=sum(1 for v in verdicts if v.kept),
    )


class ScoreRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    iteration: int
    change_id: str
    component: str
    verdict: str
    decision: str
    scores: Scores


class Scoreboard(BaseModel):
    """Rows per change plus per-iteration and cumulative scores of one run."""

    run_id: str
    rows: list[ScoreRow] = []
    iterations: dict[int, Scores] = {}

    def add_iteration(
        self, iteration: int, changes: Sequence[ChangeManifestEntry], verdicts: Sequence[Verdict],
        before: Mapping[str, TaskCounts], after: Mapping[str, TaskCounts], noise: NoiseModel,
    ) -> None:
        by_id = {v.change_id: v for v in verdicts}
        for change in changes:
            verdict = by_id.get(change.id)
            self.rows.append(ScoreRow(
                iteration=iteration, change_id=change.id, component=change.component,
                verdict=verdict.verdict if verdict else "pending",
                decision=verdict.decision if verdict else "pending",
                scores=score_changes([change], before, after, noise),
            ))
        self.iterations[iteration] = score_changes(changes, before, after, noise)

    @property
    def cumulative(self) -> Scores:
        total = Scores()
        for scores in self.iterations.values():
            total = total.plus(scores)
        return total

    def to_markdown(self) -> str:
        lines = [f"## Prediction scoreboard: {self.run_id}", "",
                 "| iteration | change | component | verdict | decision | fix P | fix R "
                 "| reg P | reg R | Brier | expected Δ |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            s = r.scores
            lines.append(f"| {r.iteration} | {r.change_id} | {r.component} | {r.verdict} | "
                         f"{r.decision} | {_cells(s)} | {s.expected_delta:+.1f} |")
        lines += ["", "| scope | fix P | fix R | reg P | reg R | Brier | expected Δ | observed Δ "
                      "| unjudged |", "|---|---|---|---|---|---|---|---|---|"]
        scopes = [(f"iteration {i}", s) for i, s in sorted(self.iterations.items())]
        for name, s in [*scopes, ("run", self.cumulative)]:
            lines.append(f"| {name} | {_cells(s)} | {s.expected_delta:+.1f} | "
                         f"{s.observed_delta:+.1f} | {s.unjudged} |")
        lines += ["", "AHE reference: fix precision 33.7% / recall 51.4%, "
                      "regression precision 11.8% / recall 11.1%."]
        return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cells(s: Scores) -> str:
    brier = "n/a" if s.brier is None else f"{s.brier:.3f}"
    parts = [_pct(s.fix_precision), _pct(s.fix_recall), _pct(s.reg_precision), _pct(s.reg_recall)]
    return " | ".join([*parts, brier])
