"""Attribution: last iteration's pre-registered predictions against what the next evaluation
showed, with a noise model; a verdict and a keep/revert decision per change (storing it as a
judgement is judgement.py's, reverting is revert.py's).

The rules (k judged rollouts per task and evaluation; "before" is the evaluation of the harness
the changes were made on, "after" the evaluation of the harness with the changes):

Tasks.
- UNJUDGED: the task lacks counts before or after.
- UNSTABLE: the noise model (history up to and including "before") saw the task flip between two
  evaluations of one unchanged commit, or saw a mixed evaluation (0 < passes < k) at any time.
  A mixed evaluation is direct evidence of nondeterminism, so we treat it like a flip: an unstable
  task can neither confirm a fix nor prove a regression. The "after" evaluation is judged by the
  thresholds below, not by the noise model (else a fix to 2 of 3 could never count).
- FIXED: stable, 0 passes before, and passes after >= half (0/k -> >= ceil(k/2)/k).
- REGRESSED: stable, all passed before, and passes after <= half (k/k -> <= floor(k/2)/k).
- UNCHANGED: anything else.
- Borderline: a predicted fix or predicted regression of a stable task whose "after" sits exactly
  on the threshold (2 * passes == total, e.g. 1/2). `borderline_tasks` lists them so the loop can
  add a few rollouts of those tasks only (`TaskCounts.plus`) and attribute again.

Changes. confirmed = its predicted fixes that are FIXED; missed = its predicted fixes on judged,
stable tasks that are not. Its regressions = its predicted regressions that happened, plus every
regression that no change of the iteration predicted (nobody claimed it, so no change is cleared).
- effective: >= 1 confirmed, no regressions, nothing missed.
- partial: >= 1 confirmed, no regressions, some predicted fixes missed.
- mixed: >= 1 confirmed and >= 1 regression.
- harmful: no confirmed fix, >= 1 regression.
- ineffective: no confirmed fix, no regression (this includes a change that predicts nothing).
The noise band is the expected number of chance flips per evaluation: the sum over tasks of their
flip rate under an unchanged commit. Decision:
- keep when clean: >= 1 confirmed and no regressions; or
- keep when it outweighs: confirmed - regressions > band;
- otherwise revert: a tie or a margin inside the noise is "not shown".
- Net-negative rule: when the iteration's net (FIXED - REGRESSED tasks) is below -band, only clean
  changes are kept; a change that has regressions of its own reverts even if it outweighs them.
  (A change without a confirmed fix is never kept, in any iteration.)
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .noise import NoiseModel, TaskCounts
from .schema import ChangeManifestEntry


class TaskClass(StrEnum):
    FIXED = "fixed"
    REGRESSED = "regressed"
    UNCHANGED = "unchanged"
    UNSTABLE = "unstable"
    UNJUDGED = "unjudged"


VerdictKind = Literal["effective", "partial", "ineffective", "harmful", "mixed", "manual"]
Decision = Literal["keep", "revert"]


class TaskRow(BaseModel):
    """One task as a change saw it: what it predicted, the counts, and the class."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    predicted: Literal["fix", "regression"] | None
    probability: float | None
    before: str | None
    after: str | None
    cls: TaskClass
    borderline: bool = False


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    change_id: str
    verdict: VerdictKind
    decision: Decision
    reason: str
    confirmed_fixes: list[str] = []
    missed_fixes: list[str] = []
    unjudged_predictions: list[str] = []
    predicted_regressions_observed: list[str] = []
    unpredicted_regressions: list[str] = []
    per_task: list[TaskRow] = []


def classify(before: TaskCounts | None, after: TaskCounts | None, unstable: bool) -> TaskClass:
    if before is None or after is None:
        return TaskClass.UNJUDGED
    if unstable:
        return TaskClass.UNSTABLE
    if before.passes == 0 and 2 * after.passes >= after.total:
        return TaskClass.FIXED
    if before.passes == before.total and 2 * after.passes <= after.total:
        return TaskClass.REGRESSED
    return TaskClass.UNCHANGED


def classify_tasks(
    before: Mapping[str, TaskCounts], after: Mapping[str, TaskCounts], noise: NoiseModel
) -> dict[str, TaskClass]:
    tasks = sorted(set(before) | set(after))
    return {t: classify(before.get(t), after.get(t), noise.unstable(t)) for t in tasks}


def _on_edge(cls: TaskClass, after: TaskCounts | None) -> bool:
    edge_class = cls in (TaskClass.FIXED, TaskClass.REGRESSED)
    return edge_class and after is not None and 2 * after.passes == after.total


def borderline_tasks(
    changes: Sequence[ChangeManifestEntry],
    before: Mapping[str, TaskCounts],
    after: Mapping[str, TaskCounts],
    noise: NoiseModel,
) -> list[str]:
    """Predicted tasks whose classification hangs on one rollout: worth a few extra rollouts."""
    classes = classify_tasks(before, after, noise)
    predicted = set().union(*(c.predicted_tasks() for c in changes))
    return sorted(t for t in predicted if _on_edge(classes.get(t, TaskClass.UNJUDGED), after.get(t)))


def _rows(change, classes, before, after) -> list[TaskRow]:
    claims = {p.task_id: ("fix", p.probability) for p in change.predicted_fixes}
    claims |= {p.task_id: ("regression", p.probability) for p in change.predicted_regressions}
    shown = sorted(set(claims) | {t for t, c in classes.items() if c is TaskClass.REGRESSED})
    rows = []
    for task in shown:
        kind, prob = claims.get(task, (None, None))
        cls = classes.get(task, TaskClass.UNJUDGED)
        b, a = before.get(task), after.get(task)
        rows.append(TaskRow(
            task_id=task, predicted=kind, probability=prob, before=b and str(b),
            after=a and str(a), cls=cls, borderline=kind is not None and _on_edge(cls, a),
        ))
    return rows


def _unjudgeable(classes: Mapping[str, TaskClass], task: str) -> bool:
    return classes.get(task, TaskClass.UNJUDGED) in (TaskClass.UNSTABLE, TaskClass.UNJUDGED)


def _kind(confirmed: int, regressions: int, missed: int) -> VerdictKind:
    if confirmed and regressions:
        return "mixed"
    if confirmed:
        return "partial" if missed else "effective"
    return "harmful" if regressions else "ineffective"


def _decide(confirmed: int, regressions: int, band: float, net_negative: bool) -> tuple[Decision, str]:
    if confirmed and not regressions:
        return "keep", f"{confirmed} predicted fix(es) confirmed, no regressions"
    margin = confirmed - regressions
    if not confirmed:
        return "revert", "no predicted fix confirmed: not shown"
    if margin <= band:
        return "revert", f"fixes - regressions = {margin} is within the noise band {band:.2f}: not shown"
    if net_negative:
        return "revert", "the iteration is net negative beyond the noise and this change has regressions"
    return "keep", f"fixes - regressions = {margin} exceeds the noise band {band:.2f}"


def attribute(
    changes: Sequence[ChangeManifestEntry],
    before: Mapping[str, TaskCounts],
    after: Mapping[str, TaskCounts],
    noise: NoiseModel,
) -> list[Verdict]:
    """One verdict per change of the iteration, by the rules in this module's docstring."""
    classes = classify_tasks(before, after, noise)
    fixed = {t for t, c in classes.items() if c is TaskClass.FIXED}
    regressed = {t for t, c in classes.items() if c is TaskClass.REGRESSED}
    claimed = set().union(*({p.task_id for p in c.predicted_regressions} for c in changes))
    unpredicted = sorted(regressed - claimed)
    band = noise.band()
    net_negative = len(fixed) - len(regressed) < -band
    verdicts = []
    for change in changes:
        fix_tasks = [p.task_id for p in change.predicted_fixes]
        confirmed = [t for t in fix_tasks if t in fixed]
        missed = [t for t in fix_tasks if classes.get(t) in (TaskClass.UNCHANGED, TaskClass.REGRESSED)]
        observed = sorted(p.task_id for p in change.predicted_regressions if p.task_id in regressed)
        unjudged = sorted(t for t in change.predicted_tasks() if _unjudgeable(classes, t))
        n_reg = len(observed) + len(unpredicted)
        decision, reason = _decide(len(confirmed), n_reg, band, net_negative)
        verdicts.append(Verdict(
            change_id=change.id, verdict=_kind(len(confirmed), n_reg, len(missed)),
            decision=decision, reason=reason, confirmed_fixes=sorted(confirmed),
            missed_fixes=sorted(missed), unjudged_predictions=unjudged,
            predicted_regressions_observed=observed, unpredicted_regressions=unpredicted,
            per_task=_rows(change, classes, before, after),
        ))
    return verdicts

