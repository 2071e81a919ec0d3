"""Prediction scores (AHE's fix/regression precision and recall, Brier score, expected vs observed
delta) per change, per judging iteration and over the run, read from stored judgements (never
recomputed from counts), and the one Scoreboard that the overview, the evolve agent and the report
show, with its markdown rendering. Two feeders fill the same counts: `score` from the rule's task
classes (judgements by threshold-rule) and `scores_from_verdicts` from stored trial verdicts."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from .attribution import TaskClass
from .judgement import TaskEvidence
from .record import ChangeRecord
from .verdict import TrialVerdict

NOTHING_JUDGED = "No change has been judged yet."
AHE_LINE = ("AHE's evolve agent reached fix precision 33.7% / recall 51.4%, "
            "regression precision 11.8% / recall 11.1%.")
TOP_ROWS = 30  # changes listed in the markdown, newest first
TOP_IDS = 10  # task ids per cell
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


def score(records: Sequence[ChangeRecord]) -> Scores:
    """The scores of judged changes taken together (one change, or an iteration's), from the task
    classes and counts their judgements stored."""
    judged = [r for r in records if r.judgement is not None]
    observed: dict[str, TaskEvidence] = {}
    predictions: list[tuple[str, float, bool | None]] = []
    for record in judged:
        tasks = {t.task_id: t for t in record.judgement.tasks}
        for task in tasks.values():
            observed.setdefault(task.task_id, task)
        for kind, claims, target in (
                ("fix", record.entry.predicted_fixes, TaskClass.FIXED),
                ("reg", record.entry.predicted_regressions, TaskClass.REGRESSED)):
            for p in claims:
                cls = tasks[p.task_id].cls if p.task_id in tasks else TaskClass.UNJUDGED
                predictions.append((kind, p.probability, cls is target if cls in _JUDGED else None))
    fixed = {t for t, e in observed.items() if e.cls is TaskClass.FIXED}
    regressed = {t for t, e in observed.items() if e.cls is TaskClass.REGRESSED}
    fix_claims = {p.task_id for r in judged for p in r.entry.predicted_fixes}
    reg_claims = {p.task_id for r in judged for p in r.entry.predicted_regressions}
    return Scores(
        **_tally(predictions), fixes_observed=len(fixed), fixes_recalled=len(fixed & fix_claims),
        regs_observed=len(regressed), regs_recalled=len(regressed & reg_claims),
        expected_delta=sum(r.entry.expected_delta for r in judged),
        observed_delta=_observed_delta(list(observed.values())),
    )


_HAPPENED = {"fixed": True, "not_fixed": False, "regressed": True, "held": False}


def scores_from_verdicts(verdicts: Sequence[TrialVerdict]) -> Scores:
    """The scores of stored trial verdicts. A predicted fix happened when its task's own pairs
    reached the trial's boundary; a predicted regression when the screen found it. A fix is only
    observed on a predicted task (a trial runs the change on nothing else that could improve), so
    fix recall stays undefined; regressions are observed on every screened task, predicted or not."""
    rows = [t for v in verdicts for t in v.tasks]
    judged = [("fix" if t.predicted == "fix" else "reg", t.probability, _HAPPENED.get(t.result))
              for t in rows if t.predicted is not None]
    regressed = [t for t in rows if t.result == "regressed"]
    return Scores(
        **_tally(judged),
        regs_observed=len(regressed),
        regs_recalled=sum(1 for t in regressed if t.predicted == "regression"),
        changes=len(verdicts), kept=sum(1 for v in verdicts if v.kept),
    )


def _observed_delta(tasks: list[TaskEvidence]) -> float:
    """Pass-rate points gained over the tasks evaluated both times."""
    both = [t for t in tasks if t.before is not None and t.after is not None]
    if not both:
        return 0.0
    gained = sum(t.after.passes / t.after.total - t.before.passes / t.before.total for t in both)
    return 100.0 * gained / len(both)


class ScoreRow(BaseModel):
    """One change on the scoreboard: what it claimed, what happened, and its own scores."""

    model_config = ConfigDict(frozen=True)

    iteration: int  # made in
    judged_in: int | None
    change_id: str
    component: str
    summary: str
    verdict: str
    decision: str
    reason: str
    predicted_fixes: list[str]
    confirmed_fixes: list[str]
    regressions: list[str]
    placebo: bool
    scores: Scores | None  # None for a change reverted by hand before any judgement


class Scoreboard(BaseModel):
    """Every judged (or hand-reverted) change of a run, its scores per judging iteration and over
    the run. Built from ChangeRecords only, so every reader agrees with the loop's verdicts."""

    model_config = ConfigDict(frozen=True)

    rows: list[ScoreRow] = []
    iterations: dict[int, Scores] = {}  # by judging iteration

    @classmethod
    def of(cls, records: Sequence[ChangeRecord]) -> Scoreboard:
        shown = [r for r in records if r.judgement is not None or r.revert is not None]
        by_judging: dict[int, list[ChangeRecord]] = {}
        for r in shown:
            if r.judgement is not None:
                by_judging.setdefault(r.judgement.iteration, []).append(r)
        return cls(rows=[_row(r) for r in shown],
                   iterations={it: score(rs) for it, rs in sorted(by_judging.items())})

    @property
    def cumulative(self) -> Scores:
        total = Scores()
        for scores in self.iterations.values():
            total = total.plus(scores)
        return total

    def to_markdown(self, max_rows: int = TOP_ROWS) -> str:
        """Scores per judging iteration and over the run, then the changes, newest first."""
        if not self.rows:
            return NOTHING_JUDGED + "\n"
        lines = [AHE_LINE, "", "| scope | fix P | fix R | reg P | reg R | Brier | expected Δ "
                 "| observed Δ | unjudged |", "|---|---|---|---|---|---|---|---|---|"]
        scopes = [(f"judged in {it}", s) for it, s in self.iterations.items()]
        for name, s in [*scopes, ("run", self.cumulative)]:
            lines.append(f"| {name} | {_cells(s)} | {s.expected_delta:+.1f} | "
                         f"{s.observed_delta:+.1f} | {s.unjudged} |")
        lines += ["", "| made in | change | component | verdict | decision | predicted fixes "
                  "| confirmed | regressions | why |", "|---|---|---|---|---|---|---|---|---|"]
        newest = sorted(self.rows, key=lambda r: (-r.iteration, r.change_id))
        for r in newest[:max_rows]:
            lines.append(
                f"| {r.iteration} | {_cell(r.change_id)} | {r.component} | {r.verdict} | "
                f"{r.decision} | {_ids(r.predicted_fixes)} | {_ids(r.confirmed_fixes)} | "
                f"{_ids(r.regressions)} | {_cell(r.reason[:200])} |")
        if len(newest) > max_rows:
            lines.append(f"+ {len(newest) - max_rows} earlier changes "
                         "(`evoharness manifest show RUN` lists them all)")
        return "\n".join(lines) + "\n"


def _row(r: ChangeRecord) -> ScoreRow:
    j = r.judgement
    return ScoreRow(
        iteration=r.iteration, judged_in=j.iteration if j else None, change_id=r.id,
        component=r.entry.component, summary=r.entry.targeted_fix[:200], verdict=r.verdict,
        decision=r.decision, reason=r.reason,
        predicted_fixes=[p.task_id for p in r.entry.predicted_fixes],
        confirmed_fixes=j.confirmed_fixes if j else [], regressions=j.regressions if j else [],
        placebo=r.placebo, scores=score([r]) if j else None,
    )


def _cell(value: object) -> str:
    """A markdown table cell: one line, pipes escaped."""
    return str(value).replace("\n", " ").replace("|", "\\|")


def _ids(ids: list[str]) -> str:
    more = f" +{len(ids) - TOP_IDS}" if len(ids) > TOP_IDS else ""
    return _cell(", ".join(ids[:TOP_IDS]) + more)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cells(s: Scores) -> str:
    brier = "n/a" if s.brier is None else f"{s.brier:.3f}"
    parts = [_pct(s.fix_precision), _pct(s.fix_recall), _pct(s.reg_precision), _pct(s.reg_recall)]
    return " | ".join([*parts, brier])
