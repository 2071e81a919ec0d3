"""The trial of one change: from its pre-registered manifest, the base tree's history and the probe
rollouts recorded so far, either the next rollouts to run or the verdict. Pure: no store, git or
runner; running the rollouts and storing the verdict is the loop's.

The rule, in order (the statistics and their reasons are in probe.py and screen.py):
1. Isolation. The trial sees one change's manifest and the rollouts of two trees only: the base
   (the harness the change was made on) and "base + this change alone". No sibling's
   predictions, outcomes or regressions enter, so none can lend credit or shield a regression.
2. A change that predicts no fix, or more fixes than the cap can pair once, is untestable: revert.
3. The paired probe tests the predicted fixes together, sequentially, with false-accept rate
   `alpha`; futility or the cap means "not shown": revert.
4. In a run with validation tasks (which the evolve agent never sees), the same paired test runs
   next on the validation tasks where the base showed the failure the change targets (chosen by
   the loop before any rollout), also at `alpha`; not shown there, or no such task, means "not
   carried": revert. Keeping needs both tests to reject, an intersection-union test: a change
   with no gain on either side is kept with probability at most `alpha`, with no correction.
   A run without validation tasks skips this step, and the reason says so.
5. Once the gain is shown, the regression screen runs the change on the stable passing train
   tasks (chosen from the history before any rollout); every one must clear its non-inferiority
   floor, else revert. All clear: keep.
Every decision replays the looks on the recorded rollouts in attempt order, so a killed run that
resumes with the same rollouts reaches the same decision, and rollouts past the deciding look
change nothing.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evoharness.errors import EvoError

from .design import TrialDesign
from .history import TreeHistory
from .probe import ProbeOutcomes, ProbePlan, ProbeReplay, ProbeState, plan_probe, probe_target
from .schema import ChangeManifestEntry
from .screen import ScreenState, ScreenTask, plan_screen, screen_state
from .sequential import crossing_probability, mixture_evalue
from .verdict import PairedTest, Rollouts, TaskEvidence, TrialOutcome, TrialVerdict

Arm = Literal["base", "change"]


class RolloutRequest(BaseModel):
    """Run `count` more judged rollouts of `task_id` on the arm's tree (numbered after the ones
    already recorded for this trial, infra errors included)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    arm: Arm
    count: int = Field(gt=0)


class TrialStep(BaseModel):
    """Either a verdict or the rollouts to run before the next look."""

    model_config = ConfigDict(frozen=True)

    verdict: TrialVerdict | None = None
    requests: list[RolloutRequest] = Field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.verdict is not None


class Trial:
    """One change's trial. Build it once (the plan is fixed before any rollout), then call
    `step` with every rollout recorded so far until it returns a verdict."""

    def __init__(self, change: ChangeManifestEntry, history: TreeHistory, design: TrialDesign,
                 candidates: TreeHistory | None = None,
                 validation: Sequence[str] | None = None) -> None:
        """`history`: the base tree's own evaluations. `candidates`: the history the screen picks
        its tasks from when the base tree is not the one the session started from (a change
        judged on its parent); default `history`. `validation`: the validation tasks where the
        base showed the failure the change targets (at most `design.validation_tasks`); None when
        the run has none at all (judged on its predicted tasks only), [] when it has some but
        none showed that failure (the change cannot show it carries over: revert)."""
        _check_tasks(change, candidates or history)
        self.change = change
        self.history = history
        self.design = design
        self.fixes = sorted(p.task_id for p in change.predicted_fixes)
        self.validation = None if validation is None else sorted(validation)
        carry = design if validation is None else design.with_validation()
        self.probe: ProbePlan | None = plan_probe(self.fixes, carry)
        self._replay = ProbeReplay(self.probe, carry) if self.probe else None
        self.check: ProbePlan | None = plan_probe(self.validation or [], carry)
        self._check = ProbeReplay(self.check, carry) if self.check else None
        self.screen: list[ScreenTask] = plan_screen(history, set(self.fixes), design, candidates)
        self._screens: dict[tuple, ScreenState] = {}

    def step(self, outcomes: ProbeOutcomes) -> TrialStep:
        self._check_outcomes(outcomes)
        if self.probe is None:
            return self._decided("untestable", _untestable_reason(self.fixes, self.design),
                                 None, None, [], outcomes)
        assert self._replay is not None
        probe = self._replay.state(outcomes)
        if probe.result == "open":
            return TrialStep(requests=self._probe_requests(self.probe, probe, outcomes))
        if probe.result != "effective":
            return self._decided("not_shown", _not_shown_reason(probe, self.design),
                                 probe, None, [], outcomes)
        check = None
        if self.validation is not None:
            if self.check is None or self._check is None:
                return self._decided("not_carried", _no_validation_reason(),
                                     probe, None, [], outcomes)
            check = self._check.state(outcomes)
            if check.result == "open":
                return TrialStep(requests=self._probe_requests(self.check, check, outcomes))
            if check.result != "effective":
                return self._decided("not_carried", _not_carried_reason(check, self.design),
                                     probe, check, [], outcomes)
        screens = [self._screen_state(t, outcomes) for t in self.screen]
        broken = [s.task_id for s in screens if s.result == "regressed"]
        if broken:
            return self._decided("regression", _regression_reason(broken), probe, check,
                                 screens, outcomes)
        requests = self._screen_requests(screens, outcomes)
        if requests:
            return TrialStep(requests=requests)
        return self._decided("effective", _effective_reason(probe, check, screens), probe,
                             check, screens, outcomes)

    def _screen_state(self, task: ScreenTask, outcomes: ProbeOutcomes) -> ScreenState:
        """screen_state, remembered per rollouts seen: most tasks get no new rollouts in a step."""
        key = (task.task_id, tuple(outcomes.base.get(task.task_id, ())),
               tuple(outcomes.change.get(task.task_id, ())))
        if key not in self._screens:
            self._screens[key] = screen_state(task, key[1], key[2], self.design)
        return self._screens[key]

    def _check_outcomes(self, outcomes: ProbeOutcomes) -> None:
        asked = set(self.fixes) | set(self.validation or ()) | {t.task_id for t in self.screen}
        allowed = {"base": asked, "change": asked}
        for arm in ("base", "change"):
            stray = sorted(set(getattr(outcomes, arm)) - allowed[arm])
            if stray:
                raise EvoError(f"rollouts of tasks this trial never asked for: {stray}",
                               field=f"outcomes.{arm}", value=self.change.id,
                               hint="pass only the rollouts recorded for this change's trial")

    @staticmethod
    def _probe_requests(plan: ProbePlan, probe: ProbeState,
                        outcomes: ProbeOutcomes) -> list[RolloutRequest]:
        target = probe_target(plan, probe)
        requests = []
        for task in plan.tasks:
            for arm in ("base", "change"):
                missing = target - len(getattr(outcomes, arm).get(task, []))
                if missing > 0:
                    requests.append(RolloutRequest(task_id=task, arm=arm, count=missing))
        return requests

    def _screen_requests(self, screens: list[ScreenState], outcomes: ProbeOutcomes) -> list[RolloutRequest]:
        requests = []
        for s in screens:
            if s.waiting_on is None:
                continue
            missing = s.target - len(getattr(outcomes, s.waiting_on).get(s.task_id, []))
            requests.append(RolloutRequest(task_id=s.task_id, arm=s.waiting_on, count=missing))
        return requests

    def _decided(self, outcome: TrialOutcome, reason: str, probe: ProbeState | None,
                 check: ProbeState | None, screens: list[ScreenState],
                 outcomes: ProbeOutcomes) -> TrialStep:
        recorded = sum(len(v) for arm in (outcomes.base, outcomes.change) for v in arm.values())
        rollouts = Rollouts(
            base=probe.rollouts // 2 if probe else 0, change=probe.rollouts // 2 if probe else 0,
            validation_base=check.rollouts // 2 if check else 0,
            validation_change=check.rollouts // 2 if check else 0,
            screen_base=sum(s.base_rollouts for s in screens),
            screen_change=sum(s.rollouts for s in screens), recorded=recorded)
        predicted = self._test(self.fixes, self.probe, probe, self.design.alpha)
        validation = (None if self.validation is None
                      else self._test(self.validation, self.check, check, self.design.alpha,
                                      ran=probe is not None and probe.result == "effective"))
        verdict = TrialVerdict(
            change_id=self.change.id, base_tree=self.history.tree,
            decision="keep" if outcome == "effective" else "revert", outcome=outcome, reason=reason,
            evalue=probe.evalue if probe else 1.0, threshold=self.probe.threshold if self.probe else None,
            p_value=predicted.p_value,
            futility=probe.futility if probe else 0.0, looks=probe.looks if probe else 0,
            wins=probe.wins if probe else 0, losses=probe.losses if probe else 0,
            rollouts=rollouts, tasks=self._evidence(probe, check, screens), design=self.design,
            predicted=predicted, validation=validation,
        )
        return TrialStep(verdict=verdict)

    @staticmethod
    def _test(tasks: list[str], plan: ProbePlan | None, state: ProbeState | None, alpha: float,
              ran: bool = True) -> PairedTest:
        """One paired test at level `alpha` as it ended (`ran`: whether the trial got as far as
        starting it)."""
        if plan is None:
            return PairedTest(tasks=tasks, result="untestable" if ran else "not_run", alpha=alpha)
        if state is None:
            return PairedTest(tasks=tasks, result="not_run", alpha=alpha, threshold=plan.threshold)
        return PairedTest(
            tasks=tasks, result="shown" if state.result == "effective" else "not_shown",
            alpha=alpha, pairs=state.rollouts // 2, wins=state.wins, losses=state.losses,
            evalue=state.evalue, threshold=plan.threshold, p_value=_p_value(plan, state))

    def _evidence(self, probe: ProbeState | None, check: ProbeState | None,
                  screens: list[ScreenState]) -> list[TaskEvidence]:
        claims = {p.task_id: ("fix", p.probability) for p in self.change.predicted_fixes}
        claims |= {p.task_id: ("regression", p.probability) for p in self.change.predicted_regressions}
        rows: dict[str, TaskEvidence] = {}
        for role, plan, state in (("probe", self.probe, probe), ("validation", self.check, check)):
            for pairs in state.tasks if state and plan else []:
                own = mixture_evalue(pairs.wins, pairs.wins + pairs.losses, 0.5)
                result = ("fixed" if own >= plan.threshold
                          else "not_fixed" if pairs.wins <= pairs.losses else "unclear")
                rows[pairs.task_id] = self._row(
                    pairs.task_id, role, claims, base=f"{pairs.base_passes}/{pairs.pairs}",
                    change=f"{pairs.change_passes}/{pairs.pairs}", wins=pairs.wins,
                    losses=pairs.losses, evalue=own, result=result)
        for s in screens:  # empty unless the gain was shown and the screen ran
            rows[s.task_id] = self._row(
                s.task_id, "screen", claims, base=f"{s.base_passes}/{s.base_rollouts}",
                change=f"{s.passes}/{s.rollouts}", floor=s.floor, threshold=s.threshold,
                evalue=s.evalue, result="unjudged" if s.result == "open" else s.result)
        for task, (kind, _) in claims.items():
            if task not in rows:
                role = "claim" if kind == "regression" else "probe"
                rows[task] = self._row(task, role, claims, result="unjudged")
        return [rows[t] for t in sorted(rows)]

    def _row(self, task_id: str, role: str, claims: dict, **fields) -> TaskEvidence:
        kind, probability = claims.get(task_id, (None, None))
        passes, fails = self.history.passes_fails(task_id)
        return TaskEvidence(task_id=task_id, role=role, predicted=kind, probability=probability,
                            history=f"{passes}/{passes + fails}",
                            history_mean=round(self.history.posterior_mean(task_id), 4), **fields)


def _check_tasks(change: ChangeManifestEntry, history: TreeHistory) -> None:
    """Predictions may name only train tasks the base tree (or the session's start) was
    evaluated on."""
    for group in ("predicted_fixes", "predicted_regressions"):
        for i, prediction in enumerate(getattr(change, group)):
            if prediction.task_id not in history.counts:
                raise EvoError(
                    f"change {change.id} predicts {prediction.task_id!r}, which has no train "
                    f"rollouts under the base tree {history.tree}", field=f"{group}[{i}].task_id",
                    value=prediction.task_id, hint="predict only train tasks of the suite")


def _p_value(plan: ProbePlan, state: ProbeState) -> float:
    """The chance, for a change with no gain on the plan's tasks, that the e-value reaches the
    largest value seen within the cap: exact, and <= alpha exactly when the test crossed its
    boundary."""
    if state.max_evalue <= 1.0:
        return 1.0
    return min(1.0, crossing_probability(state.max_evalue, 0.5, plan.horizon))


def _untestable_reason(fixes: list[str], design: TrialDesign) -> str:
    if not fixes:
        return "predicts no fix: nothing to test (a change is kept only on its own predicted gain)"
    return (f"predicts {len(fixes)} fixes; the cap of {design.max_rollouts} rollouts cannot pair "
            "each once")


def _not_shown_reason(probe: ProbeState, design: TrialDesign) -> str:
    counts = f"{probe.wins} wins / {probe.losses} losses in {probe.rollouts // 2} pairs"
    if probe.result == "futile":
        return (f"not shown: {counts} contradict a gain of {design.futility_effect:.2f} per "
                f"predicted task (log likelihood ratio {probe.futility:.2f})")
    return f"not shown: {counts}; the boundary is out of reach within the cap"


def _no_validation_reason() -> str:
    return ("not carried: gain shown on its predicted tasks, but no validation task showed the "
            "failure it targets, so nothing shows it helps beyond the tasks it was shaped on")


def _not_carried_reason(check: ProbeState, design: TrialDesign) -> str:
    counts = f"{check.wins} wins / {check.losses} losses in {check.rollouts // 2} pairs"
    why = ("contradict a gain" if check.result == "futile"
           else "leave the boundary out of reach within the cap")
    return (f"not carried: gain shown on its predicted tasks, but on the {len(check.tasks)} "
            f"validation task(s) that showed its failure {counts} {why}")


def _regression_reason(broken: list[str]) -> str:
    return f"regression: {', '.join(broken)} fell to its non-inferiority floor"


def _effective_reason(probe: ProbeState, check: ProbeState | None,
                      screens: list[ScreenState]) -> str:
    held = sum(s.result == "held" for s in screens)
    dropped = len(screens) - held  # not stable passing on the base arm: no floor to hold
    carried = ("no validation tasks in this run: judged on its predicted tasks only"
               if check is None else
               f"carried over: {check.wins} wins / {check.losses} losses in "
               f"{check.rollouts // 2} pairs on {len(check.tasks)} validation task(s)")
    return (f"gain shown: {probe.wins} wins / {probe.losses} losses in {probe.rollouts // 2} pairs "
            f"(e-value {probe.evalue:.1f}); {carried}; {held} screened task(s) held"
            + (f", {dropped} dropped as not stable passing" if dropped else ""))
