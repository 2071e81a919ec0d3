"""The per-change trial through its public API: requests, verdicts, resume determinism, the stored
record, and invalid inputs."""
from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from evoharness.errors import EvoError
from evoharness.manifests.design import TrialDesign
from evoharness.manifests.history import TreeHistory
from evoharness.manifests.history import TaskCounts
from evoharness.manifests.probe import ProbeOutcomes
from evoharness.manifests.trial import RolloutRequest, Trial
from evoharness.manifests.verdict import TrialVerdict

from .builders import change

DESIGN = TrialDesign()
HISTORY = TreeHistory(tree="tree0", counts={
    "fail": TaskCounts(passes=0, total=4), "flaky": TaskCounts(passes=2, total=4),
    "stable": TaskCounts(passes=8, total=8), "thin": TaskCounts(passes=2, total=2),
})
# true pass probabilities of the base and of "base + the change"
BASE = {"fail": 0.05, "flaky": 0.5, "stable": 0.97, "thin": 0.95}


def run_trial(make: Callable[[], Trial], change_p: dict[str, float], seed: int,
              restart_after: int | None = None):
    """Drive a trial as the loop will: run what it asks, pass every rollout back, until it decides.
    With `restart_after`, the process "dies" after that many steps and a new Trial object carries
    on from the recorded rollouts (the rollouts drawn stay the same). Returns the final step and
    the rollouts recorded."""
    rng = random.Random(seed)
    outcomes: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
    trial, steps = make(), 0
    while True:
        if steps == restart_after:
            trial = make()
        step = trial.step(ProbeOutcomes(**outcomes))
        steps += 1
        if step.decided:
            return step, outcomes
        for r in step.requests:
            p = (BASE if r.arm == "base" else change_p)[r.task_id]
            outcomes[r.arm].setdefault(r.task_id, []).extend(rng.random() < p for _ in range(r.count))


def trial_of(manifest, design: TrialDesign = DESIGN) -> Callable[[], Trial]:
    return lambda: Trial(manifest, HISTORY, design)


def test_a_change_without_predicted_fixes_is_untestable():
    step = Trial(change("c1", regs={"stable": 0.2}), HISTORY, DESIGN).step(ProbeOutcomes())
    v = step.verdict
    assert (v.decision, v.outcome, v.rollouts.used, v.p_value) == ("revert", "untestable", 0, 1.0)
    assert [(t.task_id, t.role, t.result) for t in v.tasks] == [("stable", "claim", "unjudged")]


def test_first_request_is_one_look_of_pairs():
    step = Trial(change("c1", fixes={"fail": 0.7}), HISTORY, DESIGN).step(ProbeOutcomes())
    assert not step.decided
    assert step.requests == [RolloutRequest(task_id="fail", arm="base", count=2),
                             RolloutRequest(task_id="fail", arm="change", count=2)]


def test_a_placebo_is_reverted_as_not_shown():
    step, _ = run_trial(trial_of(change("c1", fixes={"fail": 0.7})), BASE, seed=1)
    v = step.verdict
    assert (v.decision, v.outcome) == ("revert", "not_shown")
    assert v.rollouts.screen_base == v.rollouts.screen_change == 0  # the screen never ran
    assert v.p_value > DESIGN.alpha


def test_a_real_fix_that_breaks_nothing_is_kept_after_the_screen():
    helpful = {**BASE, "fail": 0.8}
    step, _ = run_trial(trial_of(change("c1", fixes={"fail": 0.7})), helpful, seed=2)
    v = step.verdict
    assert (v.decision, v.outcome) == ("keep", "effective")
    assert v.evalue >= v.threshold and v.p_value <= DESIGN.alpha
    rows = {t.task_id: t for t in v.tasks}
    assert rows["fail"].result == "fixed" and rows["fail"].role == "probe"
    assert rows["stable"].result == rows["thin"].result == "held"
    assert "flaky" not in rows  # 2/4 cannot be stable passing


def test_a_kept_change_says_which_screened_tasks_held_and_which_were_dropped(monkeypatch):
    monkeypatch.setitem(BASE, "thin", 0.0)  # its 2/2 history was luck: the base top-up fails
    step, _ = run_trial(trial_of(change("c1", fixes={"fail": 0.7})), {**BASE, "fail": 0.8},
                        seed=2)
    v = step.verdict
    rows = {t.task_id: t.result for t in v.tasks if t.role == "screen"}
    assert v.decision == "keep" and rows == {"stable": "held", "thin": "dropped"}
    assert v.reason.endswith("; 1 screened task(s) held, 1 dropped as not stable passing")


def test_a_fix_that_breaks_a_stable_task_is_reverted_whatever_it_predicted():
    trade = {**BASE, "fail": 0.9, "stable": 0.2}
    manifest = change("c1", fixes={"fail": 0.9}, regs={"stable": 0.9})  # predicting it is no excuse
    step, _ = run_trial(trial_of(manifest), trade, seed=3)
    v = step.verdict
    assert (v.decision, v.outcome) == ("revert", "regression")
    stable = next(t for t in v.tasks if t.task_id == "stable")
    assert (stable.role, stable.predicted, stable.result) == ("screen", "regression", "regressed")


@pytest.mark.parametrize("seed", range(6))
def test_a_resumed_trial_reaches_the_same_verdict(seed):
    helpful = {**BASE, "fail": 0.6}
    make = trial_of(change("c1", fixes={"fail": 0.7, "flaky": 0.4}))
    whole, recorded = run_trial(make, helpful, seed=seed)
    # a fresh process given the stored rollouts decides the same at once
    assert make().step(ProbeOutcomes(**recorded)).verdict == whole.verdict
    # a process killed after a few steps and resumed asks for the same rollouts and decides the same
    for restart in (1, 3, 5):
        resumed, again = run_trial(make, helpful, seed=seed, restart_after=restart)
        assert (resumed.verdict, again) == (whole.verdict, recorded)
    # rollouts recorded past the deciding look change nothing but the recorded count
    extra = {arm: {t: v + [True] * 4 for t, v in tasks.items()} for arm, tasks in recorded.items()}
    late = make().step(ProbeOutcomes(**extra)).verdict
    assert late.model_copy(update={"rollouts": whole.verdict.rollouts}) == whole.verdict
    assert late.rollouts.recorded == whole.verdict.rollouts.recorded + 4 * sum(
        len(tasks) for tasks in recorded.values())


def test_the_verdict_record_round_trips_through_json():
    step, _ = run_trial(trial_of(change("c1", fixes={"fail": 0.7})),
                        {**BASE, "fail": 0.9}, seed=4)
    text = step.verdict.model_dump_json()
    assert TrialVerdict.model_validate_json(text) == step.verdict
    assert '"design"' in text and '"threshold"' in text


def test_predicting_a_task_the_base_never_ran_is_refused():
    with pytest.raises(EvoError) as error:
        Trial(change("c1", fixes={"heldout-task": 0.5}), HISTORY, DESIGN)
    assert error.value.field == "predicted_fixes[0].task_id"
    assert error.value.value == "heldout-task"


def test_rollouts_of_tasks_the_trial_never_asked_for_are_refused():
    trial = Trial(change("c1", fixes={"fail": 0.7}), HISTORY, DESIGN)
    with pytest.raises(EvoError) as error:
        trial.step(ProbeOutcomes(base={"flaky": [True]}))
    assert error.value.field == "outcomes.base"


# --- validation: the change must also help where its failure shows on tasks the agent never saw --

VALIDATION_BASE = {"v-fail": 0.1, "v-other": 0.2}


def run_with_validation(change_p: dict[str, float], validation, seed: int):
    both = {**BASE, **VALIDATION_BASE}
    rng = random.Random(seed)
    outcomes: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
    trial = Trial(change("c1", fixes={"fail": 0.7}), HISTORY, DESIGN, validation=validation)
    while not (step := trial.step(ProbeOutcomes(**outcomes))).decided:
        for r in step.requests:
            p = (both if r.arm == "base" else {**both, **change_p})[r.task_id]
            outcomes[r.arm].setdefault(r.task_id, []).extend(rng.random() < p for _ in range(r.count))
    return step.verdict, outcomes


def test_a_fix_only_of_its_predicted_tasks_is_reverted_as_not_carried():
    v, outcomes = run_with_validation({"fail": 0.8}, ["v-fail", "v-other"], seed=2)
    assert (v.decision, v.outcome) == ("revert", "not_carried")
    assert v.predicted.result == "shown" and v.validation.result == "not_shown"
    assert v.validation.tasks == ["v-fail", "v-other"]
    assert v.rollouts.validation_base == v.rollouts.validation_change > 0
    assert v.rollouts.screen_change == 0  # the screen runs only once both gains are shown
    assert {t.task_id for t in v.tasks if t.role == "validation"} == {"v-fail", "v-other"}
    assert "v-fail" not in v.reason and "v-other" not in v.reason  # the agent reads reasons


def test_a_fix_that_carries_over_is_kept_with_both_tests_recorded():
    v, _ = run_with_validation({"fail": 0.8, "v-fail": 0.9, "v-other": 0.9}, ["v-fail", "v-other"],
                               seed=2)
    assert (v.decision, v.outcome) == ("keep", "effective")
    assert v.predicted.result == v.validation.result == "shown"
    assert v.predicted.p_value <= DESIGN.alpha and v.validation.p_value <= DESIGN.alpha
    assert "carried over" in v.reason
    assert [t.task_id for t in v.tasks if t.result == "fixed" and t.role == "probe"] == ["fail"]


def test_no_validation_task_showing_the_failure_means_not_carried():
    v, _ = run_with_validation({"fail": 0.8}, [], seed=2)
    assert (v.decision, v.outcome, v.validation.result) == ("revert", "not_carried", "untestable")
    assert "no validation task showed the failure" in v.reason


def test_a_run_without_validation_tasks_judges_as_before_and_says_so():
    v, outcomes = run_with_validation({"fail": 0.8}, None, seed=2)
    assert (v.decision, v.validation) == ("keep", None)
    assert "no validation tasks in this run" in v.reason
    assert not set(outcomes["base"]) & set(VALIDATION_BASE)


def test_a_placebo_never_reaches_the_validation_tasks():
    v, outcomes = run_with_validation({}, ["v-fail"], seed=1)
    assert (v.outcome, v.validation.result) == ("not_shown", "not_run")
    assert "v-fail" not in outcomes["base"]


@pytest.mark.parametrize("validation_p", [0.1, 0.4])
def test_a_change_with_no_gain_on_validation_is_kept_at_most_alpha(validation_p):
    """The intersection-union test's bound, measured: the predicted task gains a lot, the
    validation task gains nothing. Over 300 trials a keep rate of alpha = 5% would put more than
    28 keeps (the binomial's 0.1% upper tail at 0.05) in only 0.1% of seeds."""
    kept = 0
    for seed in range(300):
        rng = random.Random(seed)
        outcomes: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
        trial = Trial(change("c1", fixes={"fail": 0.7}), HISTORY, DESIGN, validation=["v"])
        base = {**BASE, "v": validation_p}
        arm = {**base, "fail": 0.95}
        while not (step := trial.step(ProbeOutcomes(**outcomes))).decided:
            for r in step.requests:
                p = (base if r.arm == "base" else arm)[r.task_id]
                outcomes[r.arm].setdefault(r.task_id, []).extend(
                    rng.random() < p for _ in range(r.count))
        kept += step.verdict.kept
    assert kept <= 28, kept
