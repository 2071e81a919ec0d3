"""Prediction scores (AHE's fix precision, regression precision and recall, a Brier score of the
stated probabilities, expected against observed delta, keep rate and rollouts spent) per change,
per iteration and over the run, read from stored judgements (never recomputed from counts), and
the one Scoreboard that overview.md, the evolve agent, status and the report show.

What a trial observes. A predicted fix happened when its task's own pairs reached the trial's
boundary (TaskEvidence result "fixed") and did not when they showed no gain ("not_fixed"); a
predicted regression happened when the screen found it and did not when the task held. Fixes are
observed only on predicted tasks (the trial runs a change on nothing else that could improve), so
fix recall is not measured; regressions are observed on every screened task, predicted or not, so
regression recall is. A gain too small to confirm on one task's pairs ("unclear") and predictions
the trial never reached (a regression claim on a task it did not screen) count as unjudged,
outside precision and Brier."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from .record import ChangeRecord

NOTHING_JUDGED = "No change has been judged yet."
AHE_LINE = ("AHE's evolve agent reached fix precision 33.7% / recall 51.4%, "
            "regression precision 11.8% / recall 11.1%.")
TOP_ROWS = 30  # changes listed in the markdown, newest first
TOP_IDS = 10  # task ids per cell
_HAPPENED = {"fixed": True, "not_fixed": False, "regressed": True, "held": False}


def _ratio(num: int | float, den: int) -> float | None:
    return num / den if den else None


class Scores(BaseModel):
    """Counts behind the scores, so iterations add up (micro-averaged) over a run."""

    model_config = ConfigDict(frozen=True)

    changes: int = 0
    kept: int = 0
    fix_predicted: int = 0
    fix_confirmed: int = 0
    reg_predicted: int = 0
    reg_confirmed: int = 0
    regs_observed: int = 0
    regs_recalled: int = 0
    brier_sum: float = 0.0
    brier_n: int = 0
    unjudged: int = 0
    expected_delta: float = 0.0  # pass-rate points the changes' manifests stated
    observed_delta: float = 0.0  # pass-rate points their probes showed (change - base arm)
    rollouts: int = 0  # trial rollouts the verdicts used

    @property
    def keep_rate(self) -> float | None:
        return _ratio(self.kept, self.changes)

    @property
    def fix_precision(self) -> float | None:
        return _ratio(self.fix_confirmed, self.fix_predicted)

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
    """The scores of judged changes taken together (one change, or an iteration's), from their
    stored judgements."""
    judged = [r for r in records if r.judgement is not None]
    rows = [t for r in judged for t in r.judgement.verdict.tasks]
    predictions = [("fix" if t.predicted == "fix" else "reg", t.probability,
                    _HAPPENED.get(t.result)) for t in rows if t.predicted is not None]
    regressed = [t for t in rows if t.result == "regressed"]
    return Scores(
        **_tally(predictions), changes=len(judged),
        kept=sum(1 for r in judged if r.judgement.decision == "keep"),
        regs_observed=len(regressed),
        regs_recalled=sum(1 for t in regressed if t.predicted == "regression"),
        expected_delta=sum(r.entry.expected_delta for r in judged),
        observed_delta=sum(_observed_delta(r) for r in judged),
        rollouts=sum(r.judgement.verdict.rollouts.used for r in judged),
    )


def _observed_delta(record: ChangeRecord) -> float:
    """Pass-rate points of the train suite the change's probe showed: on each predicted task, the
    change arm's pass rate less the base arm's over the same pairs, summed, per train task."""
    judgement = record.judgement
    tasks = len(judgement.setup.candidates.counts)
    return 100.0 * sum(judgement.verdict.gains.values()) / tasks if tasks else 0.0


class ScoreRow(BaseModel):
    """One change on the scoreboard: what it claimed, what its trial found, and its own scores."""

    model_config = ConfigDict(frozen=True)

    iteration: int  # made and judged in
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
    p_value: float | None  # None for a change reverted by hand before any judgement
    rollouts: int
    scores: Scores | None


class Scoreboard(BaseModel):
    """Every judged (or hand-reverted) change of a run, its scores per iteration and over the run.
    Built from ChangeRecords only, so every reader agrees with the loop's verdicts."""

    model_config = ConfigDict(frozen=True)

    rows: list[ScoreRow] = []
    iterations: dict[int, Scores] = {}  # by the iteration that made and judged the changes

    @classmethod
    def of(cls, records: Sequence[ChangeRecord]) -> Scoreboard:
        shown = [r for r in records if r.judgement is not None or r.revert is not None]
        by_iteration: dict[int, list[ChangeRecord]] = {}
        for r in shown:
            if r.judgement is not None:
                by_iteration.setdefault(r.judgement.iteration, []).append(r)
        return cls(rows=[_row(r) for r in shown],
                   iterations={it: score(rs) for it, rs in sorted(by_iteration.items())})

    @property
    def cumulative(self) -> Scores:
        total = Scores()
        for scores in self.iterations.values():
            total = total.plus(scores)
        return total

    def to_markdown(self, max_rows: int = TOP_ROWS) -> str:
        """Scores per iteration and over the run, then the changes, newest first."""
        if not self.rows:
            return NOTHING_JUDGED + "\n"
        lines = [AHE_LINE, "A change is kept only when its own trial shows its predicted fixes "
                 "and, in a run with validation tasks, a gain on the unseen validation tasks that "
                 "show the failure it targets (fix recall is not measured: a trial runs only the "
                 "predicted, validation and stable tasks).", "",
                 "| scope | changes | kept | fix P | reg P | reg R | Brier | expected Δ "
                 "| observed Δ | rollouts | unjudged |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        scopes = [(f"iteration {it}", s) for it, s in self.iterations.items()]
        for name, s in [*scopes, ("run", self.cumulative)]:
            lines.append(f"| {name} | {s.changes} | {s.kept} | {_cells(s)} | "
                         f"{s.expected_delta:+.1f} | {s.observed_delta:+.1f} | {s.rollouts} | "
                         f"{s.unjudged} |")
        lines += ["", "| made in | change | component | verdict | decision | predicted fixes "
                  "| fixed | regressions | p | rollouts | why |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        newest = sorted(self.rows, key=lambda r: (-r.iteration, r.change_id))
        for r in newest[:max_rows]:
            p = "-" if r.p_value is None else f"{r.p_value:.3f}"
            lines.append(
                f"| {r.iteration} | {_cell(r.change_id)} | {r.component} | {r.verdict} | "
                f"{r.decision} | {_ids(r.predicted_fixes)} | {_ids(r.confirmed_fixes)} | "
                f"{_ids(r.regressions)} | {p} | {r.rollouts} | {_cell(r.reason[:200])} |")
        if len(newest) > max_rows:
            lines.append(f"+ {len(newest) - max_rows} earlier changes "
                         "(`evoharness manifest show RUN` lists them all)")
        return "\n".join(lines) + "\n"


def _row(r: ChangeRecord) -> ScoreRow:
    j = r.judgement
    return ScoreRow(
        iteration=r.iteration, change_id=r.id, component=r.entry.component,
        summary=r.entry.targeted_fix[:200], verdict=r.verdict, decision=r.decision,
        reason=r.reason, predicted_fixes=[p.task_id for p in r.entry.predicted_fixes],
        confirmed_fixes=j.confirmed_fixes if j else [], regressions=j.regressions if j else [],
        placebo=r.placebo, p_value=j.verdict.p_value if j else None,
        rollouts=j.verdict.rollouts.used if j else 0, scores=score([r]) if j else None,
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
    return " | ".join([_pct(s.fix_precision), _pct(s.reg_precision), _pct(s.reg_recall), brier])
